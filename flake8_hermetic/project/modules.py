"""What one module of the project offers the others, read from its source.

One pass over a parsed module gives its top-level functions, its classes'
methods, its fixtures (scope, autouse, what they request, their effects),
its ``pytest_plugins``, and, for a conftest, what it does for the whole
tree below it (host pins, a per-run temp directory). Nothing is imported
or run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from flake8_hermetic.facts.hostpins import NO_PINS, Pins, module_pins, pins_in
from flake8_hermetic.imports import dotted_name, module_imports
from flake8_hermetic.nodes import DEF_TYPES

#: the effects of a fixture the rules ask about
CHANGES_CWD = "changes cwd"
RESTORES_CWD = "restores cwd"
RESTORES_ENV = "restores os.environ"
SETS_ENV = "sets env"
PINS_HOME = "pins home"
PINS_GIT = "pins git config"
REDIRECTS_TEMP = "redirects the temp dir"
#: prefix of the effect "monkeypatch puts this key of os.environ back at teardown" (``+ key``)
RESTORES_ENV_KEY = "restores os.environ key "
#: a patch through ``monkeypatch`` that faces the host: an environment variable, the working directory,
#: ``sys.path``, or a target the reader cannot name (a local object, ``monkeypatch`` handed to a helper)
PATCHES_HOST = "patches the host through monkeypatch"
#: prefix of the effect "monkeypatch patches an attribute or item of this dotted target" (``+ dotted``):
#: the model decides whether the target's module is the project's own (principle ``own-names-only``)
PATCHES_NAME = "monkeypatch patches "
#: it asks for ``monkeypatch`` and uses it only in a branch for doctests (principle ``never-runs``)
PATCHES_NOTHING = "patches nothing through monkeypatch for a test function"
#: ``monkeypatch`` methods and what they face: the host, or a named target (the first argument)
_HOST_PATCHES = frozenset({"setenv", "delenv", "chdir", "syspath_prepend"})
_NAMED_PATCHES = frozenset({"setattr", "delattr", "setitem", "delitem"})

SPAWNERS = frozenset({
    "subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.getoutput", "subprocess.getstatusoutput", "os.system", "os.popen",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell", "trio.run_process", "anyio.run_process",
})
SLEEPS = frozenset({"time.sleep", "asyncio.sleep", "trio.sleep", "anyio.sleep"})
TEMP_MAKERS = frozenset({
    "tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.mktemp", "tempfile.NamedTemporaryFile",
    "tempfile.TemporaryDirectory", "tempfile.TemporaryFile",
})
WRAPPED_KINDS = (("spawn", SPAWNERS), ("sleep", SLEEPS), ("temp", TEMP_MAKERS))
#: exceptions a helper raises that do not fail the test on a check
NOT_A_CHECK = ("NotImplementedError", "SkipTest", "Skipped", "StopIteration", "KeyboardInterrupt")
#: exceptions that are a failed check whatever guards them
FAILURES = frozenset({"AssertionError", "failureException", "Failed", "TestFailed", "Failure"})
FAILING_CALLS = frozenset({"pytest.fail", "pytest.raises", "pytest.warns", "pytest.deprecated_call"})
ENVIRON_SNAPSHOTS = frozenset({"os.environ.copy", "dict", "copy.copy", "copy.deepcopy"})
ENVIRON_RESTORES = frozenset({"os.environ.clear", "os.environ.update"})
TEMP_VARIABLES = frozenset({"TMPDIR", "TEMP", "TMP"})
PER_RUN_TEMP = frozenset({"mkdtemp", "TemporaryDirectory", "getbasetemp", "mktemp"})
REMOVALS = frozenset({"rmtree", "cleanup", "register", "getbasetemp"})
SESSION_HOOKS = frozenset({"pytest_configure", "pytest_sessionstart"})
#: the methods that run after every test of their class
PER_TEST_TEARDOWNS = frozenset({"tearDown", "asyncTearDown", "teardown_method"})


def resolve_with(aliases: dict[str, str], node: ast.AST) -> str | None:
    """``node``'s dotted name through the module's imports (as written when unbound)."""
    name = dotted_name(node)
    if name is None:
        return None
    head, dot, rest = name.partition(".")
    target = aliases.get(head)
    return (target + dot + rest) if target else name


@dataclass
class Fixture:
    """One fixture, as its definition reads."""

    name: str
    path: str
    line: int
    scope: str = "function"
    autouse: bool = False
    requests: tuple[str, ...] = ()
    effects: frozenset[str] = frozenset()
    #: project calls whose ``with`` block holds its ``yield`` (``with env_vars(): yield``), ``yield from helper()``
    managers: tuple[str, ...] = ()
    #: project helpers its teardown calls (after the ``yield``, in a ``finally``, ``request.addfinalizer(f)``)
    finalizers: tuple[str, ...] = ()


@dataclass
class Function:
    """A top-level function or a method (``qualname`` "Class.method")."""

    qualname: str
    asserts: bool = False
    #: what it calls that may assert: ("local", qualname), ("self", method), ("dotted", name)
    callees: list[tuple[str, str]] = field(default_factory=list)
    #: "spawn", "sleep" or "temp": it hands its arguments to such a call
    wraps: str | None = None
    #: the class reference a fixture returns or yields (``return Env(...)``)
    returns: str | None = None
    #: the process state its body changes: "cwd" (``os.chdir``), "env" (a write of ``os.environ``)
    touches: frozenset[str] = frozenset()
    #: a ``@contextmanager`` generator: its effects around its ``yield``, as a fixture's read
    manager: Fixture | None = None


@dataclass
class ModuleFacts:
    path: str
    aliases: dict[str, str]
    functions: dict[str, Function] = field(default_factory=dict)
    #: class name -> its bases' references (local names or dotted)
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fixtures: dict[str, Fixture] = field(default_factory=dict)
    #: class name -> the fixtures defined in its body (a base class's autouse ones apply to its subclasses' tests)
    class_fixtures: dict[str, dict[str, Fixture]] = field(default_factory=dict)
    #: class name -> the fixtures its ``usefixtures`` marks ask for (a decorator, a ``pytestmark``): inherited
    class_marks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    pytest_plugins: tuple[str, ...] = ()
    pins: Pins = NO_PINS
    redirects_temp: bool = False


def _decorator_call(function: ast.AST, last: str) -> ast.expr | None:
    for decorator in function.decorator_list:  # type: ignore[attr-defined]
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted_name(target) or ""
        if name.rpartition(".")[2] == last:
            return decorator
    return None


def _keyword(call: ast.expr | None, name: str) -> object:
    if isinstance(call, ast.Call):
        for keyword in call.keywords:
            if keyword.arg == name and isinstance(keyword.value, ast.Constant):
                return keyword.value.value
    return None


def own_walk(function: ast.AST) -> list[ast.AST]:
    """The nodes of ``function``'s own frame (nested defs, classes and lambdas left out)."""
    found: list[ast.AST] = []
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        if isinstance(node, (*DEF_TYPES, ast.ClassDef, ast.Lambda)):
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


