"""HRM404: a repository path written relative to the working directory."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.project import Role
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.collection.literals import literal_head
from flake8_hermetic.violation import Violation


PATH_TAKERS = frozenset(
    {
        "pathlib.Path",
        "pathlib.PosixPath",
        "pathlib.WindowsPath",
        "open",
        "builtins.open",
        "io.open",
        "codecs.open",
        "glob.glob",
        "glob.iglob",
        "os.listdir",
        "os.scandir",
        "os.walk",
        "os.stat",
        "os.open",
    }
)
PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PosixPath", "pathlib.WindowsPath"})
# Functions of os.path that only take the string apart: no file system, no working directory.
LEXICAL = frozenset(
    {"join", "basename", "dirname", "split", "splitext", "splitdrive", "splitroot", "normcase", "normpath", "isabs", "commonprefix", "commonpath"}
)
PATH_JOINS = frozenset({"os.path.join", "posixpath.join", "ntpath.join"})
# abspath() reads only the working directory, not the file: a location once something opens it.
PATH_WRAPPERS = PATH_JOINS | {"os.path.abspath", "posixpath.abspath", "ntpath.abspath"}
#: what may stand between a Path() and the comparison that makes it a value: containers, constructors
VALUE_HOLDERS = (ast.keyword, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred)


class RelativeRepoPathRule(Rule):
    """
    Flags a repository path written relative to the working directory, like `Path("src/pkg")`.

    A str literal (or f-string) that starts with one of the repository's
    top-level directories (`--hermetic-repo-dirs`) followed by `/`, or is
    the bare directory name, is reported when it is the first argument of
    `Path()`, `open()`, a function of `os.path` that touches the file
    system (`exists`, `isfile`, `getsize` ...), `glob.glob()`,
    `os.listdir()`, `os.scandir()` or `os.walk()`, directly or as the head
    of an `os.path.join()` or `os.path.abspath()` given to one of them. A
    leading `./` changes nothing.

    ## Why is this bad?
    A relative path is resolved against the process's current directory,
    and that is whatever directory pytest was started from: the
    repository root on the developer's machine, the test directory in an
    IDE, a temporary directory in a tox or CI job, and a directory a
    previous test switched to under xdist. The test reads the wrong file,
    finds nothing and passes vacuously, or fails only when run from
    elsewhere.

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

    ## Off by default
    Turn it on with `--extend-select=HRM404` (or `extend-select` in the
    config). On the suites held out from tuning (docs/precision.md), 0 of 1
    of its findings were hazards a maintainer would fix; a default-on rule
    must reach 80%, and the default set 90% overall: the relative path
    constant was only ever opened joined onto a `Path(__file__)` root. It
    would need to follow the constant to its uses.

    ## Options
    `--hermetic-repo-dirs` (default `src, tests, test, testing, lib, docs,
    examples`): the top-level directories whose relative paths are
    reported.

    ## Known problems
    A `Path` compared with something (`assert p == Path("src/a.py")`), also
    from inside a container or a constructor of the expected value
    (`assert f() == Result(path=Path("src"))`), is data, not a location,
    and is not reported; neither are the purely lexical helpers
    (`os.path.join`, `basename`, `splitext`, `normpath` ...) and
    `os.path.abspath` (which reads the working directory but no file) on
    their own, nor `PurePath`: `os.path.join("lib", "python3")` is often a
    fragment joined onto another root later, and `abspath("tests/x.py")`
    is as often a string for a matcher as a file to open. A joined or
    absolutised path stored in a variable and opened later is therefore
    not seen, and neither is `sys.path.insert(0, os.path.abspath("src"))`.
    """

    code = "HRM404"
    default_on = False
    # collected test modules only: a support module is imported by the runner only through a test
    # (child scripts, sample modules and __main__ scripts never are), a conftest is setup code
    roles = frozenset({Role.TEST_MODULE})
    message = "{path} resolves against the working directory, not the repository; anchor it at Path(__file__).resolve().parents[N]"
    calls = PATH_TAKERS | {"os.path.*", "posixpath.*", "ntpath.*"}
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

    def _takes_path(self, name: str) -> bool:
        if name in PATH_TAKERS:
            return True
        module, _, function = name.rpartition(".")
        return module in ("os.path", "posixpath", "ntpath") and function not in LEXICAL and function != "abspath"

    def _compared_as_data(self, node: ast.Call) -> bool:
        """``assert f() == Result(path=Path("src"))``: the Path is an expected
        value, built into a comparison, not opened."""
        child: ast.AST = node
        for parent in reversed(self.ctx.parents):
            if isinstance(parent, ast.Compare):
                return True
            if isinstance(parent, ast.Call):
                callee = dotted_name(parent.func) or ""
                if child is parent.func or not callee.rpartition(".")[2][:1].isupper():
                    return False
            elif not isinstance(parent, VALUE_HOLDERS):
                return False
            child = parent
        return False

    def _names_repo_dir(self, text: str) -> bool:
        text = text.replace("\\", "/")
        while text.startswith("./"):
            text = text[2:]
        return any(text == d or text == d + "/" or text.startswith(d + "/") for d in self.dirs)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not node.args:
            return
        name = self.ctx.call_name(node)
        if name is None or not self._takes_path(name):
            return
        literal = node.args[0]
        while isinstance(literal, ast.Call) and literal.args and self.ctx.call_name(literal) in PATH_WRAPPERS:
            # a joined fragment is only a location once it is opened: open(os.path.join("tests", "x"))
            literal = literal.args[0]
        text = literal_head(literal)
        if text is None or not self._names_repo_dir(text):
            return
        if name in PATH_CLASSES and self._compared_as_data(node):
            return
        shown = ast.get_source_segment(self.ctx.source, literal) or repr(text)
        yield dataclasses.replace(self.report(literal, path=shown), where=self.ctx.where_of(node))
