"""Signals a coroutine awaits: which nested coroutines a function waits to
finish (:class:`WaitedCoroutines`) and what it supplied before awaiting (:class:`SuppliedSignals`)."""

from __future__ import annotations

import ast

from flake8_hermetic.context import Context
from flake8_hermetic.facts.mocks import MOCK_FACTORIES
from flake8_hermetic.facts.names import called_as, callee_last_name
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import LOOP_TYPES, NEW_FRAMES, FunctionNode
from flake8_hermetic.rules.determinism.trees import assigned_pairs, referenced_names

FUTURE_FACTORIES = frozenset({"asyncio.Future", "asyncio.futures.Future"})
#: ways synchronous code runs a coroutine to its end
BLOCKING_RUNNERS = frozenset({"asyncio.run"})
RUNNER_METHODS = frozenset({"run_until_complete"})
#: task groups wait for every task they started when their block exits
TASK_GROUP_SUFFIXES = ("TaskGroup", "create_task_group", "open_nursery")
TASK_GROUP_METHODS = frozenset({"create_task", "start_soon", "start"})
COLLECTING_METHODS = frozenset({"append", "add", "extend"})


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
        trace = _WaitTrace(ctx)
        for node in ctx.function_nodes(function):
            trace.note(node)
        self.names = trace.waited()


class _WaitTrace:
    """What :class:`WaitedCoroutines` gathers over a function's nodes, in
    order: the expressions it waits on, the names each name is built from,
    and its task groups."""

    __slots__ = ("ctx", "roots", "built_from", "groups")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.roots: list[ast.AST] = []
        self.built_from: dict[str, set[str]] = {}
        self.groups: set[str] = set()

    def note(self, node: ast.AST) -> None:
        if isinstance(node, ast.Await):
            self.roots.append(node.value)
        elif isinstance(node, ast.AsyncWith):
            self._note_task_groups(node)
        elif isinstance(node, ast.Call):
            self._note_call(node)
        for target, value in assigned_pairs(node):
            key = dotted_name(target)
            if key is not None:
                self.built_from.setdefault(key, set()).update(referenced_names([value]))

    def _note_task_groups(self, node: ast.AsyncWith) -> None:
        """``async with asyncio.TaskGroup() as tg``: ``tg`` waits for its tasks."""
        for item in node.items:
            opened = item.context_expr
            if isinstance(opened, ast.Call) and (self.ctx.call_name(opened) or "").endswith(TASK_GROUP_SUFFIXES):
                key = dotted_name(item.optional_vars) if item.optional_vars is not None else None
                if key is not None:
                    self.groups.add(key)

    def _note_call(self, node: ast.Call) -> None:
        """A runner's or a task group's arguments are waited; a collection
        (``tasks.append(t)``) is built from its arguments."""
        func = node.func
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if self.ctx.call_name(node) in BLOCKING_RUNNERS:
            self.roots.extend(arguments)
        elif isinstance(func, ast.Attribute):
            receiver = dotted_name(func.value)
            if func.attr in RUNNER_METHODS or (func.attr in TASK_GROUP_METHODS and receiver in self.groups):
                self.roots.extend(arguments)
            elif func.attr in COLLECTING_METHODS and receiver is not None:
                self.built_from.setdefault(receiver, set()).update(referenced_names(arguments))

    def waited(self) -> set[str]:
        """The names waited on, and transitively every name they were built from."""
        waited = set(referenced_names(self.roots))
        pending = list(waited)
        while pending:
            for name in self.built_from.get(pending.pop(), ()):
                if name not in waited:
                    waited.add(name)
                    pending.append(name)
        return waited


#: calls that satisfy a later await of the same receiver: ev.set() -> ev.wait(), q.put() -> q.get()
SUPPLY_METHODS = frozenset({"set", "clear", "put", "put_nowait", "set_result", "set_exception"})
PUTS = frozenset({"put", "put_nowait"})


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
                if key is not None and isinstance(value, ast.Call) and callee_last_name(ctx, value) in MOCK_FACTORIES:
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


