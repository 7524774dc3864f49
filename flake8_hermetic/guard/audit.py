"""What the guarded process does that a snapshot would have to pay to see.

One audit hook (``sys.addaudithook``; it cannot be removed, so ``on``
turns it off at the end of the session) notes:

- that a child process was started through Python (``subprocess``,
  ``os.fork``, ``os.posix_spawn``, ``os.system`` ...), so the children
  watch reads ``/proc`` only when one may exist;
- on xdist workers, the entries this process creates in the shared
  directories (the checkout, the home directory). A listing shows a new
  entry there to every worker, whichever wrote it; the controller gives it
  to the test that wrote it. A child process's writes are not seen here:
  those are attributed by time (see ``docs/guard.md``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT
_PATH_EVENTS = {"os.mkdir": 0, "os.rename": 1, "os.symlink": 1, "os.link": 1, "shutil.copytree": 1}
_SPAWN_EVENTS = frozenset({
    "subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system", "os.exec",
    "pty.spawn", "os.startfile",
})


class Audit:
    def __init__(self) -> None:
        self.directories: frozenset[str] = frozenset()
        self.seen: set[str] = set()  # absolute paths written directly under ``directories`` since ``reset``
        self.spawned = True
        self.on = False
        self.installed = False

    def install(self, directories: Collection[str] = ()) -> tuple[frozenset[str], bool]:
        """Turn the hook on; returns what :meth:`restore` puts back (a guarded
        session inside a guarded session, as an in-process ``pytester`` run is)."""
        previous = (self.directories, self.on)
        self.directories = frozenset(os.path.abspath(d) for d in directories)
        self.on = True
        self.spawned = True
        if not self.installed:
            sys.addaudithook(self._hook)
            self.installed = True
        return previous

    def restore(self, previous: tuple[frozenset[str], bool]) -> None:
        self.directories, self.on = previous
        self.spawned = True

    def reset(self) -> None:
        self.seen = set()

    def _note(self, path: Any) -> None:
        if isinstance(path, int):
            return
        try:
            absolute = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError, OSError):
            return
        if os.path.dirname(absolute) in self.directories:
            self.seen.add(absolute)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.on:
            return
        if event in _SPAWN_EVENTS:
            self.spawned = True
            return
        if not self.directories:
            return
        if event == "open":
            if len(args) > 2 and isinstance(args[2], int) and args[2] & _WRITE_FLAGS:
                self._note(args[0])
            return
        position = _PATH_EVENTS.get(event)
        if position is not None and len(args) > position:
            self._note(args[position])


AUDIT = Audit()
