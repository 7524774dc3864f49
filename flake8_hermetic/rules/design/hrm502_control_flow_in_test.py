"""HRM502: control flow that hides a case in a test (narrowed from any ``if``/``for``/``try``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.facts.names import last_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.design.control_flow import CONTROL_FLOW
from flake8_hermetic.violation import Violation


class ControlFlowInTestRule(Rule):
    """
    Flags control flow that hides a case in a test: a `for` over a table of cases whose body asserts, and a `try` whose check is only in its `except` clause.

    A table of cases is a list, tuple, set or dict literal of at least two
    rows, written in the loop or bound once at module level to the name
    the loop iterates (`.items()`/`.values()`/`.keys()` of such a dict
    too); the body asserts when it holds an `assert`, a `self.assert*` or
    `.assert_*` call, or a `pytest.raises`/`pytest.warns` block. A `try`
    hides a case when one of its `except` clauses asserts, and neither its
    body (a `pytest.fail()`, `self.fail()`, `raise` or `assert False` at its
    end) nor an `else:` clause fails when nothing is raised.

    Narrowed from "every `if`, `for`, `while`, `match` and `try`": a loop
    that builds setup, iterates the API under test, compares one value
    element by element or repeats one case, and a branch that shapes the
    expected value or guards a version are one case each; on held-out
    code 2 of 20 such findings were real, and both were the two shapes
    kept here.

    ## Why is this bad?
    A loop over a table of cases checks every row under one test name and
    stops at the first failing row: the report cannot say which case broke,
    and the rows after it are never checked. A `try` whose assertion is in
    the `except` clause passes silently the day the code stops raising: the
    one thing the test was written to catch.

    ## Example
    ```python
    def test_parse():
        for raw, expected in [("1", 1), ("0x1", 1)]:
            assert parse(raw) == expected


    def test_rejects_empty():
        try:
            parse("")
        except ValueError as error:
            assert "empty" in str(error)
    ```

    ## Use instead
    ```python
    @pytest.mark.parametrize(("raw", "expected"), [pytest.param("1", 1, id="digit"), pytest.param("0x1", 1, id="hex")])
    def test_parse(raw, expected):
        assert parse(raw) == expected


    def test_rejects_empty():
        with pytest.raises(ValueError, match="empty"):
            parse("")
    ```

    ## Options
    None.

    ## Known problems
    Only the test's own body is read: a table built by a call or bound in a
    function, and a loop or `try` inside a helper the test calls, are not
    seen. A loop whose rows report themselves (`self.subTest`,
    `subtests.test`) is left alone; one that names the case in each
    assertion's message is still flagged.
    """

    code = "HRM502"
    message = "`{kind}` {why}"
    default_on = False
    principles = ("hidden-case",)
    narrowed = ("it flagged every `if`, `for`, `while`, `match` and `try` in a test; it now flags a loop over a"
                " table of cases that asserts, and a `try` that checks only in its `except` clause.")

    LOOP_WHY = ("over a table of cases checks them under one name and stops at the first that fails;"
                " parametrize over the table")
    TRY_WHY = "checks only in its `except` clause: the test passes if the code stops raising; use pytest.raises"

    def _in_test(self) -> bool:
        scope = self.ctx.function_scope
        return scope is not None and scope.is_test

    def visit_For(self, node: ast.For | ast.AsyncFor) -> Iterator[Violation]:
        if not self._in_test() or _runs_subtests(node) or not self._table(node.iter):
            return
        if isinstance(node.target, ast.Name) and node.target.id == "_":
            return  # ``for _ in 0, 1, 2``: one case repeated, whatever the rows say
        if any(_asserts(statement) for statement in node.body):
            yield self.report(node, kind=CONTROL_FLOW[type(node)], why=self.LOOP_WHY)

    visit_AsyncFor = visit_For

    def visit_Try(self, node: ast.Try) -> Iterator[Violation]:
        if not self._in_test() or not node.handlers or node.orelse:
            return
        if self.ctx.enclosing(ast.For, ast.AsyncFor, ast.While) is not None:
            return  # a retry or a drain (``while True: try: next(it) except Stop: ...``): the loop decides
        if not any(_asserts(statement) for handler in node.handlers for statement in handler.body):
            return
        if any(_asserts(statement) for statement in node.body):
            return  # the body checks the path where nothing is raised too
        if node.body and self._fails(node.body[-1]):
            return  # a hand-rolled assertRaises: the body fails when nothing is raised
        yield self.report(node, kind="try", why=self.TRY_WHY)

    if hasattr(ast, "TryStar"):
        visit_TryStar = visit_Try

    def _fails(self, statement: ast.stmt) -> bool:
        if isinstance(statement, ast.Raise):
            return True
        if isinstance(statement, ast.Assert):
            return isinstance(statement.test, ast.Constant) and not statement.test.value
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            call = statement.value
            return self.ctx.call_name(call) == "pytest.fail" or last_name(call.func) == "fail"
        return False

    def _table(self, iterable: ast.expr) -> bool:
        """A literal table of at least two rows, here or bound once at module level to the name iterated."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args \
                and iterable.func.attr in ("items", "values", "keys"):
            iterable = iterable.func.value
        if isinstance(iterable, ast.Name):
            bound = self.ctx.module_value(iterable.id)
            if bound is None:
                return False
            iterable = bound
        if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
            return len(iterable.elts) >= 2 and all(_case_row(e) for e in iterable.elts)
        return (isinstance(iterable, ast.Dict) and len(iterable.keys) >= 2
                and all(key is not None and _case_row(key) for key in iterable.keys))


