"""``baseline stats``: where the debt is, and how it burnt down over git history."""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests.helpers import child_env, hermetic, run, write_tree

GIT_IDENTITY = ("-c", "user.name=flake8-hermetic tests", "-c", "user.email=tests@flake8-hermetic.invalid",
                "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main")
SVG = "{http://www.w3.org/2000/svg}"


def entry(path: str, scope: str, code: str, what: str = "x()") -> str:
    return f"{path}::{scope}\t{code}\t{what}"


DEBT = [
    entry("tests/test_a.py", "test_one", "HRM108"),
    entry("tests/test_a.py", "test_one", "HRM108", "y()"),
    entry("tests/test_a.py", "test_two", "HRM105"),
    entry("tests/test_b.py", "test_one", "HRM108"),
    entry("tests/sub/test_c.py", "TestC::test_x", "HRM201"),
    entry("tests/sub/test_c.py", "TestC::test_x", "HRM201", "z()"),
    entry("tests/sub/test_c.py", "TestC::test_x", "HRM201", "w()"),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "project", {
        "setup.cfg": "[flake8]\nselect = HRM\n", "hermetic-baseline.txt": "# debt\n\n" + "\n".join(DEBT) + "\n",
    })


def test_default_stats_are_codes_then_the_most_indebted_files(project: Path) -> None:
    result = hermetic(["baseline", "stats"], cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "hermetic-baseline.txt: 7 entries",
        "",
        "code    entries",
        "HRM108        3",
        "HRM201        3",
        "HRM105        1",
        "",
        "file                 entries",
        "tests/sub/test_c.py        3",
        "tests/test_a.py            3",
        "tests/test_b.py            1",
    ]


