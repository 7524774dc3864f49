"""HRM303: a path literal that is absolute only on POSIX."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.imports import module_imports
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


POSIX_ROOTS = re.compile(r"^/(?:usr|bin|etc|opt|home|var)(?:/|$)")
SHARED_TEMP = re.compile(r"^/var/tmp(?:/|$)")  # HRM108's, not a portability question
#: calls whose arguments are paths of a simulated POSIX host, judged by POSIX rules
POSIX_PATH_CALLS = ("posixpath.", "pathlib.PurePosixPath", "pathlib.PosixPath")
#: calls that ask the real host whether a file is there: a capability probe
HOST_PROBES = frozenset(
    {"os.access", "os.path.exists", "os.path.lexists", "os.path.isfile", "os.path.isdir", "os.path.islink", "shutil.which"}
    | {f"pathlib.Path().{method}" for method in ("exists", "is_file", "is_dir", "is_symlink")}
)


class PosixAbsolutePathRule(Rule):
    """
    Flags a POSIX-only absolute path literal (`/usr/...`, `/bin/...`, `/etc/...`, `/opt/...`, `/home/...`, `/var/...`) in a test file.

    ## Why is this bad?
    A test that needs "some absolute path" and writes `"/usr/bin/tool"`
    means an absolute path on every host, but the literal is only absolute
    on POSIX. On Windows it has no drive, so `os.path.isabs()` says no
    (since Python 3.13), `Path.resolve()` glues the current drive on, and
    comparisons with paths the code builds from the host fail. The test is
    green on Linux and macOS and red on Windows for a reason unrelated to
    the feature.

    Not flagged:
    - a literal given to `posixpath` or `PurePosixPath`, compared with what
      they return, or anywhere in a module that imports them: such a file
      simulates a POSIX host on purpose and its paths follow POSIX rules;
    - a probe of the real host (`os.access("/bin/bash", os.X_OK)`,
      `os.path.exists(...)`, `Path(...).exists()`, `shutil.which(...)`):
      asking whether the host has a file is the capability check HRM304
      recommends, not a fixture;
    - a literal holding whitespace (a command line such as
      `"/usr/bin/env python -u"`, not a path), docstrings, and `/var/tmp`
      (a shared temporary location: HRM108).

    ## Example
    ```python
    def test_resolves_tool():
        assert find_tool(search=["/usr/bin"]) == Path("/usr/bin/tool")
    ```

    ## Use instead
    ```python
    def test_resolves_tool(tmp_path):
        bin_dir = Path(tmp_path.anchor, "usr", "bin")
        assert find_tool(search=[bin_dir]) == bin_dir / "tool"
    ```
    Build the path from the host: `tmp_path.anchor` is `/` on POSIX and
    `C:\\` on Windows, so the result is absolute on both. (`Path(os.sep,
    "usr")` is rooted but has no drive on Windows.) A small helper such as
    `host_abs("usr", "bin")` keeps the intent readable.

    ## Options
    None.

    ## Known problems
    A string that only looks like a path (an interpreter named in a
    shebang being parsed, the text `os.path.commonprefix` is tested on) is
    flagged. The rule is off by default for that reason: turn it on for a
    suite that must pass on Windows.
    """

    code = "HRM303"
    message = "'{path}' is absolute only on POSIX (no drive on Windows); build fixture paths from the host, e.g. Path(tmp_path.anchor, ...)"
    default_on = False

    __slots__ = ("_simulates_posix",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._simulates_posix: bool | None = None

    def _module_simulates_posix(self) -> bool:
        if self._simulates_posix is None:
            self._simulates_posix = any(
                target.startswith(POSIX_PATH_CALLS) or target == "posixpath"
                for target in module_imports(self.ctx.tree).values()
            )
        return self._simulates_posix

    def visit_Constant(self, node: ast.Constant) -> Iterator[Violation]:
        value = node.value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if not isinstance(value, str) or not POSIX_ROOTS.match(value) or SHARED_TEMP.match(value):
            return
        if any(character.isspace() for character in value) or self._module_simulates_posix():
            return
        parent = self.ctx.parent
        if isinstance(parent, ast.Expr):
            return  # a docstring or a bare string statement
        if isinstance(parent, ast.JoinedStr) and (parent.values[0] is not node or self._is_format_spec(parent)):
            return
        if self._in_posix_call():
            return
        shown = value if len(value) <= 40 else value[:37] + "..."
        yield self.report(node, path=shown)

    def _is_format_spec(self, joined: ast.JoinedStr) -> bool:
        grandparent = self.ctx.parents[-2] if len(self.ctx.parents) > 1 else None
        return isinstance(grandparent, ast.FormattedValue) and grandparent.format_spec is joined

    def _is_posix_call(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and (self.ctx.call_name(node) or "").startswith(POSIX_PATH_CALLS)

    def _in_posix_call(self) -> bool:
        """An argument of a POSIX path call or of a host probe, or the value
        a POSIX path call is compared with
        (``assertEqual(posixpath.join(...), "/usr/bin")``)."""
        for ancestor in reversed(self.ctx.parents):
            if isinstance(ancestor, ast.stmt):
                return False
            if self._is_posix_call(ancestor):
                return True
            if isinstance(ancestor, ast.Call) and self.ctx.call_name(ancestor) in HOST_PROBES:
                return True
            if isinstance(ancestor, ast.Compare):
                operands: list[ast.expr] = [ancestor.left, *ancestor.comparators]
            elif isinstance(ancestor, ast.Call):
                operands = [*ancestor.args, *(k.value for k in ancestor.keywords)]
            else:
                continue
            if any(self._is_posix_call(operand) for operand in operands):
                return True
        return False
