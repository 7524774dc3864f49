"""The baseline inside real flake8 runs: what stays quiet, what is new, what is stale.

Each scenario edits a legacy test file whose violations are all in a
hand-written baseline, then runs flake8 once on the project.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import codes_by_line, flake8, hermetic, write_tree

LEGACY = """\
    import os


    def test_build(tmp_path):
        os.chdir(tmp_path)


    class TestDeploy:
        def test_twice(self, tmp_path):
            os.chdir(tmp_path)
            os.chdir(tmp_path)
"""
BASELINE = (
    "# Known hazards, burning down.\n"
    "\n"
    "tests/test_legacy.py::TestDeploy::test_twice\tHRM105\tos.chdir(tmp_path)\n"
    "tests/test_legacy.py::TestDeploy::test_twice\tHRM105\tos.chdir(tmp_path)\n"
    "tests/test_legacy.py::test_build\tHRM105\tos.chdir(tmp_path)\n"
)
LEGACY_FILE = "tests/test_legacy.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_tree(root, {"setup.cfg": "[flake8]\nselect = HRM105,HRM900\n", LEGACY_FILE: LEGACY})
    (root / "hermetic-baseline.txt").write_text(BASELINE, encoding="utf-8")
    return root


def edit(project: Path, old: str, new: str) -> None:
    path = project / LEGACY_FILE
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def unchanged(project: Path) -> None:
    pass


def insert_lines_above(project: Path) -> None:
    edit(project, "import os\n", "import os\nimport sys\n\nHELPER = sys.platform\n\n\n")


def edit_a_line(project: Path) -> None:
    edit(project, "    os.chdir(tmp_path)\n\n", "    os.chdir(tmp_path / 'x')\n\n")


def rename_a_test(project: Path) -> None:
    edit(project, "def test_build(", "def test_make(")


def add_a_third_identical(project: Path) -> None:
    edit(project, "        os.chdir(tmp_path)\n        os.chdir(tmp_path)\n",
         "        os.chdir(tmp_path)\n        os.chdir(tmp_path)\n        os.chdir(tmp_path)\n")


def fix_one_of_two_identical(project: Path) -> None:
    edit(project, "        os.chdir(tmp_path)\n        os.chdir(tmp_path)\n", "        os.chdir(tmp_path)\n")


def silence_one_and_edit_the_other(project: Path) -> None:
    # regenerate wrote no entry for the silenced line: only the edited one's is left
    edit(project, "        os.chdir(tmp_path)\n        os.chdir(tmp_path)\n",
         "        os.chdir(tmp_path / 'x')\n        os.chdir(tmp_path)  # noqa: HRM105\n")
    baseline = project / "hermetic-baseline.txt"
    text = baseline.read_text(encoding="utf-8")
    baseline.write_text(text.replace(TWICE_LINE + "\n", "", 1), encoding="utf-8")


def silence_one_of_two_identical(project: Path) -> None:
    edit(project, "        os.chdir(tmp_path)\n        os.chdir(tmp_path)\n",
         "        os.chdir(tmp_path)\n        os.chdir(tmp_path)  # noqa\n")


def move_the_file(project: Path) -> None:
    (project / "tests" / "unit").mkdir()
    shutil.move(project / LEGACY_FILE, project / "tests" / "unit" / "test_legacy.py")


TWICE_LINE = "tests/test_legacy.py::TestDeploy::test_twice\tHRM105\tos.chdir(tmp_path)"
STALE_BUILD = "hermetic-baseline.txt:5: tests/test_legacy.py::test_build HRM105 os.chdir(tmp_path)"
STALE_TWICE = "hermetic-baseline.txt:4: tests/test_legacy.py::TestDeploy::test_twice HRM105 os.chdir(tmp_path)"
# the entry's FILE:LINE in the baseline, then its fields separated by spaces (no TAB escapes)
STALE_NAMED = re.compile(r"HRM900 stale baseline entry at (\S+:\d+: .*?): the debt was paid")


@pytest.mark.parametrize(
    ("change", "expected", "stale_named"),
    [
        pytest.param(unchanged, [], [], id="unchanged"),
        pytest.param(insert_lines_above, [], [], id="lines-inserted-above"),
        pytest.param(edit_a_line, [], [], id="line-edited"),
        pytest.param(
            rename_a_test,
            [("./tests/test_legacy.py", 1, "HRM900"), ("./tests/test_legacy.py", 5, "HRM105")],
            [STALE_BUILD],
            id="test-renamed",
        ),
        pytest.param(add_a_third_identical, [("./tests/test_legacy.py", 12, "HRM105")], [], id="third-identical"),
        pytest.param(
            fix_one_of_two_identical, [("./tests/test_legacy.py", 1, "HRM900")], [STALE_TWICE], id="one-fixed"
        ),
        pytest.param(silence_one_and_edit_the_other, [], [], id="noqa-leaves-the-entry-to-the-edited-line"),
        pytest.param(
            silence_one_of_two_identical, [("./tests/test_legacy.py", 1, "HRM900")], [STALE_TWICE],
            id="noqa-makes-its-entry-stale",
        ),
        pytest.param(
            move_the_file,
            [("./tests/unit/test_legacy.py", line, "HRM105") for line in (5, 10, 11)],
            [],
            id="file-moved",
        ),
    ],
)
def test_baseline_scenario(
    project: Path, change: Callable[[Path], None], expected: list[tuple[str, int, str]], stale_named: list[str]
) -> None:
    change(project)
    result = flake8(["."], cwd=project)
    assert result.stderr == ""
    assert codes_by_line(result.stdout) == expected
    assert result.returncode == (1 if expected else 0)
    assert STALE_NAMED.findall(result.stdout) == stale_named


def test_with_disable_noqa_a_silenced_violation_keeps_its_entry(project: Path) -> None:
    silence_one_of_two_identical(project)
    result = flake8(["--disable-noqa", "."], cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_without_the_baseline_every_violation_is_reported(project: Path) -> None:
    result = flake8(["--hermetic-no-baseline", "."], cwd=project)
    assert [code for _, _, code in codes_by_line(result.stdout)] == ["HRM105"] * 3


def test_baseline_is_found_next_to_the_config_when_flake8_runs_in_a_subdirectory(project: Path) -> None:
    add_a_third_identical(project)
    result = flake8(["test_legacy.py"], cwd=project / "tests")
    assert codes_by_line(result.stdout) == [("test_legacy.py", 12, "HRM105")]


def test_an_explicit_baseline_path_is_used(project: Path) -> None:
    moved = project / "known.txt"
    (project / "hermetic-baseline.txt").rename(moved)
    assert codes_by_line(flake8(["."], cwd=project).stdout) != []
    result = flake8(["--hermetic-baseline", "known.txt", "."], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "display_name",
    [
        pytest.param("tests/test_legacy.py", id="posix"),
        pytest.param("tests\\test_legacy.py", id="windows-separators"),
        pytest.param("./tests/test_legacy.py", id="dot-slash"),
    ],
)
def test_stdin_uses_the_display_name_as_its_path(project: Path, display_name: str) -> None:
    source = (project / LEGACY_FILE).read_text(encoding="utf-8")
    quiet = flake8(["--stdin-display-name", display_name, "-"], cwd=project, stdin=source)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_stdin_buffer_gets_one_stale_line_however_many_entries_are_stale(project: Path) -> None:
    result = flake8(["--stdin-display-name", LEGACY_FILE, "-"], cwd=project, stdin="import os\n")
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    assert lines[0].startswith(f"{LEGACY_FILE}:1:1: HRM900 3 baseline entries for this file match nothing")
    # a file on disk gets one line per entry
    (project / LEGACY_FILE).write_text("import os\n", encoding="utf-8")
    on_disk = flake8([LEGACY_FILE], cwd=project)
    assert [code for _, _, code in codes_by_line(on_disk.stdout)] == ["HRM900"] * 3


def test_parallel_jobs_match_the_baseline_in_every_worker(project: Path) -> None:
    write_tree(project, {f"tests/test_copy_{index}.py": LEGACY for index in range(4)})
    with (project / "hermetic-baseline.txt").open("a", encoding="utf-8") as handle:
        handle.write(BASELINE.replace("test_legacy.py", "test_copy_0.py").split("\n", 2)[2])
    serial = flake8(["--jobs", "1", "."], cwd=project)
    parallel = flake8(["--jobs", "2", "."], cwd=project)
    assert parallel.stdout == serial.stdout
    assert sorted({name for name, _, _ in codes_by_line(parallel.stdout)}) == [
        f"./tests/test_copy_{index}.py" for index in (1, 2, 3)
    ]


def test_an_absolute_path_on_the_command_line_maps_to_the_relative_entry(project: Path) -> None:
    result = flake8([str(project / LEGACY_FILE)], cwd=project)
    assert (result.returncode, result.stdout) == (0, "")


def test_a_crlf_baseline_with_a_bom_is_read(project: Path) -> None:
    (project / "hermetic-baseline.txt").write_bytes(b"\xef\xbb\xbf" + BASELINE.replace("\n", "\r\n").encode())
    result = flake8(["."], cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_entries_of_a_rule_that_is_not_enabled_are_never_stale(project: Path) -> None:
    with (project / "hermetic-baseline.txt").open("a", encoding="utf-8") as handle:
        handle.write("tests/test_legacy.py::test_build\tHRM303\t'/etc/hosts'\n")
    assert flake8(["."], cwd=project).stdout == ""
    enabled = flake8(["--extend-select", "HRM303", "."], cwd=project)
    assert codes_by_line(enabled.stdout) == [("./tests/test_legacy.py", 1, "HRM900")]
    assert "test_build HRM303 '/etc/hosts'" in enabled.stdout


def test_entries_of_a_retired_rule_are_stale_in_every_test_file_and_prune_drops_them(project: Path) -> None:
    entry = "tests/test_legacy.py::test_build\tHRM504\t_tokenize\n"
    with (project / "hermetic-baseline.txt").open("a", encoding="utf-8") as handle:
        handle.write(entry)
    result = flake8(["."], cwd=project)  # HRM504 is selected nowhere, and retired: nothing can find it again
    assert codes_by_line(result.stdout) == [("./tests/test_legacy.py", 1, "HRM900")]
    assert "test_build HRM504 _tokenize" in result.stdout
    pruned = hermetic(["baseline", "prune"], cwd=project)
    assert pruned.returncode == 0, pruned.stderr
    assert (project / "hermetic-baseline.txt").read_text(encoding="utf-8") == BASELINE
    assert flake8(["."], cwd=project).stdout == ""


def test_only_linted_files_are_judged(project: Path) -> None:
    with (project / "hermetic-baseline.txt").open("a", encoding="utf-8") as handle:
        handle.write("tests/test_other.py::test_x\tHRM105\tos.chdir(d)\n")
    write_tree(project, {"tests/test_other.py": "def test_x():\n    pass\n"})
    assert flake8([LEGACY_FILE], cwd=project).stdout == ""
    assert codes_by_line(flake8(["."], cwd=project).stdout) == [("./tests/test_other.py", 1, "HRM900")]


MALFORMED = [
    pytest.param("tests/test_legacy.py\tHRM105\n", "expected 3 TAB-separated fields", id="field-count"),
    pytest.param("tests/test_legacy.py\tHRMX05\tos.chdir(d)\n", "is not an error code", id="bad-code"),
    pytest.param("<<<<<<< HEAD\n", "merge-conflict marker", id="conflict-marker"),
    pytest.param("../outside.py\tHRM105\tos.chdir(d)\n", "leaves the project root", id="escaping-path"),
]


@pytest.mark.parametrize(("line", "reason"), MALFORMED)
def test_a_malformed_baseline_stops_flake8_with_file_and_line(project: Path, line: str, reason: str) -> None:
    with (project / "hermetic-baseline.txt").open("a", encoding="utf-8") as handle:
        handle.write(line)
    result = flake8(["."], cwd=project)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    [message] = result.stderr.splitlines()
    assert f"{project / 'hermetic-baseline.txt'}:6: " in message
    assert reason in message
