"""Stable ``what`` texts: the same leak reads the same from run to run.

Known roots become placeholders (``<tmp>``, ``<basetemp>``, ``<rootdir>``,
``~``), and the random parts of names are normalised: ``tempfile``'s eight
random characters, and every run of digits (pids, counters, ``pytest-12``).

``tempfile``'s random part is known exactly when this process made it: the
guard has ``tempfile`` note each name it draws (:func:`record_tempfile_names`),
so ``editor-qwoedypf.txt~`` reads ``editor-*.txt~`` whatever its letters.
A name a child process drew is recognised by its shape only: eight
characters of ``tempfile``'s alphabet with at least one digit (eight
letters alone would also match words such as ``settings``).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any

MAX_WHAT = 80
_TEMPFILE = re.compile(r"tmp[a-z0-9_]{8}")
_RANDOM_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?=[a-z_]*[0-9])[a-z0-9_]{8}(?![A-Za-z0-9_])")
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


# the random parts ``tempfile`` drew in this process while the guard ran, and not yet forgotten
MADE: set[str] = set()
_PART = 8  # tempfile's random part: eight characters


class _NotedNames(tempfile._RandomNameSequence):  # type: ignore[name-defined,misc]
    def __next__(self) -> str:
        name: str = super().__next__()
        MADE.add(name)
        return name


def record_tempfile_names() -> Any:
    """Have ``tempfile`` note the names it draws; returns what :func:`stop_recording` puts back."""
    previous = getattr(tempfile, "_name_sequence", None)
    if hasattr(tempfile, "_RandomNameSequence") and hasattr(tempfile, "_get_candidate_names"):
        tempfile._name_sequence = _NotedNames()  # type: ignore[attr-defined]
    return previous


def stop_recording(previous: Any) -> None:
    if isinstance(getattr(tempfile, "_name_sequence", None), _NotedNames):
        tempfile._name_sequence = previous  # type: ignore[attr-defined]
    if not isinstance(previous, _NotedNames):  # not a guarded session inside a guarded session
        MADE.clear()
        _PRUNED[:] = [None, -1]


# the entries and the number of names noted at the last pruning: ``MADE`` only grows between
# two prunings, so the same entries and the same size mean there is nothing to forget
_PRUNED: list[Any] = [None, -1]


def keep_made_in(entries: Iterable[str]) -> None:
    """Forget the drawn names that appear in none of ``entries`` (what is still
    there to be reported later); a name is noted once and looked up only in a
    finding, so the set stays as small as what is left behind. Called after
    every test once a name is noted: it returns at once when no name was
    drawn and the entries (an immutable state) are the same object as last time."""
    if entries is _PRUNED[0] and len(MADE) == _PRUNED[1]:
        return
    kept = {part for entry in entries for part in _parts(entry) if part in MADE}
    MADE.intersection_update(kept)
    _PRUNED[:] = [entries, len(MADE)]


def _parts(text: str) -> Iterable[str]:
    return (text[i:i + _PART] for i in range(len(text) - _PART + 1))


def _drawn(text: str) -> str:
    for part in {part for part in _parts(text) if part in MADE}:
        text = text.replace(part, "*")
    return text


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
    if MADE:
        text = _drawn(text)
    text = _TEMPFILE.sub("tmp*", text)
    text = _RANDOM_TOKEN.sub("*", text)
    return label(_DIGITS.sub("*", text))
