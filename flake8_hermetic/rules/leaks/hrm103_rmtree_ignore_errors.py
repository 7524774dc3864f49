"""HRM103: ``shutil.rmtree(..., ignore_errors=True)`` in a test file."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.facts.raising import RAISES_METHODS, expects_raise
from flake8_hermetic.nodes import shape
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.leaks.flow import always_skipped
from flake8_hermetic.rules.leaks.syntax import bool_keyword, mentions
from flake8_hermetic.violation import Violation


#: pytest's per-test temp directory fixtures
TEST_TEMP_NAMES = frozenset({"tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory"})


class RmtreeIgnoreErrorsRule(Rule):
    """
    Flags `shutil.rmtree(..., ignore_errors=True)` in a test file.

    ## Why is this bad?
    A cleanup that swallows its errors cannot tell anyone that it did not
    finish. A file still open on Windows, a read-only file, or a process
    still writing into the directory leaves a partial tree behind, and the
    next run (or another test on the same worker) finds it. Letting the
    error surface names the test that leaked.

    Left alone: a pre-clean directly followed by `os.mkdir`/`os.makedirs`
    (or `Path(...).mkdir()`) of the same path, where a removal that did
    not finish surfaces at once as a failing `mkdir`; and a call on a path
    that one of the three statements before showed `rmtree` to fail on
    (`assertRaises(OSError, shutil.rmtree, p)`, or `shutil.rmtree(p)`
    inside `with pytest.raises(...)`), which tests `ignore_errors` itself;
    a path under pytest's per-test temp directory (`tmp_path`, `tmpdir`,
    `tmp_path_factory.mktemp()`, or a name assigned from one), which
    pytest owns and removes in a later session; and a test under an
    unconditional skip decorator (`@pytest.mark.skip`, `@unittest.skip`),
    which never runs.

    ## Example
    ```python
    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)
    ```

    ## Use instead
    ```python
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM103` (or `extend-select` in the
    config). On the suites held out from tuning (docs/precision.md), 0 of 21
    of its findings were hazards a maintainer would fix; a default-on rule
    must reach 80%, and the default set 90% overall: every finding removed,
    with `ignore_errors=True`, a directory the test itself made under a
    fresh `mkdtemp()` name (in a `finally` or after a fixture's `yield`), or
    a path a fixture built on `tmp_path`: no later test can meet a
    half-removed leftover there, so failing loudly is churn. It would need
    to tell a shared, fixed path from a fresh one, through fixture
    parameters.

    ## Options
    None.

    ## Known problems
    Whether the path is shared or fresh is not known beyond the function: a
    directory made under a fresh `mkdtemp()` name, or built by a fixture on
    `tmp_path` and handed in as a parameter, is flagged though no later test
    can meet what is left of it (why the rule is off by default).
    """

    code = "HRM103"
    default_on = False
    message = "rmtree(ignore_errors=True) hides a cleanup that did not finish; let it fail loudly"
    calls = frozenset({"shutil.rmtree"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.ctx.call_name(node) != "shutil.rmtree":
            return
        ignore = bool_keyword(node, "ignore_errors")
        if ignore is None and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            ignore = bool(node.args[1].value)
        if ignore and not self._not_a_cleanup(node) and not self._under_test_temp(node) and not always_skipped(self.ctx):
            yield self.report(node)

    def _under_test_temp(self, node: ast.Call) -> bool:
        """A path under pytest's per-test temp directory (``tmp_path``,
        ``tmpdir``, ``tmp_path_factory.mktemp()``, or a name the function
        assigned from one): pytest owns the base temp directory and removes
        it in a later session, so a partial removal meets no later test."""
        function = self.ctx.function
        if not node.args or function is None:
            return False
        derived = set(TEST_TEMP_NAMES)
        for sub in ast.walk(function):
            if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and sub.value is not None:
                if {name.partition(".")[0] for name in mentions(sub.value)} & derived:
                    targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                    derived.update(name for target in targets for name in mentions(target))
        return bool({name.partition(".")[0] for name in mentions(node.args[0])} & derived)

    def _not_a_cleanup(self, node: ast.Call) -> bool:
        """A pre-clean right before the directory is made again, or an
        ``ignore_errors`` call on a path the statements just before showed
        ``rmtree`` to fail on (a test of ``rmtree`` itself)."""
        found = self.ctx.statement(node)
        if found is None or not node.args:
            return False
        stmt, siblings, index = found
        if not (isinstance(stmt, ast.Expr) and stmt.value is node):
            return False
        path = shape(node.args[0])
        if index + 1 < len(siblings) and self._makes(siblings[index + 1], path):
            return True
        return any(self._shown_to_fail(earlier, path) for earlier in siblings[max(0, index - 3):index])

    def _makes(self, stmt: ast.stmt, path: str) -> bool:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call):
            return False
        name = self.ctx.call_name(call) or ""
        func = call.func
        if name in ("os.mkdir", "os.makedirs") and call.args:
            return shape(call.args[0]) == path
        if isinstance(func, ast.Attribute) and func.attr == "mkdir" and isinstance(func.value, ast.Call):
            return any(shape(a) == path for a in func.value.args)
        return False

    def _shown_to_fail(self, stmt: ast.stmt, path: str) -> bool:
        """``assertRaises(E, shutil.rmtree, path)``, or ``shutil.rmtree(path)``
        inside ``with self.assertRaises(...)`` / ``with pytest.raises(...)``."""
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in RAISES_METHODS and len(call.args) >= 3:
                return self.ctx.resolve(call.args[1]) == "shutil.rmtree" and shape(call.args[2]) == path
            return False
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(expects_raise(self.ctx, i.context_expr) for i in stmt.items):
            return any(
                isinstance(sub, ast.Call) and self.ctx.call_name(sub) == "shutil.rmtree"
                and bool(sub.args) and shape(sub.args[0]) == path
                for inner in stmt.body for sub in ast.walk(inner)
            )
        return False
