"""HRM4xx: what a test module costs and reads when it is imported (collected)."""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from flake8_hermetic.context import Context
from flake8_hermetic.nodes import DEF_TYPES
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation

if TYPE_CHECKING:
    from flake8_hermetic.settings import Settings

PARAMETRIZE = "pytest.mark.parametrize"

# -- when does a node run? -----------------------------------------------------


def _is_dead_guard(test: ast.expr) -> bool:
    """``if __name__ == "__main__":`` and ``if TYPE_CHECKING:`` bodies do not
    run when pytest imports the module."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        sides = [test.left, *test.comparators]
        names = {s.id for s in sides if isinstance(s, ast.Name)}
        texts = {s.value for s in sides if isinstance(s, ast.Constant)}
        return names == {"__name__"} and texts == {"__main__"}
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


class CollectionTime:
    """Whether the node being visited is evaluated when pytest imports the
    module (module and class bodies, decorators, defaults; not function or
    lambda bodies, not ``if __name__ == "__main__":``), and whether it sits in
    the arguments of ``pytest.mark.parametrize``.

    The answer for each ancestor is remembered, so a visit costs the
    distance to the nearest ancestor already seen, not the whole depth.
    """

    __slots__ = ("ctx", "_known")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._known: dict[int, tuple[bool, bool]] = {}

    def of(self, node: ast.AST) -> tuple[bool, bool]:
        """(runs at import time, inside parametrize arguments)."""
        known = self._known
        state = known.get(id(node))
        if state is not None:
            return state
        parents = self.ctx.parents
        if not parents:
            return True, False  # the module itself
        start = len(parents) - 1
        while start > 0 and id(parents[start]) not in known:
            start -= 1
        state = known.setdefault(id(parents[start]), (True, False))  # parents[0] is the module
        for position in range(start + 1, len(parents) + 1):
            child = parents[position] if position < len(parents) else node
            state = self._step(parents[position - 1], child, state)
            known[id(child)] = state
        return state

    def import_time(self, node: ast.AST) -> bool:
        return self.of(node)[0]

    def _step(self, parent: ast.AST, child: ast.AST, state: tuple[bool, bool]) -> tuple[bool, bool]:
        runs, in_parametrize = state
        if isinstance(parent, DEF_TYPES):
            if any(stmt is child for stmt in parent.body):
                return False, False
        elif isinstance(parent, ast.Lambda):
            if child is parent.body:
                return False, False
        elif isinstance(parent, ast.If):
            if _is_dead_guard(parent.test) and any(stmt is child for stmt in parent.body):
                return False, False
        elif isinstance(parent, ast.Call) and child is not parent.func and not in_parametrize:
            if self.ctx.call_name(parent) == PARAMETRIZE:
                return (True, True) if runs else (False, True)
        return state  # the same tuple: no new object per node


# -- HRM401: folding an expression to the bytes it builds -----------------------

SATURATED = 1 << 64  # a fold at or beyond this is "too big to matter"; folding stops growing there
FOLD_DEPTH = 64
POINTER = 8  # one list slot
INT_OBJECT = 28  # an int outside the small-int cache
BYTES_BUILDERS = ("os.urandom", "random.randbytes", "secrets.token_bytes")


def _clamp(value: int) -> int:
    return max(-SATURATED, min(SATURATED, value))


def _saturated(value: int) -> bool:
    return abs(value) >= SATURATED


@dataclasses.dataclass(frozen=True)
class Built:
    """A sequence an expression builds: its kind, its length (items or
    characters) and the bytes it newly allocates."""

    kind: str  # "bytes" | "str" | "list"
    length: int
    size: int

    def repeat(self, count: int) -> Built:
        count = max(0, count)
        length = _clamp(self.length * count)
        if self.kind == "list":
            # the slots repeat, the items they point at are shared
            owned = max(0, self.size - POINTER * self.length)
            return Built("list", length, _clamp(POINTER * length + owned))
        return Built(self.kind, length, _clamp(self.size * count))


def _text_width(text: str) -> int:
    """Bytes per character CPython stores this string with."""
    widest = max(map(ord, text), default=0)
    return 1 if widest < 0x100 else 2 if widest < 0x10000 else 4


def _sign(value: int) -> int:
    return -1 if value < 0 else 1


def fold_int(left: int, op: ast.operator, right: int) -> int | None:
    """``left op right`` for ints that may stand for saturated values,
    without ever building a huge number."""
    if isinstance(op, ast.Mult):
        if left == 0 or right == 0:
            return 0
        if _saturated(left) or _saturated(right):
            return SATURATED * _sign(left) * _sign(right)
        return _clamp(left * right)
    if isinstance(op, (ast.Add, ast.Sub)):
        right = right if isinstance(op, ast.Add) else -right
        if _saturated(left) and _saturated(right) and _sign(left) != _sign(right):
            return None
        if _saturated(left) or _saturated(right):
            return SATURATED * _sign(left if _saturated(left) else right)
        return _clamp(left + right)
    if isinstance(op, ast.Pow):
        if right < 0:
            return None  # a float
        if left in (0, 1) or right == 0:
            return 1 if right == 0 else left
        if left == -1:
            return 1 if right % 2 == 0 else -1
        negative = left < 0 and right % 2 == 1
        if _saturated(left) or _saturated(right) or right * (abs(left).bit_length() - 1) >= 64:
            return -SATURATED if negative else SATURATED
        return _clamp(left**right)
    if isinstance(op, ast.LShift):
        if right < 0:
            return None
        if left == 0:
            return 0
        if _saturated(left) or right >= 64:
            return SATURATED * _sign(left)
        return _clamp(left << right)
    if _saturated(left) or _saturated(right):
        return None
    if isinstance(op, (ast.FloorDiv, ast.Mod)):
        if right == 0:
            return None
        return left // right if isinstance(op, ast.FloorDiv) else left % right
    if isinstance(op, ast.RShift):
        return None if right < 0 else left >> right
    if isinstance(op, ast.BitOr):
        return left | right
    if isinstance(op, ast.BitAnd):
        return left & right
    if isinstance(op, ast.BitXor):
        return left ^ right
    return None


def _range_length(values: list[int]) -> int | None:
    if len(values) == 1:
        start, stop, step = 0, values[0], 1
    elif len(values) in (2, 3):
        start, stop = values[0], values[1]
        step = values[2] if len(values) == 3 else 1
    else:
        return None
    if step == 0 or _saturated(step) or (_saturated(start) and _saturated(stop)):
        return None
    if _saturated(start) or _saturated(stop):
        return SATURATED if (stop - start) * step > 0 else 0
    return max(0, -((start - stop) // step)) if step > 0 else max(0, -((stop - start) // -step))


Folded = int | Built | None


class SizeFolder:
    """Folds constant expressions to ints or to the sequences they build,
    reading only the literals the parser already made: nothing is evaluated
    or allocated, and ints saturate instead of growing (``"x" * 10**100``
    costs a few comparisons)."""

    __slots__ = ("ctx", "_memo", "_cuts", "names")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._memo: dict[int, Folded] = {}
        self._cuts = 0  # folds abandoned at the depth limit so far
        #: import-time bindings of foldable values, per module/class scope
        self.names: dict[int, dict[str, int | Built]] = {}

    def bind(self, name: str, value: Folded) -> None:
        frame = self.names.setdefault(id(self.ctx.scope.node), {})
        if value is None:
            frame.pop(name, None)
        else:
            frame[name] = value

    def lookup(self, name: str) -> int | Built | None:
        for scope in reversed(self.ctx.scopes):
            if scope.kind == "function":
                return None
            frame = self.names.get(id(scope.node))
            if frame is not None and name in frame:
                return frame[name]
        return None

    def fold(self, node: ast.AST, depth: int = 0) -> Folded:
        cached = self._memo.get(id(node), self)
        if cached is not self:
            return cached  # type: ignore[return-value]
        if depth > FOLD_DEPTH:
            self._cuts += 1
            return None
        cuts = self._cuts
        result = self._fold(node, depth + 1)
        if cuts == self._cuts:  # a fold cut short is not the node's answer: its own visit may still fold it
            self._memo[id(node)] = result
        return result

    def fold_int(self, node: ast.AST, depth: int) -> int | None:
        value = self.fold(node, depth)
        return value if isinstance(value, int) else None

    def _fold(self, node: ast.AST, depth: int) -> Folded:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                return None
            if isinstance(value, int):
                return _clamp(value)
            if isinstance(value, bytes):
                return Built("bytes", len(value), len(value))
            if isinstance(value, str):
                return Built("str", len(value), len(value) * _text_width(value))
            return None
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.UnaryOp):
            operand = self.fold_int(node.operand, depth)
            if operand is None:
                return None
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(node.op, ast.Invert) and not _saturated(operand):
                return ~operand
            return None
        if isinstance(node, ast.BinOp):
            return self._fold_binop(node, depth)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._fold_display(node.elts, depth)
        if isinstance(node, ast.Call):
            return self._fold_call(node, depth)
        return None

    def _fold_binop(self, node: ast.BinOp, depth: int) -> Folded:
        left = self.fold(node.left, depth)
        right = self.fold(node.right, depth)
        if left is None or right is None:
            return None
        if isinstance(left, int) and isinstance(right, int):
            return fold_int(left, node.op, right)
        if isinstance(node.op, ast.Mult):
            if isinstance(left, Built) and isinstance(right, int):
                return left.repeat(right)
            if isinstance(left, int) and isinstance(right, Built):
                return right.repeat(left)
            return None
        if isinstance(node.op, ast.Add) and isinstance(left, Built) and isinstance(right, Built):
            if left.kind != right.kind:
                return None
            return Built(left.kind, _clamp(left.length + right.length), _clamp(left.size + right.size))
        return None

    def _fold_display(self, items: list[ast.expr], depth: int) -> Built | None:
        length = 0
        owned = 0
        for item in items:
            if isinstance(item, ast.Starred):
                spread = self._items(item.value, depth)
                if spread is None:
                    return None
                length = _clamp(length + spread)
                continue
            length += 1
            if not isinstance(item, ast.Name):  # a name points at a value built elsewhere
                value = self.fold(item, depth)
                if isinstance(value, Built):
                    owned = _clamp(owned + value.size)
        return Built("list", length, _clamp(POINTER * length + owned))

    def _items(self, node: ast.AST, depth: int) -> int | None:
        """How many items iterating ``node`` yields, for ranges and built sequences."""
        if isinstance(node, ast.Call) and self.ctx.call_name(node) == "range" and not node.keywords:
            bounds = [self.fold_int(arg, depth) for arg in node.args]
            if any(b is None for b in bounds):
                return None
            return _range_length(bounds)  # type: ignore[arg-type]
        value = self.fold(node, depth)
        return value.length if isinstance(value, Built) else None

    def _fold_call(self, node: ast.Call, depth: int) -> Folded:
        if isinstance(node.func, ast.Attribute) and node.func.attr == "encode" and not node.keywords:
            text = self.fold(node.func.value, depth)
            if isinstance(text, Built) and text.kind == "str":
                return Built("bytes", text.size, text.size)
            return None
        name = self.ctx.call_name(node)
        if name is None or node.keywords or len(node.args) > 2:
            return None
        if name in BYTES_BUILDERS and len(node.args) == 1:
            count = self.fold_int(node.args[0], depth)
            return None if count is None else Built("bytes", max(0, count), max(0, count))
        if name in ("bytes", "bytearray") and node.args:
            source = node.args[0]
            value = self.fold(source, depth)
            if isinstance(value, int) and len(node.args) == 1:
                return Built("bytes", max(0, value), max(0, value))
            count = self._items(source, depth) if not isinstance(value, int) else None
            return None if count is None else Built("bytes", count, count)
        if name in ("list", "tuple") and len(node.args) == 1:
            source = node.args[0]
            count = self._items(source, depth)
            if count is None:
                return None
            is_range = isinstance(source, ast.Call) and self.ctx.call_name(source) == "range"
            per_item = POINTER + (INT_OBJECT if is_range else 0)
            return Built("list", count, _clamp(per_item * count))
        return None


def human_size(size: int) -> str:
    if size >= SATURATED:
        return "more than 16 EiB"
    if size < 1024:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        value /= 1024
        if value < 1024 or unit == "EiB":
            break
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{text} {unit}"


class CollectionSizeRule(Rule):
    """
    Flags a large value built while the test module is collected.

    Inside the arguments of `@pytest.mark.parametrize(...)`, and anywhere at
    module or class scope of a test file, the rule folds constant
    expressions to the number of bytes they build: `b"x" * (64 * 1024 * 1024)`,
    `"a" * 40_000_001`, `[0] * N`, `bytes(N)`, `bytearray(N)`,
    `list(range(N))`, `os.urandom(N)`, and sums of those; `N` may be a name
    bound to a constant earlier in the module or class. It reports the
    outermost expression reaching `--hermetic-max-collection-bytes` and
    names its size. Folding only reads literals: nothing is evaluated, and
    an absurd `"x" * 10**100` is reported rather than attempted.

    ## Why is this bad?
    Collection imports every test module in every xdist worker before the
    first test runs. A payload built at module scope is paid by each worker
    and lives until the process ends. Inside `parametrize` it is worse: the
    mark holds the value on the test function for the whole session, so
    one test's 64 MiB buffer is carried by all the others, and a run on a
    small machine (or with many workers) goes out of memory long before
    the test that needs it.

    ## Example
    ```python
    BIG_FRAME = b"\\0" * (64 * 1024 * 1024)

    @pytest.mark.parametrize("payload", [b"x" * 40_000_000])
    def test_upload(payload):
        assert upload(payload).ok
    ```

    ## Use instead
    ```python
    FRAME_SIZE = 64 * 1024 * 1024

    @pytest.mark.parametrize("size", [pytest.param(40_000_000, id="40MB")])
    def test_upload(size):
        payload = b"x" * size
        assert upload(payload).ok
    ```

    ## Options
    `--hermetic-max-collection-bytes` (default 1048576): the size from which
    a value is reported.

    ## Known problems
    Only constant expressions are folded: a size computed by a function, or
    read from a name bound inside a function, is not seen. A list counts
    its slots and the items it builds itself; items it merely points at
    are counted where they were built.
    """

    code = "HRM401"
    message = "{size} built at collection time and paid by every xdist worker; build it inside the test body"
    calls = frozenset({*BYTES_BUILDERS, "bytes", "bytearray", "list", "tuple"})
    methods = frozenset({"encode"})
    options = (
        OptionSpec(
            "max-collection-bytes", "int", 1024 * 1024,
            "Size in bytes from which a value built at collection time is flagged (HRM401).",
        ),
    )

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.timing = CollectionTime(ctx)
        self.folder = SizeFolder(ctx)
        self.limit = ctx.settings.option("max-collection-bytes")
        self._reported: set[int] = set()

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        if self.timing.import_time(node):
            value = self.folder.fold(node.value)
            for target in node.targets:
                self._bind(target, value)
        return iter(())

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Iterator[Violation]:
        if node.value is not None and self.timing.import_time(node):
            self._bind(node.target, self.folder.fold(node.value))
        return iter(())

    def visit_AugAssign(self, node: ast.AugAssign) -> Iterator[Violation]:
        if self.timing.import_time(node):
            self._bind(node.target, None)
        return iter(())

    def _bind(self, target: ast.AST, value: Folded) -> None:
        if isinstance(target, ast.Name):
            self.folder.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:
                self._bind(item.value if isinstance(item, ast.Starred) else item, None)

    def visit_BinOp(self, node: ast.BinOp) -> Iterator[Violation]:
        if isinstance(node.op, (ast.Mult, ast.Add)):
            yield from self._check(node)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        yield from self._check(node)

    def visit_List(self, node: ast.List) -> Iterator[Violation]:
        # a display allocates little unless it spreads a range: ``[*range(N)]``
        if any(isinstance(item, ast.Starred) for item in node.elts):
            yield from self._check(node)

    visit_Tuple = visit_List

    def _check(self, node: ast.expr) -> Iterator[Violation]:
        runs, in_parametrize = self.timing.of(node)
        if not (runs or in_parametrize):
            return
        value = self.folder.fold(node)
        if not isinstance(value, Built) or value.size < self.limit:
            return
        # a reported ancestor already covers this value; it lies within the fold depth
        nearby = self.ctx.parents[-(FOLD_DEPTH + 1):]
        if any(id(ancestor) in self._reported for ancestor in nearby):
            return
        self._reported.add(id(node))
        violation = self.report(node, size=human_size(value.size))
        yield dataclasses.replace(violation, where=self.ctx.where_of(node))


# -- HRM402: host probes at import time -----------------------------------------

HOME_READERS = frozenset(
    {
        "os.path.expanduser",
        "posixpath.expanduser",
        "ntpath.expanduser",
        "pathlib.Path.home",
        "pathlib.PosixPath.home",
        "pathlib.WindowsPath.home",
        "pathlib.Path().expanduser",
        "pathlib.PosixPath().expanduser",
        "pathlib.WindowsPath().expanduser",
    }
)
HOME_VARIABLES = frozenset({"HOME", "USERPROFILE"})
ENV_GETTERS = frozenset({"os.getenv", "os.environ.get", "os.environb.get", "os.getenvb"})
SKIP_MARKS = frozenset({"pytest.mark.skipif", "pytest.mark.skip", "pytest.mark.xfail"})


def _names_home_variable(node: ast.AST | None) -> bool:
    if isinstance(node, ast.Constant):
        value = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        return value in HOME_VARIABLES
    return False


class ImportTimeHostProbeRule(Rule):
    """
    Flags a read of the operator's home, or of host state the project names, at import time.

    Module-level statements, class bodies, decorator arguments (a
    `skipif` condition included, in its string form too) and default values
    run when pytest imports the module. There the rule reports
    `Path.home()`, `os.path.expanduser()`, `Path(...).expanduser()`,
    `os.environ["HOME"]`, `os.getenv("HOME")` / `os.environ.get("HOME")`
    (also `USERPROFILE`), and calls of the functions listed in
    `--hermetic-host-readers`, all resolved through the file's imports.

    ## Why is this bad?
    Import happens during collection, before any fixture has run, so
    nothing the suite does to isolate the host (an autouse fixture that
    pins `HOME`, a patched config loader) is in force yet. A module-level
    probe or a `skipif` condition reads the real operator's home and
    configuration: the test is skipped or configured differently on every
    developer's machine, and a probe that writes (creating a default
    config on first read) changes the operator's files.

    ## Example
    ```python
    CONFIG = Path.home() / ".myapp" / "config.toml"

    @pytest.mark.skipif(not os.path.exists(os.path.expanduser("~/.ssh")), reason="no ssh")
    def test_deploy():
        ...
    ```

    ## Use instead
    ```python
    @pytest.fixture
    def config_path(tmp_path, monkeypatch):
        monkeypatch.setenv("HOME", str(tmp_path))
        return Path.home() / ".myapp" / "config.toml"

    @pytest.fixture
    def ssh_dir(tmp_path):
        if not shutil.which("ssh"):
            pytest.skip("no ssh client")
        return tmp_path / ".ssh"
    ```

    ## Options
    `--hermetic-host-readers`: dotted names of the project's own functions
    that read host state (`myapp.config.load`), matched against the
    resolved name of each call.

    ## Known problems
    Only direct calls are seen: a module-level call of a local helper that
    reads the home inside is not followed.
    """

    code = "HRM402"
    message = "{name} reads the host at import time, before any fixture can pin it; probe inside a fixture"
    calls = HOME_READERS | ENV_GETTERS | SKIP_MARKS
    options = (
        OptionSpec(
            "host-readers", "list", (),
            "Comma-separated dotted names of project functions that read host "
            "state, flagged when called at import time (HRM402).",
            convert=frozenset,
        ),
    )

    @classmethod
    def wanted_calls(cls, settings: Settings) -> frozenset[str] | None:
        return (cls.calls or frozenset()) | settings.option("host-readers")  # the project's own probes too

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.timing = CollectionTime(ctx)
        self.readers = HOME_READERS | ctx.settings.option("host-readers")

    def _reads_host(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Call):
            name = self.ctx.call_name(node)
            if name in self.readers:
                return f"{name}()"
            if name in ENV_GETTERS and node.args and _names_home_variable(node.args[0]):
                return f"{name}({node.args[0].value!r})"  # type: ignore[attr-defined]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if self.ctx.resolve(node.value) in ("os.environ", "os.environb") and _names_home_variable(node.slice):
                return f"os.environ[{node.slice.value!r}]"  # type: ignore[attr-defined]
        return None

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self._reads_host(node)
        if name is None:
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                yield from self._string_condition(node)
            return
        if self.timing.import_time(node):
            yield dataclasses.replace(self.report(node, name=name), where=self.ctx.where_of(node))

    def visit_Subscript(self, node: ast.Subscript) -> Iterator[Violation]:
        name = self._reads_host(node)
        if name is not None and self.timing.import_time(node):
            yield dataclasses.replace(self.report(node, name=name), where=self.ctx.where_of(node))

    def _string_condition(self, node: ast.Call) -> Iterator[Violation]:
        """``skipif("os.path.expanduser('~') ...")``: pytest evaluates the string at collection."""
        if self.ctx.call_name(node) not in SKIP_MARKS or not self.timing.import_time(node):
            return
        condition = node.args[0]
        try:
            parsed = ast.parse(condition.value, mode="eval")  # type: ignore[attr-defined]
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return
        for inner in ast.walk(parsed):
            name = self._reads_host(inner)
            if name is not None:
                yield dataclasses.replace(self.report(condition, name=name), where=self.ctx.where_of(node))
                return


# -- HRM403: ending the process at import time ---------------------------------

EXITS = frozenset({"sys.exit", "os._exit", "exit", "quit"})


class ImportTimeExitRule(Rule):
    """
    Flags `sys.exit()`, `exit()`, `quit()`, `os._exit()` and `raise SystemExit` run at import time of a test file.

    The usual spelling is a guard for an optional dependency:
    `try: import numpy` / `except ImportError: sys.exit(0)`, or a version
    check at the top of the module. Code under `if __name__ == "__main__":`
    does not run under pytest and is not flagged. Neither is a module that
    has read `sys.argv` at import time before it exits: such a file is a
    script a test runs in a child process (`subprocess.run([sys.executable,
    helper, ...])`), where exiting with a status is the point, not a module
    pytest imports.

    ## Why is this bad?
    `SystemExit` is not an `ImportError`: pytest does not turn it into a
    skip of this module. Depending on the version and the plugins, the
    module becomes a collection error that fails the run, or the whole
    session stops with no report of the tests it never ran. `os._exit()`
    kills the xdist worker outright. Either way one missing optional
    package takes every other test down with it.

    ## Example
    ```python
    try:
        import numpy
    except ImportError:
        sys.exit(0)
    ```

    ## Use instead
    ```python
    numpy = pytest.importorskip("numpy")
    ```

    ## Options
    None.
    """

    code = "HRM403"
    message = "{name} at import time ends the run, not just this module; use pytest.importorskip() or a skip mark"
    calls = EXITS

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.timing = CollectionTime(ctx)
        self.script = False
        # A bare name is sys.argv only after ``from sys import argv [as x]``:
        # until one is seen, the walk need not stack the file's names for this rule.
        if ctx.resolver.names_bound_to(("sys.argv",)):
            ctx.dispatch_to(ast.Name, self.on_name)
        # ``sys.argv`` in any spelling has "argv" in the file's text
        if "argv" in ctx.source:
            ctx.dispatch_to(ast.Attribute, self.on_attribute)

    def _reads_command_line(self, node: ast.Name | ast.Attribute) -> None:
        if not self.script and self.ctx.resolve(node) == "sys.argv" and self.timing.import_time(node):
            self.script = True

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Iterator[Violation]:
        if node.module == "sys" and any(alias.name == "argv" for alias in node.names):
            self.ctx.dispatch_to(ast.Name, self.on_name)
        return iter(())

    def on_attribute(self, node: ast.Attribute) -> Iterator[Violation]:
        if node.attr == "argv":
            self._reads_command_line(node)
        return iter(())

    def on_name(self, node: ast.Name) -> Iterator[Violation]:
        self._reads_command_line(node)
        return iter(())

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self.script:
            return
        name = self.ctx.call_name(node)
        if name in EXITS and self.timing.import_time(node):
            yield self.report(node, name=f"{name}()")

    def visit_Raise(self, node: ast.Raise) -> Iterator[Violation]:
        if self.script:
            return
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if exc is not None and self.ctx.resolve(exc) in ("SystemExit", "builtins.SystemExit"):
            if self.timing.import_time(node):
                yield self.report(node, name="raise SystemExit")


# -- HRM404: repository paths relative to the working directory -----------------

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


def _literal_head(node: ast.AST) -> str | None:
    """The text of a str literal, or the constant head of an f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


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
        text = _literal_head(literal)
        if text is None or not self._names_repo_dir(text):
            return
        if name in PATH_CLASSES and self._compared_as_data(node):
            return
        shown = ast.get_source_segment(self.ctx.source, literal) or repr(text)
        yield dataclasses.replace(self.report(literal, path=shown), where=self.ctx.where_of(node))


