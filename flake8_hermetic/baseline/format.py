"""The baseline file: one known violation per line, ``where<TAB>code<TAB>what``.

Paths are POSIX and relative to the baseline's directory. The file is read
strictly: a line that cannot be understood is refused with ``FILE:LINE:
reason`` rather than skipped, since a skipped line would silently turn a
known violation into a failure, or worse, hide that a line was lost.
"""

from __future__ import annotations

import os
import posixpath
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

ANY = "*"
CODE_FORM = re.compile(r"^HRM\d{3}$")
CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>", "|||||||")
WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


class BaselineError(Exception):
    """A malformed baseline; ``str()`` is ``FILE:LINE: reason``."""


@dataclass(frozen=True, order=True)
class Entry:
    """One accepted violation. ``scope`` is the node id after the path."""

    path: str
    scope: str
    code: str
    what: str
    line: int = field(default=0, compare=False)

    @property
    def where(self) -> str:
        return f"{self.path}::{self.scope}" if self.scope else self.path

    @property
    def is_any(self) -> bool:
        return self.what == ANY

    def render(self) -> str:
        return f"{self.where}\t{self.code}\t{self.what}"


@dataclass
class Baseline:
    path: str
    header: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)

    @property
    def directory(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def by_file(self) -> dict[str, list[Entry]]:
        grouped: dict[str, list[Entry]] = defaultdict(list)
        for entry in self.entries:
            grouped[entry.path].append(entry)
        return dict(grouped)


def _check_path(path: str) -> str | None:
    """Why ``path`` is not a valid baseline path, or None."""
    if not path:
        return "empty path"
    if "\\" in path:
        return f"path {path!r} uses backslashes; baseline paths are POSIX"
    if path.startswith("/") or WINDOWS_DRIVE.match(path):
        return f"path {path!r} is absolute; paths are relative to the baseline's directory"
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        return f"path {path!r} escapes the baseline's directory"
    if normal != path:
        return f"path {path!r} is not normalised (write {normal!r})"
    return None


def parse(text: str, path: str) -> Baseline:
    """Parse a baseline's text; raise :class:`BaselineError` on the first bad line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    baseline = Baseline(path)
    in_header = True
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r")
        if line.startswith(CONFLICT_MARKERS):
            raise BaselineError(f"{path}:{number}: merge-conflict marker; resolve the conflict, then run 'flake8-hermetic baseline regenerate'")
        if not line.strip():
            in_header = in_header and not baseline.header
            continue
        if line.lstrip().startswith("#"):
            if in_header:
                baseline.header.append(line)
            continue
        in_header = False
        fields = line.split("\t")
        if len(fields) != 3:
            raise BaselineError(
                f"{path}:{number}: expected 3 TAB-separated fields (where, code, what), found {len(fields)}"
            )
        where, code, what = fields
        file_path, _, scope = where.partition("::")
        problem = _check_path(file_path)
        if problem:
            raise BaselineError(f"{path}:{number}: {problem}")
        if not CODE_FORM.match(code):
            raise BaselineError(f"{path}:{number}: {code!r} is not an error code of the form HRMnnn")
        if not what.strip():
            raise BaselineError(f"{path}:{number}: empty 'what' field (use '*' to accept any)")
        baseline.entries.append(Entry(file_path, scope, code, what, number))
    return baseline


def load(path: str) -> Baseline:
    """Read a baseline; a missing file is an empty baseline."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return Baseline(path)
    except OSError as exc:
        raise BaselineError(f"{path}:1: cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BaselineError(f"{path}:{line}: not UTF-8 text") from None
    return parse(text, path)


def render(header: Iterable[str], entries: Iterable[Entry]) -> str:
    """The file's text: header comments, then the entries sorted."""
    lines = list(header)
    body = sorted(entry.render() for entry in entries)
    if lines and body:
        lines.append("")
    lines.extend(body)
    return "\n".join(lines) + "\n" if lines else ""


def write_atomic(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves the old file whole."""
    directory = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(prefix=".hermetic-baseline.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
