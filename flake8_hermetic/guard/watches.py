"""What the guard watches: one small class per kind of leak.

A watch takes a snapshot of its state (``take``), names what differs from
the expected state (``leaks``), and, for process state, puts the expected
state back (``restore``), so a leak is reported once, at its source. A
broader-scoped fixture (class, module, session) may hold state across the
tests it serves: the change its setup makes is applied to the expected
state (``apply``) until it is finalized (``revert``).
"""

from __future__ import annotations

import fnmatch
import logging
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from flake8_hermetic.guard import dirwatch, processes
from flake8_hermetic.guard.audit import AUDIT
from flake8_hermetic.guard.stable import label, stable

State = Any


class Watch:
    kind = ""
    restorable = True  # process state is put back; residue, threads and children are adopted
    shared = False  # state other xdist workers can change too (the checkout, the home directory)

    def take(self) -> State:
        raise NotImplementedError

    def leaks(self, expected: State, current: State) -> list[str]:
        raise NotImplementedError

    def restore(self, expected: State, current: State) -> None:
        pass

    def apply(self, expected: State, before: State, after: State) -> State:
        return after

    def revert(self, expected: State, before: State, after: State) -> State:
        return before

    def reapply(self, expected: State, before: State, after: State, current: State) -> State:
        """``expected`` with the change of a fixture that is still alive put
        back, where the current state still shows it (see ``Monitor.release``)."""
        return after if current == after and before != after else expected


class SetWatch(Watch):
    """State as a set of atoms: a fixture's setup adds and removes some."""

    def apply(self, expected: State, before: State, after: State) -> State:
        return (expected - (before - after)) | (after - before)

    def revert(self, expected: State, before: State, after: State) -> State:
        return (expected - (after - before)) | (before - after)

    def reapply(self, expected: State, before: State, after: State, current: State) -> State:
        return (expected | ((after - before) & current)) - ((before - after) - current)


class Roots:
    """The placeholders of stable names, longest path first. A ``later`` root
    is asked for its path only when a name is first needed (pytest's basetemp
    is made on first use: the guard does not make it for a suite that never
    asks for ``tmp_path``)."""

    def __init__(self, pairs: Iterable[tuple[str, str]], later: Iterable[tuple[Callable[[], str], str]] = ()) -> None:
        self.given = list(pairs)
        self.later = list(later)
        self.pairs: list[tuple[str, str]] | None = None

    def __call__(self, text: str) -> str:
        if self.pairs is None:
            given = self.given + [(path(), name) for path, name in self.later]
            both = {(form(path), name) for path, name in given if path for form in (os.path.realpath, os.path.abspath)}
            self.pairs = sorted(both, key=lambda pair: (-len(pair[0]), pair))
        return stable(text, self.pairs)


# -- residue ------------------------------------------------------------------------------------------

def _listing(directory: str, ignored: Callable[[str], bool]) -> set[str]:
    try:
        with os.scandir(directory) as entries:
            return {entry.name for entry in entries if not ignored(entry.name)}
    except OSError:
        return set()


# A directory's mtime changes when an entry is added, removed or renamed, so
# an unchanged mtime spares the listing, but only once the listing is older
# than the file system's timestamp granularity (coarse clocks, FAT's 2 s):
# an entry made within the same tick as the last change would not move it.
# Where the kernel reports changes (inotify, see ``dirwatch``) no mtime is read.
MTIME_TRUST = 2.0


class _Listing:
    __slots__ = ("mtime", "taken", "names")

    def __init__(self) -> None:
        self.mtime = -1
        self.taken = 0.0
        self.names: frozenset[str] = frozenset()


def ignore_matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    exact = frozenset(p for p in patterns if not any(c in p for c in "*?["))
    globs = tuple(p for p in patterns if p not in exact)

    def ignored(name: str) -> bool:
        return name in exact or any(fnmatch.fnmatchcase(name, glob) for glob in globs)

    return ignored


