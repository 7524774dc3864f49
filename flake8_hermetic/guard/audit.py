"""Which new entries of a shared directory this process wrote (under xdist).

The checkout and the home directory are shared by every xdist worker: a
listing shows a new entry to each of them, whichever wrote it. An audit
hook (``sys.addaudithook``, installed only on xdist workers) notes the
entries this process creates in the watched directories, so the controller
can give the entry to the test that wrote it. A child process's writes are
not seen here: those are attributed by time (see ``docs/guard.md``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT
_PATH_EVENTS = {"os.mkdir": 0, "os.rename": 1, "os.symlink": 1, "os.link": 1, "shutil.copytree": 1}


class Writes:
    """Absolute paths of the entries written directly under ``directories`` since ``reset``."""

    def __init__(self) -> None:
        self.directories: frozenset[str] = frozenset()
        self.seen: set[str] = set()
        self.on = False
        self.installed = False

    def install(self, directories: Collection[str]) -> None:
        self.directories = frozenset(os.path.abspath(d) for d in directories)
        self.on = True
        if not self.installed:
            sys.addaudithook(self._hook)  # cannot be removed: ``on`` turns it off
            self.installed = True

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
        if event == "open":
            if len(args) > 2 and isinstance(args[2], int) and args[2] & _WRITE_FLAGS:
                self._note(args[0])
            return
        position = _PATH_EVENTS.get(event)
        if position is not None and len(args) > position:
            self._note(args[position])


WRITES = Writes()
