"""``flake8-hermetic prove``: static findings judged by running their tests under the guard.

- :mod:`~flake8_hermetic.prove.matching`: which runtime code proves which rule (from the guard's codes);
- :mod:`~flake8_hermetic.prove.plan`: the flagged statements and the injection rounds;
- :mod:`~flake8_hermetic.prove.inject`: the pytest plugin that records and injects;
- :mod:`~flake8_hermetic.prove.runner`: the rounds as pytest subprocesses, and the proofs;
- :mod:`~flake8_hermetic.prove.report`: the output formats.

See docs/prove.md.
"""
