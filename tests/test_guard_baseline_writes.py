"""``--hermetic-guard-update`` and ``--hermetic-guard-report`` write as the static commands do.

Through real pytest runs in a project of the test's own: the update takes
the static writers' lock and reads the baseline again under it, writes
through a symlink only when it stays in the project, never follows a
directory symlink out of it, keeps the entries it does not own, writes
only what the parser reads back, only shrinks an existing file unless
told, and refuses a bad baseline or report path in one line.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flake8_hermetic.baseline.format import Entry, locked, parse, render, writable_entry, write_atomic
from flake8_hermetic.guard.monitor import Leak
from flake8_hermetic.guard.verdict import decide
from tests.helpers import TIMEOUT, child_env, flake8, hermetic, run, write_tree

USAGE_ERROR = 4

LEAKY_A = """\
    import os


    def test_a():
        os.environ["LEAKY_A"] = "1"
"""
LEAKY_B = LEAKY_A.replace("LEAKY_A", "LEAKY_B").replace("test_a", "test_b")
CHDIR = """\
    import os


    def test_c():
        os.chdir("/")
"""
ENTRY_A = "tests/test_a.py::test_a\tHRM604\tLEAKY_A set"
ENTRY_B = "tests/test_b.py::test_b\tHRM604\tLEAKY_B set"
STATIC = "tests/test_c.py::test_c\tHRM105\tos.chdir(\"/\")"


def pytest_args(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist", *args]


def guard(cwd: Path, *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return run(pytest_args(*args), cwd=cwd, timeout=timeout)


def entries(baseline: Path) -> list[str]:
    return [line for line in baseline.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


def one_line_refusal(result: subprocess.CompletedProcess[str], *words: str) -> str:
    """The run's refusal: exit status 4, no traceback, one line with every word."""
    output = result.stdout + result.stderr
    assert result.returncode == USAGE_ERROR, output
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    lines = [line for line in result.stdout.splitlines() if line.startswith("flake8-hermetic guard: ")]
    assert len(lines) == 1, output
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Two leaky tests and one a static rule flags, a config that turns that rule on."""
    return write_tree(tmp_path / "proj", {
        "setup.cfg": "[flake8]\nextend-select = HRM105\n",
        "tests/test_a.py": LEAKY_A,
        "tests/test_b.py": LEAKY_B,
        "tests/test_c.py": CHDIR,
    })


# -- 1. the lock -----------------------------------------------------------------------------------------------

MARKING = LEAKY_A + """


    def test_z_mark():
        open(os.environ["GUARD_MARKER"], "w").close()  # outside every watched directory
