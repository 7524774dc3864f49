"""``rules`` and ``explain`` render their markdown for a terminal; ``--format
markdown`` gives the page itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from flake8_hermetic import ruledocs, terminal
from tests.helpers import hermetic, needs_pty, on_a_terminal

BOLD_UNDERLINE = "\x1b[1m\x1b[4m"


def test_explain_renders_headings_code_blocks_and_inline_code(tmp_path: Path) -> None:
    result = hermetic(["explain", "HRM105"], cwd=tmp_path)
    assert result.returncode == 0
    page = ruledocs.pages()["HRM105"]
    lines = result.stdout.splitlines()
    title = page.splitlines()[0].removeprefix("# ").replace("*(", "(").replace(")*", ")")  # emphasis dropped
    assert lines[:2] == [title, "=" * len(title)]
    assert "What it does\n------------\n" in result.stdout
    # the page's first code block, indented and without its fences
    fenced = page.split("```python\n", 1)[1].split("```", 1)[0]
    assert "\n".join("    " + line if line else "" for line in fenced.splitlines()) in result.stdout
    assert "```" not in result.stdout and not [line for line in lines if line.startswith("#")]
    assert "`os.chdir()`" in page and "`os.chdir()`" in result.stdout  # inline code keeps its backticks in text
    assert "\x1b" not in result.stdout


def test_explain_format_markdown_is_the_page_itself(tmp_path: Path) -> None:
    result = hermetic(["explain", "HRM105", "--format", "markdown"], cwd=tmp_path)
    assert result.stdout == ruledocs.pages()["HRM105"]


def test_rules_renders_an_aligned_table(tmp_path: Path) -> None:
    result = hermetic(["rules"], cwd=tmp_path)
    assert result.returncode == 0
    header, rule, *rows = result.stdout.splitlines()
    assert header.split() == ["code", "what", "it", "flags", "default"]
    assert set(rule) == {"-", " "}
    default_column = header.index("default")
    assert {row[default_column:] for row in rows} == {"on", "off", "guard", "retired"}
    assert [row.split()[0] for row in rows][-1] == "HRM900"
    assert "|" not in "".join(row[:6] for row in rows) and "](" not in result.stdout


@needs_pty
def test_on_a_terminal_headings_are_bold_and_no_color_turns_that_off(tmp_path: Path) -> None:
    styled = on_a_terminal(["explain", "HRM105"], tmp_path)
    assert styled.startswith(f"{BOLD_UNDERLINE}HRM105: ")
    assert f"{terminal.CYAN}os.chdir(){terminal.RESET}" in styled  # inline code coloured, not backticked
    plain = on_a_terminal(["explain", "HRM105"], tmp_path, NO_COLOR="1")
    assert plain == hermetic(["explain", "HRM105"], cwd=tmp_path).stdout


@pytest.mark.parametrize("code", sorted(ruledocs.pages()))
def test_every_page_renders_without_markdown_left_over(code: str) -> None:
    page = ruledocs.pages()[code]
    text = terminal.render(page)
    assert "```" not in text and "](" not in text
    assert not [line for line in text.splitlines() if line.startswith("#")]
    # nothing is lost: every word of the page's prose is still there
    words = {word.strip("*`[]()|:.,;") for word in page.split() if word.isalpha()}
    assert words <= {word.strip("*`[]()|:.,;") for word in text.split()}


@pytest.mark.parametrize(("markdown", "expected"), [
    pytest.param("*(off by default: `--extend-select=HRM101`)*", "(off by default: `--extend-select=HRM101`)",
                 id="emphasis-around-code"),
    pytest.param("matches `tests/*.py` and `*/x`", "matches `tests/*.py` and `*/x`", id="stars-in-code"),
    pytest.param("see [HRM105](HRM105.md)", "see HRM105", id="link"),
    pytest.param("| a | b \\| c |\n|---|---|\n| long cell | x |",
                 "a          b | c\n---------  -----\nlong cell  x", id="table"),
])
def test_inline_markup(markdown: str, expected: str) -> None:
    assert terminal.render(markdown) == expected + "\n"
