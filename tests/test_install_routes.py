"""Every install route the README and docs/ show, followed as written.

The pack is not on PyPI, so a route is a clone, a git URL at a release tag,
a wheel built with ``python -m build``, or pre-commit at a tag of the
repository. The integration tests take the commands from the README itself
and run them against a snapshot of this checkout (test_precommit's
``hook_repo``) standing in for the repository on GitHub: its URL becomes the
snapshot's path, and the release tag is made in a clone of it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from flake8_hermetic import __version__
from tests import test_precommit as precommit
from tests.helpers import REPO, run, write_tree

# the module-scoped home, environment and snapshot of the pre-commit tests, and their user project
home = precommit.home
env = precommit.env
hook_repo = precommit.hook_repo
user_repo = precommit.user_repo

URL = "https://github.com/flake8-hermetic/flake8-hermetic"
TAG = f"v{__version__}"
WHEEL = f"flake8_hermetic-{__version__}-py3-none-any.whl"
SDIST = f"flake8_hermetic-{__version__}.tar.gz"
REQUIREMENT = f"flake8-hermetic @ git+{URL}@{TAG}"
DOCS = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])


def install_commands() -> list[str]:
    """The shell lines of the README's install section, in order."""
    section = precommit.readme_section("install")
    return [line for block in re.findall(r"```sh\n(.*?)```", section, re.S) for line in block.splitlines()]


def paragraph_around(text: str, index: int) -> str:
    start = text.rfind("\n\n", 0, index)
    end = text.find("\n\n", index)
    return text[start + 2 if start != -1 else 0: end if end != -1 else len(text)]


def test_the_readme_installs_from_a_clone_a_tagged_git_url_or_a_wheel() -> None:
    assert install_commands() == [
        f"git clone {URL} && python -m pip install ./flake8-hermetic",
        f'python -m pip install "{REQUIREMENT}"',
        "cd flake8-hermetic && python -m pip install build && python -m build",
        f"python -m pip install dist/{WHEEL}",
    ]
    # and the first two commands of all stay the ones a clone runs
    try_it = (REPO / "README.md").read_text(encoding="utf-8").split("## Try it", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"```sh\n(.*?)\n```", try_it, re.S)[:2] == [
        "python -m pip install . && flake8-hermetic check --exit-zero --config examples/setup.cfg examples/",
        'python -m pip install -e ".[test]" && python -m pytest -n 2 -q',
    ]


PYPI_ONLY = re.compile(r"""^['"]?flake8-hermetic(\[[a-z,]+\])?(==[0-9x.]+)?['"]?$""")


def offered(text: str) -> list[tuple[int, str]]:
    """(offset, requirement) of every ``pip install`` argument and
    ``additional_dependencies`` item on a page."""
    found = []
    for command in re.finditer(r"pip install ([^`\n]*)", text):
        words = command.group(1).split("&&")[0]
        try:
            split = shlex.split(words)
        except ValueError:  # prose, not a command
            split = words.split()
        found += [(command.start(), word) for word in split if not word.startswith("-")]
    for dependencies in re.finditer(r"additional_dependencies: *(\[.*?\])", text):
        found += [(dependencies.start(), item) for item in yaml.safe_load(dependencies.group(1))]
    return found


@pytest.mark.parametrize("page", [pytest.param(p, id=p.relative_to(REPO).as_posix()) for p in DOCS])
def test_no_page_offers_the_package_index_except_as_once_released(page: Path) -> None:
    """``pip install flake8-hermetic`` and ``additional_dependencies:
    [flake8-hermetic]`` fail today: a page may name them only in a
    paragraph that says they work once the pack is released on PyPI."""
    text = page.read_text(encoding="utf-8")
    once = re.compile(r"\bonce\b.*\bPyPI\b|\bPyPI\b.*\bonce\b", re.S | re.I)
    unreleased = [word for at, word in offered(text) if PYPI_ONLY.match(word)
                  and not once.search(paragraph_around(text, at))]
    assert unreleased == []
    # a git URL names the repository and the release this page describes
    urls = {re.sub(r"^flake8-hermetic(\[[a-z,]+\])? @ ", "", word) for _, word in offered(text) if "git+" in word}
    assert urls <= {f"git+{URL}@{TAG}"}


def test_the_documented_git_url_is_the_same_everywhere() -> None:
    ci = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    jobs = [command for block in re.findall(r"```yaml\n(.*?)```", ci, re.S) for command in re.findall(
        r"python -m pip install .*", block)]
    assert jobs == [f'python -m pip install "{REQUIREMENT}"'] * 2
    flake8_hooks = [hook for repo, hook in precommit.readme_hooks() if hook["id"] == "flake8"]
    assert [hook["additional_dependencies"] for hook in flake8_hooks] == [[REQUIREMENT]]


