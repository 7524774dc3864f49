"""The facts layer: knowledge of test code that more than one rule family uses.

Each module answers one kind of question about a file, given the tree and the
:class:`~flake8_hermetic.context.Context`: names (``names``), expected
failures (``raising``), mocks and patches (``mocks``), cleanup and teardown
(``lifecycle``), child processes and their argv (``processes``), and what the
conftest chain pins (``hostpins``). A module here never imports a rule; a
rule imports facts, never another family's rules.
"""
