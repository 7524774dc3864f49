"""How the runtime guard looks: only at what may have changed, and never blind without saying so.

The residue watches list a directory again only when the kernel reported
a change in it (inotify) or, where it cannot watch, when its mtime moved;
the environment's state is rebuilt only when its mapping differs, and
child processes are listed only when the kernel says one exists. These
tests pin both halves: a change is still seen (by a child process too),
and no change costs no listing. Then the
fallbacks: a directory whose watch is lost goes back to its mtime, and
child processes are found through ``psutil`` where ``/proc`` has no
children files, and said to be unwatched where neither is there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from flake8_hermetic.guard import dirwatch, processes, stable, watches
from flake8_hermetic.guard import residue as residue_module
from flake8_hermetic.guard.monitor import Monitor
from flake8_hermetic.guard.session import UNWATCHED_CHILDREN
from tests.helpers import REPO, TIMEOUT
from tests.test_guard import LEAKY_CONFTEST

pytest_plugins = ["pytester"]


def _inotify() -> bool:
    notifier = dirwatch.Notifier()
    works = notifier.fd >= 0
    notifier.close()
    return works


INOTIFY = _inotify()  # the kernel reports changes (Linux); elsewhere the mtime path is the one used
PROC_CHILDREN = processes._has_proc_children()


@pytest.fixture
def notifier() -> Iterator[dirwatch.Notifier]:
    found = dirwatch.Notifier()
    yield found
    found.close()


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The directories the residue watches list, in order."""
    listed: list[str] = []
    real = residue_module._listing

    def counted(directory: str, ignored: object) -> set[str]:
        listed.append(directory)
        return real(directory, ignored)  # type: ignore[arg-type]

    monkeypatch.setattr(residue_module, "_listing", counted)
    return listed


def make_in_child(path: Path) -> None:
    """Create ``path`` from another process (the audit hook cannot see it; the kernel can)."""
    subprocess.run([sys.executable, "-c", "import sys; open(sys.argv[1], 'w').close()", str(path)],
                   cwd=path.parent, check=True, timeout=TIMEOUT)


@pytest.mark.skipif(not INOTIFY, reason="no inotify here: the mtime path (next test) is the one used")
def test_a_watched_directory_is_listed_again_only_after_a_change(
    tmp_path: Path, notifier: dirwatch.Notifier, listings: list[str]
) -> None:
    top, sub = tmp_path / "top", tmp_path / "top" / "tests"
    sub.mkdir(parents=True)
    residue = watches.Residue("checkout", {str(top): "", str(sub): "tests/"}, [], notifier)
    assert notifier.watched == {str(top), str(sub)}

    assert residue.take() == {"tests"}
    assert len(listings) == 2
    # nothing moved: no listing (the mtime path relists for 2 s after a change)
    assert [residue.take() for _ in range(5)] == [{"tests"}] * 5
    assert len(listings) == 2

    make_in_child(sub / "out.txt")
    assert residue.take() == {"tests", "tests/out.txt"}
    assert listings[2:] == [str(sub)]  # only the directory that moved
    (top / "build").mkdir()
    (sub / "out.txt").unlink()
    assert residue.take() == {"tests", "build"}
    assert residue.take() == {"tests", "build"}
    assert len(listings) == 5


def test_without_a_notifier_the_mtime_still_finds_every_change(tmp_path: Path, listings: list[str]) -> None:
    residue = watches.Residue("tmp", {str(tmp_path): ""}, ["ignored-*"])
    assert residue.take() == frozenset()
    make_in_child(tmp_path / "left.txt")
    (tmp_path / "ignored-1").mkdir()
    assert residue.take() == {"left.txt"}
    assert listings  # listed: no notifier to ask


@pytest.mark.skipif(not INOTIFY, reason="no inotify here")
def test_a_directory_whose_watch_is_lost_goes_back_to_its_mtime(tmp_path: Path, notifier: dirwatch.Notifier) -> None:
    watched = tmp_path / "home"
    watched.mkdir()
    residue = watches.Residue("home", {str(watched): "~/"}, [], notifier)
    assert residue.take() == frozenset()
    watched.rmdir()  # the kernel drops the watch with the directory
    assert residue.take() == frozenset()
    assert str(watched) not in notifier.watched
    watched.mkdir()  # a new directory at the same path: not watched, its mtime is
    (watched / ".cache-thing").mkdir()
    assert residue.take() == {"~/.cache-thing"}


