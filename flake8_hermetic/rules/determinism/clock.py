"""The clock flow of a function: which of its values are clock readings or
durations (:class:`ClockFlow`, :class:`Durations`), and where it reads a clock
or starts something beside it (:class:`ClockSteps`)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from flake8_hermetic.context import Context
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import FunctionNode, own_nodes
from flake8_hermetic.rules.determinism.trees import assigned_pairs

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
#: calls that return the running event loop, whose ``time()`` is a monotonic clock
LOOP_GETTERS = frozenset({"get_running_loop", "get_event_loop", "new_event_loop"})


def is_loop_time(call: ast.Call) -> bool:
    """``loop.time()``: the event loop's monotonic clock, on a receiver named
    like a loop (``loop``, ``self.loop``, ``event_loop``) or a loop getter's
    result (``asyncio.get_running_loop().time()``)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "time" or call.args or call.keywords:
        return False
    receiver = func.value
    if isinstance(receiver, ast.Call):
        getter = receiver.func
        name = getter.attr if isinstance(getter, ast.Attribute) else getattr(getter, "id", "")
        return name in LOOP_GETTERS
    key = dotted_name(receiver)
    return key is not None and "loop" in key.rpartition(".")[2].lower()


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

    __slots__ = ("_clockless", "_levels", "_resolve", "_helpers")

    def __init__(
        self,
        function: FunctionNode | None,
        resolve: Callable[[ast.AST], str | None],
        clockless: bool = False,
        helpers: frozenset[str] = frozenset(),
    ) -> None:
        """``clockless``: the caller knows ``function`` reads no clock (its
        source names none), so nothing in it is a reading or a duration.
        ``helpers``: the file's functions that return a clock reading."""
        self._resolve = resolve
        self._helpers = helpers
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
            if _appends(node):  # times.append(monotonic()): the list holds what it is given
                key = dotted_name(node.func.value)  # type: ignore[attr-defined]
                level = self.level(node.args[0])  # type: ignore[attr-defined]
                if key is not None and level > self._levels.get(key, 0):
                    self._levels[key] = level
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
            if isinstance(node, ast.Call) and (
                self._resolve(node.func) in CLOCKS or is_loop_time(node) or _calls_helper(node, self._helpers)
            ):
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


def clock_flow(function: FunctionNode | None, ctx: Context) -> ClockFlow:
    """The :class:`ClockFlow` of ``function``, for :meth:`Context.per_function`:
    a function whose source names no clock is not walked (see :func:`may_read_clock`)."""
    clockless = function is not None and not may_read_clock(ctx, function)
    helpers = frozenset() if clockless else ctx.per_function(ctx.tree, clock_helpers, names=False)
    if helpers:
        return ClockFlow(function, ctx.resolve, clockless, helpers=helpers)
    return ClockFlow(function, ctx.resolve, clockless)


def current_flow(ctx: Context) -> ClockFlow:
    """The :class:`ClockFlow` of the function being visited, built once per
    function and shared by every rule that asks."""
    return ctx.per_function(ctx.function, clock_flow)  # type: ignore[arg-type]


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
#: words of a name that holds a file system path
PATH_WORDS = frozenset({"path", "paths", "p", "file", "files", "f", "fn", "filename", "dir", "directory", "folder", "tmpdir", "tmp", "tmp_path", "marker", "stamp"})
#: calls that make a path
PATH_MAKERS = frozenset({"Path", "PurePath", "PosixPath", "WindowsPath", "joinpath", "with_name", "with_suffix", "local", "join"})


#: calls of the file's own or a framework's clock (``trio.current_time()``), and a
#: module-level ``touch(path)`` helper, which sets a file's time like ``Path.touch()``
CLOCK_FUNCTION_NAMES = frozenset({"current_time", "touch"})