class Residue(SetWatch):
    """New entries in a few directories: a shallow listing of each, never a walk.

    A directory is listed again only when it may have changed: the notifier
    reported an event in it, or (where it cannot watch it) its mtime moved."""

    restorable = False

    def __init__(self, kind: str, directories: dict[str, str], ignore: Sequence[str],
                 notifier: dirwatch.Notifier | None = None) -> None:
        self.kind = kind
        self.directories = directories  # absolute path -> the label of its entries ("" for the top)
        self.ignored = ignore_matcher(ignore)
        self.cache = {directory: _Listing() for directory in directories}
        self.state: frozenset[str] = frozenset()
        self.notifier = notifier
        self.quiet_when_notified = False  # every directory is watched by the notifier and was listed
        if notifier is not None:  # watched before the first listing: no change falls between the two
            for directory in directories:
                notifier.add(directory)

    def take(self) -> frozenset[str]:
        notifier = self.notifier
        if self.quiet_when_notified and notifier is not None and notifier.quiet(self.kind):
            return self.state  # every directory watched by the kernel, listed, and no event since
        changed = False
        moved = notifier.changed(self.kind, self.directories) if notifier is not None else ()
        now = 0.0
        for directory, listing in self.cache.items():
            if notifier is not None and directory in notifier.watched:
                if listing.taken and directory not in moved:
                    continue
                mtime = 0
            else:
                try:
                    mtime = os.stat(directory).st_mtime_ns
                except OSError:
                    mtime = -2
                if mtime == listing.mtime and listing.taken - mtime / 1e9 > MTIME_TRUST:
                    continue
            prefix = self.directories[directory]
            names = frozenset(prefix + name for name in _listing(directory, self.ignored))
            now = now or time.time()
            listing.mtime, listing.taken = mtime, now
            if names != listing.names:
                listing.names = names
                changed = True
        if changed:
            self.state = frozenset().union(*(listing.names for listing in self.cache.values()))
        self.quiet_when_notified = notifier is not None and all(
            directory in notifier.watched and listing.taken for directory, listing in self.cache.items())
        return self.state

    def leaks(self, expected: frozenset[str], current: frozenset[str]) -> list[str]:
        return [stable(entry) for entry in sorted(current - expected)]

    def path_of(self, entry: str) -> str | None:
        for directory, prefix in self.directories.items():
            if prefix and entry.startswith(prefix):
                return os.path.join(directory, entry[len(prefix):])
        top = [directory for directory, prefix in self.directories.items() if not prefix]
        return os.path.join(top[0], entry) if top else None


# -- process state ------------------------------------------------------------------------------------

class WorkingDirectory(Watch):
    kind = "cwd"

    def __init__(self, roots: Roots) -> None:
        self.roots = roots

    def take(self) -> str | None:
        try:
            return os.getcwd()  # one system call: cheaper than anything that would spare it
        except OSError:  # removed under us
            return None

    def leaks(self, expected: str | None, current: str | None) -> list[str]:
        if current == expected:
            return []
        return [self.roots(current) if current else "a removed directory"]

    def restore(self, expected: str | None, current: str | None) -> None:
        if expected:
            os.chdir(expected)


# pytest's own note of the running test, set and removed around each one
PYTEST_CURRENT_TEST = "PYTEST_CURRENT_TEST"


