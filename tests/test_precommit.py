"""The pre-commit hooks, through a real ``pre-commit try-repo`` run.

``try-repo`` on a local checkout uses its HEAD, plus (when the tree is
dirty) a shadow commit of the staged and *tracked* modified files; files
git does not track yet are left out. So the hooks are tried from a
snapshot: the package and the top-level files copied into a fresh
repository and committed, whatever the checkout's own commit state.

Each ``try-repo`` builds its hook environment (a virtualenv with this
package pip-installed) in a fresh temporary store, so every call costs an
install; the module shares one home (pip's and virtualenv's caches) and
one snapshot between its tests to keep that cheap.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO, child_env, run, write_tree

MANIFEST = REPO / ".pre-commit-hooks.yaml"
INSTALL_TIMEOUT = 600
GIT_IDENTITY = ("-c", "user.name=flake8-hermetic tests", "-c", "user.email=tests@flake8-hermetic.invalid",
                "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main")

LEAKY = """\
    import os


    def test_moves(tmp_path):
        os.chdir(tmp_path)
        assert os.getcwd() == str(tmp_path)
"""
FIXED = LEAKY.replace("def test_moves(tmp_path):\n        os.chdir(tmp_path)",
                      "def test_moves(tmp_path, monkeypatch):\n        monkeypatch.chdir(tmp_path)")


# -- the manifest ------------------------------------------------------------------

def test_manifest_is_valid_and_declares_both_hooks() -> None:
    from pre_commit.clientlib import load_manifest

    hooks = {hook["id"]: hook for hook in load_manifest(str(MANIFEST))}
    assert sorted(hooks) == ["flake8-hermetic", "flake8-hermetic-baseline"]

    check = hooks["flake8-hermetic"]
    assert check["entry"] == "flake8-hermetic check"
    assert (check["language"], check["types"], check["require_serial"]) == ("python", ["python"], True)
    assert check["pass_filenames"] is True and check["always_run"] is False

    baseline = hooks["flake8-hermetic-baseline"]
    assert baseline["entry"] == "flake8-hermetic baseline check"
    assert (baseline["language"], baseline["pass_filenames"], baseline["always_run"]) == ("python", False, True)


def readme_section(name: str) -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index(f"<!-- section:{name} -->")
    end = readme.find("\n## ", start)
    return readme[start: end if end != -1 else len(readme)]


def test_readme_configs_are_valid_and_name_the_manifests_hooks() -> None:
    from pre_commit.clientlib import CONFIG_SCHEMA
    import cfgv

    section = readme_section("integrations")
    configs = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    configs = [config for config in configs if isinstance(config, dict) and "repos" in config]
    assert configs, "the integrations section shows no .pre-commit-config.yaml"
    ours, flake8_route = set(), None
    for config in configs:
        cfgv.validate(config, CONFIG_SCHEMA)
        for repo in config["repos"]:
            for hook in repo["hooks"]:
                if repo["repo"].endswith("/flake8-hermetic"):
                    ours.add(hook["id"])
                elif hook["id"] == "flake8":
                    flake8_route = hook
    assert ours == {"flake8-hermetic", "flake8-hermetic-baseline"}
    assert flake8_route is not None and "flake8-hermetic" in flake8_route["additional_dependencies"]


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
        if item.is_file():
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


def try_repo(hook_repo: Path, hook: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Stage everything (``--all-files`` runs on what git tracks), then try the hook."""
    git(["add", "-A"], cwd, env)
    result = run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook, "--all-files", "--color", "never"],
        cwd=cwd, env=env, timeout=INSTALL_TIMEOUT,
    )
    assert "Traceback" not in result.stdout + result.stderr, result.stdout + result.stderr
    return result


def status(output: str, name: str) -> str:
    found = re.search(rf"^{re.escape(name)}\.+(Passed|Failed|Skipped)", output, re.M)
    assert found, output
    return found.group(1)


@pytest.mark.integration
def test_check_hook_fails_on_a_new_hazard_then_passes_once_fixed(
    hook_repo: Path, user_repo: Path, env: dict[str, str],
) -> None:
    write_tree(user_repo, {"tests/test_app.py": LEAKY, "src/app.py": "import os\n\nos.chdir('/')\n"})
    failed = try_repo(hook_repo, "flake8-hermetic", user_repo, env)
    assert failed.returncode == 1, failed.stdout
    assert status(failed.stdout, "flake8-hermetic") == "Failed"
    assert "- hook id: flake8-hermetic\n" in failed.stdout
    assert re.search(r"^\S*tests/test_app\.py:5:5: HRM105 os\.chdir\(\) leaks the working directory", failed.stdout, re.M)
    assert "1 new, 0 baselined, 0 stale" in failed.stdout
    assert "src/app.py" not in failed.stdout  # not a test file

    write_tree(user_repo, {"tests/test_app.py": FIXED})
    passed = try_repo(hook_repo, "flake8-hermetic", user_repo, env)
    assert passed.returncode == 0, passed.stdout
    assert status(passed.stdout, "flake8-hermetic") == "Passed"


@pytest.mark.integration
def test_baseline_hook_fails_on_a_stale_entry_then_passes_once_pruned(
    hook_repo: Path, user_repo: Path, env: dict[str, str],
) -> None:
    stale = "tests/test_app.py::test_moves\tHRM105\tos.chdir(tmp_path)"
    write_tree(user_repo, {"tests/test_app.py": FIXED, "hermetic-baseline.txt": stale + "\n"})
    failed = try_repo(hook_repo, "flake8-hermetic-baseline", user_repo, env)
    assert failed.returncode == 1, failed.stdout
    assert status(failed.stdout, "flake8-hermetic baseline") == "Failed"
    assert re.search(r"hermetic-baseline\.txt:1: .*stale", failed.stdout), failed.stdout
    assert repr(stale) in failed.stdout

    write_tree(user_repo, {"hermetic-baseline.txt": ""})
    passed = try_repo(hook_repo, "flake8-hermetic-baseline", user_repo, env)
    assert passed.returncode == 0, passed.stdout
    assert status(passed.stdout, "flake8-hermetic baseline") == "Passed"


def test_snapshot_leaves_out_nothing_the_build_needs() -> None:
    # The snapshot copies the top-level files and the package: the package
    # must not need another directory of the checkout to build.
    config = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    packages = re.search(r'^packages = \[(.*?)\]', config, re.M)
    assert packages, "pyproject.toml lists no packages"
    for name in re.findall(r'"([^"]+)"', packages.group(1)):
        assert name.split(".")[0] == "flake8_hermetic", name
        assert (REPO / name.replace(".", os.sep)).is_dir(), name
