"""Project pattern rules (HRM8xx): real flake8 on a temporary project with
real rules files, and the one-pass search against ast-grep run rule by rule.

The project in ``tests/fixtures/patterns/project`` marks each line a rule
must flag with a trailing ``# HRM8nn``; every other line is a fix that must
stay quiet. ``tests/fixtures/patterns/broken`` holds one rules file per
kind of mistake a user makes.
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
import sysconfig
import tokenize
from collections import Counter
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, given, settings

from flake8_hermetic.checker import CONTEXT_SEPARATOR
from flake8_hermetic.patterns import EXTRA_HINT, load_pattern_rules
from flake8_hermetic.source import what_text
from tests.helpers import FIXTURES, codes_by_line, flake8, hermetic, parses, run

PATTERNS = FIXTURES / "patterns"
DOC = FIXTURES.parents[1] / "docs" / "pattern-rules.md"
PROJECT = PATTERNS / "project"
MARKER = re.compile(r"#\s*((?:HRM8\d\d\s*)+)$")
RULES_NAME = "hermetic-rules.yml"
CONFIG_PATCH = 'patch("app.config.Config.load", return_value=MagicMock())'
# flake8's main with one module made unimportable, as on a host without the extra.
WITHOUT_MODULE = "import sys; sys.modules[{module!r}] = None; from flake8.main.cli import main; sys.exit(main())"


def make_project(root: Path) -> Path:
    shutil.copytree(PROJECT, root, dirs_exist_ok=True)
    shutil.copyfile(PATTERNS / "good.yml", root / RULES_NAME)
    (root / "pyproject.toml").write_text(f'[tool.flake8-hermetic]\nrules = "{RULES_NAME}"\n', encoding="utf-8")
    return root


def marked_lines() -> list[tuple[str, int, str]]:
    expected: list[tuple[str, int, str]] = []
    for path in sorted([*PROJECT.glob("src/app/*.py"), *PROJECT.glob("tests/*.py")]):
        relative = path.relative_to(PROJECT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = MARKER.search(line)
            if match:
                expected.extend((relative, number, code) for code in match.group(1).split())
    return sorted(expected)


def line_of(path: Path, text: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def context_rows(output: str) -> dict[tuple[int, str], tuple[int, str, str]]:
    """``--hermetic-emit-context`` output -> (line, code) -> (col, where, what)."""
    rows = {}
    for line in output.splitlines():
        location, _, payload = line.partition(": ")
        _, number, col = location.rsplit(":", 2)
        text, where, what = payload.split(CONTEXT_SEPARATOR)
        rows[(int(number), text.split()[0])] = (int(col), where, what)
    return rows


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("patterns"))


@pytest.fixture(scope="module")
def report(project: Path) -> str:
    result = flake8(["--select=HRM8", "--hermetic-no-baseline", "src", "tests"], cwd=project)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    return result.stdout


# -- real flake8: what the rules flag ---------------------------------------------

def test_rules_flag_exactly_the_marked_lines(report: str) -> None:
    expected = marked_lines()
    assert {code for _, _, code in expected} == {"HRM801", "HRM802", "HRM803", "HRM804", "HRM805"}
    assert codes_by_line(report) == expected


def test_files_globs_reach_non_test_files_and_exclude(report: str) -> None:
    flagged = {path for path, _, code in codes_by_line(report) if code == "HRM803"}
    # src/app/proc.py is no test file; platform_compat.py is excluded with '!';
    # tests/test_proc.py makes the same call but the rule's files name only src/.
    assert flagged == {"src/app/proc.py"}


def test_message_names_what_the_metavariable_captured(report: str) -> None:
    assert (
        'HRM801 "app.config.load_config" patched with a bare MagicMock reads every setting as true; '
        "use create_autospec(...)"
    ) in report
    assert "HRM802 this file drives manager.spawn() without pinning host memory" in report


def test_column_counts_bytes_after_non_ascii_text(project: Path, report: str) -> None:
    path = project / "tests" / "test_config.py"
    number = line_of(path, "ünïcødé")
    call = next(
        node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and node.lineno == number
    )
    text = path.read_text(encoding="utf-8").splitlines()[number - 1]
    assert len(text[: text.index("patch(")]) < call.col_offset  # characters and bytes differ here
    assert f"tests/test_config.py:{number}:{call.col_offset + 1}: HRM801 " in report


def test_scope_what_and_column_agree_with_a_builtin_rule(project: Path) -> None:
    """HRM805 is ``os.chdir($PATH)``: the built-in HRM105 flags the same
    calls, so the two must report the same column, scope and baseline text."""
    result = flake8(
        ["--select=HRM105,HRM805", "--hermetic-no-baseline", "--hermetic-emit-context", "tests/test_scopes.py"],
        cwd=project,
    )
    assert result.returncode == 1, result.stderr
    rows = context_rows(result.stdout)
    builtin = {line: row for (line, code), row in rows.items() if code == "HRM105"}
    pattern = {line: row for (line, code), row in rows.items() if code == "HRM805"}
    assert pattern == builtin
    assert len(pattern) == 13
    assert {where for _, where, _ in pattern.values()} == {
        "", "test_top", "TestOuter", "TestOuter::test_method", "TestOuter::TestInner::test_deep",
        "TestOuter::chdir_home", "TestDecoratedFirst", "TestConditional::test_in_if", "test_one_liner",
    }
    multi_line = line_of(project / "tests" / "test_scopes.py", "os.chdir(  #")
    assert pattern[multi_line][2] == 'os.chdir( "multi" "line", )'


def test_select_and_ignore_decide_pattern_codes(project: Path) -> None:
    # flake8 would hide an ignored code's output anyway; what shows that the
    # pack itself left HRM802 out is that its baseline entries are not judged.
    (project / "select-baseline.txt").write_text(
        "tests/test_spawn.py::test_gone\tHRM802\t*\ntests/test_config.py::test_gone\tHRM801\t*\n", encoding="utf-8"
    )
    ignored = flake8(
        ["--extend-ignore=HRM802", "--hermetic-baseline=select-baseline.txt", "--disable-noqa", "src", "tests"],
        cwd=project,
    )
    codes = Counter(code for _, _, code in codes_by_line(ignored.stdout) if code.startswith(("HRM8", "HRM9")))
    assert codes == {"HRM801": 5, "HRM803": 2, "HRM804": 2, "HRM805": 13, "HRM900": 1}  # noqa'd HRM801 counts
    assert "tests/test_config.py:1:1: HRM900 " in ignored.stdout
    unselected = flake8(["--select=HRM105,HRM900", "--hermetic-baseline=select-baseline.txt", "src", "tests"],
                        cwd=project)
    assert {code for _, _, code in codes_by_line(unselected.stdout)} == {"HRM105"}


def test_baseline_accepts_pattern_violations_and_judges_only_rules_that_ran(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    entries = [
        f"tests/test_config.py::test_bare_loader\tHRM801\t{CONFIG_PATCH}",
        # the line was edited: the loose pass still accepts one violation of the test
        "tests/test_config.py::test_bare_loader_through_the_module\tHRM801\tpatch(old_text)",
        "tests/test_spawn.py::TestPool::test_spawn_many\tHRM802\t*",
        # stale: HRM804 ran on this file and the violation is gone
        "tests/test_git.py::test_the_fixes_stay_quiet\tHRM804\tsubprocess.run([\"git\"])",
        # not judged: HRM803's files do not select this file, so it never ran here
        "tests/test_proc.py::test_probe_in_a_test_file_is_not_this_rules_business\tHRM803\tos.kill(pid, 0)",
    ]
    (root / "hermetic-baseline.txt").write_text("\n".join(entries) + "\n", encoding="utf-8")
    result = flake8(["--select=HRM8,HRM9", "src", "tests"], cwd=root)
    assert result.returncode == 1, result.stderr
    found = codes_by_line(result.stdout)
    config = [line for path, line, code in found if path == "tests/test_config.py" and code == "HRM801"]
    assert config == [line_of(root / "tests" / "test_config.py", "mock.patch("),
                      line_of(root / "tests" / "test_config.py", "ünïcødé")]
    spawn = [line for path, line, _ in found if path == "tests/test_spawn.py"]
    assert spawn == [line_of(root / "tests" / "test_spawn.py", "manager.spawn(\"worker\"")]  # not TestPool's
    stale = [line for line in result.stdout.splitlines() if "HRM900" in line]
    assert len(stale) == 1
    assert stale[0].startswith("tests/test_git.py:1:1: HRM900 ")
    assert "test_the_fixes_stay_quiet HRM804 " in stale[0]


def test_pattern_rules_are_on_without_select_and_listed_by_the_rules_command(project: Path) -> None:
    result = flake8(["--hermetic-no-baseline", "src"], cwd=project)
    assert [code for _, _, code in codes_by_line(result.stdout)] == ["HRM803", "HRM803"]
    listing = hermetic(["rules", "--format", "markdown"], cwd=project)
    assert listing.returncode == 0, listing.stderr
    rows = [line for line in listing.stdout.splitlines() if line.startswith("| HRM8")]
    assert [row.split("|")[1].strip() for row in rows] == ["HRM801", "HRM802", "HRM803", "HRM804", "HRM805"]
    assert "| HRM803 | os.kill(pid, 0) is no liveness probe" in rows[2]


# -- real flake8: broken rules files ---------------------------------------------

BROKEN = [
    pytest.param("yaml_syntax.yml", 5, "rules file", "invalid YAML: expected ',' or ']'", id="yaml-syntax"),
    pytest.param("misspelt_top_key.yml", 1, "rules file", "unknown key 'rule' in the file (did you mean 'rules'?)",
                 id="misspelt-top-key"),
    pytest.param("misspelt_entry_key.yml", 3, "rule HRM801", "unknown key 'mesage' in a rule (did you mean 'message'?)",
                 id="misspelt-entry-key"),
    pytest.param("misspelt_rule_key.yml", 7, "rule HRM801", "unknown key 'kindd' in rule.inside (did you mean 'kind'?)",
                 id="misspelt-rule-key"),
    pytest.param("duplicate_key.yml", 6, "rule HRM801", "duplicate key 'pattern' (first at line 5)",
                 id="duplicate-key"),
    pytest.param("bad_kind.yml", 11, "rule HRM802", "Kind `function_def` is invalid", id="bad-kind"),
    pytest.param("bad_regex.yml", 6, "rule HRM801", "regex parse error: unclosed group", id="bad-regex"),
    pytest.param("invalid_pattern.yml", 5, "rule HRM801", "is not valid Python", id="invalid-pattern"),
    pytest.param("undefined_util.yml", 11, "rule HRM801", "matches: 'git-args' is not one of this rule's utils",
                 id="undefined-util"),
    pytest.param("cyclic_util.yml", 5, "rule HRM801", "has a cyclic dependency in its `matches` sub-rule",
                 id="cyclic-util"),  # ast-grep names either util: its utils are a hash map
    pytest.param("undefined_constraint.yml", 6, "rule HRM801", "Undefined meta var `TARGT` used in `constraints`",
                 id="undefined-constraint"),
    pytest.param("code_out_of_range.yml", 2, "rule HRM900", "code 'HRM900' is outside HRM800-HRM899",
                 id="code-out-of-range"),
    pytest.param("bad_code_form.yml", 2, "rule #1", "code must be written HRM8nn, got 801", id="code-not-a-string"),
    pytest.param("duplicate_code.yml", 7, "rule HRM801", "duplicate code HRM801 (first used at line 2)",
                 id="duplicate-code"),
    pytest.param("missing_message.yml", 2, "rule HRM801", "missing 'message'", id="missing-message"),
    pytest.param("bad_files.yml", 5, "rule HRM801", "'files' must be a list of globs", id="files-not-a-list"),
]


@pytest.mark.parametrize(("name", "line", "label", "reason"), BROKEN)
def test_broken_rules_file_is_one_line_and_exit_2(
    tmp_path: Path, name: str, line: int, label: str, reason: str
) -> None:
    rules = shutil.copyfile(PATTERNS / "broken" / name, tmp_path / name)
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")
    result = flake8(["--isolated", f"--hermetic-rules={rules}", "test_a.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"flake8-hermetic: {rules}:{line}: {label}: "), result.stderr
    assert reason in result.stderr


@pytest.mark.parametrize(
    ("module", "distribution"),
    [pytest.param("ast_grep_py", "ast-grep-py", id="no-ast-grep"), pytest.param("yaml", "PyYAML", id="no-yaml")],
)
def test_missing_extra_names_it(project: Path, module: str, distribution: str) -> None:
    code = WITHOUT_MODULE.format(module=module)
    result = run([sys.executable, "-c", code, "--hermetic-no-baseline", "tests/test_git.py"], cwd=project)
    assert result.returncode == 2
    assert result.stderr == (
        f"flake8-hermetic: {project / RULES_NAME}: pattern rules (HRM8xx) need the 'patterns' extra "
        f"({distribution} is not installed): {EXTRA_HINT}\n"
    )


def test_without_the_extra_and_without_rules_the_pack_still_runs(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text("import os\n\n\ndef test_a(p):\n    os.chdir(p)\n", encoding="utf-8")
    code = WITHOUT_MODULE.format(module="ast_grep_py")
    result = run([sys.executable, "-c", code, "--isolated", "--select=HRM105", "test_a.py"], cwd=tmp_path)
    assert result.stderr == ""
    assert codes_by_line(result.stdout) == [("test_a.py", 5, "HRM105")]


# -- in-process: one pass equals every rule alone ----------------------------------

def each_rule_alone(source: str, rules_path: Path) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    from ast_grep_py import SgRoot

    root = SgRoot(source, "python").root()
    found = []
    for rule in load_pattern_rules(str(rules_path)).rules:
        for node in root.find_all(rule.config()):  # type: ignore[call-overload]
            span = node.range()
            found.append((rule.code, (span.start.line, span.start.column), (span.end.line, span.end.column)))
    return sorted(found)


def one_pass(source: str, rules_path: Path) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    rule_set = load_pattern_rules(str(rules_path))
    return sorted((m.code, m.start, m.end) for m in rule_set.search(source, rule_set.rules))


def codes_on(found: list[tuple[str, tuple[int, int], tuple[int, int]]], line: int) -> set[str]:
    return {code for code, (row, _), _ in found if row + 1 == line}


def test_one_pass_finds_what_each_colliding_rule_finds_alone() -> None:
    source = (PATTERNS / "overlap_source.py").read_text(encoding="utf-8")
    found = one_pass(source, PATTERNS / "overlap.yml")
    assert found == each_rule_alone(source, PATTERNS / "overlap.yml")
    assert codes_on(found, 3) == {"HRM811", "HRM812", "HRM819"}  # f(x1, y1): two rules, same metavariables
    assert codes_on(found, 4) == {"HRM811", "HRM819"}  # f(x1, z1): HRM812's constraint fails, HRM811 stays
    assert codes_on(found, 6) == {"HRM811", "HRM813", "HRM819"}  # g(x1, x1): HRM811's $A must not leak
    assert codes_on(found, 9) == {"HRM815", "HRM816", "HRM819"}  # two utils named "inner"
    assert "HRM817" not in {code for code, _, _ in found}  # a literal "$" never matches, alone or combined
    last = len(source.splitlines())
    assert "HRM821" not in codes_on(found, last - 3)  # k(x3) at module level: the constraint reads the ancestors
    assert "HRM821" in codes_on(found, last)  # the same text inside a function


STDLIB_TESTS = sorted((Path(sysconfig.get_paths()["stdlib"]) / "test").glob("test_*.py"))[:40]


@pytest.mark.skipif(not STDLIB_TESTS, reason="this Python ships without its test suite")
@pytest.mark.parametrize("rules_name", [pytest.param("good.yml", id="good"), pytest.param("overlap.yml", id="overlap")])
@pytest.mark.parametrize("path", [pytest.param(path, id=path.stem) for path in STDLIB_TESTS])
def test_one_pass_equals_each_rule_alone_on_the_stdlib_tests(path: Path, rules_name: str) -> None:
    with tokenize.open(path) as handle:
        source = handle.read()
    assert one_pass(source, PATTERNS / rules_name) == each_rule_alone(source, PATTERNS / rules_name)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar())
def test_any_module_that_parses_lints_and_agrees_with_each_rule_alone(source: str) -> None:
    assume(parses(source))
    rules_path = PATTERNS / "overlap.yml"
    assert one_pass(source, rules_path) == each_rule_alone(source, rules_path)
    rule_set = load_pattern_rules(str(rules_path))
    lines = source.split("\n")
    found = rule_set.lint(ast.parse(source), source, rule_set.rules)
    widths = [len(lines[v.line - 1].encode("utf-8", "surrogatepass")) for v in found]
    assert all(0 <= v.col <= width for v, width in zip(found, widths))
    assert all(isinstance(what_text(source, v.node), str) for v in found)


def doc_examples() -> list[tuple[str, str, str]]:
    """(rules YAML, flagged code, fixed code) of each worked example in the doc."""
    sections = re.split(r"^### (?=\d)", DOC.read_text(encoding="utf-8"), flags=re.M)[1:]
    blocks = [re.findall(r"```(yaml|python)\n(.*?)```", section, flags=re.S) for section in sections]
    return [(b[0][1], b[1][1], b[2][1]) for b in blocks]


@pytest.mark.parametrize(
    ("index", "flagged_count"),
    [pytest.param(0, 2, id="config-loader"), pytest.param(1, 1, id="spawn-pin"), pytest.param(2, 1, id="liveness")],
)
def test_doc_examples_flag_the_hazard_and_pass_the_fix(tmp_path: Path, index: int, flagged_count: int) -> None:
    examples = doc_examples()
    assert len(examples) == 3
    rules_yaml, flagged, fixed = examples[index]
    rules = tmp_path / "rules.yml"
    rules.write_text(rules_yaml, encoding="utf-8")
    rule_set = load_pattern_rules(str(rules))
    assert len(rule_set.search(flagged, rule_set.rules)) == flagged_count
    assert rule_set.search(fixed, rule_set.rules) == []


def test_rules_file_is_read_once_per_version(tmp_path: Path) -> None:
    rules = shutil.copyfile(PATTERNS / "good.yml", tmp_path / "rules.yml")
    first = load_pattern_rules(str(rules))
    assert load_pattern_rules(str(rules)) is first
    edited = rules.read_text(encoding="utf-8").replace("code: HRM805", "code: HRM806  # renumbered")
    rules.write_text(edited, encoding="utf-8")
    assert load_pattern_rules(str(rules)).codes[-1] == "HRM806"
