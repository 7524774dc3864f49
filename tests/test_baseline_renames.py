"""The debt follows a renamed or deleted test file (issue 27).

Every test drives the real command line (``sys.executable -m
flake8_hermetic``) in a temporary git repository of its own, built and
changed with real git (``git mv``, ``git rm``, a merge that conflicts); one
runs the baseline hook through a real ``pre-commit try-repo``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import test_precommit as precommit
from tests.helpers import child_env, run, write_tree
from tests.test_precommit import git, hook_results, try_repo

# test_precommit's fixtures (the children's environment, the hook repository, a user's repository)
home = precommit.home
env = precommit.env
hook_repo = precommit.hook_repo
user_repo = precommit.user_repo

BASELINE = "hermetic-baseline.txt"

# Two fixed /tmp paths (HRM108), each in its own test; long enough that git
# still calls the file a rename once one of its tests is edited.
FRAMES = """\
    from pathlib import Path


    def test_report(tmp_path):
        Path("/tmp/report.txt").write_text("x")
        assert tmp_path.is_dir()


    def test_log(tmp_path):
        Path("/tmp/frames.log").write_text("x")
        assert tmp_path.is_dir()


    def test_first_frame():
        frames = [1, 2, 3]
        assert frames[0] == 1


    def test_last_frame():
        frames = [1, 2, 3]
        assert frames[-1] == 3


    def test_frame_count():
        frames = [1, 2, 3]
        assert len(frames) == 3