def test_the_readme_hooks_come_from_the_repository_at_the_release_tag() -> None:
    from pre_commit.clientlib import load_manifest

    hooks = precommit.readme_hooks()
    ours = [hook["id"] for repo, hook in hooks if repo == URL]
    assert ours == [hook["id"] for hook in load_manifest(str(precommit.MANIFEST))]
    assert not [repo for repo, _ in hooks if repo == "local"]  # a local hook needs the pack on an index
    revs = [repo["rev"] for repo in readme_configs() if repo["repo"] == URL]
    assert revs == [TAG]


def readme_configs() -> list[dict[str, object]]:
    section = precommit.readme_section("integrations")
    configs = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", section, re.S)]
    return [repo for config in configs if isinstance(config, dict) for repo in config.get("repos", [])]


def readme_config_of_the_pack() -> str:
    """The README's config that names this repository, as the reader copies it."""
    section = precommit.readme_section("integrations")
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", section, re.S) if f"repo: {URL}\n" in b]
    return block


# -- for real --------------------------------------------------------------------------

def git(args: list[str], cwd: Path, env: dict[str, str]) -> None:
    precommit.git(args, cwd, env)


def release(upstream: Path, tag: str, env: dict[str, str]) -> None:
    """Tag a release as the README's *Releasing* says: an annotated ``v0.x.y``."""
    git(["tag", "-a", tag, "-m", tag], upstream, env)


@pytest.fixture
def upstream(hook_repo: Path, tmp_path: Path, env: dict[str, str]) -> Path:
    """The repository users clone, with this version's release tag."""
    clone = tmp_path / "flake8-hermetic"
    git(["clone", "-q", str(hook_repo), str(clone)], tmp_path, env)
    release(clone, TAG, env)
    return clone


def fresh_venv(where: Path, env: dict[str, str]) -> Path:
    """A new virtualenv without the checkout's packages; its interpreter.
    pip comes from this interpreter (``pip --python``): the venv's own
    bundled pip may be too old for a ``name @ git+file://`` requirement."""
    made = run([sys.executable, "-m", "venv", "--without-pip", str(where)], cwd=where.parent, env=env)
    assert made.returncode == 0, made.stderr
    return where / ("Scripts" if os.name == "nt" else "bin") / "python"


def pip_install(python: Path, requirement: str, cwd: Path, env: dict[str, str]) -> None:
    installed = run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", requirement],
                    cwd=cwd, env=env, timeout=precommit.INSTALL_TIMEOUT)
    assert installed.returncode == 0, installed.stdout + installed.stderr


def assert_the_pack_works_from(python: Path, project: Path, env: dict[str, str]) -> None:
    """The installed command, the flake8 plugin and the package all come from the venv."""
    scripts = python.parent
    version = run([str(scripts / "flake8-hermetic"), "--version"], cwd=project, env=env)
    assert (version.returncode, version.stdout) == (0, f"flake8-hermetic {__version__}\n"), version.stderr
    where = run([str(python), "-c", "import flake8_hermetic; print(flake8_hermetic.__file__)"], cwd=project, env=env)
    assert Path(where.stdout.strip()).is_relative_to(python.parents[1]), where.stdout
    check = run([str(scripts / "flake8-hermetic"), "check"], cwd=project, env=env)
    assert check.returncode == 1, check.stdout + check.stderr
    assert check.stdout.splitlines()[-1] == "1 test file, 1 new, 0 baselined, 0 stale"
    assert re.search(r"^tests/test_app\.py:5:10: HRM108 ", check.stdout, re.M), check.stdout
    plugin = run([str(python), "-m", "flake8", "--select=HRM"], cwd=project, env=env)
    assert plugin.returncode == 1 and " HRM108 " in plugin.stdout, plugin.stdout + plugin.stderr


@pytest.mark.integration
def test_the_readme_wheel_builds_and_installs_into_a_fresh_venv(
    upstream: Path, user_repo: Path, env: dict[str, str], tmp_path: Path,
) -> None:
    # cd flake8-hermetic && python -m build (the build package comes with the test extra)
    built = run([sys.executable, "-m", "build"], cwd=upstream, env=env, timeout=precommit.INSTALL_TIMEOUT)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    assert sorted(p.name for p in (upstream / "dist").iterdir()) == sorted([SDIST, WHEEL])
    # the sdist is a source tree the wheel was built from; the wheel holds every module of the package
    with tarfile.open(upstream / "dist" / SDIST) as sdist:
        members = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "flake8_hermetic/__init__.py"} <= members
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "flake8_hermetic").rglob("*.py")}
    with zipfile.ZipFile(upstream / "dist" / WHEEL) as wheel:
        assert modules <= set(wheel.namelist())

    python = fresh_venv(tmp_path / "venv", env)
    pip_install(python, f"dist/{WHEEL}", cwd=upstream, env=env)  # python -m pip install dist/...whl
    write_tree(user_repo, {"tests/test_app.py": precommit.LEAKY})
    assert_the_pack_works_from(python, user_repo, env)


