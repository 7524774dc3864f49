"""Code that never runs in a test run, from a module's tree and pytest's
collection settings: :func:`never_runs` gives the spans to leave alone.

What never runs (each decided from source, nothing imported or run):

- a dead branch: the body of ``if False:``, ``if 0:``, ``if TYPE_CHECKING:``,
  ``if six.PY2:``, ``if sys.version_info < (3, 10):`` (the ``else`` of the
  opposite tests), ``while False:``, and ``if __name__ == "__main__":`` in a
  module pytest imports. A condition counts only when it has the same value
  on every interpreter flake8-hermetic supports (3.10 and later):
  ``sys.version_info >= (3, 12)`` is decided nowhere. A module-level name
  bound once to such a condition (``PY2 = sys.version_info[0] == 2``) is
  that condition;
- the statements after an unconditional ``return``, ``raise``,
  ``continue``, ``break``, ``pytest.skip()``/``fail()``/``exit()``/``xfail()``,
  ``self.skipTest()``/``self.fail()``, ``sys.exit()``, ``os._exit()`` in the
  same block;
- in a test module pytest collects (its classes and functions are its
  tests, not an API other modules import): the body of a method pytest and
  unittest never call (a class not collected: its name does not match
  ``python_classes``, it is no ``TestCase`` and no base of a collected class,
  and nothing names it; or a method whose name matches neither
  ``python_functions`` nor unittest's ``test`` prefix, nor a setup/teardown
  hook, that nothing names: no ``self.name``, no ``name(...)``, no
  ``"name"`` string);
- anywhere: the body of a local def (in a function) that nothing names.

Liveness is followed from what runs: a name counts only when it is read by
code that runs itself (a helper called only from an uncollected method
never runs either). Anything this module cannot see through keeps the code
live: a decorator (other than ``staticmethod``, ``classmethod``,
``property`` ...) may register the function, a base class from another
module may call any method (or be a ``TestCase``). A module-level function
(another module may import it) and a class inside a class (reached as an
attribute) are not judged.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from flake8_hermetic.imports import ImportResolver, dotted_name, module_imports
from flake8_hermetic.nodes import DEF_TYPES, child_fields

#: the oldest interpreter flake8-hermetic supports: a version test is
#: decided only when it holds the same from there on
MIN_SUPPORTED = (3, 10)
_LOWEST = (*MIN_SUPPORTED, 0, "alpha", 0)
_HIGHEST = (3, 10**6, 0, "final", 0)

DEFAULT_PYTHON_CLASSES = ("Test",)
DEFAULT_PYTHON_FUNCTIONS = ("test",)

#: calls that end their block: what follows them never runs
ENDING_CALLS = frozenset({
    "pytest.skip", "pytest.fail", "pytest.exit", "pytest.xfail", "sys.exit", "os._exit", "os.abort",
    "self.skipTest", "self.fail",
})
#: names pytest or unittest call in a class or an instance, besides the tests
CLASS_HOOKS = frozenset({
    "setup_class", "teardown_class", "setup_method", "teardown_method", "setup", "teardown",
    "setUp", "tearDown", "setUpClass", "tearDownClass", "asyncSetUp", "asyncTearDown",
    "run", "debug", "shortDescription", "id", "defaultTestResult",
})
#: decorators that do not register or call the function they decorate
INERT_DECORATORS = frozenset({
    "staticmethod", "classmethod", "property", "abc.abstractmethod", "functools.cached_property",
    "functools.wraps", "typing.overload", "typing.override", "typing_extensions.override",
})
#: bases that call no method of their subclasses but dunders
INERT_BASES = frozenset({"object", "abc.ABC", "typing.Generic", "typing.Protocol", "typing.NamedTuple"})
UNITTEST_BASES = frozenset({
    "unittest.TestCase", "unittest.IsolatedAsyncioTestCase", "unittest.case.TestCase",
    "unittest.async_case.IsolatedAsyncioTestCase",
})
_SPAN_FIELDS = ("body", "orelse", "finalbody")
#: a class's kinds (see _class_kinds) under which its instances exist
_COLLECTED = frozenset({"pytest", "unittest"})
_RUNNING = _COLLECTED | {"named"}
#: kinds under which code elsewhere may call any method: a base from another
#: module, an instance handed out (a helper class the tests build, a test
#: that passes ``self`` on)
_ANY_METHOD = frozenset({"external", "escapes"})

Position = tuple[int, int]


@dataclass(frozen=True)
class Collection:
    """What pytest does with the module: its ``python_classes`` and
    ``python_functions``, whether it collects the module's tests
    (``collected``: a test module, not a conftest or support module whose
    classes and functions other modules import) and whether it imports it
    (``imported``: then ``__name__`` is never ``"__main__"``)."""

    python_classes: tuple[str, ...] = DEFAULT_PYTHON_CLASSES
    python_functions: tuple[str, ...] = DEFAULT_PYTHON_FUNCTIONS
    collected: bool = True
    imported: bool = True


@dataclass(frozen=True)
class Span:
    start: Position
    end: Position
    why: str


@dataclass
class NeverRuns:
    """The spans of a module that never run, each with why."""

    spans: list[Span] = field(default_factory=list)

    def why(self, line: int, col: int) -> str | None:
        """Why the code at ``line``/``col`` (``col_offset``) never runs, or None."""
        here = (line, col)
        for span in self.spans:
            if span.start <= here <= span.end:
                return span.why
        return None


def matches(name: str, patterns: tuple[str, ...]) -> bool:
    """pytest's test for ``python_classes``/``python_functions``: a prefix, or a glob."""
    return any(
        name.startswith(option) or (any(c in option for c in "*?[") and fnmatchcase(name, option))
        for option in patterns
    )


