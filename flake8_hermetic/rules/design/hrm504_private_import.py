"""HRM504: a test importing a ``_private`` name of the code under test."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


TEST_TREE_PARTS = frozenset({"tests", "test", "testing", "conftest"})


def in_test_tree(module: str, level: int) -> bool:
    """Whether an import reads from the test suite itself, not the code under test.

    A relative import stays inside the test package; so does a module path
    with a ``tests``/``test``/``testing`` part, a ``test_*``/``*_test``
    module, a ``conftest``, or a private test-support module (``_testcapi``).
    """
    if level > 0:
        return True
    return any(
        part in TEST_TREE_PARTS or part.startswith(("test_", "_test")) or part.endswith("_test")
        for part in module.split(".")
    )


class PrivateImportRule(Rule):
    """
    Flags a test importing a `_private` name from the code under test.

    `from mypkg.parser import _tokenize` is reported for each imported
    name that starts with one underscore (not a dunder, not `_` itself).
    Imports from the test tree are the suite's own helpers and are not
    reported: relative imports, and modules with a `tests`, `test` or
    `testing` part, a `test_*`, `*_test` or `_test*` part, or `conftest`
    (`from tests.helpers import _make_repo`, `from _testcapi import ...`).
    A private name that mentions tests (`_cleanup_tests`,
    `_test_simple_enum`) is a hook the code offers its own tests and is not
    reported either. `import pkg._impl` binds a module, not a name, and is
    not judged.

    ## Why is this bad?
    An underscore is the author's statement that the name may change
    without notice. A test built on it pins the implementation instead of
    the behaviour: a refactor that keeps every public promise breaks the
    test, and a test that passes says nothing about what callers get.
    The pull to test a private helper directly usually means it deserves
    to be public, in a module of its own.

    ## Example
    ```python
    from mypkg.parser import _tokenize

    def test_tokenize():
        assert _tokenize("a b") == ["a", "b"]
    ```

    ## Use instead
    ```python
    from mypkg.parser import parse

    def test_parse_splits_words():
        assert parse("a b").words == ["a", "b"]
    ```

    ## Options
    None.

    ## Known problems
    Only `from module import _name` is read: `module._name` used as an
    attribute after `import module`, and a public name imported from a
    private module (`from pkg._impl import thing`), are not judged. A private
    name the package offers its tests without saying "test" in it is reported.
    """

    code = "HRM504"
    message = "{name} is private to {module}; a test built on it pins the implementation; test the public API"
    default_on = False

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Iterator[Violation]:
        module = node.module or ""
        if in_test_tree(module, node.level):
            return
        for alias in node.names:
            name = alias.name
            # a private name about tests (``_cleanup_tests``) is a hook the code offers its tests
            if name.startswith("_") and not name.startswith("__") and name != "_" and "test" not in name.lower():
                at = alias if hasattr(alias, "lineno") else node
                yield self.report(at, name=name, module=module)
