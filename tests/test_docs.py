"""The rule pages and the README table are generated from the rule classes and kept in sync."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from flake8_hermetic import ruledocs
from flake8_hermetic.catalog import all_rules, runtime_codes
from flake8_hermetic.principles import PRINCIPLES, Principle
from flake8_hermetic.rule import Rule
from tests.helpers import REPO, run

SECTIONS = ("## Why is this bad?", "## Example", "## Use instead", "## Options")
RETIRED_SECTIONS = ("## What it flagged", "## Why was it retired?", "## What happens to it", "## Options")
CODES = sorted(all_rules())


@pytest.mark.parametrize("code", [pytest.param(code, id=code) for code in CODES])
def test_every_rule_has_a_complete_page(code: str) -> None:
    page = REPO / "docs" / "rules" / f"{code}.md"
    assert page.is_file(), f"{code} has no page: run python -m flake8_hermetic.ruledocs"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# {code}: ")
    sections = RETIRED_SECTIONS if all_rules()[code].retired else SECTIONS
    positions = [text.find(section) for section in sections]
    assert all(p > 0 for p in positions), f"{code} page lacks one of {sections}"
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
    rule = all_rules()[code]
    assert row.endswith("| retired |" if rule.retired else "| on |" if rule.default_on else "| off |")


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    test_command = next(block for block in blocks if "pytest" in block)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command.strip() in ci


@pytest.mark.parametrize("code", [pytest.param(code, id=code) for code in CODES])
def test_every_rule_page_says_what_the_rule_cannot_see(code: str) -> None:
    text = (REPO / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    section = text.partition("\n## Known problems\n")[2].split("\n## ")[0].strip()
    assert section, f"{code}: add a short '## Known problems' section to its docstring"


APPLIED = [
    pytest.param(code, key, id=f"{code}-{key}") for code, rule in all_rules().items() for key in rule.principles
]


@pytest.mark.parametrize(("code", "key"), APPLIED)
def test_a_rule_page_lists_what_its_principles_leave_alone(code: str, key: str) -> None:
    principle = PRINCIPLES.get(key)
    assert principle is not None, f"{code} names {key!r}: define it in flake8_hermetic/principles.py"
    text = (REPO / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    section = text.partition("\n## What it leaves alone\n")[2].split("\n## ")[0]
    assert f"**[{principle.title}](../principles.md#{key})**: {principle.summary}" in section
    principles = (REPO / "docs" / "principles.md").read_text(encoding="utf-8")
    entry = principles.partition(f'<a id="{key}"></a>')[2].partition("<a id=")[0]
    assert f"[{code}](rules/{code}.md)" in entry, f"docs/principles.md: {key} does not name {code}"


def test_a_rule_without_principles_has_no_generated_list() -> None:
    plain = [code for code, rule in all_rules().items() if not rule.principles]
    assert plain
    assert "## What it leaves alone" not in ruledocs.page(all_rules()[plain[0]])


FAKE = {
    "a-key": Principle("a-key", "Alpha", "Alpha's summary."),
    "b-key": Principle("b-key", "Beta", "Beta's summary."),
    "unused": Principle("unused", "Gamma", "Nobody applies it."),
}


def fake_rule(principles: tuple[str, ...], doc: str) -> type[Rule]:
    """Something shaped like a rule class for the page helpers (not a Rule: it registers nothing)."""
    fake = type("Fake", (), {"principles": principles, "doc": classmethod(lambda cls: inspect.cleandoc(doc))})
    return cast(Any, fake)


def test_the_leaves_alone_list_is_each_principle_in_the_rules_order() -> None:
    text = ruledocs.leaves_alone(("b-key", "missing", "a-key"), FAKE)
    assert text.startswith("## What it leaves alone\n")
    items = [line for line in text.splitlines() if line.startswith("- ")]
    assert items == [
        "- **[Beta](../principles.md#b-key)**: Beta's summary.",
        "- **[Alpha](../principles.md#a-key)**: Alpha's summary.",
    ]
    assert ruledocs.leaves_alone((), FAKE) == ""


def test_the_principles_page_names_the_rules_applying_each() -> None:
    rules = {"HRM901": fake_rule(("a-key",), "x"), "HRM902": fake_rule(("a-key", "b-key"), "x")}
    text = ruledocs.principles_page(rules, FAKE)
    alpha = text.partition('<a id="a-key"></a>')[2].partition("<a id=")[0]
    beta = text.partition('<a id="b-key"></a>')[2].partition("<a id=")[0]
    gamma = text.partition('<a id="unused"></a>')[2]
    assert "## Alpha\nAlpha's summary." in alpha
    assert "Applied by: [HRM901](rules/HRM901.md), [HRM902](rules/HRM902.md)." in alpha
    assert "Applied by: [HRM902](rules/HRM902.md)." in beta
    assert "Applied by: no rule." in gamma


KNOWN = "Flags x.\n\n## Options\nNone.\n\n## Known problems\nA helper is not followed.\n"


def test_problems_name_unknown_and_unused_principles_and_a_missing_known_problems() -> None:
    rules = {
        "HRM901": fake_rule(("a-key", "typo-key"), KNOWN),
        "HRM902": fake_rule(("b-key",), "Flags y.\n\n## Options\nNone.\n"),
        "HRM903": fake_rule((), "Flags z.\n\n## Known problems\n\n## Options\nNone.\n"),  # empty
    }
    assert ruledocs.problems(rules, FAKE) == [
        "HRM901: names the principle 'typo-key', which flake8_hermetic/principles.py does not define",
        "HRM902: its docstring has no '## Known problems' section saying what the rule cannot see",
        "HRM903: its docstring has no '## Known problems' section saying what the rule cannot see",
        "principle 'unused' is applied by no rule",
    ]
    used = {key: FAKE[key] for key in ("a-key", "b-key")}
    assert ruledocs.problems({"HRM901": fake_rule(("a-key", "b-key"), KNOWN)}, used) == []


def test_check_fails_on_a_principle_no_rule_applies(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(ruledocs, "PRINCIPLES", {**PRINCIPLES, "unused": FAKE["unused"]})
    assert ruledocs.main(["--check", "--root", str(REPO)]) == 1
    assert "principle 'unused' is applied by no rule" in capsys.readouterr().err.splitlines()


def test_check_without_a_repository_says_so_in_one_line(tmp_path: Path) -> None:
    result = run([sys.executable, "-m", "flake8_hermetic.ruledocs", "--check", "--root", str(tmp_path)], cwd=tmp_path)
    assert result.returncode == 2
    expected = f"{tmp_path / 'README.md'}: not found; give the repository root with --root"
    assert result.stderr.strip().splitlines() == [expected]
    assert not (tmp_path / "docs").exists()
