"""HRM1xx: side effects that outlive the test.

The rules that follow a value (a temp directory, a thread, a child) ask
where the call's result goes (:func:`holder_of`) and then look for its
cleanup in the enclosing function only (:class:`FunctionFacts`, built at
most once per function and rule, and only when a candidate is seen).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from flake8_hermetic.context import Context
from flake8_hermetic.nodes import DEF_TYPES, NEW_FRAMES, FunctionNode
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.facts.mocks import MOCKER_FIXTURES, PATCH_MODULES, is_stdlib_module, mocked_here, patch_kind
from flake8_hermetic.facts.hostpins import HOME_VARIABLES, PINNED_VARIABLES, mapping_keys, pin_of, pin_sites
from flake8_hermetic.facts.processes import (
    SPAWNER_CALLS, ArgvReader, AssignedValues, CwdJudge, child_process, child_words,
)
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation

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
        if isinstance(ancestor, NEW_FRAMES):
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
        if isinstance(stmt, NEW_FRAMES):
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
        if isinstance(stmt, NEW_FRAMES):
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

    Left alone as well, because the removal is in view: a result kept on
    `self` (or `cls`, or a module global in `setUpModule`), also under a
    name derived from it (`self.fname = fname.lower()`), that the matching
    teardown (`tearDown`, `tearDownClass`, `teardown_method`,
    `tearDownModule`, also inherited from a base class in the file)
    removes or hands to a function whose name says it cleans: a failure
    later in `setUp` skips `tearDown`, but the pair is the idiom unittest
    is built around (HRM102 reports a `setUp` where that failure is
    likely); a registration or removal reached only through lines that
    merely name the result again, also through path-building calls
    (`self.tdp = Path(self.td.name).resolve()`); a `try` whose body begins
    by removing the result, or a loop over the results that removes each
    (`for fd, name in temps: os.unlink(name)`); names collected from a
    `with NamedTemporaryFile(delete=False)` block into a list that a
    `finally` removes; and a result made inside a `with` block whose
    manager, defined in the same file, swaps `tempfile.tempdir` for a
    directory it removes.

    ## Known problems
    A `NamedTemporaryFile(delete=False)` used as a `with` item is closed but
    not removed, so it needs the same cleanup as any other result: a
    registration as the first statement of the `with` body or the statement
    after it (also through a name assigned from it in the body), or a
    `finally`. A removal done by a helper the test calls is not followed,
    nor one reached only through an `except` that removes and re-raises.
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
        elif self._cleaned(node, holder) or self._removed_by_teardown(holder):
            return
        if "dir" not in {k.arg for k in node.keywords} and self._inside_swapped_tempdir(node):
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
            if self._removed_right_away(stmt, named):
                return True
            first = _cannot_fail(stmt, named) or self._derives_path(stmt, named)
        return self._after_fixture_yield(anchor, names)

    def _derives_path(self, stmt: ast.stmt, names: set[str]) -> bool:
        """``self.path = Path(tmp.name).resolve()``, ``fds = [fd for fd, _ in temps]``:
        naming the result again through calls that only build paths; adds
        the targets to ``names``."""
        if not isinstance(stmt, ast.Assign) or not mentions(stmt.value) & names:
            return False
        for sub in ast.walk(stmt.value):
            if isinstance(sub, ast.Call) and self.ctx.call_name(sub) not in PATH_CARRIERS:
                if not (isinstance(sub.func, ast.Attribute) and sub.func.attr in ("resolve", "absolute")):
                    return False
        names.update(n for target in stmt.targets for n in target_names(target))
        return True

    def _removed_right_away(self, stmt: ast.stmt, names: set[str]) -> bool:
        """A ``try`` whose body begins by removing the result, or a loop over
        the results that removes each (``for fd, name in temps: os.unlink(name)``)."""
        names = set(names)
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and mentions(stmt.iter) & names:
            names.update(target_names(stmt.target))
        elif not isinstance(stmt, ast.Try):
            return False
        for inner in stmt.body:
            if _registers_cleanup_of(self.ctx, inner, tuple(names)) or _removes(inner, names):
                return True
            if self._removed_right_away(inner, names):
                return True
            if not (_cannot_fail(inner, names) or self._derives_path(inner, names)):
                return False
        return False

    def _removed_by_teardown(self, holder: Holder) -> bool:
        """Kept on ``self`` (``cls``, or a module global in ``setUpModule``)
        and removed by the matching teardown method, which runs after every
        test however it ends."""
        owner, method = method_of(self.ctx)
        function = self.ctx.function
        if method is None or function is None:
            return False
        teardowns: tuple[str, ...]
        if owner is None:
            if method.name not in MODULE_SETUPS:
                return False
            kept, teardowns, body = set(holder.names), MODULE_TEARDOWNS, self.ctx.tree.body
        else:
            kept = {n for n in holder.names if n.startswith(("self.", "cls."))}
            # ``self.fname = fname.lower()``, ``self.root = root``: kept under another name
            for sub in ast.walk(function):
                if isinstance(sub, ast.Assign) and mentions(sub.value) & set(holder.names):
                    kept.update(
                        n for t in sub.targets for n in target_names(t) if n.startswith(("self.", "cls."))
                    )
            teardowns = CLASS_TEARDOWNS if method.name in CLASS_SETUPS else INSTANCE_TEARDOWNS
            body = [s for c in class_family(self.ctx, owner) for s in c.body]
        if not kept:
            return False
        for teardown in body:
            if isinstance(teardown, DEF_TYPES) and teardown.name in teardowns:
                loops = {
                    name for sub in ast.walk(teardown) if isinstance(sub, (ast.For, ast.comprehension))
                    and mentions(sub.iter) & kept for name in target_names(sub.target)
                }
                if any(
                    isinstance(sub, ast.stmt) and (_removes(sub, kept | loops) or _registers_cleanup_of(
                        self.ctx, sub, tuple(kept))) for sub in ast.walk(teardown)
                ) or any(
                    isinstance(sub, ast.Call) and "clean" in (dotted_name(sub.func) or "").rpartition(".")[2].lower()
                    and any(dotted_name(a) in kept for a in sub.args) for sub in ast.walk(teardown)
                ):
                    return True
        return False

    def _inside_swapped_tempdir(self, node: ast.Call) -> bool:
        """Inside a ``with`` block whose manager, defined in this file, swaps
        ``tempfile.tempdir`` (and so makes and removes the directory the new
        one lands in)."""
        local = {
            d.name: d for d in self.ctx.tree.body if isinstance(d, DEF_TYPES)
        }
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if not isinstance(ancestor, (ast.With, ast.AsyncWith)) or on_path in ancestor.items:
                continue
            for item in ancestor.items:
                call = item.context_expr
                manager = local.get(dotted_name(call.func) or "") if isinstance(call, ast.Call) else None
                if manager is not None and any(
                    (isinstance(sub, ast.Attribute) and sub.attr == "tempdir")
                    or (isinstance(sub, ast.Constant) and sub.value == "tempdir")
                    for sub in ast.walk(manager)
                ):
                    return True
        return False

    def _cleaned_after_with(self, holder: Holder) -> bool:
        statement = holder.statement
        if statement is None or not holder.names:
            return False
        body = getattr(statement, "body", [])
        names = set(holder.names)
        # with NamedTemporaryFile(delete=False) as f: path = f.name; names.append(f.name)
        for stmt in body:
            if isinstance(stmt, ast.Assign) and mentions(stmt.value) & names:
                names.update(n for target in stmt.targets for n in target_names(target))
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in CONTAINER_METHODS:
                if set().union(*(mentions(a) for a in call.args)) & names:
                    names.update(target_names(call.func.value))
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

    Flagged only when the same class's `setUp` (`setUpClass` for
    `tearDownClass`, `asyncSetUp` or `setUp` for `asyncTearDown`) makes a
    directory (`mkdtemp`, `mkdir`, `makedirs`, `copytree`,
    `TemporaryDirectory`, `extractall`, `unpack_archive`, a helper's
    `self.mktemp(...)`) and then runs a statement that may raise. Left
    alone: a class whose setUp is not in view (a directory the test
    itself makes is still removed when the test fails, because
    `tearDown` runs whenever `setUp` finished), a setUp whose creation
    is its last real work (what follows is only names, literals,
    `os.getcwd()`, `os.chdir()` into it, `os.path` string work,
    `sys.path.insert`, `addCleanup`, or `super().setUp()` when every base
    is unittest's own `TestCase`, whose setUp does nothing), and a setUp that wraps the rest in
    `try`/`except` that removes the directory and re-raises.

    ## Known problems
    Any method named `tearDown`, `tearDownClass` or `asyncTearDown` counts,
    also in a mixin that is not itself a `TestCase`. A removal done by a
    project helper called from `tearDown` is not seen, and a directory
    made by a base class's `setUp` is not seen either.
    """

    code = "HRM102"
    message = "{name}() in {method}() is skipped when setUp fails; register it with self.addCleanup() right after creating the directory"
    calls = DIRECTORY_REMOVERS
    methods = frozenset({"rmdir"})

    __slots__ = ("_verdicts",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._verdicts: dict[tuple[int, str], bool] = {}

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
        if self._setup_may_fail_after_creating(scope.name):
            yield self.report(node, name=name, method=scope.name)

    def _setup_may_fail_after_creating(self, teardown: str) -> bool:
        """Whether the class's matching setUp makes a directory and then
        runs a statement that may raise, unguarded: the one case the
        removal in tearDown is skipped."""
        class_scope = self.ctx.class_scope
        if class_scope is None:
            return False
        cached = self._verdicts.get((id(class_scope.node), teardown))
        if cached is None:
            setups = SETUP_FOR_TEARDOWN[teardown]
            cached = any(
                _fails_after_creating(self.ctx, stmt)
                for stmt in class_scope.node.body  # type: ignore[attr-defined]
                if isinstance(stmt, DEF_TYPES) and stmt.name in setups
            )
            self._verdicts[(id(class_scope.node), teardown)] = cached
        return cached


SETUP_FOR_TEARDOWN = {
    "tearDown": ("setUp",),
    "tearDownClass": ("setUpClass",),
    "asyncTearDown": ("asyncSetUp", "setUp"),
}
#: the last name of calls that make a directory (``self.mkdtemp()`` of a helper too)
DIRECTORY_MAKERS = frozenset({
    "mkdtemp", "mkdir", "makedirs", "copytree", "TemporaryDirectory", "temp_dir", "extractall", "unpack_archive",
    "mktemp",  # a helper's self.mktemp("a", "b") makes the tree; tempfile.mktemp() only names it
})


#: calls that cannot realistically fail in a setUp right after the directory is made
SAFE_CALLS = frozenset({
    "os.getcwd", "os.chdir", "os.fspath", "str", "os.path.join", "os.path.dirname", "os.path.basename",
    "os.path.abspath", "os.path.normpath",
})


def _makes_directory(stmt: ast.stmt) -> bool:
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Call):
            func = sub.func
            last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if last in DIRECTORY_MAKERS and dotted_name(func) != "tempfile.mktemp":
                return True
    return False


def _simple(node: ast.AST | None) -> bool:
    """A value that cannot realistically raise: a name, an attribute, a
    literal, a slice copy (``sys.path[:]``), or a container of those."""
    if node is None or isinstance(node, (ast.Constant, ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.Call):
        # os.getcwd(), os.path.join(d, "x"), os.path.dirname(m.__file__)
        return (dotted_name(node.func) or "") in SAFE_CALLS and all(_simple(a) for a in node.args)
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Slice) and _simple(node.value)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_simple(e) for e in node.elts)
    return False


