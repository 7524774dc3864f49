"""The pre-commit hooks, through a real ``pre-commit try-repo`` run.

``try-repo`` on a local checkout uses its HEAD, plus (when the tree is
dirty) a shadow commit of the staged and *tracked* modified files; files
git does not track yet are left out. So the hooks are tried from a
snapshot: the package and the top-level files copied into a fresh
repository and committed, whatever the checkout's own commit state.

Each ``try-repo`` builds its hook environment (a virtualenv with this
package pip-installed) in a fresh temporary store of its own, whatever
``PRE_COMMIT_HOME`` says, so every call costs an install. To keep that
cheap, each call runs both hooks (they share one environment), a failing
state and a fixed one make two calls in all, and the module shares one
home (pip's and virtualenv's caches) and one snapshot.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

import pytest
import yaml

from tests.helpers import REPO, child_env, run, write_tree

MANIFEST = REPO / ".pre-commit-hooks.yaml"
INSTALL_TIMEOUT = 600
GIT_IDENTITY = ("-c", "user.name=flake8-hermetic tests", "-c", "user.email=tests@flake8-hermetic.invalid",
                "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main")

LEAKY = """\
    from pathlib import Path


    def test_writes(tmp_path):
        Path("/tmp/report.txt").write_text("x")
        assert tmp_path.is_dir()
