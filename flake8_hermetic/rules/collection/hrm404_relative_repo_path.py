"""HRM404: a repository path written relative to the working directory."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.project import Role
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.collection.literals import literal_head
from flake8_hermetic.violation import Violation


PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PosixPath", "pathlib.WindowsPath"})
# Calls whose miss is silent: a listing that finds nothing, an existence test that answers False.
SILENT_CALLS = frozenset({"glob.glob", "glob.iglob", "os.walk"})
SILENT_OS_PATH = frozenset({"exists", "lexists", "isfile", "isdir", "islink", "ismount"})
# ... and the Path methods that miss silently (``read_text``, ``open``, ``iterdir`` raise: a loud miss)
SILENT_METHODS = frozenset({"glob", "rglob", "walk", "exists", "is_file", "is_dir", "is_symlink", "is_mount"})
PATH_JOINS = frozenset({"os.path.join", "posixpath.join", "ntpath.join"})
# abspath() reads only the working directory, not the file: a location once something opens it.
PATH_WRAPPERS = PATH_JOINS | {"os.path.abspath", "posixpath.abspath", "ntpath.abspath"}


class RelativeRepoPathRule(Rule):
    """
    Flags a repository path written relative to the working directory where missing it is silent, like `for p in Path("src/pkg").rglob("*.py")`.

    A str literal (or f-string) that starts with one of the repository's
    top-level directories (`--hermetic-repo-dirs`) followed by `/`, or is
    the bare directory name, is reported when it reaches a call that
    answers "nothing" instead of raising when the path is not there:
    `glob.glob()`, `glob.iglob()`, `os.walk()`, the existence tests of
    `os.path` (`exists`, `isfile`, `isdir`, `islink` ...), directly or
    as the head of an `os.path.join()` or `os.path.abspath()`; or a
    `Path()` of it whose `glob`, `rglob`, `walk`, `exists`, `is_file`,
    `is_dir` or `is_symlink` is called, on the spot or through a
    module-level name bound to it. A leading `./` changes nothing.

    Narrowed from "every relative repository path": where a miss raises
    (`open()`, `read_text()`, `os.listdir()`) or is asserted
    (`assert Path("src").exists()`), a run from another directory fails
    loudly, and a suite that runs from its root (its `testpaths`) chose
    so; those findings were false on held-out code (0 of 20 real).

    ## Why is this bad?
    A relative path is resolved against the process's current directory,
    and that is whatever directory pytest was started from: the
    repository root on the developer's machine, the test directory in an
    IDE, a temporary directory in a tox or CI job, and a directory a
    previous test switched to under xdist. Where the lookup answers
    "nothing" (a glob that matches no file, a walk of a missing tree, an
    existence test that takes the other branch), the test checks nothing
    and passes vacuously from anywhere but the root.

    ## Example
    ```python
    def test_every_module_has_a_docstring():
        for path in Path("src/mypkg").rglob("*.py"):
            assert ast.get_docstring(ast.parse(path.read_text()))
    ```

    ## Use instead
    ```python
    REPO = Path(__file__).resolve().parents[1]

    def test_every_module_has_a_docstring():
        for path in (REPO / "src" / "mypkg").rglob("*.py"):
            assert ast.get_docstring(ast.parse(path.read_text()))
    ```

    ## Options
    `--hermetic-repo-dirs` (default `src, tests, test, testing, lib, docs,
    examples`): the top-level directories whose relative paths are
    reported.

    ## Known problems
    A path kept in a local variable (or returned) and globbed later is not
    followed; a module-level name is. `assert not os.path.exists("src/x")`
    is reported (it passes vacuously from elsewhere), `assert glob(...)`
    is not; an emptiness checked later (`found = glob(...)`, then `assert
    found`) is reported although it fails loudly.
    """

    code = "HRM404"
    default_on = False
    # collected test modules only: a support module is imported by the runner only through a test
    # (child scripts, sample modules and __main__ scripts never are), a conftest is setup code
    roles = frozenset({Role.TEST_MODULE})
    message = ("{path} resolves against the working directory, and a miss there is silent: the test passes"
               " vacuously when run from elsewhere; anchor it at Path(__file__).resolve().parents[N]")
    calls = SILENT_CALLS | PATH_CLASSES | {"os.path.*", "posixpath.*", "ntpath.*"}
    methods = SILENT_METHODS  # ``SOURCES.rglob(...)`` on a module-level Path
    principles = ("silent-miss",)
    narrowed = ("it flagged every repository path relative to the working directory, also where a miss raises"
                " or is asserted; it now flags only the lookups whose miss is silent.")
    options = (
        OptionSpec(
            "repo-dirs", "list", ("src", "tests", "test", "testing", "lib", "docs", "examples"),
            "Comma-separated top-level repository directories whose relative "
            "paths depend on the working directory (HRM404).",
        ),
    )

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.dirs = tuple(d.strip("/") for d in ctx.settings.option("repo-dirs") if d.strip("/"))
        self._reported: set[str] = set()  # module-level names whose repository path was reported

    def _silent_function(self, name: str) -> bool:
        if name in SILENT_CALLS:
            return True
        module, _, function = name.rpartition(".")
        return module in ("os.path", "posixpath", "ntpath") and function in SILENT_OS_PATH

    def _asserted(self, node: ast.AST) -> bool:
        """Whether ``node``'s answer is what an ``assert`` tests (a miss fails loudly), not under a ``not``."""
        for parent in reversed(self.ctx.parents):
            if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
                return False
            if isinstance(parent, ast.Assert):
                return True
            if isinstance(parent, ast.stmt):
                return False
        return False

    def _silent_use(self, node: ast.Call) -> ast.AST | None:
        """The silent method call made on the ``Path()`` ``node`` on the spot (``Path(x).rglob()``,
        ``(Path(x) / "y").exists()``), or None."""
        child: ast.AST = node
        for parent in reversed(self.ctx.parents):
            if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div) and parent.left is child:
                child = parent
                continue
            if isinstance(parent, ast.Attribute) and parent.value is child and parent.attr in SILENT_METHODS:
                return parent
            return None
        return None

    def _names_repo_dir(self, text: str) -> bool:
        text = text.replace("\\", "/")
        while text.startswith("./"):
            text = text[2:]
        return any(text == d or text == d + "/" or text.startswith(d + "/") for d in self.dirs)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in SILENT_METHODS:
            yield from self._module_path(func.value, node)
        if not node.args:
            return
        name = self.ctx.call_name(node)
        if name is None:
            return
        if name in PATH_CLASSES:
            if self._silent_use(node) is None or self._asserted(node):
                return
        elif not self._silent_function(name) or self._asserted(node):
            return
        found = self._repo_literal(node)
        if found is not None:
            literal, shown = found
            yield dataclasses.replace(self.report(literal, path=shown), where=self.ctx.where_of(node))

    def _module_path(self, receiver: ast.expr, use: ast.Call) -> Iterator[Violation]:
        """``SOURCES.rglob(...)``, ``(SOURCES / "x").exists()`` where the module binds ``SOURCES``
        once to a ``Path()`` of a repository path: reported once, at that binding (module level)."""
        while isinstance(receiver, ast.BinOp) and isinstance(receiver.op, ast.Div):
            receiver = receiver.left
        if not isinstance(receiver, ast.Name) or receiver.id in self._reported or self._asserted(use):
            return
        value = self.ctx.module_value(receiver.id)
        if not (isinstance(value, ast.Call) and value.args and self.ctx.call_name(value) in PATH_CLASSES):
            return
        found = self._repo_literal(value)
        if found is not None:
            self._reported.add(receiver.id)
            literal, shown = found
            yield dataclasses.replace(self.report(literal, path=shown), where="")

    def _repo_literal(self, call: ast.Call) -> tuple[ast.expr, str] | None:
        """The repository-relative literal ``call`` looks up (through ``os.path.join``/``abspath``), and its text."""
        literal = call.args[0]
        while isinstance(literal, ast.Call) and literal.args and self.ctx.call_name(literal) in PATH_WRAPPERS:
            # a joined fragment is only a location once it is looked up: exists(os.path.join("tests", "x"))
            literal = literal.args[0]
        text = literal_head(literal)
        if text is None or not self._names_repo_dir(text):
            return None
        return literal, ast.get_source_segment(self.ctx.source, literal) or repr(text)