def _cannot_raise(ctx: Context, stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return _simple(stmt.value)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if ctx.call_name(call) == "os.chdir":
            return all(_simple(a) for a in call.args)
        if _inherited_noop_setup(ctx, call):
            return True
        # self.addCleanup(...), sys.path.insert(0, d): bookkeeping, not work
        if isinstance(func, ast.Attribute) and (func.attr in CONTAINER_METHODS or func.attr in CLEANUP_REGISTRARS):
            return all(_simple(a) for a in call.args)
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _inherited_noop_setup(ctx: Context, call: ast.Call) -> bool:
    """``super().setUp()`` in a class whose bases are all unittest's own
    TestCase classes, whose setUp methods do nothing."""
    func = call.func
    if call.args or call.keywords or not isinstance(func, ast.Attribute) or func.attr not in SETUP_METHODS:
        return False
    if not (isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
        return False
    class_scope = ctx.class_scope
    bases = getattr(class_scope.node, "bases", []) if class_scope is not None else []
    return bool(bases) and all((ctx.resolve(base) or "").startswith("unittest.") for base in bases)


SETUP_METHODS = frozenset({"setUp", "setUpClass", "asyncSetUp"})
#: pytest's own fixtures that change into their directory and back at teardown
CWD_FIXTURES = frozenset({"pytester", "testdir"})


def _removes_and_reraises(stmt: ast.stmt) -> bool:
    """``try: ... except: shutil.rmtree(d); raise``: setUp cleans up after itself."""
    if not isinstance(stmt, ast.Try):
        return False
    for handler in stmt.handlers:
        removes = any(
            isinstance(sub, ast.Call) and (getattr(sub.func, "attr", None) or getattr(sub.func, "id", "")) in REMOVERS
            for inner in handler.body for sub in ast.walk(inner)
        )
        if removes and any(isinstance(inner, ast.Raise) for inner in handler.body):
            return True
    return any(_removes(inner, set().union(*(mentions(t) for t in stmt.body))) for inner in stmt.finalbody)


def _fails_after_creating(ctx: Context, setup: FunctionNode) -> bool:
    created = False
    for stmt in setup.body:
        if not created:
            if _makes_directory(stmt):
                if _removes_and_reraises(stmt):
                    continue
                created = True
                if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)):
                    return True  # made inside a loop or block that goes on working
            continue
        if not (_cannot_raise(ctx, stmt) or _removes_and_reraises(stmt)):
            return True
    return False


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

    Left alone: a pre-clean directly followed by `os.mkdir`/`os.makedirs`
    (or `Path(...).mkdir()`) of the same path, where a removal that did
    not finish surfaces at once as a failing `mkdir`; and a call on a path
    that one of the three statements before showed `rmtree` to fail on
    (`assertRaises(OSError, shutil.rmtree, p)`, or `shutil.rmtree(p)`
    inside `with pytest.raises(...)`), which tests `ignore_errors` itself.

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
        if ignore and not self._not_a_cleanup(node):
            yield self.report(node)

    def _not_a_cleanup(self, node: ast.Call) -> bool:
        """A pre-clean right before the directory is made again, or an
        ``ignore_errors`` call on a path the statements just before showed
        ``rmtree`` to fail on (a test of ``rmtree`` itself)."""
        found = self.ctx.statement(node)
        if found is None or not node.args:
            return False
        stmt, siblings, index = found
        if not (isinstance(stmt, ast.Expr) and stmt.value is node):
            return False
        path = ast.dump(node.args[0])
        if index + 1 < len(siblings) and self._makes(siblings[index + 1], path):
            return True
        return any(self._shown_to_fail(earlier, path) for earlier in siblings[max(0, index - 3):index])

    def _makes(self, stmt: ast.stmt, path: str) -> bool:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call):
            return False
        name = self.ctx.call_name(call) or ""
        func = call.func
        if name in ("os.mkdir", "os.makedirs") and call.args:
            return ast.dump(call.args[0]) == path
        if isinstance(func, ast.Attribute) and func.attr == "mkdir" and isinstance(func.value, ast.Call):
            return any(ast.dump(a) == path for a in func.value.args)
        return False

    def _shown_to_fail(self, stmt: ast.stmt, path: str) -> bool:
        """``assertRaises(E, shutil.rmtree, path)``, or ``shutil.rmtree(path)``
        inside ``with self.assertRaises(...)`` / ``with pytest.raises(...)``."""
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in RAISES_METHODS and len(call.args) >= 3:
                return self.ctx.resolve(call.args[1]) == "shutil.rmtree" and ast.dump(call.args[2]) == path
            return False
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(_expects_raise(self.ctx, i.context_expr) for i in stmt.items):
            return any(
                isinstance(sub, ast.Call) and self.ctx.call_name(sub) == "shutil.rmtree"
                and bool(sub.args) and ast.dump(sub.args[0]) == path
                for inner in stmt.body for sub in ast.walk(inner)
            )
        return False


def _expects_raise(ctx: Context, manager: ast.expr) -> bool:
    if not isinstance(manager, ast.Call):
        return False
    func = manager.func
    return (isinstance(func, ast.Attribute) and func.attr in RAISES_METHODS) or ctx.call_name(manager) == "pytest.raises"


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

    Left alone: `undo()` as a statement of the test itself (not of a
    fixture, not inside a nested function) that is followed by nothing,
    or only by `assert`s on the test's own local names with no calls in
    them. Nothing after it can observe the fixtures' reverted patches,
    and the fixture undoes everything at teardown anyway; this is how a
    suite tests `MonkeyPatch.undo()` itself.

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
        if not self._nothing_runs_after(node):
            yield self.report(node)

    def _nothing_runs_after(self, node: ast.Call) -> bool:
        """``undo()`` as a statement of the test itself (not a fixture),
        followed only by asserts on the test's own local names: nothing
        after it can see what it reverted, and the fixture undoes it all
        at teardown anyway."""
        scope = self.ctx.function_scope
        function = self.ctx.function
        if scope is None or function is None or not (scope.is_test or scope.is_testcase_method):
            return False
        found = self.ctx.statement(node)
        if found is None:
            return False
        stmt, siblings, index = found
        if siblings is not function.body or not (isinstance(stmt, ast.Expr) and stmt.value is node):
            return False
        if not all(isinstance(later, ast.Assert) for later in siblings[index + 1:]):
            return False  # the common case, known before walking the function for its locals
        local = {
            name
            for sub in ast.walk(function)
            if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.withitem))
            for target in ([sub.optional_vars] if isinstance(sub, ast.withitem) else
                           sub.targets if isinstance(sub, ast.Assign) else [sub.target])
            for name in target_names(target)
        }
        for later in siblings[index + 1:]:
            if not isinstance(later, ast.Assert):
                return False
            for sub in ast.walk(later):
                if isinstance(sub, ast.Call) or (isinstance(sub, ast.Name) and sub.id not in local):
                    return False
        return True

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


# -- a change the reader sees undone (HRM105, HRM107) ------------------------------

#: the teardowns that run after each kind of method, and the setups whose
#: registered cleanups do
INSTANCE_TEARDOWNS = ("tearDown", "asyncTearDown", "teardown_method", "teardown")
INSTANCE_SETUPS = ("setUp", "asyncSetUp", "setup_method", "setup")
CLASS_TEARDOWNS = ("tearDownClass", "teardown_class")
CLASS_SETUPS = ("setUpClass", "setup_class")
MODULE_TEARDOWNS = ("tearDownModule", "teardown_module")
MODULE_SETUPS = ("setUpModule", "setup_module")
TEARDOWNS = frozenset({*INSTANCE_TEARDOWNS, *CLASS_TEARDOWNS, *MODULE_TEARDOWNS})
FORKS = frozenset({"os.fork", "os.forkpty"})


def _final_blocks(stmt: ast.stmt) -> Iterator[ast.stmt]:
    """The statements of every ``finally`` in ``stmt`` (not inside defs)."""
    pending: list[ast.AST] = [stmt]
    while pending:
        node = pending.pop()
        yield from getattr(node, "finalbody", None) or ()
        pending.extend(
            child for child in ast.iter_child_nodes(node)
            if isinstance(child, ast.stmt) and not isinstance(child, (*DEF_TYPES, ast.ClassDef))
        )


def _first_yield_end(function: FunctionNode) -> int | None:
    """The last line of the first ``yield`` of a generator (not of its local defs)."""
    end: int | None = None
    for node, nested in _walk_marking_nested(function):
        if not nested and isinstance(node, (ast.Yield, ast.YieldFrom)):
            line = getattr(node, "end_lineno", None) or node.lineno
            end = line if end is None else min(end, line)
    return end


def method_of(ctx: Context) -> tuple[ast.ClassDef | None, FunctionNode | None]:
    """The innermost class around the node and its method that holds it, or
    (outside classes) the module-level function."""
    scopes = ctx.scopes
    for index in range(len(scopes) - 1, -1, -1):
        if scopes[index].kind == "class":
            inner = scopes[index + 1] if index + 1 < len(scopes) else None
            method = inner.node if inner is not None and inner.kind == "function" else None
            return scopes[index].node, method  # type: ignore[return-value]
    outer = next((s for s in scopes if s.kind == "function"), None)
    return None, outer.node if outer is not None else None  # type: ignore[return-value]


def class_family(ctx: Context, owner: ast.ClassDef) -> list[ast.ClassDef]:
    """``owner`` and the classes of the same file it inherits from (a
    ``tearDown`` is often inherited from a base class defined above)."""
    local = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}
    family: list[ast.ClassDef] = []
    pending = [owner]
    while pending:
        current = pending.pop()
        if any(current is known for known in family):
            continue
        family.append(current)
        pending.extend(local[name] for name in (dotted_name(b) for b in current.bases) if name in local)
    return family


