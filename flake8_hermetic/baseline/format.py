"""The baseline file: one known violation per line, ``where<TAB>code<TAB>what``.

Paths are POSIX and relative to the project root (the directory of the
config that configures the pack, see :func:`flake8_hermetic.root.project_root`),
wherever the file itself lives. The file is read
strictly: a line that cannot be understood is refused with ``FILE:LINE:
reason`` rather than skipped, since a skipped line would silently turn a
known violation into a failure, or worse, hide that a line was lost.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from flake8_hermetic.root import inside, lexically_inside, real_location
from flake8_hermetic.safeio import kind_of, read_regular
from flake8_hermetic.testfiles import to_posix

BASELINE_NAME = "hermetic-baseline.txt"  # its default name, next to the config
ANY = "*"
CODE_FORM = re.compile(r"HRM[0-9]{3}")  # with fullmatch: `$` would pass a trailing newline, `\d` any Unicode digit
CONFLICT_MARKERS = ("<<<<<<<", "=======", ">>>>>>>", "|||||||")
WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")
TEMPORARY_PREFIX = ".hermetic-baseline."
# The runtime guard's codes: their entries belong to the guard, never to the static side.
RUNTIME_PREFIX = "HRM6"
NEW_FILE_HEADER = (
    "# flake8-hermetic baseline: known violations, accepted until they are fixed.",
    "# A new violation fails; when you fix one, delete its line (flake8-hermetic baseline prune).",
)


def is_runtime(code: str) -> bool:
    """Is ``code`` the runtime guard's (``HRM6xx``)? The static commands never judge,
    drop or rewrite such an entry; the guard touches nothing else."""
    return code.startswith(RUNTIME_PREFIX)


class BaselineError(Exception):
    """A malformed baseline; ``str()`` is ``FILE:LINE: reason``."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(path, line, reason)
        self.path = path
        self.line = line
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass(frozen=True, order=True)
class Entry:
    """One accepted violation. ``scope`` is the node id after the path."""

    path: str
    scope: str
    code: str
    what: str
    line: int = field(default=0, compare=False)
    #: the ``#`` comment lines written above the entry: they belong to it, move with it when the
    #: file is sorted, and go only when it goes
    comments: tuple[str, ...] = field(default=(), compare=False)

    @property
    def where(self) -> str:
        """The where field as written: the path escaped (see :func:`escape_path`)."""
        path = escape_path(self.path)
        return f"{path}::{self.scope}" if self.scope else path

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
    footer: list[str] = field(default_factory=list)  # comments below the last entry

    @property
    def directory(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    def by_file(self) -> dict[str, list[Entry]]:
        grouped: dict[str, list[Entry]] = defaultdict(list)
        for entry in self.entries:
            grouped[entry.path].append(entry)
        return dict(grouped)


def entry_path(filename: str, directory: str) -> str:
    """The baseline's name for a linted file: POSIX, relative to ``directory``.

    ``filename`` is what flake8 calls the file (``./tests/x.py``,
    ``tests\\x.py`` from a Windows editor's ``--stdin-display-name``, or an
    absolute path); a file outside ``directory`` gets a ``../`` path that no
    entry can have.
    """
    # on POSIX a backslash is a character of a real file's name, not a separator
    keep = os.sep == "/" and "\\" in filename and os.path.lexists(filename)
    path = to_posix(filename, keep)
    if not os.path.isabs(path):
        path = os.path.abspath(path)
    try:
        return to_posix(os.path.relpath(path, directory), keep)
    except ValueError:  # another drive on Windows
        return to_posix(path, keep)


# -- escaping the path in the where field ------------------------------------
#
# A file name may hold what the line format cannot: a TAB, a line break
# (any of the separators str.splitlines() knows), "::" (the node id
# separator), a leading "#" (a comment) or "=======" (a conflict marker),
# a space that starts or ends a path component, a backslash (refused as a
# Windows separator), bytes that are not UTF-8. Such characters are written
# as %XX (the UTF-8 bytes, upper-case hex) and read back; every other
# character, and so every ordinary path, is written as it is.

#: escaped wherever they appear ("%" so that a literal "%41" stays itself)
_ALWAYS_ESCAPED = frozenset("%\\:")
#: escaped as the first character of the where field (comment, conflict markers)
_LEADING_ESCAPED = frozenset("#<=>|")
_ESCAPE = re.compile(r"%([0-9A-F]{2})")


def _escape_char(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogateescape"))


def escape_path(path: str) -> str:
    """``path`` as the where field writes it (see above)."""
    parts = []
    for component in path.split("/"):
        chars = []
        for index, char in enumerate(component):
            edge = index == 0 or index == len(component) - 1
            if char in _ALWAYS_ESCAPED or not char.isprintable() or (char == " " and edge):
                chars.append(_escape_char(char))
            else:
                chars.append(char)
        parts.append("".join(chars))
    escaped = "/".join(parts)
    if escaped[:1] in _LEADING_ESCAPED:
        escaped = _escape_char(escaped[0]) + escaped[1:]
    return escaped


def unescape_path(field: str) -> str:
    """The path an escaped where field names; raises ``ValueError`` for a
    ``%`` that starts no ``%XX`` escape."""
    if "%" not in field:
        return field
    if field.count("%") != len(_ESCAPE.findall(field)):
        raise ValueError(f"path {field!r} has a '%' that is not an escape (write '%25' for '%')")
    data = bytearray()
    position = 0
    for found in _ESCAPE.finditer(field):
        data += field[position:found.start()].encode("utf-8", "surrogateescape")
        data.append(int(found.group(1), 16))
        position = found.end()
    data += field[position:].encode("utf-8", "surrogateescape")
    return data.decode("utf-8", "surrogateescape")


# -- the fields a program fills (the guard's node ids and findings) ----------
#
# A parametrize id, an environment variable's name or a file's name may hold
# what a line cannot: a TAB, a line break, a byte that is not UTF-8 (read as
# a lone surrogate), "::::" (an empty node id part). The guard writes such a
# scope or what with backslash escapes (\t, \n, \xff, \u2028), the same
# text on every run, so it matches itself; ordinary text is written as it is.

_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def line_safe(text: str) -> str:
    """``text`` with every character a line cannot hold (see above) escaped."""
    if text.isprintable():
        return text
    chars = []
    for char in text:
        code = ord(char)
        if char.isprintable():
            chars.append(char)
        elif char in _NAMED_ESCAPES:
            chars.append(_NAMED_ESCAPES[char])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            chars.append(f"\\x{code - 0xDC00:02x}")
        elif code <= 0xFF:
            chars.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            chars.append(f"\\u{code:04x}")
        else:
            chars.append(f"\\U{code:08x}")
    return "".join(chars)


def safe_what(what: str) -> str:
    """A what field that reads back as itself: escaped, never blank, never ``*`` by accident."""
    safe = line_safe(what)
    if safe == ANY:
        return "\\x2a"
    return safe if safe.strip() else repr(safe)


def safe_scope(scope: str) -> str:
    """A node id's part after the path that reads back as itself: escaped,
    and with the colons of a parametrize id escaped when it holds an empty
    ``::`` part (``test_x[a::::b]``)."""
    safe = line_safe(scope)
    if not safe or all(part.strip() for part in safe.split("::")):
        return safe
    bracket = safe.find("[")
    safe = safe[:bracket] + safe[bracket:].replace(":", "\\x3a") if bracket >= 0 else safe.replace(":", "\\x3a")
    if not all(part.strip() for part in safe.split("::")):
        safe = safe.replace(":", "\\x3a")
    return safe if safe.strip() else repr(safe)


def writable_entry(path: str, scope: str, code: str, what: str) -> Entry:
    """The entry a program writes for a finding, escaped so that it parses
    back to itself; ``ValueError(reason)`` for a path no entry can have (one
    that leaves the project root, absolute, not normalised)."""
    problem = _check_unescaped(path) if path else "empty path"
    if problem:
        raise ValueError(problem)
    entry = Entry(path, safe_scope(scope), code, safe_what(what))
    again = _parse_line(entry.render())  # ValueError: a field this module cannot write
    if (again.path, again.scope, again.code, again.what) != (entry.path, entry.scope, entry.code, entry.what):
        raise ValueError(f"{entry.render()!r} would read back as {again.render()!r}")
    return entry


def _check_path(raw: str) -> tuple[str, str | None]:
    """The path the field ``raw`` names, and why it is not a valid baseline path (or None)."""
    if not raw:
        return raw, "empty path"
    if raw != raw.strip():
        return raw, f"path {raw!r} has leading or trailing whitespace"
    if "\\" in raw:
        return raw, f"path {raw!r} uses backslashes; baseline paths are POSIX (a backslash in a name is written %5C)"
    if raw.startswith("/") or WINDOWS_DRIVE.match(raw):  # the raw field: a name "c:x" is written "c%3Ax"
        return raw, f"path {raw!r} is absolute; paths are relative to the project root"
    try:
        path = unescape_path(raw)
    except ValueError as exc:
        return raw, str(exc)
    return path, _check_unescaped(path)


def _check_unescaped(path: str) -> str | None:
    if path.startswith("/"):
        return f"path {path!r} is absolute; paths are relative to the project root"
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        return f"path {path!r} leaves the project root"
    if normal != path:
        return f"path {path!r} is not normalised (write {normal!r})"
    return None


def _parse_line(line: str) -> Entry:
    """One entry line; raises ``ValueError(reason)``."""
    fields = line.split("\t")
    if len(fields) != 3:
        raise ValueError(f"expected 3 TAB-separated fields (where, code, what), found {len(fields)}")
    where, code, what = fields
    raw_path, separator, scope = where.partition("::")
    file_path, problem = _check_path(raw_path)
    if problem:
        raise ValueError(problem)
    if separator and not all(part.strip() for part in scope.split("::")):
        raise ValueError(f"node id {where!r} has an empty part")
    if not CODE_FORM.fullmatch(code):
        raise ValueError(f"{code!r} is not an error code of the form HRMnnn")
    if not what.strip():
        raise ValueError("empty 'what' field (use '*' to accept any)")
    return Entry(file_path, scope, code, what)


def parse_all(text: str, path: str) -> tuple[Baseline, list[BaselineError]]:
    """Parse every line, collecting the malformed ones instead of stopping.

    The header is every comment (and the blank lines between them) above the
    first entry and a blank line; the comment lines further down belong to
    the entry below them (:attr:`Entry.comments`), and those below the last
    entry are the footer, so a rewrite keeps every comment.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    baseline = Baseline(path)
    problems: list[BaselineError] = []
    in_header = True
    blank_above = False  # a blank line above the first entry: the comments below it are that entry's
    comments: list[str] = []  # the comment lines since the last entry (or blank line, in the header)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r")
        if line.startswith(CONFLICT_MARKERS):
            problems.append(BaselineError(
                path, number,
                "merge-conflict marker; keep both sides' lines, delete the markers, "
                "then run 'flake8-hermetic baseline prune'",
            ))
            in_header = False
            continue
        if not line.strip():
            if in_header:  # a blank line closes a header block: what is above it is the header's
                baseline.header.extend([*comments, ""])
                comments = []
                blank_above = True
            continue
        if line.lstrip().startswith("#"):
            comments.append(line.rstrip())
            continue
        if in_header and not blank_above:  # one block of comments, then the entries: the header
            baseline.header.extend(comments)
            comments = []
        in_header = False
        try:
            entry = _parse_line(line)
        except ValueError as exc:
            problems.append(BaselineError(path, number, str(exc)))
            continue
        baseline.entries.append(Entry(entry.path, entry.scope, entry.code, entry.what, number, tuple(comments)))
        comments = []
    if in_header:
        baseline.header.extend(comments)
    else:
        baseline.footer.extend(comments)
    while baseline.header and not baseline.header[-1]:
        baseline.header.pop()
    while baseline.header and not baseline.header[0]:
        baseline.header.pop(0)
    return baseline, problems


def parse(text: str, path: str) -> Baseline:
    """Parse a baseline's text; raise :class:`BaselineError` on the first bad line."""
    baseline, problems = parse_all(text, path)
    if problems:
        raise problems[0]
    return baseline


def read_text(path: str) -> str | None:
    """The baseline's text, or None when there is no file."""
    try:
        data = read_regular(path)  # a FIFO, /dev/zero or a directory is refused, not read
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BaselineError(path, 1, f"cannot read: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BaselineError(path, line, "not UTF-8 text") from None


def load(path: str) -> Baseline:
    """Read a baseline; a missing file is an empty baseline."""
    text = read_text(path)
    return Baseline(path) if text is None else parse(text, path)


def render(header: Iterable[str], entries: Iterable[Entry], footer: Iterable[str] = ()) -> str:
    """The file's text: header comments, then the entries sorted, each
    below its own comments, then the footer comments."""
    lines = list(header)
    body: list[str] = []
    for entry in sorted(entries, key=Entry.render):
        body.extend(entry.comments)
        body.append(entry.render())
    if body and (lines or body[0].startswith("#")):
        lines.append("")  # the blank line that tells the header from the first entry's comments
    lines.extend(body)
    lines.extend(footer)
    return "\n".join(lines) + "\n" if lines else ""


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves the old file whole.

    The text goes to a temporary file in the same directory (so
    ``os.replace`` is a rename on one file system), is flushed to disk, and
    only then takes the old file's place. The old file's permissions are
    kept (``mkstemp`` would leave the new one readable by its owner only).
    A temporary file left by a killed process is named
    ``.hermetic-baseline.*.tmp``: nothing reads it, and it can be deleted.
    """
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = _new_file_mode()
    descriptor, temporary = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write_target(path: str, root: str | None) -> str:
    """The file a write to the baseline at ``path`` may replace: ``path``
    itself when it is a regular file or absent; a symlink's target when that
    is inside the project ``root`` (and a regular file or absent). Anything
    else (``/dev/null``, a FIFO, a directory, a link out of the project) is
    refused: ``os.replace`` would put a regular file in its place. A path
    inside the project whose directory is a symlink out of it (``ci ->
    ../elsewhere``) is refused too: the file, its lock and its temporary
    files would all land outside. ``root`` None (a report the user named on
    the command line): a symlink is followed wherever it leads."""
    if root is not None and lexically_inside(os.path.abspath(path), os.path.abspath(root)) \
            and not inside(path, root):
        real = real_location(path)
        raise BaselineError(path, 1, f"is really {real} (a symlinked directory), outside the project "
                                     f"({os.path.realpath(root)}); refusing to write there")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise BaselineError(path, 1, f"cannot write: {exc.strerror}") from None
    target = path
    if stat.S_ISLNK(mode):
        target = os.path.realpath(path)
        if root is not None and not lexically_inside(target, os.path.realpath(root)):
            raise BaselineError(
                path, 1, f"is a symlink to {target}, outside the project ({os.path.realpath(root)}); "
                         "refusing to write through it"
            )
        try:
            mode = os.stat(target).st_mode
        except FileNotFoundError:
            return target
        except OSError as exc:
            raise BaselineError(path, 1, f"cannot write: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise BaselineError(path, 1, f"is {kind_of(mode)}, not a regular file; refusing to replace it")
    return target


#: how long a baseline command waits for another one writing the same baseline
LOCK_WAIT_SECONDS = 60.0
LOCK_SUFFIX = ".lock"


@contextmanager
def locked(path: str, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold the lock of the baseline at ``path`` (a file ``PATH.lock`` beside
    it, locked with ``flock`` on POSIX and ``msvcrt.locking`` on Windows).

    Two ``regenerate``/``prune`` runs at once would each write what they
    read plus their own changes, and the later write would drop the earlier
    one's entries: each command reads the baseline again under the lock,
    then writes. The lock is released when the process dies, so a killed
    run leaves nothing to clean up; the lock file is removed on release
    (POSIX), after checking it is still the file that was locked.
    """
    lock_path = path + LOCK_SUFFIX
    deadline = time.monotonic() + wait
    while True:
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)  # OSError: the caller's "cannot write"
        try:
            while not _try_lock(descriptor):
                if time.monotonic() > deadline:
                    reason = f"another flake8-hermetic is writing this baseline (waited {wait:.0f} s on {lock_path})"
                    raise BaselineError(path, 1, reason)
                time.sleep(0.05)
            try:
                same = os.path.samestat(os.fstat(descriptor), os.stat(lock_path))
            except FileNotFoundError:
                same = False  # its holder removed it on release: lock the new one
            if same:
                break
        except BaseException:
            os.close(descriptor)
            raise
        os.close(descriptor)
    try:
        yield
    finally:
        if os.name != "nt":
            try:
                os.unlink(lock_path)
            except OSError:
                pass
        os.close(descriptor)  # closing releases the lock


def _try_lock(descriptor: int) -> bool:
    if os.name == "nt":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
