"""The guard's own life in a run: its settings, its temp dir, and what it puts back.

Through real pytest runs (``pytester.runpytest_subprocess``): a grace
period that is not a number of seconds is a usage error; the per-process
temp dir of a run that died (``os._exit()``, a killed xdist worker) is
removed by the next run or by the controller, never one a live run still
uses; a temp file a test still references is not pulled from under it; a
test that assigns ``tempfile.tempdir`` is reported and the temp-dir watch
keeps seeing; a pending timer is reported and cancelled before a leaked
handler is put back (which would end the run when the timer fires).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers import TIMEOUT

pytest_plugins = ["pytester"]

fcntl = pytest.importorskip("fcntl")  # the lock that tells a live run's temp dir from a dead one's

GUARD_DIR = "hermetic-guard-"


def guarded(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", "--hermetic-no-baseline",
                                         *args, timeout=TIMEOUT)


def findings(result: pytest.RunResult) -> set[tuple[str, str]]:
    """(test name, code) of each finding the guard's section lists."""
    found = set()
    for line in result.stdout.lines:
        nodeid, _, rest = line.partition(": HRM")
        if rest and "::" in nodeid:
            found.add((nodeid.rpartition("::")[2], "HRM" + rest[:3]))
    return found


def guard_dirs(root: Path) -> list[str]:
    return sorted(entry.name for entry in root.iterdir() if entry.name.startswith(GUARD_DIR))


