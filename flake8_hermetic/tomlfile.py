"""Reading a ``pyproject.toml``: the document, or one line ``FILE:LINE: reason``.

Shared by the pack's options (``[tool.flake8-hermetic]``) and the project
model (``[tool.pytest...]``). TOML is UTF-8 by definition; a file in UTF-16
(what Windows PowerShell 5 writes with ``>``), one that is not text, one
too large or nested too deep for the parser is refused with one line, not a
traceback.
"""

from __future__ import annotations

import codecs
import re
import sys
from typing import Any

from flake8_hermetic.options import ConfigError
from flake8_hermetic.safeio import read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: a pyproject.toml is a few kilobytes; anything past this is not one
MAX_BYTES = 16 * 1024 * 1024
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)


def load(path: str) -> dict[str, Any]:
    """The parsed document. ``OSError`` (a missing or unreadable file) is
    the caller's to judge; every problem of the content is a :class:`ConfigError`."""
    data = read_regular(path, MAX_BYTES)
    if data.startswith(_UTF16_BOMS):
        raise ConfigError(f"{path}:1: not UTF-8 text (it starts with a UTF-16/32 byte-order mark); save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # "at end of document": the last line with text, whichever TOML parser counted it
        end = "end of document" in str(exc)
        line = (None if end else getattr(exc, "lineno", None)) or _line_from_message(str(exc), text)
        reason = getattr(exc, "msg", None) or re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)$", "", str(exc))
        raise ConfigError(f"{path}:{line}: invalid TOML: {reason}") from None
    except (RecursionError, MemoryError):
        raise ConfigError(f"{path}:1: invalid TOML: nested too deep to read") from None


def _line_from_message(message: str, text: str) -> int:
    match = re.search(r"line (\d+)", message)
    if match:
        return int(match.group(1))
    if "end of document" in message:
        return max(1, text.rstrip("\r\n").count("\n") + 1)
    return 1
