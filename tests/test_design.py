"""The HRM5xx family where an annotated fixture cannot show it: which rules
run by default, where a finding belongs (the baseline's key), the test-tree
and "does not raise" decisions as units, and arbitrary source."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, given, settings

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.engine import Engine
from flake8_hermetic.rules.design.claims import declares_no_raise, runs_a_test, states_no_raise
from flake8_hermetic.settings import Settings
from tests.helpers import codes_by_line, flake8, hermetic, parses, write_tree

FAMILIES = tuple(code for code in all_rules() if code.startswith(("HRM4", "HRM5")))
OFF_BY_DEFAULT = ("HRM401", "HRM404", "HRM405", "HRM501", "HRM502", "HRM503", "HRM505")
RETIRED = ("HRM504",)


def findings(source: str, codes: tuple[str, ...] = FAMILIES, path: str = "test_x.py") -> list[tuple[str, int, str]]:
    rules = [rule for code, rule in all_rules().items() if code in codes]
    source = textwrap.dedent(source)
    found = Engine(rules).lint(ast.parse(source), source.splitlines(True), path, Settings())
    return sorted((v.code, v.line, v.where) for v in found)


# -- default on / off, through real flake8 -------------------------------------------

EVERY_HAZARD = """\
    import ast
    from pathlib import Path
    from unittest import mock

    import pytest
    from mypkg.parser import _tokenize


    @pytest.mark.parametrize("raw", {"1", "0x1"})
    def test_parse(raw):
        with mock.patch("mypkg.parser.load", mock.MagicMock()):
            for path in Path(__file__).parent.rglob("*.py"):
                assert ast.parse(path.read_text()) and _tokenize(raw)


    def test_runs_only():
        tokens = _tokenize("x")


    def test_table():
        for raw in ("1", "2"):
            assert _tokenize(raw)
    """


def test_off_by_default_rules_run_only_when_selected(tmp_path: Path) -> None:
    write_tree(tmp_path, {"test_everything.py": EVERY_HAZARD})
    plain = flake8(["--isolated", "--hermetic-no-baseline", "test_everything.py"], cwd=tmp_path)
    selected = flake8(
        ["--isolated", "--hermetic-no-baseline", f"--extend-select={','.join(OFF_BY_DEFAULT)}", "test_everything.py"],
        cwd=tmp_path,
    )
    assert plain.stderr == ""
    assert hermetic_codes(plain.stdout) == []  # every rule the file breaks is off by default
    assert hermetic_codes(selected.stdout) == [
        (9, "HRM503"),
        (11, "HRM505"),
        (13, "HRM405"),
        (16, "HRM501"),
        (21, "HRM502"),
    ]


def hermetic_codes(output: str) -> list[tuple[int, str]]:
    """The pack's findings; other installed plugins report on the same file."""
    return [(line, code) for _, line, code in codes_by_line(output) if code.startswith("HRM")]


DEFAULTS = [pytest.param(code, code not in (*OFF_BY_DEFAULT, *RETIRED), id=code) for code in FAMILIES]


@pytest.mark.parametrize(("code", "on"), DEFAULTS)
def test_default_state_matches_the_contract(code: str, on: bool) -> None:
    assert all_rules()[code].default_on is on
    assert bool(all_rules()[code].retired) is (code in RETIRED)


# -- a retired rule ---------------------------------------------------------------------

PRIVATE_IMPORTS = """\
from mypkg.parser import _tokenize


def test_tokenize():
    assert _tokenize("a b") == ["a", "b"]
"""


@pytest.mark.parametrize("selector", ["HRM5", "HRM"])
def test_a_prefix_covering_a_retired_rule_selects_the_others(tmp_path: Path, selector: str) -> None:
    write_tree(tmp_path, {"test_private.py": PRIVATE_IMPORTS})
    broad = flake8(["--isolated", "--hermetic-no-baseline", f"--select={selector}", "test_private.py"], cwd=tmp_path)
    assert (broad.returncode, broad.stderr, hermetic_codes(broad.stdout)) == (0, "", [])


def test_a_retired_rule_checks_nothing_and_a_selection_that_names_it_is_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, {"test_private.py": PRIVATE_IMPORTS})
    ignored = flake8(["--isolated", "--hermetic-no-baseline", "--extend-ignore=HRM504", "test_private.py"],
                     cwd=tmp_path)
    assert (ignored.returncode, ignored.stderr) == (0, "")
    named = flake8(["--isolated", "--hermetic-no-baseline", "--extend-select=HRM504", "test_private.py"], cwd=tmp_path)
    lines = named.stderr.strip().splitlines()
    assert named.returncode != 0 and len(lines) == 1, named.stderr
    assert "command line: extend-select: HRM504 is retired and checks nothing (" in lines[0]
    assert "take it out of the selection" in lines[0] and "Traceback" not in named.stderr