"""


def update_while_another_writer_holds_the_lock(project: Path, env: dict[str, str], marker: Path) -> None:
    """Start an update, let its tests finish while this process holds the
    baseline's lock, then write the baseline as the holder would (from what
    it read before the update started) and release the lock."""
    baseline = project / "hermetic-baseline.txt"
    args = pytest_args("--hermetic-guard-update", "--hermetic-guard-allow-growth", "tests/test_a.py")
    with subprocess.Popen(args, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as update:
        try:
            with locked(str(baseline)):  # taken while pytest starts, long before the update's decision
                deadline = time.monotonic() + TIMEOUT
                while not marker.exists() and update.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert marker.exists(), "the update's tests did not run"
                try:  # the tests are done: an update that ignores the lock writes now
                    update.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    pass  # waiting for the lock, as it should
                write_atomic(str(baseline), STATIC + "\n")
            output = update.communicate(timeout=TIMEOUT)[0]
        except BaseException:
            update.kill()
            raise
    assert update.returncode == 0, output


def test_update_waits_for_a_writer_holding_the_lock_and_reads_the_baseline_again(
    project: Path, tmp_path: Path,
) -> None:
    write_tree(project, {"tests/test_a.py": MARKING})
    marker = tmp_path / "tests-done"
    env = child_env(tmp_path / "home")
    env["GUARD_MARKER"] = str(marker)
    update_while_another_writer_holds_the_lock(project, env, marker)
    assert entries(project / "hermetic-baseline.txt") == [ENTRY_A, STATIC]  # the other writer's entry survived


def communicate(process: subprocess.Popen[str]) -> str:
    try:
        return process.communicate(timeout=TIMEOUT)[0]
    except subprocess.TimeoutExpired:
        process.kill()
        raise


def test_two_updates_and_regenerate_at_once_lose_nothing(project: Path, tmp_path: Path) -> None:
    env = child_env(tmp_path / "home")
    commands = [
        pytest_args("--hermetic-guard-update", "--hermetic-guard-allow-growth", "tests/test_a.py"),
        pytest_args("--hermetic-guard-update", "--hermetic-guard-allow-growth", "tests/test_b.py"),
        [sys.executable, "-m", "flake8_hermetic", "baseline", "regenerate", "--allow-growth"],
    ]
    with contextlib.ExitStack() as stack:
        started = [stack.enter_context(subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE,
                                                        stderr=subprocess.STDOUT, text=True))
                   for command in commands]
        outputs = [communicate(process) for process in started]
    assert [process.returncode for process in started] == [0, 0, 0], outputs
    assert entries(project / "hermetic-baseline.txt") == [ENTRY_A, ENTRY_B, STATIC]


# -- 2. and 3. symlinks ---------------------------------------------------------------------------------------

def test_update_writes_through_a_symlink_inside_the_project_and_refuses_one_out_of_it(
    project: Path, tmp_path: Path,
) -> None:
    (project / "shared").mkdir()
    real = project / "shared" / "bl.txt"
    real.write_text(STATIC + "\n", encoding="utf-8")
    link = project / "hermetic-baseline.txt"
    link.symlink_to(Path("shared") / "bl.txt")
    result = guard(project, "--hermetic-guard-update", "--hermetic-guard-allow-growth", "tests/test_a.py")
    assert result.returncode == 0, result.stdout
    assert link.is_symlink() and entries(real) == [ENTRY_A, STATIC]
    assert sorted(os.listdir(project / "shared")) == ["bl.txt"]  # no lock or temporary file left

    outside = tmp_path / "outside.txt"
    outside.write_text(STATIC + "\n", encoding="utf-8")
    link.unlink()
    link.symlink_to(outside)
    refused = guard(project, "--hermetic-guard-update", "tests/test_a.py")
    one_line_refusal(refused, "hermetic-baseline.txt", "symlink", "outside the project")
    assert link.is_symlink() and outside.read_text(encoding="utf-8") == STATIC + "\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith((".hermetic-baseline.", "outside.txt."))] == []


def test_a_directory_symlink_does_not_take_the_baseline_out_of_the_project(project: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (project / "ci").symlink_to(Path("..") / "victim")
    (project / "setup.cfg").write_text("[flake8]\nextend-select = HRM105\nhermetic-baseline = ci/bl.txt\n",
                                       encoding="utf-8")
    updated = guard(project, "--hermetic-guard-update", "tests/test_a.py")
    one_line_refusal(updated, "ci/bl.txt", "outside the project")
    regenerated = hermetic(["baseline", "regenerate"], cwd=project)
    assert regenerated.returncode == 2 and "outside the project" in regenerated.stderr, regenerated.stderr
    linted = flake8(["--select=HRM", "tests/test_c.py"], cwd=project)
    assert linted.returncode != 0 and "outside the project" in linted.stdout + linted.stderr
    assert "Traceback" not in regenerated.stderr + linted.stderr
    # named on the command line, the path is the user's, but a link in the project that leads out is refused
    (project / "setup.cfg").write_text("[flake8]\nextend-select = HRM105\n", encoding="utf-8")
    given_path = guard(project, "--hermetic-guard-update", "--hermetic-baseline=ci/bl.txt", "tests/test_a.py")
    one_line_refusal(given_path, "ci/bl.txt", "symlinked directory", "outside the project")
    regenerated = hermetic(["baseline", "regenerate", "--baseline=ci/bl.txt"], cwd=project)
    assert regenerated.returncode == 2 and "symlinked directory" in regenerated.stderr, regenerated.stderr
    assert os.listdir(victim) == []  # no baseline, no .lock, no temporary file

    # a directory symlink that stays inside the project is followed: the lock and the file are where it leads
    (project / "real-ci").mkdir()
    (project / "ci2").symlink_to("real-ci")
    inside = guard(project, "--hermetic-guard-update", "--hermetic-baseline=ci2/bl.txt", "tests/test_a.py")
    assert inside.returncode == 0, inside.stdout
    assert entries(project / "real-ci" / "bl.txt") == [ENTRY_A] and os.listdir(project / "real-ci") == ["bl.txt"]


# -- 4. the report -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("report", "words"), [
    pytest.param("hermetic-baseline.txt", ("hermetic-baseline.txt", "is the baseline"), id="the-baseline"),
    pytest.param("./sub/../hermetic-baseline.txt", ("hermetic-baseline.txt", "is the baseline"), id="baseline-again"),
    pytest.param("nodir/r.json", ("nodir/r.json", "no directory"), id="no-directory"),
    pytest.param("sub", ("sub", "a directory"), id="a-directory"),
    pytest.param("fifo", ("fifo", "a FIFO"), id="a-fifo"),
])
def test_a_report_path_that_cannot_take_the_report_is_refused_in_one_line(
    project: Path, report: str, words: tuple[str, ...],
) -> None:
    baseline = project / "hermetic-baseline.txt"
    baseline.write_text(ENTRY_A + "\n", encoding="utf-8")
    (project / "sub").mkdir()
    os.mkfifo(project / "fifo")
    result = guard(project, "--hermetic-guard", f"--hermetic-guard-report={report}", "tests/test_a.py",
                   timeout=60)  # a FIFO must not hang the run
    one_line_refusal(result, *words)
    assert baseline.read_text(encoding="utf-8") == ENTRY_A + "\n"
    assert not (project / "nodir").exists() and os.listdir(project / "sub") == []


def test_the_report_replaces_the_old_one_whole(project: Path) -> None:
    report = project / "report.json"
    report.write_text("old report\n", encoding="utf-8")
    with open(report, encoding="utf-8") as reader:  # a reader of the old report keeps reading it whole
        result = guard(project, "--hermetic-guard", "--hermetic-guard-report=report.json", "tests/test_a.py")
        assert result.returncode == 1, result.stdout
        assert reader.read() == "old report\n"
    assert '"what": "LEAKY_A set"' in report.read_text(encoding="utf-8")


LEAVES_WRITER_FILES = """\
    from pathlib import Path

    ROOT = Path(__file__).resolve().parents[1]


    def test_writer_files():
        # what a baseline writer running beside the tests holds for a moment: its lock and its temp file,
        # and the default baseline it makes where there was none
        (ROOT / "hermetic-baseline.txt.lock").write_text("")
        (ROOT / ".hermetic-baseline.k3j9.tmp").write_text("")
        (ROOT / "hermetic-baseline.txt").write_text("")
        (ROOT / "other.lock").write_text("")  # no writer's: a leak