"""
CLEAN = "def test_ok():\n    assert True\n"
REPORT = 'tests/test_frames.py::test_report\tHRM108\t"/tmp/report.txt"'
LOG = 'tests/test_frames.py::test_log\tHRM108\t"/tmp/frames.log"'
OTHER = 'tests/test_other.py::test_other\tHRM108\t"/tmp/other.txt"'
OTHER_SOURCE = 'from pathlib import Path\n\n\ndef test_other():\n    Path("/tmp/other.txt").write_text("x")\n'


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str]) -> Path:
    """A committed project: one test file with two baselined hazards, one
    more with one, and a clean one."""
    root = write_tree(tmp_path / "project", {
        "setup.cfg": "[flake8]\nmax-line-length = 100\n",
        "tests/test_frames.py": FRAMES,
        "tests/test_other.py": OTHER_SOURCE,
        "tests/test_clean.py": CLEAN,
        BASELINE: f"{LOG}\n{REPORT}\n{OTHER}\n",
    })
    git(["init", "-q"], root, env)
    commit(root, env, "a suite and its baseline")
    return root


def commit(root: Path, env: dict[str, str], message: str) -> None:
    git(["add", "-A"], root, env)
    git(["commit", "-q", "--no-verify", "-m", message], root, env)


def pack(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = run([sys.executable, "-m", "flake8_hermetic", *args], cwd=cwd, env=env)
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


def baseline_lines(root: Path) -> list[str]:
    text = (root / BASELINE).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def renamed(line: str) -> str:
    return line.replace("tests/test_frames.py", "tests/test_tb_frames.py")


# -- a rename carries its entries ---------------------------------------------------------------

def test_check_treats_a_git_mv_as_baselined_and_prune_moves_the_entries(
    project: Path, env: dict[str, str],
) -> None:
    git(["mv", "tests/test_frames.py", "tests/test_tb_frames.py"], project, env)
    # check before the baseline caught up: the moved debt is baselined, whole project or the staged file
    whole = pack(["check"], project, env)
    assert (whole.returncode, whole.stdout) == (0, "3 test files, 0 new, 3 baselined, 0 stale\n")
    staged = pack(["check", "tests/test_tb_frames.py"], project, env)
    assert (staged.returncode, staged.stdout) == (0, "1 test file, 0 new, 2 baselined, 0 stale\n")

    before = (project / BASELINE).read_bytes()
    asked = pack(["baseline", "prune", "--check"], project, env)
    assert (asked.returncode, asked.stdout) == (1, (
        f"{BASELINE}:1: would move 2 entries of tests/test_frames.py to tests/test_tb_frames.py (a git rename)\n"
    ))
    audit = pack(["baseline", "check"], project, env)
    assert audit.returncode == 1
    assert audit.stdout.startswith(f"{BASELINE}:1: tests/test_frames.py is now tests/test_tb_frames.py "
                                   "(a git rename): 2 entries to move (flake8-hermetic baseline prune)\n")
    assert (project / BASELINE).read_bytes() == before

    # the baseline hook's command: it moves them, and fails once as a fixing hook does
    fixing = pack(["baseline", "prune", "--exit-nonzero-on-fix"], project, env)
    assert fixing.returncode == 1, fixing.stdout
    assert f"{BASELINE}:1: moved 2 entries of tests/test_frames.py to tests/test_tb_frames.py" in fixing.stdout
    assert "removed" not in fixing.stdout
    assert baseline_lines(project) == sorted([renamed(LOG), renamed(REPORT), OTHER])
    again = pack(["baseline", "prune", "--exit-nonzero-on-fix"], project, env)
    assert again.returncode == 0, again.stdout
    assert pack(["baseline", "check"], project, env).returncode == 0
    assert pack(["check"], project, env).stdout == "3 test files, 0 new, 3 baselined, 0 stale\n"


def test_regenerate_moves_a_renamed_files_entries_without_growth_and_keeps_their_comments(
    project: Path, env: dict[str, str],
) -> None:
    reason = "# why: the report path is shared on purpose"
    write_tree(project, {BASELINE: f"# the header\n\n{LOG}\n{reason}\n{REPORT}\n{OTHER}\n"})
    commit(project, env, "a reason for an entry")
    git(["mv", "tests/test_frames.py", "tests/test_tb_frames.py"], project, env)
    result = pack(["baseline", "regenerate"], project, env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        f"{BASELINE}:3: moved 2 entries of tests/test_frames.py to tests/test_tb_frames.py (a git rename)",
        f"{BASELINE}: 3 entries; 3 test files linted",
    ]
    text = (project / BASELINE).read_text(encoding="utf-8")
    assert text == f"# the header\n\n{OTHER}\n{renamed(LOG)}\n{reason}\n{renamed(REPORT)}\n"
    assert baseline_lines(project) == sorted([renamed(LOG), renamed(REPORT), OTHER])


def test_a_renamed_and_edited_test_keeps_only_what_still_matches(project: Path, env: dict[str, str]) -> None:
    git(["mv", "tests/test_frames.py", "tests/test_tb_frames.py"], project, env)
    edited = FRAMES.replace('Path("/tmp/frames.log")', '(tmp_path / "frames.log")')  # test_log fixed
    edited = edited.replace("frames = [1, 2, 3]\n        assert len", 'Path("/tmp/count").touch()\n        assert len')
    write_tree(project, {"tests/test_tb_frames.py": edited})
    check = pack(["check", "tests/test_tb_frames.py"], project, env)
    assert check.returncode == 1
    lines = check.stdout.splitlines()
    assert lines[-1] == "1 test file, 1 new, 1 baselined, 1 stale"
    assert [line.split(": ")[1][:6] for line in lines[:-1]] == ["HRM900", "HRM108"]
    assert "tests/test_tb_frames.py::test_log" in lines[0]  # the fixed one, named under its new path
    assert lines[1].startswith("tests/test_tb_frames.py:") and "'/tmp/count'" in lines[1]
    # regenerate: the move is no growth, the new hazard is
    refused = pack(["baseline", "regenerate"], project, env)
    assert refused.returncode == 1
    assert "1 new violation would be added" in refused.stderr
    pruned = pack(["baseline", "prune"], project, env)
    assert pruned.returncode == 0, pruned.stdout
    assert baseline_lines(project) == sorted([renamed(REPORT), OTHER])


def test_a_move_git_does_not_know_pairs_by_the_same_findings(project: Path, env: dict[str, str]) -> None:
    # a plain mv: git sees a deleted file and an untracked one, no rename
    (project / "tests" / "test_frames.py").rename(project / "tests" / "test_tb_frames.py")
    assert pack(["check"], project, env).stdout == "3 test files, 0 new, 3 baselined, 0 stale\n"
    pruned = pack(["baseline", "prune"], project, env)
    assert pruned.returncode == 0, pruned.stdout
    assert (f"{BASELINE}:1: moved 2 entries of tests/test_frames.py to tests/test_tb_frames.py "
            "(the same findings under a new path)") in pruned.stdout
    assert baseline_lines(project) == sorted([renamed(LOG), renamed(REPORT), OTHER])


def test_without_git_a_new_file_with_other_findings_takes_nothing(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "plain", {
        "setup.cfg": "[flake8]\n",
        "tests/test_tb_frames.py": FRAMES.replace("/tmp/frames.log", "/tmp/other.log"),  # not the same debt
        "tests/test_copy.py": OTHER_SOURCE,
        "tests/test_copy2.py": OTHER_SOURCE,  # two candidates for test_other.py: neither takes it
        BASELINE: f"{LOG}\n{REPORT}\n{OTHER}\n",
    })
    environment = child_env(tmp_path / "home")
    check = pack(["check"], root, environment)
    assert check.stdout.splitlines()[-1] == "3 test files, 4 new, 0 baselined, 0 stale"
    pruned = pack(["baseline", "prune"], root, environment)
    assert pruned.returncode == 0
    assert " moved " not in pruned.stdout
    assert baseline_lines(root) == []


# -- a deleted file's entries, static and runtime ------------------------------------------------

def test_a_deleted_test_files_runtime_entries_are_reported_and_pruned(project: Path, env: dict[str, str]) -> None:
    runtime = "tests/test_frames.py::test_report\tHRM604\tAPP_MODE set"
    write_tree(project, {BASELINE: f"{LOG}\n{REPORT}\n{runtime}\n{OTHER}\n"})
    commit(project, env, "the guard's entry")
    git(["rm", "-q", "tests/test_frames.py"], project, env)
    audit = pack(["baseline", "check"], project, env)
    assert audit.returncode == 1
    assert f"{BASELINE}:3: tests/test_frames.py does not exist: {runtime!r}" in audit.stdout.splitlines()
    asked = pack(["baseline", "prune", "--check"], project, env)
    assert asked.returncode == 1
    assert f"{BASELINE}:3: tests/test_frames.py does not exist; would remove: {runtime}" in asked.stdout.splitlines()
    assert pack(["baseline", "prune"], project, env).returncode == 0
    assert baseline_lines(project) == [OTHER]


# -- what prune prints ---------------------------------------------------------------------------

def test_prune_prints_a_removed_entry_as_its_tab_separated_line(project: Path, env: dict[str, str]) -> None:
    write_tree(project, {"tests/test_other.py": CLEAN.replace("test_ok", "test_other")})  # fixed
    result = pack(["baseline", "prune"], project, env)
    assert result.returncode == 0
    removed = [line for line in result.stdout.splitlines() if "removed" in line]
    assert removed == [f"{BASELINE}:3: stale (matches no violation); removed: {OTHER}"]
    assert "\\t" not in result.stdout
    assert removed[0].split(": ", 2)[2].split("\t") == OTHER.split("\t")  # the fields, as the file has them


def test_prune_counts_the_test_files_as_check_does(project: Path, env: dict[str, str]) -> None:
    write_tree(project, {"tests/test_more.py": CLEAN, "tests/helpers.py": "VALUE = 1\n", "src/app.py": "X = 1\n"})
    check = pack(["check"], project, env).stdout.splitlines()[-1]
    prune = pack(["baseline", "prune"], project, env).stdout.splitlines()[-1]
    audit = pack(["baseline", "check"], project, env).stdout.splitlines()[-1]
    files = check.split(",")[0]
    assert files == "4 test files"
    assert prune == f"{BASELINE}: 3 entries; {files}, 2 linted: those the baseline names"
    assert audit == f"{BASELINE}: 3 entries, 3 judged, all current ({files}, 2 linted: those the baseline names)"


# -- a merge conflict in the baseline ----------------------------------------------------------

def test_a_conflicted_baseline_says_keep_both_sides_and_prune_which_resolves_it(
    project: Path, env: dict[str, str],
) -> None:
    mid = LOG.replace("test_log", "test_mid").replace("/tmp/frames.log", "/tmp/mid")
    git(["checkout", "-q", "-b", "topic"], project, env)
    write_tree(project, {
        "tests/test_frames.py": FRAMES + '\n\n    def test_mid():\n        Path("/tmp/mid").touch()\n',
        BASELINE: f"{LOG}\n{mid}\n{REPORT}\n{OTHER}\n",  # a reviewed new entry
    })
    commit(project, env, "topic: test_mid")
    git(["checkout", "-q", "main"], project, env)
    write_tree(project, {
        "tests/test_frames.py": FRAMES.replace('Path("/tmp/frames.log")', '(tmp_path / "frames.log")'),
        BASELINE: f"{REPORT}\n{OTHER}\n",  # test_log fixed, its entry pruned
    })
    commit(project, env, "main: fix test_log")
    merge = run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "topic"], cwd=project, env=env)
    assert merge.returncode == 1, merge.stdout + merge.stderr
    assert "CONFLICT (content): Merge conflict in hermetic-baseline.txt" in merge.stdout
    assert "CONFLICT (content): Merge conflict in tests" not in merge.stdout  # the code merged cleanly
    text = (project / BASELINE).read_text(encoding="utf-8")

    refused = pack(["baseline", "prune"], project, env)
    assert refused.returncode == 2
    assert refused.stderr.endswith(
        "merge-conflict marker; keep both sides' lines, delete the markers, then run 'flake8-hermetic baseline prune'\n"
    )
    # as the message (and docs/baseline.md) says: both sides' lines, no markers, then prune
    markers = ("<<<<<<<", "=======", ">>>>>>>")
    write_tree(project, {BASELINE: "".join(f"{line}\n" for line in text.splitlines() if not line.startswith(markers))})
    pruned = pack(["baseline", "prune"], project, env)
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    assert f"stale (matches no violation); removed: {LOG}" in pruned.stdout.splitlines()[0]
    assert baseline_lines(project) == [mid, REPORT, OTHER]
    assert pack(["baseline", "check"], project, env).returncode == 0
    assert pack(["check"], project, env).stdout == "3 test files, 0 new, 3 baselined, 0 stale\n"


# -- the baseline hook, for real ----------------------------------------------------------------

@pytest.mark.integration
def test_the_baseline_hook_moves_a_git_mv_and_the_check_hook_passes(
    hook_repo: Path, user_repo: Path, env: dict[str, str],
) -> None:
    write_tree(user_repo, {"tests/test_frames.py": FRAMES, BASELINE: f"{LOG}\n{REPORT}\n"})
    commit(user_repo, env, "a suite and its baseline")
    git(["mv", "tests/test_frames.py", "tests/test_tb_frames.py"], user_repo, env)
    result = try_repo(hook_repo, user_repo, env)
    results = hook_results(result.stdout)
    assert results["flake8-hermetic"][0] == "Passed", result.stdout
    status, output = results["flake8-hermetic baseline"]
    assert status == "Failed", result.stdout
    assert "files were modified by this hook" in output
    assert f"{BASELINE}:1: moved 2 entries of tests/test_frames.py to tests/test_tb_frames.py" in output
    assert baseline_lines(user_repo) == [renamed(LOG), renamed(REPORT)]
