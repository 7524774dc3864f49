"""HRM204: an unbounded await of a signal in a test."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.determinism.deadlines import Deadlines
from flake8_hermetic.rules.determinism.signals import SuppliedSignals, WaitedCoroutines, future_names
from flake8_hermetic.violation import Violation

SIGNAL_METHODS = frozenset({"wait", "get", "join"})


class UnboundedAwaitRule(Rule):
    """
    Flags an unbounded await of a signal in a test: `await ev.wait()`, `await q.get()`, `await q.join()` or an awaited bare future, with no timeout around it.

    ## Why is this bad?
    The test waits for something another task is supposed to do. When the
    code under test is broken the signal never comes, and the await never
    returns: instead of a red test naming the line, the run hangs until a
    global timeout kills it (or, under `pytest-xdist`, until the worker is
    killed and every test it had not run yet goes missing from the report).
    The failure you most need to see is the one you get the least
    information about.

    Flagged: `await x.wait()`, `await x.get()`, `await x.join()` (called with
    no arguments, the shape of `asyncio.Event`, `Queue`, `Condition` and
    subprocess waits) and `await f` where `f` was created in the same
    function by `asyncio.Future()` or `loop.create_future()`. Not flagged
    inside `asyncio.wait_for(...)`, `async with asyncio.timeout(...)` /
    `timeout_at(...)`, `anyio` or `trio` `fail_after` / `move_on_after`.

    In a coroutine defined inside the test, the await hangs the test only
    if the test waits for that coroutine to finish: it is flagged when the
    test awaits it (directly, as a task, through `gather`), runs it with
    `run_until_complete` / `asyncio.run`, or starts it in a task group, and
    not when the test runs it only under one of the bounds above or starts
    it as a task it never waits for.

    An await that cannot wait is left alone: the same function already
    sent the signal before it (`ev.set()` with no `ev.clear()` since, at
    least as many `q.put()`/`q.put_nowait()` as `q.get()` awaits so far,
    or a put in a loop, `fut.set_result()`), the receiver is a mock the
    function made (`AsyncMock()`, `with patch(...) as m`), or the await
    sits inside `pytest.raises(...)`/`assertRaises(...)`, where the test
    expects it to fail at once. A put scheduled for later
    (`call_soon(ev.set)`, `create_task(q.put(x))`) is another task's job
    and does not count.

    ## Example
    ```python
    async def test_ready_is_announced(service):
        await service.start()
        await service.ready.wait()
    ```

    ## Use instead
    ```python
    async def test_ready_is_announced(service):
        await service.start()
        await asyncio.wait_for(service.ready.wait(), timeout=5)

    async def test_ready_is_announced_block(service):
        async with asyncio.timeout(5):
            await service.start()
            await service.ready.wait()
    ```

    ## Options
    None.
    """

    code = "HRM204"
    message = "await {what} never returns if the signal is never sent, hanging the run; bound it: asyncio.wait_for(..., timeout=) or async with asyncio.timeout()"

    __slots__ = ("_deadlines",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._deadlines = Deadlines(ctx)

    def _cannot_hang(self, node: ast.Await) -> bool:
        """The function already sent the signal (``ev.set()``, ``q.put(x)``,
        ``fut.set_result(x)`` before the await), or the receiver is a mock."""
        function = self.ctx.function
        if function is None:
            return False
        signals = self.ctx.per_function(function, SuppliedSignals)
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            receiver, method = dotted_name(value.func.value), value.func.attr
        else:
            receiver, method = dotted_name(value), None
        if receiver is None:
            return False
        position = (node.lineno, node.col_offset)
        return signals.is_mock(receiver) or signals.supplied(receiver, method, position, self.ctx.in_loop(node))

    def _unwaited_coroutine(self) -> bool:
        """A coroutine nested in another function that never waits for it
        to finish: its await cannot hang the test."""
        functions = [scope for scope in self.ctx.scopes if scope.kind == "function"]
        if len(functions) < 2:
            return False
        inner, outer = functions[-1], functions[-2]
        return inner.name not in self.ctx.per_function(outer.node, WaitedCoroutines).names

    def _awaits_signal(self, value: ast.expr) -> bool:
        if isinstance(value, ast.Call):
            func = value.func
            return (
                isinstance(func, ast.Attribute)
                and func.attr in SIGNAL_METHODS
                and not value.args
                and not value.keywords
            )
        key = dotted_name(value)
        return key is not None and key in self._futures()

    def _futures(self) -> set[str]:
        function = self.ctx.function
        return self.ctx.per_function(function, future_names) if function is not None else set()

    def visit_Await(self, node: ast.Await) -> Iterator[Violation]:
        if not self.ctx.in_test or not self._awaits_signal(node.value):
            return
        if self._deadlines.bounded() or self._unwaited_coroutine() or self.ctx.expected_to_raise(node):
            return
        if self._cannot_hang(node):
            return
        what = " ".join(self.ctx.segment(node.value).split()) or "the signal"
        if len(what) > 40:
            what = what[:37] + "..."
        yield self.report(node, what=what)
