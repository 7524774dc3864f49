"""What the baseline commands do to the entries, as data in, data out.

``current`` maps each *judged* file (one the pack walked in this run, by
its baseline path) to its violations and the codes that ran on it. Files
that were not judged keep their entries, so a run on a few paths never
loses the others; entries of codes that did not run on a file are kept
too (an off-by-default rule, a pattern rule whose globs skip the file), as
the plugin never judges them. Runtime entries (``HRM6xx``) belong to the
runtime guard: these commands never judge them. Entries whose file is gone
are dropped by ``regenerate`` and ``prune`` alike, static and runtime: no
test of a deleted file can run again.

A renamed test file carries its entries (:func:`move`): the commands learn
the renames from git (:func:`flake8_hermetic.baseline.history.working_changes`)
or, for a file git does not know, pair a file gone from the baseline with a
new one that has exactly its findings (:func:`pair_by_findings`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Generic, Protocol, TypeVar

from flake8_hermetic.baseline.format import ANY, Baseline, Entry, is_runtime
from flake8_hermetic.baseline.matching import covers, match

# The what text of a violation whose source text could not be recovered:
# an empty field would make the file unreadable.
NO_TEXT = "?"


class Finding(Protocol):
    @property
    def scope(self) -> str: ...

    @property
    def code(self) -> str: ...

    @property
    def what(self) -> str: ...


F = TypeVar("F", bound=Finding)


@dataclass(frozen=True)
class Judged(Generic[F]):
    """One linted file: its violations, and the codes that ran on it."""

    findings: Sequence[F]
    codes: Collection[str]


def _key(finding: Finding) -> tuple[str, str]:
    return finding.scope, finding.code


def _what(finding: Finding) -> str:
    return finding.what or NO_TEXT


def is_judged(entry: Entry, current: Mapping[str, Judged[F]]) -> bool:
    """Did this run judge ``entry`` (its file linted, its code run there)?"""
    if is_runtime(entry.code):
        return False
    linted = current.get(entry.path)
    return linted is not None and entry.code in linted.codes


def judge(baseline: Baseline, current: Mapping[str, Judged[F]]) -> dict[str, tuple[list[F], list[Entry]]]:
    """Per judged file: (violations the baseline does not accept, stale entries)."""
    entries = {
        path: [entry for entry in file_entries if not is_runtime(entry.code)]
        for path, file_entries in baseline.by_file().items()
    }
    return {
        path: match(entries.get(path, []), linted.findings, key=_key, what=_what, enabled=linted.codes)
        for path, linted in current.items()
    }


def regenerate(baseline: Baseline, current: Mapping[str, Judged[F]], exists: Callable[[str], bool]) -> list[Entry]:
    """The entries after a regenerate: every current violation of a judged
    file, except that a ``*`` entry whose (scope, code) still has violations
    stays and accepts them all."""
    kept = [
        entry for entry in baseline.entries
        if exists(entry.path) and (is_runtime(entry.code) or not is_judged(entry, current))
    ]
    stars = {
        (entry.path, entry.scope, entry.code)
        for entry in baseline.entries
        if entry.is_any and is_judged(entry, current)
    }
    fresh: list[Entry] = []
    starred: set[tuple[str, str, str]] = set()
    for path, linted in current.items():
        for finding in linted.findings:
            group = (path, finding.scope, finding.code)
            if group in stars:
                starred.add(group)
            else:
                fresh.append(Entry(path, finding.scope, finding.code, _what(finding)))
    fresh.extend(Entry(path, scope, code, ANY) for path, scope, code in sorted(starred))
    return sorted(kept + fresh)


def carry_comments(old: Sequence[Entry], new: Sequence[Entry]) -> tuple[list[Entry], list[Entry]]:
    """``new`` with the comments of the ``old`` entries they replace, and the
    old entries whose comments found no home (their entry went).

    A comment stays with its entry's line when that line is still there,
    else moves to an entry of the same (where, code) (the flagged line was
    edited: the debt, and the reason given for it, is the same).
    """
    result = list(new)
    by_line: dict[str, list[int]] = defaultdict(list)
    by_group: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for index, entry in enumerate(result):
        if not entry.comments:  # the entries that can take an old entry's comments
            by_line[entry.render()].append(index)
            by_group[(entry.path, entry.scope, entry.code)].append(index)
    kept = {id(entry) for entry in new}
    taken: set[int] = set()
    waiting = [entry for entry in old if entry.comments and id(entry) not in kept]
    lost: list[Entry] = []
    for candidates in (lambda e: by_line[e.render()], lambda e: by_group[(e.path, e.scope, e.code)]):
        still: list[Entry] = []
        for entry in waiting:
            free = [index for index in candidates(entry) if index not in taken]
            if free:
                taken.add(free[0])
                result[free[0]] = replace(result[free[0]], comments=entry.comments)
            else:
                still.append(entry)
        waiting = still
    lost.extend(waiting)
    return result, lost


def prune(
    baseline: Baseline, current: Mapping[str, Judged[F]], exists: Callable[[str], bool]
) -> tuple[list[Entry], list[tuple[Entry, str]]]:
    """The entries a prune keeps, and those it drops with the reason: stale
    ones, and those of files that are gone (runtime entries included).
    Nothing is added or rewritten."""
    # by identity: of two identical lines, the one match() left over goes
    stale = {id(entry) for _, entries in judge(baseline, current).values() for entry in entries}
    kept: list[Entry] = []
    dropped: list[tuple[Entry, str]] = []
    for entry in baseline.entries:
        if not exists(entry.path):  # runtime entries too: no test of a deleted file runs again
            dropped.append((entry, f"{entry.path} does not exist"))
        elif is_runtime(entry.code):
            kept.append(entry)
        elif id(entry) in stale:
            dropped.append((entry, "stale (matches no violation)"))
        else:
            kept.append(entry)
    return kept, dropped


# -- a renamed test file carries its entries --------------------------------------

@dataclass(frozen=True)
class Move:
    """The entries of ``old`` (a file gone from the disk) now belong to ``new``."""

    old: str
    new: str
    #: how the rename was learnt: "git" (its rename detection) or "findings" (the same findings)
    by: str


def gone_files(baseline: Baseline, exists: Callable[[str], bool]) -> list[str]:
    """The files the baseline names that do not exist (any more)."""
    return sorted(path for path in baseline.by_file() if not exists(path))


def pair_by_findings(
    baseline: Baseline, current: Mapping[str, Judged[F]], gone: Iterable[str], candidates: Iterable[str],
) -> list[Move]:
    """Gone files paired with the judged ``candidates`` that have their findings.

    A gone file pairs with a candidate the baseline has no entry for when
    every static entry of the gone file finds its violation there, exactly
    (the same node id, code and text; a ``*`` entry: any of its group), with
    its code run on the candidate. Only one-to-one pairs count: two gone
    files that fit one candidate, or two candidates for one file, pair
    nothing (their entries go, their violations are new).
    """
    files = baseline.by_file()
    fitting: dict[str, list[str]] = {}
    options = [path for path in candidates if path in current and path not in files]
    for old in gone:
        static = [entry for entry in files.get(old, []) if not is_runtime(entry.code)]
        if not static:
            continue  # nothing to recognise it by
        fitting[old] = [
            new for new in options
            if all(entry.code in current[new].codes for entry in static)
            and covers(static, current[new].findings, key=_key, what=_what)
        ]
    claims = Counter(new for news in fitting.values() for new in news)
    return [
        Move(old, news[0], "findings")
        for old, news in sorted(fitting.items()) if len(news) == 1 and claims[news[0]] == 1
    ]


def move(baseline: Baseline, moves: Iterable[Move]) -> Baseline:
    """The baseline with each moved file's entries (static and runtime) under
    its new path; their line numbers and comments stay theirs."""
    to = {step.old: step.new for step in moves}
    if not to:
        return baseline
    entries = [replace(entry, path=to[entry.path]) if entry.path in to else entry for entry in baseline.entries]
    return Baseline(baseline.path, list(baseline.header), entries, list(baseline.footer))


def changes(old: Iterable[Entry], new: Iterable[Entry]) -> dict[str, tuple[int, int]]:
    """Per code: (entries added, entries removed), as multisets of lines."""
    before = Counter(entry.render() for entry in old)
    after = Counter(entry.render() for entry in new)
    codes: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for line, count in (after - before).items():
        codes[line.split("\t")[1]][0] += count
    for line, count in (before - after).items():
        codes[line.split("\t")[1]][1] += count
    return {code: (added, removed) for code, (added, removed) in sorted(codes.items())}


def _most_first(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


STATS_KEYS = ("code", "file", "test", "directory")


def _key_of(entry: Entry, by: str) -> str:
    if by == "code":
        return entry.code
    if by == "file":
        return entry.path
    if by == "test":
        return entry.where  # the node id (the path alone for module-level code)
    top, separator, _ = entry.path.partition("/")
    return top if separator else "."


def tally(entries: Iterable[Entry], by: str) -> list[tuple[str, int]]:
    """Entries per code, file, test (node id) or top-level directory (``.``
    for files at the root), most first."""
    return _most_first(Counter(_key_of(entry, by) for entry in entries))


def stats(entries: Iterable[Entry]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Entries per code and per top-level directory, most first."""
    entries = list(entries)
    return tally(entries, "code"), tally(entries, "directory")
