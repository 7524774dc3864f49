"""The package's layout, as docs/architecture.md draws it, held by the suite.

* no import cycle among the package's modules (every ``import``, also one
  inside a function or under ``if TYPE_CHECKING:``);
* a rule family never imports another family: knowledge two families need
  lives in ``flake8_hermetic/facts/``, and the facts never import a rule,
  not even through another module;
* the facts layer (``facts/``, ``project/``) never imports the per-file
  context (``context.py``), directly or through another module: it is typed
  against ``facts/view.py``'s ``FileView``;
* no module over 800 lines, no function above mccabe's complexity 20 (read
  by mccabe itself, so a ``# noqa: C901`` cannot hide one) and no
  ``noqa: C901`` comment at all;
* ``flake8_hermetic/rules/`` holds the family packages and its ``__init__.py``,
  nothing else;
* each rule class in a module of its own, ``rules/<family>/hrmNNN_<what>.py``,
  its ``NNN`` the rule's code.

Read statically (``ast``), so a cycle is found even where Python's import
order happens to hide it. Importing ``a.b.c`` runs ``a/__init__.py`` and
``a/b/__init__.py`` first, so an import of a module is also an edge to each
of its parent packages (except the importer's own parent packages, which are
already running when it runs). Imports under ``if TYPE_CHECKING:`` count
like any other: a type-only import is still a dependency of the module's
meaning, and one that closes a cycle says two layers know each other; a
layer below names what it needs of a layer above with a ``Protocol``
(``facts/view.py``'s ``FileView``, ``options.py``'s ``RuleSettings``).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import mccabe
import pytest

import flake8_hermetic
from flake8_hermetic.catalog import all_rules
from flake8_hermetic.rule import Rule
from tests.helpers import write_tree

pytestmark = pytest.mark.xdist_group(name="tree_scan_test_layout")

PACKAGE = Path(flake8_hermetic.__file__).parent
NAME = "flake8_hermetic"
MAX_LINES = 800
MAX_COMPLEXITY = 20
CONTEXT = f"{NAME}.context"
RULES_PACKAGE = f"{NAME}.rules"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import of a module, at any depth (``if TYPE_CHECKING:`` included)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def parent_packages(name: str) -> set[str]:
    """``{"a", "a.b"}`` for ``a.b.c``: the packages whose ``__init__`` runs first."""
    parts = name.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def imported_modules(name: str, modules: dict[str, Path] = MODULES) -> set[str]:
    """The ``modules`` that module ``name`` imports (a name imported from a
    package counts as the package's ``__init__``, a submodule as itself), with
    the parent packages of each but ``name``'s own."""
    path = modules[name]
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
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for target in targets:
            found.update({target} | parent_packages(target))
    own = parent_packages(name) | {name}
    return {target for target in found if target in modules and target not in own}


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


def reachable(graph: dict[str, set[str]], start: str) -> dict[str, list[str]]:
    """Every module ``start`` imports, directly or through others, with a path to it."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph.get(node, ())):
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    del paths[start]
    return paths


def is_rule_module(name: str) -> bool:
    return name == RULES_PACKAGE or name.startswith(RULES_PACKAGE + ".")


def test_the_import_graph_is_read() -> None:
    assert f"{NAME}.rule" in GRAPH[f"{NAME}.engine"]
    assert f"{NAME}.rules" in GRAPH[f"{NAME}.catalog"]  # an import inside a function counts
    assert f"{NAME}.options" in GRAPH[f"{NAME}.engine"]  # so does one under TYPE_CHECKING
    assert f"{NAME}.settings" not in GRAPH[f"{NAME}.engine"]  # typed against options.RuleSettings
    # ``from flake8_hermetic.facts.names import ...`` runs facts/__init__ first
    facts = f"{NAME}.facts."
    importers = [n for n in GRAPH if n.startswith(f"{NAME}.rules.") and any(t.startswith(facts) for t in GRAPH[n])]
    assert importers
    assert all(f"{NAME}.facts" in GRAPH[n] for n in importers)
    # but not the importer's own parents: a family module importing its sibling
    leaks = {n for n in GRAPH if n.startswith(f"{NAME}.rules.leaks.")}
    assert all(not {f"{NAME}.rules.leaks", f"{NAME}.rules", NAME} & GRAPH[n] for n in leaks)


def _module_name(relative: str) -> str:
    parts = Path(relative).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_a_cycle_through_a_package_init_is_found(tmp_path: Path) -> None:
    """facts/__init__ re-exporting Context, whose module imports facts.names."""
    sources = {
        "flake8_hermetic/__init__.py": "",
        "flake8_hermetic/facts/__init__.py": "from flake8_hermetic.context import Context\n",
        "flake8_hermetic/facts/names.py": "def last_name(): ...\n",
        "flake8_hermetic/context.py": "from flake8_hermetic.facts.names import last_name\nclass Context: ...\n",
    }
    write_tree(tmp_path, sources)
    modules = {_module_name(relative): tmp_path / relative for relative in sources}
    graph = {name: imported_modules(name, modules) for name in modules}
    assert cycles(graph) == [[f"{NAME}.context", f"{NAME}.facts"]]


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
    """Not directly, nor through a module that imports one."""
    paths = reachable(GRAPH, name).values()
    # the first rule module on each path (the rest it imports need not be listed)
    first = [path for path in paths if is_rule_module(path[-1]) and not any(map(is_rule_module, path[:-1]))]
    assert sorted(" -> ".join(path) for path in first) == []


def is_facts_layer(name: str) -> bool:
    return any(name == layer or name.startswith(layer + ".") for layer in (f"{NAME}.facts", f"{NAME}.project"))


@pytest.mark.parametrize("name", [pytest.param(name, id=name) for name in GRAPH if is_facts_layer(name)])
def test_the_facts_layer_does_not_import_the_context(name: str) -> None:
    """Not directly, not through another module, not under ``TYPE_CHECKING``:
    a fact types its ``ctx`` as ``facts.view.FileView``."""
    path = reachable(GRAPH, name).get(CONTEXT)
    assert path is None, f"{' -> '.join(path or ())}: type against flake8_hermetic.facts.view.FileView"


def test_a_type_checking_import_of_the_context_is_seen(tmp_path: Path) -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from flake8_hermetic.context import Context\n"
    sources = {"flake8_hermetic/__init__.py": "", "flake8_hermetic/facts/__init__.py": "",
               "flake8_hermetic/facts/names.py": source, "flake8_hermetic/context.py": ""}
    write_tree(tmp_path, sources)
    modules = {_module_name(relative): tmp_path / relative for relative in sources}
    graph = {name: imported_modules(name, modules) for name in modules}
    assert reachable(graph, f"{NAME}.facts.names") == {CONTEXT: [f"{NAME}.facts.names", CONTEXT]}


def test_reachable_follows_imports_through_other_modules() -> None:
    graph = {"facts.a": {"catalog"}, "catalog": {"rules"}, "rules": set()}
    assert reachable(graph, "facts.a") == {"catalog": ["facts.a", "catalog"], "rules": ["facts.a", "catalog", "rules"]}


@pytest.mark.parametrize("name", [pytest.param(name, id=name) for name in MODULES])
def test_no_module_is_over_800_lines(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(PACKAGE.parent)} has {lines} lines"


def too_complex(path: Path, limit: int = MAX_COMPLEXITY) -> list[str]:
    """The functions of ``path`` above ``limit``, as flake8's C901 measures
    them (mccabe's own visitor, so no ``# noqa`` is read)."""
    visitor = mccabe.PathGraphingAstVisitor()
    visitor.preorder(ast.parse(path.read_text(encoding="utf-8")), visitor)
    return sorted(
        f"{graph.lineno}: {graph.entity} is {graph.complexity()}"
        for graph in visitor.graphs.values()
        if graph.complexity() > limit
    )


@pytest.mark.parametrize("name", [pytest.param(name, id=name) for name in MODULES])
def test_no_function_is_above_complexity_20(name: str) -> None:
    found = too_complex(MODULES[name])
    assert found == [], f"{MODULES[name].relative_to(PACKAGE.parent)}: {found}; split it (no noqa: C901)"


def test_complexity_is_measured_through_a_noqa(tmp_path: Path) -> None:
    branches = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(MAX_COMPLEXITY))
    path = tmp_path / "m.py"
    path.write_text(f"def f(x):  # noqa: C901\n{branches}    return -1\n", encoding="utf-8")
    assert too_complex(path) == [f"1: f is {MAX_COMPLEXITY + 1}"]
    path.write_text(f"def f(x):\n{branches[branches.index('    if x == 1'):]}    return -1\n", encoding="utf-8")
    assert too_complex(path) == []


def test_no_noqa_c901_in_the_package() -> None:
    """The exception is gone: a function past 20 is split, not excused."""
    found = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{number}"
        for path in MODULES.values()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"noqa\b[^#]*\bC901", line, re.IGNORECASE)
    )
    assert found == []


