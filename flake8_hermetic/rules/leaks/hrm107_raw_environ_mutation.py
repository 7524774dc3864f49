"""HRM107: a raw write to the process environment that nothing the reader sees undoes."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.facts.environ import ENVIRON
from flake8_hermetic.facts.names import callee_last_name
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import shape
from flake8_hermetic.project.modules import RESTORES_ENV, RESTORES_ENV_KEY
from flake8_hermetic.rules.leaks.undone_change import UndoneChangeRule, saved_from
from flake8_hermetic.violation import Violation


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

    - what the test's fixture closure or a project context manager around
      the write puts back (see "What it leaves alone");
    - a write meant for the whole run, made once before any test: at
      module level of a `conftest.py` or a test package's `__init__.py`,
      in a session hook of a conftest (`pytest_configure`,
      `pytest_sessionstart`), or in a session-scoped fixture.

    - in a class derived from a base class of another module of the
      project whose per-test teardown (`tearDown`, `asyncTearDown`,
      `teardown_method`) writes the environment back (read by the project model).

    A restore done by a fixture the test does not ask for (and that is
    not autouse), or by a fixture of a wider scope, does not count.
    """

    code = "HRM107"
    principles = ("fixture-closure",)
    message = "{what} changes the environment of every later test; use monkeypatch.setenv/delenv or mock.patch.dict(os.environ)"
    default_on = False
    WRITERS = frozenset({"os.putenv", "os.unsetenv"})
    calls = WRITERS | {f"{owner}.{method}" for owner in ENVIRON for method in ENVIRON_MUTATORS}

    STATE_WORDS = ("env",)
    RESTORED_STATE = "env"
    RESTORED_EFFECT = RESTORES_ENV
    #: pytest hooks that run once per session, before any test
    SESSION_HOOKS = frozenset({"pytest_configure", "pytest_sessionstart", "pytest_sessionfinish", "pytest_unconfigure"})

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
        return (
            super().undone(node) or self._removes_own_write(node) or self._set_once_per_session()
            or self._monkeypatched_before(node)
        )

    def restored_by(self, node: ast.AST, effects: frozenset[str]) -> bool:
        """The whole environment put back, or every key the write names set or
        deleted through ``monkeypatch`` (which puts each key it touched back
        at teardown, whatever was written to it since)."""
        if RESTORES_ENV in effects:
            return True
        keys = _constant_keys(self, node)
        return bool(keys) and all(RESTORES_ENV_KEY + key in effects for key in keys)

    def _monkeypatched_before(self, node: ast.AST) -> bool:
        """``monkeypatch.setenv("K", ...)`` or ``delenv("K")`` earlier in the
        same function, then a raw write of ``K``: monkeypatch puts ``K`` back
        to what it was before the test at teardown. (One after the write would
        save the written value and put that back.)"""
        function = self.ctx.function
        keys = _constant_keys(self, node)
        if function is None or not keys:
            return False
        line = getattr(node, "lineno", 0)
        return keys <= {key for at, key in self.ctx.per_function(function, _monkeypatched_keys) if at < line}

    def _set_once_per_session(self) -> bool:
        """The environment of the whole run, set by design before any test:
        at module level of a conftest or a test package's ``__init__``, in a
        session hook of a conftest, or in a session-scoped fixture (every
        test of the session sees the same value; nothing leaks from one test
        into the next)."""
        basename = self.ctx.path.replace("\\", "/").rpartition("/")[2]
        if self.ctx.at_module_level:
            return basename in ("conftest.py", "__init__.py")
        for scope in self.ctx.scopes:
            if scope.kind != "function":
                continue
            if basename == "conftest.py" and scope.name in self.SESSION_HOOKS:
                return True
            if scope.is_fixture and _session_scoped(scope.node):
                return True
        return False

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
        return callee_last_name(self.ctx, call) == "tzset"

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

    def _keys(self, node: ast.AST) -> set[object]:
        """The keys written under ``node``, by their shape."""
        keys: set[str] = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, (ast.Store, ast.Del)) and self._is_environ(sub.value):
                keys.add(shape(sub.slice))
            elif isinstance(sub, ast.Call) and self._mutator(sub) and sub.args:
                keys.add(shape(sub.args[0]))
        return keys


def _monkeypatched_keys(function: ast.AST, ctx: object) -> list[tuple[int, object]]:
    """(line, key) of every ``monkeypatch.setenv("K", ...)``/``delenv("K")`` in ``function``."""
    return [
        (sub.lineno, sub.args[0].value) for sub in ast.walk(function)
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("setenv", "delenv")
        and "monkeypatch" in (dotted_name(sub.func.value) or "") and sub.args and isinstance(sub.args[0], ast.Constant)
    ]


def _constant_keys(rule: RawEnvironMutationRule, node: ast.AST) -> set[str]:
    """The keys a write names, when each is a string in the source; empty
    when any is not (``os.environ[name] = ...``, ``clear()``, ``update(saved)``)."""
    keys: list[ast.expr] = []
    if isinstance(node, (ast.Assign, ast.Delete, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        for target in targets:
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            if not all(isinstance(e, ast.Subscript) and rule._is_environ(e.value) for e in elements):
                return set()
            keys += [e.slice for e in elements]  # type: ignore[attr-defined]
    elif isinstance(node, ast.Call):
        method = (rule.ctx.call_name(node) or "").rpartition(".")[2]
        if method == "update" and not node.args and node.keywords:
            return set() if any(k.arg is None for k in node.keywords) else {str(k.arg) for k in node.keywords}
        if method in ("pop", "setdefault", "__setitem__", "__delitem__", "putenv", "unsetenv") and node.args:
            keys.append(node.args[0])
    if not keys or not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in keys):
        return set()
    return {k.value for k in keys}  # type: ignore[attr-defined]


def _literal(node: ast.AST | None) -> bool:
    """A value written out in the source (not a saved one)."""
    return isinstance(node, (ast.Constant, ast.Dict, ast.JoinedStr, ast.List, ast.Tuple, ast.Set))


def _session_scoped(function: ast.AST) -> bool:
    """``@pytest.fixture(scope="session")`` on ``function``."""
    for decorator in getattr(function, "decorator_list", ()):
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "scope" and isinstance(keyword.value, ast.Constant) and keyword.value.value == "session":
                    return True
    return False
