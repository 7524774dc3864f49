"""Matching one file's violations against its baseline entries.

1. group entries and violations by (scope, code);
2. exact pass: a violation consumes an entry with the same ``what``;
3. loose pass: leftovers consume leftover entries of the same group;
4. ``*`` entries consume whatever remains in their group;
5. leftover violations are new; leftover entries (and ``*`` entries that
   accepted nothing) are stale.

Entries of codes outside ``enabled`` are never judged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

from flake8_hermetic.baseline.format import Entry

V = TypeVar("V")


def match(
    entries: Sequence[Entry],
    violations: Sequence[V],
    key: Callable[[V], tuple[str, str]],
    what: Callable[[V], str],
    enabled: Collection[str],
) -> tuple[list[V], list[Entry]]:
    """Return (new violations, stale entries). ``key`` gives a violation's
    (scope, code); ``what`` its source text, computed only when needed."""
    groups: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in entries:
        if entry.code in enabled:
            groups[(entry.scope, entry.code)].append(entry)
    if not groups:
        return list(violations), []

    by_group: dict[tuple[str, str], list[V]] = defaultdict(list)
    new: list[V] = []
    for violation in violations:
        group_key = key(violation)
        if group_key in groups:
            by_group[group_key].append(violation)
        else:
            new.append(violation)

    stale: list[Entry] = []
    for group_key, group_entries in groups.items():
        found = by_group.get(group_key, [])
        stars = [e for e in group_entries if e.is_any]
        remaining = [e for e in group_entries if not e.is_any]
        leftover: list[V] = []
        for violation in found:
            text = what(violation)
            for index, entry in enumerate(remaining):
                if entry.what == text:
                    del remaining[index]
                    break
            else:
                leftover.append(violation)
        consumed = min(len(leftover), len(remaining))
        leftover = leftover[consumed:]
        remaining = remaining[consumed:]
        if stars:
            if not leftover:
                stale.extend(stars)
            leftover = []
        stale.extend(remaining)
        new.extend(leftover)
    return new, stale
