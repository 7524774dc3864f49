"""The expected state, and the judgement of one test against it.

The expected state is the snapshot taken when the first test starts,
changed by what broader-scoped fixtures hold while they are alive. After a
test's protocol (setup, call, teardown: its fixtures are finalized), each
watch compares the current state with the expected one. Process state is
then put back; residue, threads and children are adopted, so each leak is
reported once, at the test that made it.

A look reads the kernel's directory events once, before any watch
answers, so no watch's answer depends on the order they ask in or on the
previous look; the watches that wait for what is still running (threads,
children) share one grace period, counted from the end of the test.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from flake8_hermetic.guard.audit import AUDIT
from flake8_hermetic.guard.residue import Residue
from flake8_hermetic.guard.stable import stable
from flake8_hermetic.guard.watchbase import Watch


def code_of(kind: str) -> str:
    """The ``HRM6xx`` code of a watch's kind (the codes and their pages are read on the first finding)."""
    from flake8_hermetic.guard.codes import BY_KIND

    return BY_KIND[kind].code


class Leak:
    """One finding of one test (or of the session: ``nodeid`` ``.``).

    A plain class, not a dataclass: a dataclass is built by compiling its
    methods when the module is imported, about a millisecond of every
    guarded run's start."""

    __slots__ = ("nodeid", "code", "what", "file", "line", "claim", "fixtures")

    def __init__(self, nodeid: str, code: str, what: str, file: str = "", line: int = 0,
                 claim: dict[str, Any] | None = None, fixtures: list[dict[str, Any]] | None = None) -> None:
        self.nodeid = nodeid
        self.code = code
        self.what = what
        self.file = file  # rootdir-relative, as in the node id
        self.line = line
        # shared directories (checkout, home) under xdist: which claim wins
        self.claim: dict[str, Any] = {} if claim is None else claim
        # broader fixtures finalized in this test's teardown (see ``Monitor.release``): one mark
        # per fixture, ``own`` false when the finalization made the leak, true when the test had
        # made it already; with the test's collection index, so xdist workers' findings merge
        self.fixtures: list[dict[str, Any]] = [] if fixtures is None else fixtures

    def _fields(self) -> tuple[Any, ...]:
        return (self.nodeid, self.code, self.what, self.file, self.line, self.claim, self.fixtures)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Leak) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass's would be

    def __repr__(self) -> str:
        return f"Leak{self._fields()!r}"

    def as_dict(self) -> dict[str, Any]:
        data = {"nodeid": self.nodeid, "code": self.code, "what": self.what, "file": self.file, "line": self.line}
        if self.claim:
            data["claim"] = self.claim
        if self.fixtures:
            data["fixtures"] = self.fixtures
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Leak:
        return cls(data["nodeid"], data["code"], data["what"], data.get("file", ""), data.get("line", 0),
                   data.get("claim", {}), data.get("fixtures", []))


