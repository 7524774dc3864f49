"""This process's child processes: ``/proc`` where it lists children, ``psutil`` otherwise.

``/proc/<pid>/task/<tid>/children`` names a process's direct children in
one read per thread, so a check costs a few reads whatever the host runs
(``psutil.Process.children()`` reads every process's ``stat`` to build a
parent map, and is the fallback where there is no ``/proc``, or ``/proc``
without the children files). A ``psutil`` that cannot list them either
(Linux without ``/proc`` mounted) is said to be blind, not taken for "no
child" (:func:`unwatched_notice`).

On Linux the guarded process is made a child subreaper
(:func:`keep_orphans`): a grandchild whose parent exited stays among its
descendants instead of going to init.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator

Child = tuple[int, str]  # (pid, start time): a pid reused by another process is another child

PROC = "/proc"  # where the kernel's process files are (a test points it elsewhere to play a host without them)

# the notices a run prints when it cannot look (see :func:`unwatched_notice`)
PSUTIL_BLIND = ("hermetic guard: child processes (HRM612) are not watched here: no /proc children files, "
                "and psutil cannot list them either (no /proc mounted?)")


def _proc_children(pid: int) -> Iterator[int]:
    for task in os.listdir(f"{PROC}/{pid}/task"):
        try:
            with open(f"{PROC}/{pid}/task/{task}/children", "rb") as handle:
                listed = handle.read()
        except OSError:
            continue
        for word in listed.split():
            yield int(word)


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of ``pid``, or None when it is gone."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    return fields[0], fields[19]


def _proc_running(root: int) -> frozenset[Child]:
    found: set[Child] = set()
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            children = list(_proc_children(pid))
        except OSError:
            continue
        for child in children:
            stat = _proc_stat(child)
            if stat is None or stat[0] in ("Z", "X"):  # exited, not yet reaped: not running
                if stat is not None and pid == root and (child, stat[1]) in _ORPHANS:
                    _reap(child, stat[1])
                continue
            found.add((child, stat[1]))
            if pid != root and _SUBREAPER:  # a grandchild: if its parent exits, it is ours to reap
                _ORPHANS.add((child, stat[1]))
            pending.append(child)
    return frozenset(found)


# -- orphans: this process as their subreaper -----------------------------------------------------------
# A grandchild whose parent exited (a double fork, a daemon) is reparented
# to the nearest ancestor marked a "child subreaper" (Linux), else to init.
# The guard marks the process it guards, so an orphan stays among its
# descendants, where the children watch sees it. An orphan that exits is
# then this process's to reap: no one else waits for it. Only a process
# seen as a grandchild before is reaped (a child of the process's own,
# which a ``Popen`` may be about to wait for, never is).

_SUBREAPER = False
_ORPHANS: set[Child] = set()  # descendants seen below a child of this process: reparented to it if orphaned
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


def _reap(pid: int, start: str) -> None:
    _ORPHANS.discard((pid, start))
    try:
        os.waitpid(pid, os.WNOHANG)
    except OSError:
        pass


def _subreaper_setting() -> tuple[Callable[..., int], int] | None:
    """Linux's ``prctl`` and this process's child-subreaper setting, or None
    where there is no such setting (another system, no ``ctypes``, refused)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        answer = ctypes.c_int(0)
        if prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(answer), 0, 0, 0) != 0:
            return None
    except (OSError, AttributeError, ImportError):
        return None
    return prctl, answer.value


def can_keep_orphans() -> bool:
    """Whether this kernel has child subreapers (asked without setting one)."""
    return _subreaper_setting() is not None


def keep_orphans() -> Callable[[], None]:
    """Make this process a child subreaper (Linux ``prctl``), so its orphaned
    descendants stay its own; returns what puts the previous setting back.
    Elsewhere (or refused) it does nothing: an orphan goes to init, unseen."""
    global _SUBREAPER

    def nothing() -> None:
        return None

    found = _subreaper_setting()
    if found is None:
        return nothing
    prctl, previous = found
    if prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return nothing
    _SUBREAPER = True

    def put_back() -> None:
        global _SUBREAPER
        _SUBREAPER = bool(previous)  # a guarded run inside a guarded run: the outer one's again
        if not _SUBREAPER:
            _ORPHANS.clear()
        prctl(PR_SET_CHILD_SUBREAPER, previous, 0, 0, 0)

    return put_back


