"""How the runtime guard looks: only at what may have changed, and never blind without saying so.

The residue watches list a directory again only when the kernel reported
a change in it (inotify) or, where it cannot watch, when its mtime moved;
the environment and the working directory are read again only after the
audit hook saw a write. These tests pin both halves: a change is still
seen (by a child process too), and no change costs no listing. Then the
fallbacks: a directory whose watch is lost goes back to its mtime, and
child processes are found through ``psutil`` where ``/proc`` has no
children files, and said to be unwatched where neither is there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flake8_hermetic.guard import dirwatch, processes, watches
from flake8_hermetic.guard.audit import AUDIT
from flake8_hermetic.guard.session import UNWATCHED_CHILDREN
from tests.helpers import TIMEOUT
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
    real = watches._listing

    def counted(directory: str, ignored: object) -> set[str]:
        listed.append(directory)
        return real(directory, ignored)  # type: ignore[arg-type]

    monkeypatch.setattr(watches, "_listing", counted)
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


@pytest.fixture
def counting() -> Iterator[None]:
    """The audit hook on, as in a guarded session (put back as it was: this suite may be guarded itself)."""
    previous = AUDIT.install(AUDIT.directories)
    assert AUDIT.counting
    yield
    AUDIT.restore(previous)


def test_the_environment_is_read_again_only_after_a_write(counting: None, monkeypatch: pytest.MonkeyPatch) -> None:
    environment = watches.Environment()
    first = environment.take()
    assert environment.take() is first  # nothing written: the same state, not a new reading
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_y (call)")  # pytest's own note
    assert environment.take() is first
    monkeypatch.setenv("HERMETIC_GUARD_WATCHING", "1")
    second = environment.take()
    assert second is not first
    assert environment.leaks(first, second) == ["HERMETIC_GUARD_WATCHING set"]
    monkeypatch.delenv("HERMETIC_GUARD_WATCHING")
    assert environment.leaks(first, environment.take()) == []


def test_without_the_hook_the_environment_is_read_every_time(counting: None, monkeypatch: pytest.MonkeyPatch) -> None:
    environment = watches.Environment()
    data = getattr(os.environ, "_data", None)
    if data is None:  # pragma: no cover - another implementation: nothing bypasses putenv here
        pytest.skip("os.environ has no encoded mapping")
    first = environment.take()
    encode_key, encode_value = os.environ.encodekey, os.environ.encodevalue  # type: ignore[attr-defined]
    key, value = encode_key("HERMETIC_GUARD_UNSEEN"), encode_value("1")
    monkeypatch.setitem(data, key, value)  # a write that calls no putenv: the counter cannot see it
    assert environment.take() is first
    monkeypatch.setattr(AUDIT, "installed", False)  # as when another audit hook refused the guard's
    assert environment.leaks(first, environment.take()) == ["HERMETIC_GUARD_UNSEEN set"]


def test_the_working_directory_is_read_again_only_after_a_chdir(
    counting: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cwd = watches.WorkingDirectory(watches.Roots([]))
    assert cwd.take() == os.getcwd()
    monkeypatch.chdir(tmp_path)
    assert cwd.take() == str(tmp_path)


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
