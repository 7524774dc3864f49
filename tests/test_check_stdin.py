"""``check`` on an editor's buffer (``-`` with ``--stdin-display-name``), and
the output flags a ruff user types beside flake8's (``--output-format``,
``-q``, ``-o``) and flake8's ``--format pylint``.

Where flake8 has the same behaviour (stdin, ``pylint``), the expectation is
flake8's own output with the plugin, run on the same project.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import TIMEOUT, child_env, flake8, hermetic, write_tree

LEAKY = """\
    from pathlib import Path


    def test_known(tmp_path):
        Path("/tmp/known.txt").write_text("x")
        assert tmp_path.is_dir()


    def test_fresh(tmp_path):
        Path("/tmp/fresh.txt").write_text("x")
        assert tmp_path.is_dir()
"""
CLEAN = """\
    def test_known(tmp_path):
        assert tmp_path.is_dir()
"""
KNOWN = 'tests/test_app.py::test_known\tHRM108\t"/tmp/known.txt"\n'
GONE = 'tests/test_app.py::test_{}\tHRM108\t"/tmp/{}.txt"\n'
FRESH = "tests/test_app.py:10:10: HRM108 '/tmp/fresh.txt' is a fixed path shared by every worker and run"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose file on disk is clean: what is found comes from the buffer."""
    return write_tree(tmp_path / "project", {
        "setup.cfg": "[flake8]\nmax-line-length = 100\n",
        "tests/test_app.py": CLEAN,
        "hermetic-baseline.txt": KNOWN,
    })


def buffer() -> str:
    return textwrap.dedent(LEAKY)


# -- the buffer on stdin --------------------------------------------------------------

def test_the_buffer_is_judged_under_its_display_name_with_its_baseline(project: Path) -> None:
    result = hermetic(["check", "--stdin-display-name", "tests/test_app.py", "-"], cwd=project, stdin=buffer())
    assert result.returncode == 1, result.stderr
    *lines, summary = result.stdout.splitlines()
    assert [line.split(";", 1)[0] for line in lines] == [FRESH]
    assert summary == "1 test file, 1 new, 1 baselined, 0 stale"
    # the same verdict plain flake8 gives the same buffer through the plugin
    plain = flake8(["--select=HRM", "--stdin-display-name", "tests/test_app.py", "-"], cwd=project, stdin=buffer())
    assert plain.stdout.splitlines() == lines


def test_ruffs_stdin_filename_reads_the_buffer_with_no_path(project: Path) -> None:
    result = hermetic(["check", "--stdin-filename", "tests/test_app.py", "-q"], cwd=project, stdin=buffer())
    assert result.returncode == 1, result.stderr
    assert [line.split(";", 1)[0] for line in result.stdout.splitlines()] == [FRESH]


def test_a_display_name_that_is_no_test_file_is_not_linted(project: Path) -> None:
    result = hermetic(["check", "--stdin-display-name", "src/app.py", "-"], cwd=project, stdin=buffer())
    assert (result.returncode, result.stdout, result.stderr) == (0, "0 test files, 0 new, 0 baselined, 0 stale\n", "")


def test_a_half_written_buffer_gets_one_line_for_its_stale_entries(project: Path) -> None:
    write_tree(project, {"hermetic-baseline.txt": KNOWN + GONE.format("a", "a") + GONE.format("b", "b")})
    result = hermetic(["check", "--stdin-display-name", "tests/test_app.py", "-"], cwd=project, stdin=buffer())
    assert result.returncode == 1, result.stderr
    stale = [line for line in result.stdout.splitlines() if " HRM900 " in line]
    assert stale == [
        "tests/test_app.py:1:1: HRM900 2 baseline entries for this file match nothing (first: "
        "hermetic-baseline.txt:2 tests/test_app.py::test_a HRM108 \"/tmp/a.txt\"); run 'flake8-hermetic baseline prune'"
    ]
    plain = flake8(["--select=HRM", "--stdin-display-name", "tests/test_app.py", "-"], cwd=project, stdin=buffer())
    assert [line for line in plain.stdout.splitlines() if " HRM900 " in line] == stale
    # the files on disk, linted as files, get a line per entry
    on_disk = hermetic(["check", "tests/test_app.py"], cwd=project)
    assert sum(" HRM900 " in line for line in on_disk.stdout.splitlines()) == 3


SLEEPY = """\
    import time


    def test_waits():
        time.sleep(1)
"""


