"""The facts layer: knowledge of test code that more than one rule family uses.

Each module answers one kind of question about a file, given the tree and the
:class:`~flake8_hermetic.facts.view.FileView` (the per-file context, as a protocol):

- ``names``: the last name of a callee or attribute, a call's dotted name;
- ``raising``: a ``with`` that expects a raise (one ``RAISES_METHODS``);
- ``mocks``: what a patch call replaces, whether a name is patched around a node;
- ``modules``: module-level shapes (the ``__main__`` guard);
- ``environ``: the process environment, its getters and the home variables;
- ``processes``, ``argv``, ``cwd_dependence``: child-process calls, the one
  reader of their command line, and whether what they run reads the working
  directory;
- ``hostpins``: what the conftest chain's autouse fixtures pin;
- ``reachability``: the spans of a module that never run in a test run (dead
  branches, code after an ending statement, methods pytest never calls);
- ``view``: :class:`FileView`, what a fact may ask of the file's walk state.

A module here never imports a rule, nor the per-file context (not even
under ``TYPE_CHECKING``); a rule imports facts, never another
family's rules (``tests/test_layout.py``).
"""
