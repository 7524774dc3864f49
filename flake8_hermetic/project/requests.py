"""The fixture names a test asks for in its own file, read from the scopes around the walk."""

from __future__ import annotations

import ast
from typing import Any

from flake8_hermetic.project.modules import mark_aliases, marked_fixtures, pytestmark_fixtures

#: id(tree) -> (tree, its usefixtures aliases, its module pytestmark fixtures), for the last few modules
_MARKS: dict[int, tuple[ast.AST, dict[str, tuple[str, ...]], tuple[str, ...]]] = {}


def _module_marks(tree: ast.Module) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    kept = _MARKS.get(id(tree))
    if kept is None or kept[0] is not tree:
        _MARKS.clear() if len(_MARKS) > 16 else None
        aliases = mark_aliases(tree)
        kept = _MARKS[id(tree)] = (tree, aliases, pytestmark_fixtures(tree.body, aliases))
    return kept[1], kept[2]


def requested_fixtures(scopes: list[Any]) -> list[str]:
    """The fixture names the test around the walk requests: the parameters
    of its functions, the ``usefixtures`` marks on them and on their classes
    (a decorator, a class's ``pytestmark``, a module-level alias of the mark:
    ``usefixtures = pytest.mark.usefixtures("clean_env")``) and the module's
    ``pytestmark`` (one mark or a list) (``scopes``: the context's scope list)."""
    names: list[str] = []
    aliases: dict[str, tuple[str, ...]] = {}
    for scope in scopes:
        node = scope.node
        if scope.kind == "module":
            aliases, marked = _module_marks(node)
            names.extend(marked)
            continue
        if scope.kind == "function":
            arguments = node.args
            names.extend(a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))
        else:
            names.extend(pytestmark_fixtures(node.body, aliases))
        for decorator in getattr(node, "decorator_list", ()):
            names.extend(marked_fixtures(decorator, aliases))
    return names


def enclosing_class(scopes: list[Any]) -> str | None:
    """The module-level class the walk is inside (the model knows those, and
    their bases' fixtures count for its tests), or None: outside a class, or
    in a class nested in another."""
    classes = [scope.name for scope in scopes if scope.kind == "class"]
    return classes[0] if len(classes) == 1 else None
