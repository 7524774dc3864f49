"""Stable ``what`` texts: the same leak reads the same from run to run.

Known roots become placeholders (``<tmp>``, ``<basetemp>``, ``<rootdir>``,
``~``), and the random parts of names are normalised: ``tempfile``'s eight
random characters, and every run of digits (pids, counters, ``pytest-12``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_WHAT = 80
_TEMPFILE = re.compile(r"tmp[a-z0-9_]{8}")
_RANDOM_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?=[a-z_]*[0-9])[a-z0-9_]{8}(?![A-Za-z0-9_])")
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def label(text: str) -> str:
    """A name that has no random part (a thread's target): whitespace collapsed and cut."""
    text = _SPACE.sub(" ", text).strip() or "?"
    return text if len(text) <= MAX_WHAT else text[: MAX_WHAT - 3] + "..."


def stable(text: str, roots: Sequence[tuple[str, str]] = ()) -> str:
    """``text`` with ``roots`` (path, placeholder; longest first) replaced and random parts normalised."""
    for path, placeholder in roots:
        if path and (text == path or text.startswith(path.rstrip("/") + "/")):
            text = placeholder + text[len(path.rstrip("/")):]
            break
    text = _TEMPFILE.sub("tmp*", text)
    text = _RANDOM_TOKEN.sub("*", text)
    return label(_DIGITS.sub("*", text))
