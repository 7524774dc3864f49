"""Reading a file the user named, safely: only a regular file, and only so much of it.

A baseline, a rules file or a ``pyproject.toml`` may be anything on disk:
a FIFO (reading it waits for a writer forever), ``/dev/zero`` or
``/dev/urandom`` (endless), a directory. Each is refused at once with an
:class:`OSError` whose ``strerror`` says why, so every caller's existing
``cannot read: {strerror}`` line covers it.
"""

from __future__ import annotations

import errno
import os
import stat

#: no file the pack reads is anywhere near this
DEFAULT_LIMIT = 64 * 1024 * 1024


class UnreadableFile(OSError):
    """Not a regular file, or larger than the limit."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(errno.EINVAL, reason, path)


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular(path: str, limit: int = DEFAULT_LIMIT) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed).

    Opened without blocking, so a FIFO with no writer does not hang the
    open; refused unless it is a regular file of at most ``limit`` bytes.
    ``FileNotFoundError`` and other ``OSError`` pass through.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise UnreadableFile(path, f"{kind_of(mode)}, not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnreadableFile(path, f"larger than {limit:,} bytes")
    return data
