"""HRM301: ``os.kill(pid, 0)`` as a liveness probe, which kills on Windows."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


class KillZeroProbeRule(Rule):
    """
    Flags `os.kill(pid, 0)` in a test file: a liveness probe that kills on Windows.

    ## Why is this bad?
    On POSIX, signal 0 is "check that the process exists and that I may
    signal it"; nothing is delivered. Windows has no signals: its
    `os.kill(pid, sig)` with any value other than the two console events
    calls `TerminateProcess(pid, sig)`. The probe meant to ask whether a
    process is alive ends it, with exit code 0, and the test goes on to
    assert against a process it has just destroyed (or one that belongs to
    someone else).

    ## Example
    ```python
    def test_daemon_survives_reload(daemon):
        daemon.reload()
        os.kill(daemon.pid, 0)
    ```

    ## Use instead
    ```python
    def test_daemon_survives_reload(daemon):
        daemon.reload()
        assert psutil.pid_exists(daemon.pid)
    ```
    Or route the probe through one platform helper that uses `kill(pid, 0)`
    on POSIX and `OpenProcess` on Windows.

    ## Off by default
    Turn it on with `--extend-select=HRM301` (or `extend-select` in the
    config). On the suites held out from tuning (docs/precision.md), 0 of 1
    of its findings were hazards a maintainer would fix; a default-on rule
    must reach 80%, and the default set 90% overall: the one finding was
    `os.kill(pid, 0)` in a class skipped off POSIX, in a library that does
    not support Windows at all. It would need the project's supported
    platforms.

    ## Options
    None.

    ## Known problems
    Only a literal `0` given as the signal is read: `os.kill(pid, SIG)` with a
    name bound to 0 is not seen. A probe the test runs only on POSIX (under
    `if os.name != "nt":` or a platform skip) is still flagged: silence the
    line, or use `psutil.pid_exists`.
    """

    code = "HRM301"
    default_on = False
    message = "os.kill(pid, 0) terminates the process on Windows instead of probing it; use psutil.pid_exists(pid) or a platform helper"
    calls = frozenset({"os.kill"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if len(node.args) < 2 or self.ctx.call_name(node) != "os.kill":
            return
        signal = node.args[1]
        if isinstance(signal, ast.Constant) and type(signal.value) is int and signal.value == 0:
            yield self.report(node)
