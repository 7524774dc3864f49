"""Configuration: the ``[tool.flake8-hermetic]`` table, the flake8 config, the command line.

Precedence, highest first: command line > flake8 config > pyproject table >
defaults. The matrix below resolves every option in-process through
flake8's own option parsing (the real registration, config discovery and
``parse_options``); the end-to-end tests run flake8 and the pack's command
as subprocesses on a project that has no flake8 config at all.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.settings import BASELINE_NAME, Settings, help_text, all_options
from flake8_hermetic.testfiles import DEFAULT_TEST_FILES
from tests.helpers import codes_by_line, flake8, hermetic, write_tree

DEFAULT_READONLY_COMMANDS = (
    "git rev-parse", "git status", "git log", "git diff", "git show", "git ls-files", "git check-ignore",
    "git config --get",
)
DEFAULT_REPO_DIRS = ("src", "tests", "test", "testing", "lib", "docs", "examples")

CHDIR_TEST = """\
    import os


    def test_moves(tmp_path):
        os.chdir(tmp_path)
        assert os.getcwd() == str(tmp_path)
"""

# a default-on hazard (HRM108: a fixed /tmp path reaching the file system), for
# the tests that run with no flake8 configuration at all
FIXED_TMP_TEST = """\
    def test_reports():
        with open("/tmp/report.txt", "w") as out:
            out.write("x")
        assert out.closed
"""


# -- in-process: what the plugin resolves ------------------------------------

@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path/proj``, with HOME at ``tmp_path`` so flake8's config
    search stops there, and the current directory in ``proj/sub`` (so
    "relative to the config" and "relative to the working directory"
    differ)."""
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    monkeypatch.chdir(project / "sub")
    return project


