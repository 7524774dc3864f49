"""HRM3xx: portability."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from flake8_hermetic.imports import module_imports
from flake8_hermetic.facts.processes import SPAWNER_CALLS, child_process, program_name, program_word, split_words
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation

if TYPE_CHECKING:
    from flake8_hermetic.context import Context


class KillZeroProbeRule(Rule):
    """
    Flags `os.kill(pid, 0)` in a test file: a liveness probe that kills on Windows.

    ## Why is this bad?
    On POSIX, signal 0 is "check that the process exists and that I may
    signal it"; nothing is delivered. Windows has no signals: its
    `os.kill(pid, sig)` with any value other than the two console events
    calls `TerminateProcess(pid, sig)`. The probe meant to ask whether a
    process is alive ends it, with exit code 0, and the test goes on to
    assert against a process it has just destroyed (or one that belongs to
    someone else).

    ## Example
    ```python
    def test_daemon_survives_reload(daemon):
        daemon.reload()
        os.kill(daemon.pid, 0)
    ```

    ## Use instead
    ```python
    def test_daemon_survives_reload(daemon):
        daemon.reload()
        assert psutil.pid_exists(daemon.pid)
    ```
    Or route the probe through one platform helper that uses `kill(pid, 0)`
    on POSIX and `OpenProcess` on Windows.

    ## Options
    None.
    """

    code = "HRM301"
    message = "os.kill(pid, 0) terminates the process on Windows instead of probing it; use psutil.pid_exists(pid) or a platform helper"
    calls = frozenset({"os.kill"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if len(node.args) < 2 or self.ctx.call_name(node) != "os.kill":
            return
        signal = node.args[1]
        if isinstance(signal, ast.Constant) and type(signal.value) is int and signal.value == 0:
            yield self.report(node)


INTERPRETER = re.compile(r"^(?:python(?:3(?:\.\d+)?)?|py)$", re.IGNORECASE)


class InterpreterByNameRule(Rule):
    """
    Flags a child process whose command line names the interpreter: `python`, `python3`, `python3.N` or `py` as the program.

    ## Why is this bad?
    Which program answers to `python` depends on the host's `PATH`: a
    system Python without the project installed, a different minor version,
    nothing at all (a fresh Windows machine, many Linux images ship only
    `python3`, `py` exists only on Windows). The test then runs the code
    under another interpreter than the one running the test, or fails with
    `FileNotFoundError`, depending on whose machine it is.

    Read: argv[0] of a list literal, the first word of a command string
    (also an f-string's literal head), the varargs of
    `asyncio.create_subprocess_exec`, the path argument of `os.spawn*`, and
    `executable=` when it is given.

    ## Example
    ```python
    def test_cli_version(tmp_path):
        out = subprocess.run(["python", "-m", "tool", "--version"], cwd=tmp_path, capture_output=True)
        assert out.returncode == 0
    ```

    ## Use instead
    ```python
    def test_cli_version(tmp_path):
        out = subprocess.run([sys.executable, "-m", "tool", "--version"], cwd=tmp_path, capture_output=True)
        assert out.returncode == 0
    ```

    ## Options
    None.
    """

    code = "HRM302"
    message = "'{word}' runs whichever interpreter the host's PATH finds (or none); start the child with sys.executable"
    calls = SPAWNER_CALLS

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        child = child_process(node, self.ctx.call_name(node))
        if child is None:
            return
        word = program_word(child)
        if word is None:
            return
        shell = child.keyword("shell")
        if isinstance(shell, ast.Constant) and shell.value and not word.startswith(("'", '"')) and " " in word:
            first = next(iter(split_words(word, shell=False)), None)
            word = first if isinstance(first, str) else word
        if INTERPRETER.match(program_name(word)):
            yield self.report(node, word=word)


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


PLATFORM_READS = frozenset({"sys.platform", "os.name", "platform.system"})
PLATFORM_TEXT = re.compile(r"\b(?:sys\.platform|os\.name|platform\.system\s*\()")
#: a reason that cites a defect: the skip works around a platform bug, and
#: there is no capability to probe for
DEFECT_REASON = re.compile(r"\b(?:bugs?|issue|bpo-\d+|gh-\d+|crash(?:es)?|broken)\b|#\d+", re.IGNORECASE)
SKIP_CALLS = frozenset(
    {
        "pytest.mark.skipif",
        "unittest.skipIf",
        "unittest.skipUnless",
        "unittest.case.skipIf",
        "unittest.case.skipUnless",
    }
)


class PlatformSkipRule(Rule):
    """
    Flags a skip decided by the platform's name: `skipif` / `skipIf` / `skipUnless` whose condition reads `sys.platform`, `os.name` or `platform.system()`.

    ## Why is this bad?
    A platform name stands in for the thing the test really needs: symlink
    privileges, `fork`, a case-sensitive file system, a binary on `PATH`.
    The guess is wrong in both directions. A Windows runner that holds the
    symlink privilege skips a test that would have run; a Linux container
    without the capability runs a test that cannot pass. The skip also
    never expires: when the capability arrives on the skipped platform,
    nothing turns red to say the test could run there now.

    A skip whose reason cites a defect (`"see issue #12958"`, `"known OS
    bug"`, `"bpo-30807"`, `"crashes on AIX"`) works around a bug of that
    platform, with no capability to probe: it is not flagged.

    The condition is read directly, as a string condition
    (`skipif("sys.platform == 'win32'")`), and through module or class
    level names assigned from a platform read earlier in the file
    (`IS_WINDOWS = sys.platform == "win32"`).

    ## Example
    ```python
    @pytest.mark.skipif(sys.platform == "win32", reason="no symlinks on Windows")
    def test_follows_links(tmp_path):
        ...
    ```

    ## Use instead
    ```python
    def can_symlink() -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                os.symlink(tmp, os.path.join(tmp, "link"))
            except (OSError, NotImplementedError):
                return False
        return True

    @pytest.mark.skipif(not can_symlink(), reason="needs symlink privileges")
    def test_follows_links(tmp_path):
        ...
    ```
    Probe the capability the test needs, so the report names it and the
    test runs wherever the capability exists.

    ## Options
    None.

    ## Known problems
    Some tests are about one platform (the Windows registry, a macOS
    system call): the platform is then the capability. Prefer a probe of
    the API (`hasattr(os, "startfile")`) where one exists; otherwise silence
    the line.
    """

    code = "HRM304"
    message = "skip guessed from the platform's name; probe the capability the test needs (hasattr, a try-it helper) so it runs wherever that exists"
    calls = SKIP_CALLS
    default_on = False

    __slots__ = ("_platform_names",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._platform_names: set[str] = set()

    def _reads_platform(self, expr: ast.AST) -> bool:
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Attribute, ast.Name)):
                name = self.ctx.resolve(node)
                if name in PLATFORM_READS or (isinstance(node, ast.Name) and node.id in self._platform_names):
                    return True
            if not isinstance(node, ast.Lambda):
                stack.extend(ast.iter_child_nodes(node))
        return False

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        if self.ctx.at_module_level and self._reads_platform(node.value):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        self._platform_names.add(name.id)
        return iter(())

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.ctx.call_name(node) not in SKIP_CALLS:
            return
        condition = node.args[0] if node.args else None
        if condition is None:
            condition = next((k.value for k in node.keywords if k.arg == "condition"), None)
        if condition is None:
            return
        if isinstance(condition, ast.Constant) and isinstance(condition.value, str):
            # pytest evaluates a string condition with sys, os and platform in scope
            guessed = PLATFORM_TEXT.search(condition.value) is not None
        else:
            guessed = self._reads_platform(condition)
        if guessed and not self._cites_defect(node):
            yield self.report(node)

    @staticmethod
    def _cites_defect(call: ast.Call) -> bool:
        reason = call.args[1] if len(call.args) > 1 else None
        if reason is None:
            reason = next((k.value for k in call.keywords if k.arg == "reason"), None)
        texts = [reason.value] if isinstance(reason, ast.Constant) and isinstance(reason.value, str) else []
        if isinstance(reason, ast.JoinedStr):
            texts = [v.value for v in reason.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        if isinstance(reason, ast.BinOp):  # implicit concatenation across lines is one Constant already
            texts = [n.value for n in ast.walk(reason) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        return any(DEFECT_REASON.search(text) for text in texts)
