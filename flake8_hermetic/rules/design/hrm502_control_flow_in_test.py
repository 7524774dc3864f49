"""HRM502: ``if``, ``for``, ``while``, ``match`` and ``try`` in the body of a test."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.facts.names import last_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.design.control_flow import CONTROL_FLOW, CONTROL_FLOW_TYPES, TRY_TYPES
from flake8_hermetic.rules.design.skips import skips
from flake8_hermetic.violation import Violation


class ControlFlowInTestRule(Rule):
    """
    Flags `if`, `for`, `while`, `match` and `try` in the body of a test.

    Only the outermost such statement of a `test*` function or method is
    reported (an `if` inside a `for` is one finding). An `if` whose body only
    skips or xfails the test (`pytest.skip()`, `self.skipTest()`) is a
    guard, not a branch, and is not reported; neither is control flow in
    a nested helper function or in a fixture.

    ## Why is this bad?
    A branch in a test means the test checks different things on
    different runs, and a loop means one test checks many cases and stops
    at the first failing one, hiding the rest. The report names one test
    either way, so the reader cannot tell which case broke or whether the
    interesting branch ran at all. A `try` around the code under test
    often swallows the very failure the test exists to catch.

    ## Example
    ```python
    def test_parse(raw, expected_error):
        if expected_error:
            with pytest.raises(ValueError):
                parse(raw)
        else:
            assert parse(raw)
    ```

    ## Use instead
    ```python
    @pytest.mark.parametrize("raw", [pytest.param("1", id="digit"), pytest.param("0x1", id="hex")])
    def test_parse_accepts(raw):
        assert parse(raw)

    @pytest.mark.parametrize("raw", [pytest.param("", id="empty")])
    def test_parse_rejects(raw):
        with pytest.raises(ValueError):
            parse(raw)
    ```

    ## Options
    None.

    ## Known problems
    Control flow is read in the test's own body only: a branch or loop inside a
    helper the test calls is not seen, and a conditional expression
    (`x if c else y`) or a comprehension is not counted. A loop whose cases
    report themselves some way other than `subTest` (a message naming the
    case) is still flagged.
    """

    code = "HRM502"
    message = "`{kind}` in a test body checks several cases under one name; parametrize, or split success and failure tests"
    default_on = False

    def _check(self, node: ast.stmt) -> Iterator[Violation]:
        scope = self.ctx.function_scope
        if scope is None or not scope.is_test or self.ctx.enclosing(*CONTROL_FLOW_TYPES) is not None:
            return
        if isinstance(node, ast.If) and not node.orelse and all(skips(self.ctx, stmt) for stmt in node.body):
            return
        if isinstance(node, TRY_TYPES) and not node.handlers:  # type: ignore[attr-defined]
            return  # try/finally only guarantees cleanup (the fix HRM101/HRM113 ask for); it does not branch
        if isinstance(node, (ast.For, ast.AsyncFor)) and _runs_subtests(node):
            return
        yield self.report(node, kind=CONTROL_FLOW[type(node)])

    visit_If = visit_For = visit_AsyncFor = visit_While = visit_Try = visit_Match = _check
    if hasattr(ast, "TryStar"):
        visit_TryStar = _check


def _runs_subtests(loop: ast.For | ast.AsyncFor) -> bool:
    """``for x in cases: with self.subTest(x=x): ...``: every case is reported on its own."""
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
