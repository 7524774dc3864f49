"""HRM201: a straight-line ``time.sleep()``, a wait of a guessed length."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.determinism.clock import READING, clock_steps, current_flow
from flake8_hermetic.rules.determinism.deadlines import Deadlines
from flake8_hermetic.rules.determinism.handed_callables import Binding, HandedCallables, is_thread_class
from flake8_hermetic.rules.determinism.sleeps import (
    asserts_after,
    duration_argument,
    guessed_wait,
    is_literal_zero,
    polls,
    random_duration,
)
from flake8_hermetic.violation import Violation


class SleepRule(Rule):
    """
    Flags a straight-line `time.sleep()` in a test file: a wait of a guessed length.

    ## Why is this bad?
    A fixed sleep is a bet on how long something else takes: a thread to
    start, a server to bind, a file to land. On an idle laptop the bet wins;
    on a loaded CI runner with every core busy it loses now and then, and the
    test fails in a way nobody can reproduce. Lengthening the sleep only
    makes every run slower while lowering, never removing, the odds.

    Not flagged, because the length is not a guess there:
    - a sleep in a loop that polls (look, sleep, look again): a `while`
      loop, an `async for`, a comprehension, or a `for` loop whose body
      decides something (an `if`, `break`, `return`, `try`, or a `yield`
      that hands the round to a caller who decides). A `for _ in
      range(n): step(); sleep(x)` decides nothing between its sleeps, and
      an `assert` each round fails at once rather than waits: each sleep
      there is a guess like any other, and is flagged;
    - a sleep of a random length (`sleep(random() * 0.001)`,
      `rng.uniform(0, 0.1)`): jitter that shakes out a race;
    - `sleep(0)`, which only yields the processor;
    - a sleep inside a deadline of the test's own (`async with
      asyncio.timeout(...)`, `anyio.fail_after(...)`): the slow work the
      deadline is tested against;
    - a sleep until a computed instant (`sleep(retry_at - time.time())`);
    - a sleep between two clock readings: it is the thing being measured,
      and HRM203 judges what is asserted about it;
    - a sleep that lets the clock move on: the same function reads a clock
      or a file timestamp after it (`time.time()`, `datetime.now()`,
      `st_mtime`, `path.mtime()`, or sets one with `touch()` / `os.utime()`)
      and has started no thread, process, task or server before it that the
      sleep could be waiting for. A slower host only widens the gap between
      the two stamps, which is what the test needs;
    - a sleep in code that runs beside the test rather than in it, where it
      is the simulated length of the other side's work: a lambda passed as
      an argument (`Thread(target=lambda: time.sleep(1))`), a nested
      function, a module-level function or a method that is passed by name
      (`target=worker`, `pool.map(slow_square, ...)`,
      `Process(target=self._child)`, `signal.signal(SIGUSR1, handler)`) and
      never called directly by the code that defines it, the methods of a
      class handed over the same way (`TCPServer(address, SlowHandler)`),
      and the `run` of a `Thread` or `Process` subclass. **Unless the job
      asserts after its sleep**: a job that sleeps, then asserts (another
      job's state, shared data) is the guessed wait itself, seen from the
      other side, and is flagged; a job that sleeps to simulate latency and
      asserts nothing stays quiet.

    A file time is set by `touch()` only on a path (`(tmp_path / "a").touch()`,
    `log_file.touch()`, `Path(...).touch()`, a bare `touch(path)` helper);
    `store.touch(key)` is no file and lets no clock advance. A framework's
    clock (`trio.current_time()`) and the event loop's `loop.time()` are
    clock readings.

    The call is read through the file's imports: `from time import sleep as
    snooze; snooze(1)` is flagged.

    ## Example
    ```python
    def test_worker_finishes():
        worker = start_worker()
        time.sleep(0.5)
        assert worker.done
    ```

    ## Use instead
    ```python
    def test_worker_finishes():
        worker = start_worker()
        assert worker.finished.wait(timeout=10)

    def test_file_lands(tmp_path):
        deadline = time.monotonic() + 10
        while not (tmp_path / "out").exists():
            assert time.monotonic() < deadline, "out never appeared"
            time.sleep(0.01)
    ```
    `Event.wait(timeout)`, `Queue.get(timeout=...)` and `Thread.join(timeout)`
    return the moment the state is there, and the timeout can be generous
    because it is only paid on failure.

    ## Off by default
    Turn it on with `--extend-select=HRM201` (or `extend-select` in the config):
    on the held-out half of issue 26's corpus, 6 of its 17 findings were guessed waits
    (35%, under the 90% bar; see its Evidence below and docs/precision.md): the others were
    sleeps followed by a check that nothing happened, the run time of a stress test, or slow
    fakes the code under test calls, which look the same as a guessed wait. In an application's own suite, where such code is rare,
    it is worth turning on.

    ## Options
    None.

    ## Known problems
    A thread target that sleeps to give the test's own thread time to get
    somewhere ("wait until the main thread blocks") is the same bet seen
    from the other side, and is not flagged once the target is handed over.
    Slow work that the test reaches some other way is still flagged: a fake
    object's method called by the code under test, a helper that is both
    handed to a pool and called directly, a stress run that lets threads
    race for a second before stopping them. So is a clock advance that only
    the code under test observes (a log handler's rollover check after
    `sleep(1.1)`). An `Event` the test releases, or an injected clock,
    states the intent in those cases.
    """

    code = "HRM201"
    message = "{name}() waits a guessed time and flakes on a loaded host; wait on the state itself with a timeout (Event.wait, Queue.get, join) or poll with a deadline"
    default_on = False
    principles = ("guessed-wait",)
    # no ``calls``: every call is read, to see which helpers are handed to a thread or pool

    __slots__ = ("_deadlines", "_handed", "_pending")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._deadlines = Deadlines(ctx)
        self._handed = HandedCallables(ctx)
        #: sleeps in a helper, judged after the walk: (violation, bindings, method name)
        self._pending: list[tuple[Violation, list[Binding], str | None]] = []

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        self._handed.record(node)
        if self.ctx.call_name(node) != "time.sleep":
            return
        duration = duration_argument(node, ("secs", "seconds"))
        if duration is None or is_literal_zero(duration) or polls(self.ctx):
            return
        if self._deadlines.bounded() or current_flow(self.ctx).is_elapsed(duration) or self._is_measured(node):
            return
        if clock_steps(self.ctx).lets_clock_advance(node):
            return
        if random_duration(self.ctx, duration):
            return  # jitter to shake out a race, not a wait for a state
        scope = self.ctx.function_scope
        if not guessed_wait(self.ctx, node, test_flow=scope is not None and scope.is_test_code):
            return
        helper = self._helper_frame()
        if helper and self._asserts_after(node):
            helper = None  # a job that sleeps, then asserts: a guessed wait for another job's state
        if helper is True:
            return
        violation = self.report(node, name="time.sleep")
        if helper:
            self._pending.append((violation, *helper))
        else:
            yield violation

    def finish(self) -> Iterator[Violation]:
        handed = self._handed
        for violation, bindings, method in self._pending:
            if any(handed.handed_only(binding) for binding in bindings):
                continue
            if method is not None and handed.method_handed_only(bindings[0][2], method):
                continue
            yield violation

    def _binding(self, index: int, name: str) -> Binding:
        """The binding of ``name`` defined in ``self.ctx.scopes[index]``."""
        scopes = self.ctx.scopes
        functions = [scope for scope in scopes[: index + 1] if scope.kind == "function"]
        if not functions:
            return (0, 0, name)
        return (id(functions[0].node), id(functions[-1].node), name)

    def _helper_frame(self) -> bool | tuple[list[Binding], str | None] | None:
        """Whether the sleep runs in a frame other code calls: True when it
        surely does (a lambda passed as an argument, the ``run`` of a Thread
        subclass), the names that decide it after the walk (a nested def, a
        module-level function, a method or its class: handed to other code,
        never called directly), None when it runs in the test's own flow."""
        ctx = self.ctx
        parents = ctx.parents
        for index in range(len(parents) - 1, -1, -1):
            ancestor = parents[index]
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                break
            if isinstance(ancestor, ast.Lambda):
                holder = parents[index - 1] if index else None
                if isinstance(holder, ast.keyword) or (
                    isinstance(holder, ast.Call) and any(argument is ancestor for argument in holder.args)
                ):
                    return True
                if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
                    return [self._binding(len(ctx.scopes) - 1, holder.targets[0].id)], None
                return None
        scopes = ctx.scopes
        inner = scopes[-1]
        if inner.kind != "function" or inner.is_test_code:
            return None
        outer = scopes[-2]
        if outer.kind != "class":
            return [self._binding(len(scopes) - 2, inner.name)], None
        if inner.name == "run" and is_thread_class(ctx, outer.node):  # type: ignore[arg-type]
            return True
        return [self._binding(len(scopes) - 3, outer.name)], inner.name

    def _asserts_after(self, node: ast.Call) -> bool:
        """The def the sleep runs in checks something after it (a lambda cannot)."""
        for ancestor in reversed(self.ctx.parents):
            if isinstance(ancestor, ast.Lambda):
                return False
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef)):
                break
        function = self.ctx.function
        return function is not None and asserts_after(function, (node.lineno, node.col_offset))

    def _is_measured(self, node: ast.Call) -> bool:
        """``t0 = monotonic(); sleep(0.1); t1 = monotonic()``: the sleep is
        the thing measured (HRM203 judges what is asserted about it)."""
        held = self.ctx.statement(node)
        if held is None or not isinstance(held[0], ast.Expr) or held[0].value is not node:
            return False
        _, siblings, index = held
        flow = current_flow(self.ctx)
        neighbours = siblings[max(index - 1, 0):index] + siblings[index + 1:index + 2]
        return any(
            isinstance(neighbour, (ast.Assign, ast.AnnAssign)) and neighbour.value is not None
            and flow.level(neighbour.value) == READING
            for neighbour in neighbours
        )
