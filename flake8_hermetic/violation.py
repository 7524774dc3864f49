"""A hazard found at a position: what every rule reports."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Violation:
    """One hazard found at a position.

    ``where`` is the scope part of the pytest node id (``Class::test``, or ""
    at module level); ``node`` is the flagged expression, kept so the
    baseline's ``what`` text can be taken from the source only when needed.
    """

    line: int
    col: int
    code: str
    message: str
    where: str = ""
    node: ast.AST | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return f"{self.code} {self.message}"
