"""What an audit hook sees that a snapshot cannot: who wrote an entry, and that a child was started.

An audit hook (``sys.addaudithook``) is called for every audited event of
the process: a fast suite raises a hundred a test (``object.__getattr__``,
``exec``, ``builtins.id`` from pytest's own introspection), each a call
into Python. So the guard installs it only where it buys something a
snapshot cannot:

- on xdist workers, the entries this process creates in the shared
  directories (the checkout, the home directory). A listing shows a new
  entry there to every worker, whichever wrote it; the controller gives it
  to the test that wrote it. A child process's writes are not seen here:
  those are attributed by time (see ``docs/guard.md``);
- where a process cannot ask the kernel whether it has children at all
  (no ``os.waitid``: Windows), that a child was started through Python
  (``subprocess``, ``os.fork``, ``os.posix_spawn``, ``os.system`` ...), so
  the children watch lists processes only when one may exist.

Everything else (the environment, the working directory) is compared
directly, for a few hundred nanoseconds a test. The hook cannot be removed:
``on`` turns it off at the end of the session.
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
_SPAWN, _OPEN, _PATH, _PROBE = range(4)
PROBE = "flake8_hermetic.guard.probe"  # raised once after adding the hook: is it really called?
# the one lookup every audited event pays
_EVENTS = {
    **{event: _SPAWN for event in _SPAWN_EVENTS}, "open": _OPEN, **{event: _PATH for event in _PATH_EVENTS},
    PROBE: _PROBE,
}


class Audit:
    def __init__(self) -> None:
        self.directories: frozenset[str] = frozenset()
        self.seen: set[str] = set()  # absolute paths written directly under ``directories`` since ``reset``
        self.spawned = True
        self.on = False
        self.installed = False

    @property
    def counting(self) -> bool:
        """Whether ``spawned`` is set by every start of a child through Python (the hook is in and on)."""
        return self.installed and self.on

    def install(self, directories: Collection[str] = ()) -> tuple[frozenset[str], bool]:
        """Turn the hook on; returns what :meth:`restore` puts back (a guarded
        session inside a guarded session, as an in-process ``pytester`` run is)."""
        previous = (self.directories, self.on)
        self.directories = frozenset(os.path.abspath(d) for d in directories)
        self.on = True
        self.spawned = True
        if not self.installed:
            # another hook may refuse it (silently): then ``counting`` stays false and no one relies on it
            sys.addaudithook(_hook)
            sys.audit(PROBE)
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


AUDIT = Audit()


def _hook(event: str, args: tuple[Any, ...]) -> None:
    # a plain function, not a bound method: CPython looks up ``__cantrace__`` on
    # the hook for every audited event, and on a bound method that lookup raises
    # and clears an AttributeError (2-3 µs an event on the machine measured)
    kind = _EVENTS.get(event)
    if kind is None:
        return
    audit = AUDIT
    if not audit.on:
        return
    if kind == _SPAWN:
        audit.spawned = True
    elif kind == _PROBE:
        audit.installed = True
    elif not audit.directories:
        return
    elif kind == _OPEN:
        if len(args) > 2 and isinstance(args[2], int) and args[2] & _WRITE_FLAGS:
            audit._note(args[0])
    else:
        position = _PATH_EVENTS[event]
        if len(args) > position:
            audit._note(args[position])