"""


def test_a_baseline_writer_s_lock_and_temp_file_are_no_test_s_residue(tmp_path: Path) -> None:
    project = write_tree(tmp_path / "proj", {"setup.cfg": "[flake8]\n", "tests/test_w.py": LEAVES_WRITER_FILES})
    result = guard(project, "--hermetic-guard", "--hermetic-no-baseline", "tests")
    assert result.returncode == 1, result.stdout
    found = [line for line in result.stdout.splitlines() if " HRM602 " in line]
    assert len(found) == 1 and "'other.lock'" in found[0], result.stdout


# -- 5. codes the guard does not own ----------------------------------------------------------------------------

def test_an_unknown_runtime_code_is_kept_by_the_update_and_reported(project: Path) -> None:
    baseline = project / "hermetic-baseline.txt"
    unknown = "tests/test_a.py::test_a\tHRM699\tsomething newer"
    baseline.write_text(f"{ENTRY_A}\n{unknown}\n", encoding="utf-8")
    result = guard(project, "--hermetic-guard-update", "tests/test_a.py")
    assert result.returncode == 0, result.stdout
    assert entries(baseline) == [ENTRY_A, unknown]
    assert ("hermetic-baseline.txt:2: no guard watch owns HRM699 (an unknown runtime code, kept as it is): "
            "tests/test_a.py::test_a HRM699 something newer") in result.stdout


# -- 6. and 7. entries the parser reads back -------------------------------------------------------------------

ODD = """\
    import os

    import pytest


    def test_tab():
        os.environ["A\\tB"] = "1"


    def test_newline():
        os.environ["C\\nD"] = "1"


    def test_bytes():
        os.environb[b"X\\xff"] = b"1"


    @pytest.mark.parametrize("n", [1], ids=["a::::b"])
    def test_ids(n):
        os.environ["P"] = "1"
