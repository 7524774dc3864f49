"""What the guard watches: one small class per kind of leak.

A watch takes a snapshot of its state (``take``), names what differs from
the expected state (``leaks``), and, for process state, puts the expected
state back (``restore``), so a leak is reported once, at its source. A
broader-scoped fixture (class, module, session) may hold state across the
tests it serves: the change its setup makes is applied to the expected
state (``apply``) until it is finalized (``revert``).
"""

from __future__ import annotations

import errno
import fnmatch
import logging
import os
import signal
import sys
import tempfile
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

def _names(directory: str, ignored: Callable[[str], bool]) -> set[str]:
    with os.scandir(directory) as entries:
        return {entry.name for entry in entries if not ignored(entry.name)}


def _listing(directory: str, ignored: Callable[[str], bool]) -> set[str]:
    """The entries of ``directory`` (none when it is gone); ``OSError`` when
    it is there but could not be listed: the caller keeps its previous
    listing and lists it again at the next look.

    A test that used up the process's descriptors (``EMFILE``) would make
    every listing fail: the guard keeps one descriptor in reserve, and gives
    it up for the time of one listing."""
    try:
        return _names(directory, ignored)
    except (FileNotFoundError, NotADirectoryError):  # gone: nothing is left in it
        return set()
    except OSError as exc:
        if exc.errno != errno.EMFILE or not _SPARE.release():
            raise
    try:
        found = _names(directory, ignored)
        # what reporting a finding imports, while the descriptor is free (once: then it is in sys.modules)
        import flake8_hermetic.guard.codes  # noqa: F401
        return found
    except (FileNotFoundError, NotADirectoryError):
        return set()
    finally:
        _SPARE.keep()