class UndoneChangeRule(Rule):
    """A rule about a change to process-wide state (the working directory,
    the environment) that stays quiet where the reader of the test sees the
    change undone: in a ``finally``, in the matching ``tearDown``, by a
    registered cleanup, after a fixture's ``yield``, or by the ``with`` block
    around it."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: (class node id, method group) -> the code that runs after that group's methods
        self._undoers: dict[tuple[int, str], list[ast.AST]] = {}
        # per function (id): the first yield's last line, the lines of the cleanup
        # registrations that undo the state, and whether code after the yield changes
        # it; a function with many changes would otherwise be walked once per change
        self._yield_ends: dict[int, int | None] = {}
        self._undoing_registrations: dict[int, list[int]] = {}
        self._changed_after_yield: dict[int, bool] = {}

    # what the subclass says about its state
    def changes(self, node: ast.AST) -> bool:
        """``node`` (or code under it) changes the state."""
        raise NotImplementedError

    def names_state(self, node: ast.AST) -> bool:
        """``node`` (or code under it) names the state: the function that
        changes it, or a snapshot of it."""
        raise NotImplementedError

    def puts_back(self, node: ast.AST) -> bool:
        """The change at ``node``, made in a ``finally``, a teardown or after
        a fixture's ``yield``, restores the state rather than changing it anew."""
        return True

    def restoring_manager(self, call: ast.Call) -> bool:
        """A ``with`` item that restores the state when its block ends."""
        raise NotImplementedError

    def applies(self, call: ast.Call) -> bool:
        """A call that only makes a change take effect (``time.tzset()``)."""
        return False

    def covered_by_class(self, node: ast.AST, undoers: list[ast.AST], in_setup: bool) -> bool:
        """The teardown or setUp-registered cleanups in ``undoers`` undo the
        change at ``node``; ``in_setup``: the change is made by the setup
        method those undoers pair with."""
        return any(self.changes(u) or self.names_state(u) for u in undoers)

    # -- the checks -------------------------------------------------------
    def undone(self, node: ast.AST) -> bool:
        """Whether the change at ``node`` (the node being visited) is undone
        where the reader of the test sees it, or is itself the undoing."""
        return (
            self._in_finally_or_try(node)
            or self._try_follows(node)
            or self._inside_restoring_with(node)
            or self._registered_in_function(node)
            or self._around_fixture_yield(node)
            or self._undone_by_class(node)
            or self._in_fork_child(node)
            or expects_failure(self.ctx, node)
            or self._under_main_guard()
            or self._in_registered_callback(node)
            or self._in_restorer(node)
            or self._in_preexec_fn()
            or self._requests_restoring_fixture()
        )

    #: words of a fixture name that say which state it saves (``save_env``, ``save_cwd``)
    STATE_WORDS: tuple[str, ...] = ()
    #: fixtures known to restore the state whatever their name
    RESTORING_FIXTURES: frozenset[str] = frozenset()

    def _restoring_fixture(self, name: str) -> bool:
        lowered = name.lower()
        return name in self.RESTORING_FIXTURES or (
            any(word in lowered for word in ("save", "restore", "preserve", "isolate", "isolated"))
            and any(word in lowered for word in self.STATE_WORDS)
        )

    def _local_fixture_restores(self, name: str) -> bool:
        """A fixture of this file named ``name`` changes the state back after
        its ``yield`` (``cwd = os.getcwd(); yield ...; os.chdir(cwd)``)."""
        for node in self.ctx.tree.body:
            if isinstance(node, DEF_TYPES) and node.name == name and self.ctx.scope_of(node).is_fixture:
                end = _first_yield_end(node)
                return end is not None and any(
                    self.changes(stmt) for stmt in ast.walk(node)
                    if isinstance(stmt, ast.stmt) and stmt.lineno > end and not isinstance(stmt, DEF_TYPES)
                )
        return False

    def _requests_restoring_fixture(self) -> bool:
        """The test (its parameters, or ``@pytest.mark.usefixtures`` on it or
        its class) asks for a fixture that saves and restores the state:
        ``pytester``, ``usefixtures("save_env")``, or a fixture of the same
        file that changes it back after its ``yield``."""
        for scope in self.ctx.scopes:
            node = scope.node
            if scope.kind == "function":
                arguments = node.args  # type: ignore[attr-defined]
                names = [a.arg for a in [*arguments.args, *arguments.kwonlyargs]]
                if any(self._restoring_fixture(n) or self._local_fixture_restores(n) for n in names):
                    return True
            for decorator in getattr(node, "decorator_list", ()):
                if isinstance(decorator, ast.Call) and (dotted_name(decorator.func) or "").endswith("usefixtures"):
                    if any(
                        isinstance(a, ast.Constant) and isinstance(a.value, str) and self._restoring_fixture(a.value)
                        for a in decorator.args
                    ):
                        return True
        return False

    def _in_restorer(self, node: ast.AST) -> bool:
        """``__exit__`` or a ``restore_*()`` function is the restore half."""
        function = self.ctx.function
        return function is not None and (
            function.name in ("__exit__", "__aexit__") or function.name.startswith("restore")
        ) and self.puts_back(node)

    def _in_preexec_fn(self) -> bool:
        """``Popen(..., preexec_fn=...)`` runs in the child, after the fork."""
        return any(isinstance(a, ast.keyword) and a.arg == "preexec_fn" for a in self.ctx.parents)

    def _in_registered_callback(self, node: ast.AST) -> bool:
        """A local def the enclosing function registers as a cleanup is the restore half."""
        functions = [s.node for s in self.ctx.scopes if s.kind == "function"]
        if len(functions) < 2:
            return False
        inner, outer = functions[-1], functions[-2]
        return any(
            isinstance(sub, ast.Call) and is_registration(self.ctx, sub) and inner.name in mentions(sub)  # type: ignore[attr-defined]
            for sub in ast.walk(outer)
        ) and self.puts_back(node)

    def _under_main_guard(self) -> bool:
        """``if __name__ == "__main__":`` runs only when the file is a script."""
        return any(
            isinstance(a, ast.If) and isinstance(a.test, ast.Compare) and isinstance(a.test.left, ast.Name)
            and a.test.left.id == "__name__" and len(a.test.comparators) == 1
            and isinstance(a.test.comparators[0], ast.Constant) and a.test.comparators[0].value == "__main__"
            for a in self.ctx.parents
        )

    def _in_finally_or_try(self, node: ast.AST) -> bool:
        """The restore half (a change in a ``finally``), or a change in the
        body of a ``try`` whose ``finally`` changes the state back."""
        chain = _path_to(self.ctx, node)
        for position in range(len(chain) - 1, 0, -1):
            child, holder = chain[position], chain[position - 1]
            if isinstance(holder, NEW_FRAMES):
                return False
            if not isinstance(holder, ast.Try) and type(holder).__name__ != "TryStar":
                continue
            final = holder.finalbody  # type: ignore[attr-defined]
            if any(s is child for s in final):
                return self.puts_back(node)
            guarded = [*holder.body, *holder.handlers, *holder.orelse]  # type: ignore[attr-defined]
            if any(s is child for s in guarded) and any(self.changes(s) for s in final):
                return True
        return False

    def _sets_up(self, stmt: ast.stmt) -> bool:
        """A statement between a change and the ``try`` that undoes it that
        belongs to the change: another change, or saving the old state."""
        if isinstance(stmt, ast.Pass):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and self.applies(stmt.value):
            return True
        if self.changes(stmt):
            return next(_final_blocks(stmt), None) is None
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            return True  # naming values for the guarded block: ``group = grp.getgrgid(0)[0]``
        value = getattr(stmt, "value", None)
        return isinstance(stmt, (ast.Assign, ast.AnnAssign)) and value is not None and self.names_state(value)

    def _next_statement(self, node: ast.AST) -> ast.stmt | None:
        """The first statement after the change (taking a loop or ``if``
        block of changes as one) that is not part of setting it up."""
        for ancestor, _ in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.Try, ast.With, ast.AsyncWith)) or type(ancestor).__name__ == "TryStar":
                break
            if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.If)):
                node = ancestor
        for stmt, encloses in _later_statements(self.ctx, node):
            if not encloses and not self._sets_up(stmt):
                return stmt
        return None

    def _try_follows(self, node: ast.AST) -> bool:
        """The statement after the change (past the rest of the set-up) is a
        ``try`` (or a block holding one) whose ``finally`` changes back."""
        following = self._next_statement(node)
        return following is not None and any(self.changes(s) for s in _final_blocks(following))

    def _inside_restoring_with(self, node: ast.AST) -> bool:
        """Inside ``with manager:`` or a function decorated with a manager
        that restores the state (``@mock.patch.dict(os.environ)``)."""
        for scope in self.ctx.scopes:
            if scope.kind == "function" and any(
                isinstance(d, ast.Call) and self.restoring_manager(d) for d in scope.node.decorator_list  # type: ignore[attr-defined]
            ):
                return True
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and on_path not in ancestor.items:
                if any(
                    isinstance(item.context_expr, ast.Call) and self.restoring_manager(item.context_expr)
                    for item in ancestor.items
                ):
                    return True
        return False

    def _callbacks(self, registration: ast.Call, function: ast.AST | None) -> list[ast.AST]:
        """The registration and the bodies of the local defs or methods it hands over."""
        found: list[ast.AST] = [registration]
        wanted = {name for name in (dotted_name(a) for a in [registration.func, *registration.args]) if name}
        if function is not None:
            found += [
                sub for sub in ast.walk(function)
                if isinstance(sub, DEF_TYPES) and sub is not function and sub.name in wanted
            ]
        class_scope = self.ctx.class_scope
        if class_scope is not None:
            methods = {name.partition(".")[2] for name in wanted if name.startswith(("self.", "cls."))}
            found += [
                sub for sub in class_scope.node.body  # type: ignore[attr-defined]
                if isinstance(sub, DEF_TYPES) and sub.name in methods
            ]
        return found

    def _registered_in_function(self, node: ast.AST) -> bool:
        """A cleanup registered before the change (or right after it) that undoes it."""
        function = self.ctx.function
        if function is None:
            return False
        line = getattr(node, "lineno", 0)
        following = self._next_statement(node)
        last = (getattr(following, "end_lineno", None) or line) if following is not None else line
        lines = self._undoing_registrations.get(id(function))
        if lines is None:
            lines = self._undoing_registrations[id(function)] = [
                sub.lineno for sub in ast.walk(function)
                if isinstance(sub, ast.Call) and is_registration(self.ctx, sub)
                and any(self.changes(c) or self.names_state(c) for c in self._callbacks(sub, function))
            ]
        return any(registered <= last for registered in lines)

    def _around_fixture_yield(self, node: ast.AST) -> bool:
        """The code after a generator's ``yield`` is its teardown: a change
        there is the restore half; in a pytest fixture, that teardown undoes
        a change made before the ``yield``."""
        function = self.ctx.function
        if function is None:
            return False
        key = id(function)
        if key not in self._yield_ends:
            self._yield_ends[key] = _first_yield_end(function)
        end = self._yield_ends[key]
        if end is None:
            return False
        line = getattr(node, "lineno", 0)
        if line > end:
            return self.puts_back(node)
        scope = self.ctx.function_scope
        if scope is None or not scope.is_fixture:
            return False
        changed = self._changed_after_yield.get(key)
        if changed is None:
            changed = self._changed_after_yield[key] = any(
                self.changes(stmt) for stmt in ast.walk(function)
                if isinstance(stmt, ast.stmt) and stmt.lineno > end and not isinstance(stmt, DEF_TYPES)
            )
        return changed

    def _undone_by_class(self, node: ast.AST) -> bool:
        """A teardown (``tearDown``, ``tearDownClass``, ``teardown_method``,
        ``tearDownModule``) is the restore half; a change in a setup or test
        method is undone by the matching teardown or by a cleanup its setup
        registered."""
        owner, method = method_of(self.ctx)
        if method is None:
            return False
        if method.name in TEARDOWNS:
            return self.puts_back(node)
        teardowns: tuple[str, ...]
        setups: tuple[str, ...]
        if owner is None:
            group, teardowns, setups = "module", MODULE_TEARDOWNS, MODULE_SETUPS
            if method.name not in MODULE_SETUPS:
                return False
            holder: list[ast.stmt] = self.ctx.tree.body
        elif method.name in CLASS_SETUPS:
            group, teardowns, setups = "class", CLASS_TEARDOWNS, CLASS_SETUPS
            holder = [s for c in class_family(self.ctx, owner) for s in c.body]
        else:
            group, teardowns, setups = "instance", INSTANCE_TEARDOWNS, INSTANCE_SETUPS
            holder = [s for c in class_family(self.ctx, owner) for s in c.body]
        key = (id(owner if owner is not None else self.ctx.tree), group)
        undoers = self._undoers.get(key)
        if undoers is None:
            undoers = []
            for sub in holder:
                if isinstance(sub, DEF_TYPES) and sub.name in teardowns:
                    undoers.append(sub)
                elif isinstance(sub, DEF_TYPES) and sub.name in setups:
                    for call in ast.walk(sub):
                        if isinstance(call, ast.Call) and is_registration(self.ctx, call):
                            undoers += self._callbacks(call, sub)
            self._undoers[key] = undoers
        return bool(undoers) and self.covered_by_class(node, undoers, method.name in setups)

    def _in_fork_child(self, node: ast.AST) -> bool:
        """``if pid == 0:`` (or ``if not pid:``) after ``pid = os.fork()``:
        the change happens in the child process."""
        function = self.ctx.function
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if not isinstance(ancestor, ast.If) or not any(s is on_path for s in ancestor.body):
                continue
            test = ancestor.test
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                pid = dotted_name(test.operand)
            elif (
                isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0
            ):
                pid = dotted_name(test.left)
            else:
                continue
            if pid is not None and function is not None and any(
                isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call)
                and self.ctx.call_name(sub.value) in FORKS
                and pid in {n for t in sub.targets for n in target_names(t)}
                for sub in ast.walk(function)
            ):
                return True
        return False


# -- HRM105 ------------------------------------------------------------------------

