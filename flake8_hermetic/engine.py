"""One walk of a test file, dispatching each node to the enabled rules.

The walk is iterative (deeply nested expressions cannot exhaust the stack)
and keeps the context rules need: the ancestors of the node, the enclosing
scopes (and whether each is a test, a fixture or a TestCase method), the
import resolver, and the conftest pins of the file. Decorators, default
values and class bases are visited in the enclosing scope, as Python
evaluates them.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from flake8_hermetic.facts.hostpins import Pins, pins_for_file
from flake8_hermetic.imports import ImportResolver, module_imports
from flake8_hermetic.registry import Rule, Violation

if TYPE_CHECKING:
    from flake8_hermetic.settings import Settings

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPE_TYPES = frozenset((*DEF_TYPES, ast.ClassDef))
LOOP_TYPES = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
UNITTEST_METHOD = re.compile(r"^(setUp|tearDown|asyncSetUp|asyncTearDown|test)")
STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
LEAF_TYPES = tuple(
    leaf
    for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
    for leaf in base.__subclasses__()
)
#: fields that never hold a node (names, flags, strings), in every node type
SCALAR_FIELDS = frozenset({
    "id", "attr", "name", "arg", "asname", "module", "level", "kind", "conversion", "simple",
    "is_async", "type_comment", "tag", "rest", "kwd_attrs",
})
#: fields that hold only a context or an operator (``Load``, ``Add``, ``Eq``)
LEAF_FIELDS = frozenset({"ctx", "op", "ops"})

_LEAVE, _SCOPE_IN, _SCOPE_OUT = range(3)
#: the node types the walk itself acts on, besides dispatching them
WALK_ACTS_ON = frozenset({ast.Call, ast.Import, ast.ImportFrom, ast.Assign})


#: nodes whose body is a frame of its own, with names of its own
NEW_FRAMES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body in source order.

    A nested def, class or lambda is yielded but not entered: its body is
    another frame, with names of its own.
    """
    stack: list[ast.AST] = list(reversed(getattr(function, "body", [])))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, NEW_FRAMES):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def node_types() -> Iterator[type[ast.AST]]:
    """Every concrete node class of this Python's ``ast``."""
    pending: list[type[ast.AST]] = [ast.AST]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls._fields or not cls.__subclasses__():
            yield cls


def child_fields(node_type: type[ast.AST], leaves: bool) -> tuple[str, ...]:
    """The fields of ``node_type`` that may hold child nodes, in ``_fields``
    order; with ``leaves=False``, not those holding only contexts and operators."""
    if node_type is ast.Constant or node_type.__name__ == "MatchSingleton":
        return ()  # their ``value`` is a Python constant
    # ``type X = ...`` (3.12+): the alias's ``name`` is a Name node, not a string
    nodes_named = node_type.__name__ == "TypeAlias"
    return tuple(
        field for field in node_type._fields
        if (field not in SCALAR_FIELDS or (nodes_named and field == "name")) and (leaves or field not in LEAF_FIELDS)
    )


@dataclass(frozen=True)
class Scope:
    """A module, class or function the walk is inside."""

    kind: str  # "module" | "class" | "function"
    name: str
    node: ast.AST
    is_test: bool = False  # a pytest test function/method or a TestCase test*
    is_fixture: bool = False
    is_testcase_method: bool = False  # setUp*/tearDown*/test* of a TestCase
    is_testcase_class: bool = False
    is_test_class: bool = False  # a pytest Test* class or a TestCase

    @property
    def is_test_code(self) -> bool:
        return self.is_test or self.is_fixture or self.is_testcase_method


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


_T = TypeVar("_T")


def _own_node_list(function: ast.AST, ctx: Context) -> list[ast.AST]:
    return list(own_nodes(function))


EXPECT_RAISES = frozenset({"pytest.raises", "raises"})
_UNSEEN = object()


