"""HRM205: a literal process id that a real host can hand out."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.mocks import mocked_here, patch_target
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.determinism.signals import SuppliedSignals
from flake8_hermetic.rules.determinism.trees import assigned_pairs
from flake8_hermetic.violation import Violation

PID_CALLS = frozenset({"os.kill", "os.killpg", "os.waitpid", "psutil.Process", "psutil.pid_exists"})
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


#: calls that turn what they are given into text or bytes: a pid inside reaches no OS
RENDERING_CALLS = frozenset(
    {"repr", "str", "format", "print", "pickle.dumps", "json.dumps", "marshal.dumps", "copy.copy", "copy.deepcopy"}
)
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

    Flagged: such a literal as the pid argument of `os.kill`, `os.killpg`,
    `os.waitpid`, `psutil.Process`, `psutil.pid_exists`, as a `pid=`
    keyword of any call, or assigned to a name whose words include `pid`
    (`pid`, `child_pid`, `self.fakePid`). 0, 1 and negative numbers have
    fixed meanings and are not flagged.

    ## Example
    ```python
    def test_reaper_ignores_dead_owner(store):
        store.lock(owner_pid=999999)
        assert store.reap() == 1
    ```

    ## Use instead
    ```python
    NO_SUCH_PID = 99999999999  # above any pid_max: no OS can allocate it

    def test_reaper_ignores_dead_owner(store, monkeypatch):
        monkeypatch.setattr(store, "pid_alive", lambda pid: False)
        store.lock(owner_pid=NO_SUCH_PID)
        assert store.reap() == 1
    ```
    Use a number no OS can allocate, or pin the probe that asks about it.

    ## Off by default
    Turn it on with `--extend-select=HRM205` (or `extend-select` in the
    config). On the held-out half of the suites it was measured on and never
    tuned against (docs/precision.md), 1 of 23 of its findings were hazards
    a maintainer would fix (4%), under the 80% a default-on rule must reach:
    a pid literal was mostly data (a dict key, a status field, a flag) that
    never reaches `kill` or `waitpid`, or the OS call was patched in every
    test that reaches it. It would need to follow the value into the code
    under test.

    ## Options
    None.

    A literal handed to a call that is replaced at that point reaches no
    OS and is left alone: inside `with mock.patch("os.kill"):` (or
    `patch.object(os, "kill")`), after `monkeypatch.setattr(os, "kill", ...)`
    in the same function or one around it, and in a function decorated with
    `@mock.patch("os.kill")` or with a decorator of the file seen patching it.

    A patch made in the class's `setUp`/`setup_method` (`mock.patch("os.kill").start()`)
    holds for every test of the class: their literals are left alone.

    **A pid counts only where it can reach an OS call.** A literal that
    only becomes text or data reaches no process: a `pid=` of a record or
    exception rendered or serialised (inside `repr()`, `str()`,
    `pickle.dumps()`, an f-string, a `raise`), a value in a statement the
    test expects to fail (`pytest.raises`/`assertRaises`), or a
    `fake.pid = 123` on a mock the function made (`Mock()`,
    `with patch(...) as fake`).

    ## Known problems
    A patch made in a fixture or a base class is not seen, and the
    literal is still flagged.
    """

    code = "HRM205"
    default_on = False
    message = "pid {pid} can name a live process on a long-running host; use a number no OS allocates (99999999999) or pin the liveness probe"
    # the pid calls, and the patch calls that may replace one (see patch_target)
    calls = PID_CALLS | {"patch", "*.patch"}  # mock.patch.object and monkeypatch.setattr are methods
    methods = PATCHER_NAMES

    __slots__ = ("_patcher_ids", "_patcher_names")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        # per pid call: the functions seen patching it, by node and by name (a decorator names them)
        self._patcher_ids: dict[str, set[int]] = {}
        self._patcher_names: dict[str, set[str]] = {}

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

    def _reaches_no_os(self, node: ast.AST) -> bool:
        """The pid only becomes text or data (inside ``repr()``, ``str()``,
        ``pickle.dumps()``, an f-string, a ``raise``), or the statement is
        expected to fail (``pytest.raises``/``assertRaises``)."""
        for ancestor, _child in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.JoinedStr, ast.Raise)):
                return True
            if isinstance(ancestor, ast.Call) and self.ctx.call_name(ancestor) in RENDERING_CALLS:
                return True
        return self.ctx.expected_to_raise(node)

    def _on_a_mock(self, target: ast.expr) -> bool:
        """``fake.pid = 123`` where the function made ``fake`` a mock."""
        function = self.ctx.function
        if function is None or not isinstance(target, ast.Attribute):
            return False
        receiver = dotted_name(target.value)
        return receiver is not None and self.ctx.per_function(function, SuppliedSignals).is_mock(receiver)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        self._note_patch(node)
        name = self.ctx.call_name(node)
        if node.args and name in PID_CALLS:
            pid = allocatable_pid(node.args[0])
            if pid is not None and not self._patched(node, name):  # type: ignore[arg-type]
                yield self.report(node.args[0], pid=pid)

    def visit_keyword(self, node: ast.keyword) -> Iterator[Violation]:
        # ``pid=`` of any call (``Process(pid=1234)``, a helper's ``wait_for(pid=...)``)
        if node.arg == "pid" and isinstance(self.ctx.parent, ast.Call):
            pid = allocatable_pid(node.value)
            if pid is not None and not self._reaches_no_os(self.ctx.parent):
                yield self.report(node.value, pid=pid)

    def _assignment(self, node: ast.AST) -> Iterator[Violation]:
        for target, value in assigned_pairs(node):
            key = dotted_name(target)
            pid = allocatable_pid(value)
            if key is not None and pid is not None and is_pid_name(key.rpartition(".")[2]):
                if not self._on_a_mock(target) and not self.ctx.expected_to_raise(node):
                    yield self.report(value, pid=pid)

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        yield from self._assignment(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Iterator[Violation]:
        yield from self._assignment(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> Iterator[Violation]:
        yield from self._assignment(node)
