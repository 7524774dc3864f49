"""The rule pages and the README table are generated from the rule classes and kept in sync."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flake8_hermetic import ruledocs
from flake8_hermetic.catalog import all_rules, runtime_codes
from tests.helpers import REPO

SECTIONS = ("## Why is this bad?", "## Example", "## Use instead", "## Options")
CODES = sorted(all_rules())


@pytest.mark.parametrize("code", [pytest.param(code, id=code) for code in CODES])
def test_every_rule_has_a_complete_page(code: str) -> None:
    page = REPO / "docs" / "rules" / f"{code}.md"
    assert page.is_file(), f"{code} has no page: run python -m flake8_hermetic.ruledocs"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# {code}: ")
    positions = [text.find(section) for section in SECTIONS]
    assert all(p > 0 for p in positions), f"{code} page lacks one of {SECTIONS}"
    assert positions == sorted(positions), f"{code} page sections out of order"
    assert "```python" in text, f"{code} page shows no code"


@pytest.mark.parametrize(
    "page", [pytest.param(page, id=page.stem) for page in sorted((REPO / "docs" / "rules").glob("*.md"))]
)
def test_every_page_names_a_code(page: Path) -> None:
    assert page.stem in {*CODES, *runtime_codes(), "HRM900"}, f"{page.name} documents no rule"
    assert page.read_text(encoding="utf-8").startswith(f"# {page.stem}: ")


@pytest.mark.parametrize("code", [pytest.param(code, id=code) for code in runtime_codes()])
def test_every_runtime_code_has_a_page_naming_what_prevents_it(code: str) -> None:
    text = (REPO / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    sections = [*SECTIONS[:3], "## Prevented statically by", "## Options", "## Message"]
    positions = [text.find(section) for section in sections]
    assert all(p > 0 for p in positions) and positions == sorted(positions), f"{code} page lacks a section"
    prevented = text.split("## Prevented statically by\n")[1].split("\n")[0]
    assert re.search(r"\[HRM[1-5]\d\d\]\(HRM[1-5]\d\d\.md\)", prevented) or "No static rule" in prevented


def test_pages_and_readme_table_are_up_to_date() -> None:
    assert ruledocs.sync(REPO, check=True) == [], "run: python -m flake8_hermetic.ruledocs"


@pytest.mark.parametrize("code", [pytest.param(code, id=code) for code in CODES])
def test_readme_table_lists_every_code_with_its_default(code: str) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith(f"| [{code}]"))
    assert row.endswith("| on |" if all_rules()[code].default_on else "| off |")


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    test_command = next(block for block in blocks if "pytest" in block)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command.strip() in ci
