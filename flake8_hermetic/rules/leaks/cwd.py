"""The working directory: the calls, managers and fixtures that change it."""

from __future__ import annotations

import ast

from flake8_hermetic.context import Context
from flake8_hermetic.facts.names import last_name


#: pytest's own fixtures that change into their directory and back at teardown
CWD_FIXTURES = frozenset({"pytester", "testdir"})
#: pytest fixtures that chdir into their own directory for the test
CWD_CHANGER_ENDINGS = ("chdir", "_cwd", "pushd", "working_directory")


def changes_cwd(ctx: Context, node: ast.expr) -> bool:
    """A call that changes the working directory, or a context manager
    that does: `os.chdir(p)`, `monkeypatch.chdir(p)`, `contextlib.chdir(p)`,
    `os_helper.change_cwd(p)`, `temp_cwd()`, `tmpdir.as_cwd()`."""
    if not isinstance(node, ast.Call):
        return False
    last = last_name(node)
    if not last:
        last = (ctx.call_name(node) or "").rpartition(".")[2]
    return last.endswith(CWD_CHANGER_ENDINGS)
