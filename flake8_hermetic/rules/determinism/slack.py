"""How many seconds a bound on elapsed wall-clock time allows (HRM203's
principle ``loose-bound``).

A comparison of two clock readings is read as a linear form: a constant plus
a coefficient per reading, in seconds (an ``_ns`` clock counts 1e9 per
second, ``elapsed * 1000`` is milliseconds). An upper bound leaves the host
``S`` seconds when ``larger - smaller`` is ``S * k + k * (earlier - later)``:
two readings of opposite sign and equal weight. What cannot be read so (a
bound that is a name bound elsewhere, a call of the code under test, three
readings) gives ``None``: the slack is not known.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable

from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import FunctionNode, own_nodes
from flake8_hermetic.rules.determinism.clock import Durations

#: the slack under which a bound is tight: a loaded CI host stalls a test for a few hundred milliseconds
#: (a garbage collection, a neighbour's build, a swapped page), so a bound leaving it less can fail there
TIGHT_SECONDS = 0.5
#: how deep names and arithmetic are followed before the value is given up as unknown
DEPTH = 24
#: calls whose value is (near enough) their first argument's, for a duration
PASS_THROUGH = frozenset({"abs", "round", "float", "int", "math.floor", "math.ceil", "math.trunc", "math.fabs"})
#: calls that wait for at most their first positional argument, in seconds
WAITING_CALLS = frozenset({"sleep", "wait", "join"})
#: keyword arguments that give the seconds a call waits for at most
WAITING_KEYWORDS = frozenset({"timeout", "delay", "seconds", "interval", "duration"})

Linear = tuple[float, dict[object, float]]


class Slack:
    """The linear reader of one function's clock arithmetic, over its :class:`Durations`."""

    __slots__ = ("_durations", "_resolve", "_module_value", "_parameters")

    def __init__(
        self,
        durations: Durations,
        resolve: Callable[[ast.AST], str | None],
        module_value: Callable[[str], ast.expr | None],
        parameters: frozenset[str] = frozenset(),
    ) -> None:
        """``parameters``: the function's own, whose values come from its caller (a module-level
        name they shadow says nothing about them)."""
        self._durations = durations
        self._resolve = resolve
        self._module_value = module_value
        self._parameters = parameters

    def number(self, node: ast.AST | None) -> float | None:
        """The clock-free value of ``node`` in seconds, when literals and names bound once give it."""
        form = self._linear(node, 0) if node is not None else None
        if form is None or form[1]:
            return None
        return form[0]

    def allowed(self, larger: ast.AST, smaller: ast.AST) -> tuple[float, int] | None:
        """The seconds ``larger >= smaller`` lets elapse between its two readings, and the line of
        the earlier reading where the source shows it (0 where it does not), or ``None``."""
        high, low = self._linear(larger, 0), self._linear(smaller, 0)
        if high is None or low is None:
            return None
        terms = dict(high[1])
        for key, weight in low[1].items():
            terms[key] = terms.get(key, 0.0) - weight
        readings = {key: weight for key, weight in terms.items() if abs(weight) > 1e-12}
        weights = list(readings.values())
        if len(weights) != 2 or weights[0] * weights[1] >= 0 or not math.isclose(weights[0], -weights[1]):
            return None
        positions = sorted(key for key in readings if isinstance(key, tuple) and key[0] == "at")
        if len(positions) == 2 and readings[positions[0]] < 0:
            return None  # the earlier reading is subtracted: a lower bound on the time between them
        since = positions[0][1] if len(positions) == 2 else 0
        return (high[0] - low[0]) / abs(weights[0]), since

    def _linear(self, node: ast.AST, depth: int) -> Linear | None:
        if depth > DEPTH:
            return None
        depth += 1
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    number = float(value)
                except OverflowError:  # a literal of 400 digits
                    return None
                return (number, {}) if math.isfinite(number) else None
            return None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self._linear(node.operand, depth)
            if inner is None or isinstance(node.op, ast.UAdd):
                return inner
            return _scaled(inner, -1.0)
        if isinstance(node, ast.BinOp):
            return self._arithmetic(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self._name(node, depth)
        if isinstance(node, ast.Subscript) and self._durations.is_reading(node):
            key = _stored_key(node.value, node.slice)
            # stamps[1]: one stored reading, the same each time it is read
            return None if key is None else (0.0, {key: 1.0})
        return None

    def _arithmetic(self, node: ast.BinOp, depth: int) -> Linear | None:
        left, right = self._linear(node.left, depth), self._linear(node.right, depth)
        if left is None or right is None:
            return None
        op = node.op
        if isinstance(op, (ast.Add, ast.Sub)):
            sign = 1.0 if isinstance(op, ast.Add) else -1.0
            terms = dict(left[1])
            for key, weight in right[1].items():
                terms[key] = terms.get(key, 0.0) + sign * weight
            return left[0] + sign * right[0], terms
        if isinstance(op, ast.Mult):
            if not right[1]:
                return _scaled(left, right[0])
            if not left[1]:
                return _scaled(right, left[0])
            return None
        if isinstance(op, ast.Div) and not right[1] and right[0]:
            return _scaled(left, 1.0 / right[0])
        if isinstance(op, ast.Pow) and not left[1] and not right[1]:
            try:
                power = left[0] ** right[0]
            except (OverflowError, ZeroDivisionError, ValueError):
                return None
            if isinstance(power, complex) or not math.isfinite(power):
                return None  # (-1) ** 0.5
            return float(power), {}
        return None

    def _call(self, node: ast.Call, depth: int) -> Linear | None:
        durations = self._durations
        if durations.is_reading(node):
            return self._reading(node)
        if self._resolve(node.func) in PASS_THROUGH and node.args and not isinstance(node.args[0], ast.Starred):
            return self._linear(node.args[0], depth)
        if _is_reading_aggregate(node, durations):
            key = _stored_key(node.args[0], node.func)
            # max(stamps), min(stamps): one reading each
            return (0.0, {_position(node): 1.0}) if key is None else (0.0, {key: 1.0})
        return None

    def _reading(self, call: ast.Call) -> Linear:
        """One clock call: a reading of its own, in seconds (an ``_ns`` clock counts 1e9 a second)."""
        name = self._resolve(call.func) or ""
        return 0.0, {_position(call): 1e9 if name.endswith("_ns") else 1.0}

    def _name(self, node: ast.Name | ast.Attribute, depth: int) -> Linear | None:
        durations = self._durations
        values = durations.assigned(node)
        if values:
            if any(op is not None for op, _ in values):
                return None  # total += lap: a sum of unknown length
            # a name bound more than once holds, where it is read, what the last binding above gave it
            above = [value for _, value in values if value.lineno < node.lineno]
            if len(values) > 1 and not above:
                return None
            value = max(above, key=lambda v: (v.lineno, v.col_offset)) if above else values[0][1]
            if durations.is_reading(value) and isinstance(value, ast.Call):
                return self._reading(value)
            return self._linear(value, depth)
        if isinstance(node, ast.Name) and node.id not in self._parameters:
            bound = self._module_value(node.id)
            if bound is not None:
                return self._linear(bound, depth)
        return None

    def longest_wait(self, function: FunctionNode | None, since: int, before: int, under: float) -> float:
        """The longest wait shorter than ``under`` seconds that the function sets up from line
        ``since`` to before line ``before``, whose seconds a literal gives:
        ``sleep(0.2)``, ``event.wait(1)``, ``thread.join(2)``, ``timeout=0.5`` (0 when there is none)."""
        longest = 0.0
        for node in own_nodes(function) if function is not None else ():
            if not isinstance(node, ast.Call) or not since <= node.lineno < before:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            candidates: list[ast.expr] = [k.value for k in node.keywords if k.arg in WAITING_KEYWORDS]
            if name in WAITING_CALLS and node.args and not isinstance(node.args[0], ast.Starred):
                candidates.append(node.args[0])
            for candidate in candidates:
                seconds = self.number(candidate)
                if seconds is not None and longest < seconds < under:
                    longest = seconds
        return longest


def _position(node: ast.AST) -> tuple[str, int, int]:
    """The key of one clock call: where it is (two calls of the same clock are two readings)."""
    return "at", getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _stored_key(container: ast.AST, selector: ast.AST) -> tuple[str, object] | None:
    """A key naming one stored reading: a list's name and what picks the reading from it."""
    name = dotted_name(container)
    if name is None:
        return None
    if isinstance(selector, ast.Constant):
        return name, selector.value
    if isinstance(selector, ast.UnaryOp) and isinstance(selector.operand, ast.Constant):
        return name, (type(selector.op).__name__, selector.operand.value)
    picked = dotted_name(selector)
    return None if picked is None else (name, picked)


def _scaled(form: Linear, factor: float) -> Linear:
    return form[0] * factor, {key: weight * factor for key, weight in form[1].items()}


def _is_reading_aggregate(node: ast.Call, durations: Durations) -> bool:
    func = node.func
    return (
        isinstance(func, ast.Name)
        and func.id in ("max", "min")
        and len(node.args) == 1
        and not node.keywords
        and durations.is_reading(node.args[0])
    )


def tight(allowed: float, covered: float) -> bool:
    """Whether a bound allowing ``allowed`` seconds leaves a host under :data:`TIGHT_SECONDS` of slack.

    The slack is what the bound allows beyond ``covered``, the longest wait the test sets up between
    the two readings that is shorter than the bound (a wait as long as the bound or longer is a
    timeout the test expects not to run out)."""
    return allowed - covered < TIGHT_SECONDS