@pytest.fixture
def system_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp dir the guarded runs start from (where they make theirs, and sweep), out of their checkouts."""
    root = tmp_path_factory.mktemp("system-tmp")
    monkeypatch.setenv("TMPDIR", str(root))
    return root


# -- hermetic_guard_grace ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [pytest.param(value, id=name) for value, name in [
    ("abc", "word"), ("", "empty"), ("inf", "inf"), ("1e300", "huge"), ("-1", "negative"), ("nan", "nan"),
    ("601", "over-the-bound")]])
def test_a_grace_that_is_not_seconds_from_0_to_600_is_a_usage_error_naming_the_key(
    pytester: pytest.Pytester, value: str
) -> None:
    pytester.makeini(f"[pytest]\nhermetic_guard_grace = {value}\n")
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = guarded(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == (
        f"ERROR: {pytester.path / 'tox.ini'}: hermetic_guard_grace = {value!r}: expected seconds from 0 to 600")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_bad_grace_stops_an_xdist_run_before_any_test_and_an_override_is_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = guarded(pytester, "-n", "2", "-o", "hermetic_guard_grace=forever")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: -o hermetic_guard_grace = 'forever': expected seconds from 0 to 600" in result.stderr.lines
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "passed" not in result.stdout.str()


@pytest.mark.parametrize("value", [pytest.param("0", id="zero"), pytest.param("0.2", id="fraction"),
                                   pytest.param("600", id="the-bound")])
def test_a_grace_from_0_to_600_is_taken(pytester: pytest.Pytester, value: str) -> None:
    pytester.makeini(f"[pytest]\nhermetic_guard_grace = {value}\n")
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = guarded(pytester)
    result.assert_outcomes(passed=1)
    assert result.ret == 0


# -- the per-process temp dir ------------------------------------------------------------------------


def make_kept(directories: list[Path]) -> None:
    """Directories with a file a sweep must not remove."""
    for directory in directories:
        directory.mkdir()
        (directory / "data").write_text("keep", encoding="utf-8")


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"], cwd=Path(__file__).parent)
    child.wait(timeout=TIMEOUT)
    return child.pid


def test_a_dead_runs_temp_dir_is_removed_by_the_next_run_and_nothing_else(
    pytester: pytest.Pytester, system_tmp: Path, tmp_path: Path
) -> None:
    pytester.makepyfile(test_exit="""
        import os
        import tempfile


        def test_exit():
            open(os.path.join(tempfile.gettempdir(), "left-by-the-dead-run"), "w").close()
            os._exit(3)


        def test_clean():
            pass
    """)
    died = guarded(pytester, "-k", "exit")
    assert died.ret == 3
    (left,) = guard_dirs(system_tmp)
    assert left.startswith(f"{GUARD_DIR}run-")
    assert os.listdir(system_tmp / left) == ["left-by-the-dead-run"]

    dead = dead_pid()
    live = system_tmp / f"{GUARD_DIR}run-{os.getpid()}-abcd1234"  # a live process's: kept
    locked = system_tmp / f"{GUARD_DIR}gw0-{dead}-locked00"  # its pid gone here, but a process holds the lock
    victim = tmp_path / "victim"
    make_kept([live, locked, victim])
    (system_tmp / f"{GUARD_DIR}run-{dead}-symlink0").symlink_to(victim)  # not a directory of ours
    (system_tmp / f"{GUARD_DIR}run-{dead}-notadir0").write_text("", encoding="utf-8")
    (system_tmp / f"{GUARD_DIR}old-style").mkdir()  # no pid in the name: an earlier version's, left alone
    holder = os.open(locked, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        clean = guarded(pytester, "-k", "clean")
    finally:
        os.close(holder)
    clean.assert_outcomes(passed=1, deselected=1)
    assert clean.ret == 0
    assert guard_dirs(system_tmp) == sorted(path.name for path in (
        live, locked, system_tmp / f"{GUARD_DIR}run-{dead}-symlink0", system_tmp / f"{GUARD_DIR}run-{dead}-notadir0",
        system_tmp / f"{GUARD_DIR}old-style"))
    assert all((directory / "data").read_text(encoding="utf-8") == "keep" for directory in (live, locked, victim))


def test_the_controller_removes_the_temp_dir_of_a_killed_worker(pytester: pytest.Pytester, system_tmp: Path) -> None:
    pytester.makepyfile(test_kill="""
        import os
        import signal
        import tempfile


        def test_killed():
            open(os.path.join(tempfile.gettempdir(), "left-by-the-killed-worker"), "w").close()
            os.kill(os.getpid(), signal.SIGKILL)


        def test_other():
            pass
    """)
    result = guarded(pytester, "-n", "2")
    result.assert_outcomes(passed=1, failed=1)  # xdist reports the crash as the test's failure
    assert "crashed" in result.stdout.str()
    assert guard_dirs(system_tmp) == []


def test_two_concurrent_guarded_runs_keep_each_others_temp_dirs(
    pytester: pytest.Pytester, system_tmp: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    signals, first_project = tmp_path_factory.mktemp("signals"), tmp_path_factory.mktemp("first-project")
    ready, go = signals / "ready", signals / "go"
    (first_project / "test_slow.py").write_text(textwrap.dedent(f"""
        import os
        import tempfile
        import time
        from pathlib import Path


        def test_slow():
            mine = Path(tempfile.gettempdir())
            (mine / "in-use").write_text("mine")
            Path({str(ready)!r}).write_text(str(mine))
            deadline = time.monotonic() + 120
            while not Path({str(go)!r}).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert (mine / "in-use").read_text() == "mine"
            os.remove(mine / "in-use")
    """), encoding="utf-8")
    pytester.makepyfile(test_quick="def test_quick():\n    pass\n")
    first = pytester.popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--hermetic-guard",
                            "--hermetic-no-baseline"], stdin=subprocess.DEVNULL, cwd=first_project)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not ready.exists() and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert ready.exists(), first.communicate(timeout=TIMEOUT)
        in_use = Path(ready.read_text(encoding="utf-8"))
        second = guarded(pytester)
        second.assert_outcomes(passed=1)
        assert in_use.is_dir()
        assert guard_dirs(system_tmp) == [in_use.name]  # the second run's own is gone
    finally:
        go.write_text("", encoding="utf-8")
        out, err = first.communicate(timeout=TIMEOUT)
    assert first.returncode == 0, out + err
    assert guard_dirs(system_tmp) == []


def test_a_temp_file_still_referenced_at_the_end_makes_no_noise_and_goes_with_the_next_run(
    pytester: pytest.Pytester, system_tmp: Path
) -> None:
    pytester.makepyfile(test_keep="""
        import tempfile

        KEPT = []


        def test_keeps_a_temp_file():
            KEPT.append(tempfile.NamedTemporaryFile(suffix=".kept"))
            KEPT.append(tempfile.TemporaryDirectory(suffix=".kept"))


        def test_clean():
            pass
    """)
    result = guarded(pytester, "-k", "keeps")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*test_keeps_a_temp_file: HRM601 left 'tmp*.kept' *"])
    assert result.stderr.str() == ""  # no "Exception ignored in ... FileNotFoundError" after the summary
    assert "Error" not in result.stdout.str()
    (left,) = guard_dirs(system_tmp)
    assert os.listdir(system_tmp / left) == []  # the file went with its finalizer: the directory with the next run
    clean = guarded(pytester, "-k", "clean")
    assert clean.ret == 0
    assert guard_dirs(system_tmp) == []


# -- what a test changes in the guard's own setting ------------------------------------------------


def test_assigning_tempfile_tempdir_is_reported_and_put_back(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tempdir="""
        import tempfile


        def test_unsets_it():
            tempfile.tempdir = None


        def test_points_tempfile_elsewhere(tmp_path):
            tempfile.tempdir = str(tmp_path)


        def test_residue_after_it():  # made in the guard's directory again, so seen
            tempfile.mkdtemp()
    """)
    result = guarded(pytester, "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "*test_points_tempfile_elsewhere: HRM616 left tempfile.tempdir changed to <basetemp>/test_points_tempfile*"
        "; use monkeypatch.setattr(tempfile, \"tempdir\", ...)",
    ])
    assert findings(result) == {
        ("test_points_tempfile_elsewhere", "HRM616"), ("test_unsets_it", "HRM616"),
        ("test_residue_after_it", "HRM601"),  # the temp-dir watch still sees the guard's directory
    }


TIMER_TESTS = """
import signal
import time

