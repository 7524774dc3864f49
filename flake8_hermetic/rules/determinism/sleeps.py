"""What a sleep call waits: its duration argument, whether it is zero, whether it polls, and whether its job asserts after it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.raising import expects_raise
from flake8_hermetic.nodes import LOOP_TYPES, NEW_FRAMES, own_nodes, shape
from flake8_hermetic.rules.determinism.clock import STARTER_NAMES, STARTER_SUFFIXES


def duration_argument(call: ast.Call, keyword_names: tuple[str, ...]) -> ast.expr | None:
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    for keyword in call.keywords:
        if keyword.arg in keyword_names:
            return keyword.value
    return None


def is_literal_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 0


def polls(ctx: Context, node: ast.AST | None = None) -> bool:
    """Whether the sleep runs in a loop that checks a condition between its
    sleeps: a poll. A ``while`` loop tests one each time round, an ``async
    for`` awaits its iterator each round; a ``for`` loop polls when its body
    decides something (an ``if``, ``break``, ``return``, ``try``, or a
    ``yield`` that lets the caller decide: an
    ``assert`` each round fails at once, it does not wait), and a
    comprehension counts as one.
    ``for _ in range(n): step(); sleep(x)`` checks nothing: each sleep is a
    guess like any other."""
    for ancestor, on_path in ctx.ancestors_in_function(node):
        if not isinstance(ancestor, LOOP_TYPES):
            continue
        if isinstance(ancestor, (ast.For, ast.AsyncFor)):
            if on_path is ancestor.iter:
                continue
            if isinstance(ancestor, ast.AsyncFor):
                return True
            return any(isinstance(inner, CHECKS) for stmt in ancestor.body for inner in own_nodes_of(stmt))
        return True
    return False


#: statements by which a loop body checks a condition
#: (a ``yield`` hands each round to the caller, who decides: ``for _ in retry(): yield; sleep(d)``)
CHECKS = (ast.If, ast.Break, ast.Return, ast.Try, ast.While, ast.IfExp, ast.Yield, ast.YieldFrom)


def own_nodes_of(stmt: ast.stmt) -> Iterator[ast.AST]:
    """``stmt`` and its descendants, short of nested defs and lambdas."""
    stack: list[ast.AST] = [stmt]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, NEW_FRAMES):
            stack.extend(ast.iter_child_nodes(current))


def asserts_after(function: ast.AST, position: tuple[int, int]) -> bool:
    """Whether ``function``'s own body checks something after ``position``:
    an ``assert`` or a ``self.assert*()`` call. A job that sleeps and then
    asserts is waiting for another job's state, not simulating work."""
    for node in own_nodes(function):
        if (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)) <= position:
            continue
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("assert"):
            return True
    return False


#: calls that draw a random number
RANDOM_CALLS = frozenset({"random.random", "random.uniform", "random.randint", "random.randrange", "random.choice",
                          "random.expovariate", "random.gauss", "random.triangular"})


def random_duration(ctx: Context, duration: ast.expr) -> bool:
    """A duration drawn at random (``sleep(random() * 0.001)``,
    ``sleep(random.uniform(0, 0.1))``): jitter that shakes out a race, not
    a wait for a state."""
    for node in ast.walk(duration):
        if isinstance(node, ast.Call):
            name = ctx.call_name(node) or ""
            # random.random(), or a generator's own: rng.random(), self.rng.uniform(0, 1)
            if name in RANDOM_CALLS or name.endswith((".random", ".uniform")):
                return True
    return False


# -- whether a sleep is a guessed wait (issue 26: "guessed-wait") ---------------------------------
#
# A sleep is a guessed wait only when a later statement of the same function asserts on state that
# another party (a thread, a process, a task, a server, a callback handed away earlier) must have
# changed by then. The readers of a sleep are the assertions after it, up to the first statement
# that waits on the state itself with a bound (``join(5)``, ``wait(timeout=...)``, a poll loop):
# what comes after such a wait no longer depends on the sleep.

