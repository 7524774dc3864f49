"""Paths in the shared temp directory: the calls that name it and the calls
that carry a path on unchanged.
"""

from __future__ import annotations

GETTEMPDIR = frozenset({"tempfile.gettempdir", "tempfile.gettempdirb"})
PATH_JOINERS = frozenset({"os.path.join", "posixpath.join", "ntpath.join", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})
#: calls whose result is still the same place on disk (a string or a Path)
PATH_CARRIERS = frozenset({
    *PATH_JOINERS, "pathlib.PurePosixPath", "str", "bytes", "os.fspath", "os.fsencode", "os.fsdecode",
    *(f"{module}.{function}" for module in ("os.path", "posixpath", "ntpath") for function in (
        "join", "normpath", "abspath", "realpath", "expanduser", "expandvars", "normcase", "dirname",
    )),
})
