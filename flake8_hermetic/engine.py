"""One walk of a test file, dispatching each node to the enabled rules.

The walk is iterative (deeply nested expressions cannot exhaust the stack)
and keeps the rules' :class:`~flake8_hermetic.context.Context` (defined in
``context.py``) up to date: the ancestors of the node, the enclosing scopes,
the import resolver's function-level bindings. Decorators, default
values and class bases are visited in the enclosing scope, as Python
evaluates them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from flake8_hermetic.context import Context
from flake8_hermetic.nodes import LEAF_TYPES, SCOPE_TYPES, child_fields, node_types
from flake8_hermetic.rule import Rule, drop_never_run
from flake8_hermetic.violation import Violation

if TYPE_CHECKING:
    from flake8_hermetic.options import RuleSettings

_LEAVE, _SCOPE_IN, _SCOPE_OUT = range(3)
#: the node types the walk itself acts on, besides dispatching them
WALK_ACTS_ON = frozenset({ast.Call, ast.Import, ast.ImportFrom, ast.Assign})


class CallRoutes:
    """Which rules' ``visit_Call`` a call goes to, from its canonical name
    and its method name (the ``attr`` of ``x.attr(...)``, else None).

    Worked out once per distinct (name, method) pair and kept: rules are
    numbered by their position among the rules that handle calls, and a
    route is the tuple of those numbers, in rule order.
    """

    MAX_ROUTES = 100_000  # a language server lints many files in one process

    def __init__(self, rule_classes: Sequence[type[Rule]], settings: RuleSettings, by_name: bool = True) -> None:
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

    def dispatch(
        self, node: ast.Call, resolve: Callable[[ast.AST], str | None], call_handlers: Sequence[Callable],
        listeners: dict[str, list[Callable]], found: list[Violation],
    ) -> None:
        """Hand ``node`` to the call handlers its route names, then to the
        handlers a rule added for its callee while walking (``listeners``,
        see ``Context.dispatch_calls_to``) that the route did not already
        name. The callee is resolved once here; the rules' ``call_name()``
        reads the cache."""
        func = node.func
        callee = resolve(func)
        method = func.attr if type(func) is ast.Attribute else None
        route = self.known.get((callee, method))
        if route is None:
            route = self.route(callee, method)
        for index in route:
            found.extend(call_handlers[index](node))
        if listeners and callee in listeners:
            routed = [call_handlers[index] for index in route]
            for handler in listeners[callee]:
                if handler not in routed:
                    found.extend(handler(node))


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

    def _call_routes(self, settings: RuleSettings) -> CallRoutes:
        routes = self._routes
        if routes is None or routes.settings is not settings:
            routes = self._routes = CallRoutes(self._call_rules, settings, by_name=self._route_calls)
        return routes

    def lint(self, tree: ast.Module, lines: Sequence[str], path: str, settings: RuleSettings) -> list[Violation]:
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
            found = drop_never_run(found, ctx, self.rule_classes)  # code that never runs cannot leak
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
        """The per-node hot loop of every lint: the steps every node takes
        (dispatch, children) stay inline on hoisted locals; a call's routing
        is one method call (:meth:`CallRoutes.dispatch`), the rare steps
        (scopes, imports, assignments in a function) are helpers below."""
        parents = ctx.parents
        resolve = ctx.resolve
        listeners = ctx._call_listeners
        call_type = ast.Call if routes is not None else None
        dispatch_call = routes.dispatch if routes is not None else None
        skipped = ctx._skipped  # a rule may take a type out of it while walking (dispatch_to)
        visit_leaves = self._visit_leaves
        fields_of = self._child_fields
        ast_type, list_type = ast.AST, list
        special = WALK_ACTS_ON
        import_type, import_from_type, assign_type = ast.Import, ast.ImportFrom, ast.Assign
        scope_types = SCOPE_TYPES
        leave_scope, enter_scope = Engine._leave_scope, Engine._enter_scope
        bind_import, shadow_assigned = Engine._bind_import, Engine._shadow_assigned
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
                else:
                    leave_scope(ctx)
                continue
            if node_type is tuple:
                enter_scope(ctx, node[1])
                continue
            handlers = dispatch.get(node_type)
            if handlers:
                for handler in handlers:
                    found.extend(handler(node))
            if node_type in special:
                if node_type is call_type:
                    dispatch_call(node, resolve, call_handlers, listeners, found)  # type: ignore[misc]
                elif node_type is import_type or node_type is import_from_type:
                    bind_import(ctx, node)
                    continue
                elif node_type is assign_type and len(ctx.scopes) > 1:
                    shadow_assigned(ctx, node)
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
    def _leave_scope(ctx: Context) -> None:
        ctx.scopes.pop()
        ctx._where_stack.pop()
        ctx.where = ctx._where_stack[-1]
        ctx.resolver.pop()
        ctx.forget_names()

    @staticmethod
    def _bind_import(ctx: Context, node: ast.Import | ast.ImportFrom) -> None:
        """An import inside a function binds its names there (module-level ones the resolver read first)."""
        if len(ctx.scopes) > 1:
            ctx.resolver.bind(node)
            ctx.forget_names()

    @staticmethod
    def _shadow_assigned(ctx: Context, node: ast.Assign) -> None:
        """`environ = {}` in a function: later uses are that local, not os.environ."""
        for target in node.targets:
            if type(target) is ast.Name and ctx.resolver.shadow(target.id):
                ctx.forget_names()

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
