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
    BaselineError,
    Entry,
    is_runtime,
    line_safe,
    locked,
    parse,
    read_text,
    render,
    safe_scope,
    safe_what,
    writable_entry,
    write_atomic,
    write_target,
)
from flake8_hermetic.baseline.matching import match
from flake8_hermetic.guard.codes import BY_CODE, CODES
from flake8_hermetic.guard.monitor import Leak
from flake8_hermetic.testfiles import to_posix

RUNTIME_CODES = frozenset(code.code for code in CODES)
GUESS_NOTE = (" (which test made it is a guess: no worker's process wrote it, a child did, while this test "
              "was running; rerun with -n 0 to confirm)")
SESSION = "."  # the where of residue made outside any test (collection, session end)


# -- the decision ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Judged:
    """A leak with its baseline name: the scope and what as an entry holds
    them (escaped where a line cannot hold a character, see
    :func:`flake8_hermetic.baseline.format.safe_what`)."""

    leak: Leak
    path: str  # the baseline's name for the test file
    scope: str
    what: str = ""

    @classmethod
    def of(cls, leak: Leak, path: str, scope: str) -> Judged:
        return cls(leak, path, scope, safe_what(leak.what))

    @property
    def code(self) -> str:
        return self.leak.code

    @property
    def where(self) -> str:
        return f"{self.path}::{self.scope}" if self.scope else self.path

    @property
    def guess(self) -> bool:
        """Whether the test was chosen by the time the entry was made (see ``resolve_claims``)."""
        return bool(self.leak.claim.get("guess"))

    @property
    def message(self) -> str:
        text = BY_CODE[self.code].message.format(what=self.what)
        return text + GUESS_NOTE if self.guess else text


@dataclass
class Verdict:
    baseline_path: str | None
    new: list[Judged] = field(default_factory=list)
    baselined: list[Judged] = field(default_factory=list)
    stale: list[Entry] = field(default_factory=list)
    written: str | None = None  # the baseline, when --hermetic-guard-update changed it
    root: str = ""  # the project root: the baseline's paths are relative to it
    unknown: list[Entry] = field(default_factory=list)  # HRM6xx entries of codes no watch owns: kept
    gone: list[Entry] = field(default_factory=list)  # runtime entries of deleted test files: the update drops them
    refused_growth: int = 0  # new findings an update without --hermetic-guard-allow-growth did not write

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
        return self.path(file), safe_scope(scope)

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

        chosen = min(claims, key=rank)
        # no worker's audit hook saw the write (a child process made the entry): the test is
        # the one that was running when it was made, a guess the finding's message says
        chosen.claim = {**chosen.claim, "guess": True}
        kept.append(chosen)
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


class Refused(Exception):
    """An update or a report that cannot be written; ``str()`` is the one line to show."""


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)  # a hard link, too
    except OSError:
        return False


def report_target(path: str, baseline: str | None, given: str = "") -> str:
    """The file ``--hermetic-guard-report=given`` (``path`` from the invocation
    directory) may replace, atomically: never the baseline, and a regular
    file (a symlink to one followed) or a new one in an existing directory;
    :class:`Refused` otherwise."""
    shown = f"--hermetic-guard-report={line_safe(given or path)}"
    if baseline and (os.path.realpath(path) == os.path.realpath(baseline) or _same_file(path, baseline)):
        raise Refused(f"{shown}: is the baseline; refusing to overwrite it with the report")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise Refused(f"{shown}: cannot write: no directory {line_safe(directory)}")
    try:
        return write_target(path, None)
    except BaselineError as exc:
        raise Refused(f"{shown}: {exc.reason}") from None


def _judge(verdict: Verdict, judged: Sequence[Judged], ran: set[tuple[str, str]], baseline: Baseline) -> list[Entry]:
    """Fill ``verdict`` from ``baseline``; the entries judged (ours)."""
    verdict.unknown = [e for e in baseline.entries if is_runtime(e.code) and e.code not in RUNTIME_CODES]
    ours = [e for e in baseline.entries if e.code in RUNTIME_CODES and (e.path, e.scope) in ran]
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
    return ours


def _read(path: str) -> tuple[str | None, Baseline]:
    existing = read_text(path)
    return existing, Baseline(path) if existing is None else parse(existing, path)


def _writable(judged: Sequence[Judged], root: str) -> dict[int, Entry]:
    """Each finding's entry, by ``id``; :class:`Refused` when one cannot be written."""
    entries: dict[int, Entry] = {}
    for item in judged:
        try:
            entries[id(item)] = writable_entry(item.path, item.scope, item.code, item.what)
        except ValueError as exc:
            raise Refused(
                f"cannot write the entry of {line_safe(item.leak.nodeid)}: {line_safe(str(exc))} "
                f"(the project root is {root}: run pytest from inside it, on tests inside it); nothing written"
            ) from None
    return entries