def never_runs(tree: ast.Module, collection: Collection = Collection()) -> NeverRuns:
    """The spans of ``tree`` that never run when pytest runs its tests."""
    return _Reachability(tree, collection).compute()


def _span_of(stmts: list[ast.stmt] | list[ast.AST], why: str) -> Span:
    first, last = stmts[0], stmts[-1]
    end_line = getattr(last, "end_lineno", None) or last.lineno  # type: ignore[attr-defined]
    end = (end_line, getattr(last, "end_col_offset", None) or 0)
    return Span((first.lineno, first.col_offset), end, why)  # type: ignore[attr-defined]


class _Conditions:
    """The value of a condition on every supported interpreter, or None."""

    def __init__(self, resolver: ImportResolver, tree: ast.Module, imported: bool, stores: dict[str, int]) -> None:
        """``stores``: how often each name is bound anywhere in the module."""
        self.resolver = resolver
        self.imported = imported
        self.constants: dict[str, bool] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                value = self.truth(stmt.value)
                if stores.get(name) == 1 and value is not None:
                    self.constants[name] = value

    def truth(self, node: ast.expr) -> bool | None:
        if isinstance(node, ast.Constant):
            return bool(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            value = self.truth(node.operand)
            return None if value is None else not value
        if isinstance(node, ast.BoolOp):
            values = [self.truth(v) for v in node.values]
            decisive = isinstance(node.op, ast.Or)  # the value that decides an `or` alone
            if decisive in values:
                return decisive
            return None if None in values else not decisive
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self._named(node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node.left, node.ops[0], node.comparators[0])
        return None

    def _named(self, node: ast.Name | ast.Attribute) -> bool | None:
        name = self.resolver.resolve(node) or ""
        if name == "TYPE_CHECKING" or name.endswith(".TYPE_CHECKING"):
            return False
        if name in ("six.PY2", "six.PY3"):
            return name == "six.PY3"
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        return None

    def _compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> bool | None:
        if self.imported and dotted_name(left) == "__name__" and isinstance(right, ast.Constant):
            if right.value == "__main__" and isinstance(op, (ast.Eq, ast.NotEq)):
                return isinstance(op, ast.NotEq)
        versions = _versions(self.resolver, left)
        literal = _literal(right)
        if versions is None:
            versions, literal = _versions(self.resolver, right), _literal(left)
            op = _FLIPPED.get(type(op), op)
        if versions is None or literal is None:
            return None
        try:
            low, high = (_apply(op, version, literal) for version in versions)
        except TypeError:
            return None
        if low is None or low != high:
            return None
        if isinstance(op, (ast.Eq, ast.NotEq)) and not _outside(literal, versions):
            return None  # equal somewhere between the two ends, maybe
        return low


_FLIPPED = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(), ast.GtE: ast.LtE()}
_OPERATIONS = {
    ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
}


