"""What a sleep call waits: its duration argument, whether it is zero, whether it polls, and whether its job asserts after it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.nodes import LOOP_TYPES, NEW_FRAMES, own_nodes


def duration_argument(call: ast.Call, keyword_names: tuple[str, ...]) -> ast.expr | None:
    if call.args:
        return None if isinstance(call.args[0], ast.Starred) else call.args[0]
    for keyword in call.keywords:
        if keyword.arg in keyword_names:
            return keyword.value
    return None


def is_literal_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 0


def polls(ctx: Context, node: ast.AST | None = None) -> bool:
    """Whether the sleep runs in a loop that checks a condition between its
    sleeps: a poll. A ``while`` loop tests one each time round, an ``async
    for`` awaits its iterator each round; a ``for`` loop polls when its body
    decides something (an ``if``, ``break``, ``return``, ``try``, or a
    ``yield`` that lets the caller decide: an
    ``assert`` each round fails at once, it does not wait), and a
    comprehension counts as one.
    ``for _ in range(n): step(); sleep(x)`` checks nothing: each sleep is a
    guess like any other."""
    for ancestor, on_path in ctx.ancestors_in_function(node):
        if not isinstance(ancestor, LOOP_TYPES):
            continue
        if isinstance(ancestor, (ast.For, ast.AsyncFor)):
            if on_path is ancestor.iter:
                continue
            if isinstance(ancestor, ast.AsyncFor):
                return True
            return any(isinstance(inner, CHECKS) for stmt in ancestor.body for inner in own_nodes_of(stmt))
        return True
    return False


#: statements by which a loop body checks a condition
#: (a ``yield`` hands each round to the caller, who decides: ``for _ in retry(): yield; sleep(d)``)
CHECKS = (ast.If, ast.Break, ast.Return, ast.Try, ast.While, ast.IfExp, ast.Yield, ast.YieldFrom)


def own_nodes_of(stmt: ast.stmt) -> Iterator[ast.AST]:
    """``stmt`` and its descendants, short of nested defs and lambdas."""
    stack: list[ast.AST] = [stmt]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, NEW_FRAMES):
            stack.extend(ast.iter_child_nodes(current))


def asserts_after(function: ast.AST, position: tuple[int, int]) -> bool:
    """Whether ``function``'s own body checks something after ``position``:
    an ``assert`` or a ``self.assert*()`` call. A job that sleeps and then
    asserts is waiting for another job's state, not simulating work."""
    for node in own_nodes(function):
        if (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)) <= position:
            continue
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("assert"):
            return True
    return False


#: calls that draw a random number
RANDOM_CALLS = frozenset({"random.random", "random.uniform", "random.randint", "random.randrange", "random.choice",
                          "random.expovariate", "random.gauss", "random.triangular"})


def random_duration(ctx: Context, duration: ast.expr) -> bool:
    """A duration drawn at random (``sleep(random() * 0.001)``,
    ``sleep(random.uniform(0, 0.1))``): jitter that shakes out a race, not
    a wait for a state."""
    for node in ast.walk(duration):
        if isinstance(node, ast.Call):
            name = ctx.call_name(node) or ""
            # random.random(), or a generator's own: rng.random(), self.rng.uniform(0, 1)
            if name in RANDOM_CALLS or name.endswith((".random", ".uniform")):
                return True
    return False
