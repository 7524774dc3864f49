"""Deadlines of a test's own: whether a wait is bounded by one, or cut short on purpose."""

from __future__ import annotations

import ast

from flake8_hermetic.context import Context
from flake8_hermetic.facts.raising import expects_raise
from flake8_hermetic.nodes import FunctionNode
from flake8_hermetic.rules.determinism.trees import called_names

#: calls that bound what runs inside them: as a wrapper or as a ``with`` item
BOUNDING_CALLS = frozenset(
    {
        "asyncio.wait_for",
        "asyncio.timeout",
        "asyncio.timeout_at",
        "asyncio.timeouts.timeout",
        "asyncio.timeouts.timeout_at",
        "async_timeout.timeout",
        "async_timeout.timeout_at",
        "anyio.fail_after",
        "anyio.move_on_after",
        "trio.fail_after",
        "trio.move_on_after",
        "trio.fail_at",
        "trio.move_on_at",
    }
)
#: exceptions that say "this wait was cut short on purpose"
INTERRUPTIONS = frozenset(
    {
        "asyncio.CancelledError",
        "asyncio.exceptions.CancelledError",
        "asyncio.TimeoutError",
        "asyncio.exceptions.TimeoutError",
        "TimeoutError",
        "trio.Cancelled",
        "trio.TooSlowError",
    }
)


#: the last parts of BOUNDING_CALLS distinct enough to match a relative import by
RELATIVE_BOUNDS = frozenset({"fail_after", "move_on_after", "fail_at", "move_on_at", "timeout_at"})
#: cancel scopes that bound their body when given a deadline
CANCEL_SCOPES = frozenset({"trio.CancelScope", "anyio.CancelScope"})


def is_bounding(ctx: Context, call: ast.Call) -> bool:
    """A call of :data:`BOUNDING_CALLS` that sets a deadline (not ``timeout(None)``).

    A library's own suite imports its deadlines relatively (``from .. import
    move_on_after``): a relative name counts by its last part. A cancel scope
    counts when given a deadline (``CancelScope(deadline=...)``)."""
    name = ctx.call_name(call) or ""
    last = name.rpartition(".")[2]
    if name.startswith(".") and last == "CancelScope" or name in CANCEL_SCOPES:
        return any(keyword.arg == "deadline" for keyword in call.keywords)
    if name not in BOUNDING_CALLS and not (name.startswith(".") and last in RELATIVE_BOUNDS):
        return False
    # asyncio.timeout(None) is the documented way to say "no deadline"
    first = call.args[0] if call.args else None
    return not (isinstance(first, ast.Constant) and first.value is None)


def has_bounding_item(ctx: Context, node: ast.With | ast.AsyncWith) -> bool:
    return any(isinstance(item.context_expr, ast.Call) and is_bounding(ctx, item.context_expr) for item in node.items)


def bounded_callees(function: FunctionNode, ctx: Context) -> set[str]:
    """The names ``function`` calls under a deadline (``wait_for(inner())``,
    ``async with timeout(...): await inner()``), for :meth:`Context.per_function`."""
    names: set[str] = set()
    for node in ctx.function_nodes(function):
        if isinstance(node, ast.Call) and is_bounding(ctx, node):
            names.update(called_names([*node.args, *(k.value for k in node.keywords)]))
        elif isinstance(node, (ast.With, ast.AsyncWith)) and has_bounding_item(ctx, node):
            names.update(called_names(node.body))
    return names


