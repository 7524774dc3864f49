"""The baseline's burn-down: its entries per code in each commit that changed it.

Git is asked twice, whatever the length of the history: ``git log`` for the
commits that touched the file, then one ``git cat-file --batch`` for the
file's text in each of them. Both run in the baseline's directory, with a
timeout. A version of the file that does not parse (a conflict committed by
mistake, a line a later version of the pack refuses) is counted from the
lines that do parse: history is read, never judged.

:func:`working_changes` asks git which files were renamed (and which are
new) since the baseline was last committed, so a renamed test file can
carry its entries (see :mod:`flake8_hermetic.baseline.ratchet`).
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flake8_hermetic.baseline.format import parse_all, read_text

GIT_TIMEOUT = 60  # seconds, for each of the two git calls
FIELD = "\x1f"


class HistoryError(Exception):
    """The history cannot be read; ``str()`` is the one line to show."""


@dataclass(frozen=True)
class Point:
    """The baseline as one commit left it (``commit`` is "" for the working tree)."""

    commit: str
    date: str
    subject: str
    counts: Counter[str]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _git(args: Sequence[str], cwd: str, data: bytes | None = None) -> bytes:
    try:
        result = subprocess.run(
            ["git", *args], cwd=cwd, input=data, capture_output=True, timeout=GIT_TIMEOUT, check=False,
        )
    except FileNotFoundError:
        raise HistoryError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise HistoryError(f"git {args[0]} took more than {GIT_TIMEOUT} seconds") from None
    except OSError as exc:
        raise HistoryError(f"cannot run git: {exc.strerror}") from None
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        raise HistoryError(f"git {args[0]}: {message[-1] if message else f'exit status {result.returncode}'}")
    return result.stdout


def counts_of(text: str, path: str) -> Counter[str]:
    """Entries per code in one version of the file (lines that do not parse are left out)."""
    baseline, _ = parse_all(text, path)
    return Counter(entry.code for entry in baseline.entries)


def _blobs(revisions: Sequence[str], name: str, cwd: str) -> list[bytes | None]:
    """The file's bytes at each revision (None where it did not exist), in one git call."""
    request = "".join(f"{revision}:./{name}\n" for revision in revisions).encode()
    output = _git(["cat-file", "--batch"], cwd, request)
    blobs: list[bytes | None] = []
    position = 0
    for _ in revisions:
        end = output.index(b"\n", position)
        header = output[position:end].split()
        position = end + 1
        if len(header) != 3:  # "<object> missing"
            blobs.append(None)
            continue
        size = int(header[2])
        blobs.append(output[position:position + size])
        position += size + 1  # the content, then a newline
    return blobs


def read_history(path: str, limit: int) -> list[Point]:
    """The baseline in each of the last ``limit`` commits that changed it,
    oldest first (``limit`` 0: all of them), then the working tree's file if
    it differs from the last."""
    directory, name = os.path.split(os.path.abspath(path))
    count = [f"--max-count={limit}"] if limit else []
    log = _git(
        ["log", *count, "--date=short", f"--format=%H{FIELD}%ad{FIELD}%s", "--", name], directory,
    ).decode(errors="replace")
    commits = [line.split(FIELD, 2) for line in log.splitlines() if line.count(FIELD) == 2]
    if not commits:
        raise HistoryError(f"no commit has {name} in this git repository (commit it first)")
    commits.reverse()
    points = []
    for (commit, date, subject), blob in zip(commits, _blobs([c[0] for c in commits], name, directory)):
        text = "" if blob is None else blob.decode("utf-8", errors="replace")
        points.append(Point(commit, date, subject, counts_of(text, path)))
    current = counts_of(read_text(path) or "", path)
    if current != points[-1].counts:
        points.append(Point("", "", "(working tree)", current))
    return points


# -- renames since the baseline was written ---------------------------------------

@dataclass(frozen=True)
class Changes:
    """What git knows of the files under a directory (paths POSIX, relative to it)."""

    #: old path -> new path: git's rename detection (``-M``), from the baseline's last
    #: commit (HEAD when it has none) to the working tree, and to the index
    renames: Mapping[str, str]
    #: files added since that commit (staged) or not tracked yet; None: every file is
    #: new (a repository without a commit)
    added: frozenset[str] | None


def _names(output: bytes) -> list[str]:
    return [os.fsdecode(name) for name in output.split(b"\0") if name]


def _renames(output: bytes, renames: dict[str, str], added: set[str]) -> None:
    """Read ``git diff -z --name-status`` into ``renames`` and ``added``."""
    fields = _names(output)
    position = 0
    while position < len(fields):
        status = fields[position]
        if status[:1] in ("R", "C"):
            old, new = fields[position + 1:position + 3]
            if status[:1] == "R":
                renames.setdefault(old, new)
            else:
                added.add(new)
            position += 3
            continue
        if status[:1] == "A" and position + 1 < len(fields):
            added.add(fields[position + 1])
        position += 2


def _base(directory: str, baseline: str) -> str | None:
    """The commit the baseline's entries were written against: its last
    commit, else HEAD; None in a repository without a commit."""
    try:
        last = _git(["log", "-1", "--format=%H", "--", os.path.abspath(baseline)], directory).decode().strip()
    except HistoryError:  # no commit yet, or a baseline outside the repository
        last = ""
    if last:
        return last
    try:
        return _git(["rev-parse", "--verify", "-q", "HEAD"], directory).decode().strip() or None
    except HistoryError:
        return None


def working_changes(directory: str, baseline: str) -> Changes | None:
    """The renames and new files git sees under ``directory`` (the project
    root) since ``baseline`` was last committed, in the working tree and the
    index (``git mv`` before a commit, a rename already committed that the
    baseline has not caught up with). None when ``directory`` is not in a
    git work tree, or git cannot be run: the caller falls back on findings.

    A handful of git calls, each with a timeout; none takes a lock
    (``--no-optional-locks``), so it is safe inside a commit's hooks.
    """
    try:
        inside = _git(["rev-parse", "--is-inside-work-tree"], directory).decode().strip()
    except HistoryError:
        return None
    if inside != "true":
        return None
    base = _base(directory, baseline)
    if base is None:
        return Changes({}, None)
    renames: dict[str, str] = {}
    added: set[str] = set()
    try:
        for cached in ((), ("--cached",)):
            output = _git(["--no-optional-locks", "diff", *cached, "-z", "--name-status", "-M", "--relative",
                           "--no-ext-diff", base, "--"], directory)
            _renames(output, renames, added)
        added.update(_names(_git(["ls-files", "-z", "--others", "--exclude-standard"], directory)))
    except HistoryError:
        return None
    return Changes(renames, frozenset(added))
