"""HRM403: the process ended at import time of a test file."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.project import Role
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.collection.import_time import collection_time
from flake8_hermetic.violation import Violation


EXITS = frozenset({"sys.exit", "os._exit", "exit", "quit"})


class ImportTimeExitRule(Rule):
    """
    Flags `sys.exit()`, `exit()`, `quit()`, `os._exit()` and `raise SystemExit` run at import time of a test file.

    The usual spelling is a guard for an optional dependency:
    `try: import numpy` / `except ImportError: sys.exit(0)`, or a version
    check at the top of the module. Code under `if __name__ == "__main__":`
    does not run under pytest and is not flagged. Neither is a module that
    has read `sys.argv` at import time before it exits: such a file is a
    script a test runs in a child process (`subprocess.run([sys.executable,
    helper, ...])`), where exiting with a status is the point, not a module
    pytest imports.

    ## Why is this bad?
    `SystemExit` is not an `ImportError`: pytest does not turn it into a
    skip of this module. Depending on the version and the plugins, the
    module becomes a collection error that fails the run, or the whole
    session stops with no report of the tests it never ran. `os._exit()`
    kills the xdist worker outright. Either way one missing optional
    package takes every other test down with it.

    ## Example
    ```python
    try:
        import numpy
    except ImportError:
        sys.exit(0)
    ```

    ## Use instead
    ```python
    numpy = pytest.importorskip("numpy")
    ```

    ## Options
    None.

    ## Known problems
    An exit reached through a function of another module that the test module
    calls at import time is not seen. A module that reads `sys.argv` at import
    time for any reason is taken for a script run in a child process, and its
    exits are left alone.
    """

    code = "HRM403"
    # collected test modules only: a support module is imported by the runner only through a test
    # (child scripts, sample modules and __main__ scripts never are), a conftest is setup code
    roles = frozenset({Role.TEST_MODULE})
    message = "{name} at import time ends the run, not just this module; use pytest.importorskip() or a skip mark"
    calls = EXITS

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.timing = collection_time(ctx)
        self.script = False
        # A bare name is sys.argv only after ``from sys import argv [as x]``:
        # until one is seen, the walk need not stack the file's names for this rule.
        if ctx.resolver.names_bound_to(("sys.argv",)):
            ctx.dispatch_to(ast.Name, self.on_name)
        # ``sys.argv`` in any spelling has "argv" in the file's text
        if "argv" in ctx.source:
            ctx.dispatch_to(ast.Attribute, self.on_attribute)

    def _reads_command_line(self, node: ast.Name | ast.Attribute) -> None:
        if not self.script and self.ctx.resolve(node) == "sys.argv" and self.timing.import_time(node):
            self.script = True

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Iterator[Violation]:
        if node.module == "sys" and any(alias.name == "argv" for alias in node.names):
            self.ctx.dispatch_to(ast.Name, self.on_name)
        return iter(())

    def on_attribute(self, node: ast.Attribute) -> Iterator[Violation]:
        if node.attr == "argv":
            self._reads_command_line(node)
        return iter(())

    def on_name(self, node: ast.Name) -> Iterator[Violation]:
        self._reads_command_line(node)
        return iter(())

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.script:
            return
        name = self.ctx.call_name(node)
        if name in EXITS and self.timing.import_time(node):
            yield self.report(node, name=f"{name}()")

    def visit_Raise(self, node: ast.Raise) -> Iterator[Violation]:
        if self.script:
            return
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if exc is not None and self.ctx.resolve(exc) in ("SystemExit", "builtins.SystemExit"):
            if self.timing.import_time(node):
                yield self.report(node, name="raise SystemExit")
