"""HRM108: a fixed path in the machine-wide temp directory that reaches the filesystem."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from flake8_hermetic.context import Context
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.facts.processes import child_process
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import NEW_FRAMES
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.leaks.faked_spawns import faked_spawner_call
from flake8_hermetic.rules.leaks.syntax import target_names
from flake8_hermetic.rules.leaks.temp_paths import GETTEMPDIR, PATH_CARRIERS, PATH_JOINERS
from flake8_hermetic.violation import Violation


SHARED_TEMP_PREFIXES = ("/tmp/", "/var/tmp/", "/dev/shm/")
#: what the source of a file holding one of those literals must contain
SHARED_TEMP_DIRS = ("/tmp", "/dev/shm")
BASETEMP = "--basetemp="
#: os.path functions that touch the disk (the rest of os.path is string work)
OS_PATH_DISK = frozenset({
    "exists", "lexists", "isfile", "isdir", "islink", "ismount", "isjunction", "getsize", "getmtime",
    "getatime", "getctime", "samefile",
})
#: ``os.*`` calls that take no path or only compute one
OS_NOT_DISK = frozenset({"os.fspath", "os.fsencode", "os.fsdecode", "os.getenv", "os.getenvb", "os.putenv", "os.unsetenv"})
#: calls outside os/shutil/tempfile that open or create the path they are given
FILE_OPENERS = frozenset({
    "open", "io.open", "codecs.open", "sqlite3.connect", "dbm.open", "shelve.open", "fileinput.input",
    "logging.FileHandler", "logging.basicConfig", "logging.handlers.RotatingFileHandler",
    "logging.handlers.TimedRotatingFileHandler", "logging.handlers.WatchedFileHandler",
    "zipfile.ZipFile", "zipfile.Path", "tarfile.open", "tarfile.TarFile", "gzip.open", "gzip.GzipFile", "bz2.open",
    "bz2.BZ2File", "lzma.open", "lzma.LZMAFile", "glob.glob", "glob.iglob", "filecmp.cmp", "filecmp.dircmp",
    "py_compile.compile", "compileall.compile_dir", "compileall.compile_file", "wave.open", "venv.create",
})
#: Path methods that keep the path (``p.with_suffix(".bak")``) and those that touch the disk
PATH_METHODS = frozenset({"joinpath", "with_name", "with_suffix", "with_stem", "resolve", "absolute", "expanduser"})
PATH_DISK_METHODS = frozenset({
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "mkdir", "touch", "unlink", "rmdir",
    "exists", "is_file", "is_dir", "is_symlink", "is_mount", "is_socket", "is_fifo", "stat", "lstat", "chmod",
    "lchmod", "iterdir", "glob", "rglob", "walk", "rename", "replace", "symlink_to", "hardlink_to", "link_to",
    "samefile", "owner", "group", "readlink",
})
#: pytest runners whose arguments are a command line (``pytester.runpytest("--basetemp", d)``)
PYTEST_RUNNERS = frozenset({"runpytest", "runpytest_subprocess", "runpytest_inprocess", "inline_run", "spawn_pytest"})
_SINK = "sink"


GETTEMPDIR_ORIGIN = "a fixed name under gettempdir()"


def _shared_temp_text(value: object) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not isinstance(value, str):
        return None
    if value.startswith(SHARED_TEMP_PREFIXES):
        return value
    if value.startswith(BASETEMP) and value[len(BASETEMP):].startswith(SHARED_TEMP_PREFIXES):
        return value
    return None


def _literal_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and bool(node.value)


def _touches_disk(name: str) -> bool:
    """Whether the call named ``name`` reads or writes the path it is given."""
    if name in FILE_OPENERS or name.startswith(("shutil.", "tempfile.")):
        return True
    for module in ("os.path.", "posixpath.", "ntpath."):
        if name.startswith(module):
            return name[len(module):] in OS_PATH_DISK
    return name.startswith("os.") and name not in OS_NOT_DISK and not name.startswith("os.environ")


@dataclass(frozen=True)
class _Origin:
    """A shared temp location, and how its value travels: "str" (a path
    string), "path" (a pathlib object) or "argv" (a list holding it)."""

    node: ast.AST
    what: str
    kind: str


#: where a location goes: ``_SINK`` (the filesystem), the names and kind it
#: is bound to, or None (nowhere we can see)
_Fate = str | tuple[tuple[str, ...], str] | None


@dataclass(frozen=True)
class _Stop:
    """The climb of :meth:`SharedTempPathRule._follow` ends here, with ``fate``."""

    fate: _Fate


_GONE = _Stop(None)
_SUNK = _Stop(_SINK)


def _attribute_step(attribute: ast.Attribute, caller: ast.AST | None, kind: str) -> _Stop | ast.AST:
    """``p.parent`` (go on from the attribute) and ``p.with_suffix(...)``
    (go on from the call) keep a Path a location; ``p.write_text(...)``
    reaches the disk."""
    if attribute.attr == "parent" or (attribute.attr == "parents" and kind == "path"):
        return attribute
    if not (isinstance(caller, ast.Call) and caller.func is attribute):
        return _GONE
    if kind == "path" and attribute.attr in PATH_DISK_METHODS:
        return _SUNK
    if kind == "path" and attribute.attr in PATH_METHODS:
        return caller
    return _GONE


def _string_step(ancestor: ast.BinOp | ast.FormattedValue | ast.JoinedStr, kind: str) -> _Stop | str:
    """A join (``/`` makes a Path, ``+`` keeps the kind), an f-string part,
    or an f-string that passes ``--basetemp=`` (the disk)."""
    if isinstance(ancestor, ast.BinOp):
        if isinstance(ancestor.op, ast.Div):
            return "path"
        return kind if isinstance(ancestor.op, ast.Add) else _GONE
    if isinstance(ancestor, ast.FormattedValue):
        return "str"
    head = ancestor.values[0] if ancestor.values else None
    if isinstance(head, ast.Constant) and str(head.value).startswith(BASETEMP):
        return _SUNK
    return kind


def _choice_step(ancestor: ast.IfExp | ast.BoolOp | ast.Subscript, child: ast.AST, kind: str) -> _Stop | str:
    """``a if c else b`` and ``a or b`` keep the location (not as the test);
    ``argv[0]`` or ``path[:-1]`` is part of it, a string."""
    if isinstance(ancestor, ast.IfExp) and child is ancestor.test:
        return _GONE
    if isinstance(ancestor, ast.Subscript):
        return "str" if child is ancestor.value else _GONE
    return kind


def _bound_names(ancestor: ast.Assign | ast.AnnAssign | ast.NamedExpr, kind: str) -> _Fate:
    targets = ancestor.targets if isinstance(ancestor, ast.Assign) else [ancestor.target]
    names = tuple(
        name for name in (dotted_name(t) for t in targets if isinstance(t, (ast.Name, ast.Attribute)))
        if name is not None
    )
    return (names, kind) if names else None


def _loop_names(ancestor: ast.For | ast.AsyncFor | ast.comprehension, child: ast.AST, kind: str) -> _Fate:
    """``for arg in ["--basetemp", d]``: each word a string under the loop's names."""
    if child is ancestor.iter and kind == "argv":
        names = tuple(n for n in target_names(ancestor.target) if "." not in n)
        return (names, "str") if names else None
    return None


