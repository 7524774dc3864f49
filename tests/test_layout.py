"""The package's layout, as docs/architecture.md draws it, held by the suite.

* no import cycle among the package's modules (every ``import``, also one
  inside a function; those under ``if TYPE_CHECKING:`` excepted);
* a rule family never imports another family: knowledge two families need
  lives in ``flake8_hermetic/facts/``, and the facts never import a rule;
* no module over 800 lines;
* each rule class in a module of its own, ``rules/<family>/hrmNNN_<what>.py``.

Read statically (``ast``), so a cycle is found even where Python's import
order happens to hide it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import flake8_hermetic
from flake8_hermetic.catalog import all_rules
from flake8_hermetic.rule import Rule

pytestmark = pytest.mark.xdist_group(name="tree_scan_test_layout")

PACKAGE = Path(flake8_hermetic.__file__).parent
NAME = "flake8_hermetic"
MAX_LINES = 800
RULES_PACKAGE = f"{NAME}.rules"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import of a module, at any depth, but not under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.If) and is_type_checking(node.test) and child in node.body:
                continue
            stack.append(child)


def imported_modules(name: str) -> set[str]:
    """The package's modules that module ``name`` imports (a name imported
    from a package counts as the package's ``__init__``, a submodule as itself)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in import_nodes(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        found.update(target for target in targets if target in MODULES and target != name)
    return found


GRAPH = {name: imported_modules(name) for name in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return found


def family_of(name: str) -> str | None:
    """``leaks`` for ``flake8_hermetic.rules.leaks.hrm101_...``; None outside a family."""
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == [NAME, "rules"] else None


def is_single_module_family(name: str) -> bool:
    """``rules/leaks.py`` rather than ``rules/leaks/``: the layout before the split."""
    path = MODULES[name]
    return family_of(name) is not None and path.parent == PACKAGE / "rules" and path.stem != "__init__"


OLD_LAYOUT = pytest.mark.xfail(strict=True, reason="a family still one module: the layout before the split")


def test_the_import_graph_is_read() -> None:
    assert f"{NAME}.rule" in GRAPH[f"{NAME}.engine"]
    assert f"{NAME}.rules" in GRAPH[f"{NAME}.catalog"]  # an import inside a function counts
    assert f"{NAME}.settings" not in GRAPH[f"{NAME}.engine"]  # one under TYPE_CHECKING does not


def test_no_import_cycle() -> None:
    assert cycles(GRAPH) == []


def test_cycles_are_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("name", [pytest.param(name, id=name) for name in GRAPH if family_of(name)])
def test_a_family_imports_no_other_family(name: str) -> None:
    family = family_of(name)
    others = sorted(target for target in GRAPH[name] if family_of(target) not in (None, family))
    assert others == [], f"{name} imports another family: put what they share in flake8_hermetic/facts/"


@pytest.mark.parametrize("name", [pytest.param(name, id=name) for name in GRAPH if name.startswith(f"{NAME}.facts")])
def test_the_facts_import_no_rule(name: str) -> None:
    assert sorted(t for t in GRAPH[name] if t.startswith(RULES_PACKAGE)) == []


@pytest.mark.parametrize(
    "name",
    [pytest.param(name, id=name, marks=[OLD_LAYOUT] if is_single_module_family(name) and
                  len(MODULES[name].read_text(encoding="utf-8").splitlines()) > MAX_LINES else [])
     for name in MODULES],
)
def test_no_module_is_over_800_lines(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(PACKAGE.parent)} has {lines} lines"


def rule_params() -> list[object]:
    params = []
    for code, rule in all_rules().items():
        old = is_single_module_family(rule.__module__)
        params.append(pytest.param(rule, id=code, marks=[OLD_LAYOUT] if old else []))
    return params


@pytest.mark.parametrize("rule", rule_params())
def test_each_rule_has_a_module_of_its_own(rule: type[Rule]) -> None:
    parts = rule.__module__.split(".")
    assert parts[:2] == [NAME, "rules"] and len(parts) == 4, f"{rule.code} lives in {rule.__module__}"
    assert parts[3].startswith(rule.code.lower() + "_"), f"{rule.__module__}: name it hrmNNN_<what it flags>"
    neighbours = sorted(code for code, other in all_rules().items() if other.__module__ == rule.__module__)
    assert neighbours == [rule.code]
