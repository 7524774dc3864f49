"""A change to process-wide state (the working directory, the environment)
that the reader sees undone: the base of HRM105 and HRM107.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import DEF_TYPES, FunctionNode, NEW_FRAMES
from flake8_hermetic.project import enclosing_class, requested_fixtures
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.leaks.flow import block_of, expects_failure, later_blocks, path_to, under_main_guard
from flake8_hermetic.rules.leaks.function_facts import walk_marking_nested
from flake8_hermetic.rules.leaks.lifecycle import (
    TEARDOWNS, Pairing, is_registration, method_of, paired_body, pairing_of,
)
from flake8_hermetic.rules.leaks.syntax import mentions, target_names


def _snapshots(holder: ast.AST, ctx: Context) -> dict[str, set[str]]:
    """Every ``target = call()`` under ``holder``: target name -> the callees
    assigned to it (listed once per holder, not once per change)."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(holder):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            callee = ctx.call_name(node.value)
            if callee is None:
                continue
            for target in node.targets:
                name = dotted_name(target)
                if name is not None:
                    found.setdefault(name, set()).add(callee)
    return found


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
    return not readers.isdisjoint(ctx.per_function(holder, _snapshots).get(target, ()))


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


def first_yield_end(function: FunctionNode) -> int | None:
    """The last line of the first ``yield`` of a generator (not of its local defs)."""
    end: int | None = None
    for node, nested in walk_marking_nested(function):
        if not nested and isinstance(node, (ast.Yield, ast.YieldFrom)):
            line = getattr(node, "end_lineno", None) or node.lineno
            end = line if end is None else min(end, line)
    return end


