"""What the facts layer may ask of the file being linted: :class:`FileView`.

The facts (``facts/*``) and the project model (``project/*``) answer
questions about a node of a file given the file's walk state; they are typed
against this protocol, never against the per-file context
(``flake8_hermetic.context.Context``, which implements it), so the facts do
not import the layer that imports them, not even for their annotations.
It holds exactly what the facts use; a fact that needs more adds it here
(and the context already has it, or gets it).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from flake8_hermetic.nodes import FunctionNode

_T = TypeVar("_T")


class ScopeView(Protocol):
    """A module, class or function the walk is inside (``context.Scope``)."""

    @property
    def kind(self) -> str:
        """``"module"``, ``"class"`` or ``"function"``."""

    @property
    def name(self) -> str: ...

    @property
    def node(self) -> ast.AST: ...


class FileView(Protocol):
    """The walk state of one file, as the facts read it."""

    @property
    def scopes(self) -> Sequence[ScopeView]:
        """The enclosing scopes, outermost (the module) first."""

    @property
    def scope(self) -> ScopeView:
        """The innermost enclosing scope."""

    @property
    def function(self) -> FunctionNode | None:
        """The innermost enclosing function."""

    def resolve(self, node: ast.AST) -> str | None:
        """The canonical dotted name of ``node`` through the imports in force."""

    def call_name(self, call: ast.Call) -> str | None:
        """``resolve(call.func)``."""

    def ancestors_in_function(self, node: ast.AST | None = None) -> Iterator[tuple[ast.AST, ast.AST | None]]:
        """(ancestor, its child on the path to ``node``) pairs, innermost first, up to the nearest frame."""

    def per_function(self, function: ast.AST, factory: Callable[[Any, FileView], _T], *, names: bool = True) -> _T:
        """``factory(function, self)``, computed once per function and file."""

    def function_nodes(self, function: ast.AST) -> list[ast.AST]:
        """The nodes of ``function``'s own frame, listed once per function and file."""
