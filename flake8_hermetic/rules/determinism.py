"""HRM2xx: verdicts that change from run to run."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from flake8_hermetic.imports import dotted_name
from flake8_hermetic.registry import Rule, Violation

if TYPE_CHECKING:
    from flake8_hermetic.engine import Context

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
NEW_FRAMES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def own_nodes(function: FunctionNode) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body in source order.

    A nested def, class or lambda is yielded but not entered: its body is
    another frame, with names of its own.
    """
    stack: list[ast.AST] = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, NEW_FRAMES):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def subtree(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its descendants, not entering lambdas (iterative)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, ast.Lambda):
            stack.extend(ast.iter_child_nodes(current))


def assigned_pairs(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr]]:
    """(target, value) pairs of an assignment, tuple unpacking paired up."""
    if isinstance(node, ast.Assign):
        pending = [(target, node.value) for target in node.targets]
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        pending = [(node.target, node.value)]
    else:
        return
    while pending:
        target, value = pending.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            elements = target.elts
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elements) and not any(
                isinstance(e, ast.Starred) for e in elements
            ):
                pending.extend(zip(elements, value.elts))
            else:
                pending.extend((e.value if isinstance(e, ast.Starred) else e, value) for e in elements)
        else:
            yield target, value


def duration_argument(call: ast.Call, keyword_names: tuple[str, ...]) -> ast.expr | None:
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    for keyword in call.keywords:
        if keyword.arg in keyword_names:
            return keyword.value
    return None


def is_literal_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 0


CLOCKS = frozenset(
    f"time.{clock}{suffix}"
    for clock in ("time", "monotonic", "perf_counter", "process_time", "thread_time")
    for suffix in ("", "_ns")
) | {"timeit.default_timer"}
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv)
#: calls whose result is still the number they were given; any other call
#: (``TimerHandle(when + 10)``) makes something else out of a clock value
NUMERIC_CALLS = frozenset(
    {"abs", "round", "min", "max", "float", "int", "sum", "sorted"}
    | {f"math.{name}" for name in ("fabs", "floor", "ceil", "fsum", "trunc")}
    | {f"statistics.{name}" for name in ("mean", "fmean", "median")}
)
READING, ELAPSED = 1, 2


class ClockFlow:
    """What the names of one function hold: a clock reading or a duration.

    ``start = time.monotonic()`` makes ``start`` a READING; arithmetic on a
    reading (``time.monotonic() - start``, ``start + 5``) is ELAPSED, and so
    is every name assigned from it, transitively, in source order. Values
    flow through numeric calls (``abs``, ``round``, ``max``...), not into
    other calls' results.
    """

    __slots__ = ("_levels", "_resolve")

    def __init__(self, function: FunctionNode | None, resolve: Callable[[ast.AST], str | None]) -> None:
        self._resolve = resolve
        self._levels: dict[str, int] = {}
        if function is None:
            return
        for node in own_nodes(function):
            if isinstance(node, ast.AugAssign):
                key = dotted_name(node.target)
                if key is not None and (self._levels.get(key) or self.level(node.value)):
                    self._levels[key] = ELAPSED
                continue
            for target, value in assigned_pairs(node):
                key = dotted_name(target)
                if key is None:
                    continue
                level = self.level(value)
                if level > self._levels.get(key, 0):
                    self._levels[key] = level

    def level(self, expr: ast.AST) -> int:
        """0, READING or ELAPSED: what ``expr`` computes from the clock."""
        found = 0
        stack: list[tuple[ast.AST, bool]] = [(expr, False)]
        while stack:
            node, in_arithmetic = stack.pop()
            if isinstance(node, ast.Call) and self._resolve(node.func) in CLOCKS:
                leaf = READING
            elif isinstance(node, (ast.Name, ast.Attribute)) and (key := dotted_name(node)) in self._levels:
                leaf = self._levels[key]  # type: ignore[index]
            else:
                leaf = 0
            if leaf:
                found = max(found, ELAPSED if in_arithmetic else leaf)
                if found == ELAPSED:
                    return ELAPSED
                if isinstance(node, ast.Call):
                    continue
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, ast.Call) and self._resolve(node.func) not in NUMERIC_CALLS:
                continue
            arithmetic = in_arithmetic or (isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC))
            stack.extend((child, arithmetic) for child in ast.iter_child_nodes(node))
        return found

    def is_elapsed(self, expr: ast.AST) -> bool:
        return self.level(expr) == ELAPSED


