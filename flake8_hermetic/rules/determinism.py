"""HRM2xx: verdicts that change from run to run."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.nodes import LOOP_TYPES, NEW_FRAMES, FunctionNode, own_nodes
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation
from flake8_hermetic.facts.mocks import patch_target


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
#: the modules :data:`CLOCKS` come from
CLOCK_MODULES = ("time", "timeit")


class ClockFlow:
    """What the names of one function hold: a clock reading or a duration.

    ``start = time.monotonic()`` makes ``start`` a READING; arithmetic on a
    reading (``time.monotonic() - start``, ``start + 5``) is ELAPSED, and so
    is every name assigned from it, transitively, in source order. Values
    flow through numeric calls (``abs``, ``round``, ``max``...), not into
    other calls' results.
    """

    __slots__ = ("_clockless", "_levels", "_resolve")

    def __init__(
        self, function: FunctionNode | None, resolve: Callable[[ast.AST], str | None], clockless: bool = False,
    ) -> None:
        """``clockless``: the caller knows ``function`` reads no clock (its
        source names none), so nothing in it is a reading or a duration."""
        self._resolve = resolve
        self._levels: dict[str, int] = {}
        self._clockless = clockless
        if clockless or function is None:
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
        if self._clockless:
            return 0
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
            clockless = function is not None and not may_read_clock(self.ctx, function)
            flow = self._flows[id(function)] = ClockFlow(function, self.ctx.resolve, clockless)
        return flow


def may_read_clock(ctx: Context, function: FunctionNode) -> bool:
    """Whether ``function`` can call one of :data:`CLOCKS`: its source says
    ``time`` (the module, ``timeit``, an import inside it), or a name an
    import bound to one of those modules or their functions. A cheap test
    that spares most functions the walk of :class:`ClockFlow`."""
    # the whole lines the def spans: a little more than its text, never less
    text = "".join(ctx.lines[function.lineno - 1:function.end_lineno or function.lineno])
    if "time" in text:
        return True
    return any(alias in text for alias in ctx.resolver.names_bound_to(CLOCK_MODULES))


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


#: last parts of call names that start something running beside the test:
#: a thread, a process, a task, a server, an executor job
STARTER_SUFFIXES = ("Thread", "Timer", "Process", "Popen", "Pool", "Executor", "Server")
STARTER_NAMES = frozenset(
    {
        "start", "start_new_thread", "start_new", "start_threads", "start_soon", "fork", "forkpty",
        "posix_spawn", "posix_spawnp", "submit", "apply_async", "map_async", "run_in_executor",
        "to_thread", "create_task", "ensure_future", "serve_forever", "create_subprocess_exec",
        "create_subprocess_shell", "create_server", "start_server", "start_unix_server",
    }
)
#: calls that read the wall clock when given no time of their own (the number of arguments that is "none")
CLOCK_DEFAULT_CALLS = {
    "time.localtime": 0, "time.gmtime": 0, "time.ctime": 0, "time.asctime": 0, "time.strftime": 1,
    "datetime.datetime.now": 1, "datetime.datetime.utcnow": 0, "datetime.datetime.today": 0,
    "datetime.date.today": 0, "os.utime": 1,
}
#: attributes that are a file's timestamps (stat results, py.path), and ``touch()``, which sets one
TIMESTAMP_ATTRIBUTES = frozenset(
    {"st_mtime", "st_atime", "st_ctime", "st_mtime_ns", "st_atime_ns", "st_ctime_ns", "st_birthtime"}
    | {"mtime", "atime", "ctime", "getmtime", "getatime", "getctime", "touch"}
)
Position = tuple[int, int]


class ClockSteps:
    """Where one function reads a clock or a file timestamp, and where it
    starts something that runs beside it (a thread, a process, a task, a
    server): the data for telling a sleep that lets the clock move on from
    a sleep that waits for another party.
    """

    __slots__ = ("reads", "starts")

    def __init__(self, function: FunctionNode | None, ctx: Context) -> None:
        self.reads: list[Position] = []
        self.starts: list[Position] = []
        for node in own_nodes(function) if function is not None else ():
            if isinstance(node, ast.Attribute) and node.attr in TIMESTAMP_ATTRIBUTES:
                self.reads.append((node.lineno, node.col_offset))
            elif isinstance(node, ast.Call):
                name = ctx.call_name(node)
                if name in CLOCKS or (
                    name in CLOCK_DEFAULT_CALLS and len(node.args) <= CLOCK_DEFAULT_CALLS[name] and not node.keywords
                ):
                    self.reads.append((node.lineno, node.col_offset))
                last = name.rpartition(".")[2] if name else getattr(node.func, "attr", "")
                if last in STARTER_NAMES or last.endswith(STARTER_SUFFIXES) or last.startswith("spawn"):
                    self.starts.append((node.lineno, node.col_offset))

    def lets_clock_advance(self, sleep: ast.Call) -> bool:
        """A timestamp is read after ``sleep`` and nothing was started before it
        that the sleep could be waiting for."""
        begin = (sleep.lineno, sleep.col_offset)
        end = (sleep.end_lineno or sleep.lineno, sleep.end_col_offset or sleep.col_offset)
        return any(read > end for read in self.reads) and not any(start < begin for start in self.starts)


def clock_steps(cache: dict[int, ClockSteps], ctx: Context) -> ClockSteps:
    """The :class:`ClockSteps` of the function being visited, built once per function."""
    function = ctx.function
    steps = cache.get(id(function))
    if steps is None:
        steps = cache[id(function)] = ClockSteps(function, ctx)
    return steps


#: a binding of a function or class name: (id of the outermost function holding it, id of the
#: frame defining it, name); both ids are 0 for a module-level name
Binding = tuple[int, int, str]


class HandedCallables:
    """Which functions, methods and classes of a file are handed to other code
    (passed as an argument: ``Thread(target=f)``, ``pool.map(f, ...)``,
    ``run_in_executor(None, f)``, ``settrace(f)``, ``HTTPServer(addr, Handler)``)
    and which the file calls itself (``f()``, ``self.f()``), filled call by
    call during the walk.
    """

    __slots__ = ("ctx", "handed", "called", "handed_attributes", "called_methods")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.handed: set[tuple[int, str]] = set()
        self.called: set[tuple[int, str]] = set()
        self.handed_attributes: set[tuple[str, str]] = set()
        self.called_methods: set[str] = set()

    def record(self, call: ast.Call) -> None:
        func = call.func
        if type(func) is ast.Name:
            function = self.ctx.function
            self.called.add((id(function) if function is not None else 0, func.id))
            self.called.add((-1, func.id))
        elif type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in ("self", "cls"):
            self.called_methods.add(func.attr)
        values: list[ast.expr] = [*call.args, *(keyword.value for keyword in call.keywords)]
        top = 0
        while values:
            value = values.pop()
            kind = type(value)
            if kind is ast.Name:
                if not top:
                    top = next((id(s.node) for s in self.ctx.scopes if s.kind == "function"), -1)
                self.handed.add((top, value.id))  # type: ignore[attr-defined]
                self.handed.add((-1, value.id))  # type: ignore[attr-defined]
            elif kind is ast.Attribute and type(value.value) is ast.Name:  # type: ignore[attr-defined]
                self.handed_attributes.add((value.value.id, value.attr))  # type: ignore[attr-defined]
            elif kind in (ast.Tuple, ast.List, ast.Starred):
                values.extend(value.elts if kind is not ast.Starred else [value.value])  # type: ignore[attr-defined]

    def method_handed_only(self, class_name: str, method: str) -> bool:
        """``self.method``, ``cls.method`` or ``Class.method`` is handed to other
        code and ``self.method()`` / ``cls.method()`` is never called."""
        return method not in self.called_methods and any(
            (receiver, method) in self.handed_attributes for receiver in ("self", "cls", class_name)
        )

    def handed_only(self, binding: Binding) -> bool:
        """Handed to other code and never called directly where it is defined
        (for a module-level name: anywhere in the file)."""
        top, frame, name = binding
        if not top:
            return (-1, name) in self.handed and (-1, name) not in self.called
        return (top, name) in self.handed and (frame, name) not in self.called


def is_thread_class(ctx: Context, node: ast.ClassDef) -> bool:
    """A subclass of a thread or process class: its ``run`` is the body of another thread."""
    return any((ctx.resolve(base) or "").rpartition(".")[2].endswith(("Thread", "Process")) for base in node.bases)


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
      and the `run` of a `Thread` or `Process` subclass.

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
    after narrowing, 13 of a sample of 25 of its 87 findings on ten real suites were guessed
    waits: the others were sleeps followed by a check that nothing happened, the run time of a
    stress test, or slow fakes the code under test calls, which look the same as a guessed wait
    (see docs/precision.md). In an application's own suite, where such code is rare,
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
    # no ``calls``: every call is read, to see which helpers are handed to a thread or pool

    __slots__ = ("_deadlines", "_flows", "_handed", "_pending", "_steps")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._deadlines = Deadlines(ctx)
        self._flows = ClockFlows(ctx)
        self._handed = HandedCallables(ctx)
        self._steps: dict[int, ClockSteps] = {}
        #: sleeps in a helper, judged after the walk: (violation, bindings, method name)
        self._pending: list[tuple[Violation, list[Binding], str | None]] = []

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        self._handed.record(node)
        if self.ctx.call_name(node) != "time.sleep":
            return
        duration = duration_argument(node, ("secs", "seconds"))
        if duration is None or is_literal_zero(duration) or self.ctx.in_loop():
            return
        if self._deadlines.bounded() or self._flows.current().is_elapsed(duration) or self._is_measured(node):
            return
        if clock_steps(self._steps, self.ctx).lets_clock_advance(node):
            return
        helper = self._helper_frame()
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
      such tasks produce among themselves does not depend on the host;
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
    after narrowing, 9 of its 17 findings on ten real suites were real races: the rest were
    cancellation and timer-order tests whose outcome does not depend on the sleep, which only
    the assertions tell apart
    (see docs/precision.md). In an application's own suite, where such code is rare,
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

    __slots__ = ("_deadlines", "_steps")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._deadlines = Deadlines(ctx)
        self._steps: dict[int, ClockSteps] = {}

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
        if clock_steps(self._steps, self.ctx).lets_clock_advance(call):
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
ALMOST_ASSERTS = frozenset({"assertAlmostEqual", "assertNotAlmostEqual"})
#: clocks of CPU work done, not of time passing: a faster host makes them smaller
CPU_CLOCKS = frozenset(f"time.{clock}{suffix}" for clock in ("process_time", "thread_time") for suffix in ("", "_ns"))
WALL_CLOCKS = CLOCKS - CPU_CLOCKS
#: calls whose result never falls when their argument rises
MONOTONE_CALLS = frozenset({"round", "float", "int", "max", "min", "sum", "math.floor", "math.ceil", "math.trunc"})
#: how far a duration is followed through names and arithmetic before giving up (and reporting)
DURATION_DEPTH = 32


class Durations:
    """Which values of one function are wall-clock durations that a slower
    host can only make longer: ``end - start`` of two readings, scaled or
    offset by clock-free values, and names only ever assigned such values.
    """

    __slots__ = ("_assigned", "_flow", "_resolve")

    def __init__(self, function: FunctionNode | None, flow: ClockFlow, resolve: Callable[[ast.AST], str | None]) -> None:
        self._flow = flow
        self._resolve = resolve
        self._assigned: dict[str, list[tuple[ast.operator | None, ast.expr]]] = {}
        for node in own_nodes(function) if function is not None else ():
            if isinstance(node, ast.AugAssign):
                key = dotted_name(node.target)
                if key is not None:
                    self._assigned.setdefault(key, []).append((node.op, node.value))
                continue
            for target, value in assigned_pairs(node):
                key = dotted_name(target)
                if key is not None:
                    self._assigned.setdefault(key, []).append((None, value))

    def _values(self, node: ast.AST) -> list[tuple[ast.operator | None, ast.expr]]:
        key = dotted_name(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        return self._assigned.get(key, []) if key is not None else []

    def is_reading(self, node: ast.AST, depth: int = 0) -> bool:
        """A wall-clock call, or a name only ever assigned wall-clock readings."""
        if depth > DURATION_DEPTH:
            return False
        if isinstance(node, ast.Call):
            return self._resolve(node.func) in WALL_CLOCKS
        # a list of readings and its items: times = [monotonic() for _ in ...]; times[0]
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.is_reading(node.elt, depth + 1)
        if isinstance(node, ast.Subscript):
            return self.is_reading(node.value, depth + 1)
        values = self._values(node)
        return bool(values) and all(op is None and self.is_reading(value, depth + 1) for op, value in values)

    def grows(self, node: ast.AST, depth: int = 0) -> bool:
        if depth > DURATION_DEPTH:
            return False
        depth += 1
        level = self._flow.level
        if isinstance(node, ast.BinOp):
            left, right, op = node.left, node.right, node.op
            if isinstance(op, ast.Sub):
                if not level(right):
                    return self.grows(left, depth)
                return self.is_reading(left, depth) and self.is_reading(right, depth)
            if isinstance(op, (ast.Add, ast.Mult)) and not level(left):
                left, right = right, left
            if isinstance(op, (ast.Add, ast.Mult, ast.Div, ast.FloorDiv)) and not level(right):
                negative = isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub)
                return not (negative and not isinstance(op, ast.Add)) and self.grows(left, depth)
            return False
        if isinstance(node, ast.Call):
            if self._resolve(node.func) not in MONOTONE_CALLS or node.keywords:
                return False
            timed = [argument for argument in node.args if level(argument)]
            return bool(timed) and all(self.grows(argument, depth) for argument in timed)
        timed_values = [(op, value) for op, value in self._values(node) if level(value)]
        return bool(timed_values) and all(
            (op is None or isinstance(op, ast.Add)) and self.grows(value, depth) for op, value in timed_values
        )


class ElapsedTimeAssertionRule(Rule):
    """
    Flags an assertion on elapsed wall-clock time: a comparison of a duration measured with the `time` module.

    ## Why is this bad?
    How long a piece of code takes depends on the machine, its load, the
    other tests running beside it and the garbage collector's mood. A bound
    that holds on the author's laptop (`elapsed < 0.5`) fails on a busy CI
    runner, and a two-sided window (`0.8 <= elapsed <= 2.0`) fails the same
    way. Either way the verdict depends on the host, not on the code.

    The rule follows durations through the function that measures them:
    a name assigned from arithmetic on `time.time()`, `monotonic()`,
    `perf_counter()`, `process_time()`, `thread_time()` (and their `_ns`
    forms, and `timeit.default_timer()`) is a duration, and so is any name
    computed from it. It flags `assert` comparisons (`<`, `<=`, `>`, `>=`,
    `== pytest.approx(...)`) and `self.assertLess/LessEqual/Greater/GreaterEqual/
    AlmostEqual`, `self.assertTrue(a < b)` on such a value. Comparing two raw
    readings (`assert t2 >= t1`, a check that a clock does not go backwards)
    is not an elapsed-time assertion and is not flagged.

    A lower bound on a wall-clock duration by a clock-free value
    (`assert elapsed >= 0.1` after waiting 0.2 seconds, `assertGreater(delta,
    timeout - 1)`, `assertFalse(dt < 0.1)`) is left alone: a slow or loaded
    host only makes the measured time longer, so it cannot turn that
    assertion red. It counts as a lower bound only when the duration is a
    difference of two wall-clock readings (`end - start`), possibly scaled,
    offset or rounded, or a name only ever assigned such values; a
    remaining time (`deadline - monotonic()`), a comparison with another
    clock value, and any bound on `process_time()`/`thread_time()` (CPU
    work, which a faster host does less of) are still flagged.

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
    A lower bound equal to the length of the wait (`elapsed >= 0.1` after
    `sleep(0.1)`) can still fail where the clock ticks coarsely (15.6 ms
    on older Windows), and is not flagged.
    """

    code = "HRM203"
    message = "assertion on elapsed wall-clock time depends on the host's speed and load; assert the behaviour and measure speed in a benchmark"
    methods = COMPARING_ASSERTS | TRUTH_ASSERTS

    __slots__ = ("_durations", "_flows")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._flows = ClockFlows(ctx)
        self._durations: dict[int, Durations] = {}

    def _flow(self) -> ClockFlow:
        return self._flows.current()

    def _growing(self, node: ast.AST) -> bool:
        function = self.ctx.function
        durations = self._durations.get(id(function))
        if durations is None:
            durations = self._durations[id(function)] = Durations(function, self._flow(), self.ctx.resolve)
        return durations.grows(node)

    def _bounds_elapsed(self, left: ast.AST, right: ast.AST, greater: bool) -> bool:
        """Whether asserting ``left >= right`` (``greater``) or ``left <= right``
        bounds a duration in a way a host can break: a lower bound on a
        wall-clock duration by a clock-free value is the one shape it cannot."""
        flow = self._flow()
        if not (flow.is_elapsed(left) or flow.is_elapsed(right)):
            return False
        larger, smaller = (left, right) if greater else (right, left)
        return bool(flow.level(smaller)) or not self._growing(larger)

    def _compares_elapsed(self, expr: ast.AST, negated: bool = False) -> bool:
        flow = self._flow()
        stack: list[tuple[ast.AST, bool]] = [(expr, negated)]
        while stack:
            node, flipped = stack.pop()
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                stack.append((node.operand, not flipped))
                continue
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                for index, op in enumerate(node.ops):
                    left, right = operands[index], operands[index + 1]
                    if isinstance(op, ORDERING):
                        if self._bounds_elapsed(left, right, isinstance(op, (ast.Gt, ast.GtE)) != flipped):
                            return True
                    elif isinstance(op, (ast.Eq, ast.NotEq)):
                        if (self._is_approx(right) and flow.is_elapsed(left)) or (
                            self._is_approx(left) and flow.is_elapsed(right)
                        ):
                            return True
            stack.extend((child, flipped) for child in ast.iter_child_nodes(node))
        return False

    def _is_approx(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and self.ctx.call_name(node) == "pytest.approx"

    def visit_Assert(self, node: ast.Assert) -> Iterator[Violation]:
        if self._compares_elapsed(node.test):
            yield self.report(node)

    def _compared_pair(self, node: ast.Call) -> tuple[ast.expr | None, ast.expr | None]:
        positional = [a for a in node.args[:2] if not isinstance(a, ast.Starred)]
        if len(positional) < len(node.args[:2]):
            return None, None
        by_keyword = {k.arg: k.value for k in node.keywords if k.arg in ("first", "second")}
        padded: list[ast.expr | None] = [*positional, None, None]
        return padded[0] or by_keyword.get("first"), padded[1] or by_keyword.get("second")

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        func = node.func
        if not isinstance(func, ast.Attribute):
            return
        if func.attr in COMPARING_ASSERTS:
            first, second = self._compared_pair(node)
            if first is None or second is None or func.attr in ALMOST_ASSERTS:
                flow = self._flow()
                operands = [a for a in node.args[:2] if not isinstance(a, ast.Starred)]
                operands += [k.value for k in node.keywords if k.arg in ("first", "second")]
                if any(flow.is_elapsed(operand) for operand in operands):
                    yield self.report(node)
            elif self._bounds_elapsed(first, second, func.attr.startswith("assertGreater")):
                yield self.report(node)
        elif func.attr in TRUTH_ASSERTS:
            subject = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "expr"), None)
            if subject is not None and self._compares_elapsed(subject, negated=func.attr == "assertFalse"):
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


#: calls that satisfy a later await of the same receiver: ev.set() -> ev.wait(), q.put() -> q.get()
SUPPLY_METHODS = frozenset({"set", "clear", "put", "put_nowait", "set_result", "set_exception"})
PUTS = frozenset({"put", "put_nowait"})
MOCK_FACTORIES = frozenset({"Mock", "MagicMock", "AsyncMock", "NonCallableMock", "NonCallableMagicMock", "create_autospec"})


class SuppliedSignals:
    """What one function did to its signals before awaiting them.

    Records, in source order, each ``ev.set()``/``ev.clear()``,
    ``q.put(...)``/``q.put_nowait(...)``, ``await q.get()`` and
    ``fut.set_result(...)`` the function runs itself (a statement or an
    ``await``, not a call scheduled for later), whether it sits in a loop,
    and the names it binds to mocks (``AsyncMock()``, ``with patch(...) as m``).
    """

    __slots__ = ("_events", "mocks")

    def __init__(self, function: FunctionNode, ctx: Context) -> None:
        self._events: dict[str, list[tuple[tuple[int, int], str, bool]]] = {}
        self.mocks: set[str] = set()
        stack: list[tuple[ast.AST, bool]] = [(stmt, False) for stmt in reversed(function.body)]
        while stack:
            node, repeated = stack.pop()
            if isinstance(node, NEW_FRAMES):
                continue
            if isinstance(node, (ast.Expr, ast.Await)) and isinstance(node.value, ast.Call):
                self._record(node.value, awaited=isinstance(node, ast.Await), repeated=repeated)
            for target, value in assigned_pairs(node):
                key = dotted_name(target)
                if key is not None and isinstance(value, ast.Call) and last_name(ctx, value) in MOCK_FACTORIES:
                    self.mocks.add(key)
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    opened = item.context_expr
                    key = dotted_name(item.optional_vars) if item.optional_vars is not None else None
                    if key is not None and isinstance(opened, ast.Call) and "patch" in called_as(ctx, opened):
                        self.mocks.add(key)
            looping = repeated or isinstance(node, LOOP_TYPES)
            stack.extend((child, looping) for child in reversed(list(ast.iter_child_nodes(node))))

    def _record(self, call: ast.Call, awaited: bool, repeated: bool) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute):
            return
        method = func.attr
        if method in SUPPLY_METHODS or (awaited and method == "get" and not call.args and not call.keywords):
            receiver = dotted_name(func.value)
            if receiver is not None:
                self._events.setdefault(receiver, []).append(((call.lineno, call.col_offset), method, repeated))

    def is_mock(self, receiver: str) -> bool:
        return receiver in self.mocks or receiver.partition(".")[0] in self.mocks

    def supplied(self, receiver: str, method: str | None, position: tuple[int, int], repeated: bool) -> bool:
        """Whether the function already supplied what ``await receiver.method()``
        (``method`` None: ``await receiver``) waits for, at ``position``."""
        before = [(kind, looped) for at, kind, looped in self._events.get(receiver, ()) if at < position]
        if method is None:
            return any(kind in ("set_result", "set_exception") for kind, _ in before)
        if method == "wait":
            toggles = [kind for kind, _ in before if kind in ("set", "clear")]
            return bool(toggles) and toggles[-1] == "set"
        if method == "get":
            puts = [looped for kind, looped in before if kind in PUTS]
            gets = [looped for kind, looped in before if kind == "get"]
            if any(puts):
                return True
            return not repeated and not any(gets) and len(puts) > len(gets)
        return False


def called_as(ctx: Context, call: ast.Call) -> str:
    return ctx.call_name(call) or dotted_name(call.func) or ""


def last_name(ctx: Context, call: ast.Call) -> str:
    return called_as(ctx, call).rpartition(".")[2]


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

    __slots__ = ("_deadlines", "_futures", "_supplied", "_waited")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._deadlines = Deadlines(ctx)
        self._futures: dict[int, set[str]] = {}
        self._supplied: dict[int, SuppliedSignals] = {}
        self._waited: dict[int, WaitedCoroutines] = {}

    def _cannot_hang(self, node: ast.Await) -> bool:
        """The function already sent the signal (``ev.set()``, ``q.put(x)``,
        ``fut.set_result(x)`` before the await), or the receiver is a mock."""
        function = self.ctx.function
        if function is None:
            return False
        signals = self._supplied.get(id(function))
        if signals is None:
            signals = self._supplied[id(function)] = SuppliedSignals(function, self.ctx)
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
        if self._deadlines.bounded() or self._unwaited_coroutine() or self.ctx.expected_to_raise(node):
            return
        if self._cannot_hang(node):
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


#: the last name of a call that can replace a function: patch, patch.object, monkeypatch.setattr
PATCHER_NAMES = frozenset({"patch", "object", "setattr"})


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

    A literal handed to a call that is replaced at that point reaches no
    OS and is left alone: inside `with mock.patch("os.kill"):` (or
    `patch.object(os, "kill")`), after `monkeypatch.setattr(os, "kill", ...)`
    in the same function or one around it, and in a function decorated with
    `@mock.patch("os.kill")` or with a decorator of the file seen patching it.

    ## Known problems
    A patch made elsewhere (a fixture, `setUp`) is not seen, and the
    literal is still flagged.
    """

    code = "HRM205"
    message = "pid {pid} can name a live process on a long-running host; use a number no OS allocates (99999999999) or pin the liveness probe"
    # the pid calls, and the patch calls that may replace one (see patch_target)
    calls = PID_CALLS | {"patch", "*.patch"}  # mock.patch.object and monkeypatch.setattr are methods
    methods = PATCHER_NAMES

    __slots__ = ("_patcher_ids", "_patcher_names")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        # per pid call: the functions seen patching it, by node and by name (a decorator names them)
        self._patcher_ids: dict[str, set[int]] = {}
        self._patcher_names: dict[str, set[str]] = {}

    def _patch_target(self, call: ast.Call) -> str | None:
        """The pid call that ``patch("os.kill")``, ``patch.object(os, "kill")``
        or ``monkeypatch.setattr(os, "kill", ...)`` replaces, if any."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr not in PATCHER_NAMES:
            return None  # a method call cannot be an alias of patch (a bare name can: p = mock.patch)
        target = patch_target(self.ctx, call)
        if target is None:
            return None
        return next((pid_call for pid_call in PID_CALLS if target == pid_call or target.endswith("." + pid_call)), None)

    def _note_patch(self, call: ast.Call) -> None:
        target = self._patch_target(call)
        if target is None:
            return
        # a `with patch(...)` replaces the call in its body only (see _patched)
        in_with = isinstance(self.ctx.parent, ast.withitem)
        for scope in self.ctx.scopes:
            if scope.kind == "function":
                if not in_with:
                    self._patcher_ids.setdefault(target, set()).add(id(scope.node))
                self._patcher_names.setdefault(target, set()).add(scope.name)

    def _patched(self, target: str) -> bool:
        """The call is replaced around this point: patched earlier in an
        enclosing function, or by a decorator of one (``@mock.patch("os.kill")``
        or a decorator seen patching it)."""
        for ancestor, child in self.ctx.ancestors_in_function():
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and child in ancestor.body:
                for item in ancestor.items:
                    opened = item.context_expr
                    if isinstance(opened, ast.Call) and self._patch_target(opened) == target:
                        return True
        ids = self._patcher_ids.get(target, set())
        names = self._patcher_names.get(target, set())
        for scope in self.ctx.scopes:
            if scope.kind != "function":
                continue
            if id(scope.node) in ids:
                return True
            for decorator in scope.node.decorator_list:  # type: ignore[attr-defined]
                if isinstance(decorator, ast.Call) and self._patch_target(decorator) == target:
                    return True
                base = decorator.func if isinstance(decorator, ast.Call) else decorator
                if (dotted_name(base) or "").rpartition(".")[2] in names:
                    return True
        return False

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        self._note_patch(node)
        name = self.ctx.call_name(node)
        if node.args and name in PID_CALLS:
            pid = allocatable_pid(node.args[0])
            if pid is not None and not self._patched(name):  # type: ignore[arg-type]
                yield self.report(node.args[0], pid=pid)

    def visit_keyword(self, node: ast.keyword) -> Iterator[Violation]:
        # ``pid=`` of any call (``Process(pid=1234)``, a helper's ``wait_for(pid=...)``)
        if node.arg == "pid" and isinstance(self.ctx.parent, ast.Call):
            pid = allocatable_pid(node.value)
            if pid is not None:
                yield self.report(node.value, pid=pid)

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
