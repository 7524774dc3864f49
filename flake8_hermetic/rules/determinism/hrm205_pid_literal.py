"""HRM205: a literal process id that a real host can hand out."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.mocks import mocked_here, patch_target
from flake8_hermetic.facts.value_flow import flow_index
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation

#: the calls that hand a pid to the OS (its first argument or ``pid=``)
PID_CALLS = frozenset({
    "os.kill", "os.killpg", "os.waitpid", "os.getpgid", "os.getsid", "os.pidfd_open", "os.sched_getaffinity",
    "os.sched_setaffinity", "psutil.Process", "psutil.pid_exists",
})
MAX_PID = 4194304  # Linux's pid_max ceiling (2**22)
PID_WORD = re.compile(r"^p?pids?\d*$")
CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def is_pid_name(name: str) -> bool:
    """``pid``, ``child_pid``, ``fakePid``, ``PID2``; not ``rapid`` or ``stupid``."""
    words = CAMEL_BOUNDARY.sub("_", name).lower().split("_")
    return any(PID_WORD.match(word) for word in words if word)


def allocatable_pid(node: ast.expr | None) -> int | None:
    if (
        isinstance(node, ast.Constant)
        and type(node.value) is int
        and 2 <= node.value <= MAX_PID
    ):
        return node.value
    return None


def replaced_pid_call(target: str | None) -> str | None:
    """The pid call a patch of ``target`` (see :func:`patch_target`) replaces:
    ``os.kill``, ``psutil.Process``, also spelled through a module (``x.os.kill``)."""
    if target is None:
        return None
    return next((pid_call for pid_call in PID_CALLS if target == pid_call or target.endswith("." + pid_call)), None)


#: set-up methods whose patches hold for every test of their class
SETUP_NAMES = frozenset({"setUp", "asyncSetUp", "setUpClass", "setup_method", "setup_class", "setup"})

#: the last name of a call that can replace a function: patch, patch.object, monkeypatch.setattr
PATCHER_NAMES = frozenset({"patch", "object", "setattr"})


class PidLiteralRule(Rule):
    """
    Flags a literal process id that a real host can hand out: an int from 2 to 4194304 used as a pid.

    ## Why is this bad?
    A test that needs "a process that does not exist" often picks a number
    that looks too big to be real, like `999999` or `123456`. It is not:
    Linux allocates pids up to `pid_max`, which is 4194304 on 64-bit hosts,
    and a long-running CI machine walks through that whole range. The day
    the number names a live process, `os.kill` signals a stranger, a
    liveness probe says "alive", and the test fails (or does damage) for
    reasons that have nothing to do with the change under review.

    Flagged: such a literal that reaches the pid argument (the first, or
    `pid=`) of `os.kill`, `os.killpg`, `os.waitpid`, `os.getpgid`,
    `os.getsid`, `os.pidfd_open`, `os.sched_getaffinity`/`setaffinity`,
    `psutil.Process` or `psutil.pid_exists`: directly, or through the
    function's own variables (`pid = 999999` then `os.kill(pid, 0)`, a `for`
    loop over literals) or a module constant. 0, 1 and negative numbers have
    fixed meanings and are not flagged.

    ## Example
    ```python
    def test_probe_of_a_dead_process():
        dead = 999999
        with pytest.raises(ProcessLookupError):
            os.kill(dead, 0)
    ```

    ## Use instead
    ```python
    def test_probe_of_a_dead_process():
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        child.wait()  # reaped: its pid names no process of ours now
        with pytest.raises(ProcessLookupError):
            os.kill(child.pid, 0)
    ```
    Use a number no OS can allocate, or pin the probe that asks about it.

    ## Off by default
    Turn it on with `--extend-select=HRM205` (or `extend-select` in the
    config). On the held-out half of the suites it was measured on and never
    tuned against (docs/precision.md), 1 of 23 of its findings were hazards
    a maintainer would fix (4%), under the 80% a default-on rule must reach:
    a pid literal was mostly data (a dict key, a status field, a flag) that
    never reaches `kill` or `waitpid`, or the OS call was patched in every
    test that reaches it. Since then it follows the value (below): a
    literal is flagged only where it reaches the OS.

    ## Options
    None.

    A literal handed to a call that is replaced at that point reaches no
    OS and is left alone: inside `with mock.patch("os.kill"):` (or
    `patch.object(os, "kill")`), after `monkeypatch.setattr(os, "kill", ...)`
    in the same function or one around it, and in a function decorated with
    `@mock.patch("os.kill")` or with a decorator of the file seen patching it.

    A patch made in the class's `setUp`/`setup_method` (`mock.patch("os.kill").start()`)
    holds for every test of the class: their literals are left alone.

    ## Known problems
    A patch made in a fixture or a base class is not seen, and the
    literal is still flagged. A pid handed to the code under test, which
    then signals or probes it, is not followed there and is missed.
    """

    code = "HRM205"
    default_on = False
    message = "pid {pid} can name a live process on a long-running host; use a number no OS allocates (99999999999) or pin the liveness probe"
    # the pid calls, and the patch calls that may replace one (see patch_target)
    calls = PID_CALLS | {"patch", "*.patch"}  # mock.patch.object and monkeypatch.setattr are methods
    methods = PATCHER_NAMES

    principles = ("follow-the-value",)

    __slots__ = ("_patcher_ids", "_patcher_names", "_reported")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        # per pid call: the functions seen patching it, by node and by name (a decorator names them)
        self._patcher_ids: dict[str, set[int]] = {}
        self._patcher_names: dict[str, set[str]] = {}
        self._reported: set[int] = set()  # a literal two calls receive is one finding

    def _note_patch(self, call: ast.Call) -> None:
        target = replaced_pid_call(patch_target(self.ctx, call))
        if target is None:
            return
        # a `with patch(...)` replaces the call in its body only (see mocked_here)
        in_with = isinstance(self.ctx.parent, ast.withitem)
        scopes = self.ctx.scopes
        for index, scope in enumerate(scopes):
            if scope.kind == "function" and scope.name in SETUP_NAMES and index and scopes[index - 1].kind == "class":
                # setUp patches the call for every test of its class
                self._patcher_ids.setdefault(target, set()).add(id(scopes[index - 1].node))
            if scope.kind == "function":
                if not in_with:
                    self._patcher_ids.setdefault(target, set()).add(id(scope.node))
                self._patcher_names.setdefault(target, set()).add(scope.name)

    def _patched(self, node: ast.Call, target: str) -> bool:
        """The call is replaced around this point: by a decorator of an
        enclosing def or class or a ``with`` patch around it, patched earlier
        in its function (:func:`mocked_here`), patched earlier in a function
        around it, or by a decorator of the file seen patching it."""
        if mocked_here(self.ctx, node, lambda patched: replaced_pid_call(patched) == target):
            return True
        ids = self._patcher_ids.get(target, set())
        names = self._patcher_names.get(target, set())
        for scope in self.ctx.scopes:
            if id(scope.node) in ids:
                return True
            if scope.kind != "function":
                continue
            for decorator in scope.node.decorator_list:  # type: ignore[attr-defined]
                base = decorator.func if isinstance(decorator, ast.Call) else decorator
                if (dotted_name(base) or "").rpartition(".")[2] in names:
                    return True
        return False

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        self._note_patch(node)
        name = self.ctx.call_name(node)
        if name not in PID_CALLS:
            return
        argument = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pid"), None)
        if argument is None or self._patched(node, name):  # type: ignore[arg-type]
            return
        # follow the value: the literal itself, or one the function's variables carry here
        index = self.ctx.per_function(self.ctx.tree, flow_index, names=False)
        for literal in index.sources(argument, self.ctx.resolve):
            pid = allocatable_pid(literal)
            if pid is not None and id(literal) not in self._reported:
                self._reported.add(id(literal))
                yield self.report(literal, pid=pid)
