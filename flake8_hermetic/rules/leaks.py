"""HRM1xx: side effects that outlive the test.

The rules that follow a value (a temp directory, a thread, a child) ask
where the call's result goes (:func:`holder_of`) and then look for its
cleanup in the enclosing function only (:class:`FunctionFacts`, built at
most once per function and rule, and only when a candidate is seen).
"""

from __future__ import annotations

import ast
import os
import sys
import sysconfig
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from flake8_hermetic.engine import DEF_TYPES, Context, FunctionNode
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.hostpins import HOME_VARIABLES, PINNED_VARIABLES, mapping_keys, pin_of, pin_sites
from flake8_hermetic.processes import SPAWNER_CALLS, child_process, starts_with
from flake8_hermetic.registry import Rule, Violation

# -- what a call's result becomes ------------------------------------------------

#: methods (and functions) that register a callback or a context to run at
#: the end of the test: unittest, pytest's request, contextlib.ExitStack
CLEANUP_REGISTRARS = frozenset({
    "addCleanup", "addClassCleanup", "addAsyncCleanup", "addModuleCleanup", "addfinalizer",
    "callback", "push_async_callback", "enter_context", "enter_async_context",
    "enterContext", "enterClassContext", "enterAsyncContext",
})
CLEANUP_FUNCTIONS = frozenset({"atexit.register", "weakref.finalize"})
#: methods that put the value into a container named by the receiver
CONTAINER_METHODS = frozenset({"append", "appendleft", "add", "extend", "insert", "setdefault"})


def mentions(node: ast.AST) -> set[str]:
    """Every name and attribute chain used under ``node`` (``f.name`` gives
    ``f.name`` and ``f``)."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Name, ast.Attribute)):
            text = dotted_name(sub)
            if text is not None:
                found.add(text)
    return found


def target_names(target: ast.AST | None) -> tuple[str, ...]:
    """The names an assignment or ``as`` target binds: ``a``, ``self.a``,
    ``(a, b)``, ``*rest``, and the container of ``self.dirs[k]``."""
    if target is None:
        return ()
    if isinstance(target, (ast.Tuple, ast.List)):
        return tuple(name for element in target.elts for name in target_names(element))
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    if isinstance(target, ast.Subscript):
        target = target.value
    text = dotted_name(target)
    return () if text is None or text == "_" else (text,)


def is_registration(ctx: Context, call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in CLEANUP_REGISTRARS:
        return True
    if isinstance(func, ast.Name) and func.id in CLEANUP_REGISTRARS:
        return True
    return ctx.call_name(call) in CLEANUP_FUNCTIONS


@dataclass(frozen=True)
class Holder:
    """Where the result of a call goes.

    ``how`` is one of: "with" (a ``with`` item), "registered" (handed to a
    cleanup registration), "assigned" (bound to ``names``), "returned",
    "yielded", "unbound" (dropped or passed on).
    """

    how: str
    names: tuple[str, ...] = ()
    #: the attribute read directly off the result: ``Popen(...).wait`` -> "wait"
    chained: str | None = None
    #: the ``with`` statement, for "with"
    statement: ast.stmt | None = None


def holder_of(ctx: Context, call: ast.Call) -> Holder:
    """Follow the result of ``call`` (the node being visited) up to the
    statement that keeps it."""
    child: ast.AST = call
    chained: str | None = None
    for ancestor in reversed(ctx.parents):
        if isinstance(ancestor, (*DEF_TYPES, ast.ClassDef, ast.Lambda)):
            break
        if isinstance(ancestor, ast.Attribute) and child is call:
            chained = ancestor.attr
        elif isinstance(ancestor, ast.withitem) and child is ancestor.context_expr:
            statement = ctx.enclosing(ast.With, ast.AsyncWith)
            return Holder("with", target_names(ancestor.optional_vars), chained, statement)  # type: ignore[arg-type]
        elif isinstance(ancestor, ast.Call) and child is not ancestor.func:
            if is_registration(ctx, ancestor):
                return Holder("registered", chained=chained)
            func = ancestor.func
            if isinstance(func, ast.Attribute) and func.attr in CONTAINER_METHODS:
                return Holder("assigned", target_names(func.value), chained)
        elif isinstance(ancestor, ast.NamedExpr):
            return Holder("assigned", target_names(ancestor.target), chained)
        elif isinstance(ancestor, ast.Assign):
            names = tuple(name for target in ancestor.targets for name in target_names(target))
            return Holder("assigned", names, chained)
        elif isinstance(ancestor, (ast.AnnAssign, ast.AugAssign)):
            return Holder("assigned", target_names(ancestor.target), chained)
        elif isinstance(ancestor, ast.Return):
            return Holder("returned", chained=chained)
        elif isinstance(ancestor, (ast.Yield, ast.YieldFrom)):
            return Holder("yielded", chained=chained)
        elif isinstance(ancestor, ast.stmt):
            break
        child = ancestor
    return Holder("unbound", chained=chained)


def _walk_marking_nested(function: FunctionNode) -> Iterator[tuple[ast.AST, bool]]:
    """Every node under ``function``, with whether it sits inside a def or
    lambda nested in it (callbacks still name what they clean up)."""
    pending: list[tuple[ast.AST, bool]] = [(function, False)]
    while pending:
        node, nested = pending.pop()
        yield node, nested
        inner = nested or (node is not function and isinstance(node, (*DEF_TYPES, ast.Lambda)))
        pending.extend((child, inner) for child in ast.iter_child_nodes(node))


class FunctionFacts:
    """What one function does with the names it holds, from one walk of it."""

    def __init__(self, ctx: Context, function: FunctionNode) -> None:
        #: receiver text -> the methods called on it (``p.wait()`` -> {"p": {"wait"}})
        self.methods: dict[str, set[str]] = {}
        #: loop or comprehension variable -> the names its iterable mentions
        self.loop_sources: dict[str, set[str]] = {}
        #: names mentioned by a cleanup registration (through a local def too)
        self.registered: set[str] = set()
        #: names mentioned by a ``with`` item (``with p:``, ``with start_threads(ts):``)
        self.managed: set[str] = set()
        #: (callee's last name, names its arguments mention)
        self.passed: list[tuple[str, set[str]]] = []
        #: name -> the lines it is mentioned on
        self.lines: dict[str, list[int]] = {}
        #: the last line of the first statement that yields, for a generator
        self.yield_end: int | None = None
        #: names mentioned by ``return`` values
        self.returned: set[str] = set()
        local_defs: dict[str, set[str]] = {}
        registrations: list[set[str]] = []
        for node, nested in _walk_marking_nested(function):
            if isinstance(node, (ast.Name, ast.Attribute)):
                text = dotted_name(node)
                if text is not None:
                    self.lines.setdefault(text, []).append(node.lineno)
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute):
                    receiver = dotted_name(func.value)
                    if receiver is not None:
                        self.methods.setdefault(receiver, set()).add(func.attr)
                    callee = func.attr
                else:
                    callee = func.id if isinstance(func, ast.Name) else ""
                arguments = set().union(*(mentions(a) for a in [*node.args, *node.keywords]))
                if is_registration(ctx, node):
                    registrations.append(arguments | mentions(func))
                elif arguments:
                    self.passed.append((callee, arguments))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                sources = mentions(node.iter)
                for name in target_names(node.target):
                    self.loop_sources.setdefault(name, set()).update(sources)
            elif isinstance(node, ast.withitem):
                self.managed |= mentions(node.context_expr)
            elif isinstance(node, DEF_TYPES) and node is not function:
                local_defs[node.name] = set().union(*(mentions(s) for s in node.body))
            elif nested:
                continue  # a local def's return and yield are its own
            elif isinstance(node, ast.Return) and node.value is not None:
                self.returned |= mentions(node.value)
            elif isinstance(node, (ast.Yield, ast.YieldFrom)):
                end = getattr(node, "end_lineno", None) or node.lineno
                self.yield_end = end if self.yield_end is None else min(self.yield_end, end)
        for names in registrations:
            self.registered |= names
            for name in names & local_defs.keys():
                self.registered |= local_defs[name]

    def aliases(self, name: str) -> set[str]:
        """``name`` and the loop variables that iterate over it."""
        return {name} | {var for var, sources in self.loop_sources.items() if name in sources}

    def called(self, name: str, methods: frozenset[str], handed_over: bool = False) -> bool:
        """A method in ``methods`` is called on ``name`` (or on its elements
        in a loop); with ``handed_over``, also a bound method passed on to be
        called later (``assertRaises(E, p.__exit__)``, ``atexit.register(t.join)``)."""
        for alias in self.aliases(name):
            if self.methods.get(alias, set()) & methods:
                return True
            if handed_over and any(f"{alias}.{method}" in self.lines for method in methods):
                return True
        return False

    def passed_to(self, name: str, says: Callable[[str], bool]) -> bool:
        """``name`` is an argument of a call whose (lower-case) name ``says`` so."""
        aliases = self.aliases(name)
        return any(aliases & names and says(callee.lower()) for callee, names in self.passed)

    def mentioned_after(self, name: str, line: int) -> bool:
        return any(number > line for number in self.lines.get(name, ()))


class KnownClassesRule(Rule):
    """A rule about instances of ``known_classes`` (canonical names), which
    also recognises subclasses defined earlier in the same file."""

    known_classes: frozenset[str] = frozenset()

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.local_subclasses: set[str] = set()

    def visit_ClassDef(self, node: ast.ClassDef) -> Iterator[Violation]:
        if any(self.is_known_class(self.ctx.resolve(base)) for base in node.bases):
            self.local_subclasses.add(node.name)
            self.ctx.dispatch_calls_to(node.name, self.visit_Call)  # type: ignore[attr-defined]
        return iter(())

    def is_known_class(self, name: str | None) -> bool:
        return name in self.known_classes or name in self.local_subclasses


class FunctionRule(Rule):
    """A rule that asks :class:`FunctionFacts` about the enclosing function."""

    __slots__ = ("_facts",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._facts: dict[int, FunctionFacts] = {}

    def facts(self, function: FunctionNode) -> FunctionFacts:
        found = self._facts.get(id(function))
        if found is None:
            found = self._facts[id(function)] = FunctionFacts(self.ctx, function)
        return found

    def in_helper(self) -> bool:
        """Inside a plain function (not a test, fixture or TestCase method)."""
        scope = self.ctx.function_scope
        return scope is not None and not scope.is_test_code

    def handed_back(self, holder: Holder) -> bool:
        """A helper that returns what it made hands it to its caller; a test
        or fixture that does so leaks it."""
        if not self.in_helper():
            return False
        if holder.how == "returned":
            return True
        function = self.ctx.function
        return function is not None and bool(set(holder.names) & self.facts(function).returned)


def _path_to(ctx: Context, node: ast.AST) -> list[ast.AST]:
    """``node`` and its ancestors, outermost first; ``node`` is the node
    being visited or one of its ancestors."""
    for index in range(len(ctx.parents) - 1, -1, -1):
        if ctx.parents[index] is node:
            return ctx.parents[: index + 1]
    return [*ctx.parents, node]


def _later_statements(ctx: Context, node: ast.AST) -> Iterator[tuple[ast.stmt, bool]]:
    """The statements that run after ``node``'s statement in its function,
    innermost block first, as (statement, encloses node) pairs: the later
    siblings at each level, and each enclosing ``try`` (whose ``finally``
    runs after it)."""
    chain = _path_to(ctx, node)
    for position in range(len(chain) - 1, 0, -1):
        stmt = chain[position]
        holder = chain[position - 1]
        if isinstance(stmt, (*DEF_TYPES, ast.ClassDef, ast.Lambda)):
            return
        if not isinstance(stmt, ast.stmt):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            siblings = getattr(holder, field, None)
            if isinstance(siblings, list) and any(s is stmt for s in siblings):
                index = next(i for i, s in enumerate(siblings) if s is stmt)
                for later in siblings[index + 1:]:
                    yield later, False
                break
        if isinstance(holder, ast.Try) or type(holder).__name__ == "TryStar":
            yield holder, True  # type: ignore[misc]


RAISES_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def _fails(stmt: ast.stmt) -> bool:
    """``self.fail(...)``, ``pytest.fail(...)`` or ``raise``."""
    if isinstance(stmt, ast.Raise):
        return True
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "fail"


def expects_failure(ctx: Context, node: ast.AST) -> bool:
    """``node`` is in the last statement of a ``with self.assertRaises(...)``
    or ``with pytest.raises(...)`` block, or of a ``try`` whose ``else``
    fails the test: the call is the one expected to raise, so whatever it
    would have started or changed never happens."""
    chain = _path_to(ctx, node)
    for position in range(len(chain) - 1, 0, -1):
        stmt = chain[position]
        if isinstance(stmt, (*DEF_TYPES, ast.ClassDef, ast.Lambda)):
            return False
        if not isinstance(stmt, ast.stmt):
            continue
        holder = chain[position - 1]
        if isinstance(holder, ast.Try) and holder.body[-1] is stmt:
            return bool(holder.handlers) and bool(holder.orelse) and _fails(holder.orelse[0])
        if not isinstance(holder, (ast.With, ast.AsyncWith)) or holder.body[-1] is not stmt:
            return False
        for item in holder.items:
            expr = item.context_expr
            if isinstance(expr, ast.Call):
                func = expr.func
                if isinstance(func, ast.Attribute) and func.attr in RAISES_METHODS:
                    return True
                if ctx.call_name(expr) == "pytest.raises":
                    return True
        return False
    return False


def _finally_names(stmt: ast.stmt, nested: bool = False) -> set[str]:
    """The names the ``finally`` of ``stmt`` mentions; with ``nested``, also
    the ``finally`` blocks of the try statements inside it (not inside defs)."""
    names: set[str] = set()
    pending: list[ast.AST] = [stmt]
    while pending:
        node = pending.pop()
        for final in getattr(node, "finalbody", None) or ():
            names |= mentions(final)
        if nested:
            pending.extend(
                child for child in ast.iter_child_nodes(node)
                if isinstance(child, ast.stmt) and not isinstance(child, (*DEF_TYPES, ast.ClassDef))
            )
    return names


def _registers_cleanup_of(ctx: Context, stmt: ast.stmt, names: tuple[str, ...]) -> bool:
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Call) and is_registration(ctx, sub):
            if mentions(sub) & set(names):
                return True
    return False


#: the last name of calls that delete a file or directory
REMOVERS = frozenset({"remove", "unlink", "rmdir", "removedirs", "rmtree", "cleanup"})


def _removes(stmt: ast.stmt, names: set[str]) -> bool:
    """``os.unlink(path)``, ``shutil.rmtree(d)``, ``tmp.cleanup()`` as a statement."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return last in REMOVERS and bool(mentions(call) & names)


