"""The walk's context and the import resolver, as plain data in, data out."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator

import pytest

from flake8_hermetic.context import Context
from flake8_hermetic.engine import Engine
from flake8_hermetic.imports import ImportResolver, module_imports
from flake8_hermetic.rule import Rule
from flake8_hermetic.settings import Settings
from flake8_hermetic.source import what_text
from flake8_hermetic.testfiles import GlobMatcher, to_posix
from flake8_hermetic.violation import Violation


def resolve_all(source: str) -> list[str | None]:
    """Resolve the callee of every call in ``source``, in order."""
    tree = ast.parse(textwrap.dedent(source))
    resolver = ImportResolver(module_imports(tree))
    return [resolver.resolve(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("import subprocess as sp\nsp.run()", "subprocess.run", id="import-as"),
        pytest.param("from os import chdir as cd\ncd()", "os.chdir", id="from-import-as"),
        pytest.param("from unittest import mock\nmock.patch()", "unittest.mock.patch", id="from-package-import-module"),
        pytest.param("import os.path\nos.path.join()", "os.path.join", id="dotted-import"),
        pytest.param("import os.path as osp\nosp.join()", "os.path.join", id="dotted-import-as"),
        pytest.param("from pathlib import Path\nPath('x').expanduser()", "pathlib.Path().expanduser", id="call"),
        pytest.param("try:\n    import trio as t\nexcept ImportError:\n    pass\nt.sleep()", "trio.sleep", id="try"),
        pytest.param("from .helpers import run\nrun()", ".helpers.run", id="relative-import"),
        pytest.param("open()", "open", id="builtin-unbound"),
        pytest.param("self.assertEqual()", "self.assertEqual", id="unbound-attribute"),
        pytest.param("(lambda: 0)()", None, id="no-name"),
    ],
)
def test_resolver(source: str, expected: str | None) -> None:
    assert resolve_all(source)[0] == expected


def test_late_module_import_resolves_in_earlier_function() -> None:
    source = """
        def helper():
            sp.run()

        import subprocess as sp
    """
    assert resolve_all(source) == ["subprocess.run"]


class Recorder(Rule):
    """Records, for every call, what the context says about where it is (not registered: no code)."""

    seen: list[dict[str, object]] = []

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        ctx = self.ctx
        Recorder.seen.append(
            {
                "name": ctx.call_name(node),
                "where": ctx.where,
                "in_test": ctx.in_test,
                "module_level": ctx.at_module_level,
                "in_loop": ctx.in_loop(node),
                "expected_to_raise": ctx.expected_to_raise(node),
            }
        )
        return iter(())


def record(source: str) -> dict[str, dict[str, object]]:
    Recorder.seen = []
    text = textwrap.dedent(source)
    tree = ast.parse(text)
    Engine([Recorder]).lint(tree, text.splitlines(True), "tests/test_x.py", Settings())
    return {str(entry["name"]): entry for entry in Recorder.seen}


def test_context_scopes_and_classification() -> None:
    seen = record(
        """
        import unittest
        import pytest
        from time import sleep as snooze

        module_call()

        @pytest.fixture
        def server():
            in_fixture()

        @decorator_call()
        def test_plain():
            def nested():
                in_nested()
            for _ in range(3):
                snooze(1)
            for _ in loop_iterable():
                pass
            while polling():
                pass

        class TestGroup:
            class_body_call()

            async def test_async(self):
                in_async_method()

            def helper(self):
                in_helper()

        class Cases(unittest.TestCase):
            def setUp(self):
                in_setup()

        class DerivedCases(Cases):
            def tearDownClass(cls):
                in_derived_teardown()

        def helper_function():
            in_plain_function()
        """
    )
    assert seen["module_call"] == {
        "name": "module_call", "where": "", "in_test": False, "module_level": True, "in_loop": False,
        "expected_to_raise": False,
    }
    assert seen["in_fixture"]["where"] == "server" and seen["in_fixture"]["in_test"] is True
    # a decorator runs in the enclosing scope, at import time
    assert seen["decorator_call"]["where"] == "" and seen["decorator_call"]["module_level"] is True
    # nested functions belong to the test holding them (a runnable node id)
    assert seen["in_nested"]["where"] == "test_plain" and seen["in_nested"]["in_test"] is True
    assert seen["time.sleep"]["in_loop"] is True
    assert seen["loop_iterable"]["in_loop"] is False  # evaluated once
    assert seen["polling"]["in_loop"] is True  # a while test is evaluated every round
    assert seen["class_body_call"]["where"] == "TestGroup" and seen["class_body_call"]["module_level"] is True
    assert seen["in_async_method"]["where"] == "TestGroup::test_async"
    assert seen["in_async_method"]["in_test"] is True
    assert seen["in_helper"]["in_test"] is False
    assert seen["in_setup"]["in_test"] is True
    assert seen["in_derived_teardown"]["in_test"] is True  # a TestCase through a local base
    assert seen["in_plain_function"]["in_test"] is False


def test_expected_to_raise() -> None:
    seen = record(
        """
        import pytest
        from pytest import raises as expect

        def test_raises(self):
            with pytest.raises(OSError):
                inside_pytest_raises()
            with expect(OSError), open_other():
                inside_aliased_raises()
            with self.assertRaisesRegex(ValueError, "x"):
                def later():
                    inside_nested_def()
                inside_assert_raises()
            with pytest.raises(a_manager_argument()):
                pass
            with pytest.warns(UserWarning):
                inside_warns()
            after_the_with()
        """
    )
    expected = {
        "inside_pytest_raises": True, "inside_aliased_raises": True, "inside_assert_raises": True,
        "inside_nested_def": False, "a_manager_argument": False, "open_other": False, "inside_warns": False,
        "after_the_with": False,
    }
    assert {name: seen[name]["expected_to_raise"] for name in expected} == expected


def test_function_local_import_is_scoped() -> None:
    seen = record(
        """
        def test_a():
            import subprocess as sp
            sp.run()

        def test_b():
            sp.call()
        """
    )
    assert "subprocess.run" in seen
    assert "sp.call" in seen  # the alias of test_a is not visible here


def test_deeply_nested_expression_does_not_exhaust_the_stack() -> None:
    text = "x = " + " + ".join(["f()"] * 500) + "\n"
    tree = ast.parse(text)
    Recorder.seen = []
    Engine([Recorder]).lint(tree, [text], "tests/test_x.py", Settings())
    assert len(Recorder.seen) == 500


def test_rules_never_mutate_the_tree() -> None:
    from flake8_hermetic.catalog import all_rules

    text = (
        "import os, time, subprocess, tempfile\n"
        "def test_a(tmp_path):\n"
        "    os.chdir(tmp_path)\n"
        "    time.sleep(1)\n"
        "    subprocess.run(['git', 'commit'])\n"
        "    d = tempfile.mkdtemp()\n"
    )
    tree = ast.parse(text)
    before = ast.dump(tree, include_attributes=True)
    Engine(list(all_rules().values())).lint(tree, text.splitlines(True), "tests/test_x.py", Settings())
    assert ast.dump(tree, include_attributes=True) == before


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("time.sleep( 0.5 )", "time.sleep( 0.5 )", id="kept"),
        pytest.param("run(\n    ['a'],  # why\n    cwd=x,\n)", "run( ['a'], cwd=x, )", id="comment-and-newlines"),
        pytest.param("f('" + "x" * 100 + "')", "f('" + "x" * 74 + "...", id="cut-at-80"),
    ],
)
def test_what_text(source: str, expected: str) -> None:
    tree = ast.parse(source)
    node = tree.body[0].value  # type: ignore[attr-defined]
    assert what_text(source, node) == expected
    assert len(what_text(source, node)) <= 80


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        pytest.param("test_a.py", True, id="test_-prefix"),
        pytest.param("pkg/a_test.py", True, id="_test-suffix"),
        pytest.param("pkg/tests.py", True, id="tests.py"),
        pytest.param("conftest.py", True, id="conftest"),
        pytest.param("tests/helpers/util.py", True, id="under-tests"),
        pytest.param("src/pkg/testing/util.py", True, id="under-testing"),
        pytest.param("tests\\sub\\util.py", True, id="windows-separators"),
        pytest.param("src/pkg/core.py", False, id="source"),
        pytest.param("src/contest.py", False, id="near-miss"),
        pytest.param("src/latest/x.py", False, id="dir-ending-in-test"),
    ],
)
def test_default_test_files(path: str, is_test: bool) -> None:
    from flake8_hermetic.testfiles import DEFAULT_TEST_FILES

    assert GlobMatcher(DEFAULT_TEST_FILES).matches(path) is is_test


def test_to_posix() -> None:
    assert to_posix("./tests\\test_x.py") == "tests/test_x.py"
    assert to_posix("a/./b/../c.py") == "a/c.py"


def test_statement_siblings() -> None:
    text = "def f():\n    a = g()\n    h(a)\n"
    tree = ast.parse(text)
    ctx = Context(tree, text.splitlines(True), "t.py", Settings())
    func = tree.body[0]
    call = func.body[0].value  # type: ignore[attr-defined]
    ctx.parents.extend([tree, func, func.body[0]])  # type: ignore[list-item]
    found = ctx.statement(call)
    assert found is not None
    stmt, siblings, index = found
    assert stmt is func.body[0] and siblings is func.body and index == 0  # type: ignore[attr-defined]


def test_locals_that_shadow_an_import_are_not_resolved_through_it() -> None:
    seen = record(
        """
        from os import environ
        import subprocess

        def test_param(subprocess):
            subprocess.run()

        def test_assigned():
            environ = {}
            environ.update()

        def test_untouched():
            environ.clear()
        """
    )
    assert "subprocess.run" not in seen and "None" in seen  # the parameter, not the module
    assert "environ.update" not in seen and "os.environ.update" not in seen  # the local dict
    assert "os.environ.clear" in seen  # the import, in a function that did not rebind it


class Learner(Rule):
    """Routed ``start`` calls (exact name and ``.begin`` method); learns
    ``local.Thing`` when it sees ``start()``, and also subscribes to
    ``start``, which its route already hands it (not registered: no code)."""

    calls = frozenset({"start"})
    methods = frozenset({"begin"})
    seen: list[str] = []

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        Learner.seen.append(f"{node.lineno}:{name}")
        if name == "start":
            self.ctx.dispatch_calls_to("local.Thing", self.visit_Call)
            self.ctx.dispatch_calls_to("start", self.visit_Call)
        return iter(())


@pytest.mark.parametrize("route_calls", [pytest.param(True, id="routed"), pytest.param(False, id="broadcast")])
def test_calls_go_to_their_route_and_to_listeners_once(route_calls: bool) -> None:
    text = "local.Thing()\nother()\nstart()\nlocal.Thing()\nstart()\nx.begin()\n"
    Learner.seen = []
    engine = Engine([Learner], route_calls=route_calls)
    engine.lint(ast.parse(text), text.splitlines(True), "tests/test_x.py", Settings())
    routed = ["3:start", "4:local.Thing", "5:start", "6:x.begin"]
    # broadcast also hands the calls nothing routes; a listener never doubles a routed handler
    assert Learner.seen == (routed if route_calls else ["1:local.Thing", "2:other", *routed])
