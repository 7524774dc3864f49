"""A run that checked nothing never passes quietly.

Through the real CLI and flake8 on a project in ``tmp_path``: a path that
does not exist, a ``test-files`` glob that matches nothing, baseline
entries no linted path reached, and a flake8 selection that leaves out
every HRM code each get one line; the summaries say what they covered.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import flake8, hermetic, run, write_tree

LEAKY = """\
    from pathlib import Path


    def test_known(tmp_path):
        Path("/tmp/known.txt").write_text("x")
        assert tmp_path.is_dir()
"""
CLEAN = """\
    def test_fine(tmp_path):
        assert tmp_path.is_dir()
"""
ENTRY = 'tests/test_app.py::test_known\tHRM108\t"/tmp/known.txt"'
COMMANDS = [["check"], ["baseline", "regenerate"], ["baseline", "prune", "--check"], ["baseline", "check"]]


def pack(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = hermetic(args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "proj", {
        "pyproject.toml": "[tool.flake8-hermetic]\nrepo-dirs = ['src']\n",
        "tests/test_app.py": LEAKY,
        "tests/test_other.py": CLEAN,
        "tests/test_third.py": CLEAN,
        "src/app.py": "VALUE = 1\n",
        "hermetic-baseline.txt": ENTRY + "\n",
    })


def test_the_summary_says_how_many_test_files_were_linted(project: Path) -> None:
    result = pack(["check"], cwd=project)
    assert (result.returncode, result.stdout) == (0, "3 test files, 0 new, 1 baselined, 0 stale\n")
    one = pack(["check", "tests/test_app.py"], cwd=project)
    assert one.stdout == "1 test file, 0 new, 1 baselined, 0 stale\n"
    # prune judges only the files the baseline names, and counts the test files as check does
    assert pack(["baseline", "prune"], cwd=project).stdout.splitlines()[-1] == (
        "hermetic-baseline.txt: 1 entries; 3 test files, 1 linted: those the baseline names"
    )


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_a_path_that_does_not_exist_is_an_error(project: Path, args: list[str]) -> None:
    result = pack([*args, "nonexistent/"], cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "flake8-hermetic: nonexistent/: no such file or directory\n"


GLOB_TYPO = '[tool.flake8-hermetic]\n\ntest-files = ["test/*.py"]\n'
SETTING = "test-files in pyproject.toml:3"


@pytest.mark.parametrize(
    ("args", "where"),
    [(["check"], "."), (["baseline", "regenerate"], "."),
     (["baseline", "prune", "--check"], "the files the baseline names")],  # prune reads only those
    ids=lambda a: " ".join(a) if isinstance(a, list) else "",
)
def test_a_test_files_glob_that_matches_nothing_fails_naming_the_setting(
    project: Path, args: list[str], where: str,
) -> None:
    (project / "pyproject.toml").write_text(GLOB_TYPO, "utf-8")
    before = (project / "hermetic-baseline.txt").read_text(encoding="utf-8")
    result = pack(args, cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"flake8-hermetic: no test file found in {where}, so nothing was checked; "
        f"which files are test files is decided by {SETTING}\n"
    )
    assert (project / "hermetic-baseline.txt").read_text(encoding="utf-8") == before


def test_with_a_glob_that_matches_nothing_baseline_check_names_each_entry_it_could_not_judge(project: Path) -> None:
    """It reads only the baseline's files, and names each one it did not lint, with the setting."""
    (project / "pyproject.toml").write_text(GLOB_TYPO, "utf-8")
    result = pack(["baseline", "check"], cwd=project)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.startswith("hermetic-baseline.txt:1: tests/test_app.py was not linted")
    assert f"(test files: {SETTING})" in result.stdout


def test_with_roles_from_pytest_the_message_names_pytests_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n', "utf-8")
    result = pack(["check"], cwd=project)
    assert result.returncode == 2
    assert result.stderr == (
        "flake8-hermetic: no test file found in ., so nothing was checked; which files are test files is "
        "decided by pytest's configuration in pyproject.toml (python_files, testpaths) unless test-files is set\n"
    )


def test_a_directory_without_test_files_fails_too(project: Path) -> None:
    result = pack(["check", "src"], cwd=project)
    assert result.returncode == 2
    assert result.stderr.startswith("flake8-hermetic: no test file found in src, so nothing was checked; ")