def decide(
    leaks: Sequence[Leak], ran: Iterable[str], baseline_path: str | None, rootdir: str, update: bool,
    root: str | None = None, allow_growth: bool = False,
) -> Verdict:
    """Judge ``leaks`` (of the tests in ``ran``) against the baseline; with
    ``update``, rewrite the runtime entries of those tests, as
    ``flake8-hermetic baseline regenerate`` writes: through a symlink that
    stays in the project, under the baseline's lock, from the file read
    again under it, and only shrinking an existing file unless
    ``allow_growth``. ``root`` is the project root (default: pytest's ``rootdir``)."""
    verdict = Verdict(baseline_path, root=root or rootdir)
    namer = Namer(rootdir, verdict.root)
    judged = [Judged.of(leak, *namer.split(leak.nodeid)) for leak in resolve_claims(one_finalization(leaks))]
    ran_keys = {namer.split(nodeid) for nodeid in ran} | {namer.split(SESSION)}
    if not (update and baseline_path):
        _judge(verdict, judged, ran_keys, _read(baseline_path)[1] if baseline_path else Baseline(""))
        return verdict
    entries = _writable(judged, verdict.root)
    target = write_target(baseline_path, verdict.root)  # the static writers' rules and their lock
    try:
        with locked(target):
            existing, baseline = _read(baseline_path)  # read under the lock: another writer may just have written
            text = _update(verdict, judged, entries, ran_keys, existing, baseline, allow_growth)
            if text is not None:
                write_atomic(target, text)
                verdict.written = baseline_path
    except OSError as exc:
        raise BaselineError(baseline_path, 1, f"cannot write: {exc.strerror or exc}") from None
    return verdict


def _update(verdict: Verdict, judged: Sequence[Judged], entries: dict[int, Entry], ran: set[tuple[str, str]],
            existing: str | None, baseline: Baseline, allow_growth: bool) -> str | None:
    """Judge; the baseline's new text, or None when it stays as it is."""
    ours = _judge(verdict, judged, ran, baseline)
    if verdict.new and existing is not None and not allow_growth:
        verdict.refused_growth = len(verdict.new)  # growth is the explicit act, as for regenerate
        return None
    judged_ids = {id(e) for e in ours}
    verdict.gone = [e for e in baseline.entries if e.code in RUNTIME_CODES and id(e) not in judged_ids
                    and e.path != SESSION and not os.path.exists(os.path.join(verdict.root, e.path))]
    dropped = judged_ids | {id(e) for e in verdict.gone}
    kept = [e for e in baseline.entries if id(e) not in dropped]
    stars = {(e.path, e.scope, e.code) for e in ours if e.what == ANY}
    starred = {(j.path, j.scope, j.code) for j in judged} & stars
    fresh_entries = [entries[id(j)] for j in judged if (j.path, j.scope, j.code) not in starred]
    fresh_entries += [Entry(path, scope, code, ANY) for path, scope, code in sorted(starred)]
    header = baseline.header if existing is not None else list(NEW_FILE_HEADER)
    text = render(header, kept + fresh_entries, baseline.footer)
    return text if text != existing else None


# -- output -------------------------------------------------------------------------------------------------------

def stale_message(entry: Entry) -> str:
    """A stale runtime entry: only the guard's update (or a hand) removes it."""
    from flake8_hermetic.checker import readable

    return (f"stale baseline entry {readable(entry)}: the test no longer leaks this; "
            "delete the line (or run pytest --hermetic-guard-update)")


def unknown_message(entry: Entry, shown_baseline: str | None) -> str:
    from flake8_hermetic.checker import readable

    return (f"{shown_baseline}:{entry.line}: no guard watch owns {entry.code} (an unknown runtime code, "
            f"kept as it is): {line_safe(readable(entry))}")


def terminal_lines(verdict: Verdict, shown_baseline: str | None) -> list[str]:
    from flake8_hermetic.checker import readable

    lines = [f"{line_safe(j.where)}: {j.code} {j.message}" for j in verdict.new]
    lines += [line_safe(stale_message(e)) for e in verdict.stale]
    lines += [unknown_message(e, shown_baseline) for e in verdict.unknown]
    lines += [f"removed baseline entry {line_safe(readable(e))}: its test file is gone" for e in verdict.gone]
    if verdict.refused_growth:
        count = f"{verdict.refused_growth} new finding{'s' if verdict.refused_growth != 1 else ''}"
        lines.append(f"hermetic guard: {count} would be added to {shown_baseline}; nothing written "
                     "(--hermetic-guard-allow-growth adds them)")
    tail = f"hermetic guard: {verdict.summary()}"
    if shown_baseline:
        tail += f" (baseline {shown_baseline})"
    if verdict.written:
        tail += f"; wrote {shown_baseline}"
    return [*lines, tail]


def _location(j: Judged) -> dict[str, Any]:
    return {"file": line_safe(j.leak.file), "line": j.leak.line}


def json_report(verdict: Verdict) -> str:
    def item(j: Judged) -> dict[str, Any]:
        return {"where": line_safe(j.where), "nodeid": line_safe(j.leak.nodeid), "code": j.code, "what": j.what,
                "message": j.message, "attribution": "guess" if j.guess else "exact", **_location(j)}

    def entry(e: Entry) -> dict[str, Any]:
        return {"entry": e.render(), "where": e.where, "code": e.code, "what": e.what}

    data = {
        "tool": "flake8-hermetic guard",
        "baseline": verdict.baseline_path,
        "summary": {"new": len(verdict.new), "baselined": len(verdict.baselined), "stale": len(verdict.stale)},
        "new": [item(j) for j in verdict.new],
        "baselined": [item(j) for j in verdict.baselined],
        "stale": [entry(e) for e in verdict.stale],
        "unknown": [entry(e) for e in verdict.unknown],
        "removed": [entry(e) for e in verdict.gone],
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
