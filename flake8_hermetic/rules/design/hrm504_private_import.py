"""HRM504, retired: it flagged a test importing a ``_private`` name of the code under test."""

from __future__ import annotations

from flake8_hermetic.rule import Rule


class PrivateImportRule(Rule):
    """
    Retired: flagged a test importing a `_private` name from the code under test; it checks nothing now.

    ## What it flagged
    A test importing a name with one leading underscore from the code
    under test (not from the test tree, and not a name that mentions
    tests):

    ```python
    from mypkg.parser import _tokenize

    def test_tokenize():
        assert _tokenize("a b") == ["a", "b"]
    ```

    ## Why was it retired?
    Importing a private name pins a test to the implementation, which is
    a question of maintenance, not of a hazard this pack is about: it
    leaks no state into a later test and changes no verdict between runs
    or hosts. Read on the held-out half of the corpus (docs/precision.md),
    0 of 20 findings were real by that standard: a package's own suite
    white-box tests its internals on purpose (often with ruff's
    import-private-name allowed in its tests), patches private modules as
    mock targets, and builds inputs from private constants to stay in
    step with the code. No narrower part of it is a hazard, so it was
    retired rather than narrowed.

    ## What happens to it
    The code stays known, so a configuration or a `noqa` that names it is
    understood: a `select`/`extend-select` that names it exactly is
    refused in one line with this reason (a prefix such as `HRM5` selects
    the others), an `ignore` of it is accepted, and its baseline entries
    are stale in every test file, so `flake8-hermetic baseline` drops
    them.

    ## Options
    None.

    ## Known problems
    Nothing is checked; a private import is not reported anywhere.
    """

    code = "HRM504"
    message = "retired: checks nothing"
    default_on = False
    retired = "a private import is a maintenance choice, not a leak or a flake; 0 of 20 held-out findings were real"
