"""Folding a constant expression to the bytes it builds, without evaluating it (HRM401)."""

from __future__ import annotations

import ast
import dataclasses
import operator
from collections.abc import Callable

from flake8_hermetic.context import Context


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


def _fold_mult(left: int, right: int) -> int | None:
    if left == 0 or right == 0:
        return 0
    if _saturated(left) or _saturated(right):
        return SATURATED * _sign(left) * _sign(right)
    return _clamp(left * right)


def _fold_add(left: int, right: int) -> int | None:
    if _saturated(left) and _saturated(right) and _sign(left) != _sign(right):
        return None
    if _saturated(left) or _saturated(right):
        return SATURATED * _sign(left if _saturated(left) else right)
    return _clamp(left + right)


def _fold_sub(left: int, right: int) -> int | None:
    return _fold_add(left, -right)


def _fold_pow(left: int, right: int) -> int | None:
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


def _fold_lshift(left: int, right: int) -> int | None:
    if right < 0:
        return None
    if left == 0:
        return 0
    if _saturated(left) or right >= 64:
        return SATURATED * _sign(left)
    return _clamp(left << right)


def _floor_div(left: int, right: int) -> int | None:
    return None if right == 0 else left // right


def _mod(left: int, right: int) -> int | None:
    return None if right == 0 else left % right


def _rshift(left: int, right: int) -> int | None:
    return None if right < 0 else left >> right


#: operators that fold saturated operands too (to a saturated result)
SATURATING_OPERATORS: dict[type[ast.operator], Callable[[int, int], int | None]] = {
    ast.Mult: _fold_mult,
    ast.Add: _fold_add,
    ast.Sub: _fold_sub,
    ast.Pow: _fold_pow,
    ast.LShift: _fold_lshift,
}
#: operators whose result only means something for exact operands
EXACT_OPERATORS: dict[type[ast.operator], Callable[[int, int], int | None]] = {
    ast.FloorDiv: _floor_div,
    ast.Mod: _mod,
    ast.RShift: _rshift,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
}


def fold_int(left: int, op: ast.operator, right: int) -> int | None:
    """``left op right`` for ints that may stand for saturated values,
    without ever building a huge number."""
    saturating = SATURATING_OPERATORS.get(type(op))
    if saturating is not None:
        return saturating(left, right)
    exact = EXACT_OPERATORS.get(type(op))
    if exact is None or _saturated(left) or _saturated(right):
        return None
    return exact(left, right)


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
            return self._fold_bytes(node.args, depth)
        if name in ("list", "tuple") and len(node.args) == 1:
            return self._fold_sequence(node.args[0], depth)
        return None

    def _fold_bytes(self, args: list[ast.expr], depth: int) -> Built | None:
        """``bytes(N)`` (N zero bytes) or ``bytes(iterable)`` (one per item)."""
        source = args[0]
        value = self.fold(source, depth)
        if isinstance(value, int) and len(args) == 1:
            return Built("bytes", max(0, value), max(0, value))
        count = self._items(source, depth) if not isinstance(value, int) else None
        return None if count is None else Built("bytes", count, count)

    def _fold_sequence(self, source: ast.expr, depth: int) -> Built | None:
        """``list(iterable)``: a slot per item, and an int object per item of a range."""
        count = self._items(source, depth)
        if count is None:
            return None
        is_range = isinstance(source, ast.Call) and self.ctx.call_name(source) == "range"
        per_item = POINTER + (INT_OBJECT if is_range else 0)
        return Built("list", count, _clamp(per_item * count))


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
