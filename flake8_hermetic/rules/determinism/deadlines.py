"""Deadlines of a test's own: whether a wait is bounded by one, or cut short on purpose."""

from __future__ import annotations

import ast

from flake8_hermetic.context import Context
from flake8_hermetic.nodes import FunctionNode, own_nodes
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
RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex"})


class Deadlines:
    """Whether the node being visited waits under a deadline of the test's own.

    Bounded: inside ``asyncio.wait_for(...)``, the body of ``async with
    asyncio.timeout(...)`` (and the anyio/trio/async_timeout spellings), or
    in a nested coroutine that the enclosing function only calls under one
    of those. Interrupted on purpose: the body of a ``try`` that catches
    ``CancelledError``/``TimeoutError``, or of ``with assertRaises(...)`` /
    ``pytest.raises(...)`` expecting one.
    """

    __slots__ = ("ctx", "_callees")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._callees: dict[int, set[str]] = {}

    def is_bounding(self, call: ast.Call) -> bool:
        if self.ctx.call_name(call) not in BOUNDING_CALLS:
            return False
        # asyncio.timeout(None) is the documented way to say "no deadline"
        first = call.args[0] if call.args else None
        return not (isinstance(first, ast.Constant) and first.value is None)

    def _bounding_items(self, node: ast.With | ast.AsyncWith) -> bool:
        return any(
            isinstance(item.context_expr, ast.Call) and self.is_bounding(item.context_expr) for item in node.items
        )

    def bounded(self) -> bool:
        for ancestor, child in self.ctx.ancestors_in_function():
            if isinstance(ancestor, ast.Call) and self.is_bounding(ancestor):
                return True
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and child in ancestor.body:
                if self._bounding_items(ancestor):
                    return True
        return self._runs_bounded()

    def _runs_bounded(self) -> bool:
        """The current function is a nested coroutine that the function
        around it calls under a deadline."""
        functions = [scope for scope in self.ctx.scopes if scope.kind == "function"]
        if len(functions) < 2:
            return False
        inner, outer = functions[-1], functions[-2]
        return inner.name in self._bounded_callees(outer.node)  # type: ignore[arg-type]

    def _bounded_callees(self, function: FunctionNode) -> set[str]:
        names = self._callees.get(id(function))
        if names is None:
            names = self._callees[id(function)] = set()
            for node in own_nodes(function):
                if isinstance(node, ast.Call) and self.is_bounding(node):
                    names.update(called_names([*node.args, *(k.value for k in node.keywords)]))
                elif isinstance(node, (ast.With, ast.AsyncWith)) and self._bounding_items(node):
                    names.update(called_names(node.body))
        return names

    def interrupted_on_purpose(self) -> bool:
        for ancestor, child in self.ctx.ancestors_in_function():
            if isinstance(ancestor, ast.Try) and child in ancestor.body:
                if any(handler.type is not None and self._names_interruption(handler.type) for handler in ancestor.handlers):
                    return True
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and child in ancestor.body:
                for item in ancestor.items:
                    call = item.context_expr
                    if isinstance(call, ast.Call) and call.args and self._expects(call):
                        return True
        return False

    def _expects(self, call: ast.Call) -> bool:
        func = call.func
        raises = (isinstance(func, ast.Attribute) and func.attr in RAISES_METHODS) or (
            self.ctx.call_name(call) == "pytest.raises"
        )
        return raises and self._names_interruption(call.args[0])

    def _names_interruption(self, node: ast.expr) -> bool:
        candidates = node.elts if isinstance(node, ast.Tuple) else [node]
        return any(self.ctx.resolve(candidate) in INTERRUPTIONS for candidate in candidates)