def _apply(op: ast.cmpop, left: object, right: object) -> bool | None:
    operation = _OPERATIONS.get(type(op))
    return None if operation is None else bool(operation(left, right))


def _outside(literal: object, versions: tuple[object, object]) -> bool:
    try:
        return bool(literal < versions[0] or literal > versions[1])  # type: ignore[operator]
    except TypeError:
        return False


def _literal(node: ast.expr) -> object | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts):
        return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    return None


def _versions(resolver: ImportResolver, node: ast.expr) -> tuple[object, object] | None:
    """The lowest and highest value of ``node`` if it reads ``sys.version_info``
    (whole, ``[:2]``, ``[0]``, ``.major``, ``.minor``): comparisons with it
    are monotonic, so the two ends decide them."""
    if resolver.resolve(node) == "sys.version_info":
        return _LOWEST, _HIGHEST
    if isinstance(node, ast.Attribute) and resolver.resolve(node.value) == "sys.version_info":
        index = {"major": 0, "minor": 1}.get(node.attr)
        return None if index is None else (_LOWEST[index], _HIGHEST[index])
    if isinstance(node, ast.Subscript) and resolver.resolve(node.value) == "sys.version_info":
        part = node.slice
        if isinstance(part, ast.Constant) and part.value in (0, 1):
            return _LOWEST[part.value], _HIGHEST[part.value]
        if isinstance(part, ast.Slice) and part.lower is None and part.step is None:
            stop = part.upper.value if isinstance(part.upper, ast.Constant) else None
            if isinstance(stop, int) and 1 <= stop <= 2:
                return _LOWEST[:stop], _HIGHEST[:stop]
    return None


def _is_ending(stmt: ast.stmt, resolver: ImportResolver) -> bool:
    if isinstance(stmt, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call):
        return False
    return resolver.resolve(call.func) in ENDING_CALLS or dotted_name(call.func) in ENDING_CALLS