class Context:
    """What a rule may ask about the node it is visiting."""

    def __init__(
        self,
        tree: ast.Module,
        lines: Sequence[str],
        path: str,
        settings: Settings,
    ) -> None:
        self.tree = tree
        self.lines = lines
        self.path = path
        self.settings = settings
        self.resolver = ImportResolver(module_imports(tree))
        module_scope = Scope("module", "", tree)
        self.scopes: list[Scope] = [module_scope]
        self.parents: list[ast.AST] = []
        self.where = ""
        self._where_stack: list[str] = [""]
        self._function_scopes: dict[int, Scope] = {}
        self._testcase_classes: set[str] = set()
        # Many rules ask for the name of the same call while it is visited;
        # the walk empties this whenever the import bindings change.
        # Keyed by id: the nodes are kept alive beside it, so no other object
        # can take one of their ids (no tuple per entry: fewer objects for the GC).
        self._names: dict[int, str | None] = {}
        self._named: list[ast.AST] = []
        #: callee name -> handlers a rule added while walking (see dispatch_calls_to)
        self._call_listeners: dict[str, list[Callable[[ast.Call], Iterable[Violation]]]] = {}
        #: the walk's node type -> handlers table and the node types it does not
        #: stack, for this file (see dispatch_to); the engine fills them in
        self._dispatch: dict[type[ast.AST], list[Callable[[ast.AST], Iterable[Violation]]]] = {}
        self._skipped: set[type[ast.AST]] = set()
        #: (factory, id(function)) -> what factory computed for it (see per_function)
        self._per_function: dict[tuple[Callable[..., Any], int], Any] = {}

    # -- names ---------------------------------------------------------
    def resolve(self, node: ast.AST) -> str | None:
        key = id(node)
        name = self._names.get(key, _UNSEEN)
        if name is not _UNSEEN:
            return name  # type: ignore[return-value]
        name = self._names[key] = self.resolver.resolve(node)
        self._named.append(node)
        return name

    def forget_names(self) -> None:
        """Drop the resolved names: the import bindings changed."""
        self._names.clear()
        self._named.clear()

    def call_name(self, call: ast.Call) -> str | None:
        return self.resolve(call.func)

    def dispatch_calls_to(self, name: str, handler: Callable[[ast.Call], Iterable[Violation]]) -> None:
        """Hand the rest of this file's calls named ``name`` (canonical, as
        ``call_name`` gives it) to ``handler`` too: for a rule that learns a
        callee while walking (a local subclass of a class it watches)."""
        handlers = self._call_listeners.setdefault(name, [])
        if handler not in handlers:
            handlers.append(handler)

    def dispatch_to(self, node_type: type[ast.AST], handler: Callable[[Any], Iterable[Violation]]) -> None:
        """Hand the nodes of ``node_type`` that the walk reaches from now on
        to ``handler`` too: for a rule that needs a common node type (every
        ``Name``) only once it has seen something in the file, and would
        otherwise make the walk stack those nodes in every file. The nodes
        already taken apart are not revisited: subscribe before the walk
        reaches the part of the file that needs it."""
        handlers = self._dispatch.setdefault(node_type, [])
        if handler not in handlers:
            handlers.append(handler)
            self._skipped.discard(node_type)

    # -- per-function facts ------------------------------------------------
    def per_function(self, function: ast.AST, factory: Callable[[Any, Context], _T]) -> _T:
        """``factory(function, self)``, computed once per function and file and
        shared by every rule that asks with the same factory: a function's
        node list, its clock flow, its assigned values. Keyed by id, like the
        names: the tree keeps the functions alive for the whole lint."""
        key = (factory, id(function))
        try:
            return self._per_function[key]  # type: ignore[no-any-return]
        except KeyError:
            value = self._per_function[key] = factory(function, self)
            return value

    def function_nodes(self, function: ast.AST) -> list[ast.AST]:
        """The nodes of ``function`` that belong to its own frame (see
        :func:`own_nodes`), listed once per function and file."""
        return self.per_function(function, _own_node_list)

    # -- scopes --------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @property
    def in_test(self) -> bool:
        """Inside a test, a fixture or a TestCase method (at any depth)."""
        return any(s.is_test_code for s in self.scopes)

    @property
    def at_module_level(self) -> bool:
        """Not inside any function (module body or class body)."""
        return all(s.kind != "function" for s in self.scopes)

    @property
    def function(self) -> FunctionNode | None:
        """The innermost enclosing function."""
        for scope in reversed(self.scopes):
            if scope.kind == "function":
                return scope.node  # type: ignore[return-value]
        return None

    @property
    def function_scope(self) -> Scope | None:
        for scope in reversed(self.scopes):
            if scope.kind == "function":
                return scope
        return None

    @property
    def class_scope(self) -> Scope | None:
        for scope in reversed(self.scopes):
            if scope.kind == "class":
                return scope
        return None

    def scope_of(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> Scope:
        """The scope a def opens, classified in the current (enclosing) context."""
        cached = self._function_scopes.get(id(node))
        if cached is not None:
            return cached
        if isinstance(node, ast.ClassDef):
            scope = self._classify_class(node)
        else:
            scope = self._classify_function(node)
        self._function_scopes[id(node)] = scope
        return scope

    def _classify_class(self, node: ast.ClassDef) -> Scope:
        is_testcase = False
        for base in node.bases:
            name = self.resolve(base) or ""
            last = name.rpartition(".")[2]
            if last.endswith("TestCase") or last in self._testcase_classes:
                is_testcase = True
        if is_testcase:
            self._testcase_classes.add(node.name)
        return Scope(
            "class",
            node.name,
            node,
            is_testcase_class=is_testcase,
            is_test_class=is_testcase or node.name.startswith("Test"),
        )

    def _classify_function(self, node: FunctionNode) -> Scope:
        enclosing = self.scope
        is_fixture = any(
            (self.resolve(d.func if isinstance(d, ast.Call) else d) or "").rpartition(".")[2]
            in ("fixture", "yield_fixture")
            for d in node.decorator_list
        )
        name = node.name
        is_test = name.startswith("test") and (
            enclosing.kind == "module" or (enclosing.kind == "class" and enclosing.is_test_class)
        )
        is_testcase_method = (
            enclosing.kind == "class"
            and enclosing.is_testcase_class
            and (UNITTEST_METHOD.match(name) is not None)
        )
        return Scope(
            "function",
            name,
            node,
            is_test=is_test and not is_fixture,
            is_fixture=is_fixture,
            is_testcase_method=is_testcase_method,
        )

    # -- ancestors -----------------------------------------------------
    @property
    def parent(self) -> ast.AST | None:
        return self.parents[-1] if self.parents else None

    def ancestors_in_function(self, node: ast.AST | None = None) -> Iterator[tuple[ast.AST, ast.AST | None]]:
        """(ancestor, its child on the path to ``node``) pairs, innermost first,
        stopping at the nearest function or class (whose body is a new frame)."""
        child: ast.AST | None = node
        for ancestor in reversed(self.parents):
            if isinstance(ancestor, NEW_FRAMES):
                return
            yield ancestor, child
            child = ancestor

    def in_loop(self, node: ast.AST | None = None) -> bool:
        """Whether ``node`` (the node being visited) runs repeatedly in a loop
        or comprehension of the current function.

        A ``for`` loop's iterable is evaluated once and does not count.
        """
        for ancestor, on_path in self.ancestors_in_function(node):
            if isinstance(ancestor, LOOP_TYPES):
                if isinstance(ancestor, (ast.For, ast.AsyncFor)) and on_path is ancestor.iter:
                    continue
                return True
        return False

    def expected_to_raise(self, node: ast.AST | None = None) -> bool:
        """Whether ``node`` runs inside ``with pytest.raises(...)`` or
        ``with self.assertRaises*(...)`` of the current function: a call the
        test expects to fail leaves no resource behind."""
        for ancestor, on_path in self.ancestors_in_function(node):
            if not isinstance(ancestor, (ast.With, ast.AsyncWith)) or on_path in ancestor.items:
                continue
            for item in ancestor.items:
                manager = item.context_expr
                if not isinstance(manager, ast.Call):
                    continue
                name = self.call_name(manager) or _last_name(manager)
                last = name.rpartition(".")[2]
                if name in EXPECT_RAISES or last.startswith("assertRaises"):
                    return True
        return False

    def enclosing(self, *types: type[ast.AST]) -> ast.AST | None:
        """The nearest ancestor of one of ``types`` within the current function."""
        for ancestor, _ in self.ancestors_in_function():
            if isinstance(ancestor, types):
                return ancestor
        return None

    def statement(self, node: ast.AST) -> tuple[ast.stmt, list[ast.stmt], int] | None:
        """The statement holding ``node``, the list it sits in, and its index."""
        chain = [*self.parents, node]
        for position in range(len(chain) - 1, 0, -1):
            stmt = chain[position]
            if not isinstance(stmt, ast.stmt):
                continue
            holder = chain[position - 1]
            for field in STATEMENT_LISTS:
                siblings = getattr(holder, field, None)
                if isinstance(siblings, list):
                    for index, sibling in enumerate(siblings):
                        if sibling is stmt:
                            return stmt, siblings, index
            return None
        return None

    def decorated(self, node: ast.AST) -> FunctionNode | ast.ClassDef | None:
        """The def or class whose decorator list holds ``node``, if any."""
        chain = [*self.parents, node]
        for position in range(len(chain) - 2, -1, -1):
            holder = chain[position]
            if isinstance(holder, (*DEF_TYPES, ast.ClassDef)):
                on_path = chain[position + 1]
                if any(d is on_path for d in holder.decorator_list):
                    return holder
                return None
            if isinstance(holder, ast.Lambda):
                return None
        return None

    def where_of(self, node: ast.AST) -> str:
        """The ``where`` of a violation at ``node``: on a def (seen from its
        enclosing scope) or inside its decorators it is the def's own id (a
        parametrize row belongs to its test), elsewhere the current scope's."""
        target = node if isinstance(node, (*DEF_TYPES, ast.ClassDef)) else self.decorated(node)
        if target is None or any(s.kind == "function" for s in self.scopes):
            return self.where
        return f"{self.where}::{target.name}" if self.where else target.name

    # -- the file --------------------------------------------------------
    @cached_property
    def pins(self) -> Pins:
        """What the conftest chain above this file pins."""
        return pins_for_file(self.path)

    @cached_property
    def source(self) -> str:
        return "".join(self.lines)

    def segment(self, node: ast.AST) -> str:
        return source_segment(self.source, node) or ""


_LINE_END = re.compile(r"\r\n|\r|\n")


@lru_cache(maxsize=8)
def _source_lines(source: str) -> list[str]:
    """The lines of ``source`` with their ends, split where ``ast`` splits
    them (not at form feeds). Cached: a file asks once per violation."""
    lines, start = [], 0
    for end in _LINE_END.finditer(source):
        lines.append(source[start:end.end()])
        start = end.end()
    if start < len(source):
        lines.append(source[start:])
    return lines


def source_segment(source: str, node: ast.AST) -> str | None:
    """``ast.get_source_segment(source, node)`` without splitting the whole
    source again on every call (which made a file with many violations
    quadratic), and None rather than an error for positions outside it."""
    end_lineno = getattr(node, "end_lineno", None)
    end_col_offset = getattr(node, "end_col_offset", None)
    lineno = getattr(node, "lineno", None)
    col_offset = getattr(node, "col_offset", None)
    if end_lineno is None or end_col_offset is None or lineno is None or col_offset is None:
        return None
    lines = _source_lines(source)
    if not 1 <= lineno <= end_lineno <= len(lines):
        return None
    if end_lineno == lineno:
        return lines[lineno - 1].encode()[col_offset:end_col_offset].decode(errors="replace")
    first = lines[lineno - 1].encode()[col_offset:].decode(errors="replace")
    last = lines[end_lineno - 1].encode()[:end_col_offset].decode(errors="replace")
    return "".join([first, *lines[lineno:end_lineno - 1], last])


def what_text(source: str, node: ast.AST | None, limit: int = 80) -> str:
    """The baseline's ``what`` field: the flagged source text with comments
    removed and whitespace collapsed, cut at ``limit`` characters."""
    if node is None:
        return ""
    text = source_segment(source, node) or ""
    if "#" in text:
        text = _strip_comments(text)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return text


def _strip_comments(text: str) -> str:
    try:
        tokens = [
            tok
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type != tokenize.COMMENT
        ]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, SyntaxError):
        return text