#: last parts of calls that wait on the state itself, bounded when given a first argument (``join(5)``)
WAIT_NAMES = frozenset({
    "join", "wait", "wait_for", "result", "communicate", "expect", "expect_exact", "gather", "as_completed",
    "wait_closed", "exception", "acquire", "get",
})
#: waits bounded even when given no timeout
BOUNDED_BY_DEFAULT = frozenset({"expect", "expect_exact", "expect_list"})
TIMEOUT_KEYWORDS = frozenset({"timeout", "timeout_s", "deadline"})
#: last parts of calls that start another party, beyond :data:`clock.STARTER_NAMES`
MORE_STARTERS = frozenset({
    "schedule", "kill", "killpg", "signal", "setitimer", "alarm", "call_soon", "call_later", "call_at",
    "call_soon_threadsafe", "add_done_callback", "add_reader", "add_writer", "run_coroutine_threadsafe",
    # a message to a peer: a server or a child on the other side
    "send", "sendall", "sendline", "connect", "urlopen", "request",
})
#: bound methods handed away as callbacks (``EventDebouncer(0.05, called.append)``)
CALLBACK_METHODS = frozenset({"append", "extend", "add", "set", "put", "put_nowait", "release", "notify", "send"})
#: methods of a unittest class that run before each test (or the class)
SETUP_METHODS = frozenset({"setUp", "asyncSetUp", "setUpClass", "setup_method", "setup_class", "setup"})
#: values a negative assertion compares with: nothing happened (``== 0``, ``== []``)
EMPTY_VALUES = (0, "", False, None)
NEGATIVE_CALLS = frozenset({
    "assertFalse", "assertNotIn", "assert_not_called", "assert_not_awaited", "assertEmpty",
})
EQUALITY_CALLS = frozenset({"assertEqual", "assertEquals"})


