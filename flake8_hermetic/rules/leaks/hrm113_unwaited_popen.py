"""HRM113: a ``subprocess.Popen`` the same function never waits on or kills."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from flake8_hermetic.facts.mocks import mocked_here
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.rules.leaks.faked_spawns import spawner_faked
from flake8_hermetic.rules.leaks.flow import caught_errors, expects_failure
from flake8_hermetic.rules.leaks.function_facts import FunctionRule, Holder, ends_kept, holder_of, kept_on_instance
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

    Flagged although the child is reaped somewhere:

    - a child the function has to stop (it kills or terminates it, in its
      own frame: not in a nested def a timer runs) when every stop is a plain statement after an assertion (or a
      `raise`, an `assert*`/`fail*` call) that may fail first, with no
      reaping call in a `finally` or an `except`, and not kept on `self`
      for another method to reap: the kill runs only on the happy path (a
      child only waited for, which ends on its own, is not, nor one sent
      a signal, which is as often the stimulus);
    - `communicate(timeout=)` (or `wait(timeout=)`) in a `try` whose
      `except TimeoutExpired` neither kills (or reaps) the child nor
      raises, outside a loop (in a loop the handler retries): on a
      timeout the child keeps running, as documented;
    - `with Popen(...)` of a server whose block never ends it (no kill,
      terminate, signal, communicate or wait on it, and no call whose
      name ends in kill, terminate or stop): `Popen.__exit__` waits for
      the child, forever. A server is a child whose command line says
      so (`serve`, `server`, `runserver`, `listen`, `daemon`, `--port`
      as words) or that the block talks to over the network (`urlopen`,
      `create_connection`, `connect`, `getresponse`, `requests.*`,
      `httpx.*`, `urllib3.*`); a child that ends on its own (reads its
      input, prints and exits) is waited for as it should be.

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
    principles = ("faked-spawner",)
    message = "Popen() child {fate} and outlives the test; use with Popen(...) or kill and wait in finally/addCleanup"
    calls = frozenset({"subprocess.Popen"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.ctx.call_name(node) != "subprocess.Popen" or spawner_faked(self.ctx):
            return
        holder = holder_of(self.ctx, node)
        if holder.how == "with" and holder.chained is None and self._server_never_stopped(node, holder):
            yield self.report(node, fate=FATE_SERVER)
            return
        if holder.chained in REAPERS or holder.how in ("with", "registered") or self.handed_back(holder):
            return
        if expects_failure(self.ctx, node) or self.ctx.expected_to_raise(node):
            return
        function = self.ctx.function
        # a script's module-level child is judged against the module body
        owner: ast.AST = function if function is not None else self.ctx.tree
        if holder.how == "assigned" and holder.names:
            facts = self.facts(owner)  # type: ignore[arg-type]
            fate = _unprotected_fate(owner, node, holder.names) if function is not None else None
            if fate is not None and not any(n in facts.registered or n in facts.managed for n in holder.names) and not (
                self._reaped_elsewhere_in_class(holder.names) or self._kept_and_reaped_by_teardown(holder.names)
            ):
                yield self.report(node, fate=fate)
                return
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
        yield self.report(node, fate=FATE_NEVER)

    def _kept_and_reaped_by_teardown(self, names: tuple[str, ...]) -> bool:
        """Kept on ``self`` and reaped by another method of the class (its
        teardown, a helper the test calls when it fails): not a happy-path kill."""
        kept = kept_on_instance(names)
        class_scope = self.ctx.class_scope
        function = self.ctx.function
        if not kept or class_scope is None:
            return False
        return any(
            isinstance(sub, ast.Call) and ends_kept(sub, kept, REAPERS)
            for method in class_scope.node.body  # type: ignore[attr-defined]
            if method is not function
            for sub in ast.walk(method)
        )

    def _server_never_stopped(self, node: ast.Call, holder: Holder) -> bool:
        """``with Popen(server) as p:`` whose block never ends the child: a
        child whose command line says it serves (``http.server``,
        ``--port``, ``runserver``) or that the block talks to over the
        network, with no kill, terminate, signal, communicate or wait on it
        in the block. ``Popen.__exit__`` waits for it, forever."""
        statement = holder.statement
        if statement is None:
            return False
        names = set(holder.names)
        body = getattr(statement, "body", [])
        if names and any(_calls_on(stmt, names, ENDERS) for stmt in body):
            return False
        if any(
            isinstance(sub, ast.Call) and (dotted_name(sub.func) or "").lower().endswith(("kill", "terminate", "stop"))
            for stmt in body for sub in ast.walk(stmt)
        ):
            return False  # stopped through a helper or os.kill(p.pid, ...)
        words = " ".join(
            sub.value.lower() for sub in ast.walk(node.args[0] if node.args else node)
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str)
        )
        if SERVER_WORDS.search(words):
            return True
        return any(isinstance(sub, ast.Call) and self._talks_over_network(sub) for stmt in body for sub in ast.walk(stmt))

    def _talks_over_network(self, call: ast.Call) -> bool:
        name = self.ctx.call_name(call) or dotted_name(call.func) or ""
        return name.rpartition(".")[2].lower() in NETWORK_CALLS or name.startswith(HTTP_CLIENTS)

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


FATE_NEVER = "is never waited on or killed in this function"
FATE_HAPPY_PATH = "is killed only on the happy path (an assertion that fails first skips the kill)"
FATE_TIMEOUT = "is left running when communicate() times out (its TimeoutExpired handler neither kills it nor re-raises)"
FATE_SERVER = "is a server its with block never stops (Popen.__exit__ waits for it forever)"

#: methods that stop a child that would not end on its own (not
#: ``send_signal``: a signal is as often the stimulus a test sends)
STOPPERS = frozenset({"kill", "terminate"})
#: methods that end a child or wait for its end (in a with block)
ENDERS = frozenset({"kill", "terminate", "send_signal", "communicate", "wait"})
#: words of a command line that say the child serves until stopped
SERVER_WORDS = re.compile(r"(?<![a-z])(serve|server|runserver|listen|daemon)(?![a-z])|--port\b")
#: calls that talk to a child over the network (last name, lower case)
NETWORK_CALLS = frozenset({"urlopen", "create_connection", "connect", "getresponse"})
#: modules whose every call is an HTTP request
HTTP_CLIENTS = ("requests.", "httpx.", "urllib3.")


def _unprotected_fate(function: ast.AST, popen: ast.Call, names: tuple[str, ...]) -> str | None:
    """Why the child kept in ``names`` leaks despite being reaped somewhere:
    a ``communicate(timeout=)`` whose ``TimeoutExpired`` handler neither
    kills nor re-raises; or a child the function has to stop (it kills or
    terminates it) stopped only by plain statements after an assertion
    that may fail first, with no stop in a ``finally`` or an ``except``."""
    wanted = set(names)
    own = _own_frame(function)
    for node in own:
        if isinstance(node, ast.Try) and _swallows_timeout(node, wanted) and not _in_loop(function, node):
            return FATE_TIMEOUT
    stops: list[ast.Call] = []
    protected = False
    for node in own:
        if isinstance(node, ast.Try):
            guarded = [*node.finalbody, *(s for handler in node.handlers for s in handler.body)]
            if any(_calls_on(stmt, wanted, REAPERS) for stmt in guarded):
                protected = True
        elif isinstance(node, ast.Call) and _call_on(node, wanted, STOPPERS):
            stops.append(node)
    if protected or not stops:
        return None
    first_stop = min(stop.lineno for stop in stops)
    asserted = any(_fails_the_test(node) and popen.lineno < getattr(node, "lineno", 0) < first_stop for node in own)
    return FATE_HAPPY_PATH if asserted else None


def _own_frame(function: ast.AST) -> list[ast.AST]:
    """The nodes of ``function`` outside its nested defs, lambdas and classes
    (those run elsewhere, at another time: a timer thread's kill)."""
    found: list[ast.AST] = []
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return found


def _in_loop(function: ast.AST, target: ast.AST) -> bool:
    """``target`` sits in a loop of ``function``: a handler that swallows
    the timeout there retries, it does not give up on the child."""
    return any(
        isinstance(loop, (ast.While, ast.For, ast.AsyncFor)) and any(sub is target for sub in ast.walk(loop))
        for loop in ast.walk(function)
    )


def _fails_the_test(node: ast.AST) -> bool:
    if isinstance(node, (ast.Assert, ast.Raise)):
        return True
    if isinstance(node, ast.Call):
        name = (dotted_name(node.func) or "").rpartition(".")[2]
        return name.startswith(("assert", "fail")) or name == "fail"
    return False


def _call_on(call: ast.Call, names: set[str], methods: frozenset[str]) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in methods and dotted_name(func.value) in names


def _calls_on(stmt: ast.AST, names: set[str], methods: frozenset[str]) -> bool:
    return any(isinstance(sub, ast.Call) and _call_on(sub, names, methods) for sub in ast.walk(stmt))


def _swallows_timeout(node: ast.Try, names: set[str]) -> bool:
    """``try: p.communicate(timeout=t) except TimeoutExpired: ...`` whose
    handler neither kills the child nor raises."""
    communicates = any(
        isinstance(sub, ast.Call) and _call_on(sub, names, frozenset({"communicate", "wait"}))
        and any(k.arg == "timeout" for k in sub.keywords)
        for stmt in node.body for sub in ast.walk(stmt)
    )
    if not communicates:
        return False
    for handler in node.handlers:
        caught = {(dotted_name(t) or "").rpartition(".")[2] for t in caught_errors(handler)}
        if "TimeoutExpired" not in caught:
            continue
        ends = any(
            isinstance(sub, ast.Raise) or (isinstance(sub, ast.Call) and _reaps((dotted_name(sub.func) or "").lower()))
            for stmt in handler.body for sub in ast.walk(stmt)
        )
        if not ends:
            return True
    return False


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