"""


def test_odd_names_are_written_escaped_and_read_back(project: Path) -> None:
    write_tree(project, {"tests/test_odd.py": ODD})
    baseline = project / "hermetic-baseline.txt"
    result = guard(project, "--hermetic-guard-update", "--hermetic-guard-report=report.json", "tests/test_odd.py")
    assert result.returncode == 0, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert entries(baseline) == [
        "tests/test_odd.py::test_bytes\tHRM604\tX\\xff set",
        "tests/test_odd.py::test_ids[a\\x3a\\x3a\\x3a\\x3ab]\tHRM604\tP set",
        "tests/test_odd.py::test_newline\tHRM604\tC\\nD set",
        "tests/test_odd.py::test_tab\tHRM604\tA\\tB set",
    ]
    again = guard(project, "--hermetic-guard", "--hermetic-guard-report=report.json", "tests/test_odd.py")
    assert again.returncode == 0, again.stdout
    assert "hermetic guard: 0 new, 4 baselined, 0 stale" in again.stdout
    checked = hermetic(["baseline", "check"], cwd=project)  # the static side reads every line
    assert "Traceback" not in checked.stderr
    assert not re.search(r"hermetic-baseline\.txt:\d", checked.stdout), checked.stdout


def test_an_update_from_below_the_project_root_writes_entries_from_the_root(project: Path) -> None:
    (project / "sub").mkdir()
    result = guard(project / "sub", "--hermetic-guard-update", "../tests/test_a.py")
    assert result.returncode == 0, result.stdout
    assert entries(project / "hermetic-baseline.txt") == [ENTRY_A]


def test_an_update_of_tests_outside_the_project_root_is_refused(tmp_path: Path) -> None:
    top = write_tree(tmp_path / "top", {"tests/test_a.py": LEAKY_A, "sub/README": "no config anywhere\n"})
    result = guard(top / "sub", "--hermetic-guard-update", "../tests")
    one_line_refusal(result, "tests/test_a.py::test_a", "leaves the project root", "nothing written")
    assert not (top / "sub" / "hermetic-baseline.txt").exists()


texts = st.text(st.characters(codec="utf-8") | st.sampled_from("\t\n\r\x0b\x85\u2028:%#*\\ \udcff"), max_size=12)


def writable_or_none(path: str, scope: str, what: str) -> Entry | None:
    try:
        return writable_entry(path, scope, "HRM604", what)
    except ValueError:
        return None


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(path=st.lists(texts, min_size=1, max_size=3).map("/".join), scope=texts, what=texts)
def test_every_entry_written_parses_back_to_itself(path: str, scope: str, what: str) -> None:
    entry = writable_or_none(path, scope, what)
    # refused only for its path (one no entry can have): every scope and what can be written
    assert entry is not None or writable_or_none("tests/test_x.py", scope, what) is not None
    again = parse(render([], [entry] if entry else []), "bl.txt").entries
    assert [(e.path, e.scope, e.code, e.what) for e in again] == [
        (e.path, e.scope, e.code, e.what) for e in [entry] if e is not None]


def test_every_path_the_update_writes_reads_back(tmp_path: Path) -> None:
    baseline = tmp_path / "bl.txt"
    leaks = [Leak("t%41 #x.py::t[a::::b]", "HRM604", "A\tB set"), Leak(".", "HRM601", "\udcff"),
             Leak("ok.py::t", "HRM604", "*")]
    decide(leaks, [leak.nodeid for leak in leaks], str(baseline), str(tmp_path), update=True)
    written = parse(baseline.read_text(encoding="utf-8"), str(baseline)).entries
    assert [e.render() for e in written] == [
        ".\tHRM601\t\\xff", "ok.py::t\tHRM604\t\\x2a", "t%2541 #x.py::t[a\\x3a\\x3a\\x3a\\x3ab]\tHRM604\tA\\tB set",
    ]
    verdict = decide(leaks, [leak.nodeid for leak in leaks], str(baseline), str(tmp_path), update=False)
    assert (len(verdict.new), len(verdict.baselined)) == (0, 3)


# -- 8. a baseline that is not a file ------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    pytest.param(os.mkfifo, id="fifo"),
    pytest.param(lambda path: path.symlink_to("/dev/zero"), id="dev-zero"),
])
def test_a_clean_run_refuses_a_baseline_that_is_not_a_file(project: Path, make: Callable[[Path], None]) -> None:
    baseline = project / "hermetic-baseline.txt"
    make(baseline)
    (project / "tests" / "test_clean.py").write_text("def test_clean():\n    pass\n", encoding="utf-8")
    clean = guard(project, "--hermetic-guard", "tests/test_clean.py", timeout=60)
    leaky = guard(project, "--hermetic-guard", "tests/test_a.py", timeout=60)
    assert one_line_refusal(clean, "hermetic-baseline.txt", "not a regular file") == one_line_refusal(leaky)


# -- issue 27: the update only shrinks, and drops what is gone ----------------------------------------------

def test_an_update_only_shrinks_an_existing_baseline_unless_allowed_to_grow(project: Path) -> None:
    baseline = project / "hermetic-baseline.txt"
    first = guard(project, "--hermetic-guard-update", "tests/test_a.py")  # a new file: the adoption itself
    assert first.returncode == 0 and entries(baseline) == [ENTRY_A], first.stdout
    grown = guard(project, "--hermetic-guard-update", "tests/test_a.py", "tests/test_b.py")
    assert grown.returncode == 1, grown.stdout
    assert ("hermetic guard: 1 new finding would be added to hermetic-baseline.txt; nothing written "
            "(--hermetic-guard-allow-growth adds them)") in grown.stdout
    assert entries(baseline) == [ENTRY_A]
    allowed = guard(project, "--hermetic-guard-update", "--hermetic-guard-allow-growth", "tests/test_a.py",
                    "tests/test_b.py")
    assert allowed.returncode == 0 and entries(baseline) == [ENTRY_A, ENTRY_B], allowed.stdout
    (project / "tests" / "test_b.py").write_text("def test_b():\n    pass\n", encoding="utf-8")
    shrunk = guard(project, "--hermetic-guard-update", "tests/test_b.py")  # fixed: shrinking needs no flag
    assert shrunk.returncode == 0 and entries(baseline) == [ENTRY_A], shrunk.stdout


def test_an_update_drops_the_runtime_entries_of_a_deleted_test_file(project: Path) -> None:
    baseline = project / "hermetic-baseline.txt"
    gone = "tests/test_gone.py::test_x\tHRM604\tY set"
    unknown_gone = "tests/test_gone.py::test_x\tHRM699\tkept"
    static_gone = "tests/test_gone.py::test_x\tHRM105\tos.chdir(x)"  # the static side's to judge
    baseline.write_text("\n".join([ENTRY_A, gone, static_gone, unknown_gone]) + "\n", encoding="utf-8")
    result = guard(project, "--hermetic-guard-update", "tests/test_a.py")
    assert result.returncode == 0, result.stdout
    assert "removed baseline entry tests/test_gone.py::test_x HRM604 Y set: its test file is gone" in result.stdout
    assert entries(baseline) == [ENTRY_A, static_gone, unknown_gone]


def test_the_static_entry_format_is_unchanged_for_ordinary_names() -> None:
    entry = writable_entry("tests/test_a.py", "TestX::test_y[1-a b]", "HRM604", "LEAKY_A set")
    assert entry == Entry("tests/test_a.py", "TestX::test_y[1-a b]", "HRM604", "LEAKY_A set")
