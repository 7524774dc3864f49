"""What a rule knows about the node it is handed: the ancestors, the
enclosing scopes (and whether each is a test, a fixture or a TestCase
method), the import resolver, the conftest pins of the file, and facts
computed once per function (:meth:`Context.per_function`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from flake8_hermetic.facts.hostpins import Pins
from flake8_hermetic.facts.raising import expects_raise
from flake8_hermetic.imports import ImportResolver, module_imports
from flake8_hermetic.nodes import DEF_TYPES, LOOP_TYPES, NEW_FRAMES, STATEMENT_LISTS, FunctionNode, own_nodes
from flake8_hermetic.source import source_segment
from flake8_hermetic.violation import Violation

if TYPE_CHECKING:
    from flake8_hermetic.options import RuleSettings
    from flake8_hermetic.project import ProjectView

UNITTEST_METHOD = re.compile(r"^(setUp|tearDown|asyncSetUp|asyncTearDown|test)")


#: what a scope is: the walk enters a new one at each def and class
ScopeKind = Literal["module", "class", "function"]


@dataclass(frozen=True)
class Scope:
    """A module, class or function the walk is inside."""

    kind: ScopeKind
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


_T = TypeVar("_T")


def _own_node_list(function: ast.AST, ctx: Context) -> list[ast.AST]:
    return list(own_nodes(function))


_UNSEEN = object()


class Context:
    """What a rule may ask about the node it is visiting."""

    def __init__(
        self,
        tree: ast.Module,
        lines: Sequence[str],
        path: str,
        settings: RuleSettings,
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
        #: (factory, id(function), binding state) -> (function, what factory computed) (see per_function)
        self._per_function: dict[tuple[Callable[..., Any], int, int], tuple[ast.AST, Any]] = {}

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
    def per_function(self, function: ast.AST, factory: Callable[[Any, Context], _T], *, names: bool = True) -> _T:
        """``factory(function, self)``, computed once per function and file and
        shared by every rule that asks with the same factory: a function's
        node list, its clock flow, its assigned values.

        A factory that resolves names (``ctx.resolve``) sees the import
        bindings in force where it is asked (a function-level import, a local
        that shadows a module), so the memo is kept per binding state: the
        answer depends on where it is asked, never on which rule asked first
        (which would make one rule's findings depend on the others being
        selected). ``names=False`` is for a factory that resolves nothing.
        The function is kept beside its value, so its id stays its own.
        """
        key = (factory, id(function), self.resolver.state if names else -1)
        try:
            return self._per_function[key][1]  # type: ignore[no-any-return]
        except KeyError:
            value = factory(function, self)
            self._per_function[key] = (function, value)
            return value

    def function_nodes(self, function: ast.AST) -> list[ast.AST]:
        """The nodes of ``function`` that belong to its own frame (see
        :func:`own_nodes`), listed once per function and file."""
        return self.per_function(function, _own_node_list, names=False)

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
            if any(expects_raise(self, item.context_expr) for item in ancestor.items):
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
    def project(self) -> ProjectView:
        """The project model as this file sees it (its role, the fixtures it
        sees, helpers of the test tree): built on first use."""
        from flake8_hermetic import project

        return project.current().view(self.path, self.tree)

    @cached_property
    def pins(self) -> Pins:
        """What the conftest chain above this file pins."""
        return self.project.pins

    @cached_property
    def source(self) -> str:
        return "".join(self.lines)

    @cached_property
    def _module_values(self) -> dict[str, ast.expr | None]:
        """Each name the module's top level binds by assignment: its value when that is the one
        binding of the name there (``CASES = [...]``), else None."""
        found: dict[str, ast.expr | None] = {}
        for statement in self.tree.body:
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
                targets, value = [statement.target], statement.value
                if isinstance(statement, ast.AugAssign):
                    value = None  # ``CASES += [...]``: no longer one value
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = value if target.id not in found else None
        return found

    def module_value(self, name: str) -> ast.expr | None:
        """The value the module binds ``name`` to at its top level, when it binds it once there."""
        return self._module_values.get(name)

    def segment(self, node: ast.AST) -> str:
        return source_segment(self.source, node) or ""
