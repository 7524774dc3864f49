"""The plugin inside real flake8 runs, on a project in the test's own directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from tests.helpers import codes_by_line, flake8, run, write_tree

LEAKY = """\
    import os
    import os as operating_system
    from os import chdir as cd


    def test_one(tmp_path):
        os.chdir(tmp_path)


    def test_two(tmp_path):
        operating_system.chdir(tmp_path)
        cd(tmp_path)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path,
        {
            "setup.cfg": "[flake8]\nselect = HRM105\n",
            "tests/test_leaky.py": LEAKY,
            "src/app/core.py": LEAKY,  # not a test file: never walked
            "tests/test_other.py": "import os\n\ndef test_x():\n    os.chdir('/')\n",
        },
    )


def test_aliases_are_resolved_and_non_test_files_skipped(project: Path) -> None:
    result = flake8(["."], cwd=project)
    assert result.returncode == 1, result.stderr
    assert codes_by_line(result.stdout) == [
        ("./tests/test_leaky.py", 7, "HRM105"),
        ("./tests/test_leaky.py", 11, "HRM105"),
        ("./tests/test_leaky.py", 12, "HRM105"),
        ("./tests/test_other.py", 4, "HRM105"),
    ]
    assert "os.chdir() leaks the working directory" in result.stdout


def test_stdin_display_name_reports_as_on_disk(project: Path) -> None:
    source = (project / "tests" / "test_leaky.py").read_text(encoding="utf-8")
    on_disk = flake8(["tests/test_leaky.py"], cwd=project)
    from_stdin = flake8(["--stdin-display-name", "tests/test_leaky.py", "-"], cwd=project, stdin=source)
    assert from_stdin.stdout == on_disk.stdout
    assert from_stdin.stdout.count("HRM105") == 3
    # the display name decides whether it is a test file
    as_source = flake8(["--stdin-display-name", "src/app/core.py", "-"], cwd=project, stdin=source)
    assert as_source.returncode == 0 and as_source.stdout == ""


def test_parallel_jobs_give_the_same_result(project: Path) -> None:
    write_tree(project, {f"tests/test_more_{index}.py": LEAKY for index in range(6)})
    serial = flake8(["--jobs", "1", "."], cwd=project)
    parallel = flake8(["--jobs", "2", "."], cwd=project)
    assert serial.stdout.count("HRM105") == 3 * 7 + 1
    assert parallel.stdout == serial.stdout


def test_syntax_error_gives_e999_and_no_crash(project: Path) -> None:
    write_tree(project, {"tests/test_broken.py": "def test_x(:\n    pass\n"})
    result = flake8(["--select=E999,HRM105", "tests/test_broken.py"], cwd=project)
    assert result.returncode == 1
    assert "E999" in result.stdout
    assert "Traceback" not in result.stderr and "HRM" not in result.stdout


def test_modern_syntax_lints(project: Path) -> None:
    write_tree(
        project,
        {
            "tests/test_modern.py": """\
                import os

                type Alias = list[int]

                def test_match(tmp_path, value=None):
                    match value:
                        case {"dir": str(d)} if d:
                            os.chdir(d)
                        case _:
                            pass
                    try:
                        pass
                    except* ValueError:
                        pass
                    print(f"{os.chdir(tmp_path)!r:>{10}}")

                class Box[T]:
                    def test_generic(self) -> T: ...
            """,
        },
    )
    # PEP 695 syntax needs 3.12; on older interpreters flake8 reports E999 instead of crashing
    result = flake8(["--select=E999,HRM105", "tests/test_modern.py"], cwd=project)
    assert "Traceback" not in result.stderr
    expected = (
        [("tests/test_modern.py", 8, "HRM105"), ("tests/test_modern.py", 15, "HRM105")]
        if sys.version_info >= (3, 12)
        else [("tests/test_modern.py", 3, "E999")]
    )
    assert codes_by_line(result.stdout) == expected


def test_custom_test_file_globs(project: Path) -> None:
    result = flake8(["--hermetic-test-files=src/app/*.py", "."], cwd=project)
    assert {path for path, _, _ in codes_by_line(result.stdout)} == {"./src/app/core.py"}


def test_noqa_and_per_file_ignores_apply(project: Path) -> None:
    write_tree(project, {"tests/test_noqa.py": "import os\n\ndef test_x():\n    os.chdir('/')  # noqa: HRM105\n"})
    result = flake8(["--per-file-ignores=tests/test_other.py:HRM105", "tests"], cwd=project)
    assert [path for path, _, _ in codes_by_line(result.stdout)] == ["tests/test_leaky.py"] * 3


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param("lots", "expected a whole number of bytes, got 'lots'", id="not-a-number"),
        pytest.param("0", "expected a positive whole number of bytes, got 0", id="zero"),
    ],
)
def test_bad_option_values_are_one_line(project: Path, value: str, problem: str) -> None:
    result = flake8([f"--hermetic-max-collection-bytes={value}", "tests"], cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"flake8-hermetic: command line: max-collection-bytes: {problem}"]


def test_empty_list_entries_are_dropped(project: Path) -> None:
    result = flake8(["--hermetic-readonly-commands=git status,,  ", "tests"], cwd=project)
    assert result.returncode == 1
    assert result.stderr == ""


def test_bad_value_in_config_names_file_and_line(project: Path) -> None:
    (project / "setup.cfg").write_text("[flake8]\nselect = HRM105\nhermetic-max-collection-bytes = lots\n")
    result = flake8(["tests"], cwd=project)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"flake8-hermetic: {project / 'setup.cfg'}:3: max-collection-bytes: "
        "expected a whole number of bytes, got 'lots'"
    )


def parsed_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> list[str]:
    """The rule codes the plugin keeps after flake8 parses ``args`` in-process."""
    from flake8.options.parse_args import parse_args

    from flake8_hermetic.checker import HermeticChecker

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(HermeticChecker, "runtime", None)
    _, options = parse_args(["--isolated", *args, "."])
    assert isinstance(options, argparse.Namespace)
    assert HermeticChecker.runtime is not None
    return [rule.code for rule in HermeticChecker.runtime.engine.rule_classes]


def test_rules_no_run_selects_are_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flake8_hermetic.catalog import all_rules

    rules = all_rules()
    default_on = sorted(code for code, rule in rules.items() if rule.default_on)
    assert parsed_runtime(tmp_path, monkeypatch, []) == default_on
    assert parsed_runtime(tmp_path, monkeypatch, ["--select=E,W"]) == []
    assert parsed_runtime(tmp_path, monkeypatch, ["--select=HRM105"]) == ["HRM105"]
    assert parsed_runtime(tmp_path, monkeypatch, ["--extend-ignore=HRM105"]) == [c for c in default_on if c != "HRM105"]
    assert parsed_runtime(tmp_path, monkeypatch, ["--extend-select=HRM502"]) == sorted([*default_on, "HRM502"])


def test_plugin_is_registered_under_hrm(tmp_path: Path) -> None:
    result = run([sys.executable, "-m", "flake8", "--version"], cwd=tmp_path)
    assert "flake8-hermetic" in result.stdout
