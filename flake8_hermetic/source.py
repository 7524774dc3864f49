"""Source text of a node: the segment it spans, and the one-line ``what``
text a baseline entry stores."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import lru_cache

_LINE_END = re.compile(r"\r\n|\r|\n")


@lru_cache(maxsize=8)
def _source_lines(source: str) -> list[str]:
    """The lines of ``source`` with their ends, split where ``ast`` splits
    them (not at form feeds). Cached: a file asks once per violation."""
    lines, start = [], 0
    for end in _LINE_END.finditer(source):
        lines.append(source[start:end.end()])
        start = end.end()
    if start < len(source):
        lines.append(source[start:])
    return lines


def source_segment(source: str, node: ast.AST) -> str | None:
    """``ast.get_source_segment(source, node)`` without splitting the whole
    source again on every call (which made a file with many violations
    quadratic), and None rather than an error for positions outside it."""
    end_lineno = getattr(node, "end_lineno", None)
    end_col_offset = getattr(node, "end_col_offset", None)
    lineno = getattr(node, "lineno", None)
    col_offset = getattr(node, "col_offset", None)
    if end_lineno is None or end_col_offset is None or lineno is None or col_offset is None:
        return None
    lines = _source_lines(source)
    if not 1 <= lineno <= end_lineno <= len(lines):
        return None
    if end_lineno == lineno:
        return lines[lineno - 1].encode()[col_offset:end_col_offset].decode(errors="replace")
    first = lines[lineno - 1].encode()[col_offset:].decode(errors="replace")
    last = lines[end_lineno - 1].encode()[:end_col_offset].decode(errors="replace")
    return "".join([first, *lines[lineno:end_lineno - 1], last])


def what_text(source: str, node: ast.AST | None, limit: int = 80) -> str:
    """The baseline's ``what`` field: the flagged source text with comments
    removed and whitespace collapsed, cut at ``limit`` characters."""
    if node is None:
        return ""
    text = source_segment(source, node) or ""
    if "#" in text:
        text = _strip_comments(text)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return text


def _strip_comments(text: str) -> str:
    try:
        tokens = [
            tok
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type != tokenize.COMMENT
        ]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, SyntaxError):
        return text
