"""The statements that branch or loop, by the keyword that spells them (HRM501, HRM502)."""

from __future__ import annotations

import ast


CONTROL_FLOW: dict[type[ast.AST], str] = {
    ast.If: "if",
    ast.For: "for",
    ast.AsyncFor: "async for",
    ast.While: "while",
    ast.Try: "try",
    ast.Match: "match",
}
if hasattr(ast, "TryStar"):  # Python 3.11+
    CONTROL_FLOW[ast.TryStar] = "try"
CONTROL_FLOW_TYPES = tuple(CONTROL_FLOW)
TRY_TYPES = tuple(kind for kind, word in CONTROL_FLOW.items() if word == "try")
