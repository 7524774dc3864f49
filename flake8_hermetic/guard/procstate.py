"""The process state a test may change and the guard puts back (``restore``):
the working directory, the environment, the umask, the interval timers and
the signal handlers, ``tempfile.tempdir``, ``sys.path``, the warning filters
and the root logger's handlers.

Each is reported once, at the test that changed it, and the expected state
is put back before the next test.
"""

from __future__ import annotations

import gc
import itertools
import logging
import os
import signal
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable
from typing import Any

from flake8_hermetic.guard.stable import label
from flake8_hermetic.guard.watchbase import Roots, SetWatch, Watch


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


class HandlerChanges:
    """A mark that moves at every call of ``_signal.signal``, the one function
    that changes the table ``getsignal`` reads (``signal.signal`` calls it by
    attribute, however it was imported). The session wraps it; while the
    mark has not moved, the handlers read at the last look are the handlers
    now, and the watches hand that reading back instead of asking again.

    Trusted (``trusted()``) only when nothing but the ``_signal`` module
    held the original function when the wrapper went in (``gc`` referrers:
    ``from _signal import signal`` in a module imported earlier, a saved
    reference anywhere), and while ``_signal.signal`` is still the wrapper
    and ``sys.modules`` still has that ``_signal`` (a fresh import makes a
    new, unwrapped function); otherwise the watches read at every look, and
    read again at the first look after it is trusted again. Not seen: a
    test that calls an unwrapped function it got after the session started
    (dug out of the wrapper, or from a fresh import of ``_signal``) and puts
    the wrapper and the module back before it ends."""

    def __init__(self) -> None:
        self.counter = itertools.count(1)
        self.mark = 0
        self.users = 0
        self.sound = False
        self.module: Any = None
        self.wrapper: Any = None
        self.original: Any = None

    def moved(self) -> None:
        self.mark = next(self.counter)  # a fresh value, whichever threads call: never an old one back

    def trusted(self) -> bool:
        if self.sound and self.module.signal is self.wrapper and sys.modules.get("_signal") is self.module:
            return True
        self.moved()  # not trusted now: the first trusted look reads again
        return False

    def install(self) -> None:
        self.users += 1
        if self.users > 1:  # a session inside a session (pytester in process): the outer one's wrapper
            return
        try:
            import _signal  # type: ignore[import-not-found]
        except ImportError:  # pragma: no cover - another implementation
            return
        original = getattr(_signal, "signal", None)
        if original is None or getattr(original, "_hermetic_counting", False):  # pragma: no cover
            return
        # asked before anything of the guard's holds it (the wrapper's closure is made after)
        held = [each for each in gc.get_referrers(original) if each is not vars(_signal)]
        counting = _counting(original, self)
        self.module, self.wrapper, self.original = _signal, counting, original
        _signal.signal = counting
        self.sound = not held
        self.moved()

    def uninstall(self) -> None:
        self.users = max(self.users - 1, 0)
        if self.users or self.module is None:
            return
        if self.module.signal is self.wrapper:
            self.module.signal = self.original
        self.module = self.wrapper = self.original = None
        self.sound = False
        self.moved()


def _counting(original: Callable[..., Any], changes: HandlerChanges) -> Callable[..., Any]:
    def counting(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        finally:
            changes.moved()  # after the call: a reading made before it is stale

    counting.__name__ = counting.__qualname__ = "signal"
    counting.__doc__ = original.__doc__
    counting.__module__ = "_signal"
    counting._hermetic_counting = True  # type: ignore[attr-defined]
    return counting


HANDLER_CHANGES = HandlerChanges()


class SignalHandlers(Watch):
    """The handler of each watched signal, by position (handlers are compared by identity).

    Read again only when ``HANDLER_CHANGES`` moved since the last reading
    (or is not trusted): 18 ``getsignal`` calls spared at most looks."""

    kind = "signals"

    def __init__(self) -> None:
        self.numbers = _signal_numbers()
        self.changes = HANDLER_CHANGES
        self.mark = -1
        self.last: tuple[Any, ...] = ()

    def take(self) -> tuple[Any, ...]:
        changes = self.changes
        if changes.mark == self.mark and changes.trusted():
            return self.last
        self.mark = changes.mark  # before the reading: a change during it moves the mark again
        state = tuple(map(_raw_getsignal, self.numbers))
        if state != self.last:  # an equal reading keeps the old object: the look tests identity first
            self.last = state
        return self.last

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
    one system call (C code may start it, unseen by any wrapper); the
    CPU-time timers (``ITIMER_VIRTUAL``, ``ITIMER_PROF``) only while a
    handler is installed for their signal: with the default action their
    expiry ends the process, guarded or not. Those two handlers are read
    again only when ``HANDLER_CHANGES`` moved (see ``SignalHandlers``).

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
        changes = HANDLER_CHANGES
        # [the mark when the two handlers were read, whether each is a Python handler (not SIG_DFL, SIG_IGN)]
        handled: list[Any] = [-1, False, False]

        def both() -> frozenset[str]:
            state = real_pending if getitimer(real)[0] else NO_TIMER  # every look: C code may call alarm()
            if handled[0] != changes.mark or not changes.trusted():
                handled[0] = changes.mark  # before the reading, as in ``SignalHandlers.take``
                handled[1] = type(getsignal(virtual_signal)) is not int
                handled[2] = type(getsignal(prof_signal)) is not int
            if handled[1] and getitimer(virtual)[0]:
                state = state | virtual_pending
            if handled[2] and getitimer(prof)[0]:
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