def _cannot_fail(stmt: ast.stmt, names: set[str]) -> bool:
    """A statement that sits between a temp file's creation and its cleanup
    without a realistic chance to raise, adding any name it binds to
    ``names``: a local ``def`` of the cleanup callback, closing the new
    file (``os.close(fd)``, ``f.close()``), or naming it again
    (``path = f.name``)."""
    if isinstance(stmt, DEF_TYPES):
        if set().union(*(mentions(s) for s in stmt.body)) & names:
            names.add(stmt.name)
        return True
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "close" and mentions(call) & names:
            return not [a for a in call.args if not isinstance(a, (ast.Name, ast.Attribute))]
        return False
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.Name, ast.Attribute)):
        if dotted_name(stmt.value) in names or (mentions(stmt.value) & names and isinstance(stmt.value, ast.Attribute)):
            names.update(n for target in stmt.targets for n in target_names(target))
            return True
    return False


def _bool_keyword(call: ast.Call, name: str) -> bool | None:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return bool(keyword.value.value)
    return None


# -- HRM101 ------------------------------------------------------------------------

GETTEMPDIR = frozenset({"tempfile.gettempdir", "tempfile.gettempdirb"})
#: the positional index of ``dir`` in each maker's signature
DIR_POSITIONS = {"mkdtemp": 2, "mkstemp": 2, "NamedTemporaryFile": 6, "TemporaryDirectory": 2}
TEMP_MAKERS = {
    "tempfile.mkdtemp": "mkdtemp",
    "tempfile.mkstemp": "mkstemp",
    "tempfile.NamedTemporaryFile": "NamedTemporaryFile",
    "tempfile.TemporaryDirectory": "TemporaryDirectory",
}


