"""The project model (flake8_hermetic.project): pytest config, file roles,
fixtures and helpers read across files, and the rules that ask it.

The multi-file cases live under tests/fixtures/projects/<case>/ with
trailing ``# HRMnnn`` markers, and are linted by real flake8 runs on a copy.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import textwrap
import time
from pathlib import Path

import pytest

from flake8_hermetic.project import Project, Role, new_run
from flake8_hermetic.project.config import DEFAULT_NORECURSEDIRS, DEFAULT_PYTHON_FILES, ConfigFinder
from flake8_hermetic.project.modules import (
    CHANGES_CWD, PATCHES_HOST, PATCHES_NAME, PATCHES_NOTHING, PINS_GIT, PINS_HOME, REDIRECTS_TEMP, RESTORES_CWD,
    RESTORES_ENV, RESTORES_ENV_KEY, SETS_ENV, read_module,
)
from tests.helpers import flake8, write_tree

# the model's tests read fixture projects' trees (copies in tmp_path), not this checkout's
pytestmark = pytest.mark.xdist_group(name="tree_scan_test_project_model")

PROJECTS = Path(__file__).parent / "fixtures" / "projects"
MARKER = re.compile(r"#\s*(HRM\d{3})\b")
REPORTED = re.compile(r"^(?:\./)?(?P<path>[^:]+):(?P<line>\d+):\d+: (?P<code>HRM\d{3}) ")


def copy_project(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target)
    return target


def expected_markers(root: Path) -> set[tuple[str, int, str]]:
    found = set()
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for code in MARKER.findall(line):
                found.add((path.relative_to(root).as_posix(), number, code))
    return found


def reported(stdout: str) -> set[tuple[str, int, str]]:
    found = set()
    for line in stdout.splitlines():
        match = REPORTED.match(line)
        if match:
            found.add((match["path"], int(match["line"]), match["code"]))
    return found


LINT = ["--isolated", "--select=HRM", "--hermetic-no-baseline", "-j1"]


# -- whole projects through flake8 ------------------------------------------------

def test_model_project_reports_exactly_its_markers(tmp_path: Path) -> None:
    root = copy_project("model", tmp_path)
    result = flake8([*LINT, "."], cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    assert reported(result.stdout) == expected_markers(root)


def test_fixture_closure_project_reports_exactly_its_markers(tmp_path: Path) -> None:
    """The fixture closure as pytest computes it (module ``pytestmark``,
    mark aliases, class marks, autouse of a base class, fixtures requesting
    fixtures at any depth, overrides, plugins of plugins) and the project's
    context managers and teardown helpers, on both sides of each edge."""
    root = copy_project("closure", tmp_path)
    result = flake8(["--isolated", "--select=HRM101,HRM105,HRM107", "--hermetic-no-baseline", "-j1", "."], cwd=root)
    assert "Traceback" not in result.stderr, result.stderr
    assert reported(result.stdout) == expected_markers(root)


def test_files_the_runner_never_collects_are_not_judged(tmp_path: Path) -> None:
    root = copy_project("model", tmp_path)
    result = flake8([*LINT, "tests/child_script.py", "tests/bench/test_speed.py"], cwd=root)
    assert result.stdout == "", result.stdout + result.stderr
    assert result.returncode == 0


def test_test_files_setting_overrides_the_roles(tmp_path: Path) -> None:
    root = copy_project("model", tmp_path)
    result = flake8([*LINT, "--hermetic-test-files=*.py", "other/test_outside.py", "tests/child_script.py"], cwd=root)
    assert {(path, code) for path, _, code in reported(result.stdout)} == {
        ("other/test_outside.py", "HRM403"), ("other/test_outside.py", "HRM501"),
        ("tests/child_script.py", "HRM403"),
    }


def test_one_buffer_lint_sees_the_conftest_as_saved(tmp_path: Path) -> None:
    """An editor lints the buffer of one test file: the conftest on disk is
    read, and a saved edit of it changes the verdict of the next lint."""
    root = copy_project("model", tmp_path)
    buffer = (root / "tests" / "test_model.py").read_text(encoding="utf-8")
    args = [*LINT, "--stdin-display-name", "tests/test_model.py", "-"]
    before = reported(flake8(args, cwd=root, stdin=buffer).stdout)
    assert ("tests/test_model.py", 46, "HRM105") not in before
    conftest = root / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text(encoding="utf-8").replace("monkeypatch.chdir(tmp_path)", "pass"))
    after = reported(flake8(args, cwd=root, stdin=buffer).stdout)
    assert after - before == {("tests/test_model.py", 46, "HRM105"), ("tests/test_model.py", 51, "HRM105")}


def test_a_malformed_pytest_config_is_one_line(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = [\n",
        "tests/test_a.py": "def test_a():\n    assert True\n",
    })
    result = flake8([*LINT, "tests/test_a.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "pyproject.toml:" in lines[0]
    assert "invalid TOML" in lines[0]


# -- pytest's configuration ---------------------------------------------------------

@pytest.mark.parametrize(
    ("files", "config_name"),
    [
        pytest.param(
            {"pytest.ini": "[pytest]\npython_files = check_*.py\ntestpaths = t\n"}, "pytest.ini", id="pytest.ini",
        ),
        pytest.param({".pytest.ini": "[pytest]\npython_files = check_*.py\ntestpaths = t\n"}, ".pytest.ini",
                     id="dot-pytest.ini"),
        pytest.param(
            {"pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\ntestpaths = ["t"]\n'},
            "pyproject.toml", id="pyproject-ini-options",
        ),
        pytest.param({"pyproject.toml": '[tool.pytest]\npython_files = ["check_*.py"]\ntestpaths = ["t"]\n'},
                     "pyproject.toml", id="pyproject-native"),
        pytest.param(
            {"tox.ini": "[tox]\nenvlist = py\n[pytest]\npython_files = check_*.py\ntestpaths = t\n"},
            "tox.ini", id="tox.ini",
        ),
        pytest.param(
            {"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\npython_files = check_*.py\ntestpaths = t\n"},
            "setup.cfg", id="setup.cfg",
        ),
    ],
)
def test_each_config_kind_is_read(tmp_path: Path, files: dict[str, str], config_name: str) -> None:
    write_tree(tmp_path, files)
    (tmp_path / "t" / "deep").mkdir(parents=True)
    config = ConfigFinder().for_directory(str(tmp_path / "t" / "deep"))
    assert config.path == str(tmp_path / config_name)
    assert config.rootdir == str(tmp_path)
    assert config.python_files == ("check_*.py",)
    assert config.testpaths == ("t",)
    assert config.norecursedirs == DEFAULT_NORECURSEDIRS


def test_config_precedence_nearest_directory_then_pytest_ini_first(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["outer_*.py"]\n',
        "sub/pytest.ini": "[pytest]\npython_files = ini_*.py\n",
        "sub/tox.ini": "[pytest]\npython_files = tox_*.py\n",
        "sub/setup.cfg": "[metadata]\nname = x\n",
        "other/tox.ini": "[tox]\nenvlist = py\n",
        "other/setup.cfg": "[tool:pytest]\npython_files = cfg_*.py\n",
    })
    finder = ConfigFinder()
    assert finder.for_directory(str(tmp_path / "sub")).python_files == ("ini_*.py",)
    # a tox.ini without [pytest] does not count; setup.cfg's [tool:pytest] does
    assert finder.for_directory(str(tmp_path / "other")).python_files == ("cfg_*.py",)
    assert finder.for_directory(str(tmp_path)).python_files == ("outer_*.py",)


def test_pyproject_without_a_pytest_table_is_passed_over(tmp_path: Path) -> None:
    write_tree(tmp_path, {"tox.ini": "[pytest]\ntestpaths = tests\n", "pkg/pyproject.toml": "[tool.black]\n"})
    config = ConfigFinder().for_directory(str(tmp_path / "pkg"))
    assert config.path == str(tmp_path / "tox.ini")
    assert config.python_files == DEFAULT_PYTHON_FILES


def test_an_empty_pytest_ini_is_the_rootdir_with_defaults(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pytest.ini": "", "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["x"]\n'})
    config = ConfigFinder().for_directory(str(tmp_path))
    assert config.path == str(tmp_path / "pytest.ini")
    assert config.testpaths == ()


@pytest.mark.parametrize(
    ("name", "text", "line", "problem"),
    [
        pytest.param("pyproject.toml", '[tool.pytest.ini_options]\npython_files = "x\n', 2, "invalid TOML", id="toml"),
        pytest.param("tox.ini", "[pytest]\ntestpaths = t\nthis is not ini\n", 3, "invalid ini file", id="ini"),
        pytest.param("setup.cfg", "[tool:pytest]\n[tool:pytest]\n", 2, "invalid ini file", id="duplicate-section"),
    ],
)
def test_a_malformed_config_names_file_and_line(tmp_path: Path, name: str, text: str, line: int, problem: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    finder = ConfigFinder()
    assert finder.for_directory(str(tmp_path)).path is None  # pytest's defaults below it
    [error] = finder.take_problems()
    assert finder.take_problems() == []  # reported once
    message = str(error)
    assert message.startswith(f"{tmp_path / name}:{line}: {problem}"), message
    assert "\n" not in message


# -- roles -------------------------------------------------------------------------------

ROLE_TREE = {
    "pyproject.toml": (
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\nnorecursedirs = ["bench", ".*", "tests/docker"]\n'
    ),
    "tests/conftest.py": "",
    "tests/test_a.py": "",
    "tests/a_test.py": "",
    "tests/helpers.py": "",
    "tests/bench/test_speed.py": "",
    "tests/data/sample.py": "",
    "tests/docker/test_image.py": "",
    "tests/unit/docker/test_client.py": "",
    "tests/lib_cases.py": "import unittest\nclass Base(unittest.TestCase):\n    pass\n",
    "scripts/test_release.py": "",
    "src/pkg/core.py": "",
    "src/pkg/testing/fake.py": "",
}


@pytest.mark.parametrize(
    ("relative", "role"),
    [
        pytest.param("tests/test_a.py", Role.TEST_MODULE, id="python_files"),
        pytest.param("tests/a_test.py", Role.TEST_MODULE, id="python_files-suffix"),
        pytest.param("tests/conftest.py", Role.CONFTEST, id="conftest"),
        pytest.param("tests/helpers.py", Role.SUPPORT, id="helper"),
        pytest.param("tests/bench/test_speed.py", Role.SUPPORT, id="norecursedirs"),
        pytest.param("tests/data/sample.py", Role.SUPPORT, id="data-module"),
        pytest.param("tests/docker/test_image.py", Role.SUPPORT, id="norecursedirs-path"),
        pytest.param("tests/unit/docker/test_client.py", Role.TEST_MODULE, id="norecursedirs-path-is-not-a-name"),
        pytest.param("tests/lib_cases.py", Role.TEST_MODULE, id="testcase-library"),
        pytest.param("scripts/test_release.py", Role.TEST_MODULE, id="testpaths-is-no-boundary"),
        pytest.param("src/pkg/core.py", Role.NOT_TEST, id="library"),
        pytest.param("src/pkg/testing/fake.py", Role.SUPPORT, id="testing-package"),
    ],
)
def test_roles(tmp_path: Path, relative: str, role: Role) -> None:
    write_tree(tmp_path, ROLE_TREE)
    path = tmp_path / relative
    assert Project().role(str(path), ast.parse(path.read_text(encoding="utf-8"))) is role


def test_without_testpaths_every_matching_module_is_collected(tmp_path: Path) -> None:
    write_tree(tmp_path, {"setup.py": "", "scripts/test_release.py": "", "scripts/build.py": ""})
    project = Project()
    assert project.role(str(tmp_path / "scripts" / "test_release.py")) is Role.TEST_MODULE
    # the directory holds a collected module: its other files support it
    assert project.role(str(tmp_path / "scripts" / "build.py")) is Role.SUPPORT


def test_norecursedirs_count_only_below_the_rootdir(tmp_path: Path) -> None:
    """A checkout under a hidden directory (``~/.cache/...``) is still recursed."""
    root = tmp_path / ".cache" / "proj"
    write_tree(root, {"pytest.ini": "[pytest]\n", "tests/test_a.py": ""})
    assert Project().role(str(root / "tests" / "test_a.py")) is Role.TEST_MODULE


# -- the model ----------------------------------------------------------------------------

def fixtures_of(source: str) -> dict:
    return read_module("conftest.py", ast.parse(textwrap.dedent(source))).fixtures


@pytest.mark.parametrize(
    ("source", "effects"),
    [
        pytest.param(
            """
            @pytest.fixture
            def f(tmp_path, monkeypatch):
                monkeypatch.chdir(tmp_path)
            """, {CHANGES_CWD, RESTORES_CWD, PATCHES_HOST}, id="monkeypatch-chdir"),
        pytest.param(
            """
            import pkg.utils as utils
            @pytest.fixture(autouse=True)
            def f(monkeypatch):
                monkeypatch.setattr(utils, "DEFAULT_TIMEOUT", 0.1)
                monkeypatch.setattr("pkg.settings.RETRIES", 1)
                monkeypatch.setitem(utils.REGISTRY, "k", 1)
            """, {PATCHES_NAME + "pkg.utils", PATCHES_NAME + "pkg.settings",
                  PATCHES_NAME + "pkg.utils.REGISTRY"},
            id="monkeypatch-named-targets"),
        pytest.param(
            """
            @pytest.fixture
            def f(monkeypatch, tmp_path, thing):
                monkeypatch.setattr(thing, "name", "x")
            """, {PATCHES_HOST}, id="monkeypatch-target-not-named"),
        pytest.param(
            """
            @pytest.fixture
            def f(monkeypatch):
                isolate(monkeypatch)
            """, {PATCHES_HOST}, id="monkeypatch-handed-to-a-helper"),
        pytest.param(
            """
            @pytest.fixture(autouse=True)
            def f(request, monkeypatch, tmp_path):
                if isinstance(request.node, pytest.DoctestItem):
                    monkeypatch.chdir(tmp_path)
            """, {PATCHES_NOTHING}, id="doctest-only-branch"),
        pytest.param(
            """
            @pytest.fixture(autouse=True)
            def f(request, monkeypatch, tmp_path):
                if isinstance(request.node, pytest.DoctestItem):
                    monkeypatch.chdir(tmp_path)
                monkeypatch.setenv("X", "1")
            """, {PATCHES_HOST, RESTORES_ENV_KEY + "X"}, id="doctest-branch-and-more"),
        pytest.param(
            """
            @pytest.fixture
            def f(tmp_path):
                old = os.getcwd()
                os.chdir(tmp_path)
                yield
                os.chdir(old)
            """, {CHANGES_CWD, RESTORES_CWD}, id="chdir-and-back-after-yield"),
        pytest.param(
            """
            @pytest.fixture
            def f(tmp_path):
                old = os.getcwd()
                os.chdir(tmp_path)
                try:
                    yield
                finally:
                    os.chdir(old)
            """, {CHANGES_CWD, RESTORES_CWD}, id="chdir-and-back-in-finally"),
        pytest.param(
            """
            @pytest.fixture
            def f(tmp_path):
                os.chdir(tmp_path)
                yield
            """, {CHANGES_CWD}, id="chdir-never-back"),
        pytest.param(
            """
            @pytest.fixture
            def f(tmp_path):
                with contextlib.chdir(tmp_path):
                    yield
            """, {CHANGES_CWD, RESTORES_CWD}, id="with-chdir"),
        pytest.param(
            """
            @pytest.fixture(autouse=True)
            def f():
                saved = os.environ.copy()
                yield
                os.environ.clear()
                os.environ.update(saved)
            """, {RESTORES_ENV}, id="environ-snapshot"),
        pytest.param(
            """
            @pytest.fixture(autouse=True)
            def f():
                with mock.patch.dict(os.environ, clear=False):
                    yield
            """, {RESTORES_ENV}, id="patch-dict"),
        pytest.param(
            """
            @pytest.fixture
            def f():
                os.environ["X"] = "1"
            """, {SETS_ENV}, id="sets-env"),
        pytest.param(
            """
            @pytest.fixture
            def f():
                os.environ.update(X="1")
                yield
                os.environ.update(X="2")
            """, {SETS_ENV}, id="update-is-no-restore-without-snapshot"),
        pytest.param(
            """
            @pytest.fixture
            def f(monkeypatch, tmp_path):
                monkeypatch.setenv("HOME", str(tmp_path))
            """, {PINS_HOME, PINS_GIT, RESTORES_ENV_KEY + "HOME", PATCHES_HOST}, id="pins-home"),
        pytest.param(
            """
            @pytest.fixture
            def f(monkeypatch, tmp_path):
                monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
            """, {PINS_GIT, RESTORES_ENV_KEY + "GIT_CONFIG_GLOBAL", PATCHES_HOST}, id="pins-git"),
        pytest.param(
            """
            @pytest.fixture
            def f(monkeypatch):
                monkeypatch.setattr(os, "environ", dict(os.environ))
                monkeypatch.setattr("tempfile.tempdir", "/tmp/x")
            """, {RESTORES_ENV, REDIRECTS_TEMP, PATCHES_HOST, PATCHES_NAME + "tempfile"},
            id="monkeypatch-swaps"),
        pytest.param(
            """
            @pytest.fixture
            def f(tmp_path):
                tempfile.tempdir = str(tmp_path)
                yield
                tempfile.tempdir = None
            """, {REDIRECTS_TEMP}, id="tempdir-swapped-and-back"),
        pytest.param(
            """
            @pytest.fixture
            def f(tmp_path):
                tempfile.tempdir = str(tmp_path)
            """, set(), id="tempdir-swapped-for-good"),
    ],
)
def test_fixture_effects(source: str, effects: set[str]) -> None:
    [fixture] = fixtures_of(source).values()
    assert fixture.effects == effects


def test_fixture_scope_autouse_name_and_requests() -> None:
    fixtures = fixtures_of(
        """
        @pytest.fixture(scope="session", autouse=True, name="db")
        def _database(tmp_path_factory, request):
            pass

        @pytest.fixture
        def plain(db):
            pass

        def not_a_fixture():
            pass
        """
    )
    assert set(fixtures) == {"db", "plain"}
    db, plain = fixtures["db"], fixtures["plain"]
    assert (db.scope, db.autouse, db.requests) == ("session", True, ("tmp_path_factory",))
    assert (plain.scope, plain.autouse, plain.requests) == ("function", False, ("db",))


def view_of(root: Path, relative: str) -> object:
    path = root / relative
    return Project().view(str(path), ast.parse(path.read_text(encoding="utf-8")))


def test_fixtures_come_from_the_module_the_chain_and_the_plugins(tmp_path: Path) -> None:
    root = copy_project("model", tmp_path)
    write_tree(root, {"tests/isolated/test_local.py": """
        import pytest

        @pytest.fixture
        def env():
            return None
        """})
    view = view_of(root, "tests/isolated/test_local.py")
    assert view.fixture("env").path.endswith("test_local.py")  # the module's own wins
    assert view.fixture("project_dir").path.endswith(os.path.join("tests", "conftest.py"))
    assert view.fixture("workdir").path.endswith("plugin.py")  # pytest_plugins = ["tests.plugin"]
    assert [f.name for f in view.autouse_fixtures()] == ["_restore_environ"]
    assert RESTORES_ENV in view.effects_for_test([])
    assert view.temp_redirected
    outside = view_of(root, "tests/test_model.py")
    assert outside.autouse_fixtures() == []
    assert not outside.temp_redirected


def test_effects_follow_requested_function_fixtures_only(tmp_path: Path) -> None:
    root = copy_project("model", tmp_path)
    view = view_of(root, "tests/test_model.py")
    assert RESTORES_CWD in view.effects_for_test(["nested_project"])  # through project_dir
    assert RESTORES_CWD not in view.effects_for_test(["session_dir"])  # session scope: after the run
    assert view.effects_for_test(["no_such_fixture"]) == frozenset()


def test_closure_is_transitive_cycle_safe_and_follows_overrides(tmp_path: Path) -> None:
    root = copy_project("closure", tmp_path)
    view = view_of(root, "tests/sub/test_override.py")
    assert view.closure(["deeper_env"]) == ["deeper_env", "deep_env", "tmp_path", "clean_env"]
    assert view.closure(["cycle_a"]) == ["cycle_a", "cycle_b"]
    assert RESTORES_ENV in view.effects_for_test(["deeper_env"])
    assert RESTORES_ENV in view.effects_for_test(["clean_env"])  # the override requests the conftest's above
    assert RESTORES_ENV in view.effects_for_test(["plugin_env"])  # pytest_plugins of a pytest_plugins module
    assert view.effects_for_test(["cycle_a"]) == frozenset()
    assert RESTORES_ENV not in view.effects_for_test(["wide"])  # through a session fixture: after the run
    assert RESTORES_ENV not in view.effects_for_test(["leaky"])
    assert view.manager_effects("tests.helpers.nested_env") >= {RESTORES_ENV}
    assert view.manager_effects("tests.helpers.InDir") >= {RESTORES_CWD}
    assert view.manager_effects("tests.helpers.Noted") == frozenset()
    assert view.manager_effects("tests.helpers.ping") == frozenset()  # managers using each other: no answer, no loop
    assert view.closure(["lonely"]) == ["lonely"]  # an override with nothing above it
    assert view.effects_for_test(["lonely"]) == frozenset()


def test_requested_fixtures_read_marks_of_the_module_class_and_aliases() -> None:
    from flake8_hermetic.context import Scope
    from flake8_hermetic.project import requested_fixtures

    tree = ast.parse(textwrap.dedent(
        """
        import pytest
        pytestmark = [pytest.mark.usefixtures("a"), pytest.mark.slow]
        pytestmark += [pytest.mark.usefixtures("b")]
        both = pytest.mark.usefixtures("c", "d")

        class TestX:
            pytestmark = pytest.mark.usefixtures("e")

            @both
            @pytest.mark.usefixtures("f")
            def test_x(self, g):
                pass
        """
    ))
    cls = tree.body[-1]
    scopes = [Scope("module", "", tree), Scope("class", "TestX", cls), Scope("function", "test_x", cls.body[-1])]
    assert sorted(requested_fixtures(scopes)) == ["a", "b", "c", "d", "e", "f", "g", "self"]


def test_helper_fixpoint_across_modules(tmp_path: Path) -> None:
    root = copy_project("model", tmp_path)
    view = view_of(root, "tests/test_model.py")
    assert view.is_asserting_helper("tests.helpers.run_ok")  # raises
    assert view.is_asserting_helper("tests.helpers.run_twice")  # calls run_ok
    assert view.is_asserting_helper("tests.helpers.Env.invoke")  # self._expect_success asserts
    assert not view.is_asserting_helper("tests.helpers.describe")
    assert not view.is_asserting_helper("tests.helpers.no_such")
    assert not view.is_asserting_helper("json.dumps")  # not the project's: unknown
    assert view.is_asserting_method("TestWrites", "assert_wrote")  # inherited from tests.helpers.HelperCase
    assert view.fixture_method_asserts("env", "invoke")
    assert not view.fixture_method_asserts("env", "listing")


def test_helper_cycle_is_not_an_assertion(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pytest.ini": "[pytest]\n",
        "tests/helpers.py": "def ping():\n    return pong()\n\ndef pong():\n    return ping()\n",
        "tests/test_a.py": "from tests.helpers import ping\n",
    })
    view = view_of(tmp_path, "tests/test_a.py")
    assert not view.is_asserting_helper("tests.helpers.ping")


def test_relative_imports_resolve_from_the_package(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pytest.ini": "[pytest]\n",
        "tests/__init__.py": "",
        "tests/util.py": "def check(x):\n    assert x\n",
        "tests/unit/__init__.py": "",
        "tests/unit/test_a.py": "",
    })
    view = view_of(tmp_path, "tests/unit/test_a.py")
    assert view.is_asserting_helper("..util.check")


def test_wrapper_kind(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pytest.ini": "[pytest]\n",
        "tests/__init__.py": "",
        "tests/util.py": """
            import subprocess, time, tempfile

            def run_cmd(*args, cwd=None):
                return subprocess.run(["git", *args], cwd=cwd)

            def nap(seconds):
                time.sleep(seconds)

            def scratch(suffix):
                return tempfile.mkdtemp(suffix=suffix)

            def version():
                return subprocess.run(["git", "--version"])
            """,
        "tests/test_a.py": "",
    })
    view = view_of(tmp_path, "tests/test_a.py")
    assert view.wrapper_kind("tests.util.run_cmd") == "spawn"
    assert view.wrapper_kind("tests.util.nap") == "sleep"
    assert view.wrapper_kind("tests.util.scratch") == "temp"
    assert view.wrapper_kind("tests.util.version") is None  # hands none of its arguments over


def test_spawn_wrappers_of_imported_modules(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pytest.ini": "[pytest]\n",
        "tests/__init__.py": "",
        "tests/util.py": """
            import subprocess
            import sys

            raise SystemExit("never imported")

            def run_tool(*args):
                return subprocess.run(args, check=True)

            def git(cmd, cwd=None):
                return subprocess.run(cmd, cwd=cwd)

            def version():
                return subprocess.run(["git", "--version"])
            """,
        "tests/test_a.py": """
            from tests import util
            from tests.util import run_tool
            from .util import git as run_git
            """,
    })
    view = view_of(tmp_path, "tests/test_a.py")
    wrappers = view.spawn_wrappers()
    assert sorted(wrappers) == [".util.git", "tests.util.git", "tests.util.run_tool"]
    run_tool = wrappers["tests.util.run_tool"]
    assert (run_tool.callee, run_tool.function.name, run_tool.varargs, run_tool.method) == (
        "tests.util.run_tool", "run_tool", "args", False,
    )
    assert run_tool.spawner.name == "subprocess.run"
    assert wrappers[".util.git"].argv_parameter == "cmd"
    call = ast.parse('run_tool("git", "init")').body[0].value
    assert [e.value for e in run_tool.child_for(call).command.elts] == ["git", "init"]
    # read once per process: a second run's view hands over the same wrapper
    again = view_of(tmp_path, "tests/test_a.py").spawn_wrappers()["tests.util.run_tool"]
    assert again.function is run_tool.function


def test_a_module_is_read_again_when_its_stamp_changes(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pytest.ini": "[pytest]\n", "tests/conftest.py": "import pytest\n", "tests/test_a.py": ""})
    test_file = tmp_path / "tests" / "test_a.py"
    tree = ast.parse("")
    assert new_run().view(str(test_file), tree).fixture("home") is None
    conftest = tmp_path / "tests" / "conftest.py"
    conftest.write_text(
        "import pytest\n\n@pytest.fixture\ndef home(monkeypatch, tmp_path):\n"
        "    monkeypatch.setenv('HOME', str(tmp_path))\n"
    )
    stamp = time.time() + 5
    os.utime(conftest, (stamp, stamp))
    fixture = new_run().view(str(test_file), tree).fixture("home")
    assert fixture is not None
    assert PINS_HOME in fixture.effects


def test_a_run_reads_each_module_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {
        "pytest.ini": "[pytest]\n", "tests/conftest.py": "X = 1\n", "tests/test_a.py": "", "tests/test_b.py": "",
    })
    parsed: list[str] = []
    real_parse = ast.parse

    def counting_parse(source: bytes, filename: str = "<unknown>", **kw: object) -> ast.Module:
        parsed.append(filename)
        return real_parse(source, filename, **kw)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(ast, "parse", counting_parse)
    stamp = time.time() + 10
    os.utime(tmp_path / "tests" / "conftest.py", (stamp, stamp))
    project = Project()
    project.view(str(tmp_path / "tests" / "test_a.py"), real_parse("")).conftest_modules()
    project.view(str(tmp_path / "tests" / "test_b.py"), real_parse("")).conftest_modules()
    assert parsed.count(str(tmp_path / "tests" / "conftest.py")) == 1


def test_a_name_reexported_by_the_package_is_followed(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pytest.ini": "[pytest]\n",
        "tests/__init__.py": (
            "try:\n    import pytest\nexcept ImportError:\n    pytest = None\nfrom json import dumps\n"
        ),
        "tests/test_a.py": "",
    })
    view = view_of(tmp_path, "tests/test_a.py")
    assert view.reexported(".pytest.fail") == "pytest.fail"
    assert view.is_asserting_helper(".pytest.raises")
    assert view.reexported(".dumps") == "json.dumps"
    assert not view.is_asserting_helper(".dumps")
    assert view.reexported(".nothing.here") is None


def test_a_raise_checks_an_outcome_not_the_arguments(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "pytest.ini": "[pytest]\n",
        "tests/shell.py": """
            import os, shutil, subprocess

            def rm(path, recursive=False):
                if os.path.isdir(path):
                    if not recursive:
                        raise OSError("is a directory")
                    shutil.rmtree(path)

            def run(cmd):
                proc = subprocess.run(cmd)
                if proc.returncode != 0:
                    raise RuntimeError(proc.stderr)

            def fail(message):
                raise AssertionError(message)

            def unsupported():
                raise ValueError("unsupported")
            """,
        "tests/test_a.py": "",
    })
    view = view_of(tmp_path, "tests/test_a.py")
    assert not view.is_asserting_helper("tests.shell.rm")  # validates its arguments
    assert view.is_asserting_helper("tests.shell.run")  # checks the exit status
    assert view.is_asserting_helper("tests.shell.fail")
    assert not view.is_asserting_helper("tests.shell.unsupported")


def test_the_code_under_test_is_no_helper(tmp_path: Path) -> None:
    """A function of the library that raises on bad input is the workload a
    test exercises, not a check of it: only the test tree's helpers count."""
    write_tree(tmp_path, {
        "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        "src/lib/__init__.py": "def parse(text):\n    value = int(text)\n    if value < 0:\n        raise ValueError\n",
        "tests/helpers.py": "def check(text):\n    value = int(text)\n    if value < 0:\n        raise ValueError\n",
        "tests/test_a.py": "",
    })
    view = view_of(tmp_path, "tests/test_a.py")
    assert not view.is_asserting_helper("lib.parse")
    assert view.is_asserting_helper("tests.helpers.check")


def test_a_malformed_nested_config_in_a_parallel_run_is_one_line(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "tests/test_a.py": "def test_a():\n    assert True\n",
        "tests/sub/pytest.ini": "[pytest]\nthis is not ini\n",
        "tests/sub/test_b.py": "def test_b():\n    assert True\n",
    })
    result = flake8(["--isolated", "--select=HRM", "--hermetic-no-baseline", "-j2", "tests"], cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"flake8-hermetic: {tmp_path / 'tests' / 'sub' / 'pytest.ini'}:2: invalid ini file: cannot parse "
        + repr("this is not ini\n"),
    ]
