"""``check`` speaks flake8: its selection and output flags, the table's
flake8 keys, ``--format json``, colour and ``--no-baseline``.

Where flake8 has the same flag, the expectation is flake8's own output for
it, run with the plugin on the same project: the flags must mean what they
mean there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flake8.defaults import VALID_CODE_PREFIX
from flake8.utils import parse_comma_separated_list, parse_files_to_codes_mapping
from hypothesis import given, settings
from hypothesis import strategies as st

from flake8_hermetic import selection
from flake8_hermetic.options import ConfigError

from tests.helpers import REPO, codes_by_line, flake8, hermetic, needs_pty, on_a_terminal, write_tree

LEGACY = """\
    import os
    import time


    def test_build(tmp_path):
        os.chdir(tmp_path)


    class TestDeploy:
        def test_twice(self, tmp_path):
        \tos.chdir(tmp_path)
        \ttime.sleep(0.5)
"""
SLEEPY = """\
    import time


    def test_wait():
        time.sleep(1)
"""
ON = "--extend-select=HRM105,HRM201"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Two test files whose findings (HRM105, HRM201) are off by default."""
    return write_tree(tmp_path / "project", {
        "tests/test_legacy.py": LEGACY,
        "tests/test_sleepy.py": SLEEPY,
    })


def found(output: str) -> list[tuple[str, int, str]]:
    """The pack's findings in flake8's default output (flake8's own E/W codes left out)."""
    return [(path.removeprefix("./"), line, code) for path, line, code in codes_by_line(output) if code[:3] == "HRM"]


def same_as_flake8(project: Path, *flags: str) -> list[tuple[str, int, str]]:
    """``check FLAGS`` and ``flake8 FLAGS`` (no baseline) report the same; the findings."""
    ours = hermetic(["check", *flags], cwd=project)
    assert ours.returncode in (0, 1), ours.stderr
    theirs = flake8(["--hermetic-no-baseline", *flags, "."], cwd=project)
    assert found(ours.stdout) == found(theirs.stdout)
    return found(ours.stdout)


# -- selection flags -------------------------------------------------------------------

def test_select_extend_select_ignore_and_extend_ignore_mean_what_they_mean_to_flake8(project: Path) -> None:
    assert same_as_flake8(project) == []  # both rules are off by default
    assert {code for *_, code in same_as_flake8(project, ON)} == {"HRM105", "HRM201"}
    assert {code for *_, code in same_as_flake8(project, "--select=HRM105")} == {"HRM105"}
    assert {code for *_, code in same_as_flake8(project, ON, "--extend-ignore=HRM2")} == {"HRM105"}
    # --ignore replaces flake8's default ignore list, yet never turns an off-by-default rule on
    assert same_as_flake8(project, "--ignore=HRM105") == []
    assert {code for *_, code in same_as_flake8(project, ON, "--ignore=HRM105")} == {"HRM201"}


def test_per_file_ignores_and_excludes_mean_what_they_mean_to_flake8(project: Path) -> None:
    per_file = same_as_flake8(project, ON, "--per-file-ignores=tests/test_sleepy.py:HRM201 test_legacy.py:HRM105")
    assert per_file == [("tests/test_legacy.py", 12, "HRM201")]
    assert {path for path, *_ in same_as_flake8(project, ON, "--extend-exclude=test_sleepy.py")} == {
        "tests/test_legacy.py"
    }
    # excluding every test file checks nothing: flake8 is silent, the command says so (status 2)
    assert found(flake8(["--hermetic-no-baseline", ON, "--exclude=tests", "."], cwd=project).stdout) == []
    excluded = hermetic(["check", ON, "--exclude=tests"], cwd=project)
    assert (excluded.returncode, excluded.stdout) == (2, "")
    assert excluded.stderr.startswith("flake8-hermetic: no test file found in ., so nothing was checked; ")