def _psutil_running(root: int) -> frozenset[Child]:
    import psutil  # type: ignore[import-untyped]

    found: set[Child] = set()
    try:
        children = psutil.Process(root).children(recursive=True)
    except (psutil.Error, OSError):  # this process exists: psutil cannot see (no /proc for it either)
        _PSUTIL[0] = False
        return frozenset()
    for child in children:
        try:
            if child.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                continue
            found.add((child.pid, repr(child.create_time())))
        except psutil.Error:
            continue
    return frozenset(found)


def _has_proc_children() -> bool:
    return os.path.exists(f"{PROC}/{os.getpid()}/task/{os.getpid()}/children")


# whether psutil lists this process's children here: None until asked (it
# reads /proc on Linux, so a host without /proc leaves it as blind as us)
_PSUTIL: list[bool | None] = [None]


def _psutil_state() -> bool | None:
    """True when psutil lists children here, False when it is installed and cannot, None when it is absent."""
    try:
        import psutil  # type: ignore[import-untyped]
    except ImportError:
        return None
    if _PSUTIL[0] is None:
        try:
            psutil.Process(os.getpid()).children()
            _PSUTIL[0] = True
        except (psutil.Error, OSError):
            _PSUTIL[0] = False
    return _PSUTIL[0]


def unwatched_notice(no_psutil: str) -> str | None:
    """The line a run prints when children could not be listed (``no_psutil`` when psutil is absent), else None."""
    if _has_proc_children():
        return None
    state = _psutil_state()
    if state:
        return None
    return no_psutil if state is None else PSUTIL_BLIND


_NO_WAIT_FLAGS = getattr(os, "WEXITED", 0) | getattr(os, "WNOHANG", 0) | getattr(os, "WNOWAIT", 0)


def kernel_counts_children() -> bool:
    """Can this process ask the kernel, in one call, whether it has any child (``os.waitid``)?"""
    return hasattr(os, "waitid") and hasattr(os, "P_ALL") and hasattr(os, "WNOWAIT") and hasattr(os, "WNOHANG")


def may_have_children() -> bool:
    """False only when the kernel says this process has no child at all, running or exited.

    ``waitid(P_ALL, WEXITED | WNOHANG | WNOWAIT)`` neither blocks nor reaps:
    it fails with ``ECHILD`` when there is no child (the common case after a
    test, and a single system call), and otherwise leaves every child as it
    was for its owner to wait on. A process with no child has no running
    descendant either: an orphaned grandchild belongs to another reaper."""
    try:
        os.waitid(os.P_ALL, 0, _NO_WAIT_FLAGS)
    except ChildProcessError:
        return False
    except OSError:  # cannot tell: look
        return True
    return True


def running_children(root: int | None = None) -> frozenset[Child]:
    """The descendants of ``root`` (this process) that are still running."""
    root = os.getpid() if root is None else root
    if _has_proc_children():
        return _proc_running(root)
    try:
        return _psutil_running(root)
    except ImportError:
        return frozenset()


def program(pid: int) -> str:
    """The program a child runs (the base name of its argv[0]), or ``?``."""
    argv = command_line(pid)
    return (os.path.basename(argv[0]) or "?") if argv else "?"


def command_line(pid: int) -> list[str]:
    """The argv of ``pid`` (empty when it is gone or cannot be read)."""
    try:
        with open(f"{PROC}/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")
        if argv and not argv[-1]:
            argv.pop()
        return [arg.decode("utf-8", "replace") for arg in argv]
    except OSError:
        try:
            import psutil  # type: ignore[import-untyped]

            return list(psutil.Process(pid).cmdline())
        except Exception:  # noqa: BLE001 - gone, denied, or no psutil: the name is only a label
            return []
