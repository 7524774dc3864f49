"""Names of things in the tree: the last name of a callee or attribute."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from flake8_hermetic.imports import dotted_name

if TYPE_CHECKING:
    from flake8_hermetic.facts.view import FileView


def last_name(node: ast.AST) -> str:
    """The last name a node spells: ``a.b.c`` -> "c", ``f`` -> "f", and for a
    call its callee's (``x.close()`` -> "close"); "" for anything else."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def called_as(ctx: FileView, call: ast.Call) -> str:
    """The callee's canonical dotted name through imports, else as written."""
    return ctx.call_name(call) or dotted_name(call.func) or ""


def callee_last_name(ctx: FileView, call: ast.Call) -> str:
    """The last part of :func:`called_as`: ``sp.run`` imported as ``run`` -> "run"."""
    return called_as(ctx, call).rpartition(".")[2]
