"""The baseline's paths are relative to the project root, wherever the file lives.

The project root is the directory of the config that configures the pack
(else the working directory): the plugin, every command, SARIF and the
runtime guard name a file from there, so a baseline at ``ci/hermetic.txt``
holds ``tests/...`` entries, as pytest prints node ids from the root.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import flake8, hermetic, write_tree

pytest_plugins = ["pytester"]

LEAKY = """\
    from pathlib import Path


    def test_known(tmp_path):
        Path("/tmp/known.txt").write_text("x")
        assert tmp_path.is_dir()
"""
ENTRY = 'tests/test_app.py::test_known\tHRM108\t"/tmp/known.txt"'


def pack(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = hermetic(args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def entries(baseline: Path) -> list[str]:
    return [line for line in baseline.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]


@pytest.fixture
def ci_project(tmp_path: Path) -> Path:
    """A ruff-style project: no flake8 config, the baseline set in the table to live in ``ci/``."""
    return write_tree(tmp_path / "proj", {
        "pyproject.toml": '[tool.flake8-hermetic]\nbaseline = "ci/hermetic.txt"\n',
        "tests/test_app.py": LEAKY,
        "ci/README": "CI files\n",
    })


def test_a_baseline_in_a_subdirectory_round_trips(ci_project: Path) -> None:
    baseline = ci_project / "ci" / "hermetic.txt"
    written = pack(["baseline", "regenerate"], cwd=ci_project)
    assert written.returncode == 0, written.stderr
    assert entries(baseline) == [ENTRY]  # not ../tests/...: paths are from the project root

    checked = pack(["check"], cwd=ci_project)
    assert (checked.returncode, checked.stdout) == (0, "1 test file, 0 new, 1 baselined, 0 stale\n")
    plugin = flake8(["--select=HRM", "tests"], cwd=ci_project)
    assert (plugin.returncode, plugin.stdout, plugin.stderr) == (0, "", "")
    assert pack(["baseline", "prune", "--check"], cwd=ci_project).returncode == 0
    judged = pack(["baseline", "check"], cwd=ci_project)
    assert (judged.returncode, judged.stdout) == (
        0, "ci/hermetic.txt: 1 entries, 1 judged, all current (1 test file linted)\n"
    )
    # run from inside ci/: the same root, the same names
    inside = pack(["check", "../tests"], cwd=ci_project / "ci")
    assert (inside.returncode, inside.stdout) == (0, "1 test file, 0 new, 1 baselined, 0 stale\n")


def test_sarif_paths_are_relative_to_the_project_root(ci_project: Path) -> None:
    result = pack(["check", "--format", "sarif", "--baseline", "ci/empty.txt"], cwd=ci_project)
    assert result.returncode == 1
    run = json.loads(result.stdout)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ci_project.as_uri() + "/"
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "tests/test_app.py", "uriBaseId": "%SRCROOT%"}


CONFIGS = {
    "pyproject.toml": '[tool.flake8-hermetic]\nrepo-dirs = ["x"]\nbaseline = "{value}"\n',
    "setup.cfg": "[flake8]\nmax-line-length = 100\nhermetic-baseline = {value}\n",
}


@pytest.fixture(params=[
    pytest.param(("pyproject.toml", "../elsewhere/notes.txt"), id="table-relative"),
    pytest.param(("pyproject.toml", None), id="table-absolute"),
    pytest.param(("setup.cfg", "../elsewhere/notes.txt"), id="flake8-relative"),
    pytest.param(("setup.cfg", None), id="flake8-absolute"),
])
def escaping(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    """A project whose config puts the baseline outside it: (project, config name)."""
    config, value = request.param
    project = write_tree(tmp_path / "proj", {"tests/test_app.py": LEAKY})
    target = tmp_path / "elsewhere" / "notes.txt"
    (project / config).write_text(CONFIGS[config].replace("{value}", value or str(target)), encoding="utf-8")
    return project, config


@pytest.mark.parametrize("args", [
    pytest.param(["baseline", "regenerate"], id="regenerate"),
    pytest.param(["check"], id="check"),
    pytest.param(["baseline", "prune"], id="prune"),
])
def test_a_configured_baseline_outside_the_root_is_refused(escaping: tuple[Path, str], args: list[str]) -> None:
    project, config = escaping
    result = pack(args, cwd=project)
    assert result.returncode == 2, result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"flake8-hermetic: {project / config}:3: baseline: ")
    assert "outside the project root" in lines[0]
    assert not (project.parent / "elsewhere").exists()  # nothing created outside the checkout


def test_the_plugin_refuses_a_configured_baseline_outside_the_root(escaping: tuple[Path, str]) -> None:
    project, config = escaping
    plugin = flake8(["tests"], cwd=project)
    assert plugin.returncode == 2
    assert plugin.stderr.startswith(f"flake8-hermetic: {project / config}:3: baseline: ")
    assert "outside the project root" in plugin.stderr


def test_a_baseline_on_the_command_line_may_live_anywhere(tmp_path: Path) -> None:
    project = write_tree(tmp_path / "proj", {"tests/test_app.py": LEAKY, "setup.cfg": "[flake8]\n"})
    target = tmp_path / "elsewhere" / "notes.txt"
    target.parent.mkdir()
    written = pack(["baseline", "regenerate", "--baseline", "../elsewhere/notes.txt"], cwd=project)
    assert written.returncode == 0, written.stderr
    assert entries(target) == [ENTRY]
    checked = pack(["check", "--baseline", str(target)], cwd=project)
    assert (checked.returncode, checked.stdout) == (0, "1 test file, 0 new, 1 baselined, 0 stale\n")
    plugin = flake8([f"--hermetic-baseline={target}", "tests"], cwd=project)
    assert (plugin.returncode, plugin.stdout) == (0, "")


@pytest.mark.parametrize(("config", "text"), [
    pytest.param("setup.cfg", "[flake8]\nhermetic-baseline = /\n", id="flake8-config"),
    pytest.param("pyproject.toml", '[tool.flake8-hermetic]\nbaseline = "/"\n', id="table"),
])
def test_a_baseline_that_is_a_directory_is_named_as_written(tmp_path: Path, config: str, text: str) -> None:
    project = write_tree(tmp_path / "proj", {"tests/test_app.py": LEAKY, config: text})
    result = pack(["check"], cwd=project)
    assert result.returncode == 2
    assert result.stderr == (
        f"flake8-hermetic: {project / config}:2: baseline: '/' is a directory; expected a file path\n"
    )


def test_a_baseline_entry_that_leaves_the_root_is_refused(ci_project: Path) -> None:
    (ci_project / "ci" / "hermetic.txt").write_text(f"../{ENTRY}\n", encoding="utf-8")
    result = pack(["check"], cwd=ci_project)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "ci/hermetic.txt:1: path '../tests/test_app.py' leaves the project root"
    ]


def test_regenerate_refuses_a_linted_file_outside_the_root(tmp_path: Path, ci_project: Path) -> None:
    write_tree(tmp_path / "other", {"tests/test_app.py": LEAKY})
    baseline = ci_project / "ci" / "hermetic.txt"
    baseline.write_text(ENTRY + "\n", encoding="utf-8")
    result = pack(["baseline", "regenerate", "../other/tests"], cwd=ci_project)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"flake8-hermetic: ../other/tests/test_app.py: outside the project root {ci_project}; "
        "its entries cannot be written (lint only paths inside the project)"
    ]
    assert entries(baseline) == [ENTRY]  # untouched, and no ../ entry a reader would refuse


GUARDED = """
import os


