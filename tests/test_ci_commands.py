"""The CI lint job: the commands docs/ci.md puts in CI, run here on a project.

The jobs' YAML is read from docs/ci.md itself, so the page cannot name a
command these tests do not run.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO, hermetic, run, write_tree

LEAKY = """\
    from pathlib import Path


    def test_known(tmp_path):
        Path("/tmp/known.txt").write_text("x")
        assert tmp_path.is_dir()


    def test_fresh(tmp_path):
        Path("/tmp/fresh.txt").write_text("x")
        assert tmp_path.is_dir()
"""
FIXED = LEAKY.replace('Path("/tmp/fresh.txt")', '(tmp_path / "fresh.txt")')
KNOWN = 'tests/test_app.py::test_known\tHRM108\t"/tmp/known.txt"\n'
GONE = 'tests/test_removed.py::test_old\tHRM108\t"/tmp/old.txt"\n'
HEADER = "# known hazards, burnt down over time\n\n"
ANNOTATION = re.compile(
    r"^::error file=(?P<file>[^,]+),line=(?P<line>\d+),col=(?P<col>\d+),title=(?P<code>HRM\d{3})::(?P<message>.+)$"
)
STALE_ANNOTATION = re.compile(
    r"^::warning file=(?P<file>[^,]+),line=(?P<line>\d+),title=(?P<code>HRM\d{3})::(?P<message>.+)$"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A flake8 project with one new hazard, one baselined, and a baseline
    entry of a test file that was deleted since."""
    return write_tree(tmp_path, {
        "setup.cfg": "[flake8]\nmax-line-length = 100\n",
        "tests/test_app.py": LEAKY,
        "src/app.py": "from pathlib import Path\n\nPath('/tmp/app.log').write_text('x')\n",  # not a test file
        "hermetic-baseline.txt": HEADER + KNOWN + GONE,
    })