@dataclass(eq=False)
class _Def:
    """A def or class whose statement runs, and where it sits."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    owner: ast.AST  # the module, class or function whose body holds it
    live: bool = False


class _Reachability:
    def __init__(self, tree: ast.Module, collection: Collection) -> None:
        self.tree = tree
        self.collection = collection
        self.resolver = ImportResolver(module_imports(tree))
        stores: dict[str, int] = {}
        for node in _nodes(tree):
            kind = type(node)
            if kind is ast.Name and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                stores[node.id] = stores.get(node.id, 0) + 1  # type: ignore[attr-defined]
            elif kind is ast.arg:
                stores[node.arg] = stores.get(node.arg, 0) + 2  # type: ignore[attr-defined]
        self.conditions = _Conditions(self.resolver, tree, collection.imported, stores)
        self.result = NeverRuns()
        self.dead_ids: set[int] = set()
        self.defs: dict[int, _Def] = {}
        self.names: set[str] = set()
        self._kinds: dict[int, set[str]] = {}
        self._by_scope: dict[int, dict[str, ast.ClassDef]] | None = None

    def compute(self) -> NeverRuns:
        self._scan(self.tree.body, self.tree)
        self._read(self.tree)
        if not self.collection.collected:
            self._all_module_api_live()
        changed = True
        while changed:
            changed = False
            self._kinds = self._class_kinds()
            for known in list(self.defs.values()):
                if not known.live and self._is_live(known):
                    known.live = changed = True
                    self._read(known.node)
        for known in self.defs.values():
            if not known.live and not isinstance(known.node, ast.ClassDef):
                self.result.spans.append(_span_of(known.node.body, self._why_unreached(known)))
        return self.result

    # -- statements: dead branches, code after an ending, the defs that run ------------
    def _dead(self, stmts: list[ast.stmt], why: str) -> None:
        if stmts:
            self.result.spans.append(_span_of(stmts, why))
            self.dead_ids.update(id(s) for s in stmts)

    def _scan(self, body: list[ast.stmt], owner: ast.AST) -> None:
        for index, stmt in enumerate(body):
            self._scan_statement(stmt, owner)
            if _is_ending(stmt, self.resolver) and index + 1 < len(body):
                self._dead(body[index + 1:], "after a statement that ends its block")
                return

    def _scan_statement(self, stmt: ast.stmt, owner: ast.AST) -> None:
        if isinstance(stmt, (*DEF_TYPES, ast.ClassDef)):
            self.defs[id(stmt)] = _Def(stmt, owner)
            self._scan(stmt.body, stmt)
            return
        if isinstance(stmt, (ast.If, ast.While)):
            value = self.conditions.truth(stmt.test)
            why = "under `if __name__ == \"__main__\":`, which pytest never runs" if _main_guard(stmt.test) else (
                f"in a branch whose condition is {value} on every supported Python"
            )
            if value is False:
                self._dead(stmt.body, why)
                self._scan(stmt.orelse, owner)
                return
            if value is True and isinstance(stmt, ast.If):
                self._dead(stmt.orelse, why)
                self._scan(stmt.body, owner)
                return
        for name in _SPAN_FIELDS:
            self._scan(getattr(stmt, name, None) or [], owner)
        for holder in [*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())]:
            self._scan(holder.body, owner)

    # -- what live code names ----------------------------------------------------------
    def _read(self, frame: ast.AST) -> None:
        """Note the names ``frame``'s own code reads (a def's or class's
        decorators, defaults and bases belong to the frame around it)."""
        pending: list[ast.AST] = list(getattr(frame, "body", ()))
        names, dead = self.names, self.dead_ids
        name_type, attribute_type, constant_type, class_type = ast.Name, ast.Attribute, ast.Constant, ast.ClassDef
        while pending:
            node = pending.pop()
            kind = type(node)
            if kind is name_type:
                names.add(node.id)  # type: ignore[attr-defined]
                continue
            if kind is attribute_type:
                names.add(node.attr)  # type: ignore[attr-defined]
            elif kind is constant_type:
                value = node.value  # type: ignore[attr-defined]
                if type(value) is str and value.isidentifier():
                    names.add(value)
                continue
            elif id(node) in dead:
                continue
            elif kind in _DEFS:
                pending.extend(_outside_body(node))  # type: ignore[arg-type]
                if kind is class_type:
                    pending.extend(node.body)  # type: ignore[attr-defined]  # a class's body runs with its statement
                continue
            _push_children(node, pending)

    def _all_module_api_live(self) -> None:
        """A conftest or support module: what it defines at module level, and
        its classes' methods, are there for other modules to use."""
        for known in self.defs.values():
            owner = known.owner
            if isinstance(known.node, ast.ClassDef):
                continue
            if owner is self.tree or (isinstance(owner, ast.ClassDef) and self.defs[id(owner)].owner is self.tree):
                known.live = True
                self._read(known.node)

    # -- liveness ------------------------------------------------------------------------
    def _is_live(self, known: _Def) -> bool:
        node, owner = known.node, known.owner
        if id(owner) in self.defs and not self.defs[id(owner)].live and not isinstance(owner, ast.ClassDef):
            return False  # inside a function that never runs
        if isinstance(owner, ast.ClassDef):
            return isinstance(node, DEF_TYPES) and self._method_runs(node, owner)
        if isinstance(node, ast.ClassDef):
            return False  # a class's body runs with its statement; its methods decide for themselves
        # a module-level function may be imported by another module: only a local def is judged
        return owner is self.tree or _registered(node, self.resolver) or node.name in self.names

    def _method_runs(self, method: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef) -> bool:
        if isinstance(self.defs[id(owner)].owner, ast.ClassDef):
            return True  # a class in a class: reached as an attribute, not judged
        kinds = self._kinds.get(id(owner), set())
        if not kinds & _RUNNING:
            return False  # nothing collects or names the class, nor a class derived from it
        name = method.name
        if kinds & _ANY_METHOD or _registered(method, self.resolver) or name in self.names:
            return True
        if _is_hook(name, CLASS_HOOKS):
            return True
        return ("pytest" in kinds and matches(name, self.collection.python_functions)) or (
            "unittest" in kinds and name.startswith("test")
        )

    def _class_kinds(self) -> dict[int, set[str]]:
        """How each class of the module is used, by the class or one of its
        subclasses here: "pytest" or "unittest" (collected), "named" (code
        that runs names it), "external" (a base from elsewhere may call any
        method); none: its methods never run."""
        kinds: dict[int, set[str]] = {}
        for known in self.defs.values():
            node = known.node
            if not isinstance(node, ast.ClassDef) or (id(known.owner) in self.defs and not self._owner_runs(known)):
                continue
            own = self._own_kinds(node, known.owner)
            if own:
                for member in self._family(node):
                    kinds.setdefault(id(member), set()).update(own)
        return kinds

    def _owner_runs(self, known: _Def) -> bool:
        owner = self.defs[id(known.owner)]
        return owner.live or isinstance(owner.node, ast.ClassDef)

    def _own_kinds(self, node: ast.ClassDef, owner: ast.AST) -> set[str]:
        kinds = set()
        if node.name in self.names or _registered(node, self.resolver):
            kinds.update(("named", "escapes"))
        bases = [self.resolver.resolve(b) or dotted_name(b) or "?" for b in self._external_bases(node)]
        if any(base not in INERT_BASES and base not in UNITTEST_BASES and not _builtin(base) for base in bases):
            kinds.add("external")
        at_top = owner is self.tree or (
            isinstance(owner, ast.ClassDef) and bool(self._kinds.get(id(owner), set()) & _COLLECTED)
        )
        if at_top and self.collection.collected and self._collected(node, bases):
            kinds.add("unittest" if any(_maybe_testcase(b) for b in bases) else "pytest")
            if any(_hands_self_out(member) for member in self._family(node)):
                kinds.add("escapes")
        return kinds

    def _collected(self, node: ast.ClassDef, external_bases: list[str]) -> bool:
        if any(_maybe_testcase(base) for base in external_bases):
            return True
        if not matches(node.name, self.collection.python_classes):
            return False
        family = self._family(node)
        if any(_defines(member, "__init__") or _defines(member, "__new__") for member in family):
            return False  # pytest does not collect a class with a constructor
        return not any(_test_flag_false(member) for member in family)

    def _family(self, node: ast.ClassDef) -> list[ast.ClassDef]:
        """``node`` and the classes of the module it derives from."""
        family: list[ast.ClassDef] = []
        pending = [node]
        while pending:
            current = pending.pop()
            if any(current is seen for seen in family):
                continue
            family.append(current)
            for base in current.bases:
                local = self._local_class(base, current)
                if local is not None:
                    pending.append(local)
        return family

    def _local_class(self, base: ast.expr, near: ast.ClassDef) -> ast.ClassDef | None:
        """The class of the module ``base`` names, as seen from where the
        class ``near`` is defined (its own scope first, then those around it)."""
        name = dotted_name(base)
        if name is None or self.resolver.is_bound(name):
            return None
        if self._by_scope is None:
            self._by_scope = {}
            for known in self.defs.values():
                if isinstance(known.node, ast.ClassDef):
                    self._by_scope.setdefault(id(known.owner), {})[known.node.name] = known.node
        scope: ast.AST | None = self.defs[id(near)].owner if id(near) in self.defs else self.tree
        while scope is not None:
            found = self._by_scope.get(id(scope), {}).get(name)
            if found is not None and found is not near:
                return found
            outer = self.defs.get(id(scope))
            scope = outer.owner if outer is not None else None
        return None

    def _external_bases(self, node: ast.ClassDef) -> Iterator[ast.expr]:
        for member in self._family(node):
            for base in member.bases:
                if self._local_class(base, member) is None:
                    yield base

    def _why_unreached(self, known: _Def) -> str:
        owner = known.owner
        if isinstance(owner, ast.ClassDef):
            if not self._kinds.get(id(owner), set()) & _RUNNING:
                return f"in class {owner.name}, which pytest does not collect and nothing uses"
            return f"in method {known.node.name}, which pytest does not collect and nothing calls"
        outer = self.defs.get(id(owner))
        if outer is not None and not outer.live:
            return f"in {owner.name}, which never runs"  # type: ignore[attr-defined]
        return f"in {known.node.name}, which is a local def nothing calls"


