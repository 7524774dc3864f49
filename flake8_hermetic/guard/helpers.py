"""Process-wide helpers: threads and processes that a library starts once,
by design, and keeps for the rest of the process.

Blamed on the test that happens to touch the library first, such a helper
would move with the test order, and under xdist it would be found once per
worker, so ``-n 2`` would give more findings than ``-n 0`` and a baseline
entry would come and go. The guard gives them one home instead:

- *Accepted* helpers are not reported at all: multiprocessing's resource
  tracker and forkserver (built in), and whatever the project names in
  ``hermetic_guard_helpers`` (globs, one a line, matched against a thread's
  name and its target, ``pkg.mod.func``, and against a child's program and
  its whole command line).
- *Shared* helpers are reported once per run, against the session (``.``):
  the workers of a ``concurrent.futures`` thread pool (a library's shared
  executor, asyncio's default executor) and a ``logging`` ``QueueListener``.
  Each xdist worker reports the ones it saw; the controller keeps one of each.

Neither kind is waited for during the grace period.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

ACCEPTED = ("*multiprocessing.resource_tracker*", "*multiprocessing.forkserver*")
SHARED_THREADS = ("concurrent.futures.thread._worker", "logging.handlers.QueueListener._monitor")
SESSION = "."


class Helpers:
    def __init__(self, accepted: Sequence[str] = ()) -> None:
        self.patterns = tuple(dict.fromkeys([*ACCEPTED, *(p.strip() for p in accepted if p.strip())]))
        self.homed: dict[tuple[str, str], None] = {}  # (kind, what), in the order first seen
        self._children: set[Any] = set()  # (pid, start) of the accepted children

    def accepts(self, *names: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for name in names if name for pattern in self.patterns)

    def accepts_child(self, child: Any, command: Any) -> bool:
        """``command()`` gives the child's (program, command line); an accepted child is asked once
        (one that is not may not have run ``exec`` yet, and is asked again)."""
        if child in self._children:
            return True
        if self.accepts(*command()):
            self._children.add(child)
            return True
        return False

    def shared_thread(self, target: str) -> bool:
        return target in SHARED_THREADS

    def home(self, kind: str, what: str) -> None:
        self.homed.setdefault((kind, what), None)

    def session_leaks(self) -> list[Any]:
        """The shared helpers seen in this process, as findings of the session."""
        from flake8_hermetic.guard.monitor import Leak, code_of

        return [Leak(SESSION, code_of(kind), what) for kind, what in self.homed]


def one_per_process(present: Iterable[Any], incoming: Iterable[Any]) -> list[Any]:
    """Of a worker's findings, those to add to ``present`` (the other workers'):
    a finding of the session (``.``) is the state of one process (a helper it
    started, residue made while it collected), so of each ``(code, what)``
    the controller keeps as many as the worker that had most, as ``-n 0``,
    one process, would find."""
    had = Counter((leak.code, leak.what) for leak in present if leak.nodeid == SESSION)
    fresh: list[Any] = []
    seen: Counter[tuple[str, str]] = Counter()
    for leak in incoming:
        if leak.nodeid == SESSION:
            key = (leak.code, leak.what)
            seen[key] += 1
            if seen[key] <= had[key]:
                continue
        fresh.append(leak)
    return fresh