class TempWithoutCleanupRule(FunctionRule):
    """
    Flags a temporary directory or file made with `tempfile` whose removal is not arranged in the same scope.

    ## Why is this bad?
    `mkdtemp()`, `mkstemp()` and `NamedTemporaryFile(delete=False)` hand the
    caller something to delete, and a `TemporaryDirectory()` object that is
    kept instead of entered is only removed when it is garbage-collected. A
    removal placed at the end of the test body never runs when an assertion
    before it fails, which is exactly the run nobody inspects. The
    leftovers pile up in the shared temp directory run after run; on a
    tmpfs it is the inode budget that runs out first, and then every
    process on the machine gets "no space left on device".

    The removal counts when it cannot be skipped: the object is a `with`
    item; the very next statement registers a cleanup that names the
    result (`self.addCleanup`, `request.addfinalizer`,
    `ExitStack.callback`/`enter_context`, `TestCase.enterContext`); a
    `try`/`finally` names it in its `finally`; or a pytest yield fixture
    names it after its `yield`.

    ## Example
    ```python
    def test_export(self):
        out = tempfile.mkdtemp()
        export(out)
        self.assertTrue(os.listdir(out))
        shutil.rmtree(out)  # skipped when the assertion fails
    ```

    ## Use instead
    ```python
    def test_export(tmp_path):
        export(tmp_path)
        assert any(tmp_path.iterdir())

    def test_export_unittest(self):
        out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, out)
        export(out)

    def test_export_with():
        with tempfile.TemporaryDirectory() as out:
            export(out)
    ```

    ## Options
    None.

    Not flagged either: a plain helper function (not a test or fixture)
    that returns the result, which hands the removal to its caller; a
    context manager's `__enter__`, whose `__exit__` removes it; and a
    result made inside another directory given as `dir=` (say `tmp_path`),
    unless that is `tempfile.gettempdir()` or `os.getcwd()`.

    ## Known problems
    A `NamedTemporaryFile(delete=False)` used as a `with` item is closed but
    not removed, so it needs the same cleanup as any other result: a
    registration as the first statement of the `with` body or the statement
    after it (also through a name assigned from it in the body), or a
    `finally`. A removal done by a helper the test calls, or by a `with`
    block that swaps the temp directory, is not followed.
    """

    code = "HRM101"
    message = "{name}() leaves {what} behind when the test fails before removing it; use tmp_path, a with block, or register cleanup on the next line"
    calls = frozenset(TEMP_MAKERS)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        kind = TEMP_MAKERS.get(name or "")
        if kind is None:
            return
        keep_file = kind == "NamedTemporaryFile"
        if keep_file and _bool_keyword(node, "delete") is not False:
            return
        if self._inside_managed_directory(node, kind) or self._hands_over():
            return
        holder = holder_of(self.ctx, node)
        if holder.how == "registered" or self.handed_back(holder):
            return
        if holder.how == "with":
            if not keep_file or self._cleaned_after_with(holder):
                return
        elif self._cleaned(node, holder):
            return
        what = "a directory" if kind in ("mkdtemp", "TemporaryDirectory") else "a file"
        yield self.report(node, name=name, what=what)

    def _inside_managed_directory(self, node: ast.Call, kind: str) -> bool:
        """``mkdtemp(dir=tmp_path)``: removed with the directory it is made
        in, unless that is the shared temp directory or the working one."""
        where = next((k.value for k in node.keywords if k.arg == "dir"), None)
        position = DIR_POSITIONS[kind]
        if where is None and len(node.args) > position:
            where = node.args[position]
        if where is None or isinstance(where, ast.Constant):
            return False
        if isinstance(where, ast.Call) and self.ctx.call_name(where) in (*GETTEMPDIR, "os.getcwd", "os.getcwdb"):
            return False
        return True

    def _hands_over(self) -> bool:
        """A context manager's ``__enter__`` leaves the removal to its ``__exit__``."""
        scope = self.ctx.function_scope
        return scope is not None and scope.name in ("__enter__", "__aenter__")

    def _cleaned(self, anchor: ast.AST, holder: Holder) -> bool:
        names = holder.names
        if not names:
            return False
        named = set(names)
        first = True
        for stmt, encloses in _later_statements(self.ctx, anchor):
            if _finally_names(stmt, nested=not encloses) & named:
                return True
            if not first or encloses:
                continue
            # the very next statement that can fail registers the cleanup
            # or removes the result
            if _registers_cleanup_of(self.ctx, stmt, tuple(named)) or _removes(stmt, named):
                return True
            first = _cannot_fail(stmt, named)
        return self._after_fixture_yield(anchor, names)

    def _cleaned_after_with(self, holder: Holder) -> bool:
        statement = holder.statement
        if statement is None or not holder.names:
            return False
        body = getattr(statement, "body", [])
        names = set(holder.names)
        # with NamedTemporaryFile(delete=False) as f: path = f.name
        for stmt in body:
            if isinstance(stmt, ast.Assign) and mentions(stmt.value) & names:
                names.update(n for target in stmt.targets for n in target_names(target))
        aliased = Holder(holder.how, tuple(sorted(names)), holder.chained, statement)
        if body and _registers_cleanup_of(self.ctx, body[0], aliased.names):
            return True
        return self._cleaned(statement, aliased)

    def _after_fixture_yield(self, anchor: ast.AST, names: tuple[str, ...]) -> bool:
        scope = self.ctx.function_scope
        function = self.ctx.function
        if scope is None or function is None or not scope.is_fixture:
            return False
        facts = self.facts(function)
        line = getattr(anchor, "lineno", 0)
        if facts.yield_end is None or facts.yield_end < line:
            return False
        return any(facts.mentioned_after(name, facts.yield_end) for name in names)


# -- HRM102 ------------------------------------------------------------------------

TEARDOWN_METHODS = frozenset({"tearDown", "tearDownClass", "asyncTearDown"})
DIRECTORY_REMOVERS = frozenset({"shutil.rmtree", "os.rmdir", "os.removedirs"})


