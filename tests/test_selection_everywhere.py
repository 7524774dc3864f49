"""The pack owns its selection, the same in every entry point (issue 27, section 1).

Plain ``flake8``, flake8's pre-commit hook (flake8 on the staged file names),
an editor (python-lsp-server runs ``flake8 -`` with ``--stdin-display-name``
and its own ``--ignore``) and ``flake8-hermetic check`` choose the pack's
rules the same way: off-by-default rules run only where a select names them,
the ``[tool.flake8-hermetic]`` table's selection keys act everywhere, HRM900
follows the selected rules, and a broken selection is one line that leaves
the other plugins' results in place.

Real flake8 runs as subprocesses on a project under ``tmp_path``; the
parametrized spellings run flake8's own ``Application`` in-process.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import codes_by_line, flake8, hermetic, write_tree

# HRM105 and HRM201 are off by default, HRM108 is on; F401 is pyflakes' and
# E302 pycodestyle's: the other plugins that must keep reporting.
SUITE = """\
    import os
    import sys
    import time


    def test_build(tmp_path):
        os.chdir(tmp_path)
        time.sleep(1)
        with open("/tmp/report.txt", "w") as out:
            out.write("x")
        assert out.closed
    def test_second():
        assert True
"""
OFF_RULES = {"HRM105", "HRM201"}
ON_RULE = "HRM108"
OTHERS = {"F401", "E302"}
# pylsp 1.15 (pylsp/plugins/flake8_lint.py): build_args puts "-" first, then
# the options its settings give (here the ignore list a [pycodestyle] section
# hands it), then --stdin-display-name with the path relative to the
# workspace root, which is the child's cwd
PYLSP_ARGS = ["-", "--ignore=E203,W503", "--stdin-display-name", "tests/test_a.py"]
# a baseline entry for HRM108 that matches nothing any more
STALE_ENTRY = "tests/test_a.py::test_gone\tHRM108\topen('/tmp/old.txt')\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "project", {"tests/test_a.py": SUITE})


def codes(output: str) -> set[str]:
    return {code for _, _, code in codes_by_line(output)}


def pack_findings(output: str) -> list[tuple[str, int, str]]:
    return [(path.removeprefix("./"), line, code) for path, line, code in codes_by_line(output) if code[:3] == "HRM"]


def run_in_process(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                   args: list[str]) -> tuple[int, set[str], str]:
    """flake8's own ``Application`` on ``root``: exit status, codes shown, stderr."""
    from flake8.main.application import Application

    from flake8_hermetic.checker import HermeticChecker

    monkeypatch.chdir(root)
    monkeypatch.setenv("HOME", str(root))
    monkeypatch.setattr(HermeticChecker, "runtime", None)
    capsys.readouterr()
    application = Application()
    application.run(["--jobs=1", *args])
    captured = capsys.readouterr()
    return application.exit_code(), codes(captured.out), captured.err


# -- 1. ignore = never turns an off-by-default rule on ---------------------------------

def test_an_ignore_list_in_the_flake8_config_leaves_the_off_by_default_rules_off(project: Path) -> None:
    (project / ".flake8").write_text("[flake8]\nignore = E203,W503\n", encoding="utf-8")
    result = flake8(["--hermetic-no-baseline", "tests"], cwd=project)
    assert result.returncode == 1, result.stderr
    assert codes(result.stdout) == {ON_RULE, *OTHERS}
    # the pack's command agrees
    checked = hermetic(["check", "--no-baseline"], cwd=project)
    assert {code for *_, code in pack_findings(checked.stdout)} == {ON_RULE}


def test_a_select_that_names_an_off_by_default_rule_turns_it_on_and_ignore_still_filters(project: Path) -> None:
    (project / ".flake8").write_text("[flake8]\nignore = E203,W503\nextend-select = HRM1\n", encoding="utf-8")
    result = flake8(["--hermetic-no-baseline", "tests"], cwd=project)
    assert codes(result.stdout) == {ON_RULE, "HRM105", *OTHERS}
    filtered = flake8(["--hermetic-no-baseline", "--extend-ignore=HRM105", "tests"], cwd=project)
    assert codes(filtered.stdout) == {ON_RULE, *OTHERS}


