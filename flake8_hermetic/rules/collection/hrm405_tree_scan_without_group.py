"""HRM405: a source-tree scan repeated on every xdist worker."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.project import Role
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.collection.literals import literal_head
from flake8_hermetic.violation import Violation


TREE_WALKS = frozenset({"os.walk", "os.fwalk"})
GLOBS = frozenset({"glob.glob", "glob.iglob"})


class TreeScanWithoutGroupRule(Rule):
    """
    Flags a test module that scans a source tree (`rglob`/`os.walk` and `ast.parse`) but pins no `xdist_group`.

    The module both walks a directory tree (`Path.rglob()`, a `**` glob,
    `os.walk()`, `glob.glob(..., recursive=True)`) and calls
    `ast.parse()`, and no module-level `pytestmark` carries
    `pytest.mark.xdist_group`. It is reported once, at the first
    `ast.parse()` call. Only modules that define tests are judged: not
    `conftest.py` (a `pytestmark` there applies to nothing), not a runner
    script that happens to live in the test tree.

    ## Why is this bad?
    A scan of the whole source tree, parsed and usually cached at module
    level, costs seconds. Under `pytest -n N` the module's tests are
    spread over the workers, and every worker that receives one pays the
    scan again: the same parse runs up to N times per run. Putting the
    module in an xdist group of its own sends all its tests to one
    worker, so the cache is filled once.

    ## Example
    ```python
    @functools.cache
    def modules():
        return [ast.parse(p.read_text()) for p in SRC.rglob("*.py")]
    ```

    ## Use instead
    ```python
    pytestmark = pytest.mark.xdist_group(name="tree_scan_test_layers")

    @functools.cache
    def modules():
        return [ast.parse(p.read_text()) for p in SRC.rglob("*.py")]
    ```
    (and run with `--dist loadgroup`). One group per module, never one
    shared by several: a shared group serialises them all on one worker.

    ## Options
    None.

    ## Known problems
    Only a module-level `pytestmark` counts; a group set on a class or a
    single test is not recognised. A scan made by a helper imported from
    another module is not seen.
    """

    code = "HRM405"
    # collected test modules only: a support module is imported by the runner only through a test
    # (child scripts, sample modules and __main__ scripts never are), a conftest is setup code
    roles = frozenset({Role.TEST_MODULE})
    message = 'module scans a source tree on every xdist worker; add pytestmark = pytest.mark.xdist_group(name="tree_scan_{module}")'
    calls = frozenset({"ast.parse", "*.rglob", "*.glob"}) | TREE_WALKS | GLOBS
    default_on = False

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.walks = False
        self.grouped = False
        self.has_tests = False
        self.parse: Violation | None = None
        self.judged = os.path.basename(ctx.path) != "conftest.py"

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not self.judged:
            return iter(())
        name = self.ctx.call_name(node) or ""
        if name == "ast.parse":
            if self.parse is None:
                module = os.path.splitext(os.path.basename(self.ctx.path))[0]
                self.parse = self.report(node, module=module)
        elif name in TREE_WALKS or name.endswith(".rglob"):
            self.walks = True
        elif name in GLOBS or name.endswith(".glob"):
            self.walks = self.walks or self._recursive_glob(node, name)
        return iter(())

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Violation]:
        self.has_tests = self.has_tests or self.ctx.scope_of(node).is_test
        return iter(())

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node: ast.Attribute) -> Iterator[Violation]:
        if node.attr == "xdist_group" and self.ctx.resolve(node) == "pytest.mark.xdist_group":
            if self._sets_pytestmark():
                self.grouped = True
        return iter(())

    @staticmethod
    def _recursive_glob(node: ast.Call, name: str) -> bool:
        if any(k.arg == "recursive" and isinstance(k.value, ast.Constant) and k.value.value is True for k in node.keywords):
            return True
        pattern = literal_head(node.args[0]) if node.args else None
        return pattern is not None and "**" in pattern and name not in GLOBS

    def _sets_pytestmark(self) -> bool:
        """Inside a module-level statement that assigns or extends ``pytestmark``."""
        if len(self.ctx.scopes) != 1 or len(self.ctx.parents) < 2:
            return False
        statement = self.ctx.parents[1]
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            func = statement.value.func
            if isinstance(func, ast.Attribute) and func.attr in ("append", "extend"):
                targets = [func.value]
        return any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets)

    def finish(self) -> Iterator[Violation]:
        if self.parse is not None and self.walks and self.has_tests and not self.grouped:
            yield self.parse