@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
def test_the_buffer_takes_the_config_of_the_project_its_display_name_is_in(tmp_path: Path, absolute: bool) -> None:
    """An editor run from a monorepo's top: the buffer's project (a ruff
    team's pyproject table, no flake8 config) decides, as ruff decides."""
    write_tree(tmp_path, {
        "proj/pyproject.toml": '[tool.flake8-hermetic]\ntest-files = ["checks/*.py"]\nextend-select = ["HRM201"]\n',
        "proj/checks/test_app.py": LEAKY,
        "proj/hermetic-baseline.txt": KNOWN.replace("tests/", "checks/"),
    })
    text = buffer() + textwrap.dedent(SLEEPY)
    inside = hermetic(["check", "--stdin-display-name", "checks/test_app.py", "-"], cwd=tmp_path / "proj", stdin=text)
    assert inside.returncode == 1, inside.stderr
    assert [line.split(" ", 2)[1] for line in inside.stdout.splitlines()[:-1]] == ["HRM108", "HRM201"]
    assert inside.stdout.splitlines()[-1] == "1 test file, 2 new, 1 baselined, 0 stale"
    display = str(tmp_path / "proj" / "checks" / "test_app.py") if absolute else "proj/checks/test_app.py"
    above = hermetic(["check", "--stdin-display-name", display, "-o", "report.txt", "-"], cwd=tmp_path, stdin=text)
    assert (above.returncode, above.stdout, above.stderr) == (1, "", "")
    report = (tmp_path / "report.txt").read_text(encoding="utf-8")  # -o from where it was typed
    assert report == inside.stdout.replace("checks/test_app.py", display)


def test_stdin_is_linted_alone(project: Path) -> None:
    result = hermetic(["check", "--stdin-display-name", "tests/test_app.py", "-", "tests"], cwd=project,
                      stdin=buffer())
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("flake8-hermetic: '-' (the buffer on standard input) is linted alone; "
                             "give no other PATH with it\n")


def test_a_buffer_that_is_not_text_is_one_line_not_a_traceback(project: Path) -> None:
    args = [sys.executable, "-m", "flake8_hermetic", "check", "--stdin-display-name", "tests/test_app.py", "-"]
    result = subprocess.run(args, cwd=project, input=b"def test_x():\n    s = '\xff'\n", capture_output=True,
                            timeout=TIMEOUT, env=child_env(project / ".home"), check=False)
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode().splitlines() == [
        "flake8-hermetic: tests/test_app.py (standard input): cannot decode byte 23: invalid start byte "
        "(not UTF-8, nor the encoding its coding line declares)"]


# -- output flags ------------------------------------------------------------------------

@pytest.fixture
def leaky(project: Path) -> Path:
    write_tree(project, {"tests/test_app.py": LEAKY, "tests/test_other.py": LEAKY, "hermetic-baseline.txt": ""})
    return project


def test_format_pylint_is_flake8s_pylint_format(leaky: Path) -> None:
    ours = hermetic(["check", "--format", "pylint", "-q"], cwd=leaky)
    theirs = flake8(["--select=HRM", "--format", "pylint"], cwd=leaky)
    assert ours.returncode == theirs.returncode == 1, ours.stderr
    assert sorted(line.removeprefix("./") for line in theirs.stdout.splitlines()) == sorted(ours.stdout.splitlines())
    assert ours.stdout.splitlines()[0].startswith("tests/test_app.py:5: [HRM108] '/tmp/known.txt' is a fixed path")


@pytest.mark.parametrize("ruff, flake8_spelling", [
    pytest.param(["--output-format", "concise"], [], id="concise"),
    pytest.param(["--output-format", "github"], ["--format", "github"], id="github"),
    pytest.param(["--output-format=json"], ["--format=json"], id="json"),
])
def test_ruffs_output_format_means_format(leaky: Path, ruff: list[str], flake8_spelling: list[str]) -> None:
    ours = hermetic(["check", *ruff], cwd=leaky)
    theirs = hermetic(["check", *flake8_spelling], cwd=leaky)
    assert (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr)
    assert ours.returncode == 1 and "HRM108" in ours.stdout


@pytest.mark.parametrize("output_format", ["default", "github", "json"], ids=str)
def test_quiet_drops_the_summary_and_twice_prints_nothing(leaky: Path, output_format: str) -> None:
    loud = hermetic(["check", "--format", output_format], cwd=leaky)
    quiet = hermetic(["check", "--format", output_format, "-q"], cwd=leaky)
    silent = hermetic(["check", "--format", output_format, "-qq", "--count"], cwd=leaky)
    summary = "2 test files, 4 new, 0 baselined, 0 stale\n"
    assert summary in loud.stdout + loud.stderr
    assert (quiet.stdout + quiet.stderr).replace(summary, "") == (loud.stdout + loud.stderr).replace(summary, "")
    assert summary not in quiet.stdout + quiet.stderr
    assert (silent.returncode, silent.stdout, silent.stderr) == (1, "", "")
    assert loud.returncode == quiet.returncode == 1


def test_o_writes_the_report_when_paths_are_given(leaky: Path) -> None:
    result = hermetic(["check", "-o", "report.txt", "tests/test_app.py"], cwd=leaky)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")
    text = (leaky / "report.txt").read_text(encoding="utf-8")
    assert text.splitlines()[-1] == "1 test file, 2 new, 0 baselined, 0 stale"
    assert text == hermetic(["check", "tests/test_app.py"], cwd=leaky).stdout
    # flake8's spelling, with a directory: the same file
    hermetic(["check", "--output-file", "again.txt", "tests"], cwd=leaky)
    assert (leaky / "again.txt").read_text(encoding="utf-8").count(" HRM108 ") == 4