class ClockFlows:
    """The :class:`ClockFlow` of the function being visited, built once per function."""

    __slots__ = ("ctx", "_flows")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._flows: dict[int, ClockFlow] = {}

    def current(self) -> ClockFlow:
        function = self.ctx.function
        flow = self._flows.get(id(function))
        if flow is None:
            flow = self._flows[id(function)] = ClockFlow(function, self.ctx.resolve)
        return flow


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


def called_names(roots: Iterable[ast.AST]) -> Iterator[str]:
    """Names called anywhere under ``roots``: ``inner()`` -> "inner"."""
    for root in roots:
        for node in subtree(root):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                yield node.func.id


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
    - a sleep in a loop body: a poll (look, sleep, look again);
    - `sleep(0)`, which only yields the processor;
    - a sleep inside a deadline of the test's own (`async with
      asyncio.timeout(...)`, `anyio.fail_after(...)`): the slow work the
      deadline is tested against;
    - a sleep until a computed instant (`sleep(retry_at - time.time())`);
    - a sleep between two clock readings: it is the thing being measured,
      and HRM203 judges what is asserted about it.

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

    ## Options
    None.

    ## Known problems
    A sleep that stands for slow work (a fake handler that takes a while to
    answer, a thread target that keeps a lock held) is flagged like a wait.
    It is the same bet when the test needs the other side to get somewhere
    first; when it does not, an `Event` the test releases still makes the
    intent explicit.
    """

    code = "HRM201"
    message = "{name}() waits a guessed time and flakes on a loaded host; wait on the state itself with a timeout (Event.wait, Queue.get, join) or poll with a deadline"
    calls = frozenset({"time.sleep"})

    __slots__ = ("_deadlines", "_flows")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._deadlines = Deadlines(ctx)
        self._flows = ClockFlows(ctx)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.ctx.call_name(node) != "time.sleep":
            return
        duration = duration_argument(node, ("secs", "seconds"))
        if duration is None or is_literal_zero(duration) or self.ctx.in_loop():
            return
        if self._deadlines.bounded() or self._flows.current().is_elapsed(duration) or self._is_measured(node):
            return
        yield self.report(node, name="time.sleep")

    def _is_measured(self, node: ast.Call) -> bool:
        """``t0 = monotonic(); sleep(0.1); t1 = monotonic()``: the sleep is
        the thing measured (HRM203 judges what is asserted about it)."""
        held = self.ctx.statement(node)
        if held is None or not isinstance(held[0], ast.Expr) or held[0].value is not node:
            return False
        _, siblings, index = held
        flow = self._flows.current()
        neighbours = siblings[max(index - 1, 0):index] + siblings[index + 1:index + 2]
        return any(
            isinstance(neighbour, (ast.Assign, ast.AnnAssign)) and neighbour.value is not None
            and flow.level(neighbour.value) == READING
            for neighbour in neighbours
        )


ASYNC_SLEEPS = {"asyncio.sleep": ("delay",), "anyio.sleep": ("delay",), "trio.sleep": ("seconds",)}


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
    - a sleep in a loop body (a poll) and `sleep(0)` (one turn of the loop);
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

    ## Options
    None.

    ## Known problems
    A stand-in coroutine that sleeps to wait for something outside the
    event loop (a server thread, a child process) is the same bet, and is
    not flagged because it is nested.
    """

    code = "HRM202"
    message = "await {name}() guesses how long another task needs and flakes on a loaded host; await the event itself, bounded (asyncio.wait_for)"

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
        if duration is None or is_literal_zero(duration) or self.ctx.in_loop():
            return
        if self._in_nested_coroutine() or self._deadlines.bounded() or self._deadlines.interrupted_on_purpose():
            return
        yield self.report(node, name=name)

    def _in_nested_coroutine(self) -> bool:
        """A coroutine defined inside another function: a stand-in task the
        test schedules, whose sleep is the simulated length of its work."""
        return sum(scope.kind == "function" for scope in self.ctx.scopes) > 1


ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
#: unittest assertions that compare their first two arguments
COMPARING_ASSERTS = frozenset(
    {"assertLess", "assertLessEqual", "assertGreater", "assertGreaterEqual", "assertAlmostEqual", "assertNotAlmostEqual"}
)
TRUTH_ASSERTS = frozenset({"assertTrue", "assertFalse"})


class ElapsedTimeAssertionRule(Rule):
    """
    Flags an assertion on elapsed wall-clock time: a comparison of a duration measured with the `time` module.

    ## Why is this bad?
    How long a piece of code takes depends on the machine, its load, the
    other tests running beside it and the garbage collector's mood. A bound
    that holds on the author's laptop (`elapsed < 0.5`) fails on a busy CI
    runner, and a lower bound (`elapsed >= 0.1` after `sleep(0.1)`) fails
    where the clock is coarse. Either way the verdict depends on the host,
    not on the code.

    The rule follows durations through the function that measures them:
    a name assigned from arithmetic on `time.time()`, `monotonic()`,
    `perf_counter()`, `process_time()`, `thread_time()` (and their `_ns`
    forms, and `timeit.default_timer()`) is a duration, and so is any name
    computed from it. It flags `assert` comparisons (`<`, `<=`, `>`, `>=`,
    `== pytest.approx(...)`) and `self.assertLess/LessEqual/Greater/GreaterEqual/
    AlmostEqual`, `self.assertTrue(a < b)` on such a value. Comparing two raw
    readings (`assert t2 >= t1`, a check that a clock does not go backwards)
    is not an elapsed-time assertion and is not flagged.

    ## Example
    ```python
    def test_cache_is_fast(cache):
        start = time.perf_counter()
        cache.get("key")
        elapsed = time.perf_counter() - start
        assert elapsed < 0.01
    ```

    ## Use instead
    ```python
    def test_cache_hits_do_not_reach_the_backend(cache, backend):
        cache.get("key")
        cache.get("key")
        assert backend.calls == 1
    ```
    Assert the behaviour that makes the code fast (no second backend call,
    no quadratic loop). Measure speed in a benchmark, where the host is
    controlled and the numbers are compared across runs.

    ## Options
    None.

    ## Known problems
    A test that replaces the clock (`mock.patch("time.monotonic", ...)`)
    makes the arithmetic deterministic, and its assertions are still
    flagged; such a test usually reads better with an injected clock.
    """

    code = "HRM203"
    message = "assertion on elapsed wall-clock time depends on the host's speed and load; assert the behaviour and measure speed in a benchmark"
    methods = COMPARING_ASSERTS | TRUTH_ASSERTS

    __slots__ = ("_flows",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._flows = ClockFlows(ctx)

    def _flow(self) -> ClockFlow:
        return self._flows.current()

    def _compares_elapsed(self, expr: ast.AST) -> bool:
        # the function's clock flow is built only for a comparison that could use it
        for node in subtree(expr):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            for index, op in enumerate(node.ops):
                left, right = operands[index], operands[index + 1]
                if isinstance(op, ORDERING) and (self._flow().is_elapsed(left) or self._flow().is_elapsed(right)):
                    return True
                if isinstance(op, (ast.Eq, ast.NotEq)):
                    if (self._is_approx(right) and self._flow().is_elapsed(left)) or (
                        self._is_approx(left) and self._flow().is_elapsed(right)
                    ):
                        return True
        return False

    def _is_approx(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and self.ctx.call_name(node) == "pytest.approx"

    def visit_Assert(self, node: ast.Assert) -> Iterator[Violation]:
        if self._compares_elapsed(node.test):
            yield self.report(node)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        if func.attr in COMPARING_ASSERTS:
            operands: list[ast.expr] = [a for a in node.args[:2] if not isinstance(a, ast.Starred)]
            operands += [k.value for k in node.keywords if k.arg in ("first", "second")]
            flow = self._flow()
            if any(flow.is_elapsed(operand) for operand in operands):
                yield self.report(node)
        elif func.attr in TRUTH_ASSERTS:
            subject = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "expr"), None)
            if subject is not None and self._compares_elapsed(subject):
                yield self.report(node)


SIGNAL_METHODS = frozenset({"wait", "get", "join"})
FUTURE_FACTORIES = frozenset({"asyncio.Future", "asyncio.futures.Future"})
#: ways synchronous code runs a coroutine to its end
BLOCKING_RUNNERS = frozenset({"asyncio.run"})
RUNNER_METHODS = frozenset({"run_until_complete"})
#: task groups wait for every task they started when their block exits
TASK_GROUP_SUFFIXES = ("TaskGroup", "create_task_group", "open_nursery")
TASK_GROUP_METHODS = frozenset({"create_task", "start_soon", "start"})
COLLECTING_METHODS = frozenset({"append", "add", "extend"})


def referenced_names(roots: Iterable[ast.AST]) -> Iterator[str]:
    for root in roots:
        for node in subtree(root):
            if isinstance(node, ast.Name):
                yield node.id


class WaitedCoroutines:
    """The nested coroutines a function waits to finish.

    Waited: named in an awaited expression (``await inner()``,
    ``await asyncio.gather(t1, t2)``), run by ``run_until_complete`` or
    ``asyncio.run``, or started in a task group (which waits on exit);
    followed one assignment at a time (``t = create_task(inner())``,
    ``tasks.append(...)``), so a task that is awaited later counts too.
    """

    __slots__ = ("names",)

    def __init__(self, function: FunctionNode, ctx: Context) -> None:
        roots: list[ast.AST] = []
        built_from: dict[str, set[str]] = {}
        groups: set[str] = set()
        for node in own_nodes(function):
            if isinstance(node, ast.Await):
                roots.append(node.value)
            elif isinstance(node, ast.AsyncWith):
                for item in node.items:
                    opened = item.context_expr
                    if isinstance(opened, ast.Call) and (ctx.call_name(opened) or "").endswith(TASK_GROUP_SUFFIXES):
                        key = dotted_name(item.optional_vars) if item.optional_vars is not None else None
                        if key is not None:
                            groups.add(key)
            elif isinstance(node, ast.Call):
                func = node.func
                arguments = [*node.args, *(k.value for k in node.keywords)]
                if ctx.call_name(node) in BLOCKING_RUNNERS:
                    roots.extend(arguments)
                elif isinstance(func, ast.Attribute):
                    receiver = dotted_name(func.value)
                    if func.attr in RUNNER_METHODS or (func.attr in TASK_GROUP_METHODS and receiver in groups):
                        roots.extend(arguments)
                    elif func.attr in COLLECTING_METHODS and receiver is not None:
                        built_from.setdefault(receiver, set()).update(referenced_names(arguments))
            for target, value in assigned_pairs(node):
                key = dotted_name(target)
                if key is not None:
                    built_from.setdefault(key, set()).update(referenced_names([value]))
        waited = set(referenced_names(roots))
        pending = list(waited)
        while pending:
            for name in built_from.get(pending.pop(), ()):
                if name not in waited:
                    waited.add(name)
                    pending.append(name)
        self.names = waited


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

    __slots__ = ("_deadlines", "_futures", "_waited")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._deadlines = Deadlines(ctx)
        self._futures: dict[int, set[str]] = {}
        self._waited: dict[int, WaitedCoroutines] = {}

    def _unwaited_coroutine(self) -> bool:
        """A coroutine nested in another function that never waits for it
        to finish: its await cannot hang the test."""
        functions = [scope for scope in self.ctx.scopes if scope.kind == "function"]
        if len(functions) < 2:
            return False
        inner, outer = functions[-1], functions[-2]
        waited = self._waited.get(id(outer.node))
        if waited is None:
            waited = self._waited[id(outer.node)] = WaitedCoroutines(outer.node, self.ctx)  # type: ignore[arg-type]
        return inner.name not in waited.names

    def _makes_future(self, call: ast.Call) -> bool:
        if isinstance(call.func, ast.Attribute) and call.func.attr == "create_future":
            return True
        return self.ctx.call_name(call) in FUTURE_FACTORIES

    def _futures_of(self, function: FunctionNode | None) -> set[str]:
        """Names the function assigns a bare future to."""
        futures = self._futures.get(id(function))
        if futures is None:
            futures = self._futures[id(function)] = set()
            for node in own_nodes(function) if function is not None else ():
                for target, value in assigned_pairs(node):
                    key = dotted_name(target)
                    if key is not None and isinstance(value, ast.Call) and self._makes_future(value):
                        futures.add(key)
        return futures

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
        return key is not None and key in self._futures_of(self.ctx.function)

    def visit_Await(self, node: ast.Await) -> Iterator[Violation]:
        if not self.ctx.in_test or not self._awaits_signal(node.value):
            return
        if self._deadlines.bounded() or self._unwaited_coroutine():
            return
        what = " ".join(self.ctx.segment(node.value).split()) or "the signal"
        if len(what) > 40:
            what = what[:37] + "..."
        yield self.report(node, what=what)


PID_CALLS = frozenset({"os.kill", "os.killpg", "os.waitpid", "psutil.Process", "psutil.pid_exists"})
MAX_PID = 4194304  # Linux's pid_max ceiling (2**22)
PID_WORD = re.compile(r"^p?pids?\d*$")
CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def is_pid_name(name: str) -> bool:
    """``pid``, ``child_pid``, ``fakePid``, ``PID2``; not ``rapid`` or ``stupid``."""
    words = CAMEL_BOUNDARY.sub("_", name).lower().split("_")
    return any(PID_WORD.match(word) for word in words if word)


def allocatable_pid(node: ast.expr | None) -> int | None:
    if (
        isinstance(node, ast.Constant)
        and type(node.value) is int
        and 2 <= node.value <= MAX_PID
    ):
        return node.value
    return None


class PidLiteralRule(Rule):
    """
    Flags a literal process id that a real host can hand out: an int from 2 to 4194304 used as a pid.

    ## Why is this bad?
    A test that needs "a process that does not exist" often picks a number
    that looks too big to be real, like `999999` or `123456`. It is not:
    Linux allocates pids up to `pid_max`, which is 4194304 on 64-bit hosts,
    and a long-running CI machine walks through that whole range. The day
    the number names a live process, `os.kill` signals a stranger, a
    liveness probe says "alive", and the test fails (or does damage) for
    reasons that have nothing to do with the change under review.

    Flagged: such a literal as the pid argument of `os.kill`, `os.killpg`,
    `os.waitpid`, `psutil.Process`, `psutil.pid_exists`, as a `pid=`
    keyword of any call, or assigned to a name whose words include `pid`
    (`pid`, `child_pid`, `self.fakePid`). 0, 1 and negative numbers have
    fixed meanings and are not flagged.

    ## Example
    ```python
    def test_reaper_ignores_dead_owner(store):
        store.lock(owner_pid=999999)
        assert store.reap() == 1
    ```

    ## Use instead
    ```python
    NO_SUCH_PID = 99999999999  # above any pid_max: no OS can allocate it

    def test_reaper_ignores_dead_owner(store, monkeypatch):
        monkeypatch.setattr(store, "pid_alive", lambda pid: False)
        store.lock(owner_pid=NO_SUCH_PID)
        assert store.reap() == 1
    ```
    Use a number no OS can allocate, or pin the probe that asks about it.

    ## Options
    None.

    ## Known problems
    A literal handed to a patched call (`os.waitpid` replaced by a mock) is
    safe, since nothing reaches the OS, and is still flagged.
    """

    code = "HRM205"
    message = "pid {pid} can name a live process on a long-running host; use a number no OS allocates (99999999999) or pin the liveness probe"

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if node.args and self.ctx.call_name(node) in PID_CALLS:
            pid = allocatable_pid(node.args[0])
            if pid is not None:
                yield self.report(node.args[0], pid=pid)
        for keyword in node.keywords:
            if keyword.arg == "pid":
                pid = allocatable_pid(keyword.value)
                if pid is not None:
                    yield self.report(keyword.value, pid=pid)

    def _assignment(self, node: ast.AST) -> Iterator[Violation]:
        for target, value in assigned_pairs(node):
            key = dotted_name(target)
            pid = allocatable_pid(value)
            if key is not None and pid is not None and is_pid_name(key.rpartition(".")[2]):
                yield self.report(value, pid=pid)

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        yield from self._assignment(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Iterator[Violation]:
        yield from self._assignment(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> Iterator[Violation]:
        yield from self._assignment(node)


ASYNCIO_PRIMITIVES = frozenset(
    {f"asyncio.{name}" for name in ("Lock", "Event", "Condition", "Semaphore", "BoundedSemaphore")}
    | {f"asyncio.locks.{name}" for name in ("Lock", "Event", "Condition", "Semaphore", "BoundedSemaphore")}
    | {f"asyncio.{name}" for name in ("Queue", "LifoQueue", "PriorityQueue")}
    | {f"asyncio.queues.{name}" for name in ("Queue", "LifoQueue", "PriorityQueue")}
    | {"asyncio.Future", "asyncio.futures.Future"}
)


class SharedAsyncioPrimitiveRule(Rule):
    """
    Flags an asyncio lock, event, condition, semaphore, queue or future created at module or class scope of a test file.

    ## Why is this bad?
    An asyncio primitive belongs to the event loop that first uses it. Test
    runners (pytest-asyncio, anyio, `IsolatedAsyncioTestCase`) give each test
    a fresh loop, so a primitive created once at import time is shared by
    tests running on different loops. It works while nobody has to wait on
    it, then a test that hits contention gets `RuntimeError: ... is bound to
    a different event loop`, or a waiter that never wakes. Whether that
    happens depends on test order and timing. It also carries state (a set
    event, queued items) from one test into the next.

    Primitives created inside a function, a lambda or a `default_factory`
    are made per call and are not flagged.

    ## Example
    ```python
    READY = asyncio.Event()

    class TestWorker:
        lock = asyncio.Lock()
    ```

    ## Use instead
    ```python
    @pytest.fixture
    def ready():
        return asyncio.Event()

    class TestWorker:
        async def test_locking(self):
            lock = asyncio.Lock()
            ...
    ```

    ## Options
    None.
    """

    code = "HRM206"
    message = "{name}() at import time is shared by every test and binds to one event loop; create it per test (inside the test or a fixture)"
    calls = ASYNCIO_PRIMITIVES

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not self.ctx.at_module_level:
            return
        name = self.ctx.call_name(node)
        if name not in ASYNCIO_PRIMITIVES:
            return
        if any(isinstance(parent, ast.Lambda) for parent in self.ctx.parents):
            return
        yield self.report(node, name=name)