def resolved(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> Settings:
    """The settings the plugin resolves when flake8 parses ``args`` in this process."""
    from flake8.options.parse_args import parse_args

    from flake8_hermetic.checker import HermeticChecker

    monkeypatch.setattr(HermeticChecker, "runtime", None)
    parse_args([*args, "."])
    assert HermeticChecker.runtime is not None
    return HermeticChecker.runtime.settings


def failure(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    """The one stderr line of a run that must stop with status 2."""
    with pytest.raises(SystemExit) as stopped:
        resolved(monkeypatch, args)
    assert stopped.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@dataclass(frozen=True)
class Row:
    """One option at the three levels: how each level spells its value, and
    what ``Settings`` holds for it (``{base}``: the directory it is relative to):
    the ``field`` of a global option, ``settings.option(name)`` for a rule's."""

    option: str
    table: Any
    config: str
    cli: str
    field: str | None
    expect_table: Any
    expect_config: Any
    expect_cli: Any


ROWS = [
    Row("test-files", ["a/*.py", "test_*.py"], "b/*.py", "c/*.py", "test_files",
        ("a/*.py", "test_*.py"), ("b/*.py",), ("c/*.py",)),
    Row("readonly-commands", ["make check"], "tox -l, git status", "just --list", None,
        (("make", "check"),), (("tox", "-l"), ("git", "status")), (("just", "--list"),)),
    Row("max-collection-bytes", 2048, "4_096", "8192", None, 2048, 4096, 8192),
    Row("host-readers", ["app.config.load"], "app.env.read", "app.home.get", None,
        frozenset({"app.config.load"}), frozenset({"app.env.read"}), frozenset({"app.home.get"})),
    Row("repo-dirs", ["pkg"], "src,data", "assets", None, ("pkg",), ("src", "data"), ("assets",)),
    # A bare file name: the table's is relative to pyproject.toml, the flake8
    # config's to the config file, the command line's to the working directory.
    Row("baseline", "table-debt.txt", "config-debt.txt", "cli-debt.txt", "baseline_path",
        "{proj}/table-debt.txt", "{proj}/config-debt.txt", "{proj}/sub/cli-debt.txt"),
    Row("rules", "table-rules.yml", "config-rules.yml", "cli-rules.yml", "rules_path",
        "{proj}/table-rules.yml", "{proj}/config-rules.yml", "{proj}/sub/cli-rules.yml"),
]
ROW_IDS = [row.option for row in ROWS]


def value_of(settings: Settings, row: Row) -> Any:
    return settings.option(row.option) if row.field is None else getattr(settings, row.field)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(f'"{item}"' for item in value) + "]"
    if isinstance(value, int):
        return str(value)
    return f'"{value}"'


def expected(value: Any, project: Path) -> Any:
    return os.path.normpath(value.format(proj=project)) if isinstance(value, str) else value


def write_levels(project: Path, row: Row, *, table: bool, config: bool) -> None:
    write_tree(project, {
        "pyproject.toml": f"[tool.flake8-hermetic]\n{row.option} = {toml_value(row.table)}\n" if table else "",
        "setup.cfg": f"[flake8]\nhermetic-{row.option} = {row.config}\n" if config else "[metadata]\n",
    })
    for name in ("table-rules.yml", "config-rules.yml", "sub/cli-rules.yml"):
        (project / name).write_text("rules: []\n", encoding="utf-8")


def test_defaults_without_any_configuration(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(workspace, {"pyproject.toml": "[project]\nname = 'x'\n"})
    settings = resolved(monkeypatch, [])
    assert settings.test_files == DEFAULT_TEST_FILES
    assert settings.option("readonly-commands") == tuple(tuple(c.split()) for c in DEFAULT_READONLY_COMMANDS)
    assert settings.option("max-collection-bytes") == 1024 * 1024
    assert settings.option("host-readers") == frozenset()
    assert settings.option("repo-dirs") == DEFAULT_REPO_DIRS
    assert settings.rules_path is None
    # no config anywhere: the baseline is looked for in the working directory
    assert settings.baseline_path == str(workspace / "sub" / BASELINE_NAME)


def test_every_option_has_a_row() -> None:
    assert sorted(ROW_IDS + ["no-baseline"]) == sorted(spec.name for spec in all_options())


@pytest.mark.parametrize("row", [pytest.param(row, id=row.option) for row in ROWS])
def test_table_overrides_the_default(workspace: Path, monkeypatch: pytest.MonkeyPatch, row: Row) -> None:
    write_levels(workspace, row, table=True, config=False)
    settings = resolved(monkeypatch, [])
    assert value_of(settings, row) == expected(row.expect_table, workspace)


@pytest.mark.parametrize("row", [pytest.param(row, id=row.option) for row in ROWS])
def test_flake8_config_overrides_the_table(workspace: Path, monkeypatch: pytest.MonkeyPatch, row: Row) -> None:
    write_levels(workspace, row, table=True, config=True)
    settings = resolved(monkeypatch, [])
    assert value_of(settings, row) == expected(row.expect_config, workspace)


@pytest.mark.parametrize("row", [pytest.param(row, id=row.option) for row in ROWS])
def test_command_line_overrides_the_flake8_config(workspace: Path, monkeypatch: pytest.MonkeyPatch, row: Row) -> None:
    write_levels(workspace, row, table=True, config=True)
    settings = resolved(monkeypatch, [f"--hermetic-{row.option}={row.cli}"])
    assert value_of(settings, row) == expected(row.expect_cli, workspace)


def test_table_keys_may_carry_the_flag_prefix(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(workspace, {"pyproject.toml": '[tool.flake8-hermetic]\nhermetic-repo-dirs = ["pkg"]\n'})
    assert resolved(monkeypatch, []).option("repo-dirs") == ("pkg",)


def test_flake8_config_keys_may_use_underscores(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(workspace, {"setup.cfg": "[flake8]\nhermetic_baseline = debt.txt\n"})
    assert resolved(monkeypatch, []).baseline_path == str(workspace / "debt.txt")


@pytest.mark.parametrize(
    ("table", "config", "cli", "baseline_used"),
    [
        pytest.param(None, None, False, True, id="default-uses-the-baseline"),
        pytest.param(True, None, False, False, id="table"),
        pytest.param(True, "false", False, True, id="config-false-over-table-true"),
        pytest.param(False, "yes", False, False, id="config-yes-over-table-false"),
        pytest.param(None, "off", True, False, id="command-line-over-config"),
    ],
)
def test_no_baseline_precedence(
    workspace: Path, monkeypatch: pytest.MonkeyPatch,
    table: bool | None, config: str | None, cli: bool, baseline_used: bool,
) -> None:
    write_tree(workspace, {
        "pyproject.toml": "" if table is None else f"[tool.flake8-hermetic]\nno-baseline = {toml_value(table)}\n",
        "setup.cfg": "[flake8]\n" + ("" if config is None else f"hermetic-no-baseline = {config}\n"),
    })
    settings = resolved(monkeypatch, ["--hermetic-no-baseline"] if cli else [])
    assert settings.baseline_path == (str(workspace / BASELINE_NAME) if baseline_used else None)


@pytest.mark.parametrize(("tox_ini", "root"), [
    pytest.param("[flake8]\n", "", id="table-configures"),
    pytest.param("[flake8]\nhermetic-repo-dirs = y\n", "sub", id="flake8-config-configures"),
])
def test_default_baseline_sits_in_the_root_of_the_config_that_configures_the_pack(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tox_ini: str, root: str,
) -> None:
    write_tree(workspace, {
        "pyproject.toml": "[tool.flake8-hermetic]\nrepo-dirs = ['x']\n",
        "sub/tox.ini": tox_ini,
    })
    settings = resolved(monkeypatch, [])
    assert settings.config_dir == str(workspace / root).rstrip("/")
    assert settings.baseline_path == str(workspace / root / BASELINE_NAME)


def test_default_baseline_sits_next_to_the_table_without_flake8_config(
    workspace: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_tree(workspace, {"pyproject.toml": "[tool.flake8-hermetic]\nrepo-dirs = ['x']\n"})
    assert resolved(monkeypatch, []).baseline_path == str(workspace / BASELINE_NAME)


def test_isolated_ignores_the_table(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(workspace, {"pyproject.toml": "[tool.flake8-hermetic]\nunknown-key = 1\nrepo-dirs = ['x']\n"})
    assert resolved(monkeypatch, ["--isolated"]).option("repo-dirs") == DEFAULT_REPO_DIRS


def test_a_bad_table_value_hidden_by_the_config_is_not_an_error(
    workspace: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_tree(workspace, {
        "pyproject.toml": '[tool.flake8-hermetic]\nmax-collection-bytes = "lots"\n',
        "setup.cfg": "[flake8]\nhermetic-max-collection-bytes = 10\n",
    })
    assert resolved(monkeypatch, []).option("max-collection-bytes") == 10


# -- bad configuration: one line FILE:LINE: problem, exit status 2 ----------

BAD_TABLES = [
    pytest.param('[tool.flake8-hermetic]\nrepo-dirs = ["a"\n', 2, "invalid TOML: Unclosed array", id="unclosed-array"),
    pytest.param('[tool.flake8-hermetic]\nrepo-dirs = [a]\n\n', 2, "invalid TOML", id="invalid-value"),
    pytest.param('[tool.ruff]\nbaseline = 1\n\n[tool.flake8-hermetic]\nrepo-dirs = ["a"]\nbaselin = "x"\n',
                 6, "unknown key 'baselin'", id="unknown-key"),
    pytest.param('[tool.flake8-hermetic]\nmax-collection-bytes = "lots"\n', 2, "whole number", id="int-as-text"),
    pytest.param("[tool.flake8-hermetic]\nmax-collection-bytes = -5\n", 2, "positive", id="negative-int"),
    pytest.param("[tool.flake8-hermetic]\nmax-collection-bytes = true\n", 2, "whole number", id="bool-for-int"),
    pytest.param("[tool.flake8-hermetic]\ntest-files = 5\n", 2, "list of strings", id="list-as-int"),
    pytest.param('[tool.flake8-hermetic]\nrepo-dirs = ["a", 1]\n', 2, "list of strings", id="list-with-int"),
    pytest.param('[tool.flake8-hermetic]\nno-baseline = "sometimes"\n', 2, "true or false", id="bad-flag"),
    # another tool's `baseline` key above must not be blamed
    pytest.param('[tool.other]\nbaseline = "x"\n\n[tool.flake8-hermetic]\nbaseline = 3\n', 5, "file path",
                 id="path-as-int"),
    pytest.param('[tool.ruff]\nline-length = 1\n[tool.flake8-hermetic]\nbaseline = ""\n', 4, "file path",
                 id="empty-path"),
    pytest.param('[tool]\n"flake8-hermetic" = 5\n', 1, "must be a table", id="not-a-table"),
    pytest.param('[tool.flake8-hermetic]\n"repo-dirs" = 1\n', 2, "list of strings", id="quoted-key"),
    pytest.param("[tool]\nflake8-hermetic.repo-dirs = 1\n", 2, "list of strings", id="dotted-key"),
]


@pytest.mark.parametrize(("text", "line", "problem"), BAD_TABLES)
def test_bad_table_is_one_line_naming_file_and_line(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    text: str, line: int, problem: str,
) -> None:
    write_tree(workspace, {"pyproject.toml": text})
    message = failure(monkeypatch, capsys, [])
    assert f"{workspace / 'pyproject.toml'}:{line}: " in message
    assert problem in message


BAD_CONFIGS = [
    pytest.param("hermetic-max-collection-bytes = abc", "whole number", id="int"),
    pytest.param("hermetic_max_collection_bytes = abc", "whole number", id="int-underscore-key"),
    pytest.param("hermetic-max-collection-bytes = 0", "positive", id="zero"),
    pytest.param("hermetic-no-baseline = maybe", "true or false", id="flag"),
]


@pytest.mark.parametrize(("setting", "problem"), BAD_CONFIGS)
@pytest.mark.parametrize("config_name", [pytest.param(n, id=n) for n in ("setup.cfg", "tox.ini", ".flake8")])
def test_bad_flake8_config_value_is_one_line_naming_file_and_line(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    config_name: str, setting: str, problem: str,
) -> None:
    write_tree(workspace, {config_name: f"[flake8]\nmax-line-length = 100\n{setting}\n"})
    message = failure(monkeypatch, capsys, [])
    assert f"{workspace / config_name}:3: " in message
    assert problem in message


def test_bad_command_line_value_over_a_good_config_blames_the_command_line(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    write_tree(workspace, {"setup.cfg": "[flake8]\nhermetic-max-collection-bytes = 100\n"})
    message = failure(monkeypatch, capsys, ["--hermetic-max-collection-bytes=abc"])
    assert "command line: max-collection-bytes" in message
    assert "setup.cfg" not in message


# -- end to end: real programs on a project with no flake8 config -----------

@pytest.fixture
def ruff_only(tmp_path: Path) -> Path:
    """A project configured only through pyproject.toml: custom test-file
    globs and a baseline of its own name."""
    return write_tree(tmp_path, {
        "pyproject.toml": """\
            [project]
            name = "demo"

            [tool.ruff]
            line-length = 100

            [tool.flake8-hermetic]
            test-files = ["checks/*.py"]
            baseline = "hermetic-debt.txt"
        """,
        "checks/probe_old.py": FIXED_TMP_TEST,
        "checks/probe_new.py": FIXED_TMP_TEST,
        "tests/test_default_glob.py": FIXED_TMP_TEST,
        "hermetic-debt.txt": "checks/probe_old.py::test_reports\tHRM108\t\"/tmp/report.txt\"\n",
    })


def hrm_findings(output: str) -> list[tuple[str, int, str]]:
    """The pack's findings as (path, line, code), the path without ``./``."""
    found = codes_by_line(output)
    return [(path.removeprefix("./"), line, code) for path, line, code in found if code.startswith("HRM")]


def test_flake8_honours_the_table_without_any_flake8_config(ruff_only: Path) -> None:
    result = flake8(["."], cwd=ruff_only)
    assert "Traceback" not in result.stderr, result.stderr
    # only the table's globs are test files, and the table's baseline quiets probe_old
    assert hrm_findings(result.stdout) == [("checks/probe_new.py", 2, "HRM108")]
    assert result.returncode == 1


def test_flake8_from_a_subdirectory_finds_the_table_and_its_baseline(ruff_only: Path) -> None:
    result = flake8(["."], cwd=ruff_only / "checks")
    assert hrm_findings(result.stdout) == [("probe_new.py", 2, "HRM108")]


def test_flake8_on_a_buffer_honours_the_table(ruff_only: Path) -> None:
    source = (ruff_only / "checks" / "probe_old.py").read_text(encoding="utf-8")
    result = flake8(["--stdin-display-name", "checks/probe_old.py", "-"], cwd=ruff_only, stdin=source)
    assert result.returncode == 0, result.stdout + result.stderr
    result = flake8(["--stdin-display-name", "checks/probe_new.py", "-"], cwd=ruff_only, stdin=source)
    assert hrm_findings(result.stdout) == [("checks/probe_new.py", 2, "HRM108")]


@pytest.mark.parametrize(
    ("files", "blamed", "problem"),
    [
        pytest.param({"pyproject.toml": "[tool.flake8-hermetic]\nmax-collection-bytes = 'x'\n"},
                     "pyproject.toml:2", "whole number", id="table"),
        pytest.param({"setup.cfg": "[flake8]\nhermetic-max-collection-bytes = abc\n"},
                     "setup.cfg:2", "whole number", id="flake8-config"),
        pytest.param({"tox.ini": "[tox]\nenv_list = py\n\n[flake8]\nhermetic-no-baseline = perhaps\n"},
                     "tox.ini:5", "true or false", id="flake8-config-flag"),
    ],
)
def test_flake8_stops_on_bad_configuration_with_one_line(
    tmp_path: Path, files: dict[str, str], blamed: str, problem: str,
) -> None:
    write_tree(tmp_path, {**files, "tests/test_a.py": CHDIR_TEST})
    result = flake8(["tests"], cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{tmp_path / blamed}: " in lines[0]
    assert problem in lines[0]
    assert result.stdout == ""


def test_readonly_commands_with_arguments_from_a_flake8_config(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "setup.cfg": "[flake8]\nselect = HRM106\nhermetic-readonly-commands = make -n, git status\n",
        "tests/test_run.py": """\
            import subprocess


            def test_commands():
                assert subprocess.run(["make", "-n", "all"]).returncode == 0
                assert subprocess.run(["git", "status"]).returncode == 0
                assert subprocess.run(["make"]).returncode == 0
                assert subprocess.run(["git", "log"]).returncode == 0
        """,
    })
    result = flake8(["tests"], cwd=tmp_path)
    # the list replaces the defaults: `git log` is no longer read-only, bare `make` never was
    assert [(line, code) for _, line, code in codes_by_line(result.stdout)] == [(7, "HRM106"), (8, "HRM106")]


# -- the pack's own commands read the same configuration ----------------------

def test_check_command_honours_the_table_without_any_flake8_config(ruff_only: Path) -> None:
    result = hermetic(["check"], cwd=ruff_only)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "2 test files, 1 new, 1 baselined, 0 stale"  # checks/*.py, not tests/
    assert hrm_findings("\n".join(lines[:-1])) == [("checks/probe_new.py", 2, "HRM108")]
    assert result.returncode == 1


def test_baseline_commands_use_the_tables_baseline(ruff_only: Path) -> None:
    baseline = ruff_only / "hermetic-debt.txt"
    result = hermetic(["baseline", "regenerate", "--allow-growth"], cwd=ruff_only)
    assert result.returncode == 0, result.stderr
    assert not (ruff_only / "hermetic-baseline.txt").exists()
    entries = [line for line in baseline.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    assert entries == [
        "checks/probe_new.py::test_reports\tHRM108\t\"/tmp/report.txt\"",
        "checks/probe_old.py::test_reports\tHRM108\t\"/tmp/report.txt\"",
    ]
    stats = hermetic(["baseline", "stats"], cwd=ruff_only)
    assert stats.stdout.splitlines()[0] == "hermetic-debt.txt: 2 entries"
    assert hermetic(["check"], cwd=ruff_only).returncode == 0


BAD_TABLE = ({"pyproject.toml": "[tool.flake8-hermetic]\ntest-files = 3\n"}, "pyproject.toml:2", "list of strings")


@pytest.mark.parametrize(
    ("command", "files", "blamed", "problem"),
    [
        pytest.param(["check"], *BAD_TABLE, id="check"),
        pytest.param(["check", "--format", "github"], *BAD_TABLE, id="check-github"),
        pytest.param(["baseline", "regenerate"], *BAD_TABLE, id="regenerate"),
        pytest.param(["baseline", "prune", "--check"], *BAD_TABLE, id="prune"),
        pytest.param(["baseline", "check"], *BAD_TABLE, id="baseline-check"),
        pytest.param(["baseline", "stats"], *BAD_TABLE, id="stats"),
        pytest.param(["check"], {"pyproject.toml": "[tool.flake8-hermetic\n"}, "pyproject.toml:1", "invalid TOML",
                     id="check-bad-toml"),
        pytest.param(["check"], {".flake8": "[flake8]\nhermetic-max-collection-bytes = 1MB\n"}, ".flake8:2",
                     "whole number", id="check-bad-flake8-config"),
    ],
)
def test_commands_stop_on_bad_configuration_with_one_line(
    tmp_path: Path, command: list[str], files: dict[str, str], blamed: str, problem: str,
) -> None:
    write_tree(tmp_path, {**files, "tests/test_a.py": CHDIR_TEST})
    result = hermetic(command, cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{tmp_path / blamed}: " in lines[0]
    assert problem in lines[0]
    assert not (tmp_path / "hermetic-baseline.txt").exists()


# -- options the rules declare -------------------------------------------------

def _options_read_by(rule: type) -> set[str]:
    """The literal names a rule class passes to ``settings.option(...)``."""
    tree = ast.parse(inspect.getsource(inspect.getmodule(rule)))  # type: ignore[arg-type]
    body = next(node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == rule.__name__)
    return {
        node.args[0].value
        for node in ast.walk(body)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "option"
        and node.args and isinstance(node.args[0], ast.Constant)
    }


def test_every_option_a_rule_reads_is_declared_on_that_rule() -> None:
    read = {code: _options_read_by(rule) for code, rule in all_rules().items()}
    assert {code: names for code, names in read.items() if names} == {
        "HRM106": {"readonly-commands"}, "HRM401": {"max-collection-bytes"},
        "HRM402": {"host-readers"}, "HRM404": {"repo-dirs"},
    }
    undeclared = {code: names - {spec.name for spec in all_rules()[code].options} for code, names in read.items()}
    assert {code: names for code, names in undeclared.items() if names} == {}


def test_an_option_no_rule_declares_is_named_in_the_error() -> None:
    with pytest.raises(KeyError, match="'max-colection-bytes'.*max-collection-bytes"):
        Settings().option("max-colection-bytes")


def test_an_option_kind_is_checked_when_declared() -> None:
    with pytest.raises(ValueError, match="kind 'lsit'"):
        OptionSpec("dirs", "lsit", (), "help")  # type: ignore[arg-type]


def test_option_help_shows_its_own_default_and_a_literal_percent() -> None:
    spec = OptionSpec("dirs", "list", ("src", "tests"), "Up to 100% of %(default)s.")
    parser = argparse.ArgumentParser()
    parser.add_argument(spec.flag, help=help_text(spec))
    assert "Up to 100% of src,tests." in " ".join(parser.format_help().split())
