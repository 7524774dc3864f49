"""The controller's decision: the findings of every worker against the baseline.

The guard owns the baseline's runtime entries (``HRM6xx``) of the tests
that ran, and nothing else: it judges only those, and
``--hermetic-guard-update`` rewrites only those, keeping static entries,
entries of tests that did not run, and the header.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flake8_hermetic.baseline.format import (
    ANY,
    NEW_FILE_HEADER,
    Baseline,
    Entry,
    is_runtime,
    parse,
    read_text,
    render,
    write_atomic,
)
from flake8_hermetic.baseline.matching import match
from flake8_hermetic.guard.codes import BY_CODE, CODES
from flake8_hermetic.guard.monitor import Leak
from flake8_hermetic.testfiles import to_posix

RUNTIME_CODES = frozenset(code.code for code in CODES)
SESSION = "."  # the where of residue made outside any test (collection, session end)


# -- the decision ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Judged:
    """A leak with its baseline name."""

    leak: Leak
    path: str  # the baseline's name for the test file
    scope: str

    @property
    def code(self) -> str:
        return self.leak.code

    @property
    def what(self) -> str:
        return self.leak.what

    @property
    def where(self) -> str:
        return f"{self.path}::{self.scope}" if self.scope else self.path

    @property
    def message(self) -> str:
        return BY_CODE[self.code].message.format(what=self.what)


@dataclass
class Verdict:
    baseline_path: str | None
    new: list[Judged] = field(default_factory=list)
    baselined: list[Judged] = field(default_factory=list)
    stale: list[Entry] = field(default_factory=list)
    written: str | None = None  # the baseline, when --hermetic-guard-update changed it
    root: str = ""  # the project root: the baseline's paths are relative to it

    def summary(self) -> str:
        return f"{len(self.new)} new, {len(self.baselined)} baselined, {len(self.stale)} stale"


class Namer:
    """Node ids (relative to pytest's rootdir) as baseline wheres (relative to
    the project root). The two are the same directory in most projects; when
    they differ, the entry's path is rebased so the static side and the guard
    name a file alike."""

    def __init__(self, rootdir: str, root: str) -> None:
        self.rootdir = rootdir
        self.root = root
        self.paths: dict[str, str] = {}

    def split(self, nodeid: str) -> tuple[str, str]:
        if nodeid == SESSION:
            return SESSION, ""
        file, _, scope = nodeid.partition("::")
        return self.path(file), scope

    def path(self, file: str) -> str:
        named = self.paths.get(file)
        if named is None:
            absolute = os.path.normpath(os.path.join(self.rootdir, file))
            try:
                named = to_posix(os.path.relpath(absolute, self.root))
            except ValueError:  # another drive on Windows
                named = to_posix(absolute)
            self.paths[file] = named
        return named

    def where(self, nodeid: str) -> str:
        path, scope = self.split(nodeid)
        return f"{path}::{scope}" if scope else path


def resolve_claims(leaks: Iterable[Leak]) -> list[Leak]:
    """One leak per shared residue entry: of the workers that saw it appear,
    the one that wrote it; else the test that was running when it was made
    (the latest start before it)."""
    kept: list[Leak] = []
    contested: dict[tuple[str, str], list[Leak]] = defaultdict(list)
    for leak in leaks:
        (contested[(leak.code, leak.claim.get("entry", leak.what))] if leak.claim else kept).append(leak)
    for claims in contested.values():
        writers = [c for c in claims if c.claim.get("wrote")]
        if writers:
            kept.extend(writers)
            continue

        def rank(claim: Leak) -> tuple[int, float, str]:
            made, start, end = claim.claim["made"], claim.claim["start"], claim.claim["end"]
            return (0 if start <= made <= end else 1, -start if start <= made else start, claim.nodeid)

        kept.append(min(claims, key=rank))
    return kept


def one_finalization(leaks: Iterable[Leak]) -> list[Leak]:
    """A broader fixture finalized on several xdist workers, found once.

    A module-, class- or session-scoped fixture whose tests run on two
    workers is set up and finalized on each, so what its finalization leaks
    is found by each, at a different test. ``-n 0`` finalizes it once: at the
    last of its tests in the collection when its scope ends, or, when a
    parametrized fixture it depends on moves on to its next parameter, at the
    first test of that parameter. Of the marks of one instance of a fixture
    (its scope's node, its name, its parameters) for one ``(code, what)``,
    the one at that index stands: the lowest of the switches if there is
    one, else the highest. A leak its finalization made at another index is
    dropped; when the test at that index had made the leak itself (``own``),
    none of the finalization's is kept. A leak a test made itself is never
    dropped.
    """
    leaks = list(leaks)
    switches: dict[tuple[Any, ...], int] = {}
    ends: dict[tuple[Any, ...], int] = {}

    def key(leak: Leak, mark: dict[str, Any]) -> tuple[Any, ...]:
        return (mark["scope"], mark["node"], mark["baseid"], mark["argname"], mark["param"], leak.code, leak.what)

    for leak in leaks:
        for mark in leak.fixtures:
            k, index = key(leak, mark), mark["index"]
            if mark.get("switch"):
                switches[k] = min(switches.get(k, index), index)
            else:
                ends[k] = max(ends.get(k, index), index)

    def stands(k: tuple[Any, ...]) -> int:
        return switches[k] if k in switches else ends[k]

    return [leak for leak in leaks
            if not any(not mark["own"] and mark["index"] != stands(key(leak, mark)) for mark in leak.fixtures)]


def decide(
    leaks: Sequence[Leak], ran: Iterable[str], baseline_path: str | None, rootdir: str, update: bool,
    root: str | None = None,
) -> Verdict:
    """Judge ``leaks`` (of the tests in ``ran``) against the baseline; with
    ``update``, rewrite the runtime entries of those tests. ``root`` is the
    project root (default: pytest's ``rootdir``)."""
    verdict = Verdict(baseline_path, root=root or rootdir)
    namer = Namer(rootdir, verdict.root)
    judged = [Judged(leak, *namer.split(leak.nodeid)) for leak in resolve_claims(one_finalization(leaks))]
    ran_wheres = {namer.where(nodeid) for nodeid in ran} | {namer.where(SESSION)}
    existing = None if baseline_path is None else read_text(baseline_path)
    baseline = Baseline(baseline_path or "") if existing is None else parse(existing, baseline_path or "")
    ours = [e for e in baseline.entries if is_runtime(e.code) and e.where in ran_wheres]
    by_file_entries: dict[str, list[Entry]] = defaultdict(list)
    for entry in ours:
        by_file_entries[entry.path].append(entry)
    by_file_leaks: dict[str, list[Judged]] = defaultdict(list)
    for item in judged:
        by_file_leaks[item.path].append(item)
    for path in sorted(set(by_file_entries) | set(by_file_leaks)):
        items = by_file_leaks.get(path, [])
        new, stale = match(by_file_entries.get(path, []), items, key=lambda j: (j.scope, j.code),
                           what=lambda j: j.what, enabled=RUNTIME_CODES)
        fresh = {id(j) for j in new}
        verdict.new.extend(new)
        verdict.baselined.extend(j for j in items if id(j) not in fresh)
        verdict.stale.extend(stale)
    verdict.new.sort(key=lambda j: (j.where, j.code, j.what))
    verdict.stale.sort()
    if update and baseline_path:
        kept = [e for e in baseline.entries if not (is_runtime(e.code) and e.where in ran_wheres)]
        stars = {(e.path, e.scope, e.code) for e in ours if e.what == ANY}
        starred = {(j.path, j.scope, j.code) for j in judged} & stars
        fresh_entries = [Entry(j.path, j.scope, j.code, j.what) for j in judged
                         if (j.path, j.scope, j.code) not in starred]
        fresh_entries += [Entry(path, scope, code, ANY) for path, scope, code in sorted(starred)]
        header = baseline.header if existing is not None else list(NEW_FILE_HEADER)
        text = render(header, kept + fresh_entries, baseline.footer)
        if text != existing:
            write_atomic(baseline_path, text)
            verdict.written = baseline_path
    return verdict


# -- output -------------------------------------------------------------------------------------------------------

def stale_message(entry: Entry) -> str:
    """A stale runtime entry: only the guard's update (or a hand) removes it."""
    from flake8_hermetic.checker import readable

    return (f"stale baseline entry {readable(entry)}: the test no longer leaks this; "
            "delete the line (or run pytest --hermetic-guard-update)")


def terminal_lines(verdict: Verdict, shown_baseline: str | None) -> list[str]:
    lines = [f"{j.where}: {j.code} {j.message}" for j in verdict.new]
    lines += [stale_message(e) for e in verdict.stale]
    tail = f"hermetic guard: {verdict.summary()}"
    if shown_baseline:
        tail += f" (baseline {shown_baseline})"
    if verdict.written:
        tail += f"; wrote {shown_baseline}"
    return [*lines, tail]


def _location(j: Judged) -> dict[str, Any]:
    return {"file": j.leak.file, "line": j.leak.line}


def json_report(verdict: Verdict) -> str:
    def item(j: Judged) -> dict[str, Any]:
        return {"where": j.where, "nodeid": j.leak.nodeid, "code": j.code, "what": j.what,
                "message": j.message, **_location(j)}

    data = {
        "tool": "flake8-hermetic guard",
        "baseline": verdict.baseline_path,
        "summary": {"new": len(verdict.new), "baselined": len(verdict.baselined), "stale": len(verdict.stale)},
        "new": [item(j) for j in verdict.new],
        "baselined": [item(j) for j in verdict.baselined],
        "stale": [{"entry": e.render(), "where": e.where, "code": e.code, "what": e.what} for e in verdict.stale],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def check_report(verdict: Verdict, rootdir: str) -> Any:
    """The findings as ``flake8-hermetic check`` reports them (for its github/sarif formats)."""
    from flake8_hermetic import reporting
    from flake8_hermetic.checker import STALE_CODE
    from flake8_hermetic.collect import Found

    def found(j: Judged) -> Found:
        file = j.leak.file or j.path
        return Found(os.path.relpath(os.path.join(rootdir, file)), j.path, max(j.leak.line, 1), 1, j.code,
                     j.message, j.scope, j.what)

    base = verdict.root or rootdir
    report = reporting.Report([found(j) for j in verdict.new], [], len(verdict.baselined))
    for e in verdict.stale:
        stale = Found(os.path.relpath(os.path.join(base, e.path)), e.path, 1, 1, STALE_CODE, stale_message(e),
                      e.scope, e.what)
        report.stale.append(stale)
        if verdict.baseline_path and e.line:
            report.stale_at[stale] = (os.path.relpath(verdict.baseline_path), e.line)
    return report


def formatted_report(verdict: Verdict, form: str, rootdir: str) -> str:
    if form == "json":
        return json_report(verdict)
    from flake8_hermetic import reporting, ruledocs

    report = check_report(verdict, rootdir)
    if form == "github":
        return reporting.github(report)
    codes = {f.code for f in report.findings()} | RUNTIME_CODES
    rules = reporting.rule_help(codes, ruledocs.pages(), {})
    return reporting.sarif(report, rules, verdict.root or rootdir)