def test_a_retired_code_in_a_config_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    write_tree(tmp_path, {"test_private.py": PRIVATE_IMPORTS, "setup.cfg": "[flake8]\nextend-select =\n    HRM504\n"})
    result = flake8(["--hermetic-no-baseline", "test_private.py"], cwd=tmp_path)
    assert result.returncode != 0 and "setup.cfg:2: extend-select: HRM504 is retired" in result.stderr, result.stderr
    (tmp_path / "setup.cfg").unlink()
    write_tree(tmp_path, {"pyproject.toml": '[tool.flake8-hermetic]\nselect = ["HRM1", "HRM504"]\n'})
    table = hermetic(["check", "--no-baseline", "test_private.py"], cwd=tmp_path)
    assert table.returncode != 0 and "pyproject.toml:2: select: HRM504 is retired" in table.stderr, table.stderr
    write_tree(tmp_path, {"pyproject.toml": '[tool.flake8-hermetic]\nignore = ["HRM504"]\n'})
    assert hermetic(["check", "--no-baseline", "test_private.py"], cwd=tmp_path).returncode == 0


# -- where a finding belongs ----------------------------------------------------------

def test_findings_belong_to_the_test_they_describe() -> None:
    source = """\
        import pytest
        from unittest import mock


        class TestParse:
            @pytest.mark.parametrize("raw", {"1", "0x1"})
            @mock.patch("app.load", mock.Mock())
            def test_rows(self, raw):
                try:
                    print(raw)
                except ValueError:
                    assert raw

            class TestInner:
                def test_inner(self):
                    shown = repr(1)


        def test_module_level():
            repr(2)
        """
    assert findings(source) == [
        ("HRM501", 15, "TestParse::TestInner::test_inner"),
        ("HRM501", 19, "test_module_level"),
        ("HRM502", 9, "TestParse::test_rows"),
        ("HRM503", 6, "TestParse::test_rows"),
        ("HRM505", 7, "TestParse::test_rows"),
    ]


# -- HRM501 decisions -------------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "declared"),
    [
        pytest.param("test_no_crash_on_empty_input", True, id="no-crash"),
        pytest.param("test_load_does_not_raise", True, id="does-not-raise"),
        pytest.param("testSpawnDoesntHang", True, id="camel-case"),
        pytest.param("test_bpo31113_segfault", True, id="segfault"),
        pytest.param("test_smoke", True, id="smoke"),
        pytest.param("test_no_errors_logged", True, id="no-errors"),
        pytest.param("test_change_mode", False, id="hang-inside-a-word"),
        pytest.param("test_smokey_flavour", False, id="smoke-inside-a-word"),
        pytest.param("test_errors", False, id="errors-alone"),
        pytest.param("test_crashers", False, id="crash-inside-a-word"),
        pytest.param("test_overload_succeeds", True, id="succeeds"),
        pytest.param("test_distribution_picklable", True, id="picklable"),
        pytest.param("test_exit_with_reason_works_ok", True, id="works-ok"),
        pytest.param("test_successor_of_last", False, id="success-inside-a-word"),
        pytest.param("test_book_title", False, id="ok-inside-a-word"),
        pytest.param("test_bpo_45773", True, id="bpo-issue"),
        pytest.param("test_gh12345", True, id="gh-issue"),
        pytest.param("test_issue_number", False, id="issue-without-a-number"),
        pytest.param("test_regression", True, id="regression"),
        pytest.param("test_regressions_table", False, id="regression-inside-a-word"),
    ],
)
def test_a_name_can_declare_the_no_raise_claim(name: str, declared: bool) -> None:
    assert declares_no_raise(name) is declared


@pytest.mark.parametrize(
    ("name", "runs"),
    [
        pytest.param("_test_simple_enum", True, id="private-test-helper"),
        pytest.param("runTest", True, id="camel-case"),
        pytest.param("run_unittest", True, id="unittest"),
        pytest.param("testmod", True, id="doctest-testmod"),
        pytest.param("get_latest", False, id="test-inside-a-word"),
        pytest.param("contest_entries", False, id="test-ending-a-word"),
        pytest.param("SkipTest", False, id="a-class-not-a-runner"),
    ],
)
def test_a_name_can_say_it_runs_a_test(name: str, runs: bool) -> None:
    assert runs_a_test(name) is runs


