"""Matching one file's violations against its baseline entries.

1. group entries and violations by (scope, code);
2. exact pass: a violation consumes an entry with the same ``what``;
3. loose pass: leftovers consume leftover entries of the same group (the
   line was edited, the debt in that test did not grow);
4. a ``*`` entry consumes whatever remains in its group;
5. leftover violations are new; leftover entries are stale, and so is a
   ``*`` entry that accepted nothing (or repeats another ``*`` entry of its
   group, which could never accept anything the first did not).

Entries of codes outside ``enabled`` are never judged: an off-by-default
rule that is not enabled in this run leaves its entries alone.
"""

from __future__ import annotations

from collections import Counter, defaultdict
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
    (scope, code); ``what`` its source text, computed only for violations
    whose group has entries."""
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
        stars = [e for e in group_entries if e.is_any]
        unused: dict[str, list[int]] = defaultdict(list)
        for index, entry in enumerate(group_entries):
            if not entry.is_any:
                unused[entry.what].append(index)
        consumed: set[int] = set()
        leftover: list[V] = []
        for violation in by_group.get(group_key, []):
            candidates = unused.get(what(violation))
            if candidates:
                consumed.add(candidates.pop(0))
            else:
                leftover.append(violation)
        remaining = [
            e for index, e in enumerate(group_entries) if not e.is_any and index not in consumed
        ]
        loose = min(len(leftover), len(remaining))
        leftover = leftover[loose:]
        stale.extend(remaining[loose:])
        if stars:
            stale.extend(stars[1:] if leftover else stars)
            leftover = []
        new.extend(leftover)
    return new, stale


def covers(
    entries: Sequence[Entry],
    violations: Sequence[V],
    key: Callable[[V], tuple[str, str]],
    what: Callable[[V], str],
) -> bool:
    """Does every entry find a violation of its own with its exact text (a
    ``*`` entry: any violation of its group)? No loose pass: this is how a
    file git knows nothing about is recognised as a moved one, by the same
    debt, never by an edited one."""
    if not entries:
        return False
    left = Counter((*key(violation), what(violation)) for violation in violations)
    groups = {key(violation) for violation in violations}
    for entry in entries:
        if entry.is_any:
            if (entry.scope, entry.code) not in groups:
                return False
            continue
        line = (entry.scope, entry.code, entry.what)
        if left[line] <= 0:
            return False
        left[line] -= 1
    return True