def _sets_or_reads_time(call: ast.Call) -> bool:
    """``current_time()``/``_core.current_time()`` (a framework's clock) or a
    bare ``touch(path)`` function (a method ``store.touch(key)`` is no file)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in CLOCK_FUNCTION_NAMES and (func.id != "touch" or bool(call.args))
    return isinstance(func, ast.Attribute) and func.attr == "current_time"


def is_path_like(node: ast.AST) -> bool:
    """Whether ``node`` is a file system path, for ``X.touch()``: a path
    built with ``/`` or ``Path(...)``/``joinpath(...)``, or a name whose
    last word says path, file or dir (``tmp_path``, ``log_file``, ``self.dir``);
    ``store.touch(key)`` touches no file."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in PATH_MAKERS
    key = dotted_name(node)
    if key is None:
        return False
    last = key.rpartition(".")[2].lower()
    return last in PATH_WORDS or last.split("_")[-1] in PATH_WORDS or last.startswith(("tmp", "path", "file"))


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
        for node in ctx.function_nodes(function) if function is not None else ():
            if isinstance(node, ast.Attribute) and node.attr in TIMESTAMP_ATTRIBUTES:
                if node.attr != "touch" or is_path_like(node.value):
                    self.reads.append((node.lineno, node.col_offset))
            elif isinstance(node, ast.Call):
                name = ctx.call_name(node)
                if name in CLOCKS or is_loop_time(node) or _sets_or_reads_time(node) or (
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


def clock_steps(ctx: Context) -> ClockSteps:
    """The :class:`ClockSteps` of the function being visited, built once per
    function and shared by every rule that asks."""
    return ctx.per_function(ctx.function, ClockSteps)  # type: ignore[arg-type]


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

    __slots__ = ("_assigned", "_flow", "_resolve", "_helpers")

    def __init__(
        self,
        function: FunctionNode | None,
        flow: ClockFlow,
        resolve: Callable[[ast.AST], str | None],
        helpers: frozenset[str] = frozenset(),
    ) -> None:
        self._flow = flow
        self._resolve = resolve
        self._helpers = helpers
        self._assigned: dict[str, list[tuple[ast.operator | None, ast.expr]]] = {}
        for node in own_nodes(function) if function is not None else ():
            if _appends(node):
                # times.append(monotonic()): an element of the list, like an assigned reading
                key = dotted_name(node.func.value)  # type: ignore[attr-defined]
                if key is not None:
                    self._assigned.setdefault(key, []).append((None, node.args[0]))  # type: ignore[attr-defined]
                continue
            if isinstance(node, ast.AugAssign):
                key = dotted_name(node.target)
                if key is not None:
                    self._assigned.setdefault(key, []).append((node.op, node.value))
                continue
            for target, value in assigned_pairs(node):
                key = dotted_name(target)
                if key is not None:
                    self._assigned.setdefault(key, []).append((None, value))

    def assigned(self, node: ast.AST) -> list[tuple[ast.operator | None, ast.expr]]:
        """What the function assigns to the name ``node`` reads: ``(None, value)`` for
        ``=``, ``(op, value)`` for an augmented assignment, an appended item as ``=``."""
        key = dotted_name(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        return self._assigned.get(key, []) if key is not None else []

    def is_reading(self, node: ast.AST, depth: int = 0) -> bool:
        """A wall-clock call, or a name only ever assigned wall-clock readings."""
        if depth > DURATION_DEPTH:
            return False
        if isinstance(node, ast.Call):
            return self._resolve(node.func) in WALL_CLOCKS or is_loop_time(node) or self._is_clock_helper(node)
        # a list of readings and its items: times = [monotonic() for _ in ...]; times[0]
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.is_reading(node.elt, depth + 1)
        if isinstance(node, ast.Subscript):
            return self.is_reading(node.value, depth + 1)
        if isinstance(node, (ast.List, ast.Tuple)):
            return all(self.is_reading(element, depth + 1) for element in node.elts)
        values = self.assigned(node)
        return bool(values) and all(op is None and self.is_reading(value, depth + 1) for op, value in values)

    def _is_clock_helper(self, call: ast.Call) -> bool:
        return _calls_helper(call, self._helpers)

    def _offset_reading(self, node: ast.AST, depth: int) -> bool:
        """A reading, possibly offset by a clock-free value: a deadline (``monotonic() + 5``)."""
        if depth > DURATION_DEPTH:
            return False
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            level = self._flow.level
            if not level(node.right):
                return self._offset_reading(node.left, depth + 1)
            if isinstance(node.op, ast.Add) and not level(node.left):
                return self._offset_reading(node.right, depth + 1)
            return False
        if self.is_reading(node, depth):
            return True
        values = self.assigned(node)
        return bool(values) and all(op is None and self._offset_reading(value, depth + 1) for op, value in values)

    def shrinks(self, node: ast.AST, depth: int = 0) -> bool:
        """A remaining time that a slower host can only make smaller: an
        earlier reading or deadline minus a later reading (``deadline -
        monotonic()``, ``future_deadline - (time.time() + k)``), or a name
        only ever assigned such values."""
        if depth > DURATION_DEPTH:
            return False
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            # the later reading is the one taken here, on the right; the left was stored before
            return (
                self._offset_reading(node.left, depth + 1)
                and self._offset_reading(node.right, depth + 1)
                and self._reads_now(node.right)
                and not self._reads_now(node.left)
            )
        values = self.assigned(node)
        return bool(values) and all(op is None and self.shrinks(value, depth + 1) for op, value in values)

    def _reads_now(self, node: ast.AST) -> bool:
        """Whether ``node`` calls a wall clock itself (not through a stored name)."""
        return any(
            isinstance(inner, ast.Call) and self.is_reading(inner, DURATION_DEPTH) for inner in ast.walk(node)
        )

    def grows(self, node: ast.AST, depth: int = 0) -> bool:
        """A wall-clock duration that a slower host can only make longer."""
        if depth > DURATION_DEPTH:
            return False
        depth += 1
        if isinstance(node, ast.BinOp):
            return self._arithmetic_grows(node, depth)
        if isinstance(node, ast.Call):
            return self._call_grows(node, depth)
        level = self._flow.level
        timed_values = [(op, value) for op, value in self.assigned(node) if level(value)]
        return bool(timed_values) and all(
            (op is None or isinstance(op, ast.Add)) and self.grows(value, depth) for op, value in timed_values
        )

    def _arithmetic_grows(self, node: ast.BinOp, depth: int) -> bool:
        """``end - start`` of two readings, or a growing duration offset by,
        scaled by or divided by a clock-free value that is not negative."""
        level = self._flow.level
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

    def _call_grows(self, node: ast.Call, depth: int) -> bool:
        """A monotone call (``round``, ``max``...) of growing durations only."""
        if self._resolve(node.func) not in MONOTONE_CALLS or node.keywords:
            return False
        level = self._flow.level
        timed = [argument for argument in node.args if level(argument)]
        return bool(timed) and all(self.grows(argument, depth) for argument in timed)


def _calls_helper(call: ast.Call, helpers: frozenset[str]) -> bool:
    """A call of one of the file's functions that only return wall-clock readings
    (``now()``, ``self.now()``)."""
    if not helpers:
        return False
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in helpers


def _appends(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "append"
        and len(node.args) == 1
    )


def clock_helpers(tree: ast.AST, ctx: Context) -> frozenset[str]:
    """Names of the file's functions and methods whose every ``return`` gives
    a wall-clock call (``def now(): return time.monotonic()``), for
    :meth:`Context.per_function` on the module: their calls are readings too.
    Only defs at module or class level whose source may read a clock are read."""
    helpers: set[str] = set()
    pending: list[ast.stmt] = list(getattr(tree, "body", ()))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.ClassDef):
            pending.extend(node.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and may_read_clock(ctx, node):
            returns = [n.value for n in own_nodes(node) if isinstance(n, ast.Return)]
            if returns and all(
                isinstance(value, ast.Call) and (ctx.resolve(value.func) in WALL_CLOCKS or is_loop_time(value))
                for value in returns
            ):
                helpers.add(node.name)
    return frozenset(helpers)


def function_durations(function: FunctionNode | None, ctx: Context) -> Durations:
    """The :class:`Durations` of ``function`` over its shared clock flow, for
    :meth:`Context.per_function`."""
    helpers = ctx.per_function(ctx.tree, clock_helpers, names=False)
    return Durations(function, ctx.per_function(function, clock_flow), ctx.resolve, helpers)  # type: ignore[arg-type]