class Environment(SetWatch):
    """Key names only are ever reported: values may be secrets (they are
    compared, and put back, in memory). The state is rebuilt only when the
    mapping differs from the copy kept at the last reading (a comparison of
    two dicts whose values are mostly the same objects: about a microsecond
    for a hundred variables)."""

    kind = "env"

    def __init__(self) -> None:
        self.copy: dict[Any, Any] | None = None  # the mapping as it was when ``last`` was built
        self.last: frozenset[tuple[Any, Any]] = frozenset()
        # os.environ's own encoded mapping spares decoding every item of every snapshot
        self.data: dict[Any, Any] | None = getattr(os.environ, "_data", None)
        decodekey = getattr(os.environ, "decodekey", None)
        decodevalue = getattr(os.environ, "decodevalue", None)
        if self.data is None or decodekey is None or decodevalue is None:
            self.data, decodekey, decodevalue = None, str, str
        self.decodekey: Callable[[Any], str] = decodekey
        self.decodevalue: Callable[[Any], str] = decodevalue

    def take(self) -> frozenset[tuple[Any, Any]]:
        data = self.data
        if data is None:
            return self._read()
        if data == self.copy:
            return self.last
        self.copy = dict(data)
        state = self._read()
        # the same state as before (pytest's note of the running test came and went): keep the
        # object, which the monitor compares by identity first
        if state != self.last:
            self.last = state
        return self.last

    def _read(self) -> frozenset[tuple[Any, Any]]:
        if self.data is None:
            items = os.environ.copy()
            items.pop(PYTEST_CURRENT_TEST, None)
            return frozenset(items.items())
        if PYTEST_CURRENT_TEST in os.environ:
            return frozenset(item for item in self.data.items() if self.decodekey(item[0]) != PYTEST_CURRENT_TEST)
        return frozenset(self.data.items())

    def leaks(self, expected: frozenset[tuple[Any, Any]], current: frozenset[tuple[Any, Any]]) -> list[str]:
        before, after = dict(expected), dict(current)
        found = []
        for key in sorted(set(before) | set(after)):
            name = self.decodekey(key)
            if key not in before:
                found.append(f"{name} set")
            elif key not in after:
                found.append(f"{name} removed")
            elif before[key] != after[key]:
                found.append(f"{name} changed")
        return found

    def restore(self, expected: frozenset[tuple[Any, Any]], current: frozenset[tuple[Any, Any]]) -> None:
        before, after = dict(expected), dict(current)
        for key in set(after) - set(before):
            os.environ.pop(self.decodekey(key), None)
        for key, value in before.items():
            if after.get(key) != value:
                os.environ[self.decodekey(key)] = self.decodevalue(value)


class Umask(Watch):
    kind = "umask"

    def take(self) -> int:
        mask = os.umask(0o022)
        os.umask(mask)
        return mask

    def leaks(self, expected: int, current: int) -> list[str]:
        return [] if current == expected else [f"{current:04o}"]

    def restore(self, expected: int, current: int) -> None:
        os.umask(expected)


# The signals programs install handlers for; asking for all 60-odd costs
# a measurable share of a fast test.
WATCHED_SIGNALS = (
    "SIGHUP", "SIGINT", "SIGQUIT", "SIGABRT", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
    "SIGCHLD", "SIGCONT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGWINCH", "SIGXCPU", "SIGVTALRM", "SIGPROF",
    "SIGBREAK",
)


try:  # the C function: signal.getsignal wraps each answer in an enum lookup that may raise
    from _signal import getsignal as _raw_getsignal  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - another implementation
    _raw_getsignal = signal.getsignal


def _signal_numbers() -> list[int]:
    numbers = []
    for name in WATCHED_SIGNALS:
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            signal.getsignal(number)
        except (ValueError, OSError):
            continue
        numbers.append(number)
    return numbers


class SignalHandlers(Watch):
    """The handler of each watched signal, by position (handlers are compared by identity)."""

    kind = "signals"

    def __init__(self) -> None:
        self.numbers = _signal_numbers()

    def take(self) -> tuple[Any, ...]:
        return tuple(map(_raw_getsignal, self.numbers))

    def _changed(self, old: tuple[Any, ...], new: tuple[Any, ...]) -> list[int]:
        return [i for i, (a, b) in enumerate(zip(old, new)) if a is not b and a != b]

    def apply(self, expected: tuple[Any, ...], before: tuple[Any, ...], after: tuple[Any, ...]) -> tuple[Any, ...]:
        state = list(expected)
        for i in self._changed(before, after):
            state[i] = after[i]
        return tuple(state)

    def revert(self, expected: tuple[Any, ...], before: tuple[Any, ...], after: tuple[Any, ...]) -> tuple[Any, ...]:
        state = list(expected)
        for i in self._changed(before, after):
            state[i] = before[i]
        return tuple(state)

    def reapply(self, expected: tuple[Any, ...], before: tuple[Any, ...], after: tuple[Any, ...],
                current: tuple[Any, ...]) -> tuple[Any, ...]:
        state = list(expected)
        for i in self._changed(before, after):
            if current[i] is after[i]:
                state[i] = after[i]
        return tuple(state)

    def leaks(self, expected: tuple[Any, ...], current: tuple[Any, ...]) -> list[str]:
        return sorted(_signal_name(self.numbers[i]) for i in self._changed(expected, current))

    def restore(self, expected: tuple[Any, ...], current: tuple[Any, ...]) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for i in self._changed(expected, current):
            if expected[i] is not None:  # None: installed outside Python, nothing to put back
                try:
                    signal.signal(self.numbers[i], expected[i])
                except (ValueError, OSError, TypeError):
                    pass


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class SysPath(Watch):
    kind = "syspath"

    def __init__(self, roots: Roots) -> None:
        self.roots = roots

    def take(self) -> tuple[str, ...]:
        return tuple(sys.path)

    def leaks(self, expected: tuple[str, ...], current: tuple[str, ...]) -> list[str]:
        if current == expected:
            return []
        added = [p for p in current if p not in expected]
        removed = [p for p in expected if p not in current]
        if added:
            return [f"added {self.roots(str(added[0]))}"]
        if removed:
            return [f"removed {self.roots(str(removed[0]))}"]
        return ["reordered"]

    def restore(self, expected: tuple[str, ...], current: tuple[str, ...]) -> None:
        sys.path[:] = expected


