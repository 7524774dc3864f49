"""Issue 16, the baseline half: no data loss, no hang, nothing a reader refuses.

Through the real ``flake8-hermetic`` command (a subprocess, or ``cli.main``
in-process for the property test, which runs it hundreds of times) on a
project of the test's own.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_hermetic import cli
from tests.helpers import TIMEOUT, child_env, flake8, hermetic, write_tree

POSIX_ONLY = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs, devices and such file names are POSIX")
CONFIG = "[flake8]\nselect = HRM105,HRM900\nhermetic-test-files = *.py\n"
CHDIR = "import os\n\n\ndef test_a(t):\n    os.chdir(t)\n"
BASELINE = "hermetic-baseline.txt"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "project", {"setup.cfg": CONFIG, "tests/test_a.py": CHDIR})


def lines_of(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


# -- data loss: what the baseline path is -------------------------------------------------

def _fifo(project: Path) -> Path:
    os.mkfifo(project / "fifo.txt")
    return project / "fifo.txt"


def _directory(project: Path) -> Path:
    (project / "dir.txt").mkdir()
    return project / "dir.txt"


def _device(name: str) -> Path:
    return Path(os.devnull).parent / name  # only ever read, never handed to a command that writes


def _null_device(project: Path) -> Path:
    """A character device like the null device, made in the project: run as
    root, a broken command replaces the copy, never the machine's own."""
    null = os.stat(os.devnull)
    try:
        os.mknod(project / "null.txt", 0o666 | stat.S_IFCHR, null.st_rdev)
    except PermissionError:
        pytest.skip("making a device node needs root (as in a CI container, where the bug bit)")
    return project / "null.txt"


NOT_FILES = [
    pytest.param(_fifo, id="fifo"),
    pytest.param(_directory, id="directory"),
    pytest.param(_null_device, id="null-device"),
]
COMMANDS = [pytest.param("regenerate", id="regenerate"), pytest.param("prune", id="prune")]


@POSIX_ONLY
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("make", NOT_FILES)
def test_a_baseline_path_that_is_not_a_regular_file_is_refused_and_left_alone(
    project: Path, command: str, make: Callable[[Path], Path]
) -> None:
    target = make(project)
    before = os.lstat(target)
    result = hermetic(["baseline", command, "--baseline", str(target)], cwd=project)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert "not a regular file; refusing to replace it" in result.stderr
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


@POSIX_ONLY
def test_a_symlinked_baseline_is_written_through_inside_the_project_refused_outside(
    project: Path, tmp_path: Path
) -> None:
    (project / "ci").mkdir()
    (project / BASELINE).symlink_to(Path("ci") / "known.txt")
    result = hermetic(["baseline", "regenerate"], cwd=project)
    assert result.returncode == 0, result.stderr
    assert (project / BASELINE).is_symlink()  # still the link, the file behind it written
    assert lines_of(project / "ci" / "known.txt") == ["tests/test_a.py::test_a\tHRM105\tos.chdir(t)"]

    outside = tmp_path / "elsewhere.txt"
    outside.write_text("notes\n", encoding="utf-8")
    link = project / "out.txt"
    link.symlink_to(outside)
    result = hermetic(["baseline", "regenerate", "--baseline", "out.txt"], cwd=project)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"out.txt:1: is a symlink to {outside.resolve()}, outside the project "
        f"({project.resolve()}); refusing to write through it"
    ]
    assert link.is_symlink() and outside.read_text(encoding="utf-8") == "notes\n"


ENDLESS = [
    pytest.param(_fifo, id="fifo"),
    pytest.param(lambda project: _device("zero"), id="zero"),
    pytest.param(lambda project: _device("urandom"), id="urandom"),
    pytest.param(lambda project: project / "tests", id="directory"),
]
READERS = [pytest.param(["check"], id="check"), pytest.param(["baseline", "check"], id="baseline-check")]


@POSIX_ONLY
@pytest.mark.parametrize("command", READERS)
@pytest.mark.parametrize("make", ENDLESS)
def test_a_baseline_that_never_ends_is_refused_at_once_not_read(
    project: Path, command: list[str], make: Callable[[Path], Path]
) -> None:
    made = make(project)
    target = os.path.relpath(made, project) if made.is_relative_to(project) else str(made)  # as the command shows it
    result = hermetic([*command, "--baseline", target], cwd=project)  # the helper's timeout fails a hang
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"{target}:1: cannot read: ") and len(result.stderr.splitlines()) == 1