def test_the_environment_is_rebuilt_only_when_the_mapping_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    environment = watches.Environment()
    first = environment.take()
    assert environment.take() is first  # nothing written: the same state, not a new reading
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_y (call)")  # pytest's own note
    assert environment.leaks(first, environment.take()) == []
    monkeypatch.setenv("HERMETIC_GUARD_WATCHING", "1")
    second = environment.take()
    assert environment.leaks(first, second) == ["HERMETIC_GUARD_WATCHING set"]
    monkeypatch.setenv("HERMETIC_GUARD_WATCHING", "2")  # same keys, another value
    assert environment.leaks(second, environment.take()) == ["HERMETIC_GUARD_WATCHING changed"]
    monkeypatch.delenv("HERMETIC_GUARD_WATCHING")
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert environment.leaks(first, environment.take()) == []


def test_a_write_that_bypasses_putenv_is_seen_too(monkeypatch: pytest.MonkeyPatch) -> None:
    environment = watches.Environment()
    data = getattr(os.environ, "_data", None)
    if data is None:  # pragma: no cover - another implementation: nothing bypasses putenv here
        pytest.skip("os.environ has no encoded mapping")
    first = environment.take()
    encode_key, encode_value = os.environ.encodekey, os.environ.encodevalue  # type: ignore[attr-defined]
    key, value = encode_key("HERMETIC_GUARD_UNSEEN"), encode_value("1")
    monkeypatch.setitem(data, key, value)  # no putenv call, no audit event: only the mapping shows it
    assert environment.leaks(first, environment.take()) == ["HERMETIC_GUARD_UNSEEN set"]


def test_the_working_directory_is_read_every_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cwd = watches.WorkingDirectory(watches.Roots([]))
    assert cwd.take() == os.getcwd()
    monkeypatch.chdir(tmp_path)
    assert cwd.take() == str(tmp_path)


@pytest.mark.skipif(not processes.kernel_counts_children(), reason="no os.waitid here: the audit hook tells")
def test_children_are_listed_only_when_the_kernel_says_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[frozenset[processes.Child]] = []
    real = processes.running_children

    def counted(root: int | None = None) -> frozenset[processes.Child]:
        listed.append(real(root))
        return listed[-1]

    monkeypatch.setattr(processes, "running_children", counted)
    children = watches.Children(grace=0.0)
    # this process has no child (a hermetic suite leaves none running): no listing, however often asked
    assert [children.take() for _ in range(3)] == [frozenset()] * 3
    assert listed == []
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert {pid for pid, _ in children.take()} == {child.pid}
    finally:
        child.communicate(timeout=TIMEOUT)  # closes its stdin: it exits, and is reaped
    assert children.take() == frozenset()  # listed once more: the child was running at the last look
    assert len(listed) == 2
    assert children.take() == frozenset()  # reaped: the kernel says there is none, nothing is listed
    assert len(listed) == 2


@pytest.mark.skipif(not (PROC_CHILDREN and processes.kernel_counts_children()), reason="no /proc or no os.waitid")
def test_a_child_that_exited_unreaped_is_not_running_and_stays_its_owners() -> None:
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # until it exits, leaving it a zombie
        assert processes.may_have_children()  # the kernel still counts it
        assert child.pid not in {pid for pid, _ in watches.Children(grace=0.0).take()}
    finally:
        child.wait(timeout=TIMEOUT)
    assert child.returncode == 3  # the look did not reap it: its owner still gets the exit status


CHILD_TESTS = """
import subprocess
import sys

import conftest


def test_child():
    conftest.CHILDREN.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]))
"""

NO_PSUTIL = """
import sys

sys.modules["psutil"] = None  # import psutil raises ImportError, as where it is not installed
"""

NO_PROC = """
from flake8_hermetic.guard import processes

processes._has_proc_children = lambda: False  # as where /proc has no children files (not Linux)
"""

NO_WAITID = """
from flake8_hermetic.guard import processes

processes.kernel_counts_children = lambda: False  # as where there is no os.waitid (Windows): the audit hook tells
"""


def guarded_child_run(pytester: pytest.Pytester, *hidden: str) -> pytest.RunResult:
    pytester.makepyfile(conftest=LEAKY_CONFTEST + "".join(hidden), test_child=CHILD_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", "--hermetic-no-baseline",
                                           timeout=300)
    result.assert_outcomes(passed=1)
    return result


@pytest.mark.parametrize("hidden", [
    pytest.param((NO_PSUTIL,), id="proc-without-psutil",
                 marks=pytest.mark.skipif(not PROC_CHILDREN, reason="no /proc children files here")),
    pytest.param((NO_PROC,), id="psutil-without-proc"),
    pytest.param((NO_WAITID,), id="audit-hook-without-waitid"),
])
def test_child_processes_are_found_through_proc_or_psutil(pytester: pytest.Pytester, hidden: tuple[str, ...]) -> None:
    result = guarded_child_run(pytester, *hidden)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["test_child.py::test_child: HRM612 left a child process running: python;*"])
    assert UNWATCHED_CHILDREN not in result.stdout.str()


