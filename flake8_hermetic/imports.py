"""Turn the names a file uses into canonical dotted names through its imports.

``import subprocess as sp`` makes ``sp.run`` resolve to ``subprocess.run``;
``from os import chdir as cd`` makes ``cd`` resolve to ``os.chdir``;
``from unittest import mock`` makes ``mock.patch`` ``unittest.mock.patch``.
A name that no import binds resolves to itself (``open``, ``self.assertEqual``),
so a canonical module-qualified name is never guessed from a local variable.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable


def bindings_of(node: ast.Import | ast.ImportFrom) -> Iterable[tuple[str, str]]:
    """The (local name, dotted target) pairs one import statement binds."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.partition(".")[0]
                yield top, top
        return
    module = "." * node.level + (node.module or "")
    for alias in node.names:
        if alias.name == "*":
            continue
        target = f"{module}.{alias.name}" if module and module[-1] != "." else module + alias.name
        yield alias.asname or alias.name, target


def module_imports(tree: ast.Module) -> dict[str, str]:
    """Imports made at module level, including under ``if``/``try``/``with``.

    Collected before the walk so that a function defined above a late import
    still resolves it; function bodies are left to the walk.
    """
    aliases: dict[str, str] = {}
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for local, target in bindings_of(stmt):
                aliases.setdefault(local, target)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.AsyncWith)) or (
            type(stmt).__name__ == "TryStar"
        ):
            for name in ("body", "orelse", "finalbody"):
                pending.extend(getattr(stmt, name, ()))
            for handler in getattr(stmt, "handlers", ()):
                pending.extend(handler.body)
    return aliases


def dotted_name(node: ast.AST) -> str | None:
    """The source spelling of a chain of attributes on a name (``self.tmp.name``),
    without resolving imports; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class ImportResolver:
    """Resolve expressions against a stack of alias maps (module, then functions).

    :attr:`state` names the bindings in force: every change (an import or a
    shadowing local inside a function) gets a new number, and leaving a
    function returns to the number of the scope around it, so two places
    with the same state resolve every name alike.
    """

    __slots__ = ("_frames", "_states", "_changes")

    def __init__(self, module_aliases: dict[str, str]) -> None:
        self._frames: list[dict[str, str]] = [module_aliases]
        self._states: list[int] = [0]
        self._changes = 0

    @property
    def state(self) -> int:
        return self._states[-1]

    def _changed(self) -> None:
        self._changes += 1
        self._states[-1] = self._changes

    def push(self) -> None:
        self._frames.append({})
        self._states.append(self._states[-1])  # an empty frame changes no binding

    def pop(self) -> None:
        self._frames.pop()
        self._states.pop()

    def bind(self, node: ast.Import | ast.ImportFrom) -> None:
        self._frames[-1].update(bindings_of(node))
        self._changed()

    def lookup(self, name: str) -> str | None:
        for frame in reversed(self._frames):
            target = frame.get(name)
            if target is not None:
                return target  # "" for a local that shadows an import
        return None

    def shadow(self, name: str) -> bool:
        """Make ``name`` a local of the innermost frame if it hid an import
        (a parameter or assignment named like one); True if it did."""
        if len(self._frames) > 1 and self.lookup(name):
            self._frames[-1][name] = ""
            self._changed()
            return True
        return False

    def resolve(self, node: ast.AST) -> str | None:
        """The canonical dotted name of ``node``, or None if it has none.

        A call in the chain is kept as ``()``: ``Path(p).expanduser`` resolves
        to ``pathlib.Path().expanduser``.
        """
        parts: list[str] = []
        while True:
            if isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            elif isinstance(node, ast.Call):
                parts.append("()")
                node = node.func
            elif isinstance(node, ast.Name):
                target = self.lookup(node.id)
                if target == "":
                    return None  # a local variable: not guessed at
                head = target or node.id
                break
            else:
                return None
        if not parts:
            return head
        dotted = head
        for part in reversed(parts):
            dotted = dotted + part if part == "()" else f"{dotted}.{part}"
        return dotted

    def names_bound_to(self, modules: Iterable[str]) -> set[str]:
        """The local names an import bound to one of ``modules`` or to
        something inside it (``import time as t``, ``from time import monotonic``)."""
        heads = tuple(modules)
        prefixes = tuple(f"{module}." for module in heads)
        return {
            name for frame in self._frames for name, target in frame.items()
            if target in heads or target.startswith(prefixes)
        }

    def is_bound(self, name: str) -> bool:
        return self.lookup(name) is not None