def test_named_files_that_are_not_tests_pass_as_pre_commit_passes_them(project: Path) -> None:
    result = pack(["check", "src/app.py"], cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (0, "0 test files, 0 new, 0 baselined, 0 stale\n", "")


def test_baseline_check_fails_on_entries_of_files_it_did_not_lint(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.flake8-hermetic]\ntest-files = ["tests/test_o*.py"]\n', "utf-8")
    result = pack(["baseline", "check"], cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "hermetic-baseline.txt:1: tests/test_app.py was not linted, so this entry was not judged "
        f"(test files: test-files in pyproject.toml:2): {ENTRY!r}"
    ]
    # paths typed on the command line narrow the run on purpose: nothing judged, said so
    narrowed = pack(["baseline", "check", "tests/test_other.py"], cwd=project)
    assert (narrowed.returncode, narrowed.stdout) == (
        0, "hermetic-baseline.txt: 1 entries, none judged (1 test file linted)\n"
    )


def test_baseline_check_counts_what_it_judged(project: Path) -> None:
    result = pack(["baseline", "check"], cwd=project)
    assert (result.returncode, result.stdout) == (
        0, "hermetic-baseline.txt: 1 entries, 1 judged, all current "
           "(3 test files, 1 linted: those the baseline names)\n"
    )


@pytest.mark.parametrize("command", [["baseline", "check"], ["baseline", "prune", "--check"]], ids=" ".join)
def test_prune_and_baseline_check_read_only_the_files_the_baseline_names(project: Path, command: list[str]) -> None:
    """Nothing but the baseline's own files can make an entry stale: the rest
    of the project is not read (an unparsable test file elsewhere is the
    check hook's business, not theirs)."""
    write_tree(project, {"tests/test_broken.py": "def test_(:\n"})
    assert "E999" in pack(["check"], cwd=project).stdout
    result = pack(command, cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_broken" not in result.stdout + result.stderr


def test_a_baseline_naming_no_existing_file_leaves_nothing_to_lint(project: Path) -> None:
    # a baseline that names no existing file leaves nothing to lint, and says so
    (project / "hermetic-baseline.txt").write_text("", encoding="utf-8")
    empty = pack(["baseline", "check"], cwd=project)
    assert (empty.returncode, empty.stdout) == (
        0, "hermetic-baseline.txt: 0 entries, 0 judged, all current "
           "(3 test files, 0 linted: those the baseline names)\n"
    )


INERT = "flake8-hermetic: flake8's selection (select = E,F,W) leaves out every HRM code, so the pack checks " \
        "nothing here; add HRM to select (or extend-select = HRM)\n"


def test_flake8_names_the_ignore_lists_when_they_turn_the_configured_pack_off(project: Path) -> None:
    (project / "setup.cfg").write_text("[flake8]\nextend-ignore = HRM\n", encoding="utf-8")
    result = flake8(["tests"], cwd=project)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == (
        "flake8-hermetic: flake8's ignore lists (ignore, extend-ignore) leave out every HRM code, so the pack "
        "checks nothing here; take HRM out of them\n"
    )


@pytest.mark.parametrize("jobs", [pytest.param("1", id="serial"), pytest.param("2", id="two-jobs")])
def test_flake8_says_once_when_its_selection_leaves_the_configured_pack_inert(project: Path, jobs: str) -> None:
    (project / "setup.cfg").write_text("[flake8]\nselect = E,F,W\n", encoding="utf-8")
    result = flake8([f"--jobs={jobs}", "tests", "src"], cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", INERT)


@pytest.mark.parametrize(("files", "args"), [
    pytest.param({"setup.cfg": "[flake8]\nselect = E,F,W\n"}, [], id="pack-not-configured"),
    pytest.param({"setup.cfg": "[flake8]\nselect = E,F,W,HRM\nhermetic-repo-dirs = src\n"}, [], id="hrm-selected"),
    pytest.param({"setup.cfg": "[flake8]\nselect = E,F,W\nhermetic-repo-dirs = src\n"}, ["--extend-select=HRM1"],
                 id="extend-select"),
])
def test_flake8_says_nothing_when_the_pack_runs_or_was_never_configured(
    tmp_path: Path, files: dict[str, str], args: list[str],
) -> None:
    project = write_tree(tmp_path / "proj", {"tests/test_app.py": CLEAN, **files})
    result = flake8([*args, "tests"], cwd=project)
    assert (result.returncode, result.stderr) == (0, "")


def test_the_pack_commands_do_not_warn_about_the_projects_selection(project: Path) -> None:
    (project / "setup.cfg").write_text("[flake8]\nselect = E,F,W\n", encoding="utf-8")
    result = pack(["check"], cwd=project)
    assert (result.returncode, result.stderr) == (0, "")


def test_the_warning_reaches_an_editor_running_flake8_on_stdin_once(project: Path) -> None:
    """flake8 through its stdin mode, as an editor runs it."""
    (project / "setup.cfg").write_text("[flake8]\nselect = E,F,W\n", encoding="utf-8")
    source = (project / "tests" / "test_app.py").read_text(encoding="utf-8")
    result = run([sys.executable, "-m", "flake8", "--stdin-display-name=tests/test_app.py", "-"],
                 cwd=project, stdin=source)
    assert (result.returncode, result.stderr) == (0, INERT)


def test_paths_are_printed_as_typed(project: Path) -> None:
    (project / "hermetic-baseline.txt").write_text("", encoding="utf-8")
    typed = pack(["check", "./tests/test_app.py"], cwd=project)
    assert typed.stdout.splitlines()[0].startswith("./tests/test_app.py:5:10: HRM108 ")
    untyped = pack(["check"], cwd=project)
    assert untyped.stdout.splitlines()[0].startswith("tests/test_app.py:5:10: HRM108 ")


@pytest.mark.parametrize("path", [
    pytest.param("./tests/test_app.py", id="dot-slash"),
    pytest.param("tests/../tests/test_app.py", id="dot-dot"),
    pytest.param(".", id="dot"),
])
def test_typed_paths_are_matched_normalised(project: Path, path: str) -> None:
    matched = pack(["check", path], cwd=project)
    assert matched.returncode == 0, matched.stdout
    assert matched.stdout.endswith("0 new, 1 baselined, 0 stale\n")
