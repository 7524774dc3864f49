"""Where a call's result goes (:func:`holder_of`) and what the enclosing
function does with the names it holds (:class:`FunctionFacts`, built at
most once per function and file, and only when a candidate is seen); the
bases of the rules that ask them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from flake8_hermetic.context import Context
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import DEF_TYPES, FunctionNode, NEW_FRAMES
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.leaks.lifecycle import is_registration
from flake8_hermetic.rules.leaks.syntax import mentions, target_names
from flake8_hermetic.violation import Violation


#: methods that put the value into a container named by the receiver
CONTAINER_METHODS = frozenset({"append", "appendleft", "add", "extend", "insert", "setdefault"})


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


def walk_marking_nested(function: FunctionNode) -> Iterator[tuple[ast.AST, bool]]:
    """Every node under ``function``, with whether it sits inside a def or
    lambda nested in it (callbacks still name what they clean up)."""
    pending: list[tuple[ast.AST, bool]] = [(function, False)]
    while pending:
        node, nested = pending.pop()
        yield node, nested
        inner = nested or (node is not function and isinstance(node, (*DEF_TYPES, ast.Lambda)))
        pending.extend((child, inner) for child in ast.iter_child_nodes(node))


class FunctionFacts:
    """What one function does with the names it holds, from one walk of it;
    built once per function and file (``ctx.per_function(function, FunctionFacts)``),
    and only when a rule sees a candidate in it."""

    def __init__(self, function: FunctionNode, ctx: Context) -> None:
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
        for node, nested in walk_marking_nested(function):
            if isinstance(node, (ast.Name, ast.Attribute)):
                self._note_mention(node)
            if isinstance(node, ast.Call):
                self._note_call(ctx, node, registrations)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._note_loop(node)
            elif isinstance(node, ast.withitem):
                self.managed |= mentions(node.context_expr)
            elif isinstance(node, DEF_TYPES) and node is not function:
                local_defs[node.name] = set().union(*(mentions(s) for s in node.body))
            elif not nested:  # a local def's return and yield are its own
                self._note_exit(node)
        for names in registrations:
            self.registered |= names
            for name in names & local_defs.keys():
                self.registered |= local_defs[name]

    def _note_mention(self, node: ast.Name | ast.Attribute) -> None:
        text = dotted_name(node)
        if text is not None:
            self.lines.setdefault(text, []).append(node.lineno)

    def _note_call(self, ctx: Context, node: ast.Call, registrations: list[set[str]]) -> None:
        """The method called on a receiver, and what the arguments mention:
        a registration's (with its callee) go to ``registrations``."""
        func = node.func
        if isinstance(func, ast.Attribute):
            receiver = dotted_name(func.value)
            if receiver is not None:
                self.methods.setdefault(receiver, set()).add(func.attr)
        arguments = set().union(*(mentions(a) for a in [*node.args, *node.keywords]))
        if is_registration(ctx, node):
            registrations.append(arguments | mentions(func))
        elif arguments:
            self.passed.append((last_name(node), arguments))

    def _note_loop(self, node: ast.For | ast.AsyncFor | ast.comprehension) -> None:
        sources = mentions(node.iter)
        for name in target_names(node.target):
            self.loop_sources.setdefault(name, set()).update(sources)

    def _note_exit(self, node: ast.AST) -> None:
        """A ``return`` value's names, and the end of the first ``yield``."""
        if isinstance(node, ast.Return) and node.value is not None:
            self.returned |= mentions(node.value)
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            end = getattr(node, "end_lineno", None) or node.lineno
            self.yield_end = end if self.yield_end is None else min(self.yield_end, end)

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


def kept_on_instance(names: tuple[str, ...]) -> set[str]:
    """Those of ``names`` kept on the instance or the class: ``self.x``, ``cls.x``."""
    return {n for n in names if n.startswith(("self.", "cls."))}


def ends_kept(call: ast.Call, kept: set[str], methods: frozenset[str], attributes: frozenset[str] = frozenset()) -> bool:
    """``call`` ends one of ``kept`` from another method of the class: it
    calls one of ``methods`` on it (``self.proc.kill()``, ``self.thread.join()``),
    or on any receiver whose last attribute is in ``attributes``
    (``target.threads`` for a kept ``self.threads``)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in methods:
        return False
    receiver = dotted_name(func.value) or ""
    return receiver in kept or ("." in receiver and receiver.rpartition(".")[2] in attributes)


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

    __slots__ = ()

    def facts(self, function: FunctionNode) -> FunctionFacts:
        return self.ctx.per_function(function, FunctionFacts)

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
