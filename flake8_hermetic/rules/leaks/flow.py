"""Where a node sits in its function: the statements that run after it,
whether it is the call a test expects to fail, whether it runs only in a
script, what an ``except`` catches.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.raising import expects_raise
from flake8_hermetic.nodes import NEW_FRAMES


def path_to(ctx: Context, node: ast.AST) -> list[ast.AST]:
    """``node`` and its ancestors, outermost first; ``node`` is the node
    being visited or one of its ancestors."""
    for index in range(len(ctx.parents) - 1, -1, -1):
        if ctx.parents[index] is node:
            return ctx.parents[: index + 1]
    return [*ctx.parents, node]


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _block_positions(holder: ast.AST, ctx: Context) -> dict[int, tuple[list[ast.stmt], int]]:
    """Each statement directly in one of ``holder``'s blocks (by id): that
    block and its index there. Listed once per holder and file, so finding a
    statement's later siblings costs no scan of a long block."""
    positions: dict[int, tuple[list[ast.stmt], int]] = {}
    for field in _BLOCK_FIELDS:
        siblings = getattr(holder, field, None)
        if isinstance(siblings, list):
            for index, stmt in enumerate(siblings):
                positions.setdefault(id(stmt), (siblings, index))
    return positions


def block_of(ctx: Context, holder: ast.AST, stmt: ast.AST) -> list[ast.stmt] | None:
    """The block of ``holder`` (its body, ``orelse``, ``finalbody``,
    ``handlers`` or ``cases``) that holds ``stmt``, or None."""
    found = ctx.per_function(holder, _block_positions, names=False).get(id(stmt))
    return found[0] if found is not None else None


def later_blocks(ctx: Context, node: ast.AST) -> Iterator[tuple[list[ast.stmt], int, ast.AST]]:
    """Per block around ``node``'s statement in its function, innermost
    first: (the block, the index after the statement at that level, the
    block's holder); the block is empty when the statement is in no list."""
    chain = path_to(ctx, node)
    for position in range(len(chain) - 1, 0, -1):
        stmt = chain[position]
        holder = chain[position - 1]
        if isinstance(stmt, NEW_FRAMES):
            return
        if not isinstance(stmt, ast.stmt):
            continue
        siblings, index = ctx.per_function(holder, _block_positions, names=False).get(id(stmt), ([], -1))
        yield siblings, index + 1, holder


def later_statements(ctx: Context, node: ast.AST) -> Iterator[tuple[ast.stmt, bool]]:
    """The statements that run after ``node``'s statement in its function,
    innermost block first, as (statement, encloses node) pairs: the later
    siblings at each level, and each enclosing ``try`` (whose ``finally``
    runs after it)."""
    for siblings, start, holder in later_blocks(ctx, node):
        for later in siblings[start:]:
            yield later, False
        if is_try(holder):
            yield holder, True  # type: ignore[misc]


def is_try(node: ast.AST) -> bool:
    return isinstance(node, ast.Try) or type(node).__name__ == "TryStar"


def _fails(stmt: ast.stmt) -> bool:
    """``self.fail(...)``, ``pytest.fail(...)`` or ``raise``."""
    if isinstance(stmt, ast.Raise):
        return True
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "fail"


def expects_failure(ctx: Context, node: ast.AST) -> bool:
    """``node`` is in the last statement of a ``with self.assertRaises(...)``
    or ``with pytest.raises(...)`` block, or of a ``try`` whose ``else``
    fails the test: the call is the one expected to raise, so whatever it
    would have started or changed never happens."""
    chain = path_to(ctx, node)
    for position in range(len(chain) - 1, 0, -1):
        stmt = chain[position]
        if isinstance(stmt, NEW_FRAMES):
            return False
        if not isinstance(stmt, ast.stmt):
            continue
        holder = chain[position - 1]
        if isinstance(holder, ast.Try) and holder.body[-1] is stmt:
            return bool(holder.handlers) and bool(holder.orelse) and _fails(holder.orelse[0])
        if not isinstance(holder, (ast.With, ast.AsyncWith)) or holder.body[-1] is not stmt:
            return False
        return any(expects_raise(ctx, item.context_expr) for item in holder.items)
    return False


def under_main_guard(ctx: Context) -> bool:
    """Inside ``if __name__ == "__main__":``, which runs only when the file
    is executed as a script (by tox, by hand), never in a test run."""
    return any(
        isinstance(a, ast.If) and isinstance(a.test, ast.Compare) and isinstance(a.test.left, ast.Name)
        and a.test.left.id == "__name__" and len(a.test.comparators) == 1
        and isinstance(a.test.comparators[0], ast.Constant) and a.test.comparators[0].value == "__main__"
        for a in ctx.parents
    )


def caught_errors(handler: ast.ExceptHandler) -> list[ast.expr]:
    if handler.type is None:
        return [ast.Name(id="BaseException")]
    if isinstance(handler.type, ast.Tuple):
        return list(handler.type.elts)
    return [handler.type]


#: decorators that skip a test whatever the host (skipIf/skipUnless decide at run time)
ALWAYS_SKIPPED = frozenset({"pytest.mark.skip", "unittest.skip"})


def always_skipped(ctx: Context) -> bool:
    """The node being visited is in a test (or a class) under an unconditional
    skip decorator (``@pytest.mark.skip``, ``@unittest.skip("...")``): it never runs."""
    for scope in ctx.scopes:
        for decorator in getattr(scope.node, "decorator_list", ()):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if ctx.resolve(target) in ALWAYS_SKIPPED:
                return True
    return False
