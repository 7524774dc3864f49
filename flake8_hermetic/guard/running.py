"""What keeps running after a test: threads, child processes, listening
sockets and pending asyncio tasks.

None of it is stopped by the guard (``restorable`` is false): what is
reported is adopted into the expected state. Threads and children get one
grace period, from the end of the test, to finish; the process-wide helpers
(:mod:`~flake8_hermetic.guard.helpers`) are not waited for, and are either
accepted or reported once, against the session.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from flake8_hermetic.guard import processes
from flake8_hermetic.guard.audit import AUDIT
from flake8_hermetic.guard.helpers import Helpers
from flake8_hermetic.guard.stable import label, stable
from flake8_hermetic.guard.watchbase import Roots, SetWatch, State, Watch


def _thread_label(thread: threading.Thread) -> str:
    target = getattr(thread, "_target", None)
    if target is not None:
        owner = getattr(target, "__module__", None) or ""
        name = getattr(target, "__qualname__", None) or type(target).__qualname__
        return label(f"{owner}.{name}" if owner else name)
    if type(thread) is not threading.Thread:
        return label(f"{type(thread).__module__}.{type(thread).__qualname__}")
    return stable(thread.name)


# threading's own registries (ident -> thread; threads being started): when both
# are as they were at the last look, no thread started or ended since, and the
# list ``threading.enumerate()`` would build under its lock is not built
_ACTIVE: dict[Any, threading.Thread] | None = getattr(threading, "_active", None)
_LIMBO: dict[Any, threading.Thread] | None = getattr(threading, "_limbo", None)
if not isinstance(_ACTIVE, dict) or not isinstance(_LIMBO, dict):  # pragma: no cover - another implementation
    _ACTIVE = _LIMBO = None


class Threads(SetWatch):
    """Threads still alive, less the process-wide helpers (see :mod:`~flake8_hermetic.guard.helpers`):
    accepted ones (built in, or named in ``hermetic_guard_helpers``) are not reported, shared
    ones (a thread pool's workers) are reported once, against the session; neither is waited
    for during the grace period. Without ``helpers``, only the built-in ones are accepted."""

    kind = "threads"
    restorable = False

    def __init__(self, grace: float, helpers: Helpers | None = None) -> None:
        self.grace = grace
        self.helpers = helpers if helpers is not None else Helpers()
        self.listed: list[threading.Thread] = []
        self.last: frozenset[threading.Thread] = frozenset()
        self.active: dict[Any, threading.Thread] | None = None  # ``_ACTIVE`` as it was at the last look

    def take(self) -> frozenset[threading.Thread]:
        if _ACTIVE is not None:
            if not _LIMBO and _ACTIVE == self.active:
                return self.last
            self.active = dict(_ACTIVE)
        listed = threading.enumerate()
        if listed != self.listed:  # Thread compares by identity: the same threads, in the same order
            self.listed = listed
            self.last = frozenset(t for t in listed if not isinstance(t, threading._DummyThread))
        return self.last

    def _helper(self, thread: threading.Thread) -> bool:
        target = _thread_label(thread)
        return self.helpers.accepts(thread.name, target) or self.helpers.shared_thread(target)

    def settle(self, expected: frozenset[threading.Thread], current: frozenset[threading.Thread],
               ended: float | None = None) -> State:
        """The new threads still alive after the grace period (a bounded wait on each, helpers aside).

        The period runs from ``ended`` (``time.monotonic()`` when the test
        ended; now if not given), shared with the other watches that wait."""
        fresh = [thread for thread in current - expected if not self._helper(thread)]
        if not fresh:
            return current
        deadline = (time.monotonic() if ended is None else ended) + self.grace
        for thread in fresh:
            thread.join(max(0.0, deadline - time.monotonic()))
        return frozenset(t for t in current if t.is_alive())

    def leaks(self, expected: frozenset[threading.Thread], current: frozenset[threading.Thread]) -> list[str]:
        found = []
        for thread in current - expected:
            if not thread.is_alive():
                continue
            target = _thread_label(thread)
            if self.helpers.accepts(thread.name, target):
                continue
            if self.helpers.shared_thread(target):
                self.helpers.home(self.kind, target)
                continue
            found.append(target)
        return sorted(found)


class Children(SetWatch):
    """Child processes still running, less the accepted process-wide helpers
    (multiprocessing's resource tracker and forkserver, and those named in
    ``hermetic_guard_helpers``); orphaned descendants are kept as this
    process's own where Linux allows it (see
    :func:`flake8_hermetic.guard.processes.keep_orphans`).

    Listing them reads ``/proc`` (or asks ``psutil``), so it is done only
    when one may exist: the kernel says the process has a child
    (``os.waitid``), or, where it cannot be asked, the audit hook saw one
    started through Python since the last look."""

    kind = "children"
    restorable = False

    def __init__(self, grace: float, helpers: Helpers | None = None) -> None:
        self.grace = grace
        self.helpers = helpers if helpers is not None else Helpers()
        self.last: frozenset[processes.Child] = frozenset()
        self.ask_kernel = processes.kernel_counts_children()

    def take(self) -> frozenset[processes.Child]:
        if not self.last:  # none running at the last look
            if self.ask_kernel:
                if not processes.may_have_children():
                    return self.last
            elif AUDIT.counting and not AUDIT.spawned:
                return self.last
        AUDIT.spawned = False
        self.last = processes.running_children()
        return self.last

    def _accepted(self, child: processes.Child) -> bool:
        return bool(self.helpers.accepts_child(child, lambda: _command(child[0])))

    def settle(self, expected: frozenset[processes.Child], current: frozenset[processes.Child],
               ended: float | None = None) -> State:
        """A child that is exiting gets the grace period too (a poll with a deadline),
        the same period as the threads': from ``ended``, when the test ended. Accepted
        helpers are not waited for (asked at each poll: a child just forked still has
        its parent's command line until it execs)."""
        deadline = (time.monotonic() if ended is None else ended) + self.grace
        while any(not self._accepted(c) for c in current - expected) and time.monotonic() < deadline:
            time.sleep(0.01)
            current = processes.running_children()
        self.last = current
        return current

    def leaks(self, expected: frozenset[processes.Child], current: frozenset[processes.Child]) -> list[str]:
        return sorted(_program_label(child[0]) for child in current - expected if not self._accepted(child))


def _program_label(pid: int) -> str:
    name = processes.program(pid)
    if name.startswith("python"):
        return "python"
    return stable(name)


def _command(pid: int) -> tuple[str, str]:
    argv = processes.command_line(pid)
    return (os.path.basename(argv[0]) if argv else "", " ".join(argv))


# -- listening sockets, pending asyncio tasks (see flake8_hermetic/guard/sockets.py and tasks.py) ------------


class ListeningSockets(SetWatch):
    """Sockets of this process that listen (TCP, unix) or hold a fixed port (UDP).

    A look is one ``stat`` when the number of descriptors did not move (see
    :mod:`flake8_hermetic.guard.sockets`); a socket is not closed by the guard
    (another test may use it), it is adopted once reported."""

    kind = "sockets"
    restorable = False

    def __init__(self, roots: Roots) -> None:
        from flake8_hermetic.guard import sockets

        self.sockets = sockets
        self.roots = roots
        self.proc = sockets.has_proc()
        self.count = sockets.descriptor_counter()
        self.ephemeral = sockets.ephemeral_ports()
        self.seen = -2  # the number of descriptors at the last reading
        self.inodes: frozenset[int] = frozenset()
        self.last: frozenset[tuple[int, str]] = frozenset()

    def _path(self, path: str) -> str:
        return stable(path) if path.startswith("@") else self.roots(path)

    def take(self) -> frozenset[tuple[int, str]]:
        count = self.count
        if count is None:
            return self.last
        try:
            now = count()
        except Exception:  # noqa: BLE001 - psutil's answer where there is no /proc: look the next time
            now = -1
        if now == self.seen and now >= 0:
            return self.last
        self.seen = now
        if not self.proc:
            found = frozenset(self.sockets.listening_psutil(self.ephemeral, self._path))
        else:
            inodes = self.sockets.socket_inodes()
            if inodes == self.inodes:
                return self.last
            self.inodes = inodes
            found = frozenset(self.sockets.listening(inodes, self.ephemeral, self._path))
        if found != self.last:  # an equal set keeps the old object: the look tests identity first
            self.last = found
        return self.last

    def leaks(self, expected: frozenset[tuple[int, str]], current: frozenset[tuple[int, str]]) -> list[str]:
        return sorted(what for _, what in current - expected)


class PendingTasks(Watch):
    """Asyncio tasks found pending when their loop closed (see :mod:`flake8_hermetic.guard.tasks`):
    the state is how many were found so far, one ``len`` a look."""

    kind = "tasks"
    restorable = False

    def __init__(self) -> None:
        from flake8_hermetic.guard import tasks

        self.tasks = tasks
        self.found = tasks.FOUND

    def take(self) -> int:
        if not self.tasks._ORIGINAL and "asyncio" in sys.modules:
            self.tasks.install()
        return len(self.found)

    def leaks(self, expected: int, current: int) -> list[str]:
        return list(self.found[expected:current]) if current > expected else []