class CallRoutes:
    """Which rules' ``visit_Call`` a call goes to, from its canonical name
    and its method name (the ``attr`` of ``x.attr(...)``, else None).

    Worked out once per distinct (name, method) pair and kept: rules are
    numbered by their position among the rules that handle calls, and a
    route is the tuple of those numbers, in rule order.
    """

    MAX_ROUTES = 100_000  # a language server lints many files in one process

    def __init__(self, rule_classes: Sequence[type[Rule]], settings: Settings, by_name: bool = True) -> None:
        self.every: list[int] = []
        self.names: dict[str, list[int]] = {}
        self.patterns: list[tuple[str, int]] = []
        self.methods: dict[str, list[int]] = {}
        for index, cls in enumerate(rule_classes):
            calls, methods = cls.wanted_calls(settings), cls.methods
            if not by_name or (calls is None and methods is None):
                self.every.append(index)
                continue
            for name in calls or ():
                if "*" in name:
                    self.patterns.append((name, index))
                else:
                    self.names.setdefault(name, []).append(index)
            for method in methods or ():
                self.methods.setdefault(method, []).append(index)
        self.settings = settings
        #: (name, method) -> route, filled by route(); the walk reads it first
        self.known: dict[tuple[str | None, str | None], tuple[int, ...]] = {}

    def route(self, name: str | None, method: str | None) -> tuple[int, ...]:
        key = (name, method)
        found = self.known.get(key)
        if found is None:
            wanted = set(self.every)
            if name is not None:
                wanted.update(self.names.get(name, ()))
                wanted.update(index for pattern, index in self.patterns if fnmatchcase(name, pattern))
            if method is not None:
                wanted.update(self.methods.get(method, ()))
            if len(self.known) >= self.MAX_ROUTES:
                self.known.clear()
            found = self.known[key] = tuple(sorted(wanted))
        return found


