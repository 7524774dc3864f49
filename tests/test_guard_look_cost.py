"""The looks the guard spares, and that a leak is still caught through the path each skip relies on.

The signal-handler watch (and the timer watch's reading of the CPU-time
timers' handlers) hands back its last reading while no call of
``_signal.signal`` happened since (the session wraps it); when another
module held the original function before the wrapper went in, it reads at
every look. Each test here sets a handler after clean looks, where a
skip that missed the change would leave it unreported.
"""

from __future__ import annotations

import pytest

from tests.helpers import TIMEOUT

pytest_plugins = ["pytester"]

signal = pytest.importorskip("signal")
if not hasattr(signal, "SIGUSR1"):  # pragma: no cover - Windows
    pytest.skip("POSIX signals", allow_module_level=True)


def guarded(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--hermetic-guard",
                                         "--hermetic-no-baseline", *args, timeout=TIMEOUT)


def findings(result: pytest.RunResult) -> set[tuple[str, str, str]]:
    """(test name, code, what) of each finding the guard's section lists."""
    found = set()
    for line in result.stdout.lines:
        nodeid, _, rest = line.partition(": HRM")
        if rest and "::" in nodeid:
            what = rest[4:].split(": ", 1)[-1].split(" (", 1)[0]
            found.add((nodeid.rpartition("::")[2], "HRM" + rest[:3], what))
    return found


# a handler to install and two tests that change nothing: the looks before a change are clean
CLEAN_START = """

def handler(*args):
    pass


def test_clean_1():
    pass


def test_clean_2():
    pass
"""

ROUTES = """
import signal
from signal import signal as imported_signal

import _signal
""" + CLEAN_START + """

def test_through_signal_signal():
    signal.signal(signal.SIGUSR1, handler)


def test_clean_3():
    pass


def test_through_a_name_imported_from_signal():
    imported_signal(signal.SIGUSR2, handler)


def test_clean_4():
    pass


def test_through_the_c_module():
    _signal.signal(signal.SIGHUP, handler)


def test_clean_5():
    pass


def test_cpu_timer_after_clean_looks():
    signal.signal(signal.SIGPROF, handler)
    signal.setitimer(signal.ITIMER_PROF, 30, 30)
"""


def test_handlers_set_after_clean_looks_are_caught_through_every_route(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_routes=ROUTES)
    result = guarded(pytester, "-p", "no:faulthandler")
    assert result.ret == 1, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=9)
    got = {(name, code) for name, code, _ in findings(result)}
    assert got == {
        ("test_through_signal_signal", "HRM607"), ("test_through_a_name_imported_from_signal", "HRM607"),
        ("test_through_the_c_module", "HRM607"),
        ("test_cpu_timer_after_clean_looks", "HRM607"), ("test_cpu_timer_after_clean_looks", "HRM615"),
    }, result.stdout.str()


EARLY = """
import _signal

# the C function, held before the guard's session wraps it: calls through it are not counted
HELD = {"signal": _signal.signal}
"""

HELD_TESTS = """
import signal

import early
""" + CLEAN_START + """

def test_through_a_held_original():
    early.HELD["signal"](signal.SIGUSR1, handler)


def test_clean_3():
    pass


def test_cpu_timer_through_a_held_original():
    early.HELD["signal"](signal.SIGVTALRM, handler)
    signal.setitimer(signal.ITIMER_VIRTUAL, 30, 30)
"""


def test_an_original_held_before_the_session_makes_the_watches_read_every_look(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(early=EARLY, test_held=HELD_TESTS)
    result = guarded(pytester, "-p", "early", "-p", "no:faulthandler")
    assert result.ret == 1, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=5)
    got = {(name, code) for name, code, _ in findings(result)}
    assert got == {
        ("test_through_a_held_original", "HRM607"),
        ("test_cpu_timer_through_a_held_original", "HRM607"), ("test_cpu_timer_through_a_held_original", "HRM615"),
    }, result.stdout.str()


REPLACED_TESTS = """
import signal
import sys

import _signal


def handler(*args):
    pass


def test_clean_1():
    pass


def test_replaces_the_wrapper():
    wrapper = _signal.signal
    _signal.signal = [each.cell_contents for each in wrapper.__closure__
                      if getattr(each.cell_contents, "__module__", "") == "_signal"][0]


def test_clean_2():
    pass


def test_through_the_unwrapped_function():
    _signal.signal(signal.SIGUSR1, handler)


def test_imports_a_fresh_c_module():
    del sys.modules["_signal"]
    import _signal as fresh

    assert fresh is not _signal
    fresh.signal(signal.SIGUSR2, handler)
"""


def test_a_wrapper_or_module_replaced_in_a_test_is_not_trusted(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_replaced=REPLACED_TESTS)
    result = guarded(pytester, "-p", "no:faulthandler")
    assert result.ret == 1, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=5)
    got = {(name, code) for name, code, _ in findings(result)}
    assert got == {("test_through_the_unwrapped_function", "HRM607"),
                   ("test_imports_a_fresh_c_module", "HRM607")}, result.stdout.str()