def pack(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = hermetic(args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


# -- check --format github ----------------------------------------------------

def test_github_format_annotates_only_the_new_hazard(project: Path) -> None:
    result = pack(["check", "--format", "github"], cwd=project)
    assert result.returncode == 1
    *annotations, summary = result.stdout.splitlines()
    assert summary == "1 test file, 1 new, 1 baselined, 0 stale"
    assert len(annotations) == 1
    found = ANNOTATION.match(annotations[0])
    assert found, annotations[0]
    assert (found["file"], found["line"], found["col"], found["code"]) == ("tests/test_app.py", "10", "10", "HRM108")
    assert "'/tmp/fresh.txt' is a fixed path shared by every worker and run" in found["message"]


def test_github_format_passes_once_fixed(project: Path) -> None:
    write_tree(project, {"tests/test_app.py": FIXED})
    result = pack(["check", "--format", "github"], cwd=project)
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines() == ["1 test file, 0 new, 1 baselined, 0 stale"]


def test_github_format_annotates_a_stale_entry_as_a_warning_on_its_baseline_line(project: Path) -> None:
    write_tree(project, {"tests/test_app.py": FIXED.replace('Path("/tmp/known.txt")', '(tmp_path / "known.txt")')})
    result = pack(["check", "--format", "github"], cwd=project)
    assert result.returncode == 1
    *annotations, summary = result.stdout.splitlines()
    assert summary == "1 test file, 0 new, 0 baselined, 1 stale"
    found = STALE_ANNOTATION.match(annotations[0])
    assert found, annotations
    known_line = (HEADER + KNOWN).count("\n")  # the entry's own line in the baseline
    assert (found["file"], int(found["line"]), found["code"]) == ("hermetic-baseline.txt", known_line, "HRM900")
    # readable: the entry's fields separated by spaces, no TAB and no escaped \t
    assert "test_known HRM108 " in found["message"]
    assert "\\t" not in found["message"] and "\t" not in found["message"]


def test_default_format_is_flake8_lines_and_the_summary(project: Path) -> None:
    result = pack(["check"], cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "tests/test_app.py:10:10: HRM108 '/tmp/fresh.txt' is a fixed path shared by every worker and run; "
        "use tmp_path (or a mkdtemp() with cleanup)",
        "1 test file, 1 new, 1 baselined, 0 stale",
    ]


@pytest.mark.parametrize("args", [
    pytest.param(["check", "--format", "github"], id="check"),
    pytest.param(["baseline", "prune", "--check"], id="prune"),
])
def test_a_conflicted_baseline_stops_the_job_with_one_line(project: Path, args: list[str]) -> None:
    write_tree(project, {"hermetic-baseline.txt": f"{KNOWN}<<<<<<< HEAD\n{GONE}=======\n>>>>>>> topic\n"})
    result = pack(args, cwd=project)
    assert result.returncode == 2, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "hermetic-baseline.txt:2:" in lines[0]
    assert "merge-conflict" in lines[0]


# -- baseline prune --check ------------------------------------------------------

def test_prune_check_fails_on_a_deleted_files_entry_and_writes_nothing(project: Path) -> None:
    baseline = project / "hermetic-baseline.txt"
    before = baseline.read_bytes()
    result = pack(["baseline", "prune", "--check"], cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"hermetic-baseline.txt:4: tests/test_removed.py does not exist; would remove: {GONE.strip()}",
    ]
    assert baseline.read_bytes() == before


def test_prune_check_passes_after_a_prune(project: Path) -> None:
    assert pack(["baseline", "prune"], cwd=project).returncode == 0
    assert (project / "hermetic-baseline.txt").read_text(encoding="utf-8") == HEADER + KNOWN
    result = pack(["baseline", "prune", "--check"], cwd=project)
    assert result.returncode == 0, result.stdout
    assert "would remove" not in result.stdout


def test_prune_check_fails_on_a_stale_entry(project: Path) -> None:
    write_tree(project, {"hermetic-baseline.txt": HEADER + KNOWN.replace("test_known", "test_renamed") + KNOWN})
    result = pack(["baseline", "prune", "--check"], cwd=project)
    assert result.returncode == 1
    assert "test_renamed" in result.stdout
    assert "stale (matches no violation)" in result.stdout


# -- the jobs as docs/ci.md writes them ------------------------------------------

def documented_jobs() -> dict[str, list[str]]:
    """The shell commands of each YAML job on docs/ci.md, by job name."""
    page = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    jobs: dict[str, list[str]] = {}
    for block in re.findall(r"```yaml\n(.*?)```", page, re.S):
        document = yaml.safe_load(block)
        if isinstance(document, list):  # steps to add to a job
            jobs.setdefault("github-extra", []).extend(s["run"] for s in document if "run" in s)
        elif "jobs" in document:
            for name, job in document["jobs"].items():
                jobs[f"github-{name}"] = [s["run"] for s in job["steps"] if "run" in s]
        else:
            for name, job in document.items():
                jobs[f"gitlab-{name}"] = list(job["script"])
    return jobs


def pack_commands(commands: list[str]) -> list[str]:
    return [command for command in commands if command.startswith("flake8-hermetic ")]


def test_docs_show_a_github_and_a_gitlab_job_running_both_commands() -> None:
    jobs = documented_jobs()
    assert pack_commands(jobs["github-hermetic"]) == [
        "flake8-hermetic check --format github",
        "flake8-hermetic baseline prune --check",
    ]
    assert pack_commands(jobs["gitlab-hermetic"]) == [
        "flake8-hermetic check",
        "flake8-hermetic baseline prune --check",
    ]
    assert pack_commands(jobs["github-extra"]) == ["flake8-hermetic check --format sarif > hermetic.sarif"]
    others = [c for commands in jobs.values() for c in commands if not c.startswith("flake8-hermetic ")]
    assert all(command.startswith("python -m pip install ") for command in others), others


DOCUMENTED = sorted({command for commands in documented_jobs().values() for command in pack_commands(commands)})


def run_documented(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a documented command line (``flake8-hermetic ...``, maybe ``> FILE``) as this interpreter's module."""
    words = shlex.split(command)
    redirect = words.index(">") if ">" in words else len(words)
    result = run([sys.executable, "-m", "flake8_hermetic", *words[1:redirect]], cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    if redirect < len(words):
        (cwd / words[redirect + 1]).write_text(result.stdout, encoding="utf-8")
    return result


@pytest.mark.parametrize("command", [pytest.param(c, id=c.removeprefix("flake8-hermetic ")) for c in DOCUMENTED])
def test_every_documented_command_fails_on_the_debt_and_passes_without(project: Path, command: str) -> None:
    failed = run_documented(command, cwd=project)
    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    write_tree(project, {"tests/test_app.py": FIXED, "hermetic-baseline.txt": HEADER + KNOWN})
    passed = run_documented(command, cwd=project)
    assert passed.returncode == 0, (passed.stdout, passed.stderr)


def test_the_sarif_step_writes_the_log_code_scanning_reads(project: Path) -> None:
    command = next(c for c in DOCUMENTED if "--format sarif" in c)
    result = run_documented(command, cwd=project)
    assert result.returncode == 1
    log = json.loads((project / "hermetic.sarif").read_text(encoding="utf-8"))
    assert log["version"] == "2.1.0"
    results = [r for r in log["runs"][0]["results"] if "suppressions" not in r]
    assert [r["ruleId"] for r in results] == ["HRM108"]
    # the baselined one is in the log too, suppressed (code scanning shows the debt)
    assert [r["ruleId"] for r in log["runs"][0]["results"] if "suppressions" in r] == ["HRM108"]
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "tests/test_app.py"
    assert location["region"]["startLine"] == 10
    assert result.stderr.strip().splitlines()[-1] == "1 test file, 1 new, 1 baselined, 0 stale"
