"""The shortcuts that keep the walk cheap find what the long way finds: node
types a rule takes on while walking (Context.dispatch_to), HRM501 ignoring
calls once a test asserts, the clock flow skipping functions that name no
clock; and a lint leaves nothing behind for the garbage collector."""

from __future__ import annotations

import ast
import gc
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.context import Context
from flake8_hermetic.engine import Engine
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.determinism import clock
from flake8_hermetic.settings import Settings
from flake8_hermetic.violation import Violation
from tests.helpers import FIXTURES, source_corpus, source_corpus_params

RULES = all_rules()


class NamesAfterMarker(Rule):
    """Sees names only once the call ``start_watching()`` was walked."""

    seen: list[str] = []

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if isinstance(node.func, ast.Name) and node.func.id == "start_watching":
            self.ctx.dispatch_to(ast.Name, self.on_name)
        return iter(())

    def on_name(self, node: ast.Name) -> Iterator[Violation]:
        self.seen.append(node.id)
        return iter(())


def lint(rules: list[type[Rule]], source: str, path: str = "tests/test_x.py") -> list[Violation]:
    text = textwrap.dedent(source)
    return Engine(rules).lint(ast.parse(text), text.splitlines(True), path, Settings())


def test_a_type_taken_on_while_walking_is_dispatched_from_then_on() -> None:
    NamesAfterMarker.seen = []
    lint([NamesAfterMarker], """
        before = first
        start_watching()
        after = second
        def test_x():
            return third
    """)
    # the names before the call are not even stacked; the callee's own name is
    # walked after the call itself, so it is seen
    assert NamesAfterMarker.seen == ["start_watching", "after", "second", "third"]


def test_a_type_taken_on_is_for_this_file_only() -> None:
    NamesAfterMarker.seen = []
    engine = Engine([NamesAfterMarker])
    first, second = "start_watching()\nx = y\n", "x = y\n"
    engine.lint(ast.parse(first), first.splitlines(True), "tests/test_x.py", Settings())
    engine.lint(ast.parse(second), second.splitlines(True), "tests/test_x.py", Settings())
    assert NamesAfterMarker.seen == ["start_watching", "x", "y"]


# -- the rules that take on names or constants only when a file needs them ------


class HRM108Always(RULES["HRM108"]):  # type: ignore[misc,valid-type]
    """HRM108 following every constant and name of every file."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        ctx.dispatch_to(ast.Constant, self.on_constant)
        self._follow_names()


class HRM403Always(RULES["HRM403"]):  # type: ignore[misc,valid-type]
    """HRM403 reading every name and attribute for argv."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        ctx.dispatch_to(ast.Name, self.on_name)
        ctx.dispatch_to(ast.Attribute, self.on_attribute)


class HRM501Always(RULES["HRM501"]):  # type: ignore[misc,valid-type]
    """HRM501 reading every call, even once the test asserts."""

    def _settled(self) -> bool:
        return not self._enclosing_facts()


def findings(rule: type[Rule], path: Path) -> list[tuple[int, int, str]]:
    text = path.read_text(encoding="utf-8")
    found = Engine([rule]).lint(ast.parse(text), text.splitlines(True), str(path), Settings())
    return sorted((v.line, v.col, v.message) for v in found)


@pytest.mark.parametrize("path", source_corpus_params())
@pytest.mark.parametrize(
    ("lazy", "eager"),
    [
        pytest.param("HRM108", HRM108Always, id="HRM108"),
        pytest.param("HRM403", HRM403Always, id="HRM403"),
        pytest.param("HRM501", HRM501Always, id="HRM501"),
    ],
)
def test_a_shortcut_changes_no_finding(path: Path, lazy: str, eager: type[Rule]) -> None:
    assert findings(RULES[lazy], path) == findings(eager, path)


@pytest.mark.parametrize("path", source_corpus_params())
def test_skipping_functions_that_name_no_clock_changes_no_finding(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = [RULES["HRM201"], RULES["HRM203"]]
    quick = sorted(findings(rule, path) for rule in rules)
    monkeypatch.setattr(clock, "may_read_clock", lambda ctx, function: True)
    assert quick == sorted(findings(rule, path) for rule in rules)


def test_the_fixtures_exercise_the_shortcuts() -> None:
    """The comparisons above mean something only if the rules find things there."""
    codes = ("HRM108", "HRM403", "HRM203")
    found = {code: sum(len(findings(RULES[code], path)) for path in source_corpus()) for code in codes}
    assert found["HRM108"] >= 5, found
    assert found["HRM403"] >= 3, found
    assert found["HRM203"] >= 5, found


CLOCK_ALIASES = """
    from time import monotonic as now
    import timeit

    def test_alias():
        start = now()
        assert now() - start < 0.1  # HRM203

    def test_module():
        started = timeit.default_timer()
        assert timeit.default_timer() - started < 0.1  # HRM203

    def test_outer():
        import time as clock

        def inner():
            began = clock.perf_counter()
            assert clock.perf_counter() - began < 0.1  # HRM203

        inner()  # a local def nothing calls never runs (the never-runs principle)

    def test_no_clock():
        begin = counter()
        assert counter() - begin < 1
"""


def test_a_clock_under_another_name_is_still_read() -> None:
    found = lint([RULES["HRM203"]], CLOCK_ALIASES)
    expected = [n for n, line in enumerate(textwrap.dedent(CLOCK_ALIASES).splitlines(), 1) if "# HRM203" in line]
    assert sorted(v.line for v in found) == expected


def test_a_function_that_names_no_clock_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[bool] = []
    real = clock.ClockFlow.__init__

    def spy(self: clock.ClockFlow, function: object, resolve: object, clockless: bool = False) -> None:
        built.append(clockless)
        real(self, function, resolve, clockless)  # type: ignore[arg-type]

    monkeypatch.setattr(clock.ClockFlow, "__init__", spy)
    lint([RULES["HRM203"]], """
        import time

        def test_clock():
            start = time.monotonic()
            self.assertLess(time.monotonic() - start, 1)

        def test_plain(self):
            self.assertLess(compute(), 3)
    """)
    assert built == [False, True]


# -- what a lint leaves for the garbage collector --------------------------------


@pytest.mark.parametrize("path", sorted((FIXTURES / "rules").rglob("*.py")), ids=lambda p: p.name)
def test_a_lint_leaves_no_cyclic_garbage(path: Path) -> None:
    """A file's state (the context, the rules, their caches) is freed by
    reference counting as soon as the lint returns: the collector has nothing
    to find, and nothing of one file is promoted to an older generation."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    engine = Engine(list(RULES.values()))
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        engine.lint(tree, text.splitlines(True), str(path), Settings(enabled=frozenset(RULES)))
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()