@POSIX_ONLY
def test_flake8_with_a_fifo_baseline_says_so_at_once(project: Path) -> None:
    _fifo(project)
    plain = flake8(["--hermetic-baseline=fifo.txt", "tests"], cwd=project)
    assert plain.returncode != 0 and "Traceback" not in plain.stderr
    assert plain.stderr.strip().endswith("fifo.txt:1: cannot read: a FIFO, not a regular file")


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=TIMEOUT)
    return process.returncode, out, err


def test_two_regenerates_at_once_keep_both_runs_entries(project: Path) -> None:
    """Each run lints its own directory; the slow one read the baseline before
    the fast one wrote it. Without the lock the slow one's write drops the
    fast one's entries (both exit 0)."""
    slow = {f"slow/test_{index}.py": CHDIR for index in range(40)}
    big = "import os\n\n\n" + "".join(f"def test_{n}(t):\n    os.chdir(t)\n\n\n" for n in range(2500))
    write_tree(project, {**slow, "slow/test_big.py": big, "fast/test_f.py": CHDIR})
    env = child_env(project / ".home")
    (project / ".home").mkdir()
    # --allow-growth: whichever run writes second adds to the file the first one created
    command = [sys.executable, "-m", "flake8_hermetic", "baseline", "regenerate", "--allow-growth", "-j", "1"]
    with contextlib.ExitStack() as stack:
        runs = [
            stack.enter_context(subprocess.Popen(
                [*command, where], cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            ))
            for where in ("slow", "fast")
        ]
        outcomes = [_finish(run) for run in runs]
    assert [code for code, _, _ in outcomes] == [0, 0], outcomes
    paths = {line.split("::")[0] for line in lines_of(project / BASELINE)}
    assert "fast/test_f.py" in paths and "slow/test_big.py" in paths
    assert len(lines_of(project / BASELINE)) == 40 + 2500 + 1
    assert not (project / f"{BASELINE}.lock").exists()


# -- hostile names: what the writer writes, the reader reads -------------------------------

HOSTILE = {
    "backslash": "a\\b_test.py",
    "newline": "x\ny_test.py",
    "line-separator": "x\u2028y_test.py",
    "next-line": "x\x85y_test.py",
    "tab": "t\tab_test.py",
    "leading-space": " lead_test.py",
    "leading-space-in-a-directory": "dir/ sp/t_test.py",
    "double-colon": "a::b_test.py",
    "conflict-marker": "=======_test.py",
    "comment-directory": "#dir/t_test.py",
    "percent": "p%41_test.py",
    "drive-like": "c:x_test.py",
}


@POSIX_ONLY
@pytest.mark.parametrize("name", [pytest.param(name, id=key) for key, name in HOSTILE.items()])
def test_a_hostile_file_name_round_trips_through_regenerate_check_prune(tmp_path: Path, name: str) -> None:
    root = write_tree(tmp_path / "project", {"setup.cfg": CONFIG, name: CHDIR, "test_plain.py": CHDIR})
    assert hermetic(["baseline", "regenerate"], cwd=root).returncode == 0
    written = (root / BASELINE).read_bytes()
    judged = hermetic(["baseline", "check"], cwd=root)
    summary = f"{BASELINE}: 2 entries, 2 judged, all current (2 test files linted)"
    assert (judged.returncode, judged.stdout.splitlines()[-1]) == (0, summary), (
        judged.stdout + judged.stderr
    )
    pruned = hermetic(["baseline", "prune"], cwd=root)
    assert (pruned.returncode, pruned.stdout.splitlines()[0]) == (0, "no changes"), pruned.stdout + pruned.stderr
    again = hermetic(["baseline", "regenerate"], cwd=root)
    assert again.returncode == 0 and (root / BASELINE).read_bytes() == written
    quiet = hermetic(["check"], cwd=root)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr


def test_an_ordinary_path_is_written_as_it_is_and_an_escaped_one_reads_back() -> None:
    from flake8_hermetic.baseline.format import Entry, escape_path, parse, render, unescape_path

    ordinary = ["tests/test_x.py", "tests/unit/test_ü.py", "a b/c d_test.py"]
    assert [escape_path(path) for path in ordinary] == ordinary
    entry = Entry("#x/a::b\t c_test.py", "TestA::test_b", "HRM105", "os.chdir(t)")
    text = render([], [entry])
    assert text == "%23x/a%3A%3Ab%09 c_test.py::TestA::test_b\tHRM105\tos.chdir(t)\n"
    assert parse(text, "b.txt").entries == [entry]
    assert unescape_path("bad%FF_test.py") == "bad\udcff_test.py"  # a POSIX name that is not UTF-8


def _names() -> st.SearchStrategy[str]:
    hostile = st.sampled_from(["\\", "\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "::", ":", "#",
                               "=======", "<<<<<<<", "|", " ", "%", "%41", "*", "?", "ü", "\u3000", "~"])
    plain = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1, max_size=4)
    name = st.lists(st.one_of(hostile, plain), min_size=1, max_size=4).map("".join)
    excluded = (".", "..", ".git", ".hg", ".svn", ".tox", ".nox", ".eggs", "CVS", "__pycache__", ".bzr")
    return name.filter(lambda n: n not in excluded and not n.endswith(".egg") and len(n.encode()) < 100)


def _cli(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue() + err.getvalue()


@POSIX_ONLY
@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(names=st.lists(_names(), min_size=1, max_size=3, unique=True), directory=_names())
def test_generated_file_names_survive_regenerate_check_prune_regenerate(
    names: list[str], directory: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path_factory.mktemp("names")
    files = [f"{name}.py" for name in names] + [f"{directory}/{name}.py" for name in names]
    write_tree(root, {"setup.cfg": CONFIG, **{path: CHDIR for path in files}})
    monkeypatch.chdir(root)
    code, output = _cli(["baseline", "regenerate", "-j", "1"])
    assert code == 0, output
    written = (root / BASELINE).read_bytes()
    assert len(lines_of(root / BASELINE)) == len(files), output  # no entry lost, none refused
    code, output = _cli(["baseline", "check", "-j", "1"])
    summary = f"{BASELINE}: {len(files)} entries, {len(files)} judged, all current ({len(files)} test files linted)"
    assert (code, output.splitlines()[-1]) == (0, summary), output
    code, output = _cli(["baseline", "prune", "-j", "1"])
    assert (code, output.splitlines()[0]) == (0, "no changes"), output
    code, output = _cli(["baseline", "regenerate", "-j", "1"])
    assert code == 0 and (root / BASELINE).read_bytes() == written, output
    code, output = _cli(["check", "-j", "1"])
    assert code == 0, output


# -- codes -----------------------------------------------------------------------------

@pytest.mark.parametrize("code", [pytest.param("HRM1\u0660\u0665", id="two-arabic-indic"),
                                  pytest.param("HRM\u0661\u0660\u0665", id="three-arabic-indic")])
def test_a_code_with_non_ascii_digits_is_refused(project: Path, code: str) -> None:
    (project / BASELINE).write_text(f"tests/test_a.py::test_a\t{code}\tos.chdir(t)\n", encoding="utf-8")
    result = hermetic(["baseline", "check"], cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [f"{BASELINE}:1: {code!r} is not an error code of the form HRMnnn"]


def test_an_entry_no_rule_owns_is_reported_by_baseline_check(project: Path) -> None:
    (project / BASELINE).write_text(
        "tests/test_a.py::test_a\tHRM105\tos.chdir(t)\n"
        "tests/test_a.py::test_a\tHRM999\tos.chdir(t)\n"
        "tests/test_a.py::test_a\tHRM801\tos.chdir(t)\n",  # a pattern rule whose rules file is gone
        encoding="utf-8",
    )
    result = hermetic(["baseline", "check"], cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{BASELINE}:2: no rule owns HRM999 (an unknown code, or a pattern rule gone from the rules file): "
        "'tests/test_a.py::test_a\\tHRM999\\tos.chdir(t)'",
        f"{BASELINE}:3: no rule owns HRM801 (an unknown code, or a pattern rule gone from the rules file): "
        "'tests/test_a.py::test_a\\tHRM801\\tos.chdir(t)'",
    ]