def test_the_selection_flags_steer_regenerate_too(project: Path) -> None:
    result = hermetic(["baseline", "regenerate", ON, "--per-file-ignores=tests/test_legacy.py:HRM105"], cwd=project)
    assert result.returncode == 0, result.stderr
    text = (project / "hermetic-baseline.txt").read_text(encoding="utf-8")
    entries = sorted(line.split("\t")[1] for line in text.splitlines() if line and not line.startswith("#"))
    assert entries == ["HRM201", "HRM201"]


@pytest.mark.parametrize(("flag", "expected"), [
    pytest.param("--select=hrm105", "command line: select: 'hrm105' is not an error code", id="lowercase-code"),
    pytest.param("--extend-ignore=HRM1O5", "command line: extend-ignore: 'HRM1O5' is not an error code", id="typo"),
    pytest.param("--per-file-ignores=tests/*.py", "command line: per-file-ignores: expected 'pattern:codes'",
                 id="no-codes"),
    pytest.param("--per-file-ignores=tests/*.py:E5O1", "per-file-ignores: expected 'pattern:codes' pairs "
                 "(like 'tests/*.py:HRM105,E501'), got 'tests/*.py:E5O1'", id="bad-code"),
    pytest.param("--color=sometimes", "argument --color: invalid choice: 'sometimes'", id="color"),
])
def test_a_bad_selection_flag_is_one_line_and_status_2(project: Path, flag: str, expected: str) -> None:
    result = hermetic(["check", ON, flag], cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    [line] = result.stderr.splitlines()
    assert expected in line


# -- the table's flake8 keys -------------------------------------------------------------

def test_the_table_selects_rules_for_the_commands_and_plain_flake8_alike(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.flake8-hermetic]\nextend-select = ["HRM201"]\n', encoding="utf-8",
    )
    result = hermetic(["check"], cwd=project)
    assert {code for *_, code in found(result.stdout)} == {"HRM201"}
    # the plugin reads the table's selection wherever flake8 runs it
    assert found(flake8(["--hermetic-no-baseline", "."], cwd=project).stdout) == found(result.stdout)
    regenerate = hermetic(["baseline", "regenerate"], cwd=project)
    assert regenerate.returncode == 0, regenerate.stderr
    assert hermetic(["check"], cwd=project).stdout.splitlines()[-1].startswith("2 test files, 0 new, 2 baselined")


@pytest.mark.parametrize("per_file", [
    pytest.param('{ "tests/test_sleepy.py" = ["HRM201"], "test_legacy.py" = "HRM105" }', id="table"),
    pytest.param('"tests/test_sleepy.py:HRM201 test_legacy.py:HRM105"', id="flake8-string"),
])
def test_table_per_file_ignores_are_relative_to_the_pyproject(project: Path, per_file: str) -> None:
    (project / "pyproject.toml").write_text(
        f'[tool.flake8-hermetic]\nextend-select = ["HRM105", "HRM201"]\nper-file-ignores = {per_file}\n',
        encoding="utf-8",
    )
    expected = [("tests/test_legacy.py", 12, "HRM201")]
    assert found(hermetic(["check"], cwd=project).stdout) == expected
    # from a subdirectory the patterns still name the same files
    from_tests = hermetic(["check"], cwd=project / "tests")
    assert [(line, code) for _, line, code in found(from_tests.stdout)] == [(12, "HRM201")]


def test_table_excludes(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.flake8-hermetic]\nextend-select = ["HRM201"]\nextend-exclude = ["tests/test_legacy.py"]\n',
        encoding="utf-8",
    )
    assert found(hermetic(["check"], cwd=project).stdout) == [("tests/test_sleepy.py", 5, "HRM201")]


