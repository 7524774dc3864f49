"""What the guarded process does that a snapshot would have to pay to see.

One audit hook (``sys.addaudithook``; it cannot be removed, so ``on``
turns it off at the end of the session) notes:

- that a child process was started through Python (``subprocess``,
  ``os.fork``, ``os.posix_spawn``, ``os.system`` ...), so the children
  watch reads ``/proc`` only when one may exist;
- how many times the environment (``os.putenv``/``os.unsetenv``, which
  every write to ``os.environ`` calls; pytest's own ``PYTEST_CURRENT_TEST``
  excepted) and the working directory (``os.chdir``) were changed, so
  those watches compare their state only after a change;
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
_SPAWN, _ENV, _CWD, _OPEN, _PATH, _PROBE = range(6)
PROBE = "flake8_hermetic.guard.probe"  # raised once after adding the hook: is it really called?
# the one lookup every audited event pays (a suite raises hundreds of thousands)
_EVENTS = {
    **{event: _SPAWN for event in _SPAWN_EVENTS}, "os.putenv": _ENV, "os.unsetenv": _ENV, "os.chdir": _CWD,
    "open": _OPEN, **{event: _PATH for event in _PATH_EVENTS}, PROBE: _PROBE,
}
# pytest's note of the running test, set and removed around every test (the environment watch skips it)
_PYTEST_KEYS = frozenset({"PYTEST_CURRENT_TEST", b"PYTEST_CURRENT_TEST"})


class Audit:
    def __init__(self) -> None:
        self.directories: frozenset[str] = frozenset()
        self.seen: set[str] = set()  # absolute paths written directly under ``directories`` since ``reset``
        self.spawned = True
        self.env_changes = 0
        self.cwd_changes = 0
        self.on = False
        self.installed = False

    @property
    def counting(self) -> bool:
        """Whether ``env_changes`` and ``cwd_changes`` count every change (the hook is in and on)."""
        return self.installed and self.on

    def install(self, directories: Collection[str] = ()) -> tuple[frozenset[str], bool]:
        """Turn the hook on; returns what :meth:`restore` puts back (a guarded
        session inside a guarded session, as an in-process ``pytester`` run is)."""
        previous = (self.directories, self.on)
        self.directories = frozenset(os.path.abspath(d) for d in directories)
        self.on = True
        self.spawned = True
        if not self.installed:
            # another hook may refuse it (silently): then the watches read their state every time
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
    # and clears an AttributeError (2-3 µs an event on the machine measured; a
    # suite raises tens of events per test: object.__getattr__, exec, builtins.id)
    kind = _EVENTS.get(event)
    if kind is None:
        return
    audit = AUDIT
    if not audit.on:
        return
    if kind == _SPAWN:
        audit.spawned = True
    elif kind == _ENV:
        if not args or args[0] not in _PYTEST_KEYS:
            audit.env_changes += 1
    elif kind == _CWD:
        audit.cwd_changes += 1
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