class _Reader:
    """Reads one function for :class:`Function` and :class:`Fixture` facts."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.aliases = facts.aliases

    def name(self, node: ast.AST) -> str:
        return resolve_with(self.aliases, node) or ""

    def project_reference(self, node: ast.AST) -> bool:
        """``node`` may name a function of the project: a bare name, or a
        dotted one through an import (not a method of a local object)."""
        if isinstance(node, ast.Name):
            return True
        name = dotted_name(node)
        return name is not None and name.partition(".")[0] in self.aliases

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, in_class: bool) -> Function:
        facts = Function(qualname)
        nodes = own_walk(node)
        params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                params.add(extra.arg)
        checked = _checking_raises(nodes, params)
        for sub in nodes:
            if isinstance(sub, ast.Assert):
                facts.asserts = True
            elif isinstance(sub, ast.Raise) and sub.exc is not None:
                exc = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
                raised = (dotted_name(exc) or "").rpartition(".")[2]
                if raised in FAILURES or raised.endswith(("Failed", "Failure")) or (
                    id(sub) in checked and not raised.startswith(NOT_A_CHECK)
                ):
                    facts.asserts = True
            elif isinstance(sub, ast.Call):
                self._call(sub, facts, params, in_class)
        if _decorator_call(node, "fixture") is not None or _decorator_call(node, "yield_fixture") is not None:
            facts.returns = self._returned_class(nodes)
        facts.touches = self._touches(nodes)
        if any(isinstance(sub, (ast.Yield, ast.YieldFrom)) for sub in nodes):
            effects = self.effects(node)
            managers, finalizers = self.last_refs
            facts.manager = Fixture(qualname, self.facts.path, node.lineno, effects=effects,
                                    managers=managers, finalizers=finalizers)
        return facts

    def _touches(self, nodes: list[ast.AST]) -> frozenset[str]:
        touched = set()
        for sub in nodes:
            if isinstance(sub, ast.Call):
                name = self.name(sub.func)
                if name in ("os.chdir", "os.fchdir"):
                    touched.add("cwd")
                elif name in ENVIRON_RESTORES or name in ("os.environ.pop", "os.unsetenv", "os.putenv"):
                    touched.add("env")
            elif isinstance(sub, (ast.Assign, ast.Delete)):
                for target in sub.targets:
                    if isinstance(target, ast.Subscript):
                        target = target.value
                    if self.name(target) == "os.environ":
                        touched.add("env")
        return frozenset(touched)

    def _call(self, call: ast.Call, facts: Function, params: set[str], in_class: bool) -> None:
        func = call.func
        name = self.name(func)
        last = name.rpartition(".")[2]
        receiver = func.value if isinstance(func, ast.Attribute) else None
        # a wrapper whose spawner checks (``run(args, check=True)``) is a wrapper still
        if facts.wraps is None and params:
            for kind, names in WRAPPED_KINDS:
                if name in names and _mentions_any(call, params):
                    facts.wraps = kind
        if name in FAILING_CALLS or last.startswith("assert") or (
            isinstance(receiver, ast.Name) and receiver.id in ("self", "cls") and last.startswith("fail")
        ) or any(k.arg == "check" and isinstance(k.value, ast.Constant) and k.value.value is True
                 for k in call.keywords):
            facts.asserts = True
            return
        if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
            if in_class:
                facts.callees.append(("self", last))
        elif isinstance(func, ast.Name):
            facts.callees.append(("dotted", name) if func.id in self.aliases else ("local", func.id))
        elif (dotted_name(func) or "").partition(".")[0] in self.aliases:
            facts.callees.append(("dotted", name))

    def _returned_class(self, nodes: list[ast.AST]) -> str | None:
        built: dict[str, str] = {}
        for sub in nodes:
            if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call) and len(sub.targets) == 1:
                target = sub.targets[0]
                if isinstance(target, ast.Name):
                    built[target.id] = self.name(sub.value.func)
        for sub in nodes:
            value = sub.value if isinstance(sub, (ast.Return, ast.Yield)) else None
            if isinstance(value, ast.Call):
                return self.name(value.func) or None
            if isinstance(value, ast.Name) and value.id in built:
                return built[value.id] or None
        return None

    # -- fixtures ------------------------------------------------------------
    def fixture(self, node: ast.FunctionDef | ast.AsyncFunctionDef, path: str) -> Fixture | None:
        decorator = _decorator_call(node, "fixture") or _decorator_call(node, "yield_fixture")
        if decorator is None:
            return None
        scope = _keyword(decorator, "scope")
        name = _keyword(decorator, "name")
        requests = tuple(a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs))
        requests += _requested_at_run_time(own_walk(node))
        return Fixture(
            name=name if isinstance(name, str) else node.name,
            path=path,
            line=node.lineno,
            scope=scope if isinstance(scope, str) else "function",
            autouse=_keyword(decorator, "autouse") is True,
            requests=tuple(r for r in requests if r not in ("self", "cls", "request")),
            effects=self.effects(node),
            managers=self.last_refs[0],
            finalizers=self.last_refs[1],
        )

    def effects(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
        """What running ``node`` as a fixture (or a context manager) does to
        the process state; the project's managers and teardown helpers it
        calls are kept on :attr:`last_refs` for the model to follow."""
        nodes = own_walk(node)
        doctest_only = {id(inner) for sub in nodes if _for_doctests_only(sub) for inner in _body_nodes(sub)}
        scan = _EffectScan(self, [sub for sub in nodes if id(sub) not in doctest_only] if doctest_only else nodes)
        uses = [sub for sub in ast.walk(node)
                if isinstance(sub, ast.Name) and sub.id == "monkeypatch" and id(sub) not in doctest_only]
        read = {id(sub.func.value) for sub in scan.nodes
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)}
        if any(id(use) not in read for use in uses):
            # bound to another name, used in a nested def or a lambda, handed on: what it patches is not read
            scan.found.add(PATCHES_HOST)
        if doctest_only and not uses and "monkeypatch" not in _requested_at_run_time(nodes):
            scan.found.add(PATCHES_NOTHING)  # it patches through monkeypatch for doctests only
        for sub in scan.nodes:
            scan.visit(sub)
        pins = pins_in(node)
        if pins.home:
            scan.found.add(PINS_HOME)
        if pins.git_config:
            scan.found.add(PINS_GIT)
        self.last_refs = (tuple(scan.managers), tuple(scan.finalizers))
        return frozenset(scan.found)

    #: the (managers, finalizers) the last :meth:`effects` call found
    last_refs: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())


class _EffectScan:
    """One pass over a fixture's own nodes, in source order (a snapshot is
    taken before the restore that uses it)."""

    def __init__(self, reader: _Reader, nodes: list[ast.AST]) -> None:
        self.reader = reader
        nodes.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        self.nodes = nodes
        self.yield_line = min(
            (sub.lineno for sub in nodes if isinstance(sub, (ast.Yield, ast.YieldFrom))), default=None
        )
        self.finally_lines = {
            inner.lineno for sub in nodes if isinstance(sub, ast.Try)
            for stmt in sub.finalbody for inner in ast.walk(stmt) if hasattr(inner, "lineno")
        }
        self.found: set[str] = set()
        self.snapshot = False
        self.temp_swapped = False
        #: project calls whose block holds the yield (``with env_vars(): yield``), or ``yield from helper()``
        self.managers: list[str] = []
        #: project helpers called in the teardown (after the yield, in a ``finally``, ``request.addfinalizer``)
        self.finalizers: list[str] = []

    def after(self, sub: ast.AST) -> bool:
        line = getattr(sub, "lineno", 0)
        return (self.yield_line is not None and line > self.yield_line) or line in self.finally_lines

    def visit(self, sub: ast.AST) -> None:
        if isinstance(sub, (ast.With, ast.AsyncWith)) and self.yield_line is not None \
                and _holds_line(sub, self.yield_line):
            self._manager(sub)
        elif isinstance(sub, ast.YieldFrom) and isinstance(sub.value, ast.Call):
            if self.reader.project_reference(sub.value.func):
                self.managers.append(self.reader.name(sub.value.func))
        if isinstance(sub, ast.Call):
            self._call(sub)
            return
        rebinds = isinstance(sub, ast.Assign) and any(self.reader.name(t) == "os.environ" for t in sub.targets)
        if isinstance(sub, ast.Assign) and any(self.reader.name(t) == "tempfile.tempdir" for t in sub.targets):
            if self.after(sub) and self.temp_swapped:
                self.found.add(REDIRECTS_TEMP)  # swapped for the test and put back in its teardown
            self.temp_swapped = True
        if rebinds and self.after(sub):
            self.found.add(RESTORES_ENV if self.snapshot else SETS_ENV)
        elif isinstance(sub, (ast.Assign, ast.AugAssign)) and _writes_environ(self.reader, sub):
            self.found.add(SETS_ENV)

    def _manager(self, block: ast.With | ast.AsyncWith) -> None:
        for item in block.items:
            call = item.context_expr
            if not isinstance(call, ast.Call):
                continue
            written = self.reader.name(call.func)
            lowered = written.rpartition(".")[2].lower()
            if "chdir" in lowered or "cwd" in lowered:
                self.found |= {CHANGES_CWD, RESTORES_CWD}
            if _patches_environ(self.reader, call):
                self.found.add(RESTORES_ENV)
            if written and self.reader.project_reference(call.func):
                self.managers.append(written)

    def _monkeypatch(self, sub: ast.Call, last: str) -> bool:
        """What a ``monkeypatch`` call puts back at teardown: the whole
        environment swapped (``setattr(os, "environ", {...})``), a key it set
        or deleted, ``tempfile.tempdir``."""
        if last == "setattr" and _swaps(self.reader, sub, "os.environ"):
            self.found.add(RESTORES_ENV)
        elif last == "setattr" and _swaps(self.reader, sub, "tempfile.tempdir"):
            self.found.add(REDIRECTS_TEMP)
        elif last in ("setenv", "delenv") and sub.args and isinstance(sub.args[0], ast.Constant):
            self.found.add(RESTORES_ENV_KEY + str(sub.args[0].value))
        else:
            return False
        return True

    def _patch_target(self, sub: ast.Call, last: str) -> None:
        """What a ``monkeypatch`` call faces (principle ``own-names-only``):
        the host (``setenv``, ``chdir``, ``syspath_prepend``), or the dotted
        object a ``setattr``/``setitem`` patches, named through the module's
        imports or as a string (``"pkg.mod.NAME"`` patches ``pkg.mod``); a
        target the reader cannot name faces the host, as far as it can tell."""
        if last in _HOST_PATCHES:
            self.found.add(PATCHES_HOST)
            return
        if last not in _NAMED_PATCHES:
            return
        first = sub.args[0] if sub.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and last in ("setattr", "delattr"):
            dotted = first.value.rpartition(".")[0]  # "pkg.mod.NAME": the object patched is pkg.mod
        elif first is not None and not isinstance(first, (ast.Name, ast.Attribute)):
            dotted = ""
        else:
            head = (dotted_name(first) or "").partition(".")[0] if first is not None else ""
            dotted = self.reader.name(first) if first is not None and head in self.reader.aliases else ""
        self.found.add(PATCHES_NAME + dotted if dotted else PATCHES_HOST)

    def _call(self, sub: ast.Call) -> None:
        name = self.reader.name(sub.func)
        last = name.rpartition(".")[2]
        receiver = dotted_name(sub.func.value) if isinstance(sub.func, ast.Attribute) else None
        by_monkeypatch = receiver is not None and "monkeypatch" in receiver
        if receiver == "monkeypatch":
            self._patch_target(sub, last)
        elif any(isinstance(a, ast.Name) and a.id == "monkeypatch"
                 for a in (*sub.args, *(k.value for k in sub.keywords))):
            self.found.add(PATCHES_HOST)  # handed to a helper: what it patches is not read here
        if by_monkeypatch and self._monkeypatch(sub, last):
            return
        if name in ("os.chdir", "os.fchdir"):
            self.found.add(RESTORES_CWD if self.after(sub) and CHANGES_CWD in self.found else CHANGES_CWD)
        elif last == "chdir" and by_monkeypatch:
            self.found |= {CHANGES_CWD, RESTORES_CWD}  # monkeypatch puts the first cwd back at teardown
        elif (name in ENVIRON_SNAPSHOTS and _names_environ(self.reader, sub)) or name == "os.environ.copy":
            self.snapshot = True
        elif name in ENVIRON_RESTORES and self.after(sub):
            self.found.add(RESTORES_ENV if self.snapshot else SETS_ENV)
        elif name in ("os.environ.update", "os.environ.setdefault", "os.putenv") or (
            last == "setenv" and receiver is not None and not by_monkeypatch
        ):
            self.found.add(SETS_ENV)
        elif last in ("addfinalizer", "callback", "addCleanup") and sub.args:
            self.finalizers.append(self.reader.name(sub.args[0]))
        elif self.after(sub) and name and self.reader.project_reference(sub.func):
            self.finalizers.append(name)


def _requested_at_run_time(nodes: list[ast.AST]) -> tuple[str, ...]:
    """The fixtures ``nodes`` ask for with ``request.getfixturevalue("name")``: requested at run time."""
    return tuple(
        sub.args[0].value for sub in nodes
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "getfixturevalue"
        and sub.args and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str)
    )


def _for_doctests_only(node: ast.AST) -> bool:
    """``if isinstance(request.node, DoctestItem):``: a branch of a fixture
    that runs only for a doctest, never for a test function (principle
    ``never-runs``)."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and dotted_name(test.args[0]) == "request.node"):
        return False
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    return bool(kinds) and all((dotted_name(kind) or "").rpartition(".")[2] == "DoctestItem" for kind in kinds)