def test_the_command_line_beats_the_flake8_config_which_beats_the_table(project: Path) -> None:
    write_tree(project, {
        "pyproject.toml": (
            '[tool.flake8-hermetic]\nextend-select = ["HRM201"]\n'
            'per-file-ignores = { "test_sleepy.py" = ["HRM201"] }\n'
        ),
        "setup.cfg": "[flake8]\nextend_select = HRM105,HRM201\n",
    })
    # extend-select: the config's wins over the table's; per-file-ignores: only the table sets it
    assert found(hermetic(["check"], cwd=project).stdout) == [
        ("tests/test_legacy.py", 6, "HRM105"), ("tests/test_legacy.py", 11, "HRM105"),
        ("tests/test_legacy.py", 12, "HRM201"),
    ]
    command_line = hermetic(["check", "--extend-select=HRM201"], cwd=project)
    assert found(command_line.stdout) == [("tests/test_legacy.py", 12, "HRM201")]
    (project / "setup.cfg").write_text("[flake8]\nextend-select = HRM201\nper-file-ignores = x.py:E1\n")
    assert {path for path, *_ in found(hermetic(["check"], cwd=project).stdout)} == {
        "tests/test_legacy.py", "tests/test_sleepy.py",
    }


@pytest.mark.parametrize(("table", "expected"), [
    pytest.param('select = "HRM1,hrm2"', "pyproject.toml:3: select: 'hrm2' is not an error code", id="code"),
    pytest.param("extend-ignore = 5", "pyproject.toml:3: extend-ignore: expected a list of codes", id="type"),
    pytest.param('per-file-ignores = { "t.py" = ["X1Y"] }', "pyproject.toml:3: per-file-ignores: t.py: 'X1Y'",
                 id="per-file-code"),
    pytest.param('per-file-ignores = "t.py"', "pyproject.toml:3: per-file-ignores: expected 'pattern:codes'",
                 id="per-file-string"),
    pytest.param('exclude = ["a,b"]', "pyproject.toml:3: exclude: 'a,b': one pattern per item", id="comma"),
    pytest.param('extend_select = ["HRM201"]', "pyproject.toml:3: [tool.flake8-hermetic]: unknown key", id="key"),
])
def test_a_bad_table_value_is_one_line_naming_its_line(project: Path, table: str, expected: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.flake8-hermetic]\n\n{table}\n", encoding="utf-8")
    result = hermetic(["check"], cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    [line] = result.stderr.splitlines()
    assert expected in line


CODE_LIKE = st.from_regex(r"[A-Z]{1,3}[0-9]{0,3}", fullmatch=True)
WORDS = st.one_of(
    st.text(max_size=10), CODE_LIKE,
    st.sampled_from(["tests/*.py", "conftest.py", "../x", "a b", "x:y", "E1,E2", "ABC", "t.py:E1 u.py:W2"]),
)
TABLE_VALUES = st.one_of(
    WORDS, st.lists(WORDS, max_size=4), st.integers(), st.booleans(),
    st.dictionaries(WORDS, st.one_of(WORDS, st.lists(st.one_of(CODE_LIKE, WORDS), max_size=3)), max_size=3),
)


def argument_or_error(key: str, value: object) -> tuple[str, str]:
    """The flake8 argument a table value becomes, or the one-line error it gives."""
    try:
        return selection._argument(key, value, lambda: "pyproject.toml:3", str(REPO)), ""
    except ConfigError as exc:
        return "", str(exc)


def codes_handed_on(key: str, argument: str) -> list[str]:
    """The codes flake8 reads from the argument, as it parses them."""
    text = argument.partition("=")[2]
    if key == "per-file-ignores":
        return [code for _, group in parse_files_to_codes_mapping(text) for code in group]
    return parse_comma_separated_list(text) if key in selection.CODE_KEYS else []


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(key=st.sampled_from(selection.FLAKE8_KEYS), value=TABLE_VALUES)
def test_any_table_value_is_an_argument_flake8_reads_or_one_line(key: str, value: object) -> None:
    argument, error = argument_or_error(key, value)
    assert bool(argument) != bool(error)
    assert error.startswith(f"pyproject.toml:3: {key}") if error else argument.startswith(f"--{key}=")
    assert "\n" not in error
    # what is handed to flake8 reads back as flake8 codes: nothing it would refuse, or match nothing with
    assert all(VALID_CODE_PREFIX.match(code) for code in codes_handed_on(key, argument))


# -- output flags ---------------------------------------------------------------------------

def lines_with(output: str, *, finding: bool) -> list[str]:
    return [line for line in output.splitlines() if bool(codes_by_line(line)) == finding]


def test_show_source_statistics_and_count_print_what_flake8_prints(project: Path) -> None:
    flags = ["--select=HRM105,HRM201", "--show-source", "--statistics", "--count"]
    ours = hermetic(["check", *flags, "."], cwd=project)  # "." typed: paths shown as flake8 shows them
    theirs = flake8(["--hermetic-no-baseline", *flags, "."], cwd=project)
    assert ours.returncode == theirs.returncode == 1
    # flake8's output, then our summary, then the count last
    assert ours.stdout.splitlines()[:-2] == theirs.stdout.splitlines()[:-1]
    assert ours.stdout.splitlines()[-2:] == [
        "2 test files, 4 new, 0 baselined, 0 stale", theirs.stdout.splitlines()[-1],
    ]
    assert "    \tos.chdir(tmp_path)\n    \t^\n" in ours.stdout  # a tab before the column is kept under the caret
    assert "2     HRM201 time.sleep() waits a guessed time" in ours.stdout


def test_the_flake8_configs_show_source_applies_and_no_show_source_negates_it(project: Path) -> None:
    (project / "setup.cfg").write_text("[flake8]\nshow-source = true\nextend-select = HRM201\n", encoding="utf-8")
    shown = hermetic(["check"], cwd=project).stdout
    assert "    time.sleep(1)\n    ^\n" in shown
    assert "^" not in hermetic(["check", "--no-show-source"], cwd=project).stdout


def test_output_file_holds_the_report_and_replaces_an_old_one(project: Path) -> None:
    report = project / "reports" / "hermetic.txt"
    report.parent.mkdir()
    report.write_text("an older, longer report\n" * 50, encoding="utf-8")
    result = hermetic(["check", ON, "--output-file", "reports/hermetic.txt", "--count"], cwd=project)
    assert result.returncode == 1
    assert result.stdout == "4\n"  # as flake8, the count goes to stdout
    text = report.read_text(encoding="utf-8")
    assert text.splitlines()[-1] == "2 test files, 4 new, 0 baselined, 0 stale"
    assert len(found(text)) == 4 and "older" not in text
    assert [p.name for p in report.parent.iterdir()] == ["hermetic.txt"]  # no temporary left behind
    missing = hermetic(["check", ON, "--output-file", "nowhere/report.txt"], cwd=project)
    assert (missing.returncode, missing.stderr) == (
        2, "flake8-hermetic: cannot write nowhere/report.txt: No such file or directory\n",
    )


# -- json and --no-baseline ----------------------------------------------------------------

@pytest.fixture
def half_baselined(project: Path) -> Path:
    (project / "setup.cfg").write_text("[flake8]\nextend-select = HRM105,HRM201\n", encoding="utf-8")
    assert hermetic(["baseline", "regenerate"], cwd=project).returncode == 0
    legacy = project / "tests" / "test_legacy.py"
    legacy.write_text(legacy.read_text(encoding="utf-8").replace("    os.chdir(tmp_path)\n\n", "    pass\n\n"),
                      encoding="utf-8")
    sleepy = project / "tests" / "test_sleepy.py"
    sleepy.write_text(sleepy.read_text(encoding="utf-8") + "    time.sleep(3)\n", encoding="utf-8")
    return project


def test_json_lists_new_baselined_and_stale_findings(half_baselined: Path) -> None:
    result = hermetic(["check", "--format", "json"], cwd=half_baselined)
    assert result.returncode == 1
    assert result.stderr == "2 test files, 1 new, 3 baselined, 1 stale\n"
    findings = json.loads(result.stdout)
    assert [(f["path"], f["line"], f["code"], f["node_id"], f["status"], f["baselined"]) for f in findings] == [
        ("tests/test_legacy.py", 1, "HRM900", "tests/test_legacy.py::test_build", "stale", False),
        ("tests/test_legacy.py", 11, "HRM105", "tests/test_legacy.py::TestDeploy::test_twice", "baselined", True),
        ("tests/test_legacy.py", 12, "HRM201", "tests/test_legacy.py::TestDeploy::test_twice", "baselined", True),
        ("tests/test_sleepy.py", 5, "HRM201", "tests/test_sleepy.py::test_wait", "baselined", True),
        ("tests/test_sleepy.py", 6, "HRM201", "tests/test_sleepy.py::test_wait", "new", False),
    ]
    assert set(findings[4]) == {"path", "line", "column", "code", "message", "node_id", "status", "baselined"}
    assert (findings[4]["column"], findings[4]["message"].split()[0]) == (5, "time.sleep()")
    assert "the debt was paid" in findings[0]["message"]
    # the schema docs/ci.md shows is the one written
    documented = (REPO / "docs" / "ci.md").read_text(encoding="utf-8").split("```json\n", 1)[1].split("```", 1)[0]
    assert [set(item) for item in json.loads(documented)] == [set(findings[0])]


def test_json_to_an_output_file_parses_and_an_empty_run_is_an_empty_array(project: Path) -> None:
    result = hermetic(["check", "--format", "json", "--output-file", "out.json", "--statistics"], cwd=project)
    assert (result.returncode, result.stdout) == (0, "")
    assert json.loads((project / "out.json").read_text(encoding="utf-8")) == []
    assert result.stderr == "2 test files, 0 new, 0 baselined, 0 stale\n"


def test_no_baseline_reports_every_violation(half_baselined: Path) -> None:
    result = hermetic(["check", "--no-baseline"], cwd=half_baselined)
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "2 test files, 4 new, 0 baselined, 0 stale"
    assert found(result.stdout) == found(flake8(["--hermetic-no-baseline", "."], cwd=half_baselined).stdout)
    both = hermetic(["check", "--no-baseline", "--baseline", "hermetic-baseline.txt"], cwd=half_baselined)
    assert (both.returncode, both.stdout) == (2, "")
    assert both.stderr == "flake8-hermetic: --baseline and --no-baseline contradict each other\n"


# -- colour ----------------------------------------------------------------------------------

BOLD_PATH = "\x1b[1mtests/test_sleepy.py\x1b[m"
RED_CODE = "\x1b[1m\x1b[31mHRM201\x1b[m"


@needs_pty
def test_colour_on_a_terminal_as_flake8s(project: Path) -> None:
    coloured = on_a_terminal(["check", ON, "tests/test_sleepy.py"], project)
    assert f"{BOLD_PATH}\x1b[36m:\x1b[m5\x1b[36m:\x1b[m5\x1b[36m:\x1b[m {RED_CODE} time.sleep()" in coloured
    assert coloured.splitlines()[-1] == "1 test file, 1 new, 0 baselined, 0 stale"
    # an empty NO_COLOR does not count (no-color.org)
    assert RED_CODE in on_a_terminal(["check", ON, "tests/test_sleepy.py"], project, NO_COLOR="")


@needs_pty
@pytest.mark.parametrize(("flags", "environment"), [
    pytest.param([], {"NO_COLOR": "1"}, id="NO_COLOR"),
    pytest.param(["--color=never"], {}, id="never"),
])
def test_no_colour_on_a_terminal_with_no_color_or_never(
    project: Path, flags: list[str], environment: dict[str, str],
) -> None:
    plain = on_a_terminal(["check", ON, *flags, "tests/test_sleepy.py"], project, **environment)
    assert "\x1b" not in plain
    assert "tests/test_sleepy.py:5:5: HRM201 time.sleep()" in plain


def test_colour_is_off_in_a_pipe_unless_always(project: Path) -> None:
    piped = hermetic(["check", ON, "tests/test_sleepy.py"], cwd=project)
    assert "\x1b" not in piped.stdout and "HRM201" in piped.stdout
    always = hermetic(["check", ON, "--color=always", "tests/test_sleepy.py"], cwd=project)
    assert BOLD_PATH in always.stdout and RED_CODE in always.stdout
    github = hermetic(["check", ON, "--color=always", "--format", "github", "tests/test_sleepy.py"], cwd=project)
    assert "\x1b" not in github.stdout  # colour is for the default format only
