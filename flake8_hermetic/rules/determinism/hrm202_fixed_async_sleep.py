"""HRM202: a straight-line ``await asyncio.sleep()``, a guess at another task's progress."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.determinism.clock import clock_steps
from flake8_hermetic.rules.determinism.deadlines import Deadlines
from flake8_hermetic.rules.determinism.sleeps import asserts_after, duration_argument, guessed_wait, is_literal_zero, polls
from flake8_hermetic.violation import Violation

ASYNC_SLEEPS = {"asyncio.sleep": ("delay",), "anyio.sleep": ("delay",), "trio.sleep": ("seconds",)}


#: names that say a class is a test double
DOUBLE_PREFIXES = ("Fake", "Mock", "Stub", "Dummy")


def _runs_on_a_virtual_clock(function: ast.AST, _ctx: object) -> bool:
    arguments = function.args  # type: ignore[attr-defined]
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    if any("clock" in name.lower() for name in names):
        return True
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "MockClock":
                return True
    return False


class AsyncSleepRule(Rule):
    """
    Flags a straight-line `await asyncio.sleep()` (or `anyio.sleep`, `trio.sleep`) in a test file.

    ## Why is this bad?
    Awaiting a fixed delay to "let the other task get there" guesses how many
    turns of the event loop the other task needs and how long each takes.
    A slower host, another Python version (the loop's scheduling changed
    between releases) or one more `await` in the code under test and the
    guess is wrong: the assertion after it runs too early.

    Not flagged:
    - a sleep in a loop that polls (see HRM201: a `for` loop that decides
      nothing between its sleeps is not one) and `sleep(0)` (one turn of the loop);
    - a sleep inside a deadline of the test's own (`asyncio.timeout`,
      `wait_for`, `fail_after`, or a nested coroutine the test runs under
      one), or where the test expects it to be cut short (a `try` catching
      `CancelledError` / `TimeoutError`, `pytest.raises` or `assertRaises`
      of one): the sleep is the slow work under test, and its length is a
      stand-in for "forever";
    - a sleep in a coroutine defined inside another function: a stand-in
      task the test schedules, whose sleep is the length of its simulated
      work. The event loop fires timers in deadline order, so the order
      such tasks produce among themselves does not depend on the host.
      A nested coroutine that asserts after its sleep is waiting for
      another task's state, and is flagged;
    - a sleep on a virtual clock, which advances virtual time at once: the
      test takes a clock (a parameter named like one, `autojump_clock`,
      `mock_clock`) or builds a `MockClock(...)`; and a sleep in a method of
      a test double (a class named `Fake*`, `Mock*`, `Stub*`, `Dummy*`): its
      simulated latency;
    - a sleep that lets the clock move on (a clock or file timestamp is
      read after it in the same function, and no task, thread, process or
      server was started before it), as for HRM201.

    ## Example
    ```python
    async def test_consumer_sees_message(queue, consumer):
        await queue.put("hello")
        await asyncio.sleep(0.1)
        assert consumer.seen == ["hello"]
    ```

    ## Use instead
    ```python
    async def test_consumer_sees_message(queue, consumer):
        await queue.put("hello")
        await asyncio.wait_for(consumer.received.wait(), timeout=5)
        assert consumer.seen == ["hello"]
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM202` (or `extend-select` in the config):
    on the held-out half of issue 26's corpus, none of its 5 findings was a real race (2
    false, 3 borderline; see its Evidence below and docs/precision.md): cancellation and
    timer-order tests whose outcome does not depend on the sleep, which only the assertions
    tell apart. In an application's own suite, where such code is rare,
    it is worth turning on.

    ## Options
    None.

    ## Known problems
    A stand-in coroutine that sleeps to wait for something outside the
    event loop (a server thread, a child process) is the same bet, and is
    not flagged because it is nested.
    """

    code = "HRM202"
    message = "await {name}() guesses how long another task needs and flakes on a loaded host; await the event itself, bounded (asyncio.wait_for)"
    default_on = False
    principles = ("guessed-wait",)

    __slots__ = ("_deadlines",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._deadlines = Deadlines(ctx)

    def visit_Await(self, node: ast.Await) -> Iterator[Violation]:
        call = node.value
        if not isinstance(call, ast.Call):
            return
        name = self.ctx.call_name(call)
        if name not in ASYNC_SLEEPS:
            return
        duration = duration_argument(call, ASYNC_SLEEPS[name])
        if duration is None or is_literal_zero(duration) or polls(self.ctx):
            return
        if self._simulates_work(call) or self._virtual_time() or self._deadlines.bounded() or self._deadlines.interrupted_on_purpose():
            return
        if clock_steps(self.ctx).lets_clock_advance(call):
            return
        scope = self.ctx.function_scope
        if not guessed_wait(self.ctx, node, test_flow=scope is not None and scope.is_test_code):
            return
        yield self.report(node, name=name)

    def _virtual_time(self) -> bool:
        """The sleep runs on a virtual clock, or in a test double: the
        outermost function takes a clock (a parameter named like one:
        ``autojump_clock``, ``mock_clock``) or builds a ``MockClock(...)``,
        whose framework sleeps advance virtual time at once; or the sleep is
        in a method of a class named as a double (``FakeSocket.connect``),
        the double's simulated latency."""
        scopes = self.ctx.scopes
        if any(scope.kind == "class" and scope.name.startswith(DOUBLE_PREFIXES) for scope in scopes):
            return True
        outer = next((scope.node for scope in scopes if scope.kind == "function"), None)
        return outer is not None and self.ctx.per_function(outer, _runs_on_a_virtual_clock, names=False)

    def _simulates_work(self, call: ast.Call) -> bool:
        """A coroutine defined inside another function: a stand-in task the
        test schedules, whose sleep is the simulated length of its work,
        unless it asserts after the sleep (then it waits for another task's
        state: a guessed wait)."""
        if sum(scope.kind == "function" for scope in self.ctx.scopes) <= 1:
            return False
        function = self.ctx.function
        return function is None or not asserts_after(function, (call.lineno, call.col_offset))
