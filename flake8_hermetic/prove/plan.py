"""The flagged statements, and the rounds that inject after them.

A finding names a line and a column; what runs is a statement. Each
finding to prove is mapped to the innermost statement that holds its
position (all its lines: a call spread over several lines is one
statement) and to the code object that executes it (the function, class
body or module the statement is in, known to the interpreter by its name
and first line). Findings on one statement share one target: one
injection after it proves them all.

The rounds: each target is injected in one test (the first, in collection
order, that reached it), a round injects at most once per test, so the
rounds are as many as the most targets any one test has to prove.
"""

from __future__ import annotations

import ast
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

#: the environment variable that names the plan file of a run (read by the plugin)
PLAN_VARIABLE = "HERMETIC_PROVE_PLAN"


@dataclass(frozen=True)
class Target:
    """A statement to watch: ``start``..``end`` in ``file``, run by the code object ``(name, first)``."""

    id: int
    file: str  # real path
    start: int
    end: int
    name: str  # co_name of the code object that runs it
    first: int  # its co_firstlineno

    def as_json(self) -> dict[str, object]:
        return asdict(self)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]


def _holds(node: ast.stmt, line: int, col: int) -> bool:
    start = (_first_line(node), node.col_offset if not getattr(node, "decorator_list", None) else 0)
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
    return start <= (line, col) <= end


def _bodies(node: ast.stmt) -> list[list[ast.stmt]]:
    found = [getattr(node, name) for name in ("body", "orelse", "finalbody") if getattr(node, name, None)]
    found += [handler.body for handler in getattr(node, "handlers", [])]
    found += [case.body for case in getattr(node, "cases", [])]
    return found


def _header_end(node: ast.stmt) -> int:
    """The last line of a compound statement's header (before its first body)."""
    firsts = [body[0].lineno for body in _bodies(node) if body and body[0].lineno > node.lineno]
    return min(firsts) - 1 if firsts else node.end_lineno or node.lineno


def statement_at(tree: ast.Module, line: int, col: int) -> tuple[int, int, str, int] | None:
    """``(start, end, code name, code first line)`` of the innermost statement at ``line``:``col`` (0-based)."""
    scope = ("<module>", 1)
    statements: list[ast.stmt] = tree.body
    found: tuple[int, int, str, int] | None = None
    while True:
        inner = next((node for node in statements if _holds(node, line, col)), None)
        if inner is None:
            return found
        bodies = _bodies(inner)
        in_body = next((body for body in bodies if any(_holds(node, line, col) for node in body)), None)
        if in_body is None:
            end = _header_end(inner) if bodies else inner.end_lineno or inner.lineno
            return (_first_line(inner), max(end, _first_line(inner)), *scope)
        if isinstance(inner, _SCOPES):
            scope = (inner.name, _first_line(inner))
        statements = in_body


def _parse(path: str) -> ast.Module | None:
    try:
        with open(path, "rb") as handle:
            return ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class Targets:
    """The targets of a run, one per flagged statement."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, int, int], Target] = {}
        self.trees: dict[str, ast.Module | None] = {}

    def target(self, path: str, line: int, col: int) -> Target | None:
        """The target of a finding at ``path``:``line``:``col`` (``col`` from 1), or None (unparsable)."""
        real = os.path.realpath(path)
        if real not in self.trees:
            self.trees[real] = _parse(real)
        tree = self.trees[real]
        located = statement_at(tree, line, max(col - 1, 0)) if tree is not None else None
        if located is None:
            return None
        start, end, name, first = located
        key = (real, start, first)
        if key not in self.by_key:
            self.by_key[key] = Target(len(self.by_key), real, start, end, name, first)
        return self.by_key[key]

    def all(self) -> list[Target]:
        return list(self.by_key.values())


def rounds(chosen: Mapping[int, str], targets: Iterable[Target]) -> list[dict[int, str]]:
    """The injection rounds: ``target id -> node id`` each, at most one target per test.

    ``chosen`` maps each target to inject to the test that injects it. Per
    test, its targets go to rounds 1, 2, ... in source order, so the count
    is the most targets any one test holds: no fewer rounds can do it.
    """
    order = {target.id: (target.file, target.start) for target in targets}
    per_test: dict[str, list[int]] = {}
    for target_id, nodeid in chosen.items():
        per_test.setdefault(nodeid, []).append(target_id)
    planned: list[dict[int, str]] = []
    for nodeid, ids in sorted(per_test.items()):
        for index, target_id in enumerate(sorted(ids, key=lambda t: order.get(t, ("", t)))):
            if index == len(planned):
                planned.append({})
            planned[index][target_id] = nodeid
    return planned


def write_json(path: str, data: Any) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file beside it, then a rename)."""
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".prove-", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(data, stream)
    os.replace(temporary, path)