@pytest.mark.parametrize(
    ("text", "states"),
    [
        pytest.param("Used to raise SystemError('error return without exception set')", True, id="used-to-raise"),
        pytest.param("A crash ensued.", True, id="crash"),
        pytest.param("shouldn't cause an assertion failure", True, id="apostrophe-not"),
        pytest.param("doesnt raise on an empty file", True, id="unquoted-not"),
        pytest.param("This raised on 3.10.0 to 3.10.5", True, id="this-raised"),
        pytest.param("import in a 'finally' block resulted in SystemError", True, id="resulted-in"),
        pytest.param("A commit should also work when no changes were made.", True, id="should-work"),
        pytest.param("Pre-compiled patterns are accepted.", True, id="accepted"),
        pytest.param("This case was failing because of a double trailing comma", True, id="was-failing"),
        pytest.param("super.__init__ leaked memory if called multiple times", True, id="refleak"),
        pytest.param("Exporting 1 returns 1.", False, id="a-value-claim"),
        pytest.param("should return the parsed rows", False, id="should-return"),
        pytest.param("Issue #24581", True, id="issue-number"),
        pytest.param("make sure it does not cause exceptions", True, id="not-cause-exceptions"),
        pytest.param("bpo-45773: compile() of this", True, id="bpo-number"),
        pytest.param("see #12 for the format", False, id="short-number-is-not-an-issue"),
        pytest.param("issue the request twice", False, id="issue-as-a-verb"),
        pytest.param("the fixture is used to build the tree", False, id="used-to-without-a-failure"),
        pytest.param("check the error message", False, id="error-without-a-claim"),
    ],
)
def test_a_docstring_or_comment_can_state_the_no_raise_claim(text: str, states: bool) -> None:
    assert states_no_raise(text) is states


def test_module_level_functions_count_only_in_a_collected_module() -> None:
    source = """\
        import unittest


        def test_helper_of_a_script():
            lock = make_lock()


        class LockTests(unittest.TestCase):
            def test_constructor(self):
                lock = make_lock()
        """
    assert findings(source, ("HRM501",), path="lock_tests.py") == [("HRM501", 9, "LockTests::test_constructor")]
    assert [line for _, line, _ in findings(source, ("HRM501",), path="test_lock.py")] == [4, 9]


def test_a_helper_is_followed_through_other_helpers_and_classes() -> None:
    source = """\
        import unittest


        class Recorder:
            def __exit__(self, *exc):
                self.case.assertEqual(self.seen, self.expected)


        def outer(value):
            middle(value)


        def middle(value):
            inner(value)


        def inner(value):
            assert value


        def unrelated(value):
            return value


        def test_through_three_helpers():
            got = outer(1)


        def test_through_a_class():
            with Recorder() as recorder:
                pass


        def test_through_a_helper_that_asserts_nothing():
            got = unrelated(1)


        class Case(unittest.TestCase):
            def test_an_imported_test_helper(self):
                self._test_round_trip(1)
        """
    assert findings(source, ("HRM501",)) == [("HRM501", 34, "test_through_a_helper_that_asserts_nothing")]


def test_a_test_defined_inside_a_function_is_not_collected() -> None:
    source = """\
        def test_outer():
            class TestLocal:
                def test_local(self):
                    return 1

            assert TestLocal().test_local() == 1
        """
    assert findings(source, ("HRM501",)) == []


def test_conftest_holds_no_tests() -> None:
    assert findings("def test_helper():\n    print(1)\n", ("HRM501",), path="conftest.py") == []


# -- newer syntax and arbitrary source ------------------------------------------------

NEW_SYNTAX = [
    pytest.param(
        (3, 11),
        """
        def test_groups():
            try:
                run()
            except* ValueError as group:
                assert group.exceptions
        """,
        ["HRM502"],
        id="except-star",
    ),
    pytest.param(
        (3, 12),
        """
        import random

        import pytest

        type Rows[T] = list[T]

        @pytest.mark.parametrize("v", [b"x" * 10**8, f"{random.random()!r:>{10}}"])
        def test_generic[T](v: T) -> None:
            assert f"{f"{v!r:>{10}}"}"
        """,
        ["HRM401", "HRM503"],
        id="type-params-and-nested-f-strings",
    ),
]


def codes_or_syntax_error(source: str) -> list[str] | str:
    """The codes found, or "SyntaxError" where this Python cannot parse the source."""
    try:
        return [code for code, _, _ in findings(source)]
    except SyntaxError:
        return "SyntaxError"


@pytest.mark.parametrize(("version", "source", "codes"), NEW_SYNTAX)
def test_newer_syntax_lints_without_error(version: tuple[int, int], source: str, codes: list[str]) -> None:
    # Older interpreters cannot parse it (flake8 reports E999 there); newer ones must lint it.
    expected = codes if sys.version_info >= version else "SyntaxError"
    assert codes_or_syntax_error(source) == expected


# generated code such as ``"a"()`` parses with a SyntaxWarning: the source's, not the pack's
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar())
def test_any_module_that_parses_lints_without_error(source: str) -> None:
    assume(parses(source))
    assert isinstance(findings(source), list)


def test_a_module_marked_as_a_benchmark_measures_and_asserts_nothing_on_purpose() -> None:
    body = """\
        import pytest
        {mark}

        def test_hash():
            hash(1)
        """
    assert findings(body.format(mark="pytestmark = [pytest.mark.slow, pytest.mark.benchmark]"), ("HRM501",)) == []
    assert findings(body.format(mark="pytestmark = [pytest.mark.slow]"), ("HRM501",)) == [("HRM501", 4, "test_hash")]