def _body_nodes(node: ast.If) -> list[ast.AST]:
    """Every node of an ``if``'s body (not its test, not its ``else``)."""
    return [inner for stmt in node.body for inner in ast.walk(stmt)]


def _checking_raises(nodes: list[ast.AST], params: set[str]) -> set[int]:
    """The raises (by id) that check an outcome: under an ``if`` whose test
    reads a local the helper got from a call (``result =
    subprocess.run(...)``; ``if result.returncode: raise ...``). A raise
    tested on the parameters alone validates the arguments (``if not
    recursive: raise OSError(EISDIR)``): the caller's misuse, not a check."""
    from_calls = {
        target.id for sub in nodes if isinstance(sub, ast.Assign) and isinstance(sub.value, (ast.Call, ast.Await))
        for target in sub.targets if isinstance(target, ast.Name) and target.id not in params
    }
    found: set[int] = set()
    for sub in nodes:
        if isinstance(sub, ast.If) and any(
            isinstance(name, ast.Name) and name.id in from_calls for name in ast.walk(sub.test)
        ):
            for stmt in sub.body:
                found.update(id(inner) for inner in ast.walk(stmt) if isinstance(inner, ast.Raise))
    return found


def _holds_line(node: ast.AST, line: int) -> bool:
    return node.lineno <= line <= (getattr(node, "end_lineno", None) or node.lineno)  # type: ignore[attr-defined]


