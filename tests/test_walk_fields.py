"""The walk reads only the fields that can hold nodes, and finds the same children."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from flake8_hermetic.nodes import LEAF_TYPES, child_fields

SOURCES = [
    pytest.param(
        """
        import os, sys as system
        from . import sibling
        from .pkg import name as alias
        from os.path import *
        global counter
        async def f(a, /, b: int = 1, *args, c, d=2, **kw) -> None:
            async with ctx() as (x, y):
                async for item in items:
                    await item
            nonlocal_ = [i async for i in agen() if i]
            return {k: v for k, v in d.items()} | {**extra}
        @decorator(arg)
        class C(Base, metaclass=Meta):
            x: int = 0
            def m(self):
                del self.x[0]
                y = lambda q, *r: q if r else -q
                try:
                    raise ValueError("x") from None
                except (TypeError, ValueError) as error:
                    pass
                else:
                    assert not error, f"{y!r:>{width}}"
                finally:
                    print(*args, sep="")
                while a < b <= c and not d or e:
                    a += 1; b @= 2
                    break
                return (yield from g()), ..., b"x", 1j, [1, *rest][1:2:3]
        """,
        id="statements-and-expressions",
    ),
    pytest.param(
        """
        match command:
            case ["go", direction] if direction:
                pass
            case {"key": value, **rest}:
                pass
            case Point(x=0, y=_) | None | True:
                pass
            case [1, *others] as whole:
                pass
            case -1 | 1.5 | "s" | Color.RED:
                pass
        """,
        id="match",
    ),
]
if sys.version_info >= (3, 11):
    SOURCES.append(pytest.param("try:\n    pass\nexcept* OSError as group:\n    pass\n", id="try-star"))
if sys.version_info >= (3, 12):
    SOURCES.append(pytest.param("type Alias[T: int, *Ts, **P] = list[T]\ndef f[T](x: T) -> T: ...\n", id="type-params"))


def children(node: ast.AST, leaves: bool) -> list[ast.AST]:
    found: list[ast.AST] = []
    for field in child_fields(type(node), leaves):
        value = getattr(node, field, None)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST) and (leaves or type(item) not in LEAF_TYPES):
                found.append(item)
    return found


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("leaves", [pytest.param(True, id="leaves"), pytest.param(False, id="no-leaves")])
def test_child_fields_find_every_child(source: str, leaves: bool) -> None:
    nodes = list(ast.walk(ast.parse(textwrap.dedent(source))))
    assert len(nodes) > 5
    missed = [
        ast.dump(node) for node in nodes
        if children(node, leaves) != [c for c in ast.iter_child_nodes(node) if leaves or type(c) not in LEAF_TYPES]
    ]
    assert missed == []


def test_names_and_constants_have_no_child_fields() -> None:
    assert child_fields(ast.Name, leaves=False) == ()
    assert child_fields(ast.Constant, leaves=True) == ()
    assert child_fields(ast.Attribute, leaves=False) == ("value",)
    assert child_fields(ast.Attribute, leaves=True) == ("value", "ctx")