class SharedTempPathRule(Rule):
    """
    Flags a fixed path in the machine-wide temp directory (`/tmp/...`, `/dev/shm/...`, a fixed name under `gettempdir()`) that reaches the filesystem.

    ## Why is this bad?
    A fixed path in a shared directory is shared by every test worker,
    every checkout on the machine and every user of it. Two workers that
    run the test at the same time write over each other's files, a file
    left by an earlier run (or by another user, with other permissions)
    changes the verdict, and nothing removes it afterwards. The path also
    does not exist on Windows, and it ignores `TMPDIR`.

    The location is a string or bytes literal (or the literal start of an
    f-string) that starts with `/tmp/`, `/var/tmp/` or `/dev/shm/`, a
    `--basetemp=` option naming such a path, or a fixed name joined onto
    `tempfile.gettempdir()` (`os.path.join(gettempdir(), "x")`,
    `Path(gettempdir()) / "x"`, `gettempdir() + "/x"`). It is flagged
    when it reaches the filesystem in the same function, directly or
    through a join (`os.path.join`, `Path(...)`, `/`, `+`, an f-string,
    `str()`), a local name or a module-level constant it was assigned to:
    a path argument of `open()`, of an `os`, `os.path` (`exists`,
    `isdir`, ...), `shutil` or `tempfile` call, of `sqlite3.connect`,
    `logging.FileHandler`, `zipfile`, `tarfile` and the like; a `Path`
    method that touches the disk (`write_text`, `mkdir`, `touch`,
    `open`, `exists`, ...); a socket's `bind()` (a Unix socket); a word
    of a child process's command line or its `cwd=`; an argument of
    `pytester.runpytest()`.

    A literal that never reaches one of these is left alone: in the
    suites this rule was measured on, most such literals are data (a
    module's `__file__` set for a `repr` check, a path handed to a mock,
    a CLI option's default, a parametrize row), and a literal inside an
    `assert`, a comparison or an `assert*` call is data too. A helper of
    the project that writes to the path it is given (`dump("/tmp/x")`)
    is not seen, and neither is a literal that spells the directory with
    escapes (`"\\x2ftmp/x"`): the rule reads constants only in a file whose
    text says `/tmp` or `/dev/shm`.

    ## Example
    ```python
    def test_dump():
        Path("/tmp/state.json").write_text(dump(STATE))
        assert load("/tmp/state.json") == STATE
    ```

    ## Use instead
    ```python
    def test_dump(tmp_path):
        (tmp_path / "state.json").write_text(dump(STATE))
        assert load(tmp_path / "state.json") == STATE
    ```

    A fixed name under `gettempdir()` in a file below a `conftest.py` that
    points `tempfile.tempdir` (or `TMPDIR`) at a directory made for the run
    and removes it at the end is not flagged: that directory belongs to one
    worker of one run (runner-level isolation, read by the project model).
    A literal `/tmp/...` path stays flagged.

    ## Options
    None.

    ## Known problems
    The path is followed inside one function only: a fixture or helper that
    returns `/tmp/x` for the test to write, or a project helper that writes to
    the path it is given (`dump("/tmp/x")`), is not seen. A `TMPDIR` the CI
    points elsewhere does not make a literal `/tmp/...` path private, and is
    not taken into account.
    """

    code = "HRM108"
    principles = ("faked-spawner",)
    message = "{what} is a fixed path shared by every worker and run; use tmp_path (or a mkdtemp() with cleanup)"
    calls = PATH_JOINERS
    methods = frozenset({"joinpath"})

    __slots__ = ("_bound", "_constants", "_reported")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: function (id, 0 for the module) -> name -> the location it holds
        self._bound: dict[int, dict[str, _Origin]] = {}
        self._reported: set[tuple[int, int]] = set()
        self._constants: dict[str, _Origin] | None = None
        # Names matter only where one may hold a shared temp path; most files
        # have none, and then the walk need not stack a single Name.
        if self.constants():
            self._follow_names()
        # Nor a single constant, in a file whose text names no shared temp
        # directory (a literal spelled with escapes, "\x2ftmp/", is not seen).
        source = ctx.source
        if any(directory in source for directory in SHARED_TEMP_DIRS):
            ctx.dispatch_to(ast.Constant, self.on_constant)

    # -- where a location starts -------------------------------------------
    def on_constant(self, node: ast.Constant) -> Iterator[Violation]:
        text = _shared_temp_text(node.value)
        if text is None:
            return
        parent = self.ctx.parent
        if isinstance(parent, (ast.JoinedStr, ast.Expr)):
            return  # an f-string part is judged with its f-string; a bare string is a docstring
        yield from self._judge(node, _Origin(node, repr(node.value), "str"))

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Iterator[Violation]:
        if not node.values or isinstance(self.ctx.parent, ast.FormattedValue):
            return
        head = node.values[0]
        if isinstance(head, ast.Constant) and _shared_temp_text(head.value) is not None:
            yield from self._judge(node, _Origin(node, f"an f-string starting {head.value!r}", "str"))
        elif isinstance(head, ast.FormattedValue) and self._is_gettempdir(head.value):
            if len(node.values) > 1 and isinstance(node.values[1], ast.Constant):
                yield from self._judge(node, _Origin(node, GETTEMPDIR_ORIGIN, "str"))

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self._gettempdir_join(node):
            yield from self._judge(node, _Origin(node, GETTEMPDIR_ORIGIN, self._join_kind(node)))

    def visit_BinOp(self, node: ast.BinOp) -> Iterator[Violation]:
        parent = self.ctx.parent
        if isinstance(parent, ast.BinOp) and parent.left is node and self._gettempdir_binop(parent):
            return  # judged once, on the outermost join
        if self._gettempdir_binop(node):
            yield from self._judge(node, _Origin(node, GETTEMPDIR_ORIGIN, self._join_kind(node)))

    def _join_kind(self, join: ast.Call | ast.BinOp) -> str:
        """What a join onto gettempdir() makes: a str (``os.path.join``, ``+``) or a Path."""
        if isinstance(join, ast.BinOp):
            return "path" if isinstance(join.op, ast.Div) else "str"
        return "str" if (self.ctx.call_name(join) or "").endswith(".join") else "path"

    def _gettempdir_join(self, node: ast.Call) -> bool:
        name = self.ctx.call_name(node) or ""
        if name in PATH_JOINERS:
            args = node.args
            return len(args) >= 2 and self._is_gettempdir(args[0]) and any(_literal_name(a) for a in args[1:])
        if isinstance(node.func, ast.Attribute) and node.func.attr == "joinpath":
            return self._is_gettempdir(node.func.value) and any(_literal_name(a) for a in node.args)
        return False

    def _gettempdir_binop(self, node: ast.BinOp) -> bool:
        if not isinstance(node.op, (ast.Div, ast.Add)) or not _literal_name(node.right):
            return False
        left = node.left
        # gettempdir() + os.sep + "x" parses as (gettempdir() + os.sep) + "x"
        while isinstance(left, ast.BinOp) and isinstance(left.op, (ast.Div, ast.Add)):
            left = left.left
        return self._is_gettempdir(left)

    def _is_gettempdir(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            name = self.ctx.call_name(node)
            if name in GETTEMPDIR:
                return True
            if name in PATH_JOINERS and node.args:
                return self._is_gettempdir(node.args[0])
        return False

    # -- where it goes -------------------------------------------------------
    def _judge(self, node: ast.AST, origin: _Origin) -> Iterator[Violation]:
        if self._is_data() or self._never_runs(node):
            return
        if origin.what == GETTEMPDIR_ORIGIN and self.ctx.project.temp_redirected:
            return  # runner-level isolation: gettempdir() is this run's own directory, removed at exit
        fate = self._follow(node, origin.kind)
        if fate == _SINK:
            yield from self._report_once(origin, origin.node)
        elif isinstance(fate, tuple):
            names, kind = fate
            scope = self._bound.setdefault(self._function_key(), {})
            for name in names:
                scope[name] = _Origin(origin.node, origin.what, kind)
            self._follow_names()

    def _follow_names(self) -> None:
        """From now on, see the names and attributes the walk reaches."""
        self.ctx.dispatch_to(ast.Name, self.on_name)
        self.ctx.dispatch_to(ast.Attribute, self.on_attribute)

    def on_name(self, node: ast.Name) -> Iterator[Violation]:
        if isinstance(node.ctx, ast.Load):
            yield from self._use(node, node.id)

    def on_attribute(self, node: ast.Attribute) -> Iterator[Violation]:
        if isinstance(node.ctx, ast.Load) and self._bound.get(self._function_key()):
            text = dotted_name(node)
            if text is not None and "." in text:
                yield from self._use(node, text)

    def _use(self, node: ast.AST, name: str) -> Iterator[Violation]:
        local = self._bound.get(self._function_key())
        origin = local.get(name) if local else None
        at_use = False
        if origin is None:
            if self.ctx.function is None:
                return
            origin = self.constants().get(name)
            if origin is None:
                return
            at_use = True
        fate = self._follow(node, origin.kind)
        if fate == _SINK:
            if at_use:
                yield from self._report_once(_Origin(node, f"{name} ({origin.what})", origin.kind), origin.node)
            else:
                yield from self._report_once(origin, origin.node)
        elif isinstance(fate, tuple):
            names, kind = fate
            scope = self._bound.setdefault(self._function_key(), {})
            for bound in names:
                scope[bound] = _Origin(origin.node, origin.what, kind)

    def _report_once(self, origin: _Origin, source: ast.AST) -> Iterator[Violation]:
        key = (self._function_key() if origin.node is not source else 0, id(source))
        if key not in self._reported:
            self._reported.add(key)
            yield self.report(origin.node, what=origin.what)

    def _function_key(self) -> int:
        function = self.ctx.function
        return 0 if function is None else id(function)

    def constants(self) -> dict[str, _Origin]:
        """Module-level ``NAME = "/tmp/x"`` (or an f-string, or a gettempdir join)."""
        if self._constants is None:
            self._constants = {}
            for stmt in self.ctx.tree.body:
                if not isinstance(stmt, ast.Assign) or not all(isinstance(t, ast.Name) for t in stmt.targets):
                    continue
                origin = self._origin_of(stmt.value)
                if origin is not None:
                    for target in stmt.targets:
                        self._constants[target.id] = origin  # type: ignore[attr-defined]
        return self._constants

    def _origin_of(self, value: ast.expr) -> _Origin | None:
        if isinstance(value, ast.Constant) and _shared_temp_text(value.value) is not None:
            return _Origin(value, repr(value.value), "str")
        if isinstance(value, ast.JoinedStr) and value.values:
            head = value.values[0]
            if isinstance(head, ast.Constant) and _shared_temp_text(head.value) is not None:
                return _Origin(value, f"an f-string starting {head.value!r}", "str")
        if (isinstance(value, ast.Call) and self._gettempdir_join(value)) or (
            isinstance(value, ast.BinOp) and self._gettempdir_binop(value)
        ):
            return _Origin(value, GETTEMPDIR_ORIGIN, self._join_kind(value))
        return None

    def _never_runs(self, node: ast.AST) -> bool:
        """Under ``if 0:`` or ``if False:``: code kept for debugging by hand,
        which no run executes."""
        chain = [*self.ctx.parents, node]
        for index, ancestor in enumerate(chain[:-1]):
            if isinstance(ancestor, ast.If) and isinstance(ancestor.test, ast.Constant) and not ancestor.test.value:
                if any(chain[index + 1] is stmt for stmt in ancestor.body):
                    return True
        return False

    def _is_data(self) -> bool:
        for ancestor, _ in self.ctx.ancestors_in_function():
            if isinstance(ancestor, (ast.Assert, ast.Compare)):
                return True
            if isinstance(ancestor, ast.Call):
                if last_name(ancestor).startswith("assert"):
                    return True
            if isinstance(ancestor, ast.stmt):
                return False
        return False

    def _follow(self, node: ast.AST, kind: str) -> _Fate:
        """Climb from ``node`` (the node being visited) through what keeps
        it a location: ``_SINK`` when it reaches the filesystem, the names
        and kind it is bound to, or None when it goes nowhere we can see."""
        parents = self.ctx.parents
        child: ast.AST = node
        index = len(parents) - 1
        while index >= 0:
            ancestor = parents[index]
            index -= 1
            if isinstance(ancestor, ast.Attribute):
                resumed = _attribute_step(ancestor, parents[index] if index >= 0 else None, kind)
                if isinstance(resumed, _Stop):
                    return resumed.fate
                kind = "path"
                if resumed is not ancestor:
                    index -= 1  # the method call is climbed past too
                child = resumed
                continue
            step = self._step(ancestor, child, kind)
            if isinstance(step, _Stop):
                return step.fate
            kind = step
            child = ancestor
        return None

    def _step(self, ancestor: ast.AST, child: ast.AST, kind: str) -> _Stop | str:
        """One ancestor of the climb: the kind the location has above it, or
        where the climb stops."""
        if isinstance(ancestor, NEW_FRAMES):
            return _GONE
        if isinstance(ancestor, ast.Call):
            if child is ancestor.func:
                return _GONE
            verdict = self._call_fate(ancestor, child, kind)
            return _Stop(verdict) if verdict is None or verdict == _SINK else verdict
        if isinstance(ancestor, ast.keyword):
            return kind  # judged with its call, which sees the keyword as the child
        if isinstance(ancestor, (ast.BinOp, ast.FormattedValue, ast.JoinedStr)):
            return _string_step(ancestor, kind)
        if isinstance(ancestor, (ast.List, ast.Tuple, ast.Set, ast.Starred)):
            return "argv"
        if isinstance(ancestor, (ast.IfExp, ast.BoolOp, ast.Subscript)):
            return _choice_step(ancestor, child, kind)
        if isinstance(ancestor, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            return _Stop(_bound_names(ancestor, kind))
        if isinstance(ancestor, (ast.For, ast.AsyncFor, ast.comprehension)):
            return _Stop(_loop_names(ancestor, child, kind))
        return _GONE

    def _call_fate(self, call: ast.Call, child: ast.AST, kind: str) -> str | None:
        """What ``call`` does with ``child`` (one of its arguments, or a
        keyword): ``_SINK``, the kind of its result when that is still the
        location, or None."""
        name = self.ctx.call_name(call) or ""
        func = call.func
        method = func.attr if isinstance(func, ast.Attribute) else ""
        if child_process(call, name) is not None:
            # principle faked-spawner: a child of pytest-subprocess's fake runs nothing, its argv reaches no file
            return None if faked_spawner_call(self.ctx, name) else _SINK
        if method in PYTEST_RUNNERS or name == "pytest.main":
            return _SINK
        if kind == "argv" or isinstance(child, ast.keyword) and child.arg is None:
            return None
        if _touches_disk(name):
            return _SINK
        if method == "bind" and kind == "str" and call.args and call.args[0] is child:
            return _SINK  # a Unix socket's file
        if isinstance(child, ast.keyword):
            return None
        if name in PATH_CARRIERS:
            return "path" if name.startswith("pathlib.") else "str"
        return None
