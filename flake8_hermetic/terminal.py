"""Output for a person at a terminal: when to colour, and the rule pages as text.

Colour follows flake8's ``--color`` (``auto``, ``always``, ``never``): on
``auto`` only a terminal gets it, and not when ``NO_COLOR`` is set to
anything but the empty string (https://no-color.org); the command line's
``always`` beats ``NO_COLOR``, as that convention asks.

:func:`render` turns the markdown of the rule pages (:mod:`flake8_hermetic.ruledocs`,
a project's pattern rules) into text for a terminal. It knows the subset
those pages are written in, no more: ``#``/``##`` headings, paragraphs,
fenced code blocks, ``-`` lists, pipe tables, inline code, ``*emphasis*``
and links. A general markdown library (rich, markdown-it) would be a
second runtime dependency for a dozen lines of output; the pages are
generated here, so the subset is known and tested (tests/test_terminal_output.py
renders every page).
"""

from __future__ import annotations

import os
import re
from typing import IO

COLOR_CHOICES = ("auto", "always", "never")

BOLD = "\033[1m"
UNDERLINE = "\033[4m"
ITALIC = "\033[3m"
CYAN = "\033[36m"
RESET = "\033[m"

_FENCE = re.compile(r"^\s*```")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_EMPHASIS = re.compile(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1")


def use_color(choice: str | None, stream: IO[str] | None) -> bool:
    """Colour for ``stream`` (None: a file) under ``--color=choice``."""
    if choice == "always":
        return True
    if choice == "never" or stream is None or os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


def _inline(text: str, styled: bool) -> str:
    """Links become their text, emphasis loses its stars; inline code keeps
    its backticks in plain text and is coloured instead on a terminal.
    Code spans are set aside first, so a ``*`` in one is no emphasis."""
    spans: list[str] = []

    def set_aside(match: re.Match[str]) -> str:
        spans.append(match.group(2))
        return f"\0{len(spans) - 1}\0"

    def put_back(match: re.Match[str]) -> str:
        code = spans[int(match.group(1))]
        return f"{CYAN}{code}{RESET}" if styled else f"`{code}`"

    text = _LINK.sub(r"\1", _CODE_SPAN.sub(set_aside, text))
    if styled:
        text = _EMPHASIS.sub(lambda m: f"{BOLD if len(m.group(1)) == 2 else ITALIC}{m.group(2)}{RESET}", text)
    else:
        text = _EMPHASIS.sub(r"\2", text)
    return re.sub("\0(\\d+)\0", put_back, text)


def _visible_width(text: str) -> int:
    return len(re.sub(r"\033\[[0-9;]*m", "", text))


def _cells(row: str) -> list[str]:
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)]


def _table(rows: list[str], styled: bool) -> list[str]:
    """A pipe table as aligned columns, its header underlined with dashes."""
    header, *body = [[_inline(cell, styled) for cell in _cells(row)] for row in rows if not _TABLE_RULE.match(row)]
    columns = max(len(row) for row in [header, *body])
    table = [row + [""] * (columns - len(row)) for row in [header, *body]]
    widths = [max(_visible_width(row[i]) for row in table) for i in range(columns)]

    def line(row: list[str]) -> str:
        padded = [cell + " " * (width - _visible_width(cell)) for cell, width in zip(row, widths)]
        return "  ".join(padded).rstrip()

    head = line([f"{BOLD}{cell}{RESET}" if styled else cell for cell in table[0]])
    return [head, "  ".join("-" * width for width in widths), *(line(row) for row in table[1:])]


def _heading(level: int, text: str, styled: bool) -> list[str]:
    text = _inline(text, False)
    if styled:
        return [f"{BOLD}{UNDERLINE}{text}{RESET}" if level == 1 else f"{BOLD}{text}{RESET}"]
    return [text, ("=" if level == 1 else "-") * len(text)]


def render(markdown: str, styled: bool = False) -> str:
    """The page as text; with ``styled``, ANSI bold, underline and colour."""
    out: list[str] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if _FENCE.match(line):
            index += 1
            while index < len(lines) and not _FENCE.match(lines[index]):
                code = lines[index]
                out.append(f"    {CYAN}{code}{RESET}" if styled and code else f"    {code}".rstrip())
                index += 1
            index += 1  # the closing fence
            continue
        heading = _HEADING.match(line)
        if heading:
            if out and out[-1]:
                out.append("")
            out.extend(_heading(len(heading.group(1)), heading.group(2), styled))
        elif line.lstrip().startswith("|"):
            rows = []
            while index < len(lines) and lines[index].lstrip().startswith("|"):
                rows.append(lines[index])
                index += 1
            out.extend(_table(rows, styled))
            continue
        else:
            out.append(_inline(line, styled))
        index += 1
    return "\n".join(out).rstrip("\n") + "\n"