def _last(ctx: Context, call: ast.Call) -> str:
    name = ctx.call_name(call)
    if name:
        return name.rpartition(".")[2]
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _end(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


def starts_party(last: str) -> bool:
    """Whether a call of this last name starts something that runs beside
    the test: a thread, a process, a task, a server, a pool, a signal or a
    scheduled callback (``launch_thread``, ``start_watching``, ``create_task``)."""
    lower = last.lower()
    return (
        last in STARTER_NAMES or last in MORE_STARTERS or last.endswith(STARTER_SUFFIXES)
        or lower.startswith(("spawn", "launch")) or (lower.startswith("start") and lower != "startswith")
        or "thread" in lower or "process" in lower
    )


def is_empty_value(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in EMPTY_VALUES and not isinstance(node.value, float)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return not getattr(node, "elts", getattr(node, "keys", None))
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "list", "dict") and not node.args


class Readers:
    """The assertions of one function after one of its sleeps, up to the
    first statement that waits on the state itself."""

    __slots__ = ("ctx", "function", "sleep", "found", "waited", "around")

    def __init__(self, ctx: Context, function: ast.AST, sleep: ast.AST) -> None:
        self.ctx = ctx
        self.function = function
        self.sleep = sleep
        #: (assertion node, the expression it checks is true or false, negative)
        self.found: list[tuple[ast.AST, ast.AST | None, bool]] = []
        #: a wait on the state came after the sleep before any assertion
        self.waited = False
        #: how many of ``found`` are ``pytest.raises`` blocks around the sleep
        self.around = 0
        self._read()

    def _read(self) -> None:
        ctx, end = self.ctx, _end(self.sleep)
        fixture = ctx.function_scope is not None and ctx.function_scope.is_fixture
        for ancestor, child in ctx.ancestors_in_function(self.sleep):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and child not in ancestor.items and any(
                expects_raise(ctx, item.context_expr) for item in ancestor.items
            ):
                self.found.append((ancestor, None, False))  # the block is checked at its exit
                self.around += 1
        for node in own_nodes(self.function):
            if not isinstance(node, ast.stmt) or _position(node) <= end:
                continue
            if self._polls_or_waits(node):
                self.waited = not self.found
                return
            assertion = self._assertion(node)
            if assertion is not None:
                self.found.append(assertion)
            elif fixture and isinstance(node, ast.Expr) and isinstance(node.value, (ast.Yield, ast.YieldFrom)):
                self.found.append((node, None, False))  # a fixture hands what it started to the tests

    def _polls_or_waits(self, node: ast.stmt) -> bool:
        """A bounded wait on the state itself: a ``while`` loop that polls
        (it sleeps or waits each round), or a call with a timeout."""
        if isinstance(node, ast.While):
            return any(isinstance(inner, ast.Call) and self._waits(inner, loop=True) for inner in own_nodes_of(node))
        if isinstance(node, (ast.Assert, ast.If, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try)):
            return False
        if self._assertion(node) is not None:
            return False
        return any(isinstance(inner, ast.Call) and self._waits(inner) for inner in own_nodes_of(node))

    def _waits(self, call: ast.Call, loop: bool = False) -> bool:
        last = _last(self.ctx, call)
        if loop and last == "sleep":
            return True
        if any(keyword.arg in TIMEOUT_KEYWORDS for keyword in call.keywords):
            return True
        if last in BOUNDED_BY_DEFAULT or (isinstance(call.func, ast.Name) and last.startswith("wait_")):
            return True  # pexpect's expect() has a default timeout; a wait_for_*() helper polls with its own
        return last in WAIT_NAMES and bool(call.args) and (last != "wait_for" or len(call.args) >= 2)

    def _assertion(self, node: ast.stmt) -> tuple[ast.AST, ast.AST | None, bool] | None:
        ctx = self.ctx
        if isinstance(node, ast.Assert):
            if isinstance(node.test, ast.Constant):
                return None  # ``assert True`` reads no state
            subject, negative = negated_subject(node.test)
            return node, subject, negative
        if isinstance(node, (ast.With, ast.AsyncWith)):
            if any(expects_raise(ctx, item.context_expr) for item in node.items):
                return node, None, False
            return None
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            return None
        call = node.value
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if not name.startswith("assert"):
            return None
        first = call.args[0] if call.args else None
        if name in NEGATIVE_CALLS:
            return node, first, True
        if name == "assertTrue":
            return node, first, False
        if name in EQUALITY_CALLS and len(call.args) >= 2:
            return node, call.args[0], is_empty_value(call.args[1]) or is_empty_value(call.args[0])
        return node, first, False

    def all_negative(self) -> bool:
        """Every reader checks that something did not happen (``assert not
        results``, ``restart_count == 0``, ``assertFalse(x)``) and the
        function did not assert its opposite before the sleep: an observation
        window, which a slow host only makes easier to pass."""
        if not self.found or not all(negative for _, _, negative in self.found):
            return False
        subjects = {shape(subject) for _, subject, _ in self.found if subject is not None}
        begin = _position(self.sleep)
        for node in own_nodes(self.function):
            if _position(node) >= begin or not isinstance(node, ast.stmt):
                continue
            before = self._assertion(node)
            if before is not None and not before[2] and before[1] is not None and shape(before[1]) in subjects:
                return False  # asserted true before, false after: a change the sleep waits for
        return True


def negated_subject(test: ast.expr) -> tuple[ast.AST, bool]:
    """What an ``assert`` checks, and whether it checks that it did not happen."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand, True
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, ast.NotIn):
            return test, True
        if isinstance(op, ast.Eq) and is_empty_value(right):  # ``is None`` is a value that came (or went)
            return test.left, True
        if isinstance(op, (ast.Lt, ast.LtE)) and isinstance(right, ast.Constant):
            return test.left, True  # at most so many: it did not happen more often
    return test, False


def cut_short(function: ast.AST, sleep: ast.AST, siblings: list[ast.stmt], index: int) -> bool:
    """The test expects the sleep never to end: the statement after it is
    ``pytest.fail(...)`` / ``self.fail(...)``, or sets a flag a later
    assertion says was never set (``done = True`` ... ``assert not done``)."""
    if index + 1 >= len(siblings):
        return False
    after = siblings[index + 1]
    if isinstance(after, ast.Expr) and isinstance(after.value, ast.Call):
        func = after.value.func
        return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "fail"
    if not (isinstance(after, ast.Assign) and len(after.targets) == 1 and isinstance(after.targets[0], ast.Name)):
        return False
    flag = after.targets[0].id
    for node in own_nodes(function):
        if _position(node) <= _position(after):
            continue
        test = node.test if isinstance(node, ast.Assert) else None
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "assertFalse" and node.args:
            test = ast.UnaryOp(op=ast.Not(), operand=node.args[0])
        if test is not None:
            subject, negative = negated_subject(test)
            if negative and isinstance(subject, ast.Name) and subject.id == flag:
                return True
    return False


class Parties:
    """Whether another party runs beside a function before a point of it:
    started there, handed a callback there, started by its class's setUp or
    by a fixture it requests (the fixture's body, followed through the
    fixtures it requests in turn)."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def before(self, function: ast.AST, point: ast.AST) -> bool:
        begin = _position(point)
        if any(_position(node) < begin and self._starts(node) for node in own_nodes(function)):
            return True
        return self._class_setup_starts() or self._fixture_starts(function)

    def _starts(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        if starts_party(_last(self.ctx, node)):
            return True
        return any(self._handed(value) for value in (*node.args, *(k.value for k in node.keywords)))

    def _handed(self, value: ast.expr) -> bool:
        """A callable handed to other code: a lambda, a def of the file, a
        method of the test's class, a bound method of a container (``called.append``)."""
        if isinstance(value, ast.Lambda):
            return True
        if isinstance(value, ast.Name):
            return value.id in self.ctx.per_function(self.ctx.tree, defined_functions, names=False)
        if isinstance(value, ast.Attribute):
            if value.attr in CALLBACK_METHODS:
                return True
            if isinstance(value.value, ast.Name) and value.value.id in ("self", "cls"):
                cls = self.ctx.class_scope
                return cls is not None and any(
                    isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == value.attr
                    for item in cls.node.body  # type: ignore[attr-defined]
                )
        return False

    def _class_setup_starts(self) -> bool:
        cls = self.ctx.class_scope
        if cls is None:
            return False
        return any(
            isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in SETUP_METHODS
            and body_starts(item)
            for item in cls.node.body  # type: ignore[attr-defined]
        )

    def _fixture_starts(self, function: ast.AST) -> bool:
        """A fixture the test requests (by parameter) whose body starts a party."""
        outer = next((scope.node for scope in self.ctx.scopes if scope.kind == "function"), function)
        arguments = outer.args  # type: ignore[attr-defined]
        pending = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        pending = [name for name in pending if name not in ("self", "cls")]
        if not pending:
            return False
        try:
            visible = self.ctx.project.fixtures()
        except Exception:  # noqa: BLE001 - the model cannot be built for this file: judge without fixtures
            return False
        seen: set[str] = set()
        while pending:
            name = pending.pop()
            fixture = visible.get(name)
            if fixture is None or name in seen or len(seen) > MAX_FIXTURES:
                continue
            seen.add(name)
            node = fixture_node(fixture.path, fixture.line)
            if node is not None and body_starts(node):
                return True
            pending.extend(fixture.requests)
        return False


#: how many fixtures of a test's closure are read for a started party
MAX_FIXTURES = 12


def body_starts(function: ast.AST) -> bool:
    """``function``'s body starts a party (by the call's last name only)."""
    for node in own_nodes(function):
        if isinstance(node, ast.Call):
            func = node.func
            if starts_party(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")):
                return True
    return False


_FIXTURE_TREES: dict[str, dict[int, ast.AST]] = {}


def fixture_node(path: str, line: int) -> ast.AST | None:
    """The def of a fixture at ``line`` of ``path`` (read once per file; None when unreadable)."""
    defs = _FIXTURE_TREES.get(path)
    if defs is None:
        defs = {}
        try:
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), filename=path)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs[node.lineno] = node
                for decorator in node.decorator_list:
                    defs.setdefault(decorator.lineno, node)
        _FIXTURE_TREES[path] = defs
    return defs.get(line)


def defined_functions(tree: ast.AST, _ctx: Context) -> frozenset[str]:
    """Names of every def of the file (for :meth:`Context.per_function` on the module)."""
    return frozenset(node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def guessed_wait(ctx: Context, sleep: ast.AST, test_flow: bool) -> bool:
    """Whether the sleep being visited is a guessed wait (see the module's
    "guessed-wait" section). ``test_flow``: it runs in the test's own code
    (a test, a fixture, a setUp), where a sleep nothing reads after is still
    reported; in a helper it is simulated work."""
    function = ctx.function
    if function is None:
        return True
    held = ctx.statement(sleep)
    if held is not None and cut_short(function, sleep, held[1], held[2]):
        return False
    readers = Readers(ctx, function, sleep)
    if readers.waited:
        return False
    if not readers.found:
        return test_flow
    if readers.all_negative():
        return False
    if not test_flow:
        return True
    if Parties(ctx).before(function, sleep):
        return True
    # no party runs beside the test, and either it handed the code a time (ttl=, interval=, a
    # timedelta): what it asserts is a function of the clock passing that threshold; or the only
    # check is a ``pytest.raises`` around the sleep: the sleep itself is the call under test
    return not (readers.around == len(readers.found) or gives_a_threshold(function, sleep))


#: words of a name or keyword that hold a length of time the code under test reads
TIME_WORDS = ("ttl", "timeout", "expire", "interval", "delay", "age", "period", "debounce", "seconds",
              "lifetime", "duration", "lease", "grace", "cooldown", "backoff")


def gives_a_threshold(function: ast.AST, sleep: ast.AST) -> bool:
    """Before ``sleep``, the function hands a time to a call: a keyword or a
    name argument named for one (``ttl=0.1``, ``DelayedQueue(delay)``), or a
    ``timedelta(...)``, also in a decorator of a nested def (``@lru_cache(ttl=1)``)."""
    begin = _position(sleep)
    pending: list[ast.AST] = []
    for node in own_nodes(function):
        if _position(node) >= begin:
            break
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pending.extend(node.decorator_list)
        elif isinstance(node, ast.Call):
            pending.append(node)
    for root in pending:
        for call in ast.walk(root):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "timedelta":
                return True
            names = [k.arg or "" for k in call.keywords] + [a.id for a in call.args if isinstance(a, ast.Name)]
            if any(word in name.lower() for name in names for word in TIME_WORDS):
                return True
    return False
