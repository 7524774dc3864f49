"""Follow the value: where a value a call receives comes from, and where a value goes.

Backward (:func:`sources`): the literals an expression carries, through
containers, f-strings, operators, conditional expressions, the calls and
methods that only carry a value on (``str()``, ``Path()``, ``os.path.join()``,
``.joinpath()``), and the names its frame assigns (``x = ...``, ``for x in ...``),
falling back to the module's names.

Forward (:meth:`FlowIndex.only_asserted`): whether a value ends only in an
assertion's comparison with something not literal, through the same carriers
and the frame's names.

Which calls touch the host is the caller's question; :data:`HOST_PATH_CALLS`
and :data:`HOST_PATH_METHODS` name the ones that hand a path to the host.
Nothing here imports the per-file context or a rule: a caller passes its
name resolver (``ctx.resolve``) and gets the index once per file with
``ctx.per_function(ctx.tree, flow_index, names=False)``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from flake8_hermetic.facts.processes import SPAWNER_CALLS
from flake8_hermetic.nodes import own_nodes

Resolve = Callable[[ast.AST], "str | None"]

#: calls that hand a path to the host (the filesystem, a child process) or judge it by the host's rules
HOST_PATH_CALLS = SPAWNER_CALLS | frozenset(
    {"open", "io.open", "codecs.open", "io.FileIO", "pty.spawn", "glob.glob", "glob.iglob", "tarfile.open",
     "zipfile.ZipFile", "sqlite3.connect", "fileinput.input", "ctypes.CDLL"}
    | {f"os.{name}" for name in (
        "open", "stat", "lstat", "listdir", "scandir", "walk", "remove", "unlink", "rmdir", "removedirs", "mkdir",
        "makedirs", "rename", "renames", "replace", "chmod", "chown", "lchown", "utime", "readlink", "symlink",
        "link", "truncate", "chdir", "chroot", "access", "statvfs", "execv", "execve", "execl", "execle",
        "execlp", "execvp", "execvpe", "startfile")}
    | {f"os.path.{name}" for name in (
        "exists", "lexists", "isfile", "isdir", "islink", "ismount", "getsize", "getmtime", "getatime",
        "getctime", "realpath", "abspath", "relpath", "samefile", "isabs")}
    | {f"shutil.{name}" for name in (
        "copy", "copy2", "copyfile", "copytree", "copymode", "copystat", "rmtree", "move", "which", "chown",
        "disk_usage", "make_archive", "unpack_archive")}
)
#: methods of a path object that reach the host (none is a ``str`` method: the receiver needs no type)
HOST_PATH_METHODS = frozenset({
    "read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "glob", "rglob", "stat", "lstat", "mkdir",
    "rmdir", "unlink", "touch", "chmod", "lchmod", "exists", "is_file", "is_dir", "is_symlink", "is_mount",
    "resolve", "absolute", "samefile", "readlink", "symlink_to", "hardlink_to", "rename", "open", "owner",
    "group", "is_absolute", "walk",
})
#: the host path calls and methods that only judge or normalise a path, touching no file's contents
PATH_JUDGES = frozenset({"os.path.isabs", "os.path.abspath", "os.path.realpath", "os.path.relpath"})
JUDGING_METHODS = frozenset({"resolve", "absolute", "is_absolute"})
#: calls that only carry their arguments' value on (a path or a text made of them)
CARRIER_CALLS = frozenset({
    "str", "bytes", "int", "list", "tuple", "set", "sorted", "os.fspath", "os.fsencode", "os.fsdecode",
    "os.path.join", "os.path.normpath", "os.path.expanduser", "os.path.expandvars", "os.path.dirname",
    "pathlib.Path", "pathlib.PosixPath", "pathlib.WindowsPath", "pathlib.PurePath", "pytest.param",
})
#: methods that carry their receiver's value on (``Path(...).joinpath()``, ``"...".format()``)
CARRIER_METHODS = frozenset({
    "joinpath", "with_name", "with_suffix", "with_stem", "expanduser", "format", "encode", "decode", "strip",
    "rstrip", "lstrip", "lower", "upper", "resolve", "absolute", "as_posix",
})
#: attributes of a path that are still (part of) the same path
CARRIER_ATTRIBUTES = frozenset({"parent", "parents", "parts", "anchor", "name", "stem", "suffix"})
#: unittest's comparing assertions, by their last name
ASSERT_COMPARISONS = frozenset({
    "assertEqual", "assertEquals", "assertNotEqual", "assertIn", "assertNotIn", "assertCountEqual",
    "assertListEqual", "assertTupleEqual", "assertSetEqual", "assertDictEqual", "assertSequenceEqual",
    "assertMultiLineEqual", "assertIs", "assertIsNot", "assertSamePath",
})
MAX_DEPTH = 8

Binding = tuple[int, ast.expr]


def flow_index(tree: ast.AST, _ctx: object) -> FlowIndex:
    """The factory for ``ctx.per_function(ctx.tree, flow_index, names=False)``."""
    return FlowIndex(tree)


def touches_filesystem(call: ast.Call, resolve: Resolve) -> bool:
    """A call that hands a path to the filesystem or a child (``open``,
    ``exists``, ``listdir``, ``.read_text()``), not one that only judges it."""
    name = resolve(call.func)
    if name in HOST_PATH_CALLS:
        return name not in PATH_JUDGES
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in HOST_PATH_METHODS and func.attr not in JUDGING_METHODS


def _last_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _bind(target: ast.expr, value: ast.expr, line: int, into: dict[str, list[Binding]]) -> None:
    if isinstance(target, ast.Name):
        into.setdefault(target.id, []).append((line, value))
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            for sub_target, sub_value in zip(target.elts, value.elts):
                _bind(sub_target, sub_value, line, into)


class FlowIndex:
    """A file's parents and, per frame (a function or the module), what its names are assigned."""

    __slots__ = ("tree", "_parents", "_bindings", "_uses")

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self._parents: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self._parents[id(child)] = node
        self._bindings: dict[int, dict[str, list[Binding]]] = {}
        self._uses: dict[int, dict[str, list[ast.Name]]] = {}

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(id(node))

    def frame_of(self, node: ast.AST) -> ast.AST:
        """The nearest function (or lambda) around ``node``, else the module."""
        current = self.parent(node)
        while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            current = self.parent(current)
        return current if current is not None else self.tree

    def bindings(self, frame: ast.AST) -> dict[str, list[Binding]]:
        """name -> (line, value) of each assignment in the frame's own body (a ``for``: its iterable)."""
        found = self._bindings.get(id(frame))
        if found is None:
            found = self._bindings[id(frame)] = {}
            for node in _own(frame):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        _bind(target, node.value, node.lineno, found)
                elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                    _bind(node.target, node.value, node.lineno, found)
                elif isinstance(node, (ast.For, ast.AsyncFor)):
                    _bind(node.target, _Elements(node.iter), node.lineno, found)
        return found

    def uses(self, frame: ast.AST) -> dict[str, list[ast.Name]]:
        """name -> the loads of it in the frame's own body."""
        found = self._uses.get(id(frame))
        if found is None:
            found = self._uses[id(frame)] = {}
            for node in _own(frame):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    found.setdefault(node.id, []).append(node)
        return found

    def _assigned(self, name: ast.Name) -> list[ast.expr]:
        frame = self.frame_of(name)
        local = self.bindings(frame).get(name.id)
        if local:
            before = [value for line, value in local if line < name.lineno]
            return before[-1:] or [value for _line, value in local]  # the nearest assignment above
        if frame is not self.tree and _is_parameter(frame, name.id):
            return []
        return [value for _line, value in self.bindings(self.tree).get(name.id, ())]

    # -- backward -------------------------------------------------------
    def sources(self, expr: ast.expr, resolve: Resolve, depth: int = 0) -> Iterator[ast.Constant]:
        """The literals whose value ``expr`` carries (see the module's docstring)."""
        if depth > MAX_DEPTH:
            return
        for part in self._carried(expr, resolve):
            if isinstance(part, ast.Constant):
                yield part
            elif isinstance(part, ast.Name):
                for value in self._assigned(part):
                    yield from self.sources(value, resolve, depth + 1)
            else:
                yield from self.sources(part, resolve, depth + 1)

    def _carried(self, expr: ast.expr, resolve: Resolve) -> list[ast.expr]:
        """The parts of ``expr`` that carry its value: itself when a literal or a name."""
        if isinstance(expr, (ast.Constant, ast.Name)):
            return [expr]
        if isinstance(expr, _Elements):
            return [expr.iterable]
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            return list(expr.elts)
        if isinstance(expr, ast.Dict):
            return [value for value in expr.values if value is not None]
        if isinstance(expr, ast.JoinedStr):
            # the leading text, and what is formatted in (never a format spec)
            head = expr.values[:1] if expr.values and isinstance(expr.values[0], ast.Constant) else []
            return head + [v.value for v in expr.values if isinstance(v, ast.FormattedValue)]
        if isinstance(expr, ast.BinOp):
            return [expr.left, expr.right]
        if isinstance(expr, ast.IfExp):
            return [expr.body, expr.orelse]
        if isinstance(expr, ast.BoolOp):
            return list(expr.values)
        if isinstance(expr, (ast.Starred, ast.Subscript, ast.NamedExpr)):
            return [expr.value]
        if isinstance(expr, ast.Attribute) and expr.attr in CARRIER_ATTRIBUTES:
            return [expr.value]
        if isinstance(expr, ast.Call):
            return self._carried_by_call(expr, resolve)
        return []

    def _carried_by_call(self, call: ast.Call, resolve: Resolve) -> list[ast.expr]:
        arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
        if resolve(call.func) in CARRIER_CALLS:
            return arguments
        if isinstance(call.func, ast.Attribute) and call.func.attr in CARRIER_METHODS:
            return [call.func.value, *arguments]
        return []

    # -- forward --------------------------------------------------------
    def only_asserted(
        self, node: ast.expr, resolve: Resolve, host: Callable[[ast.Call], bool], seen: frozenset[int] = frozenset()
    ) -> bool:
        """Whether the value of ``node`` ends only in assertions' comparisons
        with something not literal, never reaching a call ``host`` names."""
        if len(seen) > MAX_DEPTH:
            return False
        child: ast.AST = node
        parent = self.parent(node)
        while parent is not None:
            if isinstance(parent, ast.Call) and host(parent):
                return False
            if isinstance(parent, ast.Compare):
                return self._asserted(parent) and not _all_literal(parent, child)
            if isinstance(parent, ast.Call) and _last_name(parent.func) in ASSERT_COMPARISONS:
                return child is not parent.func and not _all_literal(parent, child)
            if isinstance(parent, (ast.Assign, ast.AnnAssign)):
                return id(parent) not in seen and self._names_only_asserted(parent, resolve, host, seen | {id(parent)})
            if not self._carries(parent, child, resolve):
                return False
            child, parent = parent, self.parent(parent)
        return False

    def reaches_call(self, node: ast.expr, resolve: Resolve, wanted: Callable[[ast.Call], bool]) -> ast.Call | None:
        """The call ``wanted`` names that receives the value of ``node`` through
        carriers alone (no name in between), if any."""
        child: ast.AST = node
        parent = self.parent(node)
        while parent is not None:
            if isinstance(parent, ast.Call) and child is not parent.func and wanted(parent):
                return parent
            if not self._carries(parent, child, resolve):
                return None
            child, parent = parent, self.parent(parent)
        return None

    def _carries(self, parent: ast.AST, child: ast.AST, resolve: Resolve) -> bool:
        """Whether ``parent`` carries on the value ``child`` gives it."""
        if isinstance(parent, (ast.keyword, ast.JoinedStr)):
            return True
        if isinstance(parent, ast.FormattedValue):
            return child is parent.value
        if isinstance(parent, ast.Attribute):
            return parent.attr in CARRIER_ATTRIBUTES or parent.attr in CARRIER_METHODS
        if isinstance(parent, ast.Call):
            return child is parent.func or any(child is part for part in self._carried_by_call(parent, resolve))
        if isinstance(parent, ast.expr) and not isinstance(parent, (ast.Constant, ast.Name)):
            return any(child is part for part in self._carried(parent, resolve))
        return False

    def _asserted(self, node: ast.AST) -> bool:
        """Inside an ``assert`` (or the argument of an ``assert*`` call) of its statement."""
        current = self.parent(node)
        while current is not None and not isinstance(current, ast.stmt):
            if isinstance(current, ast.Call) and _last_name(current.func).startswith("assert"):
                return True
            current = self.parent(current)
        return isinstance(current, ast.Assert)

    def _names_only_asserted(
        self, assignment: ast.Assign | ast.AnnAssign, resolve: Resolve, host: Callable[[ast.Call], bool],
        seen: frozenset[int],
    ) -> bool:
        targets = assignment.targets if isinstance(assignment, ast.Assign) else [assignment.target]
        if not all(isinstance(target, ast.Name) for target in targets):
            return False
        frame = self.frame_of(assignment)
        names = [target.id for target in targets]  # type: ignore[attr-defined]
        uses = [use for name in names for use in self._later_uses(frame, name, assignment.lineno)]
        return bool(uses) and all(self.only_asserted(use, resolve, host, seen) for use in uses)

    def _later_uses(self, frame: ast.AST, name: str, line: int) -> list[ast.Name]:
        if frame is not self.tree:
            return [use for use in self.uses(frame).get(name, ()) if use.lineno >= line]
        # a module's name: its loads anywhere in the file
        return [
            node for node in ast.walk(self.tree)
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
        ]

    def parameter_only_asserted(
        self, function: ast.AST, name: str, resolve: Resolve, host: Callable[[ast.Call], bool],
        seen: frozenset[str] = frozenset(),
    ) -> bool:
        """A parameter (or local) of ``function`` used at least once, and only
        inside assertions or to build a local used so (``settings = Model(trust=trust)``
        then ``assert settings.ok()``), never reaching a call ``host`` names there."""
        uses = self.uses(function).get(name, [])
        seen = seen | {name}
        return bool(uses) and all(
            not self._reaches_host(use, host)
            and (self._asserted(use) or self._builds_an_asserted_local(function, use, resolve, host, seen))
            for use in uses
        )

    def _builds_an_asserted_local(
        self, function: ast.AST, use: ast.Name, resolve: Resolve, host: Callable[[ast.Call], bool],
        seen: frozenset[str],
    ) -> bool:
        statement = self.parent(use)
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self.parent(statement)
        if not isinstance(statement, ast.Assign) or len(seen) > MAX_DEPTH:
            return False
        names = [target.id for target in statement.targets if isinstance(target, ast.Name)]
        return len(names) == len(statement.targets) and all(
            name not in seen and self.parameter_only_asserted(function, name, resolve, host, seen) for name in names
        )

    def _reaches_host(self, node: ast.AST, host: Callable[[ast.Call], bool]) -> bool:
        current = self.parent(node)
        while current is not None and not isinstance(current, ast.stmt):
            if isinstance(current, ast.Call) and host(current):
                return True
            current = self.parent(current)
        return False


class _Elements(ast.expr):
    """The elements of a ``for`` loop's iterable, as the loop's target gets them."""

    _fields = ()

    def __init__(self, iterable: ast.expr) -> None:
        super().__init__()
        self.iterable = iterable


def _own(frame: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a frame's own body (a lambda's body is one expression)."""
    if isinstance(frame, ast.Lambda):
        return iter(ast.walk(frame.body))
    return own_nodes(frame)


def _is_parameter(function: ast.AST, name: str) -> bool:
    arguments = getattr(function, "args", None)
    if arguments is None:
        return False
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    return any(argument is not None and argument.arg == name for argument in every)


def _all_literal(node: ast.Compare | ast.Call, child: ast.AST) -> bool:
    """Whether everything ``child`` is compared with in ``node`` is a literal (a host-dependent verdict)."""
    if isinstance(node, ast.Compare):
        operands: list[ast.expr] = [node.left, *node.comparators]
    else:
        operands = [*node.args, *(keyword.value for keyword in node.keywords if keyword.arg != "msg")][:2]
    others = [operand for operand in operands if operand is not child]
    return all(isinstance(other, ast.Constant) for other in others)