class ChdirRule(UndoneChangeRule):
    """
    Flags `os.chdir()` and `os.fchdir()` in a test file when nothing the reader sees changes back.

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
    Only a change nobody visibly undoes is reported. Left alone:

    - the way back: a `chdir` to a directory saved from `os.getcwd()` or
      `Path.cwd()`, or any `chdir` in a `finally`, a teardown method,
      after a fixture's `yield`, in `__exit__`, in a `restore*()` function
      or in a local function registered as a cleanup;
    - a `chdir` inside a `try` (body or handler) whose `finally` changes
      directory, or followed by such a `try` (past the lines that save the
      old directory and plain assignments of local names);
    - one with a cleanup registered before it, or right after it, that
      changes back (`self.addCleanup(os.chdir, old)`);
    - one in `setUp` or a test method whose class (or a base class in the
      file) changes back in `tearDown` or in a cleanup its `setUp`
      registered, and the same for `setUpClass`/`tearDownClass`,
      `setup_method`/`teardown_method`, `setUpModule`/`tearDownModule`. A
      failure later in `setUp` skips `tearDown`, but the pair is the idiom
      unittest is built around;
    - one inside a `with` block (or under a decorator) whose manager is
      about the working directory (`os_helper.change_cwd()`,
      `path.as_cwd()`);
    - a test that asks for a fixture that changes back, as a parameter or
      with `@pytest.mark.usefixtures()` on it or its class: `pytester`,
      `testdir`, one named for saving the directory (`save_cwd`), or one
      of the same file that changes back after its `yield`;
    - one in a forked child (`if pid == 0:` after `os.fork()`, a
      `preexec_fn`), under `if __name__ == "__main__":`, or expected to
      fail.

    A restore done by a conftest fixture the test does not ask for does not
    count.
    """

    code = "HRM105"
    message = "{name}() leaks the working directory to later tests; use monkeypatch.chdir() or contextlib.chdir()"
    CHDIRS = frozenset({"os.chdir", "os.fchdir"})
    calls = CHDIRS

    CWD_READERS = frozenset({"os.getcwd", "os.getcwdb", "pathlib.Path.cwd"})
    STATE_WORDS = ("cwd", "chdir", "workdir")
    RESTORING_FIXTURES = CWD_FIXTURES

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        if name in self.CHDIRS and not self.is_restore(node) and not self.undone(node):
            yield self.report(node, name=name)

    def changes(self, node: ast.AST) -> bool:
        return any(isinstance(sub, ast.Call) and self.ctx.call_name(sub) in self.CHDIRS for sub in ast.walk(node))

    def names_state(self, node: ast.AST) -> bool:
        names = self.CHDIRS | self.CWD_READERS
        return any(
            isinstance(sub, (ast.Name, ast.Attribute)) and self.ctx.resolve(sub) in names for sub in ast.walk(node)
        )

    def restoring_manager(self, call: ast.Call) -> bool:
        """``contextlib.chdir()``, ``change_cwd()``, ``temp_cwd()``, ``p.as_cwd()``."""
        name = (self.ctx.call_name(call) or dotted_name(call.func) or "").rpartition(".")[2].lower()
        return "cwd" in name or "chdir" in name

    def is_restore(self, call: ast.Call) -> bool:
        """Whether the call goes back to a directory saved from the current one."""
        return bool(call.args) and saved_from(self.ctx, call.args[0], self.CWD_READERS)


# -- HRM106 ------------------------------------------------------------------------

class ChildWithoutCwdRule(Rule):
    """
    Flags a child process started without `cwd=` in a test file when what it runs depends on the working directory.

    ## Why is this bad?
    A child inherits the working directory of the test run, which is
    usually the repository checkout. A child that works relative to it (a
    build tool, `git`, `pip install -e .`, a script named by a relative
    path, a shell redirection into `out.log`) writes into the checkout,
    where an assertion about `tmp_path` cannot see it and a careless commit
    can pick it up, or behaves differently depending on where pytest was
    started (and on each xdist worker). The write happens in another
    process, so no line of the test shows it.

    Reported when the command line says the child depends on the
    directory: it runs `git`, a tool that finds its project, configuration
    or cache there (`make`, `tox`, `nox`, `npm`, `coverage`, `flake8`,
    `mypy`, `pyright`, `pyinstaller`, ...), or one that works on it when
    given no path (`pytest`, `ruff`, `black`, `isort`, `find`,
    `python -m build`); `pip wheel`/`pip download` without a target
    directory; `setup.py`; `python -m` of a module that is not part of the
    interpreter (the working directory comes first on the child's
    `sys.path`); a `-c` snippet that opens a relative path or reads the
    working directory; a program, script or argument given as a relative
    path (`scripts/gen.py`, `.`, `notes.txt`, `tests`); a file utility
    (`touch`, `rm`, `tar`, `cat`, ...) given a relative operand; an
    interactive shell; a shell redirection to a relative file. The argv
    is read through names assigned in the same function or at module
    level (`cmd = [...]`, `cmd += [...]`, `" ".join(cmd)`).

    Covered: `subprocess.run/call/check_call/check_output/Popen`,
    `asyncio.create_subprocess_exec/_shell`, `os.system`, `os.popen`,
    `os.spawn*`, `pexpect.spawn/run`.

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
    `git config --get`). A command whose last word is `--version` or
    `--help` is always allowed.

    ## Known problems
    A child is judged by its command line, and nothing there says it
    depends on the directory for most children; they are left alone:
    `[sys.executable, "-c", snippet]` whose snippet (a literal, or a name
    assigned one) touches no relative path, and one whose snippet cannot
    be read; scripts given by an absolute path or an expression (usually
    built from `__file__` or `tmp_path`); `python -I`/`-P` (no working
    directory on `sys.path`) and `python -m` of a standard-library module
    (`json.tool`, `venv`, CPython's `test`) without relative arguments;
    programs such as `echo`, `lsof`, `stty`, `readelf` whose arguments
    are options, numbers, absolute paths or expressions; and an argv that
    cannot be read at all (a helper's parameter, the result of a call):
    the helper's callers decide what it runs, and it is their line that
    would need the directory. Also left alone: a call with `**kwargs`;
    git's own `-C DIR`, `--git-dir` and `--work-tree`; a child started
    inside a `with` whose manager changes the working directory
    (`contextlib.chdir()`, `os_helper.change_cwd()`, `temp_cwd()`,
    `path.as_cwd()`), after a `chdir` that lasts (`monkeypatch.chdir()`,
    `os.chdir()`, `self.enterContext(change_cwd(...))`) earlier in the
    function or in the TestCase's `setUp`, and in a test that takes
    pytest's `pytester` or `testdir` (both move into their own
    directory); and module code under `if __name__ == "__main__":`, which
    runs only when the file is executed as a script. A snippet's imports are not followed: `python -c "import
    mypkg"` also reads the working directory first on `sys.path`.
    """

    code = "HRM106"
    message = (
        "{name}() runs, in the inherited working directory (the checkout), a child that {why}; "
        "pass cwd= a directory of the test's own"
    )

    calls = SPAWNER_CALLS
    options = (
        OptionSpec(
            "readonly-commands", "phrases",
            (
                "git rev-parse",
                "git status",
                "git log",
                "git diff",
                "git show",
                "git ls-files",
                "git check-ignore",
                "git config --get",
            ),
            "Comma-separated command prefixes (e.g. 'git status') that a child "
            "process may run without cwd= (HRM106).",
            convert=lambda commands: tuple(tuple(command.split()) for command in commands),
        ),
    )

    __slots__ = ("_values", "_moved")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: id of a function (or the module) -> what its names were assigned
        self._values: dict[int, AssignedValues] = {}
        #: id of a function -> the first line that changes the working directory, or 0
        self._moved: dict[int, int] = {}

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        child = child_process(node, self.ctx.call_name(node))
        if child is None or child.keyword("cwd") is not None or child.has_unpacked_kwargs:
            return
        if self.directory_chosen(node) or self.in_script_entry_point():
            return
        reader = ArgvReader(self.scopes(), self.ctx.resolve)
        words = child_words(child, reader, node.lineno)
        if not words:
            return  # nothing on the call says what it runs
        why = CwdJudge(reader, node.lineno, self.ctx.settings.option("readonly-commands")).command(words)
        if why is not None:
            yield self.report(node, name=child.name, why=why)

    def in_script_entry_point(self) -> bool:
        """Module code under ``if __name__ == "__main__":`` runs when the file
        is executed as a script (by tox, by hand), never in a test run."""
        return self.ctx.function is None and any(
            isinstance(ancestor, ast.If) and isinstance(ancestor.test, ast.Compare)
            and isinstance(ancestor.test.left, ast.Name) and ancestor.test.left.id == "__name__"
            and len(ancestor.test.comparators) == 1 and isinstance(ancestor.test.comparators[0], ast.Constant)
            and ancestor.test.comparators[0].value == "__main__"
            for ancestor in self.ctx.parents
        )

    def scopes(self) -> list[AssignedValues]:
        found = []
        for scope in reversed(self.ctx.scopes):
            if scope.kind in ("function", "module"):
                values = self._values.get(id(scope.node))
                if values is None:
                    values = self._values[id(scope.node)] = AssignedValues(scope.node)
                found.append(values)
        return found

    def directory_chosen(self, node: ast.Call) -> bool:
        """Whether the test has already moved to a directory of its own: the
        call runs inside a `with` that changes the working directory, after
        such a change in the same function (or the TestCase's setUp), or in
        a test that takes pytest's `pytester`/`testdir` (they chdir into
        their own directory)."""
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and on_path not in ancestor.items:
                if any(changes_cwd(self.ctx, item.context_expr) for item in ancestor.items):
                    return True
        for scope in reversed(self.ctx.scopes):
            if scope.kind != "function":
                continue
            function = scope.node
            arguments = function.args  # type: ignore[attr-defined]
            if any(a.arg in CWD_FIXTURES for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)):
                return True
            moved = self.first_move(function)
            if moved and moved < node.lineno:
                return True
        class_scope = self.ctx.class_scope
        if class_scope is not None and class_scope.is_testcase_class:
            for statement in class_scope.node.body:  # type: ignore[attr-defined]
                if isinstance(statement, DEF_TYPES) and statement.name in SETUP_METHODS and self.first_move(statement):
                    return True
        return False

    def first_move(self, function: ast.AST) -> int:
        """The first line of ``function`` that changes the working directory
        for the rest of it (a `with` item changes it for its block only), or 0."""
        found = self._moved.get(id(function))
        if found is None:
            nodes = list(ast.walk(function))
            scoped = {id(item.context_expr) for item in nodes if isinstance(item, ast.withitem)}
            lines = [
                sub.lineno for sub in nodes
                if isinstance(sub, ast.Call) and id(sub) not in scoped and changes_cwd(self.ctx, sub)
            ]
            found = self._moved[id(function)] = min(lines, default=0)
        return found


#: pytest fixtures that chdir into their own directory for the test
CWD_CHANGER_ENDINGS = ("chdir", "_cwd", "pushd", "working_directory")