@pytest.mark.parametrize(("args", "expected"), [
    pytest.param([], {ON_RULE}, id="defaults"),
    pytest.param(["--ignore=E203"], {ON_RULE}, id="ignore"),
    pytest.param(["--ignore=HRM108"], set(), id="ignore-the-on-rule"),
    pytest.param(["--extend-ignore=E203"], {ON_RULE}, id="extend-ignore"),
    pytest.param(["--extend-select=HRM"], {ON_RULE, *OFF_RULES}, id="extend-select-HRM"),
    pytest.param(["--select=HRM"], {ON_RULE, *OFF_RULES}, id="select-HRM"),
    pytest.param(["--select=E,F,W,HRM105"], {"HRM105"}, id="select-a-code"),
    pytest.param(["--ignore=E203", "--extend-select=HRM2"], {ON_RULE, "HRM201"}, id="ignore-and-extend-select"),
    pytest.param(["--extend-select=HRM", "--extend-ignore=HRM2"], {ON_RULE, "HRM105"}, id="extend-ignore-filters"),
    pytest.param(["--select=HRM", "--ignore=HRM105"], {ON_RULE, "HRM201"}, id="ignore-filters"),
])
def test_only_a_select_turns_an_off_by_default_rule_on(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    args: list[str], expected: set[str],
) -> None:
    _, shown, stderr = run_in_process(project, monkeypatch, capsys, ["--hermetic-no-baseline", *args, "tests"])
    assert {code for code in shown if code[:3] == "HRM"} == expected, stderr


# -- 2. the table's selection keys act wherever flake8 runs the plugin ------------------

RUFF_TEAM = """\
[tool.flake8-hermetic]
extend-select = ["HRM105", "HRM201"]
extend-ignore = ["HRM108"]
per-file-ignores = { "tests/test_b.py" = ["HRM201", "E302"] }
"""


@pytest.fixture
def ruff_team(project: Path) -> Path:
    """A project whose only configuration of the pack is the pyproject table."""
    write_tree(project, {"pyproject.toml": RUFF_TEAM, "tests/test_b.py": SUITE})
    return project


def test_the_table_alone_gives_plain_flake8_the_findings_of_check(ruff_team: Path) -> None:
    checked = hermetic(["check", "--no-baseline"], cwd=ruff_team)
    assert checked.returncode == 1, checked.stderr
    expected = pack_findings(checked.stdout)
    assert {(path, code) for path, _, code in expected} == {
        ("tests/test_a.py", "HRM105"), ("tests/test_a.py", "HRM201"), ("tests/test_b.py", "HRM105"),
    }
    plain = flake8(["--hermetic-no-baseline", "."], cwd=ruff_team)
    assert pack_findings(plain.stdout) == expected
    # the table speaks for the pack's codes only: pycodestyle and pyflakes keep
    # flake8's defaults (the table's E302 for test_b.py is not handed to flake8)
    others = {(path.removeprefix("./"), code) for path, _, code in codes_by_line(plain.stdout) if code[:3] != "HRM"}
    assert others == {(path, code) for path in ("tests/test_a.py", "tests/test_b.py") for code in OTHERS}


def test_the_pre_commit_hook_and_an_editor_get_the_same_findings(ruff_team: Path) -> None:
    expected = pack_findings(hermetic(["check", "--no-baseline"], cwd=ruff_team).stdout)
    # flake8's pre-commit hook runs flake8 on the staged files' names
    hook = flake8(["--hermetic-no-baseline", "tests/test_a.py", "tests/test_b.py"], cwd=ruff_team)
    assert pack_findings(hook.stdout) == expected
    # python-lsp-server's flake8 plugin: the buffer on stdin, its own ignore list
    buffer = (ruff_team / "tests" / "test_a.py").read_text(encoding="utf-8")
    editor = flake8(["--hermetic-no-baseline", *PYLSP_ARGS], cwd=ruff_team, stdin=buffer)
    assert pack_findings(editor.stdout) == [finding for finding in expected if finding[0] == "tests/test_a.py"]
    assert {"F401", "E302"} <= codes(editor.stdout)


def test_the_table_select_narrows_the_pack_only(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.flake8-hermetic]\nselect = ["HRM1"]\n', encoding="utf-8")
    plain = flake8(["--hermetic-no-baseline", "tests"], cwd=project)
    # HRM1 names HRM105 (off by default) and HRM108; pycodestyle and pyflakes stay on
    assert codes(plain.stdout) == {"HRM105", ON_RULE, *OTHERS}
    assert {code for *_, code in pack_findings(hermetic(["check", "--no-baseline"], cwd=project).stdout)} == {
        "HRM105", ON_RULE,
    }


def test_flake8s_own_options_still_filter_the_tables_selection(ruff_team: Path) -> None:
    narrowed = flake8(["--hermetic-no-baseline", "--extend-ignore=HRM2", "tests/test_a.py"], cwd=ruff_team)
    assert codes(narrowed.stdout) == {"HRM105", *OTHERS}
    (ruff_team / ".flake8").write_text("[flake8]\nselect = E,F,W,HRM2\n", encoding="utf-8")
    selected = flake8(["--hermetic-no-baseline", "tests/test_a.py"], cwd=ruff_team)
    assert codes(selected.stdout) == {"HRM201", *OTHERS}
    # per-file-ignores is taken per key, as check takes it: flake8's own replaces the table's
    (ruff_team / ".flake8").write_text("[flake8]\nper-file-ignores = tests/test_a.py:E302\n", encoding="utf-8")
    replaced = flake8(["--hermetic-no-baseline", "tests"], cwd=ruff_team)
    assert pack_findings(replaced.stdout) == pack_findings(hermetic(["check", "--no-baseline"], cwd=ruff_team).stdout)
    assert ("tests/test_b.py", 8, "HRM201") in pack_findings(replaced.stdout)