def test_without_proc_or_psutil_the_run_says_children_are_not_watched(pytester: pytest.Pytester) -> None:
    result = guarded_child_run(pytester, NO_PSUTIL, NO_PROC)
    assert result.ret == 0
    output = result.stdout.str()
    assert UNWATCHED_CHILDREN in output
    assert "HRM612" not in output.replace(UNWATCHED_CHILDREN, "")


NESTED_FIXTURES = """
import os

import pytest


@pytest.fixture(scope="session")
def inner():
    os.environ["HELD_BY_INNER"] = "1"
    yield
    del os.environ["HELD_BY_INNER"]


@pytest.fixture(scope="module")
def outer(request):
    os.environ["HELD_BY_OUTER"] = "1"
    request.getfixturevalue("inner")  # a session fixture set up inside a module fixture's setup
    os.environ["HELD_BY_OUTER_AFTER_INNER"] = "1"  # still the module fixture's, gone with it
    yield
    del os.environ["HELD_BY_OUTER"], os.environ["HELD_BY_OUTER_AFTER_INNER"]


def test_nested_first(outer):
    assert os.environ["HELD_BY_INNER"] == os.environ["HELD_BY_OUTER_AFTER_INNER"] == "1"


def test_nested_second(outer):
    assert os.environ["HELD_BY_INNER"] == "1"
"""

BROKEN_FIXTURE = """
import os

import pytest


@pytest.fixture(scope="module")
def broken(request):
    os.environ["HELD_BY_BROKEN"] = "1"
    request.addfinalizer(lambda: os.environ.pop("HELD_BY_BROKEN"))  # a teardown error if the guard took it away
    raise RuntimeError("setup fails after changing the environment")


def test_broken_first(broken):
    pass


def test_broken_second(broken):
    pass


def test_own_leak_after_them():
    os.environ["LEAKED_BY_TEST"] = "1"
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["plain", "xdist"])
def test_what_a_broader_fixture_holds_while_it_lives_is_no_test_s_leak(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    # held from the end of its setup to its finalizer: a module fixture that sets up a session
    # fixture inside its own setup (the module one ends first), and one whose setup fails after
    # changing state (its finalizer still undoes it)
    pytester.makepyfile(test_a_nested=NESTED_FIXTURES, test_b_broken=BROKEN_FIXTURE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", "--hermetic-no-baseline",
                                           *workers, timeout=300)
    result.assert_outcomes(passed=3, errors=2)  # the two setups that fail; no teardown error
    output = result.stdout.str()
    assert "hermetic guard: 1 new, 0 baselined, 0 stale" in output
    result.stdout.fnmatch_lines(["test_b_broken.py::test_own_leak_after_them: HRM604 *LEAKED_BY_TEST set*"])


def test_a_random_part_tempfile_drew_here_is_normalised_whatever_its_letters(monkeypatch: pytest.MonkeyPatch) -> None:
    from flake8_hermetic.guard import stable as stable_names

    monkeypatch.setattr(stable_names, "MADE", {"qwoedypf", "settings"})
    assert stable_names.stable("editor-qwoedypf.txt~") == "editor-*.txt~"
    assert stable_names.stable("tmpqwoedypf") == "tmp*"
    assert stable_names.stable("editor-zxcvbnml.txt~") == "editor-zxcvbnml.txt~"  # not drawn here: a word
    stable_names.keep_made_in(["editor-qwoedypf.txt~", "config"])
    assert stable_names.MADE == {"qwoedypf"}  # what is no longer there is forgotten
    assert stable_names.stable("notebook-settings.txt") == "notebook-settings.txt"


DRAWN_NAMES = """
import re
import shutil
import tempfile


def test_leaves_a_letters_only_name():
    # draw until tempfile's random part has no digit (about one name in twelve): the shape alone
    # cannot tell those eight letters from a word, only the guard's note of the draw can
    for _ in range(2000):
        path = tempfile.mkdtemp(prefix="twin-")
        if not re.search(r"[0-9]", path.rpartition("twin-")[2]):
            return
        shutil.rmtree(path)
    raise AssertionError("no letters-only name in 2000 draws")