def _names_environ(reader: _Reader, call: ast.Call) -> bool:
    return any(reader.name(a) == "os.environ" for a in call.args) or reader.name(call.func) == "os.environ.copy"


def _patches_environ(reader: _Reader, call: ast.Call) -> bool:
    """``mock.patch.dict(os.environ, ...)``, ``EnvironmentVarGuard()``: the block ends with the env put back."""
    name = reader.name(call.func)
    if name.endswith("patch.dict") and call.args:
        first = call.args[0]
        return reader.name(first) == "os.environ" or (isinstance(first, ast.Constant) and first.value == "os.environ")
    return name.rpartition(".")[2] in ("EnvironmentVarGuard", "modified_environ")


def _swaps(reader: _Reader, call: ast.Call, dotted: str) -> bool:
    """``monkeypatch.setattr(os, "environ", {...})`` or ``setattr("os.environ", {...})`` for ``dotted``."""
    args = call.args
    if len(args) >= 3 and isinstance(args[1], ast.Constant):
        return f"{reader.name(args[0])}.{args[1].value}" == dotted
    return len(args) == 2 and isinstance(args[0], ast.Constant) and args[0].value == dotted


def _writes_environ(reader: _Reader, stmt: ast.Assign | ast.AugAssign) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return any(isinstance(t, ast.Subscript) and reader.name(t.value) == "os.environ" for t in targets)