class Monitor:
    def __init__(self, watches: Sequence[Watch], claims: bool) -> None:
        self.watches = list(watches)
        # what a look calls, bound once: a look with nothing changed is one call and one identity test a watch
        self.takers = [(watch.kind, watch.take, watch) for watch in self.watches]
        self.claims = claims  # record who may have made shared residue (xdist workers)
        self.expected: dict[str, Any] | None = None
        self.held: dict[int, list[dict[str, tuple[Any, Any]]]] = {}
        # a held fixture about to run its own finalizers: the expected state and the state then
        self.finalizing: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
        self.reported: set[Any] = set()  # the atoms of residue already blamed on a test
        self.started = 0.0
        # each look reads the directory events once, before any watch answers (see ``dirwatch``)
        notifiers = {id(w.notifier): w.notifier for w in self.watches if isinstance(w, Residue) and w.notifier}
        self.looks = [notifier.look for notifier in notifiers.values()]
        # the failed listings the residue watches report (one list for all), and the lines they make
        self.failures: list[tuple[str, str]] = []
        for watch in self.watches:
            if isinstance(watch, Residue):
                watch.failures = self.failures
        self.unlisted: dict[str, tuple[str, str]] = {}  # place -> (the test after which it failed, why)
        self.lines: list[str] = []
        # when the test ended (``time.monotonic``), set by the first watch that waits: one grace
        # period from there is shared by every watch of the look (threads, children)
        self.ended: float | None = None

    def snapshot(self) -> dict[str, Any]:
        for look in self.looks:
            look()
        return {watch.kind: watch.take() for watch in self.watches}

    def begin(self) -> None:
        if self.expected is None:
            self.expected = self.snapshot()
        if self.claims:  # when the test started: what it may have made in the shared directories
            self.started = time.time()
            AUDIT.reset()

    # -- broader-scoped fixtures ------------------------------------------------------------------

    def hold(self, owner: int, before: dict[str, Any], after: dict[str, Any]) -> None:
        if self.expected is None:
            return
        changed = {}
        for watch in self.watches:
            kind = watch.kind
            if before[kind] != after[kind]:
                self.expected[kind] = watch.apply(self.expected[kind], before[kind], after[kind])
                changed[kind] = (before[kind], after[kind])
        self.held.setdefault(owner, []).append(changed)

    def finalizing_starts(self, owner: int) -> None:
        """``owner``'s own finalizers are about to run (the guard's finalizer runs
        just before them): what is a leak now was made by the running test."""
        if self.held.get(owner) and self.expected is not None:
            self.finalizing[owner] = (dict(self.expected), self.snapshot())

    def release(self, owner: int) -> list[tuple[str, str, bool, str]]:
        """The fixture is finalized: what it held is no longer expected, except
        what another fixture that is still alive holds and the state still
        shows (a fixture set up inside this one's setup, through
        ``request.getfixturevalue``, may outlive it; the boundary between the
        two setups is not seen, so what the inner one holds is taken where it
        is still there).

        Returns ``(code, what, own, entry)`` of the leaks present now: ``own``
        false for those its finalization made (or left: state its setup made
        and its finalizers did not undo), true for those the running test had
        made; ``entry`` names the entry of a shared directory (xdist), where
        several entries of one ``what`` may be another worker's, else ``""``."""
        stack = self.held.get(owner)
        if not stack or self.expected is None:
            return []
        changed = stack.pop()
        alive = [held for stack in self.held.values() for held in stack]
        for watch in self.watches:
            kind = watch.kind
            if kind not in changed:
                continue
            before, after = changed[kind]
            expected = watch.revert(self.expected[kind], before, after)
            others = [held[kind] for held in alive if kind in held]
            if others:
                current = watch.take()
                for other_before, other_after in others:
                    expected = watch.reapply(expected, other_before, other_after, current)
            self.expected[kind] = expected
        saved = self.finalizing.pop(owner, None)
        found = [] if saved is None else self._finalization(*saved)
        for other in self.finalizing:
            # a fixture that depends on ``other`` was finalized among ``other``'s finalizers,
            # after the guard's: what it left is its own, not ``other``'s
            self.finalizing[other] = (dict(self.expected), self.snapshot())
        return found

    def _finalization(self, held: dict[str, Any], before: dict[str, Any]) -> list[tuple[str, str, bool, str]]:
        assert self.expected is not None
        found: list[tuple[str, str, bool, str]] = []
        for look in self.looks:
            look()
        for watch in self.watches:
            kind = watch.kind
            expected, now = self.expected[kind], watch.take()
            if now is expected or now == expected:
                continue
            if self.claims and watch.shared and isinstance(watch, Residue):
                # a shared directory (xdist): an entry that appeared during the finalization and that this
                # process did not write is another worker's, not the finalization's (the claims place it)
                now = frozenset(entry for entry in now if entry in before[kind] or self._wrote(watch, entry))
                # one mark per entry, not per ``what``: the entries of one stable name may be this
                # test's own and another worker's (absorbed into the fixture's hold while its setup ran),
                # and a mark of the finalization must not land on the entry this test wrote
                had = before[kind] - held[kind]
                code = code_of(kind)
                found += [(code, stable(entry), entry in had, entry) for entry in sorted(now - expected)]
                continue
            after = Counter(watch.leaks(expected, now))
            if not after:
                continue
            already = Counter(watch.leaks(held[kind], before[kind])) if before[kind] != held[kind] else Counter()
            code = code_of(kind)
            for what, count in after.items():
                made = count - already[what]
                found += [(code, what, False, "")] * max(made, 0)
                if already[what]:
                    found.append((code, what, True, ""))
        return found

    # -- one test ------------------------------------------------------------------------------------------

    def judge(self, nodeid: str, file: str, line: int | None) -> list[Leak]:
        """The leaks of the test ``nodeid`` (``file`` and the 0-based ``line`` as in ``item.location``)."""
        expected = self.expected
        assert expected is not None
        leaks: list[Leak] = []
        self.ended = None
        for look in self.looks:
            look()
        for kind, take, watch in self.takers:
            current = take()
            before = expected[kind]
            if current is before:  # most watches hand back the same object when nothing changed
                continue
            if current == before:  # an equal one (a copy, or a state rebuilt): the next look may be `is`
                expected[kind] = current
                continue
            self._differs(watch, current, nodeid, file, line, leaks)
        if self.failures:
            self._listings(nodeid)
        return leaks

    def _listings(self, nodeid: str) -> None:
        """Say where a residue listing failed (the previous listing was kept)
        and where it succeeded again: what was left there in between is
        blamed on the test after which it succeeded."""
        for place, why in self.failures:
            if why:
                self.unlisted.setdefault(place, (nodeid, why))
                continue
            failed = self.unlisted.pop(place, None)
            if failed is None or failed[0] == nodeid:
                continue
            again = ("at the end of the run: what was left there in between is reported against the session"
                     if nodeid == "." else f"after {nodeid}: what was left there in between is blamed on it")
            self.lines.append(f"hermetic guard: could not list {place} after {failed[0]} ({failed[1]}); "
                              f"listed again {again}")
        self.failures.clear()

    def notes(self) -> list[str]:
        """The lines the run's summary shows about listings that failed (call once, at the end)."""
        if self.failures:
            self._listings(".")
        for place, (nodeid, why) in sorted(self.unlisted.items()):
            self.lines.append(f"hermetic guard: could not list {place} after {nodeid} ({why}), nor again "
                              "before the end of the run: what was left there is not reported")
        self.unlisted.clear()
        return self.lines

    def _differs(self, watch: Watch, current: Any, nodeid: str, file: str, line: int | None,
                 leaks: list[Leak]) -> None:
        assert self.expected is not None
        kind = watch.kind
        expected = self.expected[kind]
        settle = getattr(watch, "settle", None)
        if settle is not None:
            if self.ended is None:
                self.ended = time.monotonic()
            current = settle(expected, current, self.ended)
        found = watch.leaks(expected, current)
        if not found and watch.restorable:  # a change that is no leak (pytest's own): the expected state now
            self.expected[kind] = current
            return
        code = code_of(kind)
        for what in found:
            # the test's file, rootdir-relative as in its node id, and its ``def`` line (1-based)
            leaks.append(Leak(nodeid, code, what, file.replace(os.sep, "/"), (line or 0) + 1))
        if self.claims and watch.shared and isinstance(watch, Residue):
            self._claim(watch, leaks, expected, current)
        if watch.restorable:
            watch.restore(expected, current)
        else:
            if isinstance(watch, Residue):
                self.reported.update(current - expected)
            self.expected[kind] = current

    @staticmethod
    def _wrote(watch: Residue, entry: str) -> bool:
        path = watch.path_of(entry)
        return bool(path and os.path.abspath(path) in AUDIT.seen)

    def _claim(self, watch: Residue, leaks: list[Leak], expected: Any, current: Any) -> None:
        code = code_of(watch.kind)
        ended = time.time()
        for entry, leak in zip(sorted(current - expected), [x for x in leaks if x.code == code]):
            path = watch.path_of(entry)
            try:
                made = os.lstat(path).st_ctime if path else 0.0
            except OSError:
                made = 0.0
            leak.claim = {"entry": entry, "start": self.started, "end": ended, "made": made,
                          "wrote": bool(path and os.path.abspath(path) in AUDIT.seen)}