def test_python_lsp_server_shows_the_tables_rules(ruff_team: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real python-lsp-server flake8 plugin (in the test extra; the flake8
    runs above use the options it passes, for an environment without it)."""
    # pylsp's pylint plugin sets this at import, when Config loads the plugins: put back afterwards
    monkeypatch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "hide")
    flake8_lint = pytest.importorskip("pylsp.plugins.flake8_lint")
    from unittest import mock

    from pylsp import uris
    from pylsp.config.config import Config
    from pylsp.workspace import Document, Workspace

    monkeypatch.setenv("HOME", str(ruff_team))
    (ruff_team / "hermetic-baseline.txt").write_text("", encoding="utf-8")
    workspace = Workspace(uris.from_fs_path(str(ruff_team)), mock.Mock())
    workspace._config = Config(workspace.root_uri, {}, 0, {})
    executable = Path(sys.executable).with_name("flake8")
    workspace._config.update({"plugins": {"flake8": {"executable": str(executable)}}})
    path = ruff_team / "tests" / "test_a.py"
    document = Document(uris.from_fs_path(str(path)), workspace, path.read_text(encoding="utf-8"))
    diagnostics = flake8_lint.pylsp_lint(workspace, document)
    found = {(d["range"]["start"]["line"] + 1, d["code"]) for d in diagnostics}
    assert {(7, "HRM105"), (8, "HRM201"), (2, "F401")} <= found
    assert not any(code == ON_RULE for _, code in found)


# -- 3. HRM900 follows the selected rules ---------------------------------------------

@pytest.fixture
def stale(project: Path) -> Path:
    """A baseline whose one entry matches nothing any more."""
    (project / "hermetic-baseline.txt").write_text(STALE_ENTRY, encoding="utf-8")
    return project


@pytest.mark.parametrize("args", [
    pytest.param(["--select=HRM1"], id="select-HRM1"),
    pytest.param(["--select=HRM108"], id="select-the-code"),
    pytest.param(["--select=E,F,W,HRM10"], id="select-with-others"),
    pytest.param(["--ignore=E203"], id="ignore-list"),
    pytest.param(["--select=HRM1", "--ignore=HRM"], id="broad-ignore-overridden"),
])
def test_the_stale_report_follows_the_selected_rules_whatever_the_spelling(
    stale: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str],
) -> None:
    status, shown, stderr = run_in_process(stale, monkeypatch, capsys, [*args, "tests"])
    assert "HRM900" in shown, stderr
    assert status == 1


@pytest.mark.parametrize("args", [
    pytest.param(["--select=HRM1", "--extend-ignore=HRM9"], id="extend-ignore-HRM9"),
    pytest.param(["--ignore=HRM900"], id="ignore-HRM900"),
    pytest.param(["--select=E,F,W"], id="no-rule-selected"),
])
def test_an_ignore_naming_hrm9_still_drops_the_stale_report(
    stale: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str],
) -> None:
    _, shown, _ = run_in_process(stale, monkeypatch, capsys, [*args, "tests"])
    assert "HRM900" not in shown


def test_a_select_leaving_out_hrm9_keeps_the_stale_report_in_flake8_and_check(stale: Path) -> None:
    plain = flake8(["--select=HRM1", "tests"], cwd=stale)
    [report] = [line for line in plain.stdout.splitlines() if " HRM900 " in line]
    assert report.startswith("tests/test_a.py:1:1: HRM900 stale baseline entry at hermetic-baseline.txt:1: ")
    assert plain.returncode == 1
    (stale / "pyproject.toml").write_text('[tool.flake8-hermetic]\nselect = ["HRM108"]\n', encoding="utf-8")
    checked = hermetic(["check"], cwd=stale)
    assert "HRM900" in {code for *_, code in pack_findings(checked.stdout)}, checked.stdout + checked.stderr
    assert "HRM900" in codes(flake8(["tests"], cwd=stale).stdout)


# -- 4. a broken table is one line; the other plugins still report ------------------------

TYPO = '[tool.flake8-hermetic]\nextend-selct = ["HRM201"]\n'
TYPO_LINE = (
    "pyproject.toml:2: [tool.flake8-hermetic]: unknown key 'extend-selct' (did you mean 'extend-select'?)"
)


def test_a_typo_in_the_table_leaves_pycodestyle_and_pyflakes_reporting(project: Path) -> None:
    write_tree(project, {"pyproject.toml": TYPO, "tests/test_b.py": SUITE, "tests/test_c.py": SUITE})
    result = flake8(["--jobs=2", "tests"], cwd=project)
    # the one line, once (three files, two jobs), and exit status 2 so CI notices
    assert result.stderr == f"flake8-hermetic: {project / TYPO_LINE}\n"
    assert result.returncode == 2
    # pycodestyle's and pyflakes' findings are all there; the pack checked nothing
    assert codes_by_line(result.stdout) == sorted(
        (f"tests/test_{name}.py", line, code) for name in "abc" for line, code in ((2, "F401"), (12, "E302"))
    )


def test_an_editor_buffer_keeps_its_diagnostics_under_a_broken_table(project: Path) -> None:
    (project / "pyproject.toml").write_text(TYPO, encoding="utf-8")
    buffer = (project / "tests" / "test_a.py").read_text(encoding="utf-8")
    result = flake8(PYLSP_ARGS, cwd=project, stdin=buffer)
    assert codes(result.stdout) == OTHERS
    assert result.stderr.splitlines() == [f"flake8-hermetic: {project / TYPO_LINE}"]


def test_the_pack_commands_still_stop_on_a_broken_table(project: Path) -> None:
    (project / "pyproject.toml").write_text(TYPO, encoding="utf-8")
    result = hermetic(["check"], cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [f"flake8-hermetic: {project / TYPO_LINE}"]


@pytest.mark.parametrize(("table", "expected"), [
    pytest.param('test_files = ["tests/*.py"]',
                 "[tool.flake8-hermetic]: unknown key 'test_files' (did you mean 'test-files'?)",
                 id="flake8-spelling-of-a-key"),
    pytest.param('extend-select = ["HRM1O5"]',
                 "extend-select: 'HRM1O5' is not an error code of the pack (flake8-hermetic) "
                 "(did you mean 'HRM105'?)", id="code"),
    pytest.param('ignore = ["hrm2"]', "ignore: 'hrm2' is not an error code of the pack (flake8-hermetic) "
                 "(did you mean 'HRM2'?)", id="lower-case-prefix"),
    pytest.param('no-baseline = "ture"', "no-baseline: expected true or false, got 'ture' (did you mean 'true'?)",
                 id="flag"),
])
def test_an_unknown_key_or_value_in_the_table_says_what_was_meant(project: Path, table: str, expected: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.flake8-hermetic]\n{table}\n", encoding="utf-8")
    result = flake8(["tests"], cwd=project)
    assert result.stderr == f"flake8-hermetic: {project / 'pyproject.toml'}:2: {expected}\n"
    assert (result.returncode, codes(result.stdout)) == (2, OTHERS)


# -- 5. a code that is none of the pack's -----------------------------------------------

def test_a_misspelt_code_on_flake8s_command_line_is_named_not_called_inert(project: Path) -> None:
    (project / "hermetic-baseline.txt").write_text("", encoding="utf-8")  # the project adopted the pack
    result = flake8(["--select=HRM1O5", "tests"], cwd=project)
    assert result.stderr == (
        "flake8-hermetic: command line: select: 'HRM1O5' is not an error code of the pack (flake8-hermetic) "
        "(did you mean 'HRM105'?)\n"
    )
    assert "leaves out every" not in result.stderr
    assert (result.returncode, result.stdout) == (2, "")


def test_a_code_of_no_rule_in_the_flake8_config_is_named_with_its_line(project: Path) -> None:
    (project / "setup.cfg").write_text("[flake8]\nmax-line-length = 100\nextend-ignore =\n    E203,\n    HRM199\n",
                                       encoding="utf-8")
    result = flake8(["tests"], cwd=project)
    assert result.stderr == (
        f"flake8-hermetic: {project / 'setup.cfg'}:3: extend-ignore: 'HRM199' is not an error code of the pack "
        "(flake8-hermetic) (did you mean 'HRM109'?)\n"
    )
    assert (result.returncode, codes(result.stdout)) == (2, OTHERS)
    checked = hermetic(["check"], cwd=project)
    assert (checked.returncode, checked.stdout) == (2, "")
    assert "'HRM199' is not an error code of the pack" in checked.stderr


@pytest.mark.parametrize("args", [
    pytest.param(["--select=HRM1"], id="prefix"),
    pytest.param(["--extend-ignore=HRM6"], id="runtime-codes"),
    pytest.param(["--extend-select=HRM8"], id="pattern-rules"),
    pytest.param(["--select=HRM900"], id="stale"),
])
def test_the_pack_s_own_prefixes_are_accepted(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str],
) -> None:
    _, _, stderr = run_in_process(project, monkeypatch, capsys, ["--hermetic-no-baseline", *args, "tests"])
    assert stderr == ""