def _mentions_any(call: ast.Call, params: set[str]) -> bool:
    for argument in (*call.args, *(k.value for k in call.keywords)):
        for sub in ast.walk(argument):
            if isinstance(sub, ast.Name) and sub.id in params:
                return True
    return False


def mark_aliases(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """Module-level names bound to a ``usefixtures`` mark
    (``usefixtures = pytest.mark.usefixtures("clean_env")``): name -> its fixtures."""
    found: dict[str, tuple[str, ...]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.Call, ast.Name, ast.List, ast.Tuple)):
            names = marked_fixtures(stmt.value, found)
            if names:
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and target.id != "pytestmark":
                        found[target.id] = names
    return found


def marked_fixtures(mark: ast.expr, aliases: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The fixtures a mark (a decorator, a ``pytestmark`` value: one mark or
    a list of them, an alias of one) asks for through ``usefixtures``."""
    if isinstance(mark, (ast.List, ast.Tuple)):
        return tuple(name for element in mark.elts for name in marked_fixtures(element, aliases))
    if isinstance(mark, ast.Name):
        return aliases.get(mark.id, ())
    if isinstance(mark, ast.Call) and (dotted_name(mark.func) or "").endswith("usefixtures"):
        return tuple(a.value for a in mark.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
    if isinstance(mark, ast.Call) and isinstance(mark.func, ast.Name):
        return aliases.get(mark.func.id, ())  # an alias applied with arguments is still the mark
    return ()


def pytestmark_fixtures(body: list[ast.stmt], aliases: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The ``usefixtures`` names of a ``pytestmark = ...`` (``+=``) in a module or class body."""
    found: list[str] = []
    for stmt in body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets) and stmt.value is not None:
            found.extend(marked_fixtures(stmt.value, aliases))
    return tuple(found)