"""


def test_a_residue_name_tempfile_drew_reads_the_same_in_every_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_drawn=DRAWN_NAMES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", "--hermetic-no-baseline",
                                           timeout=300)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["test_drawn.py::test_leaves_a_letters_only_name: HRM601 left 'twin-[*]' *"])


# -- a state that comes back is the same object: the monitor compares by identity first ----------------

def test_the_environment_hands_back_its_state_when_a_write_is_undone(monkeypatch: pytest.MonkeyPatch) -> None:
    environment = watches.Environment()
    first = environment.take()
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_y (setup)")  # during a fixture's setup
    assert environment.take() is first  # read again (the mapping differs), the same state
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    assert environment.take() is first
    monkeypatch.setenv("HERMETIC_GUARD_WATCHING", "1")
    assert environment.take() is not first


def test_a_thread_that_came_and_went_leaves_the_same_state_and_a_new_one_is_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listed: list[int] = []
    real = threading.enumerate

    def counted() -> list[threading.Thread]:
        listed.append(1)
        return real()

    monkeypatch.setattr(threading, "enumerate", counted)
    threads = watches.Threads(grace=0.0)
    first = threads.take()
    assert [threads.take() for _ in range(3)] == [first] * 3
    assert len(listed) == 1  # no thread started or ended: threading's registry says so, nothing is listed
    done = threading.Thread(target=lambda: None)
    done.start()
    done.join(TIMEOUT)
    assert threads.take() is first
    stop = threading.Event()
    running = threading.Thread(target=stop.wait, args=(TIMEOUT,))
    running.start()
    try:
        assert threads.take() - first == {running}
        assert threads.take() - first == {running}  # nothing changed since: the same answer
    finally:
        stop.set()
        running.join(TIMEOUT)
    assert threads.take() == first  # an equal state (the monitor makes it the expected one)


def test_an_equal_state_becomes_the_expected_one() -> None:
    class Fresh(watches.Watch):
        """The same path every time, as a new tuple each time (what a rebuilt state is)."""

        kind = "syspath"

        def take(self) -> tuple[str, ...]:
            self.last = tuple(["a", "b"])
            return self.last

        def leaks(self, expected: tuple[str, ...], current: tuple[str, ...]) -> list[str]:
            return [] if expected == current else ["changed"]

    watch = Fresh()
    monitor = Monitor([watch], claims=False)
    monitor.begin()
    assert monitor.judge("test_x.py::test_y", "test_x.py", 0) == []
    assert monitor.expected is not None
    assert monitor.expected["syspath"] is watch.last  # the next look of an unchanged state is `is`


def test_drawn_names_are_pruned_again_only_when_one_was_drawn_or_the_entries_moved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stable, "MADE", {"qwoedypf"})
    monkeypatch.setattr(stable, "_PRUNED", [None, -1])
    entries = frozenset({"tmpqwoedypf"})
    stable.keep_made_in(entries)
    assert stable.MADE == {"qwoedypf"}
    stable.MADE.add("zxcvbnml")  # drawn in the next test, and removed by it: the same entries
    stable.keep_made_in(entries)
    assert stable.MADE == {"qwoedypf"}
    stable.keep_made_in(frozenset({"config"}))  # the residue was removed: the entries moved
    assert stable.MADE == set()


FORKED = """
import os, sys
from flake8_hermetic.guard import dirwatch

parent = dirwatch.Notifier()
if parent.fd < 0:
    sys.exit(3)  # no inotify here
assert parent.add(sys.argv[1])
assert parent.quiet("tmp") and parent.quiet("tmp")  # nothing moved (the second ask reads the events)
pid = os.fork()
if pid == 0:
    code = 0
    try:
        # the parent's instance: its descriptor is shared, so the child must not take its events
        if parent.quiet("tmp") or parent.fd != -1 or parent.changed("tmp", [sys.argv[1]]) != {sys.argv[1]}:
            code = 10
        own = dirwatch.Notifier()  # one made in the child works
        if own.fd < 0 or not own.add(sys.argv[1]) or not own.quiet("tmp"):
            code = 11
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
os.mkdir(os.path.join(sys.argv[1], "made"))
assert not parent.quiet("tmp")  # the parent's instance still answers: the child took none of its events
assert parent.changed("tmp", [sys.argv[1]]) == {sys.argv[1]}
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not (INOTIFY and hasattr(os, "fork")), reason="no inotify or no fork here")
def test_a_forked_child_does_not_take_its_parents_events(tmp_path: Path) -> None:
    watched = tmp_path / "watched"
    watched.mkdir()
    code = {**os.environ, "PYTHONPATH": str(REPO)}  # the package under test, wherever it is installed from
    done = subprocess.run([sys.executable, "-c", FORKED, str(watched)], cwd=tmp_path, timeout=TIMEOUT, check=False,
                          capture_output=True, text=True, env=code)
    assert done.returncode == 0, done.stderr
