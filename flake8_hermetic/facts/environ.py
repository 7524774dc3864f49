"""The process environment and the operator's home, by canonical name: the
environment mapping, its getters, the calls that read the home directory,
and a literal key that names the home (``"HOME"``, ``b"USERPROFILE"``)."""

from __future__ import annotations

import ast

from flake8_hermetic.facts.hostpins import HOME_VARIABLES

ENVIRON = frozenset({"os.environ", "os.environb"})
#: calls that read one environment variable
ENV_GETTERS = frozenset({"os.getenv", "os.environ.get", "os.getenvb", "os.environb.get"})
HOME_CALLS = frozenset({"pathlib.Path.home", "pathlib.PosixPath.home", "pathlib.WindowsPath.home"})
EXPANDUSER_CALLS = frozenset({"os.path.expanduser", "posixpath.expanduser", "ntpath.expanduser"})
EXPANDUSER_METHODS = frozenset({
    "pathlib.Path().expanduser", "pathlib.PosixPath().expanduser", "pathlib.WindowsPath().expanduser",
})


def home_variable(node: ast.AST | None) -> str | None:
    """The home variable a literal key names (``"HOME"``, ``b"USERPROFILE"``), if any."""
    if isinstance(node, ast.Constant):
        value = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        if value in HOME_VARIABLES:
            return value  # type: ignore[no-any-return]
    return None
