"""HRM102: a directory removed in ``tearDown``/``tearDownClass`` instead of registered for cleanup."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import DEF_TYPES, FunctionNode
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.leaks.function_facts import CONTAINER_METHODS
from flake8_hermetic.rules.leaks.lifecycle import (
    CLEANUP_REGISTRARS, REMOVERS, SETUP_METHODS, class_family, removes_any,
)
from flake8_hermetic.rules.leaks.syntax import mentions
from flake8_hermetic.violation import Violation


TEARDOWN_METHODS = frozenset({"tearDown", "tearDownClass", "asyncTearDown", "teardown_method", "teardown_class"})
#: pytest's xunit-style teardowns: pytest runs each from a fixture that
#: never reaches it when the matching setup raised, like unittest. (Not a
#: node's ``setup``/``teardown``: pytest registers a ``teardown`` before it
#: calls ``setup``, so it runs either way; and pytest 8 no longer calls a
#: nose-style ``setup``/``teardown`` of a test class at all.)
PYTEST_TEARDOWNS = frozenset({"teardown_method", "teardown_class"})
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

    ## Off by default
    Turn it on with `--extend-select=HRM102` (or `extend-select` in the
    config). On the held-out half of the suites it was measured on and never
    tuned against (docs/precision.md), 1 of 6 of its findings were hazards a
    maintainer would fix (17%), under the 80% a default-on rule must reach:
    a setUp that, after making the directory, only writes, links or opens
    files inside it cannot plausibly fail, and a maintainer does not take
    `addCleanup` there as an improvement (4 of the 5 false findings). It
    would need to tell work that can fail (starting servers, binding
    sockets, calling the code under test) from bookkeeping inside the new
    directory.

    ## Options
    None.

    pytest runs the xunit-style `setup_method`/`teardown_method`,
    `setup_class`/`teardown_class` pairs from a fixture that never reaches the teardown when the setup raised: the
    same hazard, flagged the same way (there, make the directory in a
    fixture that removes it after its `yield`, or use `tmp_path`).

    Flagged only when the same class's `setUp` (`setUpClass` for
    `tearDownClass`, `asyncSetUp` or `setUp` for `asyncTearDown`, the
    matching pytest setup) makes a directory (`mkdtemp`, `mkdir`,
    `makedirs`, `copytree`, `TemporaryDirectory`, `extractall`,
    `unpack_archive`, a class's own `mktemp` helper) and then runs a
    statement that may raise. A unittest-style framework's per-test
    `self.mktemp()` (inherited, not defined in the file) is not: it names a
    path inside the run's own temporary directory, which the runner
    removes, so a failing setUp leaves nothing behind it. Left
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
    default_on = False
    message = "{name}() in {method}() is skipped when {setup} fails; {advice}"
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
            if scope.name in PYTEST_TEARDOWNS:
                setup, advice = f"{SETUP_FOR_TEARDOWN[scope.name][0]}()", PYTEST_ADVICE
            else:
                setup, advice = "setUp", UNITTEST_ADVICE
            yield self.report(node, name=name, method=scope.name, setup=setup, advice=advice)

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


UNITTEST_ADVICE = "register it with self.addCleanup() right after creating the directory"
PYTEST_ADVICE = "make the directory in a fixture that removes it after its yield (or use tmp_path)"
SETUP_FOR_TEARDOWN = {
    "tearDown": ("setUp",),
    "tearDownClass": ("setUpClass",),
    "asyncTearDown": ("asyncSetUp", "setUp"),
    "teardown_method": ("setup_method",),
    "teardown_class": ("setup_class",),
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


#: a unittest-style framework's per-test temp path (``self.mktemp()``): it
#: lies inside the run's own temporary directory, which the runner removes
FRAMEWORK_TEMP = "mktemp"


def _framework_temp(call: ast.Call, local_makers: set[str]) -> bool:
    """A framework's per-test ``self.mktemp()``, not one the file defines itself."""
    return last_name(call) == FRAMEWORK_TEMP and FRAMEWORK_TEMP not in local_makers


def _makes_shared_directory(stmt: ast.stmt, unique: set[str], local_makers: set[str]) -> bool:
    """Whether ``stmt`` makes a directory that a later test or run would
    meet if left behind: not a framework's per-test temp path, nor one
    inside it (``os.mkdir(os.path.join(self.root, "sub"))``). Names bound
    to such a path are added to ``unique``."""
    if isinstance(stmt, ast.Assign) and mentions(stmt.value) & unique:
        unique.update(dotted_name(t) or "" for t in stmt.targets)  # self.sub = os.path.join(self.root, "sub")
    made = False
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Call):
            if last_name(sub) in DIRECTORY_MAKERS and dotted_name(sub.func) != "tempfile.mktemp":
                if _framework_temp(sub, local_makers):
                    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is sub:
                        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                        unique.update(dotted_name(t) or "" for t in targets)
                    continue
                if sub.args and (
                    mentions(sub.args[0]) & unique
                    or any(
                        isinstance(inner, ast.Call) and _framework_temp(inner, local_makers)
                        for inner in ast.walk(sub.args[0])
                    )
                ):
                    continue
                made = True
    return made


def _local_makers(ctx: Context) -> set[str]:
    """The makers the class (or a base class of the file) defines itself
    (its own ``mktemp`` helper, writing under a fixed name): not the
    framework's per-test temp path."""
    class_scope = ctx.class_scope
    if class_scope is None or not isinstance(class_scope.node, ast.ClassDef):
        return set()
    return {
        node.name for family in class_family(ctx, class_scope.node) for node in family.body
        if isinstance(node, DEF_TYPES) and node.name == FRAMEWORK_TEMP
    }


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


def _removes_and_reraises(stmt: ast.stmt) -> bool:
    """``try: ... except: shutil.rmtree(d); raise``: setUp cleans up after itself."""
    if not isinstance(stmt, ast.Try):
        return False
    for handler in stmt.handlers:
        removes = any(
            isinstance(sub, ast.Call) and last_name(sub) in REMOVERS
            for inner in handler.body for sub in ast.walk(inner)
        )
        if removes and any(isinstance(inner, ast.Raise) for inner in handler.body):
            return True
    return any(removes_any(inner, set().union(*(mentions(t) for t in stmt.body))) for inner in stmt.finalbody)


def _fails_after_creating(ctx: Context, setup: FunctionNode) -> bool:
    created = False
    unique: set[str] = set()
    local_makers = _local_makers(ctx)
    for stmt in setup.body:
        if not created:
            if _makes_shared_directory(stmt, unique, local_makers):
                if _removes_and_reraises(stmt):
                    continue
                created = True
                if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)):
                    return True  # made inside a loop or block that goes on working
            continue
        if not (_cannot_raise(ctx, stmt) or _removes_and_reraises(stmt)):
            return True
    return False
