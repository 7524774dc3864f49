"""Which watched directories had an entry added, removed or renamed since the last look.

On Linux the kernel says so: one ``inotify`` instance per guarded process
watches the few directories the residue watches list (the temp dir, the
checkout's top level and test paths, the home directory), and one
non-blocking ``read`` per look answers "nothing moved" without a ``stat``
of each directory, and without the timestamp-granularity window during
which an unchanged ``mtime`` cannot be trusted. Changes made by child
processes and by other xdist workers are seen too (inotify watches the
directory, not the writer).

``inotify`` is three libc calls, made through ``ctypes`` (standard
library). Where it is missing (another OS, no libc, the per-user limit
of instances or watches reached) :meth:`Notifier.add` says no and the
residue watch falls back to comparing the directory's ``mtime``.
"""

from __future__ import annotations

import os
import select
import struct
import sys
from collections.abc import Collection
from typing import Any

IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
MASK = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
# the watch no longer follows the path: fall back to the mtime for that directory
LOST = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED
HEADER = struct.Struct("iIII")  # wd, mask, cookie, len of the name that follows
BUFFER = 65536
# Closing an instance that has held watches waits for the kernel (5-20 ms on
# the machine measured: it synchronises with readers of the marks), so a
# finished session removes its watches and leaves its instance here for the
# next session of the process (a pytester run in-process), never closing it.
_FREE: list[int] = []
_LIBC: list[Any] = []  # loaded once: [libc or None]
# A forked child shares the parent's descriptors: it must not take the parent's
# events. The fork empties ``_GENERATION`` in the child: a notifier made before
# the fork finds its generation gone and stops answering (``forget``), and one
# made in the child starts a new generation. The at-fork callables are the
# lists' own built-in ``clear``, not a function of this module: the interpreter
# keeps them until after it has torn its modules down, and a function would
# keep this module's globals, and the modules they import, alive through that
# teardown (measured: 60-80 ms more at the exit of a guarded run of markdown's
# suite, whatever the run did).
_GENERATION: list[object] = []
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_FREE.clear)
    os.register_at_fork(after_in_child=_GENERATION.clear)


def _generation() -> object:
    if not _GENERATION:
        _GENERATION.append(object())
    return _GENERATION[0]


def _libc() -> Any:
    if not _LIBC:
        _LIBC.append(_load_libc())
    return _LIBC[0]


def _load_libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    for name in (None, "libc.so.6"):  # the interpreter's own symbols first (no ldconfig run)
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            libc.inotify_init1.argtypes = [ctypes.c_int]
            libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
            return libc
        except (OSError, AttributeError):  # no libc, or one without inotify
            continue
    return None


class Notifier:
    """One inotify instance; ``add`` a directory, then ask ``changed``; ``close`` at the end."""

    def __init__(self) -> None:
        self.fd = -1
        self.libc = _libc()
        self.by_wd: dict[int, str] = {}
        self.watched: set[str] = set()  # directories the kernel watches for us
        self.moved: set[str] = set()  # directories with an event not yet handed out
        self.reads = 0  # how many times the events were read (see ``look``)
        self.served: dict[str, int] = {}  # asker -> ``reads`` when it was last answered
        self.generation = _generation()
        if self.libc is None:
            return
        fd = _FREE.pop() if _FREE else self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd >= 0:
            self.fd = fd
            self.poller = select.poll()
            self.poller.register(fd, select.POLLIN)
            self._drain()  # a reused instance: the previous session's last events (unknown watches)
            self.moved.clear()

    def add(self, directory: str) -> bool:
        """Watch ``directory``; False where it cannot be watched (use its mtime)."""
        if self.fd < 0 or self._forked():
            return False
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(directory), MASK)
        if wd < 0:
            return False
        self.by_wd[wd] = directory
        self.watched.add(directory)
        return True

    def look(self) -> None:
        """Read the events waiting (one ``poll``, and a ``read`` only when one is
        there). The monitor calls it once at the start of each look, before any
        watch answers, so every watch of a look is answered from the same
        reading: a change made before the look is handed out in it, whatever
        the order the watches ask in, and whichever tests ran before."""
        if self.fd < 0:
            return
        if not _GENERATION or _GENERATION[0] is not self.generation:  # ``_forked``, inline: called every look
            self.forget()
            return
        self.reads += 1
        if self.poller.poll(0):  # cheaper than the read that raises EAGAIN
            self._drain()

    def changed(self, asker: str, directories: Collection[str]) -> set[str]:
        """Which of ``directories`` moved since ``asker`` last asked about them.

        Answered from the last reading (:meth:`look`); an asker that was
        answered from that reading already (nobody looked since: a watch
        asked on its own, outside a look) reads the events first."""
        if self.fd >= 0:
            if not _GENERATION or _GENERATION[0] is not self.generation:  # ``_forked``, inline: asked every look
                self.forget()
            elif self.served.get(asker) == self.reads:
                self.look()
            self.served[asker] = self.reads
        if not self.moved:
            return self.moved
        found = self.moved.intersection(directories)
        self.moved -= found
        return found

    def moved_in(self, directories: Collection[str]) -> set[str]:
        """Which of ``directories`` moved, from the last reading (no read: the
        caller made sure one was made since it last asked, see ``Residue.take``)."""
        if not self.moved:
            return self.moved
        found = self.moved.intersection(directories)
        self.moved -= found
        return found

    def _forked(self) -> bool:
        """Made in the parent of this forked process: its descriptor is the parent's."""
        return not _GENERATION or _GENERATION[0] is not self.generation

    def _ask(self, asker: str) -> None:
        if self.fd >= 0 and self.served.get(asker) == self.reads:
            self.look()
        self.served[asker] = self.reads

    def quiet(self, asker: str) -> bool:
        """No event is waiting, for anyone: what :meth:`changed` would say
        for every directory (read as :meth:`changed` reads)."""
        if self.fd < 0:
            return False
        if self._forked():
            self.forget()
            return False
        self._ask(asker)
        return not self.moved

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, BUFFER)
            except BlockingIOError:
                return
            except OSError:  # the instance is unusable: every directory goes back to its mtime
                self.forget()
                return
            self._parse(data)
            if len(data) < BUFFER - 4096:  # far from full: the queue was emptied (spare the EAGAIN read)
                return

    def _parse(self, data: bytes) -> None:
        offset = 0
        while offset + HEADER.size <= len(data):
            wd, mask, _, length = HEADER.unpack_from(data, offset)
            offset += HEADER.size + length
            if mask & IN_Q_OVERFLOW:  # events were lost: every directory may have moved
                self.moved.update(self.by_wd.values())
                continue
            directory = self.by_wd.get(wd)
            if directory is None:
                continue
            self.moved.add(directory)
            if mask & LOST:
                self.watched.discard(directory)

    def forget(self) -> None:
        """Stop answering (a forked child, a broken instance): callers use the mtime."""
        self.moved.update(self.watched)
        self.watched = set()
        self.fd = -1

    def close(self) -> None:
        """Remove the watches; the instance waits in ``_FREE`` for the next session."""
        fd, self.fd = self.fd, -1
        self.watched = set()
        if fd < 0:
            return
        for wd in self.by_wd:
            self.libc.inotify_rm_watch(fd, wd)
        self.by_wd = {}
        _FREE.append(fd)
