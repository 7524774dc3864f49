"""Calls go only to the rules that declared their callee (``Rule.calls`` /
``Rule.methods``), and routing changes no finding."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.engine import Engine
from flake8_hermetic.rule import Rule
from flake8_hermetic.settings import Settings
from flake8_hermetic.violation import Violation
from tests.helpers import source_corpus_params

RULES = list(all_rules().values())


class SleepOrUndo(Rule):
    """Records the calls routed to it (not registered: no code)."""

    calls = frozenset({"time.sleep", "os.spawn*", "*.rglob"})
    methods = frozenset({"undo"})
    seen: list[str] = []

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        self.seen.append(ast.unparse(node.func))
        return iter(())


class EveryCall(SleepOrUndo):
    """Declares nothing: gets every call."""

    calls = None
    methods = None


def routed(rule: type[SleepOrUndo], source: str) -> list[str]:
    rule.seen = []
    text = textwrap.dedent(source)
    Engine([rule]).lint(ast.parse(text), text.splitlines(True), "tests/test_x.py", Settings())
    return rule.seen


ROUTING = """
    import time as clock
    from os import spawnl as start
    from pathlib import Path

    def test_x(tmp_path, monkeypatch):
        clock.sleep(1)
        sleep(1)
        start(0, "prog", "prog")
        Path(tmp_path).rglob("*.py")
        monkeypatch.undo()
        patches[0].undo()
        undo()
        clock.monotonic()
        len([])

    def test_shadowed(clock):
        clock.sleep(1)
"""


def test_a_call_reaches_the_rules_that_declared_its_name_or_method() -> None:
    assert routed(SleepOrUndo, ROUTING) == [
        "clock.sleep",  # time.sleep through the alias; a bare sleep() is not time.sleep
        "start",  # os.spawnl, by the pattern os.spawn*
        "Path(tmp_path).rglob",  # pathlib.Path().rglob, by the pattern *.rglob
        "monkeypatch.undo",
        "patches[0].undo",  # a method is routed by its name even when the receiver has none
    ]


def test_a_rule_that_declares_nothing_gets_every_call() -> None:
    calls = [node for node in ast.walk(ast.parse(textwrap.dedent(ROUTING))) if isinstance(node, ast.Call)]
    assert len(routed(EveryCall, ROUTING)) == len(calls) == 11


def test_a_callee_learnt_while_walking_is_routed_from_then_on() -> None:
    source = """
        import threading

        threading.Thread(target=print).start()
        Worker(target=print).start()

        class Worker(threading.Thread):
            pass

        def test_worker():
            worker = Worker(target=print)
            worker.start()
    """
    found = Engine([all_rules()["HRM112"]]).lint(
        ast.parse(textwrap.dedent(source)), textwrap.dedent(source).splitlines(True), "tests/test_x.py", Settings()
    )
    assert [v.line for v in found] == [11]


def test_configured_host_readers_are_routed_to_hrm402() -> None:
    source = "import myapp.config\nSETTINGS = myapp.config.load()\n"
    lint = Engine([all_rules()["HRM402"]]).lint
    configured = Settings(rule_options={"host-readers": frozenset({"myapp.config.load"})})
    assert [v.line for v in lint(ast.parse(source), source.splitlines(True), "tests/test_x.py", configured)] == [2]
    assert lint(ast.parse(source), source.splitlines(True), "tests/test_x.py", Settings()) == []


@pytest.mark.parametrize("path", source_corpus_params())
def test_routing_calls_by_name_changes_no_finding(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    settings = Settings(rule_options={"host-readers": frozenset({"socket.gethostname"})})

    def findings(engine: Engine) -> list[tuple[int, int, str, str]]:
        return [(v.line, v.col, v.text, v.where) for v in engine.lint(tree, text.splitlines(True), str(path), settings)]

    routed_findings = findings(Engine(RULES))
    assert routed_findings == findings(Engine(RULES, route_calls=False))