def _case_row(node: ast.expr) -> bool:
    """A row written out as data: constants, containers and constructor calls of them, dotted constants
    (``Color.RED``). A row of the test's own variables (``(env_file, gitignore_file)``) is items of one
    outcome, and two forms of one input (``(items[:], iter(items))``) are one case."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _case_row(node.operand)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_case_row(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _case_row(k) for k in node.keys) and all(_case_row(v) for v in node.values)
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(part, ast.Constant) or _case_row(part.value)  # type: ignore[attr-defined]
                   for part in node.values)
    if isinstance(node, ast.Attribute):  # Color.RED, errno.ENOENT: not self.x
        return isinstance(node.value, ast.Name) and node.value.id not in ("self", "cls") and node.attr[:1].isupper()
    if isinstance(node, ast.Call):
        return (isinstance(node.func, (ast.Name, ast.Attribute)) and bool(node.args or node.keywords)
                and all(_case_row(a) for a in node.args) and all(_case_row(k.value) for k in node.keywords))
    return False


def _asserts(statement: ast.stmt) -> bool:
    """Whether ``statement`` checks something (not inside a function or class it defines)."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            name = last_name(node.func)
            if name.startswith(("assert", "assert_")) or name in ("raises", "warns", "deprecated_call"):
                return True
        pending.extend(ast.iter_child_nodes(node))
    return False


def _runs_subtests(loop: ast.For | ast.AsyncFor) -> bool:
    """``for x in cases: with self.subTest(x=x): ...``: every case is reported on its own (also
    through loops nested inside it: ``for a in A: for b in B: with self.subTest(a=a, b=b)``)."""
    if len(loop.body) == 1 and isinstance(loop.body[0], (ast.For, ast.AsyncFor)):
        return _runs_subtests(loop.body[0])
    if len(loop.body) != 1 or not isinstance(loop.body[0], (ast.With, ast.AsyncWith)):
        return False
    for item in loop.body[0].items:
        call = item.context_expr
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            receiver = call.func.value
            on_subtests = not isinstance(receiver, ast.Call) and last_name(receiver) == "subtests"
            if call.func.attr == "subTest" or (call.func.attr == "test" and on_subtests):
                return True
    return False