def plugins_of(tree: ast.Module) -> tuple[str, ...]:
    """The modules a ``pytest_plugins = [...]`` of the module names."""
    for stmt in tree.body:
        names = [t.id for t in getattr(stmt, "targets", ()) if isinstance(t, ast.Name)]
        if isinstance(stmt, ast.Assign) and "pytest_plugins" in names:
            value = stmt.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return (value.value,)
            if isinstance(value, (ast.List, ast.Tuple)):
                return tuple(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ()


def _redirects_temp(reader: _Reader, tree: ast.Module) -> bool:
    """The module points ``tempfile.tempdir`` or ``TMPDIR`` at a directory
    made for this run (``mkdtemp()``, the basetemp) and removes it at the
    end (``shutil.rmtree``, ``.cleanup()``, ``atexit.register``): the temp
    files of the tests below it go with the run."""
    redirected = made = removed = False
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Assign):
            for target in sub.targets:
                if reader.name(target) == "tempfile.tempdir":
                    redirected = True
                elif isinstance(target, ast.Subscript) and reader.name(target.value) == "os.environ":
                    key = target.slice
                    redirected |= isinstance(key, ast.Constant) and key.value in TEMP_VARIABLES
        elif isinstance(sub, ast.Call):
            last = reader.name(sub.func).rpartition(".")[2]
            if last in ("setenv", "putenv", "setdefault") and sub.args:
                first = sub.args[0]
                redirected |= isinstance(first, ast.Constant) and first.value in TEMP_VARIABLES
            made |= last in PER_RUN_TEMP
            removed |= last in REMOVALS
    return redirected and made and removed