class RemovalInTearDownRule(Rule):
    """
    Flags a directory removed in `tearDown`/`tearDownClass` (`shutil.rmtree`, `os.rmdir`, `Path.rmdir`).

    ## Why is this bad?
    unittest calls `tearDown` only when `setUp` finished. When `setUp`
    makes the directory and then fails on a later line, the directory is
    never removed, and the failing run is the one nobody looks at
    afterwards. A cleanup registered with `addCleanup` right after the
    directory exists runs whether `setUp` or the test fails, in reverse
    order of registration.

    ## Example
    ```python
    class TestCache(unittest.TestCase):
        def setUp(self):
            self.root = tempfile.mkdtemp()
            self.cache = Cache(self.root)  # raises: tearDown never runs

        def tearDown(self):
            shutil.rmtree(self.root)
    ```

    ## Use instead
    ```python
    class TestCache(unittest.TestCase):
        def setUp(self):
            self.root = tempfile.mkdtemp()
            self.addCleanup(shutil.rmtree, self.root)
            self.cache = Cache(self.root)
    ```

    ## Options
    None.

    ## Known problems
    Any method named `tearDown`, `tearDownClass` or `asyncTearDown` counts,
    also in a mixin that is not itself a `TestCase`. A removal done by a
    project helper called from `tearDown` is not seen.
    """

    code = "HRM102"
    message = "{name}() in {method}() is skipped when setUp fails; register it with self.addCleanup() right after creating the directory"
    calls = DIRECTORY_REMOVERS
    methods = frozenset({"rmdir"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        scope = self.ctx.function_scope
        if scope is None or scope.name not in TEARDOWN_METHODS:
            return
        if self.ctx.scopes[-2].kind != "class" or self.ctx.scope is not scope:
            return
        name = self.ctx.call_name(node)
        if name not in DIRECTORY_REMOVERS:
            func = node.func
            if not (isinstance(func, ast.Attribute) and func.attr == "rmdir" and not node.args and name != "os.rmdir"):
                return
            name = "Path.rmdir"
        yield self.report(node, name=name, method=scope.name)


# -- HRM103 ------------------------------------------------------------------------

class RmtreeIgnoreErrorsRule(Rule):
    """
    Flags `shutil.rmtree(..., ignore_errors=True)` in a test file.

    ## Why is this bad?
    A cleanup that swallows its errors cannot tell anyone that it did not
    finish. A file still open on Windows, a read-only file, or a process
    still writing into the directory leaves a partial tree behind, and the
    next run (or another test on the same worker) finds it. Letting the
    error surface names the test that leaked.

    ## Example
    ```python
    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)
    ```

    ## Use instead
    ```python
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
    ```

    ## Options
    None.
    """

    code = "HRM103"
    message = "rmtree(ignore_errors=True) hides a cleanup that did not finish; let it fail loudly"
    calls = frozenset({"shutil.rmtree"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.ctx.call_name(node) != "shutil.rmtree":
            return
        ignore = _bool_keyword(node, "ignore_errors")
        if ignore is None and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            ignore = bool(node.args[1].value)
        if ignore:
            yield self.report(node)


# -- HRM104 ------------------------------------------------------------------------

class MonkeypatchUndoRule(Rule):
    """
    Flags `monkeypatch.undo()` on the `monkeypatch` fixture inside a test or fixture.

    ## Why is this bad?
    The `monkeypatch` fixture is one object per test, shared by the test
    and every fixture it uses. `undo()` reverts every change recorded on
    it, including the ones a fixture made to isolate the test (a pinned
    `HOME`, a patched clock), so the rest of the test runs against the real
    host. It is not a way to drop one patch early.

    ## Example
    ```python
    def test_fallback(monkeypatch):
        monkeypatch.setenv("TOKEN", "x")
        assert client().authenticated
        monkeypatch.undo()
        assert not client().authenticated
    ```

    ## Use instead
    ```python
    def test_fallback():
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TOKEN", "x")
            assert client().authenticated
        assert not client().authenticated
    ```

    ## Options
    None.
    """

    code = "HRM104"
    message = "monkeypatch.undo() also reverts what the fixtures set up; scope the patch with pytest.MonkeyPatch.context()"
    methods = frozenset({"undo"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "undo") or not self.ctx.in_test:
            return
        receiver = func.value
        if isinstance(receiver, ast.Call):
            # request.getfixturevalue("monkeypatch").undo()
            if not (
                isinstance(receiver.func, ast.Attribute)
                and receiver.func.attr == "getfixturevalue"
                and receiver.args
                and isinstance(receiver.args[0], ast.Constant)
                and receiver.args[0].value == "monkeypatch"
            ):
                return
        elif not (isinstance(receiver, ast.Name) and receiver.id == "monkeypatch" and self._is_parameter("monkeypatch")):
            return
        yield self.report(node)

    def _is_parameter(self, name: str) -> bool:
        for scope in self.ctx.scopes:
            if scope.kind == "function":
                args = scope.node.args  # type: ignore[attr-defined]
                if any(a.arg == name for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]):
                    return True
        return False


def saved_from(ctx: Context, value: ast.AST, readers: frozenset[str]) -> bool:
    """Whether ``value`` names a snapshot taken by one of ``readers`` (``saved =
    os.getcwd()``, ``self.env = os.environ.copy()``) in the same function, or for
    ``self.x``/``cls.x`` anywhere in the class: then writing it back is a restore."""
    target = dotted_name(value)
    if target is None:
        return False
    holder: ast.AST | None = ctx.function
    if target.startswith(("self.", "cls.")):
        class_scope = ctx.class_scope
        holder = class_scope.node if class_scope is not None else None
    if holder is None:
        return False
    for node in ast.walk(holder):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ctx.call_name(node.value) in readers
            and any(dotted_name(t) == target for t in node.targets)
        ):
            return True
    return False


# -- HRM105 ------------------------------------------------------------------------

class ChdirRule(Rule):
    """
    Flags `os.chdir()` and `os.fchdir()` anywhere in a test file.

    ## Why is this bad?
    The working directory belongs to the process, not to the test. A test
    that changes it and fails (or forgets) before changing it back leaves
    every later test on the same worker running somewhere else: relative
    paths resolve into the wrong tree and files get written into the
    checkout. Under `pytest -n auto` the victim is a test that happened to
    be scheduled next, which makes the failure look random.

    ## Example
    ```python
    def test_build(tmp_path):
        os.chdir(tmp_path)
        build()
    ```

    ## Use instead
    ```python
    def test_build(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        build()

    def test_build_ctx(tmp_path):
        with contextlib.chdir(tmp_path):
            build()
    ```

    ## Options
    None.

    ## Known problems
    Only the change is reported, not the way back: a `chdir` to a
    directory saved from `os.getcwd()` (or `Path.cwd()`) in the same
    function, or in an attribute of the same class (`self.old_cwd` saved in
    `setUp`), is taken as the restore half of a pair and stays quiet.
    """

    code = "HRM105"
    message = "{name}() leaks the working directory to later tests; use monkeypatch.chdir() or contextlib.chdir()"
    calls = frozenset({"os.chdir", "os.fchdir"})

    CWD_READERS = frozenset({"os.getcwd", "os.getcwdb", "pathlib.Path.cwd"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        if name in ("os.chdir", "os.fchdir") and not self.is_restore(node):
            yield self.report(node, name=name)

    def is_restore(self, call: ast.Call) -> bool:
        """Whether the call goes back to a directory saved from the current one."""
        return bool(call.args) and saved_from(self.ctx, call.args[0], self.CWD_READERS)


# -- HRM106 ------------------------------------------------------------------------

class ChildWithoutCwdRule(Rule):
    """
    Flags a child process started without `cwd=` in a test file.

    ## Why is this bad?
    A child inherits the working directory of the test run, which is
    usually the repository checkout. Whatever the child writes with a
    relative path (a build artefact, a cache, a log, a `git init`) lands in
    the checkout, where an assertion about `tmp_path` cannot see it and a
    careless commit can pick it up. The write happens in another process,
    so no line of the test shows it.

    Covered: `subprocess.run/call/check_call/check_output/Popen`,
    `asyncio.create_subprocess_exec/_shell`, `os.system`, `os.popen`,
    `os.spawn*`, `pexpect.spawn/run`. A call with `**kwargs` is not judged,
    and git's own `-C DIR`, `--git-dir` and `--work-tree` count as a
    chosen directory.

    ## Example
    ```python
    def test_init(tmp_path):
        subprocess.run(["git", "init", "repo"], check=True)
    ```

    ## Use instead
    ```python
    def test_init(tmp_path):
        subprocess.run(["git", "init", "repo"], cwd=tmp_path, check=True)
    ```

    ## Options
    `--hermetic-readonly-commands`: comma-separated command prefixes that
    only read, and may run anywhere (default: `git rev-parse`, `git status`,
    `git log`, `git diff`, `git show`, `git ls-files`, `git check-ignore`,
    `git config --get`). A literal argv whose last word is `--version` or
    `--help` is always allowed.
    """

    code = "HRM106"
    message = "{name}() runs the child in the inherited working directory (the checkout); pass cwd= a directory of the test's own"
    calls = SPAWNER_CALLS

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        child = child_process(node, self.ctx.call_name(node))
        if child is None or child.keyword("cwd") is not None or child.has_unpacked_kwargs:
            return
        argv = child.argv
        if argv:
            if argv[-1] in ("--version", "--help"):
                return
            if starts_with(argv, self.ctx.settings.readonly_commands):
                return
            git = child.git
            if git is not None and git.chooses_directory:
                return
        yield self.report(node, name=child.name)


# -- HRM107 ------------------------------------------------------------------------

ENVIRON = frozenset({"os.environ", "os.environb"})
ENVIRON_SNAPSHOTS = frozenset({"os.environ.copy", "os.environb.copy"})
ENVIRON_MUTATORS = frozenset({"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__", "__ior__"})


class RawEnvironMutationRule(Rule):
    """
    Flags a raw write to the process environment in a test file.

    ## Why is this bad?
    `os.environ` is shared by every test on the worker and inherited by
    every child it starts. A write that is not undone when the test ends,
    or is undone only on the happy path, changes what later tests (and the
    code under test, which often reads the environment once and caches it)
    see. Covered: `os.environ[k] = v`, `del os.environ[k]`,
    `os.environ.update/pop/popitem/setdefault/clear`, rebinding or `|=` on
    `os.environ`, `os.putenv`, `os.unsetenv`, and the same on
    `os.environb`. A write that is the last statement of a
    `with pytest.raises(...)` or `with self.assertRaises(...)` block is
    expected to be refused and is not flagged, and neither is the restore of
    a snapshot (`os.environ = saved` or `os.environ.update(saved)` where
    `saved = os.environ.copy()` in the same function, or in `self.saved`
    anywhere in the class): the write that made the snapshot necessary is
    the one reported.

    ## Example
    ```python
    def test_locale():
        os.environ["LANG"] = "C"
        assert render() == "..."
    ```

    ## Use instead
    ```python
    def test_locale(monkeypatch):
        monkeypatch.setenv("LANG", "C")
        assert render() == "..."

    @mock.patch.dict(os.environ, {"LANG": "C"})
    def test_locale_unittest(self):
        ...
    ```

    ## Options
    None.
    """

    code = "HRM107"
    message = "{what} changes the environment of every later test; use monkeypatch.setenv/delenv or mock.patch.dict(os.environ)"
    calls = frozenset({"os.putenv", "os.unsetenv"} | {f"{owner}.{method}" for owner in ENVIRON for method in ENVIRON_MUTATORS})

    def _is_environ(self, node: ast.AST) -> bool:
        return self.ctx.resolve(node) in ENVIRON

    def _targets(self, targets: list[ast.expr], node: ast.AST, verb: str) -> Iterator[Violation]:
        if expects_failure(self.ctx, node):
            return
        for target in targets:
            if isinstance(target, ast.Subscript) and self._is_environ(target.value):
                yield self.report(node, what=f"{verb} {self.ctx.resolve(target.value)}[...]")
                return
            if isinstance(target, ast.Attribute) and self._is_environ(target):
                value = getattr(node, "value", None)
                if value is None or not saved_from(self.ctx, value, ENVIRON_SNAPSHOTS):
                    yield self.report(node, what="rebinding os.environ")
                return
            if isinstance(target, (ast.Tuple, ast.List)):
                yield from self._targets(list(target.elts), node, verb)

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        yield from self._targets(node.targets, node, "assigning")

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Iterator[Violation]:
        if node.value is not None:
            yield from self._targets([node.target], node, "assigning")

    def visit_AugAssign(self, node: ast.AugAssign) -> Iterator[Violation]:
        target = node.target
        if isinstance(target, (ast.Name, ast.Attribute)) and self._is_environ(target):
            if not expects_failure(self.ctx, node):
                yield self.report(node, what="updating os.environ in place")
        else:
            yield from self._targets([target], node, "updating")

    def visit_Delete(self, node: ast.Delete) -> Iterator[Violation]:
        yield from self._targets(node.targets, node, "deleting")

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node) or ""
        owner, _, method = name.rpartition(".")
        if name in ("os.putenv", "os.unsetenv") or (owner in ENVIRON and method in ENVIRON_MUTATORS):
            restores = method == "update" and len(node.args) == 1 and saved_from(
                self.ctx, node.args[0], ENVIRON_SNAPSHOTS
            )
            if not restores and not expects_failure(self.ctx, node):
                yield self.report(node, what=f"{name}()")


# -- HRM108 ------------------------------------------------------------------------

SHARED_TEMP_PREFIXES = ("/tmp/", "/var/tmp/", "/dev/shm/")
PATH_JOINERS = frozenset({"os.path.join", "posixpath.join", "ntpath.join", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})


def _shared_temp_text(value: object) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not isinstance(value, str):
        return None
    if value.startswith(SHARED_TEMP_PREFIXES):
        return value
    return None


def _literal_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and bool(node.value)


class SharedTempPathRule(Rule):
    """
    Flags a fixed path in the machine-wide temp directory (`/tmp/...`, `/dev/shm/...`, a fixed name under `gettempdir()`).

    ## Why is this bad?
    A fixed path in a shared directory is shared by every test worker,
    every checkout on the machine and every user of it. Two workers that
    run the test at the same time write over each other's files, a file
    left by an earlier run (or by another user, with other permissions)
    changes the verdict, and nothing removes it afterwards. The path also
    does not exist on Windows, and it ignores `TMPDIR`.

    Flagged: a string or bytes literal (or the literal start of an
    f-string) that starts with `/tmp/`, `/var/tmp/` or `/dev/shm/`, and a
    fixed name joined onto
    `tempfile.gettempdir()` (`os.path.join(gettempdir(), "x")`,
    `Path(gettempdir()) / "x"`, `gettempdir() + "/x"`). A literal inside an
    `assert`, a comparison or an `assert*` call is data, not a location,
    and so is a docstring, and so is a literal in a table of literals (a
    list, tuple or set of two or more constants that is not itself a
    call's argument, like a list of URLs to parse); an argv list passed
    to a call is still flagged.

    ## Example
    ```python
    def test_dump():
        dump("/tmp/state.json")
        assert load("/tmp/state.json") == STATE
    ```

    ## Use instead
    ```python
    def test_dump(tmp_path):
        dump(tmp_path / "state.json")
        assert load(tmp_path / "state.json") == STATE
    ```

    ## Options
    None.
    """

    code = "HRM108"
    message = "{what} is a fixed path shared by every worker and run; use tmp_path (or a mkdtemp() with cleanup)"
    calls = PATH_JOINERS
    methods = frozenset({"joinpath"})

    def _is_data(self) -> bool:
        for ancestor, _ in self.ctx.ancestors_in_function():
            if isinstance(ancestor, (ast.Assert, ast.Compare)):
                return True
            if isinstance(ancestor, ast.Call):
                func = ancestor.func
                last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if last.startswith("assert"):
                    return True
            if isinstance(ancestor, ast.stmt):
                return False
        return False

    def visit_Constant(self, node: ast.Constant) -> Iterator[Violation]:
        text = _shared_temp_text(node.value)
        if text is None:
            return
        parent = self.ctx.parent
        if isinstance(parent, (ast.JoinedStr, ast.Expr)):
            return  # an f-string part is judged with its f-string; a bare string is a docstring
        if not self._is_data() and not self._in_table():
            yield self.report(node, what=repr(node.value))

    def _in_table(self) -> bool:
        """One of several literals in a list, tuple or set that is not a
        call's argument: a table of test data (URLs, expected paths), not an
        argv or a path being used."""
        parents = self.ctx.parents
        if not parents or not isinstance(parents[-1], (ast.List, ast.Tuple, ast.Set)):
            return False
        table = parents[-1]
        if len(table.elts) < 2 or not all(isinstance(e, ast.Constant) for e in table.elts):
            return False
        holder = parents[-2] if len(parents) > 1 else None
        return not isinstance(holder, (ast.Call, ast.keyword, ast.Starred))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Iterator[Violation]:
        if not node.values:
            return
        head = node.values[0]
        if isinstance(head, ast.Constant) and _shared_temp_text(head.value) is not None:
            if not isinstance(self.ctx.parent, ast.FormattedValue) and not self._is_data():
                yield self.report(node, what=f"an f-string starting {head.value!r}")
        elif isinstance(head, ast.FormattedValue) and self._is_gettempdir(head.value):
            if len(node.values) > 1 and isinstance(node.values[1], ast.Constant) and not self._is_data():
                yield self.report(node, what="a fixed name under gettempdir()")

    def _is_gettempdir(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            name = self.ctx.call_name(node)
            if name in GETTEMPDIR:
                return True
            if name in PATH_JOINERS and node.args:
                return self._is_gettempdir(node.args[0])
        return False

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node) or ""
        if name in PATH_JOINERS:
            args = node.args
            if len(args) >= 2 and self._is_gettempdir(args[0]) and any(_literal_name(a) for a in args[1:]):
                if not self._is_data():
                    yield self.report(node, what="a fixed name under gettempdir()")
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "joinpath":
            if self._is_gettempdir(node.func.value) and any(_literal_name(a) for a in node.args):
                if not self._is_data():
                    yield self.report(node, what="a fixed name under gettempdir()")

    def visit_BinOp(self, node: ast.BinOp) -> Iterator[Violation]:
        if not isinstance(node.op, (ast.Div, ast.Add)) or not _literal_name(node.right):
            return
        left = node.left
        # gettempdir() + os.sep + "x" parses as (gettempdir() + os.sep) + "x"
        while isinstance(left, ast.BinOp) and isinstance(left.op, (ast.Div, ast.Add)):
            left = left.left
        if self._is_gettempdir(left) and not self._is_data():
            if isinstance(self.ctx.parent, ast.BinOp) and self.ctx.parent.left is node:
                return  # reported once, on the outermost join
            yield self.report(node, what="a fixed name under gettempdir()")


# -- HRM109 ------------------------------------------------------------------------

HOME_CALLS = frozenset({"pathlib.Path.home", "pathlib.PosixPath.home", "pathlib.WindowsPath.home"})
EXPANDUSER_CALLS = frozenset({"os.path.expanduser", "posixpath.expanduser", "ntpath.expanduser"})
EXPANDUSER_METHODS = frozenset({"pathlib.Path().expanduser", "pathlib.PosixPath().expanduser", "pathlib.WindowsPath().expanduser"})
GETENV_CALLS = frozenset({"os.getenv", "os.environ.get", "os.getenvb", "os.environb.get"})


def _no_tilde(node: ast.AST | None) -> bool:
    """A literal path without ``~``: expanduser() leaves it alone."""
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    if isinstance(value, bytes):
        return not value.startswith(b"~")
    return isinstance(value, str) and not value.startswith("~")


def _env_key(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant):
        value = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        if value in HOME_VARIABLES:
            return value  # type: ignore[no-any-return]
    return None


class HomeReadRule(Rule):
    """
    Flags a read of the operator's home directory inside a function of a test file.

    ## Why is this bad?
    The home directory is the one place a test can reach the real user's
    configuration, credentials and caches. A test that resolves `~` reads
    (and often writes) the developer's own files: it passes on CI, where
    the home is empty, and behaves differently (or damages something) on a
    laptop. Flagged: `Path.home()`, `os.path.expanduser()` of a path that
    may start with `~`, `Path(...).expanduser()`, and `os.environ["HOME"]`,
    `os.getenv("HOME")`, `os.environ.get("HOME")` (also `USERPROFILE`).
    The same read at import time is HRM402.

    Not flagged when the same function pins the home on an earlier line
    (`monkeypatch.setenv("HOME", ...)`, `env["HOME"] = ...`,
    `mock.patch.dict(os.environ, {"HOME": ...})`, a patch of `Path.home`
    or `os.path.expanduser`, also as a decorator of the function or its
    class), or when an autouse fixture of a `conftest.py` above the file
    pins it for the whole tree.

    ## Example
    ```python
    def test_default_config():
        assert load_config().path == Path.home() / ".toolrc"
    ```

    ## Use instead
    ```python
    def test_default_config(tmp_path, monkeypatch):
        monkeypatch.setenv("HOME", str(tmp_path))
        assert load_config().path == Path.home() / ".toolrc"

    # or once for the whole suite, in tests/conftest.py
    @pytest.fixture(autouse=True)
    def isolated_home(tmp_path, monkeypatch):
        monkeypatch.setenv("HOME", str(tmp_path))
    ```

    ## Options
    None.
    """

    code = "HRM109"
    message = "{what} reads the operator's real home; pin HOME first (monkeypatch.setenv), or in an autouse conftest fixture"
    calls = HOME_CALLS | EXPANDUSER_CALLS | EXPANDUSER_METHODS | GETENV_CALLS

    __slots__ = ("_pin_lines",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._pin_lines: dict[int, list[int]] = {}

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node) or ""
        if name in HOME_CALLS:
            what = "Path.home()"
        elif name in EXPANDUSER_CALLS:
            if _no_tilde(node.args[0] if node.args else None):
                return
            what = f"{name}()"
        elif name in EXPANDUSER_METHODS:
            path_call = node.func.value  # type: ignore[attr-defined]
            if path_call.args and all(_no_tilde(a) for a in path_call.args):
                return
            what = "Path.expanduser()"
        elif name in GETENV_CALLS:
            key = _env_key(node.args[0] if node.args else None)
            if key is None:
                return
            what = f"{name}({key!r})"
        else:
            return
        if self._exempt(node):
            return
        yield self.report(node, what=what)

    def visit_Subscript(self, node: ast.Subscript) -> Iterator[Violation]:
        if not isinstance(node.ctx, ast.Load) or self.ctx.resolve(node.value) not in ENVIRON:
            return
        key = _env_key(node.slice)
        if key is not None and not self._exempt(node):
            yield self.report(node, what=f"{self.ctx.resolve(node.value)}[{key!r}]")

    def _exempt(self, node: ast.AST) -> bool:
        if self.ctx.at_module_level:
            return True  # import time: HRM402
        line = getattr(node, "lineno", 0)
        for scope in self.ctx.scopes:
            if scope.kind == "module":
                continue
            if any(pin <= line for pin in self._home_pins(scope.node)):
                return True
        return self.ctx.pins.home

    def _home_pins(self, definition: ast.AST) -> list[int]:
        found = self._pin_lines.get(id(definition))
        if found is None:
            if isinstance(definition, ast.ClassDef):
                sites = [site for d in definition.decorator_list for site in pin_sites(d)]
            else:
                sites = list(pin_sites(definition))
            found = self._pin_lines[id(definition)] = [line for line, pins in sites if pins.home]
        return found


# -- HRM110 ------------------------------------------------------------------------

SERVER_CLASSES = frozenset({
    "socketserver.TCPServer", "socketserver.UDPServer", "socketserver.ThreadingTCPServer",
    "socketserver.ThreadingUDPServer", "socketserver.ForkingTCPServer", "socketserver.ForkingUDPServer",
    "http.server.HTTPServer", "http.server.ThreadingHTTPServer",
    "xmlrpc.server.SimpleXMLRPCServer", "xmlrpc.server.DocXMLRPCServer", "xmlrpc.server.MultiPathXMLRPCServer",
    "wsgiref.simple_server.WSGIServer",
})
#: callee -> the index of the positional port argument
PORT_POSITIONS = {
    "asyncio.start_server": 2,
    "aiohttp.web.TCPSite": 2,
    "wsgiref.simple_server.make_server": 1,
}
PORT_KEYWORD_CALLS = frozenset({"aiohttp.web.run_app", "uvicorn.run"})


def _fixed_port(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value != 0:
        return node.value
    return None


def _address_port(node: ast.AST | None) -> int | None:
    """``(host, N)`` (or an IPv6 4-tuple) -> N."""
    if isinstance(node, ast.Tuple) and 2 <= len(node.elts) <= 4:
        return _fixed_port(node.elts[1])
    return None


class FixedPortRule(KnownClassesRule):
    """
    Flags a server that listens on a fixed, non-zero port number in a test file.

    ## Why is this bad?
    A port number is a machine-wide name. Two workers of the same run, two
    checkouts testing at once, or a service the developer has running
    already hold it, and the test fails with "address already in use", or
    worse, talks to the other process and passes for the wrong reason.
    Port 0 asks the kernel for a free port; the test reads the port it got
    and hands that to the client.

    Flagged: `.bind((host, N))`, `socket.create_server((host, N))`, the
    `socketserver`, `http.server`, `xmlrpc.server` and `wsgiref` server
    classes (and subclasses defined in the file) given `(host, N)`,
    `wsgiref.simple_server.make_server(host, N, app)`,
    `asyncio.start_server(cb, host, N)`, `loop.create_server(f, host, N)`,
    `aiohttp.web.TCPSite(runner, host, N)`, and `port=N` given to these or
    to `web.run_app`, `uvicorn.run` or an `app.run`. A call that is the
    last statement of a `with pytest.raises(...)` or
    `with self.assertRaises(...)` block is expected to fail and is not
    flagged.

    ## Example
    ```python
    def test_fetch():
        server = HTTPServer(("127.0.0.1", 8080), Handler)
        start(server)
        assert fetch("http://127.0.0.1:8080/").ok
    ```

    ## Use instead
    ```python
    def test_fetch():
        server = HTTPServer(("127.0.0.1", 0), Handler)
        host, port = server.server_address
        start(server)
        assert fetch(f"http://{host}:{port}/").ok
    ```

    ## Options
    None.
    """

    code = "HRM110"
    message = "listening on fixed port {port} collides with parallel workers and running services; bind port 0 and read the port back"
    calls = SERVER_CLASSES | frozenset(PORT_POSITIONS) | PORT_KEYWORD_CALLS | {"socket.create_server"}
    methods = frozenset({"bind", "create_server", "run"})

    known_classes = SERVER_CLASSES

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        port = self._port(node)
        if port is not None and not expects_failure(self.ctx, node):
            yield self.report(node, port=port)

    def _port(self, node: ast.Call) -> int | None:
        name = self.ctx.call_name(node) or ""
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) else ""
        args = node.args
        keyword_port = next((_fixed_port(k.value) for k in node.keywords if k.arg == "port"), None)
        if method == "bind" and len(args) == 1 and not node.keywords:
            return _address_port(args[0])
        if name == "socket.create_server" or self.is_known_class(name):
            return _address_port(args[0]) if args else None
        if name in PORT_POSITIONS:
            position = PORT_POSITIONS[name]
            return _fixed_port(args[position]) if len(args) > position else keyword_port
        if method == "create_server":
            return _fixed_port(args[2]) if len(args) > 2 else keyword_port
        if name in PORT_KEYWORD_CALLS or method == "run":
            return keyword_port
        return None


# -- HRM111 ------------------------------------------------------------------------

LIFECYCLE_METHODS = frozenset({
    "close", "aclose", "shutdown", "stop", "terminate", "kill", "join", "cancel",
    "disconnect", "dispose", "cleanup", "__exit__", "__aexit__",
})
PATCH_MODULES = frozenset({"unittest.mock", "mock"})
MOCKER_FIXTURES = frozenset({"mocker", "class_mocker", "module_mocker", "package_mocker", "session_mocker"})


@lru_cache(maxsize=None)
def is_stdlib_module(name: str) -> bool:
    """Whether ``name`` is a standard-library module (``os``, ``os.path``,
    ``asyncio.subprocess``), judged without importing anything."""
    top = name.partition(".")[0]
    if top not in sys.stdlib_module_names:
        return False
    if name == top or name == "os.path":
        return True
    base = os.path.join(sysconfig.get_paths()["stdlib"], *name.split("."))
    return os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py"))


def _patch_kind(name: str) -> str | None:
    """"patch" or "object" for ``mock.patch`` / ``mock.patch.object`` in any spelling."""
    for suffix, kind in ((".patch.object", "object"), (".patch", "patch")):
        if name.endswith(suffix):
            owner = name[: -len(suffix)]
            if owner in PATCH_MODULES or owner in MOCKER_FIXTURES:
                return kind
    return None


def _has_wraps(nodes: list[ast.AST]) -> bool:
    return any(
        isinstance(sub, ast.keyword) and sub.arg == "wraps"
        for node in nodes
        for sub in ast.walk(node)
    )


class LifecycleStubRule(Rule):
    """
    Flags a lifecycle method (`close`, `shutdown`, `stop`, `join`, ...) replaced by a stub.

    ## Why is this bad?
    A stub that replaces `close()` or `shutdown()` records the call and
    does nothing else, so whatever the real method stops keeps running: an
    exporter thread, a socket, a child process, a pool. It survives the
    test and changes the process for every later test on the worker (a
    multi-threaded process behaves differently at `fork()`, for one).
    Wrapping the real method observes the call and still stops the thing.

    Flagged: `mock.patch.object(obj, NAME)`, `mock.patch("pkg.mod.NAME")`,
    `monkeypatch.setattr(obj, NAME, ...)`, `monkeypatch.setattr("pkg.mod.NAME", ...)`
    (also `mocker.patch`), for NAME in `close`, `aclose`, `shutdown`,
    `stop`, `terminate`, `kill`, `join`, `cancel`, `disconnect`, `dispose`,
    `cleanup`, `__exit__`, `__aexit__`. A `wraps=` anywhere in the patch
    delegates to the real method and is not flagged, and neither is a
    function of a standard-library module (`patch("os.kill")`,
    `patch.object(os, "close")`): that stubs a system call, not an object's
    lifecycle.

    ## Example
    ```python
    def test_flush_on_exit(self):
        with mock.patch.object(MeterProvider, "shutdown") as shutdown:
            run_app()
        shutdown.assert_called_once()
    ```

    ## Use instead
    ```python
    def test_flush_on_exit(self):
        with mock.patch.object(MeterProvider, "shutdown", autospec=True,
                               wraps=MeterProvider.shutdown) as shutdown:
            run_app()
        shutdown.assert_called_once()
    ```

    ## Options
    None.
    """

    code = "HRM111"
    message = "stubbing {attribute}() leaves what it stops running after the test; spy with wraps= the real method"
    calls = frozenset(f"{owner}{suffix}" for owner in PATCH_MODULES | MOCKER_FIXTURES for suffix in (".patch", ".patch.object"))
    methods = frozenset({"setattr"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        found = self._stubbed(node)
        if found is not None:
            yield self.report(node, attribute=found)

    def _stubbed(self, node: ast.Call) -> str | None:
        name = self.ctx.call_name(node) or ""
        kind = _patch_kind(name)
        func = node.func
        args = node.args
        if kind is None and isinstance(func, ast.Attribute) and func.attr == "setattr":
            kind = "setattr"
        if kind is None or _has_wraps([*args, *node.keywords]):
            return None
        target = args[0] if args else next((k.value for k in node.keywords if k.arg == "target"), None)
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            if kind == "object":
                return None
            owner, _, attribute = target.value.rpartition(".")
            if attribute in LIFECYCLE_METHODS and owner and not is_stdlib_module(owner):
                return attribute
            return None
        if kind in ("object", "setattr") and len(args) >= 2:
            name_given = args[1].value if isinstance(args[1], ast.Constant) else None
            if isinstance(name_given, str) and name_given in LIFECYCLE_METHODS:
                if not is_stdlib_module(self.ctx.resolve(args[0]) or ""):
                    return name_given
        return None


# -- HRM112 ------------------------------------------------------------------------

THREAD_CLASSES = frozenset({"threading.Thread", "threading.Timer"})
JOIN_METHODS = frozenset({"join"})
START_METHODS = frozenset({"start"})


class UnjoinedThreadRule(KnownClassesRule, FunctionRule):
    """
    Flags a `threading.Thread` (or `Timer`) started in a function that never joins it.

    ## Why is this bad?
    A thread that is not joined outlives the test that started it. It keeps
    reading state the next test is changing, writes into directories that
    were already removed (and so re-creates them), and makes the worker
    process multi-threaded, which changes what `fork()` may do. When it
    fails, the traceback lands in whichever test is running at the time.

    The thread counts as joined when the same function calls `.join(` on
    it (or on the loop variable of a loop over a list of threads), passes
    it to a cleanup registration (`addCleanup(t.join)`) or to a helper
    whose name contains `join`, manages it with a `with` block, or is a
    fixture that joins it after `yield`. A thread that is never started
    is not flagged, and neither is one a plain helper function returns to
    its caller.

    ## Example
    ```python
    def test_consumer():
        worker = threading.Thread(target=consume, args=(queue,), daemon=True)
        worker.start()
        queue.put(1)
        assert results.get(timeout=5) == 1
    ```

    ## Use instead
    ```python
    def test_consumer():
        worker = threading.Thread(target=consume, args=(queue,))
        worker.start()
        queue.put(1)
        assert results.get(timeout=5) == 1
        queue.put(STOP)
        worker.join(timeout=5)
        assert not worker.is_alive()
    ```

    ## Options
    None.

    ## Known problems
    A thread that a test keeps on `self` and another method of the class
    joins (`tearDown`, a `stop()`) is taken as joined. One started in
    `setUp` and joined only in `tearDown` is still flagged, because a
    failure later in `setUp` skips `tearDown`: register the join with
    `addCleanup` where the thread starts. Subclasses of
    `Thread` are recognised when they are defined in the same file.
    """

    code = "HRM112"
    message = "thread started here is never joined in this function and outlives the test; join it with a timeout (or addCleanup(t.join))"
    calls = THREAD_CLASSES

    known_classes = THREAD_CLASSES

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        if not self.is_known_class(name):
            return
        function = self.ctx.function
        if function is None:
            return
        holder = holder_of(self.ctx, node)
        if holder.chained == "start":
            yield self.report(node)
            return
        if holder.how != "assigned" or not holder.names or self.handed_back(holder):
            return
        facts = self.facts(function)
        if not any(facts.called(n, START_METHODS) for n in holder.names):
            return
        for n in holder.names:
            if facts.called(n, JOIN_METHODS, handed_over=True) or n in facts.registered or n in facts.managed:
                return
            if facts.passed_to(n, lambda callee: "join" in callee):
                return
        if self.joined_elsewhere_in_class(holder.names):
            return
        yield self.report(node)

    def joined_elsewhere_in_class(self, names: tuple[str, ...]) -> bool:
        """A thread kept on ``self`` by a test may be joined by another method
        of the class (``tearDown``, a ``stop()`` the test calls). Not when it
        is started in ``setUp``: a failure later in ``setUp`` skips ``tearDown``."""
        kept = {n for n in names if n.startswith(("self.", "cls."))}
        class_scope = self.ctx.class_scope
        function = self.ctx.function
        if not kept or class_scope is None or function is None or function.name.startswith(("setUp", "asyncSetUp")):
            return False
        for sub in ast.walk(class_scope.node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in JOIN_METHODS
                and dotted_name(sub.func.value) in kept
            ):
                return True
        return False


# -- HRM113 ------------------------------------------------------------------------

REAPERS = frozenset({"wait", "communicate", "kill", "terminate", "__exit__"})


def _reaps(callee: str) -> bool:
    """``kill_python(p)``, ``wait_process(p)``, ``reap_children(p)``; not
    ``wait_for_banner(p)``, which waits for output, not for the exit."""
    if any(word in callee for word in ("kill", "terminate", "reap", "communicate")):
        return True
    return "wait" in callee and "wait_for" not in callee and "wait_until" not in callee


class UnwaitedPopenRule(FunctionRule):
    """
    Flags a `subprocess.Popen(...)` that the same function never waits on or kills.

    ## Why is this bad?
    A child that nobody waits for keeps running after the test ends (a
    server, a sleeper standing in for a hung process), holds its files and
    ports, and becomes a zombie when it exits. Killing it only on the
    happy path leaks it exactly when the test fails. `with Popen(...)`
    waits on exit; otherwise kill and wait in a `finally` or a registered
    cleanup.

    The child counts as handled when the function calls `.wait`,
    `.communicate`, `.kill` or `.terminate` on it (or on the loop variable
    of a loop over a list of children), passes it to a cleanup
    registration or to a helper whose name says it waits for it, kills,
    terminates or reaps it (`kill_python(p)`, `wait_process(p)`; not
    `wait_for_output(p)`), or uses it as a `with` item. A plain helper
    function that returns the child hands it to its caller, and a `Popen`
    that is the last statement of a `with pytest.raises(...)` or
    `with self.assertRaises(...)` block is expected not to start.

    ## Example
    ```python
    def test_server_answers():
        server = subprocess.Popen([sys.executable, "-m", "http.server", "0"], cwd=root)
        assert wait_for_banner(server)
        server.kill()  # skipped when the assertion fails
    ```

    ## Use instead
    ```python
    def test_server_answers():
        with subprocess.Popen([sys.executable, "-m", "http.server", "0"], cwd=root) as server:
            try:
                assert wait_for_banner(server)
            finally:
                server.kill()
    ```

    ## Options
    None.

    ## Known problems
    A child kept on `self` and killed in `tearDown` is flagged: register
    the cleanup where it starts. A test or fixture that returns the child
    is flagged too (a fixture should yield it and kill it afterwards).
    """

    code = "HRM113"
    message = "Popen() child is never waited on or killed in this function and outlives the test; use with Popen(...) or kill and wait in finally/addCleanup"
    calls = frozenset({"subprocess.Popen"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.ctx.call_name(node) != "subprocess.Popen":
            return
        holder = holder_of(self.ctx, node)
        if holder.chained in REAPERS or holder.how in ("with", "registered") or self.handed_back(holder):
            return
        if expects_failure(self.ctx, node):
            return
        function = self.ctx.function
        if holder.how == "assigned" and holder.names and function is not None:
            facts = self.facts(function)
            for n in holder.names:
                if facts.called(n, REAPERS, handed_over=True) or n in facts.registered or n in facts.managed:
                    return
                if facts.passed_to(n, _reaps):
                    return
        yield self.report(node)


# -- HRM114 ------------------------------------------------------------------------

TASK_FACTORIES = frozenset({"asyncio.create_task", "asyncio.ensure_future"})


class DetachedTaskRule(Rule):
    """
    Flags an asyncio task created as a bare statement, its handle thrown away.

    ## Why is this bad?
    Nobody can await, cancel or even see a task whose handle was dropped.
    It keeps running after the test returns, resolves paths and
    configuration from whatever the next test set up, and when the loop
    closes it is destroyed mid-flight ("Task was destroyed but it is
    pending"), with its `finally` blocks running at some later garbage
    collection. The event loop holds only a weak reference, so the task
    may also vanish before it finishes.

    Flagged: `asyncio.create_task(...)`, `asyncio.ensure_future(...)` and
    `loop.create_task(...)` as expression statements. A task group's
    `tg.create_task(...)` is owned by the group and is not flagged: the
    receiver is bound by `async with asyncio.TaskGroup() as name`, or is
    named `tg` or has `group` or `nursery` in its name. A call that is the
    last statement of a `with pytest.raises(...)` or
    `with self.assertRaises(...)` block is expected to be refused and is
    not flagged.

    ## Example
    ```python
    async def test_heartbeat():
        asyncio.create_task(heartbeat(conn))
        assert await conn.recv() == b"ping"
    ```

    ## Use instead
    ```python
    async def test_heartbeat():
        task = asyncio.create_task(heartbeat(conn))
        try:
            assert await asyncio.wait_for(conn.recv(), timeout=5) == b"ping"
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def test_heartbeat_group():
        async with asyncio.TaskGroup() as tg:
            tg.create_task(heartbeat(conn))
            ...
    ```

    ## Options
    None.

    ## Known problems
    A task group passed into a helper under another name (`g`) is taken
    for an event loop.
    """

    code = "HRM114"
    message = "{name}() result is discarded: the task outlives the test; keep it and await or cancel it"

    def visit_Expr(self, node: ast.Expr) -> Iterator[Violation]:
        call = node.value
        if not isinstance(call, ast.Call):
            return
        name = self.ctx.call_name(call) or ""
        func = call.func
        # expects_failure() climbs the ancestors: only for the few calls that would be reported
        if name in TASK_FACTORIES:
            if not expects_failure(self.ctx, node):
                yield self.report(call, name=name)
        elif isinstance(func, ast.Attribute) and func.attr == "create_task" and not self._is_task_group(func.value):
            if not expects_failure(self.ctx, node):
                yield self.report(call, name=f"{self.ctx.resolve(func.value) or '...'}.create_task")

    def _is_task_group(self, receiver: ast.expr) -> bool:
        text = dotted_name(receiver)
        if text is None:
            return False
        last = text.rpartition(".")[2].lower()
        if last == "tg" or "group" in last or "nursery" in last:
            return True
        for ancestor, _ in self.ctx.ancestors_in_function():
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                for item in ancestor.items:
                    if text in target_names(item.optional_vars):
                        owner = self.ctx.resolve(item.context_expr) or ""
                        return owner.rstrip("()").endswith("TaskGroup")
        return False


# -- HRM115 ------------------------------------------------------------------------

GIT_WRITES = frozenset({
    "commit", "tag", "merge", "rebase", "am", "cherry-pick", "revert", "pull", "fetch", "clone",
    "init", "push", "gc", "stash", "worktree", "notes", "submodule",
})


class GitUserConfigRule(FunctionRule):
    """
    Flags a git command that writes, run by a child process with the operator's own git config.

    ## Why is this bad?
    git reads `~/.gitconfig` and the system config on every call. On a
    developer's machine that config signs commits (and waits for a GPG
    agent or a hardware key), runs hooks and templates, rewrites URLs,
    sets the default branch name and merge strategy, or points at a
    credential helper. The same test then passes on CI and hangs, fails
    or behaves differently on a laptop, and a `push` or `fetch` may reach
    a real remote with real credentials.

    Flagged: `commit`, `tag`, `merge`, `rebase`, `am`, `cherry-pick`,
    `revert`, `pull`, `fetch`, `clone`, `init`, `push`, `gc`, `stash`,
    `worktree`, `notes`, `submodule` in a literal argv, unless git gets a
    `-c` option before the subcommand or an `env=` that sets
    `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_NOSYSTEM` or `HOME`. An `env=` built
    outside the function (a parameter, a helper's result) is trusted. The
    same function pinning those variables on an earlier line, or an
    autouse fixture of a `conftest.py` above the file pinning them,
    exempts the call.

    ## Example
    ```python
    def test_log(tmp_path):
        subprocess.run(["git", "init"], cwd=tmp_path, check=True)
        subprocess.run(["git", "commit", "--allow-empty", "-m", "x"], cwd=tmp_path, check=True)
    ```

    ## Use instead
    ```python
    def git(*args, cwd):
        env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        return subprocess.run(["git", *args], cwd=cwd, env=env, check=True)

    def test_log(tmp_path):
        git("init", cwd=tmp_path)
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--allow-empty", "-m", "x", cwd=tmp_path)
    ```

    ## Options
    None.
    """

    code = "HRM115"
    message = "git {subcommand} runs with the operator's git config (signing, hooks, templates); set GIT_CONFIG_GLOBAL/GIT_CONFIG_NOSYSTEM in env= or use -c"
    calls = SPAWNER_CALLS

    __slots__ = ("_environments",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._environments: dict[int, tuple[list[int], dict[str, bool]]] = {}

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        child = child_process(node, self.ctx.call_name(node))
        if child is None or child.has_unpacked_kwargs:
            return
        git = child.git
        if git is None or git.subcommand not in GIT_WRITES or git.sets_config:
            return
        env = child.keyword("env")
        if env is not None and self._env_isolates(env):
            return
        if self._pinned_before(node) or self.ctx.pins.git_config:
            return
        yield self.report(node, subcommand=git.subcommand)

    def _env_isolates(self, env: ast.expr) -> bool:
        if isinstance(env, ast.Dict) or (isinstance(env, ast.Call) and self.ctx.call_name(env) == "dict"):
            return any(key in PINNED_VARIABLES for key in mapping_keys(env))
        if self.ctx.resolve(env) in ENVIRON:
            return False
        function = self.ctx.function
        if not isinstance(env, ast.Name) or function is None:
            # os.environ.copy(), self.env, make_env(): built elsewhere, trusted
            return self.ctx.resolve(env) not in ("os.environ.copy", "os.environ().copy")
        _, names = self._environment(function)
        return names.get(env.id, True)

    def _pinned_before(self, node: ast.AST) -> bool:
        line = getattr(node, "lineno", 0)
        for scope in self.ctx.scopes:
            if scope.kind == "function":
                lines, _ = self._environment(scope.node)  # type: ignore[arg-type]
                if any(pin <= line for pin in lines):
                    return True
        return False

    def _environment(self, function: FunctionNode) -> tuple[list[int], dict[str, bool]]:
        """The lines where ``function`` pins git config in its own
        environment, and for each name it assigns whether some statement
        sets a pinning key in it."""
        found = self._environments.get(id(function))
        if found is not None:
            return found
        pin_lines: list[int] = []
        names: dict[str, bool] = {}
        for sub in ast.walk(function):
            if isinstance(sub, ast.Assign):
                for target in sub.targets:
                    if isinstance(target, ast.Name):
                        isolating = any(k in PINNED_VARIABLES for k in mapping_keys(sub.value))
                        names[target.id] = names.get(target.id, False) or isolating
            pins = pin_of(sub)
            if not pins.git_config:
                continue
            receiver = self._pinned_mapping(sub)
            if receiver is None:
                pin_lines.append(getattr(sub, "lineno", 0))
            else:
                names[receiver] = True
        found = self._environments[id(function)] = (pin_lines, names)
        return found

    @staticmethod
    def _pinned_mapping(node: ast.AST) -> str | None:
        """The local mapping a pin writes into (``env["HOME"] = h``,
        ``env.update(HOME=h)``), or None when it pins the process itself."""
        target: ast.AST | None = None
        if isinstance(node, (ast.Assign, ast.Delete)):
            target = node.targets[0]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            target = node.target
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func
        if isinstance(target, (ast.Subscript, ast.Attribute)) and isinstance(target.value, ast.Name):
            name = target.value.id
            return None if name in ("os", "environ", "monkeypatch", "mp", "mock", "patch") else name
        return None
