"""This process's child processes: ``/proc`` where it lists children, ``psutil`` otherwise.

``/proc/<pid>/task/<tid>/children`` names a process's direct children in
one read per thread, so a check costs a few reads whatever the host runs
(``psutil.Process.children()`` reads every process's ``stat`` to build a
parent map, and is the fallback where there is no ``/proc``, or ``/proc``
without the children files).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

Child = tuple[int, str]  # (pid, start time): a pid reused by another process is another child


def _proc_children(pid: int) -> Iterator[int]:
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                listed = handle.read()
        except OSError:
            continue
        for word in listed.split():
            yield int(word)


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
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
                continue
            found.add((child, stat[1]))
            pending.append(child)
    return frozenset(found)


def _psutil_running(root: int) -> frozenset[Child]:
    import psutil  # type: ignore[import-untyped]

    found: set[Child] = set()
    try:
        children = psutil.Process(root).children(recursive=True)
    except psutil.Error:
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
    return os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def watchable() -> bool:
    """Can this process's children be listed here (``/proc``'s children files, or ``psutil``)?"""
    if _has_proc_children():
        return True
    try:
        import psutil  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


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
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")
        name = argv[0].decode("utf-8", "replace")
    except (OSError, IndexError):
        try:
            import psutil  # type: ignore[import-untyped]

            name = (psutil.Process(pid).cmdline() or ["?"])[0]
        except Exception:  # noqa: BLE001 - gone, denied, or no psutil: the name is only a label
            return "?"
    return os.path.basename(name) or "?"