class Deadlines:
    """Whether the node being visited waits under a deadline of the test's own.

    Bounded: inside ``asyncio.wait_for(...)``, the body of ``async with
    asyncio.timeout(...)`` (and the anyio/trio/async_timeout spellings), or
    in a nested coroutine that the enclosing function only calls under one
    of those. Interrupted on purpose: the body of a ``try`` that catches
    ``CancelledError``/``TimeoutError``, or of ``with assertRaises(...)`` /
    ``pytest.raises(...)`` expecting one.
    """

    __slots__ = ("ctx",)

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def bounded(self) -> bool:
        ctx = self.ctx
        for ancestor, child in ctx.ancestors_in_function():
            if isinstance(ancestor, ast.Call) and is_bounding(ctx, ancestor):
                return True
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and child in ancestor.body:
                if has_bounding_item(ctx, ancestor):
                    return True
        return self._runs_bounded()

    def _runs_bounded(self) -> bool:
        """The current function is a nested coroutine that the function
        around it calls under a deadline (one analysis per function, shared)."""
        functions = [scope for scope in self.ctx.scopes if scope.kind == "function"]
        if len(functions) < 2:
            return False
        inner, outer = functions[-1], functions[-2]
        return inner.name in self.ctx.per_function(outer.node, bounded_callees)

    def interrupted_on_purpose(self) -> bool:
        for ancestor, child in self.ctx.ancestors_in_function():
            if isinstance(ancestor, ast.Try) and child in ancestor.body and self._catches_interruption(ancestor):
                return True
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and child in ancestor.body:
                if any(self._expects_interruption(item.context_expr) for item in ancestor.items):
                    return True
        return False

    def _catches_interruption(self, node: ast.Try) -> bool:
        return any(handler.type is not None and self._names_interruption(handler.type) for handler in node.handlers)

    def _expects_interruption(self, manager: ast.expr) -> bool:
        """``pytest.raises(CancelledError)``, ``self.assertRaises(asyncio.TimeoutError)``..."""
        return (
            isinstance(manager, ast.Call) and bool(manager.args) and expects_raise(self.ctx, manager)
            and self._names_interruption(manager.args[0])
        )

    def _names_interruption(self, node: ast.expr) -> bool:
        candidates = node.elts if isinstance(node, ast.Tuple) else [node]
        return any(self.ctx.resolve(candidate) in INTERRUPTIONS for candidate in candidates)


#: decorators that bound the whole test even when given no timeout (tornado's ``gen_test``: 5 s by default)
BOUNDED_BY_DEFAULT = frozenset({"tornado.testing.gen_test"})
#: keywords of a test decorator that bound the whole test (``@async_test(timeout=5)``)
TIMEOUT_KEYWORDS = frozenset({"timeout", "timeout_seconds"})


def _positive(node: ast.expr | None) -> bool:
    """A bound that holds: not ``None``, not ``0`` (pytest-timeout's "off"), not a negative literal."""
    if node is None:
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool) and node.value > 0
    return not isinstance(node, ast.UnaryOp)


def bounding_decorator(ctx: Context, decorator: ast.expr) -> bool:
    """``@pytest.mark.timeout(5)``, ``@gen_test`` / ``@gen_test(timeout=...)``, or any
    decorator call with a ``timeout=`` keyword (``@async_test(timeout=5)``)."""
    call = decorator if isinstance(decorator, ast.Call) else None
    name = ctx.resolve(call.func if call is not None else decorator) or ""
    if name in BOUNDED_BY_DEFAULT:
        keyword = next((k for k in call.keywords if k.arg == "timeout"), None) if call is not None else None
        return keyword is None or not (isinstance(keyword.value, ast.Constant) and keyword.value.value == 0)
    if call is None:
        return False
    if name == "pytest.mark.timeout":
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "timeout"), None)
        return _positive(first)
    return any(k.arg in TIMEOUT_KEYWORDS and _positive(k.value) for k in call.keywords)


def _marks(ctx: Context, body: list[ast.stmt]) -> list[ast.expr]:
    """The marks of a ``pytestmark = ...`` (one mark or a list/tuple of them) in ``body``."""
    marks: list[ast.expr] = []
    for statement in body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in statement.targets
        ):
            value = statement.value
            marks.extend(value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value])
    return marks


def bounded_by_the_runner(ctx: Context) -> bool:
    """The test around the current node is bounded as a whole: pytest-timeout
    configured for the rootdir (``timeout = N``, ``--timeout`` in addopts), a
    bounding decorator (:func:`bounding_decorator`) of an enclosing def or
    class, or a ``pytestmark`` of the module or an enclosing class naming one."""
    if ctx.project.test_timeout is not None:
        return True
    for scope in ctx.scopes:
        if scope.kind == "module":
            marks = _marks(ctx, ctx.tree.body)
        else:
            node = scope.node
            marks = list(node.decorator_list)  # type: ignore[attr-defined]
            if isinstance(node, ast.ClassDef):
                marks += _marks(ctx, node.body)
        if any(bounding_decorator(ctx, mark) for mark in marks):
            return True
    return False