class WarningFilters(Watch):
    kind = "warnings"

    def take(self) -> tuple[Any, ...]:
        return tuple(warnings.filters)

    def leaks(self, expected: tuple[Any, ...], current: tuple[Any, ...]) -> list[str]:
        if current == expected:
            return []
        added = [f for f in current if f not in expected]
        if added:
            action, message, category, module, _ = added[0]
            text = f"added {action} {getattr(category, '__name__', category)}"
            pattern = getattr(message, "pattern", message)
            return [text + (f" {pattern!r}" if pattern else "")]
        return ["removed a filter"]

    def restore(self, expected: tuple[Any, ...], current: tuple[Any, ...]) -> None:
        warnings.filters[:] = expected  # type: ignore[index]
        mutated = getattr(warnings, "_filters_mutated", None)
        if mutated is not None:
            mutated()


class RootHandlers(Watch):
    kind = "logging"

    def take(self) -> tuple[logging.Handler, ...]:
        return tuple(logging.root.handlers)

    def leaks(self, expected: tuple[logging.Handler, ...], current: tuple[logging.Handler, ...]) -> list[str]:
        added = [type(h).__name__ for h in current if h not in expected]
        removed = [f"removed {type(h).__name__}" for h in expected if h not in current]
        return added + removed

    def restore(self, expected: tuple[logging.Handler, ...], current: tuple[logging.Handler, ...]) -> None:
        logging.root.handlers[:] = list(expected)


# -- what keeps running ---------------------------------------------------------------------------------

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
    kind = "threads"
    restorable = False

    def __init__(self, grace: float) -> None:
        self.grace = grace
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

    def settle(self, expected: frozenset[threading.Thread], current: frozenset[threading.Thread]) -> State:
        """The new threads still alive after the grace period (a bounded wait on each)."""
        fresh = current - expected
        if not fresh:
            return current
        deadline = time.monotonic() + self.grace
        for thread in fresh:
            thread.join(max(0.0, deadline - time.monotonic()))
        return frozenset(t for t in current if t.is_alive())

    def leaks(self, expected: frozenset[threading.Thread], current: frozenset[threading.Thread]) -> list[str]:
        return sorted(_thread_label(t) for t in current - expected if t.is_alive())


class Children(SetWatch):
    """Child processes still running. Listing them reads ``/proc`` (or asks
    ``psutil``), so it is done only when one may exist: the kernel says the
    process has a child (``os.waitid``), or, where it cannot be asked, the
    audit hook saw one started through Python since the last look."""

    kind = "children"
    restorable = False

    def __init__(self, grace: float) -> None:
        self.grace = grace
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

    def settle(self, expected: frozenset[processes.Child], current: frozenset[processes.Child]) -> State:
        """A child that is exiting gets the grace period too (a poll with a deadline)."""
        deadline = time.monotonic() + self.grace
        while current - expected and time.monotonic() < deadline:
            time.sleep(0.01)
            current = processes.running_children()
        self.last = current
        return current

    def leaks(self, expected: frozenset[processes.Child], current: frozenset[processes.Child]) -> list[str]:
        return sorted(_program_label(pid) for pid, _ in current - expected)


def _program_label(pid: int) -> str:
    name = processes.program(pid)
    if name.startswith("python"):
        return "python"
    return stable(name)