class Engine:
    """Instantiates the enabled rules for one file and walks it once."""

    def __init__(self, rule_classes: Sequence[type[Rule]], *, route_calls: bool = True) -> None:
        """``route_calls=False`` hands every call to every rule that handles
        calls, whatever they declare (the tests compare the two)."""
        self.rule_classes = tuple(rule_classes)
        self._plan = [(cls, cls.handled_node_types()) for cls in self.rule_classes]
        self._call_rules = [cls for cls, handled in self._plan if ast.Call in handled]
        self._route_calls = route_calls
        self._routes: CallRoutes | None = None
        handled_types = {node_type for _, handled in self._plan for node_type in handled}
        self._visit_leaves = any(t in handled_types for t in LEAF_TYPES)
        # A node without children (a Name, Load, Add, Pass ...) that no rule
        # handles: visiting it would do nothing but cost a push and a pop.
        self._skipped = frozenset(
            t for t in node_types() if not child_fields(t, self._visit_leaves) and t not in handled_types
        )
        self._child_fields: dict[type[ast.AST], tuple[str, ...]] = {}

    def _call_routes(self, settings: Settings) -> CallRoutes:
        routes = self._routes
        if routes is None or routes.settings is not settings:
            routes = self._routes = CallRoutes(self._call_rules, settings, by_name=self._route_calls)
        return routes

    def lint(self, tree: ast.Module, lines: Sequence[str], path: str, settings: Settings) -> list[Violation]:
        ctx = Context(tree, lines, path, settings)
        dispatch = ctx._dispatch
        ctx._skipped.update(self._skipped)
        call_handlers = []
        rules = []
        for cls, handled in self._plan:
            rule = cls(ctx)
            rules.append(rule)
            for node_type, method in handled.items():
                if node_type is ast.Call:
                    call_handlers.append(getattr(rule, method))  # routed by name, see CallRoutes
                else:
                    dispatch.setdefault(node_type, []).append(getattr(rule, method))
        found: list[Violation] = []
        routes = self._call_routes(settings) if call_handlers else None
        try:
            self._walk(tree, ctx, dispatch, found, routes, call_handlers)
            for rule in rules:
                found.extend(rule.finish())
        finally:
            # The handler tables hold the rules, and the rules hold the
            # context: without this cycle, all of a file's state goes with
            # its last reference, not with the garbage collector's next pass.
            dispatch.clear()
            ctx._call_listeners.clear()
            ctx._per_function.clear()
        return found

    def _walk(
        self, tree: ast.Module, ctx: Context, dispatch: dict, found: list[Violation],
        routes: CallRoutes | None = None, call_handlers: Sequence[Callable] = (),
    ) -> None:
        parents = ctx.parents
        resolver = ctx.resolver
        forget_names = ctx.forget_names
        resolve = ctx.resolve
        listeners = ctx._call_listeners
        call_type, attribute_type = (ast.Call if routes is not None else None), ast.Attribute
        known_routes = routes.known if routes is not None else {}
        skipped = ctx._skipped  # a rule may take a type out of it while walking (dispatch_to)
        visit_leaves = self._visit_leaves
        fields_of = self._child_fields
        ast_type, list_type = ast.AST, list
        special = WALK_ACTS_ON
        import_type, import_from_type, assign_type = ast.Import, ast.ImportFrom, ast.Assign
        scope_types = SCOPE_TYPES
        # A node to visit is stacked bare; leaving a node is the int _LEAVE (the
        # parents list knows which node), leaving a scope the int _SCOPE_OUT,
        # entering one the pair (_SCOPE_IN, node): no tuple per node.
        stack: list = [tree]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            node_type = type(node)
            if node_type is int:
                if node == _LEAVE:
                    parents.pop()
                    continue
                ctx.scopes.pop()
                ctx._where_stack.pop()
                ctx.where = ctx._where_stack[-1]
                resolver.pop()
                forget_names()
                continue
            if node_type is tuple:
                Engine._enter_scope(ctx, node[1])
                continue
            handlers = dispatch.get(node_type)
            if handlers:
                for handler in handlers:
                    found.extend(handler(node))
            if node_type in special:
                if node_type is call_type:
                    # the callee is resolved once here; the rules' call_name() reads the cache
                    func = node.func  # type: ignore[attr-defined]
                    callee = resolve(func)
                    method = func.attr if type(func) is attribute_type else None
                    route = known_routes.get((callee, method))
                    if route is None:
                        route = routes.route(callee, method)  # type: ignore[union-attr]
                    for index in route:
                        found.extend(call_handlers[index](node))
                    if listeners and callee in listeners:
                        routed = [call_handlers[index] for index in route]
                        for handler in listeners[callee]:
                            if handler not in routed:
                                found.extend(handler(node))
                elif node_type is import_type or node_type is import_from_type:
                    if len(ctx.scopes) > 1:
                        resolver.bind(node)  # type: ignore[arg-type]
                        forget_names()
                    continue
                elif node_type is assign_type and len(ctx.scopes) > 1:
                    # `environ = {}` in a function: later uses are that local, not os.environ
                    for target in node.targets:  # type: ignore[attr-defined]
                        if type(target) is ast.Name and resolver.shadow(target.id):
                            forget_names()
            # The children in ast.iter_child_nodes order, without the skipped
            # leaves; under them the _LEAVE of this node, if it has any (a node
            # without children is nobody's ancestor: no need to stack it).
            # A def or class: its body inside its own scope, everything else
            # (decorators, defaults, bases) in the enclosing one.
            fields = fields_of.get(node_type)
            if fields is None:
                fields = fields_of[node_type] = child_fields(node_type, visit_leaves)
            children = []
            for field in fields:
                value = getattr(node, field, None)
                if type(value) is list_type:
                    for item in value:
                        if isinstance(item, ast_type) and type(item) not in skipped:
                            children.append(item)
                elif isinstance(value, ast_type) and type(value) not in skipped:
                    children.append(value)
            if node_type in scope_types:
                parents.append(node)
                push(_LEAVE)
                push(_SCOPE_OUT)
                stack.extend(reversed(node.body))  # type: ignore[attr-defined]
                push((_SCOPE_IN, node))
                body_ids = {id(stmt) for stmt in node.body}  # type: ignore[attr-defined]
                children = [c for c in children if id(c) not in body_ids]
            elif children:
                parents.append(node)
                push(_LEAVE)
            children.reverse()
            stack.extend(children)

    @staticmethod
    def _enter_scope(ctx: Context, node: ast.AST) -> None:
        scope = ctx.scope_of(node)  # type: ignore[arg-type]
        ctx.scopes.append(scope)
        outer = ctx._where_stack[-1]
        if any(s.kind == "function" for s in ctx.scopes[:-1]):
            where = outer  # nested defs belong to the function holding them
        else:
            where = f"{outer}::{scope.name}" if outer else scope.name
        ctx._where_stack.append(where)
        ctx.where = where
        ctx.resolver.push()
        if scope.kind == "function":
            arguments = node.args  # type: ignore[attr-defined]
            for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                             arguments.vararg, arguments.kwarg):
                if argument is not None:
                    ctx.resolver.shadow(argument.arg)
            ctx.forget_names()