import pytest


def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_alarm():
    signal.signal(signal.SIGALRM, lambda *args: None)
    signal.alarm(1)


def test_after_alarm():
    time.sleep(1.5)  # the alarm would fire here, with the default action back


def test_real_timer():
    signal.setitimer(signal.ITIMER_REAL, 0.3, 0.3)  # the handler of the session: no handler finding


def test_after_real_timer():
    time.sleep(0.8)


def test_profiling_timer():
    signal.signal(signal.SIGPROF, lambda *args: None)
    signal.setitimer(signal.ITIMER_PROF, 0.05, 0.05)


def test_virtual_timer():
    signal.signal(signal.SIGVTALRM, lambda *args: None)
    signal.setitimer(signal.ITIMER_VIRTUAL, 0.05, 0.05)


def test_after_cpu_timers():
    burn(0.5)


@pytest.fixture(scope="module")
def watchdog():
    previous = signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    signal.setitimer(signal.ITIMER_REAL, 60)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGUSR2, previous)


def test_under_a_watchdog(watchdog):
    pass


def test_under_it_too(watchdog):
    pass
"""


def test_a_pending_timer_is_reported_and_cancelled_before_the_handler_is_put_back(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import signal

        signal.signal(signal.SIGALRM, lambda *args: None)  # the session's own handler: expected
    """)
    pytester.makepyfile(test_timers=TIMER_TESTS)
    result = guarded(pytester, "-p", "no:randomly", "-p", "no:faulthandler")
    assert result.ret == 1, result.stdout.str() + result.stderr.str()  # not 142 (Alarm clock) nor -27 (SIGPROF)
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines([
        "*test_alarm: HRM615 left a timer pending: ITIMER_REAL (SIGALRM) (the guard cancelled it); *",
    ])
    assert findings(result) == {
        ("test_alarm", "HRM607"), ("test_alarm", "HRM615"), ("test_real_timer", "HRM615"),
        ("test_profiling_timer", "HRM607"), ("test_profiling_timer", "HRM615"),
        ("test_virtual_timer", "HRM607"), ("test_virtual_timer", "HRM615"),
    }
