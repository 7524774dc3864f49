"""HRM106: a child process started without ``cwd=`` when what it runs reads the working directory."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.argv import ArgvReader, enclosing_values
from flake8_hermetic.facts.cwd_dependence import CwdJudge
from flake8_hermetic.facts.processes import SPAWNER_CALLS, ChildProcess, child_words
from flake8_hermetic.rules.leaks.wrapped_spawns import WrappedSpawns
from flake8_hermetic.nodes import DEF_TYPES
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.rules.leaks.faked_spawns import faked_spawner_call
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.leaks.cwd import CWD_FIXTURES, changes_cwd
from flake8_hermetic.rules.leaks.flow import under_main_guard
from flake8_hermetic.rules.leaks.lifecycle import SETUP_METHODS
from flake8_hermetic.violation import Violation


class ChildWithoutCwdRule(WrappedSpawns, Rule):
    """
    Flags a child process started without `cwd=` in a test file when what it runs writes into the working directory.

    ## Why is this bad?
    A child inherits the working directory of the test run, which is
    usually the repository checkout. A child that works relative to it (a
    build tool, `git`, `pip install -e .`, a script named by a relative
    path, a shell redirection into `out.log`) writes into the checkout,
    where an assertion about `tmp_path` cannot see it and a careless commit
    can pick it up, or behaves differently depending on where pytest was
    started (and on each xdist worker). The write happens in another
    process, so no line of the test shows it.

    Reported when the command line says the child depends on the
    directory: it runs `git`, a tool that finds its project, configuration
    or cache there (`make`, `tox`, `nox`, `npm`, `coverage`, `flake8`,
    `mypy`, `pyright`, `pyinstaller`, ...), or one that works on it when
    given no path (`pytest`, `ruff`, `black`, `isort`, `find`,
    `python -m build`); `pip wheel`/`pip download` without a target
    directory; `setup.py`; `python -m` of a module that is not part of the
    interpreter (the working directory comes first on the child's
    `sys.path`); a `-c` snippet that opens a relative path or reads the
    working directory; a program, script or argument given as a relative
    path (`scripts/gen.py`, `.`, `notes.txt`, `tests`); a file utility
    (`touch`, `rm`, `tar`, `cat`, ...) given a relative operand; an
    interactive shell; a shell redirection to a relative file. The argv
    is read through names assigned in the same function or at module
    level (`cmd = [...]`, `cmd += [...]`, `" ".join(cmd)`).

    A wrapper of a spawner in the same file, a function or method that
    runs the command its caller gives (`def run_cmd(*args, cwd=None):
    return subprocess.run(args, cwd=cwd)`, `["git", *args]`, or a `cmd`
    parameter), is judged at each call after its definition, with the
    caller's words and keywords (`run_cmd("git", "init", "repo")` is
    flagged; `run_cmd(..., cwd=tmp_path)` is not); the wrapper's own line
    stays quiet unless it is flagged itself. A wrapper defined in another
    module of the test tree and imported at module level
    (`from tests.helpers import run_cmd`, `from .helpers import run_cmd`,
    `helpers.run_cmd(...)`), read from source by the project model, is
    judged at its calls the same way.

    Covered: `subprocess.run/call/check_call/check_output/Popen`,
    `asyncio.create_subprocess_exec/_shell`, `os.system`, `os.popen`,
    `os.spawn*`, `pexpect.spawn/run`.

    ## Example
    ```python
    def test_init(tmp_path):
        subprocess.run(["git", "init", "repo"], check=True)
    ```

    ## Use instead
    ```python
    def test_init(tmp_path):
        subprocess.run(["git", "init", "repo"], cwd=tmp_path, check=True)
    ```

    **Only a child that writes where it runs is reported.** Of the
    reasons above, those that read (a relative script, input or module, a
    listing, an interactive shell, a tool that only reads its
    configuration) are left alone: the guard's proof on real suites found
    none of them leaving anything in the checkout.

    ## Off by default
    Turn it on with `--extend-select=HRM106` (or `extend-select` in the
    config). On the held-out half of the suites it was measured on and never
    tuned against (docs/precision.md), 0 of 28 of its findings were hazards
    a maintainer would fix (0%), under the 80% a default-on rule must reach:
    27 were children started from a test whose base class, defined
    in another module of the test tree, changes into the tests' directory in
    `setUp` and restores it in `tearDown`, so the relative paths resolve
    where the suite means them to; and interactive shells that only echo. It
    would need the project model to carry a base class's or a fixture's
    deliberate working directory into the child's, and to know which
    programs read their working directory at all.

    ## Options
    `--hermetic-readonly-commands`: comma-separated command prefixes that
    only read, and may run anywhere (default: `git rev-parse`, `git status`,
    `git log`, `git diff`, `git show`, `git ls-files`, `git check-ignore`,
    `git config --get`). A command whose last word is `--version` or
    `--help` is always allowed.

    ## Known problems
    A child is judged by its command line, and nothing there says it
    depends on the directory for most children; they are left alone:
    `[sys.executable, "-c", snippet]` whose snippet (a literal, or a name
    assigned one) touches no relative path, and one whose snippet cannot
    be read; scripts given by an absolute path or an expression (usually
    built from `__file__` or `tmp_path`); `python -I`/`-P` (no working
    directory on `sys.path`) and `python -m` of a standard-library module
    (`json.tool`, `venv`, CPython's `test`) without relative arguments;
    programs such as `echo`, `lsof`, `stty`, `readelf` whose arguments
    are options, numbers, absolute paths or expressions; and an argv that
    cannot be read at all (a helper's parameter, the result of a call):
    the helper's callers decide what it runs, and it is their line that
    would need the directory. Also left alone: `python -m` of the package
    under test or of an installed one (a package the file imports, or
    whose directory holds the file) when no argument is a relative path:
    from the checkout or from site-packages, the child imports the package
    under test, and writes nothing relative; a tool given its root,
    project or configuration by an absolute path or an expression
    (`--rootdir`, `--config`, `--config-file`, `--rcfile`, `-c`,
    `--project`, `-C`, `--prefix`, ...), as git's `-C` gives git its
    repository; `git init DIR` and `git clone URL DIR` with `DIR` absolute
    or an expression; a call with `**kwargs`;
    git's own `-C DIR`, `--git-dir` and `--work-tree`; a child started
    inside a `with` whose manager changes the working directory
    (`contextlib.chdir()`, `os_helper.change_cwd()`, `temp_cwd()`,
    `path.as_cwd()`), after a `chdir` that lasts (`monkeypatch.chdir()`,
    `os.chdir()`, `self.enterContext(change_cwd(...))`) earlier in the
    function or in the TestCase's `setUp`, and in a test that takes
    pytest's `pytester` or `testdir` (both move into their own
    directory); and module code under `if __name__ == "__main__":`, which
    runs only when the file is executed as a script. A snippet's imports are not followed: `python -c "import
    mypkg"` also reads the working directory first on `sys.path`.
    """

    code = "HRM106"
    principles = ("reads-only", "faked-spawner")
    narrowed = ("it flagged every child whose command line depends on the working directory; it now flags"
                " one that writes there (prove found no read-only child leaking).")
    default_on = False
    message = (
        "{name}() runs, in the inherited working directory (the checkout), a child that {why}; {advice}"
    )

    calls = SPAWNER_CALLS
    options = (
        OptionSpec(
            "readonly-commands", "phrases",
            (
                "git rev-parse",
                "git status",
                "git log",
                "git diff",
                "git show",
                "git ls-files",
                "git check-ignore",
                "git config --get",
            ),
            "Comma-separated command prefixes (e.g. 'git status') that a child "
            "process may run without cwd= (HRM106).",
            convert=lambda commands: tuple(tuple(command.split()) for command in commands),
        ),
    )

    __slots__ = ("_wrappers",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.learn_imported_wrappers()

    def _judge(self, node: ast.Call, child: ChildProcess) -> Iterator[Violation]:
        if child.keyword("cwd") is not None or child.has_unpacked_kwargs or faked_spawner_call(self.ctx, child.name):
            return
        if self.directory_chosen(node) or self.in_script_entry_point():
            return
        reader = ArgvReader(enclosing_values(self.ctx), self.ctx.resolve)
        words = child_words(child, reader, node.lineno)
        if not words:
            return  # nothing on the call says what it runs
        judge = CwdJudge(reader, node.lineno, self.ctx.settings.option("readonly-commands"), self._own_package)
        why = judge.command(words)
        if why is not None and judge.writes:  # principle reads-only: a child that only reads cannot leak
            yield self.report(node, name=child.name, why=why, advice=CWD_ADVICE)

    def _own_package(self, top: str) -> bool:
        """Whether ``top`` is a package the test file imports, or one whose
        directory holds the file (the project's own, or an installed one):
        the child imports the same package from the checkout or from
        site-packages."""
        return top in self.ctx.per_function(self.ctx.tree, _imported_packages, names=False) or (
            top in self.ctx.path.replace("\\", "/").split("/")[:-1]
        )

    def in_script_entry_point(self) -> bool:
        """Module code under ``if __name__ == "__main__":`` runs when the file
        is executed as a script (by tox, by hand), never in a test run."""
        return self.ctx.function is None and under_main_guard(self.ctx)

    def directory_chosen(self, node: ast.Call) -> bool:
        """Whether the test has already moved to a directory of its own: the
        call runs inside a `with` that changes the working directory, after
        such a change in the same function (or the TestCase's setUp), or in
        a test that takes pytest's `pytester`/`testdir` (they chdir into
        their own directory)."""
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and on_path not in ancestor.items:
                if any(changes_cwd(self.ctx, item.context_expr) for item in ancestor.items):
                    return True
        for scope in reversed(self.ctx.scopes):
            if scope.kind != "function":
                continue
            function = scope.node
            arguments = function.args  # type: ignore[attr-defined]
            if any(a.arg in CWD_FIXTURES for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)):
                return True
            moved = self.first_move(function)
            if moved and moved < node.lineno:
                return True
        class_scope = self.ctx.class_scope
        if class_scope is not None and class_scope.is_testcase_class:
            for statement in class_scope.node.body:  # type: ignore[attr-defined]
                if isinstance(statement, DEF_TYPES) and statement.name in SETUP_METHODS and self.first_move(statement):
                    return True
        return False

    def first_move(self, function: ast.AST) -> int:
        """The first line of ``function`` that changes the working directory
        for the rest of it, or 0 (see :func:`_first_cwd_change`)."""
        return self.ctx.per_function(function, _first_cwd_change)


CWD_ADVICE = "pass cwd= a directory of the test's own"


def _imported_packages(tree: ast.AST, ctx: Context) -> frozenset[str]:
    """The top-level packages the module imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.partition(".")[0])
    return frozenset(found)


def _first_cwd_change(function: ast.AST, ctx: Context) -> int:
    """The first line of ``function`` that changes the working directory
    for the rest of it (a `with` item changes it for its block only), or 0."""
    nodes = list(ast.walk(function))
    scoped = {id(item.context_expr) for item in nodes if isinstance(item, ast.withitem)}
    lines = [
        sub.lineno for sub in nodes
        if isinstance(sub, ast.Call) and id(sub) not in scoped and changes_cwd(ctx, sub)
    ]
    return min(lines, default=0)