class _Spare:
    """One descriptor held in reserve for a listing when a test used up the rest.

    It is an anonymous file of its own (``memfd``, else ``/dev/null``), and
    it is closed only while it is still that file: a test that closed it,
    and a descriptor that took its number since, is left alone."""

    def __init__(self) -> None:
        self.fd = -1
        self.identity: tuple[int, int] = (0, 0)

    def keep(self) -> None:
        if self.fd >= 0:
            return
        try:
            if hasattr(os, "memfd_create"):
                fd = os.memfd_create("hermetic-guard-spare", os.MFD_CLOEXEC)
            else:  # pragma: no cover - not Linux
                fd = os.open(os.devnull, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            info = os.fstat(fd)
        except OSError:
            return
        self.fd, self.identity = fd, (info.st_dev, info.st_ino)

    def release(self) -> bool:
        fd, self.fd = self.fd, -1
        if fd < 0:
            return False
        try:
            info = os.fstat(fd)
        except OSError:
            return False
        if (info.st_dev, info.st_ino) != self.identity:
            return False
        os.close(fd)
        return True


_SPARE = _Spare()


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
    reported an event in it, or (where it cannot watch it) its mtime moved.
    A listing that fails keeps the previous one, and the directory is listed
    again at the next look (``failures`` says so to the monitor)."""

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
        # listings that failed (the place, the reason) and, with an empty reason, that succeeded again
        # after a failure; the monitor shares one list among its watches and reads it after a look
        self.failures: list[tuple[str, str]] = []
        self.unlisted: set[str] = set()  # directories whose last listing failed
        self.seen = -1  # the notifier's count of readings at this watch's last take
        _SPARE.keep()
        if notifier is not None:  # watched before the first listing: no change falls between the two
            for directory in directories:
                notifier.add(directory)

    def take(self) -> frozenset[str]:
        notifier = self.notifier
        moved: Any = ()
        if notifier is not None:
            # answered from the look's one reading of the events (``Monitor`` reads them first); a take
            # outside a look, with no reading since this watch's last take, reads them itself
            reads = notifier.reads
            if reads == self.seen:
                notifier.look()
                reads = notifier.reads
            self.seen = reads
            if self.quiet_when_notified and not notifier.moved:
                return self.state  # every directory watched by the kernel, listed, and no event at all since
            moved = notifier.moved_in(self.directories)
        changed = False
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
            try:
                found = _listing(directory, self.ignored)
            except OSError as exc:  # kept as it was, and listed again at the next look
                listing.taken = 0.0
                if directory not in self.unlisted:
                    self.unlisted.add(directory)
                    self.failures.append((self.place(directory), exc.strerror or type(exc).__name__))
                continue
            if self.unlisted and directory in self.unlisted:
                self.unlisted.discard(directory)
                self.failures.append((self.place(directory), ""))
            names = frozenset(prefix + name for name in found)
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

    def place(self, directory: str) -> str:
        """How a summary line names one of the directories."""
        prefix = self.directories.get(directory, "")
        if self.kind == "tmp":
            return "the temporary directory"
        if self.kind == "home":
            return "the home directory"
        return f"the checkout's {prefix}" if prefix else f"the {self.kind}"

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


# the atom of the environment's state that says ``os.environ`` is no longer the mapping the run started with
_REPLACED = object()


class Environment(SetWatch):
    """Key names only are ever reported: values may be secrets (they are
    compared, and put back, in memory). The state is rebuilt only when the
    mapping differs from the copy kept at the last reading (a comparison of
    two dicts whose values are mostly the same objects: about a microsecond
    for a hundred variables).

    The variables are read through the mapping ``os.environ`` was when the
    run started (the one that writes through to the C environment). A test
    that rebinds ``os.environ`` (``os.environ = os.environ.copy()``, a plain
    dict) is one finding, and the original mapping is put back."""

    kind = "env"

    def __init__(self) -> None:
        self.environ = os.environ  # the real mapping
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
        if os.environ is not self.environ:  # rebound: the real mapping is read, and the rebinding is an atom
            return self._read() | {(_REPLACED, type(os.environ).__name__)}
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
            items = self.environ.copy()
            items.pop(PYTEST_CURRENT_TEST, None)
            return frozenset(items.items())
        if PYTEST_CURRENT_TEST in self.environ:
            return frozenset(item for item in self.data.items() if self.decodekey(item[0]) != PYTEST_CURRENT_TEST)
        return frozenset(self.data.items())

    def leaks(self, expected: frozenset[tuple[Any, Any]], current: frozenset[tuple[Any, Any]]) -> list[str]:
        before, after = dict(expected), dict(current)
        found = []
        replaced = after.pop(_REPLACED, None)
        if replaced is not None and before.pop(_REPLACED, None) is None:
            found.append(f"os.environ replaced by a {replaced}")
        before.pop(_REPLACED, None)
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
        environ = self.environ
        if after.pop(_REPLACED, None) is not None and before.pop(_REPLACED, None) is None:
            os.environ = environ  # type: ignore[assignment]  # the real mapping back (not a copy: children use it)
            if PYTEST_CURRENT_TEST in environ:  # pytest's note, written before the rebinding, removed after it
                del environ[PYTEST_CURRENT_TEST]
        before.pop(_REPLACED, None)
        for key in set(after) - set(before):
            environ.pop(self.decodekey(key), None)
        for key, value in before.items():
            if after.get(key) != value:
                environ[self.decodekey(key)] = self.decodevalue(value)


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


_getitimer: Callable[[int], tuple[float, float]] | None = getattr(signal, "getitimer", None)
NO_TIMER: frozenset[str] = frozenset()
# the interval timers: the one alarm() and setitimer(ITIMER_REAL) share, and the CPU-time ones
_TIMERS = (("ITIMER_REAL", "SIGALRM"), ("ITIMER_VIRTUAL", "SIGVTALRM"), ("ITIMER_PROF", "SIGPROF"))


class Timers(SetWatch):
    """The interval timers still pending. ``ITIMER_REAL`` (``signal.alarm()``
    and ``setitimer(ITIMER_REAL)`` set the same timer) is read at every look,
    one system call; the CPU-time timers (``ITIMER_VIRTUAL``, ``ITIMER_PROF``)
    only while a handler is installed for their signal: with the default
    action their expiry ends the process, guarded or not.

    A timer the expected state does not have is reported and cancelled. The
    guard looks at this watch before the signal handlers, so a leaked timer
    is cancelled before a leaked handler is replaced by the previous one (the
    default action of ``SIGALRM`` ends the process). A timer that expired on
    its own is no finding."""

    kind = "timers"

    def __init__(self) -> None:
        self.which: dict[str, int] = {}
        self.labels: dict[str, str] = {}
        self.real: int | None = None
        self.cpu: list[tuple[int, int, frozenset[str]]] = []  # (timer, its signal, the state it adds)
        for name, signal_name in _TIMERS:
            which, number = getattr(signal, name, None), getattr(signal, signal_name, None)
            if which is None or number is None or _getitimer is None:  # pragma: no cover - Windows
                continue
            self.which[name], self.labels[name] = which, f"{name} ({signal_name})"
            if name == "ITIMER_REAL":
                self.real = which
            else:
                self.cpu.append((which, int(number), frozenset([name])))
        self.take = self._reader()  # type: ignore[method-assign]

    def _reader(self) -> Callable[[], frozenset[str]]:
        """The look, as a closure over what it reads: about 1,600 instructions
        with nothing pending (a method with a loop took 2,300)."""
        getitimer, getsignal = _getitimer, _raw_getsignal
        real = self.real
        if getitimer is None or real is None:  # pragma: no cover - Windows
            return lambda: NO_TIMER
        real_pending = frozenset(["ITIMER_REAL"])
        if len(self.cpu) != 2:  # pragma: no cover - a platform with one CPU-time timer
            cpu = tuple(self.cpu)

            def each() -> frozenset[str]:
                state = real_pending if getitimer(real)[0] else NO_TIMER
                for which, number, pending in cpu:
                    if type(getsignal(number)) is not int and getitimer(which)[0]:
                        state = state | pending
                return state

            return each
        (virtual, virtual_signal, virtual_pending), (prof, prof_signal, prof_pending) = self.cpu

        def both() -> frozenset[str]:
            state = real_pending if getitimer(real)[0] else NO_TIMER
            if type(getsignal(virtual_signal)) is not int and getitimer(virtual)[0]:  # an int: SIG_DFL, SIG_IGN
                state = state | virtual_pending
            if type(getsignal(prof_signal)) is not int and getitimer(prof)[0]:
                state = state | prof_pending
            return state

        return both

    def leaks(self, expected: frozenset[str], current: frozenset[str]) -> list[str]:
        return sorted(self.labels[name] for name in current - expected)

    def restore(self, expected: frozenset[str], current: frozenset[str]) -> None:
        for name in current - expected:
            try:
                signal.setitimer(self.which[name], 0)
            except (OSError, ValueError):
                pass


class TempfileDir(Watch):
    """``tempfile.tempdir``, which the guard points at its own temp dir: a test
    that assigns it (``None`` too) sends every later ``tempfile`` call of the
    process elsewhere, out of the temp-dir watch's sight. Reported and put
    back; a look is one attribute read and an identity test."""

    kind = "tempdir"

    def __init__(self, roots: Roots) -> None:
        self.roots = roots

    def take(self) -> Any:
        return tempfile.tempdir

    def leaks(self, expected: Any, current: Any) -> list[str]:
        if current is expected or current == expected:
            return []
        if current is None:
            return ["None"]
        try:
            text = os.fspath(current)
        except TypeError:
            return [label(repr(current))]
        return [self.roots(os.fsdecode(text))]

    def restore(self, expected: Any, current: Any) -> None:
        tempfile.tempdir = expected


class SysPath(Watch):
    """``sys.path``, less what pytest itself puts there while the tests run.

    pytest changes it too: importing a test module, a ``conftest.py`` or a
    package's ``__init__.py`` under the default import mode (``prepend``)
    inserts the directory above the package (the rootdir for a
    ``conftest.py`` outside any package) at the front, unless it is first
    already. Collection does that before the first test (the expected state
    is taken then); a package's setup imports its ``__init__.py`` again
    during its first test, and inserts its root once more when another
    package's root went in front of it since. That change (directories
    already on the path, put in front of it as they were) is taken as the
    expected state, not a leak. Under ``append`` pytest appends a directory
    only when it is not on the path, which collection already did, and
    ``importlib`` inserts nothing: there no change is pytest's."""

    kind = "syspath"

    def __init__(self, roots: Roots, import_mode: str = "prepend") -> None:
        self.roots = roots
        self.import_mode = import_mode

    def take(self) -> tuple[str, ...]:
        return tuple(sys.path)

    def _pytests(self, expected: tuple[str, ...], current: tuple[str, ...]) -> bool:
        """Only what pytest's ``prepend`` import does: roots already on the path, each once, put in front."""
        added = len(current) - len(expected)
        if self.import_mode != "prepend" or added <= 0 or current[added:] != expected:
            return False
        front = current[:added]
        return len(set(front)) == added and all(path in expected for path in front)

    def leaks(self, expected: tuple[str, ...], current: tuple[str, ...]) -> list[str]:
        if current == expected or self._pytests(expected, current):
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

    def settle(self, expected: frozenset[threading.Thread], current: frozenset[threading.Thread],
               ended: float | None = None) -> State:
        """The new threads still alive after the grace period (a bounded wait on each).

        The period runs from ``ended`` (``time.monotonic()`` when the test
        ended; now if not given), shared with the other watches that wait."""
        fresh = current - expected
        if not fresh:
            return current
        deadline = (time.monotonic() if ended is None else ended) + self.grace
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

    def settle(self, expected: frozenset[processes.Child], current: frozenset[processes.Child],
               ended: float | None = None) -> State:
        """A child that is exiting gets the grace period too (a poll with a deadline),
        the same period as the threads': from ``ended``, when the test ended."""
        deadline = (time.monotonic() if ended is None else ended) + self.grace
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