@pytest.mark.integration
def test_the_documented_git_url_installs_the_release_tag(
    upstream: Path, user_repo: Path, env: dict[str, str], tmp_path: Path,
) -> None:
    git(["commit", "-q", "--allow-empty", "-m", "after the release"], upstream, env)  # HEAD is past the tag
    python = fresh_venv(tmp_path / "venv", env)
    pip_install(python, REQUIREMENT.replace(URL, upstream.as_uri()), cwd=tmp_path, env=env)
    write_tree(user_repo, {"tests/test_app.py": precommit.LEAKY})
    assert_the_pack_works_from(python, user_repo, env)
    # pip installed the tagged commit, not the newer HEAD
    record = run([str(python), "-c", "from importlib.metadata import distribution as d; "
                  "print(d('flake8-hermetic').read_text('direct_url.json'))"], cwd=tmp_path, env=env)
    vcs = json.loads(record.stdout)["vcs_info"]
    tagged = run(["git", "rev-parse", f"{TAG}^{{commit}}"], cwd=upstream, env=env).stdout.strip()
    assert (vcs["requested_revision"], vcs["commit_id"]) == (TAG, tagged)


@pytest.mark.integration
def test_the_readme_hooks_at_a_tag_prune_then_pass_and_autoupdate_moves_to_the_newest_tag(
    upstream: Path, user_repo: Path, env: dict[str, str],
) -> None:
    """The README's pre-commit config, verbatim but for the repository's
    address, in two real commits; then ``pre-commit autoupdate`` after a
    new release is tagged."""
    config = readme_config_of_the_pack().replace(URL, str(upstream))
    legacy = 'tests/test_legacy.py::test_writes\tHRM108\t"/tmp/report.txt"\n'
    fixed_entry = 'tests/test_app.py::test_writes\tHRM108\t"/tmp/report.txt"\n'
    write_tree(user_repo, {
        ".pre-commit-config.yaml": config,
        "tests/test_app.py": precommit.LEAKY,
        "tests/test_legacy.py": precommit.LEAKY,
        "hermetic-baseline.txt": legacy + fixed_entry,
    })
    git(["add", "-A"], user_repo, env)
    git(["commit", "-q", "--no-verify", "-m", "legacy suite with its baseline"], user_repo, env)
    installed = run([sys.executable, "-m", "pre_commit", "install"], cwd=user_repo, env=env)
    assert installed.returncode == 0, installed.stderr

    write_tree(user_repo, {"tests/test_app.py": precommit.FIXED})
    git(["add", "tests/test_app.py"], user_repo, env)
    first = run(["git", *precommit.GIT_IDENTITY, "commit", "-m", "fix the leak"], cwd=user_repo, env=env,
                timeout=precommit.INSTALL_TIMEOUT)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert "Traceback" not in output
    results = precommit.hook_results(output)
    assert results["flake8-hermetic baseline"][0] == "Failed", output
    assert "files were modified by this hook" in results["flake8-hermetic baseline"][1]
    assert (user_repo / "hermetic-baseline.txt").read_text(encoding="utf-8") == legacy  # pruned, not committed

    git(["add", "hermetic-baseline.txt"], user_repo, env)
    second = run(["git", *precommit.GIT_IDENTITY, "commit", "-m", "fix the leak"], cwd=user_repo, env=env,
                 timeout=precommit.INSTALL_TIMEOUT)
    output = second.stdout + second.stderr
    assert second.returncode == 0, output
    assert {name: status for name, (status, _) in precommit.hook_results(output).items()} == {
        "flake8-hermetic": "Passed", "flake8-hermetic baseline": "Passed",
    }
    log = run(["git", "log", "--format=%s", "-n", "1"], cwd=user_repo, env=env)
    assert log.stdout.strip() == "fix the leak"

    # a newer release: autoupdate moves rev: to its tag (a commit past it, untagged, is not picked)
    major, minor, _ = (int(part) for part in __version__.split("."))
    newer = f"v{major}.{minor + 1}.0"
    git(["commit", "-q", "--allow-empty", "-m", "the next release"], upstream, env)
    release(upstream, newer, env)
    git(["commit", "-q", "--allow-empty", "-m", "work after it"], upstream, env)
    updated = run([sys.executable, "-m", "pre_commit", "autoupdate", "--color", "never"], cwd=user_repo, env=env,
                  timeout=precommit.INSTALL_TIMEOUT)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert f"updating {TAG} -> {newer}" in updated.stdout, updated.stdout
    after = (user_repo / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert after == config.replace(f"rev: {TAG}\n", f"rev: {newer}\n")