def test_stats_by_test_lists_node_ids_most_first_and_top_cuts_with_a_count(project: Path) -> None:
    result = hermetic(["baseline", "stats", "--by", "test", "--top", "2"], cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[2:] == [
        "test                                entries",
        "tests/sub/test_c.py::TestC::test_x        3",
        "tests/test_a.py::test_one                 2",
        "... and 2 more (--by test --top 0 lists them all)",
    ]
    directories = hermetic(["baseline", "stats", "--by", "directory"], cwd=project)
    assert directories.stdout.splitlines()[2:] == ["directory  entries", "tests            7"]


def test_a_bad_top_is_one_line_and_exit_2(project: Path) -> None:
    result = hermetic(["baseline", "stats", "--top", "-1"], cwd=project)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert "expected a whole number >= 0, got '-1'" in result.stderr


# -- the burn-down over git history ----------------------------------------------------------------

def git(args: list[str], cwd: Path) -> None:
    result = run(["git", *GIT_IDENTITY, *args], cwd=cwd, env=child_env(cwd.parent / "home"))
    assert result.returncode == 0, result.stderr


def commit_versions(project: Path, versions: list[list[str]]) -> None:
    (project.parent / "home").mkdir(exist_ok=True)
    git(["init", "-q"], project)
    for number, lines in enumerate(versions):
        (project / "hermetic-baseline.txt").write_text("# debt\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
        git(["add", "-A"], project)
        git(["commit", "-q", "-m", f"version {number}"], project)


@pytest.fixture
def burnt_down(project: Path) -> Path:
    commit_versions(project, [DEBT, DEBT[:5], DEBT[1:4]])
    (project / "hermetic-baseline.txt").write_text("\n".join(DEBT[1:3]) + "\n", encoding="utf-8")  # not committed
    return project


def history_rows(output: str) -> list[list[str]]:
    """The table's rows without the date and commit columns."""
    lines = output.splitlines()
    end = lines.index("") if "" in lines else len(lines)
    return [line.split()[2:] for line in lines[1:end]]


def test_history_table_counts_each_commit_and_the_working_tree(burnt_down: Path) -> None:
    result = hermetic(["baseline", "stats", "--history"], cwd=burnt_down)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["date", "commit", "total", "HRM108", "HRM201", "HRM105"]
    assert history_rows(result.stdout) == [["7", "3", "3", "1"], ["5", "3", "1", "1"], ["3", "2", "0", "1"],
                                           ["2", "1", "0", "1"]]
    assert lines[4].startswith("now ")  # the uncommitted file
    assert "█" not in result.stdout  # no terminal: no bars unless asked


def test_history_chart_bars_follow_the_totals(burnt_down: Path) -> None:
    result = hermetic(["baseline", "stats", "--history", "--chart", "always", "--limit", "2"], cwd=burnt_down)
    assert result.returncode == 0, result.stderr
    # the columns: the codes of these commits, the most indebted at its peak first
    assert result.stdout.splitlines()[0].split() == ["date", "commit", "total", "HRM108", "HRM105", "HRM201"]
    assert history_rows(result.stdout) == [["5", "3", "1", "1"], ["3", "2", "1", "0"], ["2", "1", "1", "0"]]
    bars = [line for line in result.stdout.splitlines() if "█" in line]
    lengths = [sum(1 for char in line if char in "▏▎▍▌▋▊▉█") for line in bars]
    assert [line.split()[-1] for line in bars] == ["5", "3", "2"]
    assert lengths[0] == 40 and lengths[0] > lengths[1] > lengths[2] > 0


def test_history_svg_is_a_self_contained_stacked_chart(burnt_down: Path) -> None:
    result = hermetic(["baseline", "stats", "--history", "--svg", "burn-down.svg"], cwd=burnt_down)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "wrote burn-down.svg"
    text = (burnt_down / "burn-down.svg").read_text(encoding="utf-8")
    root = ElementTree.fromstring(text)
    assert root.tag == f"{SVG}svg"
    assert "href" not in text and "<script" not in text  # nothing to fetch, nothing to run
    areas = root.findall(f"{SVG}polygon")
    assert [area.find(f"{SVG}title").text for area in areas] == ["HRM108", "HRM201", "HRM105"]
    assert all(len(area.get("points", "").split()) == 8 for area in areas)  # 4 points up, 4 back
    legend = [t.text for t in root.iter(f"{SVG}text") if t.text and t.text.startswith("HRM")]
    assert legend == ["HRM108 (1)", "HRM201 (0)", "HRM105 (1)"]


def test_history_outside_git_is_one_line_and_exit_2(project: Path) -> None:
    # git looks for a repository no higher than the test's own directory
    env = {**child_env(project.parent / "home"), "GIT_CEILING_DIRECTORIES": str(project.parent)}
    result = run([sys.executable, "-m", "flake8_hermetic", "baseline", "stats", "--history"], cwd=project, env=env)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("flake8-hermetic: cannot read the history of hermetic-baseline.txt: git log: ")


def test_history_without_git_installed_is_one_line_and_exit_2(project: Path) -> None:
    env = {**child_env(project.parent / "home"), "PATH": str(project.parent / "empty")}
    (project.parent / "empty").mkdir()
    result = run([sys.executable, "-m", "flake8_hermetic", "baseline", "stats", "--history"], cwd=project, env=env)
    assert result.returncode == 2
    assert result.stderr == ("flake8-hermetic: cannot read the history of hermetic-baseline.txt: "
                             "git is not installed (or not on PATH)\n")


def test_history_of_an_uncommitted_baseline_says_to_commit_it(project: Path) -> None:
    (project.parent / "home").mkdir()
    git(["init", "-q"], project)
    git(["add", "setup.cfg"], project)
    git(["commit", "-q", "-m", "the config, not the baseline"], project)
    result = hermetic(["baseline", "stats", "--history"], cwd=project)
    assert (result.returncode, result.stderr) == (2, (
        "flake8-hermetic: cannot read the history of hermetic-baseline.txt: "
        "no commit has hermetic-baseline.txt in this git repository (commit it first)\n"
    ))
    assert os.path.exists(project / ".git")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--svg", "x.svg"], "--svg needs --history", id="svg-without-history"),
        pytest.param(["--chart", "always"], "--chart needs --history", id="chart-without-history"),
        pytest.param(["--history", "--by", "file"], "--by and --top are for the current file", id="by-with-history"),
    ],
)
def test_options_that_would_be_ignored_are_refused(project: Path, args: list[str], message: str) -> None:
    result = hermetic(["baseline", "stats", *args], cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"flake8-hermetic: {message}")
    assert not (project / "x.svg").exists()
