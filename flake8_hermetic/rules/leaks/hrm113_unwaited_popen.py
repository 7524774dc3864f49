"""HRM113: a ``subprocess.Popen`` the same function never waits on or kills."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.facts.mocks import mocked_here
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.rules.leaks.flow import caught_errors, expects_failure
from flake8_hermetic.rules.leaks.function_facts import FunctionRule, ends_kept, holder_of, kept_on_instance
from flake8_hermetic.violation import Violation


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
                    if {dotted_name(t) for t in caught_errors(handler)} & SPAWN_ERRORS:
                        return True
        return False

    def _reaped_elsewhere_in_class(self, names: tuple[str, ...]) -> bool:
        """A child kept on ``self`` by one method and waited on or killed by
        another (a ``start()``/``stop()`` pair). Not when it starts in
        ``setUp``: a failure later in ``setUp`` skips ``tearDown``."""
        kept = kept_on_instance(names)
        class_scope = self.ctx.class_scope
        function = self.ctx.function
        if not kept or class_scope is None or function is None or function.name.startswith(("setUp", "asyncSetUp")):
            return False
        return any(isinstance(sub, ast.Call) and ends_kept(sub, kept, REAPERS) for sub in ast.walk(class_scope.node))


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