def changes_cwd(ctx: Context, node: ast.expr) -> bool:
    """A call that changes the working directory, or a context manager
    that does: `os.chdir(p)`, `monkeypatch.chdir(p)`, `contextlib.chdir(p)`,
    `os_helper.change_cwd(p)`, `temp_cwd()`, `tmpdir.as_cwd()`."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not last:
        last = (ctx.call_name(node) or "").rpartition(".")[2]
    return last.endswith(CWD_CHANGER_ENDINGS)


# -- HRM107 ------------------------------------------------------------------------

ENVIRON = frozenset({"os.environ", "os.environb"})
ENVIRON_SNAPSHOTS = frozenset({"os.environ.copy", "os.environb.copy"})
ENVIRON_MUTATORS = frozenset({"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__", "__ior__"})


class RawEnvironMutationRule(UndoneChangeRule):
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

    ## Off by default
    Turn it on with `--extend-select=HRM107` (or `extend-select` in the config):
    after narrowing, 6 of its 11 findings on ten real suites were real leaks: the rest were
    writes in code that runs in a child process (a `setup.py` the test executes, a process-pool
    worker), or restored by a decorator or by a fixture that only the helper's callers request
    (see docs/precision.md). In an application's own suite, where such code is rare,
    it is worth turning on.

    ## Options
    None.

    ## Known problems
    Only a write nobody visibly undoes is reported. Left alone:

    - the way back: a deletion, a `pop`, an assignment of a saved value,
      `update(saved)` or `clear()` then `update(saved)`, made in a
      `finally`, a teardown method, after a fixture's `yield`, in
      `__exit__`, in a `restore*()` function or in a local function
      registered as a cleanup; and removing a key the same function set
      earlier (the write is reported, and it is the one to fix);
    - a write inside a `try` whose `finally` writes the environment, or
      followed by such a `try` (past further writes, `time.tzset()` and
      plain assignments of local names);
    - a write with a cleanup registered before it, or right after it,
      that restores the environment (`self.addCleanup(restore,
      os.environ.copy())`);
    - a write inside `with mock.patch.dict(os.environ)` or under that
      decorator;
    - in a TestCase, a write in `setUp` when `tearDown` (also inherited
      from a base class in the file) or a cleanup `setUp` registered
      writes the environment, and a write in a test method when
      `tearDown` restores the whole environment (rebinds it, `update()`s
      it from a saved copy, exits a guard), writes the same key, or
      `setUp` registered a restoring cleanup. A failure later in `setUp`
      skips `tearDown`, but the pair is the idiom unittest is built
      around;
    - a test that asks for a fixture named for saving the environment
      (`save_env`), as a parameter or with `@pytest.mark.usefixtures()`
      on it or its class, or for a fixture of the same file that writes
      the environment back after its `yield`;
    - a write in a forked child (`if pid == 0:` after `os.fork()`, a
      `preexec_fn`), under `if __name__ == "__main__":`, or expected to be
      refused.

    A restore done by a conftest fixture the test does not ask for does not
    count.
    """

    code = "HRM107"
    message = "{what} changes the environment of every later test; use monkeypatch.setenv/delenv or mock.patch.dict(os.environ)"
    default_on = False
    WRITERS = frozenset({"os.putenv", "os.unsetenv"})
    calls = WRITERS | {f"{owner}.{method}" for owner in ENVIRON for method in ENVIRON_MUTATORS}

    STATE_WORDS = ("env",)

    def _is_environ(self, node: ast.AST) -> bool:
        return self.ctx.resolve(node) in ENVIRON

    def _targets(self, targets: list[ast.expr], node: ast.AST, verb: str) -> Iterator[Violation]:
        for target in targets:
            if isinstance(target, ast.Subscript) and self._is_environ(target.value):
                if not self.undone(node):
                    yield self.report(node, what=f"{verb} {self.ctx.resolve(target.value)}[...]")
                return
            if isinstance(target, ast.Attribute) and self._is_environ(target):
                value = getattr(node, "value", None)
                if (value is None or not saved_from(self.ctx, value, ENVIRON_SNAPSHOTS)) and not self.undone(node):
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
            if not self.undone(node):
                yield self.report(node, what="updating os.environ in place")
        else:
            yield from self._targets([target], node, "updating")

    def visit_Delete(self, node: ast.Delete) -> Iterator[Violation]:
        yield from self._targets(node.targets, node, "deleting")

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self._mutator(node):
            name = self.ctx.call_name(node) or ""
            restores = name.endswith(".update") and len(node.args) == 1 and saved_from(
                self.ctx, node.args[0], ENVIRON_SNAPSHOTS
            )
            if not restores and not self.undone(node):
                yield self.report(node, what=f"{name}()")

    def undone(self, node: ast.AST) -> bool:
        return super().undone(node) or self._removes_own_write(node)

    def _removes_own_write(self, node: ast.AST) -> bool:
        """``del os.environ[k]`` (``pop``, ``unsetenv``) of a key the same
        function set earlier: the write is the hazard reported; removing it
        again, even unguarded, adds none."""
        if isinstance(node, ast.Call):
            name = self.ctx.call_name(node) or ""
            if not (name == "os.unsetenv" or name.endswith(".pop")) or not node.args:
                return False
        elif not isinstance(node, ast.Delete):
            return False
        function = self.ctx.function
        removed = self._keys(node)
        if function is None or not removed:
            return False
        written: set[str] = set()
        for sub in ast.walk(function):
            if isinstance(sub, (ast.Assign, ast.AugAssign)) and sub.lineno < node.lineno:  # type: ignore[attr-defined]
                written |= self._keys(sub)
            elif isinstance(sub, ast.Call) and sub.lineno < node.lineno:  # type: ignore[attr-defined]
                if (self.ctx.call_name(sub) or "").rpartition(".")[2] in ("putenv", "setdefault", "__setitem__"):
                    written |= self._keys(sub)
        return removed <= written

    # -- what UndoneChangeRule asks ------------------------------------------
    def _mutator(self, call: ast.Call) -> bool:
        name = self.ctx.call_name(call) or ""
        owner, _, method = name.rpartition(".")
        return name in self.WRITERS or (owner in ENVIRON and method in ENVIRON_MUTATORS)

    def _environ_target(self, target: ast.AST) -> bool:
        if isinstance(target, (ast.Tuple, ast.List)):
            return any(self._environ_target(t) for t in target.elts)
        if isinstance(target, ast.Subscript):
            target = target.value
        return isinstance(target, (ast.Name, ast.Attribute)) and self._is_environ(target)

    def changes(self, node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Assign, ast.Delete)):
                if any(self._environ_target(t) for t in sub.targets):
                    return True
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)):
                if self._environ_target(sub.target):
                    return True
            elif isinstance(sub, ast.Call) and self._mutator(sub):
                return True
        return False

    def names_state(self, node: ast.AST) -> bool:
        return any(
            isinstance(sub, (ast.Name, ast.Attribute)) and self.ctx.resolve(sub) in (ENVIRON | self.WRITERS)
            for sub in ast.walk(node)
        )

    def puts_back(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Delete):
            return True
        if isinstance(node, ast.Assign):
            return not _literal(node.value)
        if not isinstance(node, ast.Call):
            return False
        name = self.ctx.call_name(node) or ""
        method = name.rpartition(".")[2]
        if name == "os.unsetenv" or method == "pop":
            return True
        if method == "update" or name == "os.putenv":
            return bool(node.args) and not _literal(node.args[-1])
        if method == "clear":
            found = self.ctx.statement(node)
            return found is not None and any(
                self.changes(later) and self.puts_back_all(later) for later in found[1][found[2] + 1:]
            )
        return False

    def applies(self, call: ast.Call) -> bool:
        name = self.ctx.call_name(call) or dotted_name(call.func) or ""
        return name.rpartition(".")[2] == "tzset"

    def puts_back_all(self, stmt: ast.stmt) -> bool:
        """``os.environ.update(saved)`` as a statement."""
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        return isinstance(call, ast.Call) and self._mutator(call) and self.puts_back(call)

    def restoring_manager(self, call: ast.Call) -> bool:
        """``mock.patch.dict(os.environ)``, which puts the whole mapping back."""
        name = self.ctx.call_name(call) or dotted_name(call.func) or ""
        if not name.endswith("patch.dict") or not call.args:
            return False
        first = call.args[0]
        if isinstance(first, ast.Constant):
            return first.value in ("os.environ", "os.environb")
        return self._is_environ(first)

    def covered_by_class(self, node: ast.AST, undoers: list[ast.AST], in_setup: bool) -> bool:
        if in_setup:
            return any(self.changes(u) or self.names_state(u) for u in undoers)
        keys = self._keys(node)
        for undoer in undoers:
            if isinstance(undoer, ast.Call) and self.names_state(undoer):
                return True  # a cleanup registered by setUp that hands over the environment or a snapshot
            if self._restores_whole(undoer) or (keys and keys <= self._keys(undoer)):
                return True
        return False

    def _restores_whole(self, node: ast.AST) -> bool:
        """Rebinding the environment, or ``update()`` from a saved mapping."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and any(
                isinstance(t, (ast.Name, ast.Attribute)) and self._is_environ(t) for t in sub.targets
            ):
                return True
            if isinstance(sub, ast.Call) and self._mutator(sub) and (self.ctx.call_name(sub) or "").endswith(".update"):
                if self.puts_back(sub):
                    return True
            if isinstance(sub, ast.Call) and self.ctx.call_name(sub) in {f"{e}.__exit__" for e in ENVIRON}:
                return True  # ``os.environ = EnvironmentVarGuard()`` in setUp, ``os.environ.__exit__()`` here
        return False

    def _keys(self, node: ast.AST) -> set[str]:
        """The keys written under ``node``, as source text."""
        keys: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, (ast.Store, ast.Del)) and self._is_environ(sub.value):
                keys.add(ast.dump(sub.slice))
            elif isinstance(sub, ast.Call) and self._mutator(sub) and sub.args:
                keys.add(ast.dump(sub.args[0]))
        return keys


def _literal(node: ast.AST | None) -> bool:
    """A value written out in the source (not a saved one)."""
    return isinstance(node, (ast.Constant, ast.Dict, ast.JoinedStr, ast.List, ast.Tuple, ast.Set))


# -- HRM108 ------------------------------------------------------------------------

SHARED_TEMP_PREFIXES = ("/tmp/", "/var/tmp/", "/dev/shm/")
#: what the source of a file holding one of those literals must contain
SHARED_TEMP_DIRS = ("/tmp", "/dev/shm")
PATH_JOINERS = frozenset({"os.path.join", "posixpath.join", "ntpath.join", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})
BASETEMP = "--basetemp="
#: calls whose result is still the same place on disk (a string or a Path)
PATH_CARRIERS = frozenset({
    *PATH_JOINERS, "pathlib.PurePosixPath", "str", "bytes", "os.fspath", "os.fsencode", "os.fsdecode",
    *(f"{module}.{function}" for module in ("os.path", "posixpath", "ntpath") for function in (
        "join", "normpath", "abspath", "realpath", "expanduser", "expandvars", "normcase", "dirname",
    )),
})
#: os.path functions that touch the disk (the rest of os.path is string work)
OS_PATH_DISK = frozenset({
    "exists", "lexists", "isfile", "isdir", "islink", "ismount", "isjunction", "getsize", "getmtime",
    "getatime", "getctime", "samefile",
})
#: ``os.*`` calls that take no path or only compute one
OS_NOT_DISK = frozenset({"os.fspath", "os.fsencode", "os.fsdecode", "os.getenv", "os.getenvb", "os.putenv", "os.unsetenv"})
#: calls outside os/shutil/tempfile that open or create the path they are given
FILE_OPENERS = frozenset({
    "open", "io.open", "codecs.open", "sqlite3.connect", "dbm.open", "shelve.open", "fileinput.input",
    "logging.FileHandler", "logging.basicConfig", "logging.handlers.RotatingFileHandler",
    "logging.handlers.TimedRotatingFileHandler", "logging.handlers.WatchedFileHandler",
    "zipfile.ZipFile", "zipfile.Path", "tarfile.open", "tarfile.TarFile", "gzip.open", "gzip.GzipFile", "bz2.open",
    "bz2.BZ2File", "lzma.open", "lzma.LZMAFile", "glob.glob", "glob.iglob", "filecmp.cmp", "filecmp.dircmp",
    "py_compile.compile", "compileall.compile_dir", "compileall.compile_file", "wave.open", "venv.create",
})
#: Path methods that keep the path (``p.with_suffix(".bak")``) and those that touch the disk
PATH_METHODS = frozenset({"joinpath", "with_name", "with_suffix", "with_stem", "resolve", "absolute", "expanduser"})
PATH_DISK_METHODS = frozenset({
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "mkdir", "touch", "unlink", "rmdir",
    "exists", "is_file", "is_dir", "is_symlink", "is_mount", "is_socket", "is_fifo", "stat", "lstat", "chmod",
    "lchmod", "iterdir", "glob", "rglob", "walk", "rename", "replace", "symlink_to", "hardlink_to", "link_to",
    "samefile", "owner", "group", "readlink",
})
#: pytest runners whose arguments are a command line (``pytester.runpytest("--basetemp", d)``)
PYTEST_RUNNERS = frozenset({"runpytest", "runpytest_subprocess", "runpytest_inprocess", "inline_run", "spawn_pytest"})
_SINK = "sink"


def _shared_temp_text(value: object) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not isinstance(value, str):
        return None
    if value.startswith(SHARED_TEMP_PREFIXES):
        return value
    if value.startswith(BASETEMP) and value[len(BASETEMP):].startswith(SHARED_TEMP_PREFIXES):
        return value
    return None


def _literal_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and bool(node.value)


def _touches_disk(name: str) -> bool:
    """Whether the call named ``name`` reads or writes the path it is given."""
    if name in FILE_OPENERS or name.startswith(("shutil.", "tempfile.")):
        return True
    for module in ("os.path.", "posixpath.", "ntpath."):
        if name.startswith(module):
            return name[len(module):] in OS_PATH_DISK
    return name.startswith("os.") and name not in OS_NOT_DISK and not name.startswith("os.environ")


@dataclass(frozen=True)
class _Origin:
    """A shared temp location, and how its value travels: "str" (a path
    string), "path" (a pathlib object) or "argv" (a list holding it)."""

    node: ast.AST
    what: str
    kind: str


class SharedTempPathRule(Rule):
    """
    Flags a fixed path in the machine-wide temp directory (`/tmp/...`, `/dev/shm/...`, a fixed name under `gettempdir()`) that reaches the filesystem.

    ## Why is this bad?
    A fixed path in a shared directory is shared by every test worker,
    every checkout on the machine and every user of it. Two workers that
    run the test at the same time write over each other's files, a file
    left by an earlier run (or by another user, with other permissions)
    changes the verdict, and nothing removes it afterwards. The path also
    does not exist on Windows, and it ignores `TMPDIR`.

    The location is a string or bytes literal (or the literal start of an
    f-string) that starts with `/tmp/`, `/var/tmp/` or `/dev/shm/`, a
    `--basetemp=` option naming such a path, or a fixed name joined onto
    `tempfile.gettempdir()` (`os.path.join(gettempdir(), "x")`,
    `Path(gettempdir()) / "x"`, `gettempdir() + "/x"`). It is flagged
    when it reaches the filesystem in the same function, directly or
    through a join (`os.path.join`, `Path(...)`, `/`, `+`, an f-string,
    `str()`), a local name or a module-level constant it was assigned to:
    a path argument of `open()`, of an `os`, `os.path` (`exists`,
    `isdir`, ...), `shutil` or `tempfile` call, of `sqlite3.connect`,
    `logging.FileHandler`, `zipfile`, `tarfile` and the like; a `Path`
    method that touches the disk (`write_text`, `mkdir`, `touch`,
    `open`, `exists`, ...); a socket's `bind()` (a Unix socket); a word
    of a child process's command line or its `cwd=`; an argument of
    `pytester.runpytest()`.

    A literal that never reaches one of these is left alone: in the
    suites this rule was measured on, most such literals are data (a
    module's `__file__` set for a `repr` check, a path handed to a mock,
    a CLI option's default, a parametrize row), and a literal inside an
    `assert`, a comparison or an `assert*` call is data too. A helper of
    the project that writes to the path it is given (`dump("/tmp/x")`)
    is not seen, and neither is a literal that spells the directory with
    escapes (`"\\x2ftmp/x"`): the rule reads constants only in a file whose
    text says `/tmp` or `/dev/shm`.

    ## Example
    ```python
    def test_dump():
        Path("/tmp/state.json").write_text(dump(STATE))
        assert load("/tmp/state.json") == STATE
    ```

    ## Use instead
    ```python
    def test_dump(tmp_path):
        (tmp_path / "state.json").write_text(dump(STATE))
        assert load(tmp_path / "state.json") == STATE
    ```

    ## Options
    None.
    """

    code = "HRM108"
    message = "{what} is a fixed path shared by every worker and run; use tmp_path (or a mkdtemp() with cleanup)"
    calls = PATH_JOINERS
    methods = frozenset({"joinpath"})

    __slots__ = ("_bound", "_constants", "_reported")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: function (id, 0 for the module) -> name -> the location it holds
        self._bound: dict[int, dict[str, _Origin]] = {}
        self._reported: set[tuple[int, int]] = set()
        self._constants: dict[str, _Origin] | None = None
        # Names matter only where one may hold a shared temp path; most files
        # have none, and then the walk need not stack a single Name.
        if self.constants():
            self._follow_names()
        # Nor a single constant, in a file whose text names no shared temp
        # directory (a literal spelled with escapes, "\x2ftmp/", is not seen).
        source = ctx.source
        if any(directory in source for directory in SHARED_TEMP_DIRS):
            ctx.dispatch_to(ast.Constant, self.on_constant)

    # -- where a location starts -------------------------------------------
    def on_constant(self, node: ast.Constant) -> Iterator[Violation]:
        text = _shared_temp_text(node.value)
        if text is None:
            return
        parent = self.ctx.parent
        if isinstance(parent, (ast.JoinedStr, ast.Expr)):
            return  # an f-string part is judged with its f-string; a bare string is a docstring
        yield from self._judge(node, _Origin(node, repr(node.value), "str"))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Iterator[Violation]:
        if not node.values or isinstance(self.ctx.parent, ast.FormattedValue):
            return
        head = node.values[0]
        if isinstance(head, ast.Constant) and _shared_temp_text(head.value) is not None:
            yield from self._judge(node, _Origin(node, f"an f-string starting {head.value!r}", "str"))
        elif isinstance(head, ast.FormattedValue) and self._is_gettempdir(head.value):
            if len(node.values) > 1 and isinstance(node.values[1], ast.Constant):
                yield from self._judge(node, _Origin(node, "a fixed name under gettempdir()", "str"))

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self._gettempdir_join(node):
            yield from self._judge(node, _Origin(node, "a fixed name under gettempdir()", self._join_kind(node)))

    def visit_BinOp(self, node: ast.BinOp) -> Iterator[Violation]:
        parent = self.ctx.parent
        if isinstance(parent, ast.BinOp) and parent.left is node and self._gettempdir_binop(parent):
            return  # judged once, on the outermost join
        if self._gettempdir_binop(node):
            yield from self._judge(node, _Origin(node, "a fixed name under gettempdir()", self._join_kind(node)))

    def _join_kind(self, join: ast.Call | ast.BinOp) -> str:
        """What a join onto gettempdir() makes: a str (``os.path.join``, ``+``) or a Path."""
        if isinstance(join, ast.BinOp):
            return "path" if isinstance(join.op, ast.Div) else "str"
        return "str" if (self.ctx.call_name(join) or "").endswith(".join") else "path"

    def _gettempdir_join(self, node: ast.Call) -> bool:
        name = self.ctx.call_name(node) or ""
        if name in PATH_JOINERS:
            args = node.args
            return len(args) >= 2 and self._is_gettempdir(args[0]) and any(_literal_name(a) for a in args[1:])
        if isinstance(node.func, ast.Attribute) and node.func.attr == "joinpath":
            return self._is_gettempdir(node.func.value) and any(_literal_name(a) for a in node.args)
        return False

    def _gettempdir_binop(self, node: ast.BinOp) -> bool:
        if not isinstance(node.op, (ast.Div, ast.Add)) or not _literal_name(node.right):
            return False
        left = node.left
        # gettempdir() + os.sep + "x" parses as (gettempdir() + os.sep) + "x"
        while isinstance(left, ast.BinOp) and isinstance(left.op, (ast.Div, ast.Add)):
            left = left.left
        return self._is_gettempdir(left)

    def _is_gettempdir(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            name = self.ctx.call_name(node)
            if name in GETTEMPDIR:
                return True
            if name in PATH_JOINERS and node.args:
                return self._is_gettempdir(node.args[0])
        return False

    # -- where it goes -------------------------------------------------------
    def _judge(self, node: ast.AST, origin: _Origin) -> Iterator[Violation]:
        if self._is_data():
            return
        fate = self._follow(node, origin.kind)
        if fate == _SINK:
            yield from self._report_once(origin, origin.node)
        elif isinstance(fate, tuple):
            names, kind = fate
            scope = self._bound.setdefault(self._function_key(), {})
            for name in names:
                scope[name] = _Origin(origin.node, origin.what, kind)
            self._follow_names()

    def _follow_names(self) -> None:
        """From now on, see the names and attributes the walk reaches."""
        self.ctx.dispatch_to(ast.Name, self.on_name)
        self.ctx.dispatch_to(ast.Attribute, self.on_attribute)

    def on_name(self, node: ast.Name) -> Iterator[Violation]:
        if isinstance(node.ctx, ast.Load):
            yield from self._use(node, node.id)

    def on_attribute(self, node: ast.Attribute) -> Iterator[Violation]:
        if isinstance(node.ctx, ast.Load) and self._bound.get(self._function_key()):
            text = dotted_name(node)
            if text is not None and "." in text:
                yield from self._use(node, text)

    def _use(self, node: ast.AST, name: str) -> Iterator[Violation]:
        local = self._bound.get(self._function_key())
        origin = local.get(name) if local else None
        at_use = False
        if origin is None:
            if self.ctx.function is None:
                return
            origin = self.constants().get(name)
            if origin is None:
                return
            at_use = True
        fate = self._follow(node, origin.kind)
        if fate == _SINK:
            if at_use:
                yield from self._report_once(_Origin(node, f"{name} ({origin.what})", origin.kind), origin.node)
            else:
                yield from self._report_once(origin, origin.node)
        elif isinstance(fate, tuple):
            names, kind = fate
            scope = self._bound.setdefault(self._function_key(), {})
            for bound in names:
                scope[bound] = _Origin(origin.node, origin.what, kind)

    def _report_once(self, origin: _Origin, source: ast.AST) -> Iterator[Violation]:
        key = (self._function_key() if origin.node is not source else 0, id(source))
        if key not in self._reported:
            self._reported.add(key)
            yield self.report(origin.node, what=origin.what)

    def _function_key(self) -> int:
        function = self.ctx.function
        return 0 if function is None else id(function)

    def constants(self) -> dict[str, _Origin]:
        """Module-level ``NAME = "/tmp/x"`` (or an f-string, or a gettempdir join)."""
        if self._constants is None:
            self._constants = {}
            for stmt in self.ctx.tree.body:
                if not isinstance(stmt, ast.Assign) or not all(isinstance(t, ast.Name) for t in stmt.targets):
                    continue
                origin = self._origin_of(stmt.value)
                if origin is not None:
                    for target in stmt.targets:
                        self._constants[target.id] = origin  # type: ignore[attr-defined]
        return self._constants

    def _origin_of(self, value: ast.expr) -> _Origin | None:
        if isinstance(value, ast.Constant) and _shared_temp_text(value.value) is not None:
            return _Origin(value, repr(value.value), "str")
        if isinstance(value, ast.JoinedStr) and value.values:
            head = value.values[0]
            if isinstance(head, ast.Constant) and _shared_temp_text(head.value) is not None:
                return _Origin(value, f"an f-string starting {head.value!r}", "str")
        if (isinstance(value, ast.Call) and self._gettempdir_join(value)) or (
            isinstance(value, ast.BinOp) and self._gettempdir_binop(value)
        ):
            return _Origin(value, "a fixed name under gettempdir()", self._join_kind(value))
        return None

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

    def _follow(self, node: ast.AST, kind: str) -> str | tuple[tuple[str, ...], str] | None:
        """Climb from ``node`` (the node being visited) through what keeps
        it a location: ``_SINK`` when it reaches the filesystem, the names
        and kind it is bound to, or None when it goes nowhere we can see."""
        parents = self.ctx.parents
        child: ast.AST = node
        index = len(parents) - 1
        while index >= 0:
            ancestor = parents[index]
            index -= 1
            if isinstance(ancestor, NEW_FRAMES):
                return None
            if isinstance(ancestor, ast.Call):
                if child is ancestor.func:
                    return None
                verdict = self._call_fate(ancestor, child, kind)
                if verdict is None or verdict == _SINK:
                    return verdict
                kind = verdict
            elif isinstance(ancestor, ast.keyword):
                pass  # judged with its call, which sees the keyword as the child
            elif isinstance(ancestor, ast.BinOp):
                if isinstance(ancestor.op, ast.Div):
                    kind = "path"
                elif not isinstance(ancestor.op, ast.Add):
                    return None
            elif isinstance(ancestor, ast.FormattedValue):
                kind = "str"
            elif isinstance(ancestor, ast.JoinedStr):
                head = ancestor.values[0] if ancestor.values else None
                if isinstance(head, ast.Constant) and str(head.value).startswith(BASETEMP):
                    return _SINK
            elif isinstance(ancestor, ast.Attribute):
                if ancestor.attr == "parent" or (ancestor.attr == "parents" and kind == "path"):
                    kind = "path"
                    child = ancestor
                    continue
                caller = parents[index] if index >= 0 else None
                if not (isinstance(caller, ast.Call) and caller.func is ancestor):
                    return None
                if kind == "path" and ancestor.attr in PATH_DISK_METHODS:
                    return _SINK
                if kind == "path" and ancestor.attr in PATH_METHODS:
                    child = caller
                    index -= 1
                    continue
                return None
            elif isinstance(ancestor, (ast.List, ast.Tuple, ast.Set, ast.Starred)):
                kind = "argv"
            elif isinstance(ancestor, (ast.IfExp, ast.BoolOp, ast.Subscript)):
                if isinstance(ancestor, ast.IfExp) and child is ancestor.test:
                    return None
                if isinstance(ancestor, ast.Subscript) and child is not ancestor.value:
                    return None
                if isinstance(ancestor, ast.Subscript):
                    kind = "str"  # an element of an argv list, or part of a path
            elif isinstance(ancestor, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                if isinstance(ancestor, ast.Assign):
                    targets = ancestor.targets
                else:
                    targets = [ancestor.target]
                names = tuple(
                    name for name in (dotted_name(t) for t in targets if isinstance(t, (ast.Name, ast.Attribute)))
                    if name is not None
                )
                return (names, kind) if names else None
            elif isinstance(ancestor, (ast.For, ast.AsyncFor, ast.comprehension)):
                if child is ancestor.iter and kind == "argv":
                    names = tuple(n for n in target_names(ancestor.target) if "." not in n)
                    return (names, "str") if names else None
                return None
            else:
                return None
            child = ancestor
        return None

    def _call_fate(self, call: ast.Call, child: ast.AST, kind: str) -> str | None:
        """What ``call`` does with ``child`` (one of its arguments, or a
        keyword): ``_SINK``, the kind of its result when that is still the
        location, or None."""
        name = self.ctx.call_name(call) or ""
        func = call.func
        method = func.attr if isinstance(func, ast.Attribute) else ""
        if child_process(call, name) is not None or method in PYTEST_RUNNERS or name == "pytest.main":
            return _SINK
        if kind == "argv" or isinstance(child, ast.keyword) and child.arg is None:
            return None
        if _touches_disk(name):
            return _SINK
        if method == "bind" and kind == "str" and call.args and call.args[0] is child:
            return _SINK  # a Unix socket's file
        if isinstance(child, ast.keyword):
            return None
        if name in PATH_CARRIERS:
            return "path" if name.startswith("pathlib.") else "str"
        return None


# -- HRM109 ------------------------------------------------------------------------

HOME_CALLS = frozenset({"pathlib.Path.home", "pathlib.PosixPath.home", "pathlib.WindowsPath.home"})
EXPANDUSER_CALLS = frozenset({"os.path.expanduser", "posixpath.expanduser", "ntpath.expanduser"})
EXPANDUSER_METHODS = frozenset({"pathlib.Path().expanduser", "pathlib.PosixPath().expanduser", "pathlib.WindowsPath().expanduser"})
GETENV_CALLS = frozenset({"os.getenv", "os.environ.get", "os.getenvb", "os.environb.get"})


#: calls that look only at the type of their first argument
TYPE_CHECKS = frozenset({"assertIsInstance", "assertNotIsInstance", "isinstance"})


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
    pins it for the whole tree. Also left alone: a read whose value only
    has its type checked (`assertIsInstance(expanduser("~"), str)`), and
    a helper function (not a test or fixture) that expands a path given
    to it as a parameter, which honours its caller's (or the command
    line's) choice.

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

    ## Off by default
    Turn it on with `--extend-select=HRM109` (or `extend-select` in the config):
    after narrowing, 1 of its 10 findings on ten real suites was a real hazard: almost all
    were tests of home expansion itself, comparing one read of the real home with another, which
    gives the same verdict on every host
    (see docs/precision.md). In an application's own suite, where such code is rare,
    it is worth turning on.

    ## Options
    None.
    """

    code = "HRM109"
    message = "{what} reads the operator's real home; pin HOME first (monkeypatch.setenv), or in an autouse conftest fixture"
    default_on = False
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
            if _no_tilde(node.args[0] if node.args else None) or self._expands_a_given_path(node):
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

    def _expands_a_given_path(self, node: ast.Call) -> bool:
        """A helper (not a test or fixture) expanding its own parameter: it
        honours a path its caller (or the command line) chose."""
        scope = self.ctx.function_scope
        argument = node.args[0] if node.args else None
        if scope is None or self.ctx.in_test or not isinstance(argument, ast.Name):
            return False
        arguments = scope.node.args  # type: ignore[attr-defined]
        return any(a.arg == argument.id for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))

    def _exempt(self, node: ast.AST) -> bool:
        if self.ctx.at_module_level:
            return True  # import time: HRM402
        parent = self.ctx.parent
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
            func = parent.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in TYPE_CHECKS:
                return True  # only the type of the value is looked at
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
#: a server subclass overriding one of these does not listen (a socket-less double)
NO_LISTEN_OVERRIDES = frozenset({"server_bind"})
DOUBLE_WORDS = ("Mock", "Fake", "Dummy", "Stub")
#: a handler catching one of these around a bind swallows "address already in use"
SWALLOWED_ERRORS = frozenset({"OSError", "socket.error", "Exception", "BaseException", "EnvironmentError"})


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
    to `web.run_app`, `uvicorn.run` or an `app.run`.

    Left alone, because nothing listens on the port or the test does not
    depend on getting it: a call the test expects to raise (inside
    `with pytest.raises(...)` or `with self.assertRaises(...)`); a host
    that is a literal domain name (`"example.com"` cannot be bound here);
    a server class given `bind_and_activate=False`; a subclass defined in
    the file that overrides `server_bind` (a socket-less double), also as
    the `server_class` of `make_server`, and a `server_class` or
    `handler_class` whose name says it is a double (`Mock`, `Fake`,
    `Dummy`, `Stub`); a bind inside a `try` whose `except OSError` (or
    `Exception`) handler is only `pass`; and a server made while the
    `socket` module is patched (a patch decorator, a `with` patch, or a
    `monkeypatch.setattr` earlier in the function) or on a loop whose
    `_start_serving` was replaced by a mock.

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

    def visit_ClassDef(self, node: ast.ClassDef) -> Iterator[Violation]:
        # a subclass that overrides server_bind (a socket-less test double) never listens
        if not any(isinstance(s, DEF_TYPES) and s.name in NO_LISTEN_OVERRIDES for s in node.body):
            yield from super().visit_ClassDef(node)
        else:
            self.doubles.add(node.name)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.doubles: set[str] = set()

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        found = self._port(node)
        if found is None:
            return
        port, host = found
        if not _local_host(host) or self._double_given(node):
            return
        # these climb the ancestors or read the function: only for the rare calls with a fixed port
        if expects_failure(self.ctx, node) or self.ctx.expected_to_raise(node) or self._failure_ignored(node):
            return
        if self._mocked(node):
            return
        yield self.report(node, port=port)

    def _port(self, node: ast.Call) -> tuple[int, ast.expr | None] | None:
        """The fixed port ``node`` listens on and the host expression given with it."""
        name = self.ctx.call_name(node) or ""
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) else ""
        args = node.args
        keyword_port = next((_fixed_port(k.value) for k in node.keywords if k.arg == "port"), None)
        keyword_host = next((k.value for k in node.keywords if k.arg == "host"), None)
        address: ast.expr | None = None
        if method == "bind" and len(args) == 1 and not node.keywords:
            address = args[0]
        elif name == "socket.create_server" or self.is_known_class(name):
            address = args[0] if args else None
        elif name in PORT_POSITIONS or method == "create_server":
            position = PORT_POSITIONS.get(name, 2)
            if len(args) > position:
                port = _fixed_port(args[position])
                return None if port is None else (port, args[position - 1])
            return None if keyword_port is None else (keyword_port, keyword_host)
        elif name in PORT_KEYWORD_CALLS or method == "run":
            return None if keyword_port is None else (keyword_port, keyword_host)
        port = _address_port(address)
        return None if port is None else (port, address.elts[0])  # type: ignore[union-attr]

    def _double_given(self, node: ast.Call) -> bool:
        """``make_server(host, port, app, MockServer, MockHandler)``, a server
        class given ``bind_and_activate=False``, or a server class that is a
        local double: nothing is bound."""
        name = self.ctx.call_name(node) or ""
        if _bool_keyword(node, "bind_and_activate") is False:
            return True
        if self.is_known_class(name) and len(node.args) > 2:
            third = node.args[2]
            if isinstance(third, ast.Constant) and third.value is False:
                return True
        given = [*node.args[3:5], *(k.value for k in node.keywords if k.arg in ("server_class", "handler_class"))]
        if name == "wsgiref.simple_server.make_server":
            return any(self._is_double(g) for g in given)
        return False

    def _is_double(self, node: ast.expr) -> bool:
        text = dotted_name(node) or ""
        last = text.rpartition(".")[2]
        return last in self.doubles or any(word in last for word in DOUBLE_WORDS)

    def _failure_ignored(self, node: ast.Call) -> bool:
        """A bind inside ``try`` whose handler for OSError is only ``pass``:
        the test goes on the same way whether the port was free or not."""
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, ast.Try) and any(on_path is stmt for stmt in ancestor.body):
                for handler in ancestor.handlers:
                    caught = {dotted_name(t) for t in _caught(handler)}
                    if caught & SWALLOWED_ERRORS and all(isinstance(stmt, ast.Pass) for stmt in handler.body):
                        return True
        return False

    def _mocked(self, node: ast.Call) -> bool:
        """The socket module is patched around the call, or the receiver's
        ``_start_serving`` is replaced (``loop._start_serving = Mock()``)."""
        func = node.func
        receiver = dotted_name(func.value) if isinstance(func, ast.Attribute) else None

        def wanted(target: str) -> bool:
            if target.rpartition(".")[2] == "socket" or target.startswith("socket.socket"):
                return True
            return receiver is not None and target == f"{receiver}._start_serving"

        return mocked_here(self.ctx, node, wanted)