def test_new():
    os.environ["NEW"] = "1"
"""


def test_the_guard_writes_entries_from_the_project_root(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.flake8-hermetic]\nbaseline = "ci/hermetic.txt"\n')
    (pytester.path / "ci").mkdir()
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_app.py").write_text(GUARDED, encoding="utf-8")
    updated = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard-update", timeout=300)
    assert updated.ret == 0, updated.stdout.str()
    baseline = pytester.path / "ci" / "hermetic.txt"
    assert entries(baseline) == ["tests/test_app.py::test_new\tHRM604\tNEW set"]
    again = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", timeout=300)
    assert again.ret == 0
    again.stdout.fnmatch_lines(["hermetic guard: 0 new, 1 baselined, 0 stale*"])
    # the static side reads the guard's entries as its own file's, and keeps them
    judged = hermetic(["baseline", "check"], cwd=pytester.path)
    assert judged.returncode == 0, judged.stdout + judged.stderr


def test_the_guard_refuses_a_configured_baseline_outside_the_root(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.flake8-hermetic]\nbaseline = "../elsewhere.txt"\n')
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_app.py").write_text(GUARDED, encoding="utf-8")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard-update", timeout=300)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*pyproject.toml:2: baseline: * is outside the project root *"])
    assert not (pytester.path.parent / "elsewhere.txt").exists()


def test_the_guard_reports_a_broken_table_as_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml("[tool]\nflake8-hermetic = 5\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_app.py").write_text(GUARDED, encoding="utf-8")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", timeout=300)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*pyproject.toml:*: [[]tool.flake8-hermetic[]] must be a table*"])


def test_the_guard_rebases_node_ids_when_pytests_rootdir_is_not_the_project_root(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyprojecttoml('[tool.flake8-hermetic]\nbaseline = "ci/hermetic.txt"\n')
    (pytester.path / "ci").mkdir()
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_app.py").write_text(GUARDED, encoding="utf-8")
    updated = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--rootdir=tests", "--hermetic-guard-update", "tests", timeout=300,
    )
    assert updated.ret == 0, updated.stdout.str()
    updated.stdout.fnmatch_lines(["rootdir: *tests*"])
    # pytest names the test test_app.py::test_new from its rootdir; the entry is named from the project root
    assert entries(pytester.path / "ci" / "hermetic.txt") == ["tests/test_app.py::test_new\tHRM604\tNEW set"]
