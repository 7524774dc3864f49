"""When a node runs: at import (collection) time or later, and inside ``parametrize`` arguments or not."""

from __future__ import annotations

import ast

from flake8_hermetic.context import Context
from flake8_hermetic.facts.modules import is_main_guard
from flake8_hermetic.nodes import DEF_TYPES

PARAMETRIZE = "pytest.mark.parametrize"


def _is_dead_guard(test: ast.expr) -> bool:
    """``if __name__ == "__main__":`` and ``if TYPE_CHECKING:`` bodies do not
    run when pytest imports the module."""
    if isinstance(test, ast.Compare):
        return is_main_guard(test)
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
    The answers are facts of the tree, the same for every rule: the rules
    share one per file (see :func:`collection_time`).
    """

    __slots__ = ("ctx", "_known", "_bodies")

    def __init__(self, module: ast.AST, ctx: Context) -> None:
        self.ctx = ctx
        self._known: dict[int, tuple[bool, bool]] = {}
        #: per def or ``if`` (by id): the ids of its body's statements, so a
        #: step asks a set, not the whole body (a 150,000-statement test)
        self._bodies: dict[int, frozenset[int]] = {}

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
            if self._in_body(parent, child):
                return False, False
        elif isinstance(parent, ast.Lambda):
            if child is parent.body:
                return False, False
        elif isinstance(parent, ast.If):
            if _is_dead_guard(parent.test) and self._in_body(parent, child):
                return False, False
        elif isinstance(parent, ast.Call) and child is not parent.func and not in_parametrize:
            if self.ctx.call_name(parent) == PARAMETRIZE:
                return (True, True) if runs else (False, True)
        return state  # the same tuple: no new object per node

    def _in_body(self, parent: ast.AST, child: ast.AST) -> bool:
        body = self._bodies.get(id(parent))
        if body is None:
            body = self._bodies[id(parent)] = frozenset(map(id, parent.body))  # type: ignore[attr-defined]
        return id(child) in body


def collection_time(ctx: Context) -> CollectionTime:
    """The file's :class:`CollectionTime`, made once per file for every rule
    that asks (kept by the context, as a per-function fact of the module)."""
    return ctx.per_function(ctx.tree, CollectionTime)