def _child_pid(test: ast.expr) -> str | None:
    """The name an ``if`` test finds zero, the child's side of a fork:
    ``pid`` for ``if not pid:`` and ``if pid == 0:``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return dotted_name(test.operand)
    if (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0
    ):
        return dotted_name(test.left)
    return None


def _forks_into(ctx: Context, function: ast.AST, pid: str) -> bool:
    """``function`` assigns ``pid = os.fork()`` (or ``os.forkpty()``)."""
    return any(
        isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call)
        and ctx.call_name(sub.value) in FORKS
        and pid in {n for t in sub.targets for n in target_names(t)}
        for sub in ast.walk(function)
    )


def _yield_end(function: FunctionNode, ctx: Context) -> int | None:
    """:func:`first_yield_end`, once per function and file (``ctx.per_function``)."""
    return first_yield_end(function)


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
        # per function (id), kept per rule because they ask the rule's own
        # ``changes``: the lines of the cleanup registrations that undo the state,
        # and whether code after the yield changes it; a function with many
        # changes would otherwise be walked once per change
        self._undoing_registrations: dict[int, list[int]] = {}
        self._changed_after_yield: dict[int, bool] = {}
        #: per block (by id and name-binding state, the block kept beside it): index -> the first statement from there on
        #: that does not set up a change (see _first_not_set_up)
        self._kept: dict[tuple[int, int], tuple[list[ast.stmt], dict[int, int]]] = {}

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
            or under_main_guard(self.ctx)
            or self._in_registered_callback(node)
            or self._in_restorer(node)
            or self._in_preexec_fn()
            or self._entered_then_exited(node)
            or self._requests_restoring_fixture(node)
        )

    def _entered_then_exited(self, node: ast.AST) -> bool:
        """A change in a context manager's ``__enter__`` (``__aenter__``)
        whose class changes the state back in its ``__exit__``: the ``with``
        block around every use undoes it."""
        owner, method = method_of(self.ctx)
        if owner is None or method is None or method.name not in ("__enter__", "__aenter__"):
            return False
        return any(
            isinstance(sub, DEF_TYPES) and sub.name in ("__exit__", "__aexit__") and self._always_changes(sub.body)
            for sub in owner.body
        )

    def _always_changes(self, body: list[ast.stmt]) -> bool:
        """Some statement of ``body`` changes the state on every path (not
        only under an ``if`` whose other branch leaves it: ``if
        self.old: os.environ["TZ"] = self.old`` leaves the new value when
        there was none)."""
        for stmt in body:
            if isinstance(stmt, ast.If):
                if self._always_changes(stmt.body) and self._always_changes(stmt.orelse):
                    return True
            elif isinstance(stmt, ast.Try):
                if self._always_changes(stmt.body) or self._always_changes(stmt.finalbody):
                    return True
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                if self._always_changes(stmt.body):
                    return True
            elif not isinstance(stmt, (*DEF_TYPES, ast.ClassDef)) and self.changes(stmt):
                return True
        return False

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
                end = self.ctx.per_function(node, _yield_end)
                return end is not None and any(
                    self.changes(stmt) for stmt in ast.walk(node)
                    if isinstance(stmt, ast.stmt) and stmt.lineno > end and not isinstance(stmt, DEF_TYPES)
                )
        return False

    #: the project model's fixture effect that puts this state back after each test
    #: (``RESTORES_CWD``, ``RESTORES_ENV``), or None
    RESTORED_EFFECT: str | None = None

    def restored_by(self, node: ast.AST, effects: frozenset[str]) -> bool:
        """The fixture effects ``effects`` (see :mod:`flake8_hermetic.project.modules`) undo the change at ``node``."""
        return self.RESTORED_EFFECT in effects

    def _requests_restoring_fixture(self, node: ast.AST) -> bool:
        """The test gets, as pytest computes its fixture closure, a fixture
        that saves and restores the state: asked for as a parameter, with a
        ``usefixtures`` mark (on it, its class, the module's ``pytestmark``,
        through an alias of the mark), autouse (the module's, the conftest
        chain's, the plugins', its class's and its bases'), or requested by
        any of those in turn. One restores when it is named for it
        (``pytester``, ``save_env``), is a fixture of this file that changes
        the state back after its ``yield``, or is a function-scoped fixture of
        the project whose effects (read by the project model: monkeypatch,
        a teardown after the ``yield`` or in a ``finally``, a project context
        manager or helper that restores) put the state back."""
        requested = requested_fixtures(self.ctx.scopes)
        class_name = enclosing_class(self.ctx.scopes)
        project = self.ctx.project
        closure = project.closure(requested, class_name) if self.RESTORED_EFFECT is not None else requested
        if any(self._restoring_fixture(n) for n in closure) or any(self._local_fixture_restores(n) for n in requested):
            return True
        effect = self.RESTORED_EFFECT
        if effect is None:
            return False
        if self.restored_by(node, project.effects_for_test(requested, class_name)):
            return True
        # a base class of another module whose per-test tearDown writes the state back
        return class_name is not None and self.RESTORED_STATE in project.teardown_restores(class_name)

    #: the state a base class's tearDown is read for ("cwd", "env"; see ProjectView.teardown_restores)
    RESTORED_STATE = ""

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

    def _in_finally_or_try(self, node: ast.AST) -> bool:
        """The restore half (a change in a ``finally``), or a change in the
        body of a ``try`` whose ``finally`` changes the state back."""
        chain = path_to(self.ctx, node)
        for position in range(len(chain) - 1, 0, -1):
            child, holder = chain[position], chain[position - 1]
            if isinstance(holder, NEW_FRAMES):
                return False
            if not isinstance(holder, ast.Try) and type(holder).__name__ != "TryStar":
                continue
            final = holder.finalbody  # type: ignore[attr-defined]
            block = block_of(self.ctx, holder, child)
            if block is final:
                return self.puts_back(node)
            if block is not None and any(self.changes(s) for s in final):
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
        for siblings, start, _ in later_blocks(self.ctx, node):
            if start < len(siblings):
                index = self._first_not_set_up(siblings, start)
                if index < len(siblings):
                    return siblings[index]
        return None

    def _first_not_set_up(self, siblings: list[ast.stmt], start: int) -> int:
        """The index of the first statement of ``siblings`` from ``start`` on
        that is not part of setting up a change (``len`` if none). Each
        block's answers are remembered, so a run of 8,000 changes in a row
        is read once, not once per change."""
        known = self._kept.setdefault((id(siblings), self.ctx.resolver.state), (siblings, {}))[1]
        visited: list[int] = []
        index = start
        while index < len(siblings) and index not in known:
            visited.append(index)
            if not self._sets_up(siblings[index]):
                break
            index += 1
        answer = known.get(index, index)
        for seen in visited:
            known[seen] = answer
        return answer

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
                isinstance(d, ast.Call) and self._restores_around(d) for d in scope.node.decorator_list  # type: ignore[attr-defined]
            ):
                return True
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and on_path not in ancestor.items:
                if any(
                    isinstance(item.context_expr, ast.Call) and self._restores_around(item.context_expr)
                    for item in ancestor.items
                ):
                    return True
        return False

    def _restores_around(self, call: ast.Call) -> bool:
        """A ``with`` item that restores the state when its block ends: one the
        rule knows, or a context manager of the project (this file's or the
        test tree's, followed through the managers it uses) that the project
        model reads as putting the state back (``with clean_env():``)."""
        if self.restoring_manager(call):
            return True
        name = self.ctx.call_name(call)
        return bool(name) and self.RESTORED_EFFECT is not None and (
            self.RESTORED_EFFECT in self.ctx.project.manager_effects(name)
        )

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
        end = self.ctx.per_function(function, _yield_end)
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
        pairing = pairing_of(owner, method)
        if pairing is None:
            return False
        undoers = self._class_undoers(owner, pairing)
        return bool(undoers) and self.covered_by_class(node, undoers, method.name in pairing.setups)

    def _class_undoers(self, owner: ast.ClassDef | None, pairing: Pairing) -> list[ast.AST]:
        """The teardowns of ``pairing`` and the callbacks its setups register,
        for ``owner`` (and its bases in the file) or the module."""
        key = (id(owner if owner is not None else self.ctx.tree), pairing.group)
        undoers = self._undoers.get(key)
        if undoers is None:
            undoers = []
            for sub in paired_body(self.ctx, owner):
                if isinstance(sub, DEF_TYPES) and sub.name in pairing.teardowns:
                    undoers.append(sub)
                elif isinstance(sub, DEF_TYPES) and sub.name in pairing.setups:
                    for call in ast.walk(sub):
                        if isinstance(call, ast.Call) and is_registration(self.ctx, call):
                            undoers += self._callbacks(call, sub)
            self._undoers[key] = undoers
        return undoers

    def _in_fork_child(self, node: ast.AST) -> bool:
        """``if pid == 0:`` (or ``if not pid:``) after ``pid = os.fork()``:
        the change happens in the child process."""
        function = self.ctx.function
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if not isinstance(ancestor, ast.If) or not any(s is on_path for s in ancestor.body):
                continue
            pid = _child_pid(ancestor.test)
            if pid is not None and function is not None and _forks_into(self.ctx, function, pid):
                return True
        return False