def test_the_rules_package_holds_only_family_packages() -> None:
    rules = PACKAGE / "rules"
    strays = sorted(
        entry.name
        for entry in rules.iterdir()
        if entry.name != "__pycache__"
        and not (entry.is_file() and entry.name == "__init__.py")
        and not (entry.is_dir() and (entry / "__init__.py").is_file())
    )
    assert strays == [], f"{rules.relative_to(PACKAGE.parent)} holds {strays}: a family is a package, rules/<family>/"


@pytest.mark.parametrize("rule", [pytest.param(rule, id=code) for code, rule in all_rules().items()])
def test_each_rule_has_a_module_of_its_own(rule: type[Rule]) -> None:
    parts = rule.__module__.split(".")
    assert parts[:2] == [NAME, "rules"] and len(parts) == 4, f"{rule.code} lives in {rule.__module__}"
    assert re.fullmatch(r"hrm\d{3}_\w+", parts[3]), f"{rule.__module__}: name it hrmNNN_<what it flags>"
    assert parts[3].startswith(rule.code.lower() + "_"), f"{rule.__module__}: name it {rule.code.lower()}_<what>"
    assert MODULES[rule.__module__].parent.parent == PACKAGE / "rules", f"{rule.code} is not in rules/<family>/"
    neighbours = sorted(code for code, other in all_rules().items() if other.__module__ == rule.__module__)
    assert neighbours == [rule.code]


@pytest.mark.parametrize(
    "name", [pytest.param(name, id=name) for name in MODULES if re.fullmatch(r"hrm\d{3}_\w+", name.rpartition(".")[2])]
)
def test_each_rule_module_holds_its_rule(name: str) -> None:
    """The other way round: ``rules/<family>/hrmNNN_*.py`` holds rule HRMNNN, and only it."""
    code = name.rpartition(".")[2][:6].upper()
    assert family_of(name) is not None, f"{name}: a rule module sits in rules/<family>/"
    assert len(name.split(".")) == 4, f"{name}: a rule module sits in rules/<family>/"
    assert sorted(c for c, rule in all_rules().items() if rule.__module__ == name) == [code]
