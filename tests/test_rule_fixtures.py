"""Every rule against its annotated fixture file, through real flake8.

A fixture ``tests/fixtures/rules/test_hrmNNN*.py`` marks each line the rule
must flag with a trailing ``# HRMnnn`` comment; every other line (the
idiomatic fixes around them) must stay quiet for that code. The whole
fixture tree is linted in one flake8 run with every rule selected.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from flake8_hermetic.catalog import all_rules
from tests.helpers import FIXTURES, codes_by_line, flake8

RULE_FIXTURES = FIXTURES / "rules"
EXPECTED = re.compile(r"#\s*((?:HRM\d{3}\s*)+)$")
CODES = sorted(all_rules())


def fixture_files(code: str) -> list[Path]:
    return sorted(RULE_FIXTURES.rglob(f"test_{code.lower()}*.py"))


def expected_lines(path: Path, code: str) -> list[int]:
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = EXPECTED.search(line)
        if match and code in match.group(1).split():
            lines.extend([number] * match.group(1).split().count(code))
    return lines


@pytest.fixture(scope="module")
def fixture_report(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, int, str]]:
    root = tmp_path_factory.mktemp("fixtures")
    shutil.copytree(RULE_FIXTURES, root / "rules")
    result = flake8(
        ["--isolated", f"--select={','.join(CODES)}", "--hermetic-no-baseline", "rules"],
        cwd=root,
    )
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return codes_by_line(result.stdout)


def mismatches(code: str, report: list[tuple[str, int, str]]) -> list[str]:
    """What differs between the lines ``code`` flagged and the lines its fixtures mark."""
    problems = []
    for path in fixture_files(code):
        relative = path.relative_to(RULE_FIXTURES.parent).as_posix()
        expected = expected_lines(path, code)
        found = [line for name, line, found_code in report if name == relative and found_code == code]
        if not expected:
            problems.append(f"{relative} marks no line with # {code}")
        elif found != expected:
            problems.append(f"{relative}: {code} flagged lines {found}, expected {expected}")
    return problems


@pytest.mark.parametrize("code", [pytest.param(code, id=code) for code in CODES])
def test_rule_matches_its_fixture(code: str, fixture_report: list[tuple[str, int, str]]) -> None:
    assert fixture_files(code), f"{code} has no fixture file tests/fixtures/rules/test_{code.lower()}.py"
    assert mismatches(code, fixture_report) == []