# -- HRM405: a source-tree scan repeated on every worker -----------------------

TREE_WALKS = frozenset({"os.walk", "os.fwalk"})
GLOBS = frozenset({"glob.glob", "glob.iglob"})


class TreeScanWithoutGroupRule(Rule):
    """
    Flags a test module that scans a source tree (`rglob`/`os.walk` and `ast.parse`) but pins no `xdist_group`.

    The module both walks a directory tree (`Path.rglob()`, a `**` glob,
    `os.walk()`, `glob.glob(..., recursive=True)`) and calls
    `ast.parse()`, and no module-level `pytestmark` carries
    `pytest.mark.xdist_group`. It is reported once, at the first
    `ast.parse()` call. Only modules that define tests are judged: not
    `conftest.py` (a `pytestmark` there applies to nothing), not a runner
    script that happens to live in the test tree.

    ## Why is this bad?
    A scan of the whole source tree, parsed and usually cached at module
    level, costs seconds. Under `pytest -n N` the module's tests are
    spread over the workers, and every worker that receives one pays the
    scan again: the same parse runs up to N times per run. Putting the
    module in an xdist group of its own sends all its tests to one
    worker, so the cache is filled once.

    ## Example
    ```python
    @functools.cache
    def modules():
        return [ast.parse(p.read_text()) for p in SRC.rglob("*.py")]
    ```

    ## Use instead
    ```python
    pytestmark = pytest.mark.xdist_group(name="tree_scan_test_layers")

    @functools.cache
    def modules():
        return [ast.parse(p.read_text()) for p in SRC.rglob("*.py")]
    ```
    (and run with `--dist loadgroup`). One group per module, never one
    shared by several: a shared group serialises them all on one worker.

    ## Options
    None.

    ## Known problems
    Only a module-level `pytestmark` counts; a group set on a class or a
    single test is not recognised. A scan made by a helper imported from
    another module is not seen.
    """

    code = "HRM405"
    message = 'module scans a source tree on every xdist worker; add pytestmark = pytest.mark.xdist_group(name="tree_scan_{module}")'
    calls = frozenset({"ast.parse", "*.rglob", "*.glob"}) | TREE_WALKS | GLOBS
    default_on = False

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.walks = False
        self.grouped = False
        self.has_tests = False
        self.parse: Violation | None = None
        self.judged = os.path.basename(ctx.path) != "conftest.py"

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not self.judged:
            return iter(())
        name = self.ctx.call_name(node) or ""
        if name == "ast.parse":
            if self.parse is None:
                module = os.path.splitext(os.path.basename(self.ctx.path))[0]
                self.parse = self.report(node, module=module)
        elif name in TREE_WALKS or name.endswith(".rglob"):
            self.walks = True
        elif name in GLOBS or name.endswith(".glob"):
            self.walks = self.walks or self._recursive_glob(node, name)
        return iter(())

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Violation]:
        self.has_tests = self.has_tests or self.ctx.scope_of(node).is_test
        return iter(())

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node: ast.Attribute) -> Iterator[Violation]:
        if node.attr == "xdist_group" and self.ctx.resolve(node) == "pytest.mark.xdist_group":
            if self._sets_pytestmark():
                self.grouped = True
        return iter(())

    @staticmethod
    def _recursive_glob(node: ast.Call, name: str) -> bool:
        if any(k.arg == "recursive" and isinstance(k.value, ast.Constant) and k.value.value is True for k in node.keywords):
            return True
        pattern = _literal_head(node.args[0]) if node.args else None
        return pattern is not None and "**" in pattern and name not in GLOBS

    def _sets_pytestmark(self) -> bool:
        """Inside a module-level statement that assigns or extends ``pytestmark``."""
        if len(self.ctx.scopes) != 1 or len(self.ctx.parents) < 2:
            return False
        statement = self.ctx.parents[1]
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            func = statement.value.func
            if isinstance(func, ast.Attribute) and func.attr in ("append", "extend"):
                targets = [func.value]
        return any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in targets)

    def finish(self) -> Iterator[Violation]:
        if self.parse is not None and self.walks and self.has_tests and not self.grouped:
            yield self.parse
