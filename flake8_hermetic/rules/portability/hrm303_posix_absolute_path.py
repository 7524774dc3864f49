"""HRM303: a path literal that is absolute only on POSIX."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.mocks import mocked_here
from flake8_hermetic.facts.value_flow import HOST_PATH_CALLS, HOST_PATH_METHODS, flow_index
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
#: the methods among HOST_PATH_METHODS that only ask whether the file is there
PROBE_METHODS = frozenset({"exists", "is_file", "is_dir", "is_symlink"})


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

    Flagged where the literal reaches a call that hands a path to the host
    or judges it by the host's rules: `open`, the `os` and `os.path` file
    functions (`os.path.isabs`, `realpath` included), `shutil`, `glob`, a
    child process (`subprocess.run([...])`, `pexpect.spawn`), a path
    method (`Path(...).read_text()`, `.resolve()`, `.mkdir()`); directly,
    or through containers, f-strings, `/`, `os.path.join`, `Path()`, the
    function's own variables (a `for` loop over literals too) or a module
    constant.

    A literal that only reaches the code under test
    (`tool.find(search=["/usr/bin"])`) is left alone (see below). Nor is:
    - a literal given to `posixpath` or `PurePosixPath`, or anywhere in a
      module that imports them: such a file simulates a POSIX host on
      purpose and its paths follow POSIX rules;
    - a probe of the real host (`os.access("/bin/bash", os.X_OK)`,
      `os.path.exists(...)`, `Path(...).exists()`, `shutil.which(...)`):
      asking whether the host has a file is the capability check HRM304
      recommends, not a fixture;
    - a literal holding whitespace (a command line such as
      `"/usr/bin/env python -u"`, not a path), and `/var/tmp`
      (a shared temporary location: HRM108).

    ## Example
    ```python
    def test_resolves_tool():
        assert Path("/usr/bin/tool").resolve() == find_tool()
    ```

    ## Use instead
    ```python
    def test_resolves_tool(tmp_path):
        bin_dir = Path(tmp_path.anchor, "usr", "bin")
        assert (bin_dir / "tool").resolve() == find_tool()
    ```
    Build the path from the host: `tmp_path.anchor` is `/` on POSIX and
    `C:\\` on Windows, so the result is absolute on both. (`Path(os.sep,
    "usr")` is rooted but has no drive on Windows.) A small helper such as
    `host_abs("usr", "bin")` keeps the intent readable.

    ## Options
    None.

    ## Known problems
    A path handed to the code under test, which then opens or resolves
    it, is not followed there and is missed. A string that only looks like
    a path and reaches such a call (an interpreter named in a command line
    being parsed by a child) is flagged. The rule is off by default: turn
    it on for a suite that must pass on Windows.
    """

    code = "HRM303"
    message = "'{path}' is absolute only on POSIX (no drive on Windows); build fixture paths from the host, e.g. Path(tmp_path.anchor, ...)"
    default_on = False

    calls = HOST_PATH_CALLS
    methods = HOST_PATH_METHODS
    principles = ("follow-the-value",)

    __slots__ = ("_simulates_posix", "_reported")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._simulates_posix: bool | None = None
        self._reported: set[int] = set()  # a literal two calls receive is one finding

    def _module_simulates_posix(self) -> bool:
        if self._simulates_posix is None:
            self._simulates_posix = any(
                target.startswith(POSIX_PATH_CALLS) or target == "posixpath"
                for target in module_imports(self.ctx.tree).values()
            )
        return self._simulates_posix

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        carriers = self._host_arguments(node)
        if not carriers or self._module_simulates_posix():
            return
        index = self.ctx.per_function(self.ctx.tree, flow_index, names=False)
        for carrier in carriers:
            for literal in index.sources(carrier, self.ctx.resolve):
                path = self._posix_path(literal)
                if path is not None and id(literal) not in self._reported:
                    self._reported.add(id(literal))
                    yield self.report(literal, path=path if len(path) <= 40 else path[:37] + "...")

    def _host_arguments(self, node: ast.Call) -> list[ast.expr]:
        """What a call that hands a path to the host receives (its arguments,
        or a path method's receiver): none for a capability probe or a call
        patched around it."""
        name = self.ctx.call_name(node)
        if name in HOST_PATH_CALLS:
            if name in HOST_PROBES or mocked_here(self.ctx, node, lambda target: target == name):
                return []
            return [*node.args, *(keyword.value for keyword in node.keywords)]
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in HOST_PATH_METHODS and func.attr not in PROBE_METHODS:
            return [func.value, *node.args]
        return []

    @staticmethod
    def _posix_path(node: ast.Constant) -> str | None:
        value = node.value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if not isinstance(value, str) or not POSIX_ROOTS.match(value) or SHARED_TEMP.match(value):
            return None
        if any(character.isspace() for character in value):
            return None  # a command line such as "/usr/bin/env python -u", not a path
        return value