_DEFS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}


def _push_children(node: ast.AST, pending: list[ast.AST]) -> None:
    """``ast.iter_child_nodes`` without its generators, contexts and
    operators: the walks here see every node of a file."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        # a list field may hold names (``global a, b``): a string has no children
        fields = _FIELDS[kind] = child_fields(kind, leaves=False) if issubclass(kind, ast.AST) else ()
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            pending.extend(value)
        elif value is not None:
            pending.append(value)


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        _push_children(node, pending)


def _main_guard(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and dotted_name(test.left) == "__name__"


def _outside_body(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    """What runs with a def or class statement: decorators, defaults, bases."""
    if isinstance(node, ast.ClassDef):
        # a base named is no use of it: it runs with the classes derived from it
        bases = [b for b in node.bases if not isinstance(b, (ast.Name, ast.Attribute))]
        return [*node.decorator_list, *bases, *node.keywords]
    arguments = node.args
    return [*node.decorator_list, *arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]


def _registered(node: ast.AST, resolver: ImportResolver) -> bool:
    """A decorator that may register or call the def (a fixture, a route)."""
    for decorator in getattr(node, "decorator_list", ()):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = resolver.resolve(target) or ""
        if name not in INERT_DECORATORS and not name.endswith((".setter", ".getter", ".deleter")):
            return True
    return False


def _is_hook(name: str, hooks: frozenset[str]) -> bool:
    return name in hooks or name.startswith("pytest_") or (name.startswith("__") and name.endswith("__"))


def _builtin(name: str) -> bool:
    return "." not in name and hasattr(builtins, name)


def _maybe_testcase(base: str) -> bool:
    """A base that may be a ``unittest.TestCase``: one of unittest's, or any
    class from outside the standard library and the builtins."""
    if base in UNITTEST_BASES:
        return True
    if base in INERT_BASES or _builtin(base):
        return False
    top = base.partition(".")[0]
    return top not in sys.stdlib_module_names or base.endswith("TestCase")


def _hands_self_out(node: ast.ClassDef) -> bool:
    """A method passes the instance itself on (``register(self)``,
    ``handler=self``, ``x = self``, ``[self]``, ``return self``): code
    elsewhere may call any of its methods."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            values: list[ast.AST] = [*sub.args, *(k.value for k in sub.keywords)]
        elif isinstance(sub, (ast.Assign, ast.Return, ast.Yield, ast.NamedExpr)):
            values = [sub.value] if sub.value is not None else []
        elif isinstance(sub, (ast.List, ast.Tuple, ast.Set)):
            values = list(sub.elts)
        elif isinstance(sub, ast.Dict):
            values = [v for v in sub.values if v is not None]
        else:
            continue
        if any(isinstance(v, ast.Name) and v.id == "self" for v in values):
            return True
    return False


def _defines(node: ast.ClassDef, name: str) -> bool:
    return any(isinstance(s, DEF_TYPES) and s.name == name for s in node.body)


def _test_flag_false(node: ast.ClassDef) -> bool:
    """``__test__ = False`` in the class body."""
    return any(
        isinstance(s, ast.Assign) and any(dotted_name(t) == "__test__" for t in s.targets)
        and isinstance(s.value, ast.Constant) and s.value.value is False
        for s in node.body
    )