#: calls by which a test's own task sends a signal (ev.set(), q.put(x), cond.notify_all(), fut.set_result(x))
ARRANGING_METHODS = frozenset(
    {"set", "put", "put_nowait", "set_result", "set_exception", "notify", "notify_all"}
)
#: calls that start another task or thread of the test's own
TASK_STARTS = frozenset({"create_task", "ensure_future", "start_soon", "start", "submit", "run_in_executor", "Thread"})


class ArrangedSignals:
    """The signals a test sends from another task of its own, for
    :meth:`Context.per_function` on the outermost function.

    Recorded over the function and every function nested in it: the root
    names each one sends to itself (``ev.set()``, ``q.put(x)``,
    ``cond.notify_all()``), a bound supply method handed to a call
    (``call_soon(ev.set)``, ``in_host(ev.set)``), a signal handed as an
    argument to a task or thread the test starts
    (``nursery.start_soon(worker, ev)``, ``create_task(q.put(x))``).
    """

    __slots__ = ("_sent_by", "handed")

    def __init__(self, function: FunctionNode, ctx: Context) -> None:
        self._sent_by: dict[int, set[str]] = {}
        self.handed: set[str] = set()
        pending: list[tuple[ast.AST, int]] = [(function, id(function))]
        while pending:
            node, owner = pending.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                owner = id(node)
            if isinstance(node, ast.Call):
                self._note_call(node, owner)
            pending.extend((child, owner) for child in ast.iter_child_nodes(node))

    def _note_call(self, node: ast.Call, owner: int) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ARRANGING_METHODS:
            root = _root_name(func.value)
            if root is not None:
                self._sent_by.setdefault(owner, set()).add(root)
        arguments = [*node.args, *(k.value for k in node.keywords)]
        for argument in arguments:
            if isinstance(argument, ast.Attribute) and argument.attr in ARRANGING_METHODS:
                root = _root_name(argument.value)
                if root is not None:
                    self.handed.add(root)
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in TASK_STARTS:
            self.handed.update(referenced_names(arguments))

    def by_another_task(self, root: str, waiting: ast.AST) -> bool:
        """Whether a task other than the function ``waiting`` sends ``root``:
        the same function's own sends are :class:`SuppliedSignals`' business
        (their order counts)."""
        if root in self.handed:
            return True
        return any(root in roots for owner, roots in self._sent_by.items() if owner != id(waiting))


def _root_name(node: ast.expr) -> str | None:
    """The name a chain of attributes and subscripts hangs from: ``events[0].x`` -> "events"."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def signal_root(node: ast.expr) -> str | None:
    return _root_name(node)


def child_processes(function: FunctionNode, ctx: Context) -> set[str]:
    """Names that ``function`` (and the functions nested in it) binds to a
    child process it spawned (``await create_subprocess_exec(...)``,
    ``async with open_process(...) as proc``, any ``*process*(...)``
    factory) or takes as a parameter annotated ``...Process``."""
    names: set[str] = set()
    for node in ast.walk(function):
        pairs: list[tuple[ast.expr, ast.expr]] = list(assigned_pairs(node))
        if isinstance(node, (ast.With, ast.AsyncWith)):
            pairs.extend((item.optional_vars, item.context_expr) for item in node.items if item.optional_vars)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            if "process" in (dotted_name(node.annotation) or "").rpartition(".")[2].lower():
                names.add(node.arg)
        for target, value in pairs:
            if isinstance(value, ast.Await):
                value = value.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Call):
                if "process" in callee_last_name(ctx, value).lower():
                    names.add(target.id)
    return names


def makes_future(ctx: Context, call: ast.Call) -> bool:
    """``asyncio.Future()`` or ``loop.create_future()``: a bare future."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "create_future":
        return True
    return ctx.call_name(call) in FUTURE_FACTORIES


def future_names(function: FunctionNode, ctx: Context) -> set[str]:
    """Names ``function`` assigns a bare future to, for :meth:`Context.per_function`."""
    futures: set[str] = set()
    for node in ctx.function_nodes(function):
        for target, value in assigned_pairs(node):
            key = dotted_name(target)
            if key is not None and isinstance(value, ast.Call) and makes_future(ctx, value):
                futures.add(key)
    return futures