def _read_class_marks(facts: ModuleFacts, node: ast.ClassDef, aliases: dict[str, tuple[str, ...]]) -> None:
    names = pytestmark_fixtures(node.body, aliases) + tuple(
        name for decorator in node.decorator_list for name in marked_fixtures(decorator, aliases)
    )
    if names:
        facts.class_marks[node.name] = names


def read_module(path: str, tree: ast.Module) -> ModuleFacts:
    """The facts of one module."""
    facts = ModuleFacts(path=path, aliases=module_imports(tree))
    reader = _Reader(facts)
    marks = mark_aliases(tree)
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, DEF_TYPES):
            facts.functions.setdefault(stmt.name, reader.function(stmt, stmt.name, in_class=False))
            fixture = reader.fixture(stmt, path)
            if fixture is not None:
                facts.fixtures.setdefault(fixture.name, fixture)
        elif isinstance(stmt, ast.ClassDef):
            facts.classes[stmt.name] = tuple(filter(None, (resolve_with(facts.aliases, b) for b in stmt.bases)))
            _read_class_marks(facts, stmt, marks)
            for item in stmt.body:
                if isinstance(item, DEF_TYPES):
                    qualname = f"{stmt.name}.{item.name}"
                    facts.functions.setdefault(qualname, reader.function(item, qualname, in_class=True))
                    fixture = reader.fixture(item, path)
                    if fixture is not None:
                        facts.class_fixtures.setdefault(stmt.name, {}).setdefault(fixture.name, fixture)
        elif isinstance(stmt, (ast.If, ast.Try)):
            pending.extend((*stmt.body, *stmt.orelse, *getattr(stmt, "finalbody", ())))
    facts.pytest_plugins = plugins_of(tree)
    if path.replace("\\", "/").rpartition("/")[2] == "conftest.py":
        # what a conftest does for the tree below it (no other module's is asked)
        facts.pins = module_pins(tree)
        facts.redirects_temp = _redirects_temp(reader, tree)
    return facts


def read_fixtures(path: str, tree: ast.Module) -> dict[str, Fixture]:
    """Only the module-level fixtures of a module (the linted one: its
    helpers are read only when a rule asks about them)."""
    reader = _Reader(ModuleFacts(path=path, aliases=module_imports(tree)))
    found: dict[str, Fixture] = {}
    for stmt in tree.body:
        if isinstance(stmt, DEF_TYPES) and stmt.decorator_list:
            fixture = reader.fixture(stmt, path)
            if fixture is not None:
                found.setdefault(fixture.name, fixture)
    return found


def read_classes(path: str, tree: ast.Module) -> ModuleFacts:
    """Only the module-level classes of a module: their bases and the
    fixtures of their bodies, no function read (the linted module, asked
    about the bases of its test classes)."""
    facts = ModuleFacts(path=path, aliases=module_imports(tree))
    reader = _Reader(facts)
    marks = mark_aliases(tree)
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            facts.classes[stmt.name] = tuple(filter(None, (resolve_with(facts.aliases, b) for b in stmt.bases)))
            _read_class_marks(facts, stmt, marks)
            for item in stmt.body:
                if isinstance(item, DEF_TYPES) and item.decorator_list:
                    fixture = reader.fixture(item, path)
                    if fixture is not None:
                        facts.class_fixtures.setdefault(stmt.name, {}).setdefault(fixture.name, fixture)
    return facts
