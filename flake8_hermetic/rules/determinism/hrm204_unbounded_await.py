"""HRM204: an unbounded await of a signal in a test."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.determinism.deadlines import Deadlines, bounded_by_the_runner
from flake8_hermetic.rules.determinism.signals import (
    SuppliedSignals,
    WaitedCoroutines,
    ArrangedSignals,
    child_processes,
    future_names,
    signal_root,
)
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
    function made (`AsyncMock()`, `with patch(...) as m`), the await
    sits inside `pytest.raises(...)`/`assertRaises(...)`, where the test
    expects it to fail at once, or in a cancel scope the test already
    cancelled (`scope.cancel()` earlier in `with CancelScope() as scope`).

    **The test sends the signal from another task of its own.** A wait
    the test arranges to end itself is a synchronisation between its own
    tasks, not a wait on the code under test: a nested function of the
    test (a child task, a waiter) sends it (`ev.set()`, `q.put(x)`,
    `cond.notify_all()`), or the test hands the send to a call
    (`call_soon(ev.set)`, `in_host(ev.set)`) or the signal to a task or
    thread it starts (`nursery.start_soon(worker, ev)`,
    `create_task(q.put(x))`). The same function's own sends count only
    before the await, in order (`await late.wait(); late.set()` hangs).
    A signal handed to the code under test (`Service(on_ready=ev)`) is
    still flagged: that is the wait that can hang.

    **A child process the test spawned** (`await create_subprocess_exec(...)`,
    `async with open_process(...) as proc`, any `*process*(...)` factory,
    or a parameter annotated `...Process`) is left alone: it ends when its
    command does, and bounding waits on children is HRM113's business.

    **Deadlines.** A library's own suite imports its deadline helpers
    relatively (`from .. import move_on_after`): a relatively imported
    `fail_after`/`move_on_after`/`fail_at`/`move_on_at`/`timeout_at` is a
    bound, and so is `CancelScope(deadline=...)`.

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

    ## Off by default
    Turn it on with `--extend-select=HRM204` (or `extend-select` in the
    config). On the held-out half of the suites it was measured on and never
    tuned against (docs/precision.md), 0 of 8 of its findings were hazards a
    maintainer would fix (0%), under the 80% a default-on rule must reach:
    the runner already bounds every test (a pytest-timeout `timeout` in the
    pytest configuration, a framework's per-test timeout decorator), or the
    awaited task was cancelled or its group had exited. It would need the
    project's per-test timeout from the pytest configuration and the
    framework's test decorators.

    ## Options
    None.

    ## Known problems
    A signal sent by the code under test (a callback it is handed) is not
    seen, and the await is flagged. A bound set by a fixture (an autouse
    fixture arming an alarm) or by a plugin other than pytest-timeout is
    not seen either. pytest-timeout's `timeout` is trusted without checking
    that the plugin is installed.
    """

    code = "HRM204"
    default_on = False
    principles = ("bounded-by-runner",)
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

    def _arranged_by_the_test(self, value: ast.expr) -> bool:
        """The test sends the signal itself, in its own body or a task it
        starts, or waits for a child process it spawned (see the docstring)."""
        outer = next((scope.node for scope in self.ctx.scopes if scope.kind == "function"), None)
        receiver = value.func.value if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) else value
        root = signal_root(receiver)
        if outer is None or root is None:
            return False
        waiting = self.ctx.function
        if waiting is not None and self.ctx.per_function(outer, ArrangedSignals, names=False).by_another_task(
            root, waiting
        ):
            return True
        return isinstance(value, ast.Call) and value.func.attr == "wait" and root in self.ctx.per_function(
            outer, child_processes
        )

    def _cancelled_scope(self, node: ast.Await) -> bool:
        """Inside ``with CancelScope() as scope:`` after ``scope.cancel()``:
        the await is cancelled at once, on purpose."""
        for ancestor, _child in self.ctx.ancestors_in_function():
            if not isinstance(ancestor, (ast.With, ast.AsyncWith)):
                continue
            scopes = {dotted_name(item.optional_vars) for item in ancestor.items if item.optional_vars is not None}
            for inner in ast.walk(ancestor):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr == "cancel"
                    and dotted_name(inner.func.value) in scopes
                    and (inner.lineno, inner.col_offset) < (node.lineno, node.col_offset)
                ):
                    return True
        return False

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
        if bounded_by_the_runner(self.ctx):
            return
        if self._cannot_hang(node) or self._arranged_by_the_test(node.value) or self._cancelled_scope(node):
            return
        what = " ".join(self.ctx.segment(node.value).split()) or "the signal"
        if len(what) > 40:
            what = what[:37] + "..."
        yield self.report(node, what=what)