# -- process-wide helpers, listening sockets, pending asyncio tasks -------------------------------------------
# (see flake8_hermetic/guard/helpers.py, sockets.py and tasks.py)

class HelperThreads(Threads):
    """Threads, less the process-wide helpers: accepted ones (``hermetic_guard_helpers``)
    are not reported, shared ones (a thread pool's workers) are reported once, against
    the session; neither is waited for during the grace period."""

    def __init__(self, grace: float, helpers: Any) -> None:
        super().__init__(grace)
        self.helpers = helpers

    def _helper(self, thread: threading.Thread) -> bool:
        target = _thread_label(thread)
        return self.helpers.accepts(thread.name, target) or self.helpers.shared_thread(target)

    def settle(self, expected: frozenset[threading.Thread], current: frozenset[threading.Thread],
               *args: Any, **kwargs: Any) -> State:
        helpers = frozenset(t for t in current - expected if self._helper(t))
        return super().settle(expected | helpers, current, *args, **kwargs)

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


def _command(pid: int) -> tuple[str, str]:
    argv = processes.command_line(pid)
    return (os.path.basename(argv[0]) if argv else "", " ".join(argv))


class HelperChildren(Children):
    """Children, less the accepted process-wide helpers (multiprocessing's resource
    tracker and forkserver, and those named in ``hermetic_guard_helpers``); with
    orphaned descendants kept as this process's own where Linux allows it
    (see :func:`flake8_hermetic.guard.processes.keep_orphans`)."""

    def __init__(self, grace: float, helpers: Any) -> None:
        super().__init__(grace)
        self.helpers = helpers

    def _accepted(self, child: processes.Child) -> bool:
        return bool(self.helpers.accepts_child(child, lambda: _command(child[0])))

    def settle(self, expected: frozenset[processes.Child], current: frozenset[processes.Child],
               ended: float | None = None) -> State:
        """As :meth:`Children.settle`, not waiting for accepted helpers (asked at each
        poll: a child just forked still has its parent's command line until it execs)."""
        deadline = (time.monotonic() if ended is None else ended) + self.grace
        while any(not self._accepted(c) for c in current - expected) and time.monotonic() < deadline:
            time.sleep(0.01)
            current = processes.running_children()
        self.last = current
        return current

    def leaks(self, expected: frozenset[processes.Child], current: frozenset[processes.Child]) -> list[str]:
        return sorted(_program_label(child[0]) for child in current - expected if not self._accepted(child))


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
