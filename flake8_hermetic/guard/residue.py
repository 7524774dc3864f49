"""What a test leaves on disk: new entries in the temp dir, the checkout and
the home directory, found by a shallow listing of a few directories.

Residue is adopted, not removed (``restorable`` is false): once reported,
it is part of the expected state.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from flake8_hermetic.guard import dirwatch
from flake8_hermetic.guard.stable import stable
from flake8_hermetic.guard.watchbase import SetWatch


def _names(directory: str, ignored: Callable[[str], bool]) -> set[str]:
    with os.scandir(directory) as entries:
        return {entry.name for entry in entries if not ignored(entry.name)}


def _listing(directory: str, ignored: Callable[[str], bool]) -> set[str]:
    """The entries of ``directory`` (none when it is gone); ``OSError`` when
    it is there but could not be listed: the caller keeps its previous
    listing and lists it again at the next look.

    A test that used up the process's descriptors (``EMFILE``) would make
    every listing fail: the guard keeps one descriptor in reserve (``SPARE``),
    and gives it up for the time of one listing (and for good at the end of
    the session, for the decision)."""
    try:
        return _names(directory, ignored)
    except (FileNotFoundError, NotADirectoryError):  # gone: nothing is left in it
        return set()
    except OSError as exc:
        if exc.errno != errno.EMFILE or not SPARE.release():
            raise
    try:
        found = _names(directory, ignored)
        # what reporting a finding imports, while the descriptor is free (once: then it is in sys.modules)
        import flake8_hermetic.guard.codes  # noqa: F401
        return found
    except (FileNotFoundError, NotADirectoryError):
        return set()
    finally:
        SPARE.keep()


class _Spare:
    """One descriptor held in reserve for a listing when a test used up the rest.

    It is an anonymous file of its own (``memfd``, else ``/dev/null``), and
    it is closed only while it is still that file: a test that closed it,
    and a descriptor that took its number since, is left alone."""

    def __init__(self) -> None:
        self.fd = -1
        self.identity: tuple[int, int] = (0, 0)

    def keep(self) -> None:
        if self.fd >= 0:
            return
        try:
            if hasattr(os, "memfd_create"):
                fd = os.memfd_create("hermetic-guard-spare", os.MFD_CLOEXEC)
            else:  # pragma: no cover - not Linux
                fd = os.open(os.devnull, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            info = os.fstat(fd)
        except OSError:
            return
        self.fd, self.identity = fd, (info.st_dev, info.st_ino)

    def release(self) -> bool:
        fd, self.fd = self.fd, -1
        if fd < 0:
            return False
        try:
            info = os.fstat(fd)
        except OSError:
            return False
        if (info.st_dev, info.st_ino) != self.identity:
            return False
        os.close(fd)
        return True


SPARE = _Spare()


# A directory's mtime changes when an entry is added, removed or renamed, so
# an unchanged mtime spares the listing, but only once the listing is older
# than the file system's timestamp granularity (coarse clocks, FAT's 2 s):
# an entry made within the same tick as the last change would not move it.
# Where the kernel reports changes (inotify, see ``dirwatch``) no mtime is read.
MTIME_TRUST = 2.0


class _Listing:
    __slots__ = ("mtime", "taken", "names")

    def __init__(self) -> None:
        self.mtime = -1
        self.taken = 0.0
        self.names: frozenset[str] = frozenset()


def ignore_matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    exact = frozenset(p for p in patterns if not any(c in p for c in "*?["))
    globs = tuple(p for p in patterns if p not in exact)

    def ignored(name: str) -> bool:
        return name in exact or any(fnmatch.fnmatchcase(name, glob) for glob in globs)

    return ignored


class Residue(SetWatch):
    """New entries in a few directories: a shallow listing of each, never a walk.

    A directory is listed again only when it may have changed: the notifier
    reported an event in it, or (where it cannot watch it) its mtime moved.
    A listing that fails keeps the previous one, and the directory is listed
    again at the next look (``failures`` says so to the monitor)."""

    restorable = False

    def __init__(self, kind: str, directories: dict[str, str], ignore: Sequence[str],
                 notifier: dirwatch.Notifier | None = None) -> None:
        self.kind = kind
        self.directories = directories  # absolute path -> the label of its entries ("" for the top)
        self.ignored = ignore_matcher(ignore)
        self.cache = {directory: _Listing() for directory in directories}
        self.state: frozenset[str] = frozenset()
        self.notifier = notifier
        self.quiet_when_notified = False  # every directory is watched by the notifier and was listed
        # listings that failed (the place, the reason) and, with an empty reason, that succeeded again
        # after a failure; the monitor shares one list among its watches and reads it after a look
        self.failures: list[tuple[str, str]] = []
        self.unlisted: set[str] = set()  # directories whose last listing failed
        self.seen = -1  # the notifier's count of readings at this watch's last take
        SPARE.keep()
        if notifier is not None:  # watched before the first listing: no change falls between the two
            for directory in directories:
                notifier.add(directory)

    def take(self) -> frozenset[str]:
        notifier = self.notifier
        moved: Any = ()
        if notifier is not None:
            # answered from the look's one reading of the events (``Monitor`` reads them first); a take
            # outside a look, with no reading since this watch's last take, reads them itself
            reads = notifier.reads
            if reads == self.seen:
                notifier.look()
                reads = notifier.reads
            self.seen = reads
            if self.quiet_when_notified and not notifier.moved:
                return self.state  # every directory watched by the kernel, listed, and no event at all since
            moved = notifier.moved_in(self.directories)
        changed = False
        now = 0.0
        for directory, listing in self.cache.items():
            if notifier is not None and directory in notifier.watched:
                if listing.taken and directory not in moved:
                    continue
                mtime = 0
            else:
                try:
                    mtime = os.stat(directory).st_mtime_ns
                except OSError:
                    mtime = -2
                if mtime == listing.mtime and listing.taken - mtime / 1e9 > MTIME_TRUST:
                    continue
            prefix = self.directories[directory]
            try:
                found = _listing(directory, self.ignored)
            except OSError as exc:  # kept as it was, and listed again at the next look
                listing.taken = 0.0
                if directory not in self.unlisted:
                    self.unlisted.add(directory)
                    self.failures.append((self.place(directory), exc.strerror or type(exc).__name__))
                continue
            if self.unlisted and directory in self.unlisted:
                self.unlisted.discard(directory)
                self.failures.append((self.place(directory), ""))
            names = frozenset(prefix + name for name in found)
            now = now or time.time()
            listing.mtime, listing.taken = mtime, now
            if names != listing.names:
                listing.names = names
                changed = True
        if changed:
            self.state = frozenset().union(*(listing.names for listing in self.cache.values()))
        self.quiet_when_notified = notifier is not None and all(
            directory in notifier.watched and listing.taken for directory, listing in self.cache.items())
        return self.state

    def place(self, directory: str) -> str:
        """How a summary line names one of the directories."""
        prefix = self.directories.get(directory, "")
        if self.kind == "tmp":
            return "the temporary directory"
        if self.kind == "home":
            return "the home directory"
        return f"the checkout's {prefix}" if prefix else f"the {self.kind}"

    def leaks(self, expected: frozenset[str], current: frozenset[str]) -> list[str]:
        return [stable(entry) for entry in sorted(current - expected)]

    def path_of(self, entry: str) -> str | None:
        for directory, prefix in self.directories.items():
            if prefix and entry.startswith(prefix):
                return os.path.join(directory, entry[len(prefix):])
        top = [directory for directory, prefix in self.directories.items() if not prefix]
        return os.path.join(top[0], entry) if top else None