"""
FIXED = LEAKY.replace('Path("/tmp/report.txt")', '(tmp_path / "report.txt")')


# -- the manifest ------------------------------------------------------------------

def test_manifest_is_valid_and_declares_both_hooks() -> None:
    from pre_commit.clientlib import load_manifest

    hooks = {hook["id"]: hook for hook in load_manifest(str(MANIFEST))}
    assert sorted(hooks) == ["flake8-hermetic", "flake8-hermetic-baseline"]

    check = hooks["flake8-hermetic"]
    assert check["entry"] == "flake8-hermetic check"
    assert (check["language"], check["types"], check["require_serial"]) == ("python", ["python"], True)
    assert (check["pass_filenames"], check["always_run"]) == (True, False)

    baseline = hooks["flake8-hermetic-baseline"]
    assert baseline["entry"] == "flake8-hermetic baseline prune --exit-nonzero-on-fix"
    assert (baseline["language"], baseline["pass_filenames"], baseline["always_run"]) == ("python", False, False)


def baseline_hook_files() -> re.Pattern[str]:
    from pre_commit.clientlib import load_manifest

    [hook] = [hook for hook in load_manifest(str(MANIFEST)) if hook["id"] == "flake8-hermetic-baseline"]
    return re.compile(hook["files"])


@pytest.mark.parametrize("path", [
    "tests/test_app.py", "tests/helpers.py", "pkg/tests/data/x.json", "src/pkg/test_util.py", "app_test.py",
    "tests/conftest.py", "hermetic-baseline.txt", "setup.cfg", "sub/pyproject.toml",
], ids=str)
def test_the_baseline_hook_runs_when_test_code_the_baseline_or_a_config_changes(path: str) -> None:
    assert baseline_hook_files().search(path)


@pytest.mark.parametrize("path", ["README.md", "docs/ci.md", "src/pkg/app.py", "CHANGES.rst", "contest.py",
                                  "latest/x.py"], ids=str)
def test_the_baseline_hook_skips_a_commit_of_anything_else(path: str) -> None:
    assert not baseline_hook_files().search(path)


def readme_section(name: str) -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index(f"<!-- section:{name} -->")
    end = readme.find("\n## ", start)
    return readme[start: end if end != -1 else len(readme)]


def readme_hooks() -> list[tuple[str, dict[str, object]]]:
    """(repo, hook) of every .pre-commit-config.yaml the README's
    integrations section shows, each config validated by pre-commit."""
    import cfgv
    from pre_commit.clientlib import CONFIG_SCHEMA

    section = readme_section("integrations")
    configs = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    configs = [config for config in configs if isinstance(config, dict) and "repos" in config]
    for config in configs:
        cfgv.validate(config, CONFIG_SCHEMA)
    return [(repo["repo"], hook) for config in configs for repo in config["repos"] for hook in repo["hooks"]]


# The README's configs, and the route they install from (a release tag of the
# repository), are tested with the other install routes in test_install_routes.py.


# -- try-repo, for real -----------------------------------------------------------

@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def env(home: Path) -> dict[str, str]:
    """The children's environment: home, caches, git config and temporary
    files (try-repo's store) all inside the module's own directory."""
    environment = child_env(home)
    temporary = home / "tmp"
    temporary.mkdir(exist_ok=True)
    environment.update(TMPDIR=str(temporary), TEMP=str(temporary), TMP=str(temporary))
    for name in ("PRE_COMMIT", "PRE_COMMIT_ALLOW_NO_CONFIG", "SKIP", "VIRTUAL_ENV"):
        environment.pop(name, None)
    return environment


def git(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    result = run(["git", *GIT_IDENTITY, *args], cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """The package as a committed repository: what a user's pre-commit clones."""
    root = tmp_path_factory.mktemp("hook-repo")
    for item in REPO.iterdir():
        # in a git worktree .git is a file pointing at the real repository: never copy it
        if item.is_file() and item.name != ".git":
            shutil.copy2(item, root / item.name)
    shutil.copytree(REPO / "flake8_hermetic", root / "flake8_hermetic",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git(["init", "-q"], root, env)
    git(["add", "-A"], root, env)
    git(["commit", "-q", "-m", "snapshot"], root, env)
    return root


@pytest.fixture
def user_repo(tmp_path: Path, env: dict[str, str]) -> Path:
    """A user's project: a git repository with a flake8 config."""
    root = tmp_path / "project"
    write_tree(root, {"setup.cfg": "[flake8]\nmax-line-length = 100\n", "README.md": "# demo\n"})
    git(["init", "-q"], root, env)
    return root


def try_repo(hook_repo: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Stage everything (``--all-files`` runs on what git tracks), then try
    every hook of the manifest: one install serves both."""
    git(["add", "-A"], cwd, env)
    result = run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "--all-files", "--color", "never"],
        cwd=cwd, env=env, timeout=INSTALL_TIMEOUT,
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


HOOK_STATUS = re.compile(r"^(?P<name>\S.*?)\.{3,}(?P<status>Passed|Failed|Skipped)$", re.M)


def hook_results(output: str) -> dict[str, tuple[str, str]]:
    """pre-commit's report, by hook name: (status, the hook's own output)."""
    found = list(HOOK_STATUS.finditer(output))
    results = {}
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(output)
        results[match["name"]] = (match["status"], output[match.end():end])
    return results


@pytest.mark.integration
def test_hooks_fail_on_new_and_stale_debt_then_pass_once_fixed(
    hook_repo: Path, user_repo: Path, env: dict[str, str],
) -> None:
    legacy = 'tests/test_legacy.py::test_writes\tHRM108\t"/tmp/report.txt"\n'
    stale = 'tests/test_app.py::test_renamed\tHRM108\t"/tmp/report.txt"'
    write_tree(user_repo, {
        "tests/test_app.py": LEAKY,
        "tests/test_legacy.py": LEAKY,  # baselined: quiet in both runs
        "src/app.py": "from pathlib import Path\n\nPath('/tmp/app.log').write_text('x')\n",  # not a test file
        "hermetic-baseline.txt": legacy + stale + "\n",
    })
    failed = try_repo(hook_repo, user_repo, env)
    assert failed.returncode == 1, failed.stdout
    results = hook_results(failed.stdout)
    assert sorted(results) == ["flake8-hermetic", "flake8-hermetic baseline"], failed.stdout

    status, output = results["flake8-hermetic"]
    assert status == "Failed"
    assert "- hook id: flake8-hermetic\n" in output
    assert re.search(
        r"^\S*tests/test_app\.py:5:10: HRM108 '/tmp/report\.txt' is a fixed path shared by every worker", output, re.M,
    )
    assert re.search(r"^\S*tests/test_app\.py:1:1: HRM900 .*test_renamed", output, re.M)
    assert "1 new, 1 baselined, 1 stale" in output
    assert "test_legacy.py:" not in output
    assert "src/app.py" not in output

    status, output = results["flake8-hermetic baseline"]
    assert status == "Failed"
    assert "- hook id: flake8-hermetic-baseline\n" in output
    assert re.search(r"hermetic-baseline\.txt:2: stale .*; removed: ", output), output
    assert stale in output  # the entry as its line in the file, TABs and all
    # the hook pruned the stale entry itself: the legacy one stays
    assert (user_repo / "hermetic-baseline.txt").read_text(encoding="utf-8") == legacy

    write_tree(user_repo, {"tests/test_app.py": FIXED, "hermetic-baseline.txt": legacy})
    passed = try_repo(hook_repo, user_repo, env)
    assert passed.returncode == 0, passed.stdout
    assert {name: status for name, (status, _) in hook_results(passed.stdout).items()} == {
        "flake8-hermetic": "Passed", "flake8-hermetic baseline": "Passed",
    }


def test_snapshot_leaves_out_nothing_the_build_needs() -> None:
    # The snapshot copies the top-level files and the package: the package
    # must not need another directory of the checkout to build.
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    found = config["tool"]["setuptools"]["packages"]["find"]
    assert found.get("where", ["."]) == ["."]
    assert found["include"] == ["flake8_hermetic*"]
    assert (REPO / "flake8_hermetic" / "__init__.py").is_file()
    # every package directory of the tree is a package (no namespace gaps the build would skip)
    folders = {p.parent for p in (REPO / "flake8_hermetic").rglob("*.py")}
    assert [str(f) for f in folders if not (f / "__init__.py").is_file()] == []