def _caught(handler: ast.ExceptHandler) -> list[ast.expr]:
    if handler.type is None:
        return [ast.Name(id="BaseException")]
    if isinstance(handler.type, ast.Tuple):
        return list(handler.type.elts)
    return [handler.type]


def _local_host(host: ast.expr | None) -> bool:
    """Whether ``host`` may be this machine: anything but a literal domain
    name (``"example.com"`` cannot be bound here; the call is made to fail)."""
    if not isinstance(host, ast.Constant) or not isinstance(host.value, str):
        return True
    value = host.value.lower()
    if not value or value == "localhost" or value.endswith(".localhost") or ":" in value:
        return True
    return not ("." in value and any(c.isalpha() for c in value))


# -- HRM111 ------------------------------------------------------------------------

LIFECYCLE_METHODS = frozenset({
    "close", "aclose", "shutdown", "stop", "terminate", "kill", "join", "cancel",
    "disconnect", "dispose", "cleanup", "__exit__", "__aexit__",
})


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
        kind = patch_kind(name)
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
    A thread kept on `self` (or put in a list kept on `self`) that another
    method of the class joins is taken as joined: `tearDown`, a method
    registered with `self.addCleanup(self.stop_server)`, a `stop()` the
    test calls. That holds for a thread started in `setUp` too: a failure
    later in `setUp` skips `tearDown`, but the pair is the idiom unittest
    is built around. The join may be `t.join()`, a helper whose name
    contains `join` (`join_thread(self.thread)`), a loop over the list, or
    a method of a `Thread` subclass defined in the same file that calls
    `self.join()` (`self.server.stop()`). Subclasses of `Thread` are
    recognised when they are defined in the same file.
    """

    code = "HRM112"
    message = "thread started here is never joined in this function and outlives the test; join it with a timeout (or addCleanup(t.join))"
    calls = THREAD_CLASSES

    known_classes = THREAD_CLASSES

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: local Thread subclass -> its methods that join the thread (``stop``)
        self.joining_methods: dict[str, set[str]] = {}

    def visit_ClassDef(self, node: ast.ClassDef) -> Iterator[Violation]:
        yield from super().visit_ClassDef(node)
        if node.name in self.local_subclasses:
            inherited = set().union(*(self.joining_methods.get(dotted_name(b) or "", set()) for b in node.bases))
            own = {
                method.name for method in node.body
                if isinstance(method, DEF_TYPES) and any(
                    isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in JOIN_METHODS and dotted_name(sub.func.value) == "self"
                    for sub in ast.walk(method)
                )
            }
            self.joining_methods[node.name] = inherited | own

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        if not self.is_known_class(name):
            return
        function = self.ctx.function
        if function is None:
            return
        holder = holder_of(self.ctx, node)
        if holder.chained == "start":
            if not self._inside_thread_waiter(node) and not self._in_child_process():
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
        if self.joined_elsewhere_in_class(holder.names, function, name) or self._inside_thread_waiter(node):
            return
        if not self._in_child_process():
            yield self.report(node)

    def _in_child_process(self) -> bool:
        """A method handed to ``Process(target=self.method)``: its threads
        live and die in the child process."""
        owner, method = method_of(self.ctx)
        if owner is None or method is None:
            return False
        wanted = {f"self.{method.name}", f"cls.{method.name}", f"{owner.name}.{method.name}"}
        for sub in (node for family in class_family(self.ctx, owner) for node in ast.walk(family)):
            if isinstance(sub, ast.Call) and (dotted_name(sub.func) or "").endswith("Process"):
                if any(k.arg == "target" and dotted_name(k.value) in wanted for k in sub.keywords):
                    return True
        return False

    def _inside_thread_waiter(self, node: ast.Call) -> bool:
        """``with threading_helper.wait_threads_exit():`` waits for every
        thread started in its block."""
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and on_path not in ancestor.items:
                for item in ancestor.items:
                    call = item.context_expr
                    name = (dotted_name(call.func) or "").lower() if isinstance(call, ast.Call) else ""
                    if "thread" in name and any(word in name for word in ("wait", "join", "reap")):
                        return True
        return False

    def joined_elsewhere_in_class(self, names: tuple[str, ...], function: FunctionNode, cls: str | None) -> bool:
        """A thread kept on ``self`` (or in a list kept on ``self``) may be
        joined by another method of the class: ``tearDown``, a cleanup
        ``setUp`` registered, a ``stop()`` the test calls."""
        kept = {n for n in names if n.startswith(("self.", "cls."))}
        for sub in ast.walk(function):
            if not isinstance(sub, ast.Call) or not isinstance(sub.func, ast.Attribute):
                continue
            if sub.func.attr in CONTAINER_METHODS:
                receiver = dotted_name(sub.func.value)
                if receiver is not None and receiver.startswith(("self.", "cls.")):
                    if set().union(*(mentions(a) for a in sub.args)) & set(names):
                        kept.add(receiver)
        owner, _ = method_of(self.ctx)
        if not kept or owner is None:
            return False
        joins = JOIN_METHODS | self.joining_methods.get(cls or "", set())
        searched: list[ast.AST] = list(class_family(self.ctx, owner))
        outer = [s.node for s in self.ctx.scopes if s.kind == "function" and getattr(s.node, "lineno", 0) < owner.lineno]
        if outer:
            # a class defined inside the test: the test joins what its instance keeps (``target.threads``)
            searched.append(outer[-1])
            attributes = {name.rpartition(".")[2] for name in kept}
        else:
            attributes = set()
        calls: list[ast.Call] = []
        for sub in (node for root in searched for node in ast.walk(root)):
            if isinstance(sub, (ast.For, ast.AsyncFor, ast.comprehension)):
                source = dotted_name(sub.iter) or ""
                if source in kept or (attributes and source.rpartition(".")[2] in attributes and "." in source):
                    kept.update(target_names(sub.target))
            elif isinstance(sub, ast.Call):
                calls.append(sub)
        for call in calls:
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in joins:
                receiver = dotted_name(func.value) or ""
                if receiver in kept or ("." in receiver and receiver.rpartition(".")[2] in attributes):
                    return True
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if "join" in callee.lower() and any(dotted_name(a) in kept for a in call.args):
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
    `wait_for_output(p)`), polls it in a loop (`while p.poll() is None:`),
    or uses it as a `with` item. A plain helper function that returns the
    child hands it to its caller. A child kept on `self` by one method and
    waited on or killed by another method of the same class (a
    `start()`/`stop()` pair) is left alone, except when it starts in
    `setUp`.

    Left alone as well, because no child runs: a `Popen` the test expects
    to raise (inside `with pytest.raises(...)` or
    `with self.assertRaises(...)`), a `Popen` whose result is thrown away
    inside a `try` whose `except OSError` (or `FileNotFoundError`,
    `ValueError`, ...) is the point of the test, and a `Popen` made while
    `subprocess.Popen` or its `_execute_child` is patched (by a `with`
    patch around it, a patch decorator, or a `monkeypatch.setattr` earlier
    in the function). A module-level `Popen` in a script is judged against
    the module body.

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
    A child started in `setUp` and killed in `tearDown` is flagged:
    register the cleanup where it starts. A test or fixture that returns
    the child is flagged too (a fixture should yield it and kill it
    afterwards).
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
        if expects_failure(self.ctx, node) or self.ctx.expected_to_raise(node):
            return
        function = self.ctx.function
        # a script's module-level child is judged against the module body
        owner: ast.AST = function if function is not None else self.ctx.tree
        if holder.how == "assigned" and holder.names:
            facts = self.facts(owner)  # type: ignore[arg-type]
            for n in holder.names:
                if facts.called(n, REAPERS, handed_over=True) or n in facts.registered or n in facts.managed:
                    return
                if facts.passed_to(n, _reaps):
                    return
            if _polled_in_loop(owner, holder.names) or self._reaped_elsewhere_in_class(holder.names):
                return
        elif holder.how == "unbound" and self._failure_is_the_point(node):
            return
        if mocked_here(self.ctx, node, _stops_the_spawn):
            return
        yield self.report(node)

    def _failure_is_the_point(self, node: ast.Call) -> bool:
        """``try: Popen(bad) / except OSError: ...`` with the child thrown
        away: the test is about the call failing."""
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, ast.Try) and any(on_path is stmt for stmt in ancestor.body):
                for handler in ancestor.handlers:
                    if {dotted_name(t) for t in _caught(handler)} & SPAWN_ERRORS:
                        return True
        return False

    def _reaped_elsewhere_in_class(self, names: tuple[str, ...]) -> bool:
        """A child kept on ``self`` by one method and waited on or killed by
        another (a ``start()``/``stop()`` pair). Not when it starts in
        ``setUp``: a failure later in ``setUp`` skips ``tearDown``."""
        kept = {n for n in names if n.startswith(("self.", "cls."))}
        class_scope = self.ctx.class_scope
        function = self.ctx.function
        if not kept or class_scope is None or function is None or function.name.startswith(("setUp", "asyncSetUp")):
            return False
        for sub in ast.walk(class_scope.node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in REAPERS
                and dotted_name(sub.func.value) in kept
            ):
                return True
        return False


#: what a test expects a bad command line to raise
SPAWN_ERRORS = frozenset({
    "OSError", "FileNotFoundError", "PermissionError", "NotADirectoryError", "subprocess.SubprocessError",
    "SubprocessError", "ValueError", "TypeError", "EnvironmentError",
})


def _stops_the_spawn(target: str) -> bool:
    """A patch target that keeps ``Popen(...)`` from starting anything."""
    return target in ("subprocess.Popen", "subprocess._fork_exec", "_posixsubprocess.fork_exec") or (
        target.startswith("subprocess.Popen.") and target.rpartition(".")[2] in ("_execute_child", "__init__", "__new__")
    )


def _polled_in_loop(owner: ast.AST, names: tuple[str, ...]) -> bool:
    """``while p.poll() is None: ...`` (or a poll inside any loop): the
    function waits for the child itself."""
    wanted = set(names)
    for loop in ast.walk(owner):
        if isinstance(loop, (ast.While, ast.For, ast.AsyncFor)):
            for sub in ast.walk(loop):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr == "poll"
                    and dotted_name(sub.func.value) in wanted
                ):
                    return True
    return False


# -- HRM114 ------------------------------------------------------------------------

TASK_FACTORIES = frozenset({"asyncio.create_task", "asyncio.ensure_future"})
LOOP_GETTERS = frozenset({"asyncio.get_running_loop", "asyncio.get_event_loop", "asyncio.new_event_loop"})


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
    `loop.create_task(...)` as expression statements. `X.create_task(...)`
    counts only when `X` is evidently an event loop: a name or attribute
    with `loop` in it (`loop`, `self.loop`, `event_loop`) or a call of
    `asyncio.get_running_loop()`, `get_event_loop()` or `new_event_loop()`.
    Any other receiver is left alone, because `create_task` is also the
    method of a task group (`tg`, a group handed to a helper as `g`), of a
    trio/anyio nursery and of project schedulers, which own their tasks;
    a receiver bound by `async with asyncio.TaskGroup() as X` is never
    flagged, whatever its name. A call that the test expects to raise
    (inside `with pytest.raises(...)` or `with self.assertRaises(...)`) is
    not flagged either.

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

    ## Off by default
    Turn it on with `--extend-select=HRM114` (or `extend-select` in the config):
    after narrowing, at most 3 of its 15 findings on ten real suites were real hazards: most
    were fire-and-forget tasks that visibly finish inside the test, which the syntax cannot tell
    from a task that outlives it
    (see docs/precision.md). In an application's own suite, where such code is rare,
    it is worth turning on.

    ## Options
    None.

    ## Known problems
    A loop kept under a name without `loop` in it (`self.ev.create_task`)
    is not recognised.
    """

    code = "HRM114"
    message = "{name}() result is discarded: the task outlives the test; keep it and await or cancel it"
    default_on = False

    def visit_Expr(self, node: ast.Expr) -> Iterator[Violation]:
        call = node.value
        if not isinstance(call, ast.Call):
            return
        name = self.ctx.call_name(call) or ""
        func = call.func
        if name in TASK_FACTORIES:
            what = name
        elif isinstance(func, ast.Attribute) and func.attr == "create_task" and self._is_loop(func.value):
            what = f"{self.ctx.resolve(func.value) or dotted_name(func.value) or '...'}.create_task"
        else:
            return
        # these climb the ancestors: only for the few calls that would be reported
        if not expects_failure(self.ctx, node) and not self.ctx.expected_to_raise(node):
            yield self.report(call, name=what)

    def _is_loop(self, receiver: ast.expr) -> bool:
        """``loop``, ``self.loop``, ``asyncio.get_running_loop()``; never a
        name bound by ``async with asyncio.TaskGroup() as name``."""
        if isinstance(receiver, ast.Call):
            return self.ctx.call_name(receiver) in LOOP_GETTERS
        text = dotted_name(receiver)
        if text is None or "loop" not in text.rpartition(".")[2].lower():
            return False
        for ancestor, _ in self.ctx.ancestors_in_function():
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                for item in ancestor.items:
                    if text in target_names(item.optional_vars):
                        owner = self.ctx.resolve(item.context_expr) or ""
                        return not owner.rstrip("()").endswith("TaskGroup")
        return True


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
