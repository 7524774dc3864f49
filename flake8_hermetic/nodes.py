"""Shapes of the syntax tree every layer shares: the def types, the frames,
the loops, the fields that hold child nodes, and a function's own nodes."""

from __future__ import annotations

import ast
from collections.abc import Iterator

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPE_TYPES = frozenset((*DEF_TYPES, ast.ClassDef))
LOOP_TYPES = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
LEAF_TYPES = tuple(
    leaf
    for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
    for leaf in base.__subclasses__()
)
#: fields that never hold a node (names, flags, strings), in every node type
SCALAR_FIELDS = frozenset({
    "id", "attr", "name", "arg", "asname", "module", "level", "kind", "conversion", "simple",
    "is_async", "type_comment", "tag", "rest", "kwd_attrs",
})
#: fields that hold only a context or an operator (``Load``, ``Add``, ``Eq``)
LEAF_FIELDS = frozenset({"ctx", "op", "ops"})

#: nodes whose body is a frame of its own, with names of its own
NEW_FRAMES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body in source order.

    A nested def, class or lambda is yielded but not entered: its body is
    another frame, with names of its own.
    """
    stack: list[ast.AST] = list(reversed(getattr(function, "body", [])))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, NEW_FRAMES):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def node_types() -> Iterator[type[ast.AST]]:
    """Every concrete node class of this Python's ``ast``."""
    pending: list[type[ast.AST]] = [ast.AST]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls._fields or not cls.__subclasses__():
            yield cls


def child_fields(node_type: type[ast.AST], leaves: bool) -> tuple[str, ...]:
    """The fields of ``node_type`` that may hold child nodes, in ``_fields``
    order; with ``leaves=False``, not those holding only contexts and operators."""
    if node_type is ast.Constant or node_type.__name__ == "MatchSingleton":
        return ()  # their ``value`` is a Python constant
    # ``type X = ...`` (3.12+): the alias's ``name`` is a Name node, not a string
    nodes_named = node_type.__name__ == "TypeAlias"
    return tuple(
        field for field in node_type._fields
        if (field not in SCALAR_FIELDS or (nodes_named and field == "name")) and (leaves or field not in LEAF_FIELDS)
    )


def shape(node: object) -> object:
    """A hashable key equal for two nodes of the same structure (``ast.dump``
    without positions), built without the cyclic closure ``ast.dump`` leaves
    for the collector on every call."""
    if isinstance(node, ast.AST):
        return (type(node).__name__, *(shape(getattr(node, field, None)) for field in node._fields))
    if isinstance(node, list):
        return tuple(shape(item) for item in node)
    return node if isinstance(node, (str, bytes, int, float, complex, bool, type(None), type(...))) else repr(node)
