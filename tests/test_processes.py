"""facts.processes: which expression of a spawner call is its command line
(one reader for the literal argv and for the words read through names),
and reading that expression's words."""

from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_hermetic.context import Context
from flake8_hermetic.facts.argv import MORE, ArgvReader, AssignedValues, assigned_values, enclosing_values, literal_argv
from flake8_hermetic.facts.processes import child_process, child_words, command_expression, spawn_kind
from flake8_hermetic.imports import ImportResolver, module_imports
from flake8_hermetic.settings import Settings
from tests.helpers import call_of


@pytest.mark.parametrize(
    ("source", "name", "expected"),
    [
        pytest.param("run(['a'], args=['b'])", "subprocess.run", "['a']", id="positional-before-args"),
        pytest.param("run(args='a', command='b')", "subprocess.run", "'a'", id="args-before-command"),
        pytest.param("run(command='b', args='a')", "subprocess.run", "'a'", id="args-before-command-written-after"),
        pytest.param("popen(command='b', cmd='c')", "os.popen", "'b'", id="command-before-cmd"),
        pytest.param("popen(cmd='c', command='b')", "os.popen", "'b'", id="command-before-cmd-written-after"),
        pytest.param("popen(args='a', cmd='c')", "os.popen", "'a'", id="args-before-cmd"),
        pytest.param("system(cmd='c', env=e)", "os.system", "'c'", id="cmd-alone"),
        pytest.param("run(*argv)", "subprocess.run", None, id="starred-positional"),
        pytest.param("run(check=True)", "subprocess.run", None, id="no-command"),
        pytest.param("exec_('git', x, *rest)", "asyncio.create_subprocess_exec", "['git', x, *rest]", id="varargs"),
        pytest.param("exec_()", "asyncio.create_subprocess_exec", None, id="varargs-none"),
        pytest.param("spawnv(P_WAIT, path, argv)", "os.spawnv", "argv", id="spawn-one-argv"),
        pytest.param("spawnl(P_WAIT, path, 'a', b)", "os.spawnl", "['a', b]", id="spawn-words"),
        pytest.param("spawnl(P_WAIT, path, *words)", "os.spawnl", "[*words]", id="spawn-starred"),
        pytest.param("spawnl(P_WAIT, path)", "os.spawnl", None, id="spawn-no-words"),
    ],
)
def test_command_expression(source: str, name: str, expected: str | None) -> None:
    kind = spawn_kind(name)
    assert kind is not None
    command = command_expression(call_of(source), kind)
    assert (None if command is None else ast.unparse(command)) == expected


@pytest.mark.parametrize(
    ("source", "words"),
    [
        pytest.param("run(args=['a', '1'], command=['b'])", ("a", "1"), id="args-first"),
        pytest.param("run(command=['b'], args=['a', '1'])", ("a", "1"), id="args-first-written-last"),
        pytest.param("run(cmd=['c'], command=['b', '2'])", ("b", "2"), id="command-before-cmd"),
    ],
)
def test_literal_argv_and_reader_read_the_same_expression(source: str, words: tuple[str, ...]) -> None:
    child = child_process(call_of(source), "subprocess.run")
    assert child is not None
    assert child.argv == words
    assert child_words(child, ArgvReader((), lambda node: None), 1) == words


@pytest.mark.parametrize(
    ("text", "argv"),
    [
        pytest.param("'git commit -m \"a b\"'", ("git", "commit", "-m", "a b"), id="quoted-word"),
        pytest.param("'git  status\\t-s'", ("git", "status", "-s"), id="whitespace"),
        pytest.param("['git', *extra, 'x']", ("git", None, "x"), id="list-starred"),
        pytest.param("['git'] + extra", ("git", None), id="concatenated"),
        pytest.param("f'git {sub}'", ("git", None), id="f-string-head"),
        pytest.param("argv", None, id="name-not-followed"),
    ],
)
def test_literal_argv(text: str, argv: tuple[str | None, ...] | None) -> None:
    node = ast.parse(text, mode="eval").body
    assert literal_argv(node) == argv


def read_words(source: str) -> tuple[object, ...] | None:
    """The words of the first spawner call of ``source``, read through the
    names of its function and module."""
    tree = ast.parse(textwrap.dedent(source))
    resolver = ImportResolver(module_imports(tree))
    function = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))
    children = [
        child_process(node, resolver.resolve(node.func)) for node in ast.walk(function) if isinstance(node, ast.Call)
    ]
    child = next(child for child in children if child is not None)
    call = child.call
    reader = ArgvReader([AssignedValues(function), AssignedValues(tree)], resolver.resolve)
    words = child_words(child, reader, call.lineno)
    return None if words is None else tuple(w if isinstance(w, str) or w is MORE else ast.unparse(w) for w in words)


@pytest.mark.parametrize(
    ("source", "words"),
    [
        pytest.param(
            """
            import subprocess
            def test():
                cmd = ["git", "status"]
                subprocess.run(cmd)
            """,
            ("git", "status"),
            id="name-in-function",
        ),
        pytest.param(
            """
            import subprocess
            CMD = ["make", "all"]
            def test():
                subprocess.run(args=CMD)
            """,
            ("make", "all"),
            id="module-name-through-args-keyword",
        ),
        pytest.param(
            """
            import subprocess
            def test():
                cmd = ["git", "status"]
                cmd.append(flag)
                subprocess.run(cmd)
            """,
            ("git", "status", MORE),
            id="grown-in-place",
        ),
        pytest.param(
            """
            import subprocess
            def test():
                cmd = ["old"]
                subprocess.run(cmd)
                cmd = ["new"]
            """,
            ("old",),
            id="the-value-before-the-call",
        ),
        pytest.param(
            """
            import os
            def test():
                script = "git commit -m 'a b' && ls > out.txt"
                os.system(script)
            """,
            ("git", "commit", "-m", "a b", "&&", "ls", ">", "out.txt"),
            id="shell-string-split",
        ),
        pytest.param(
            """
            import shlex, subprocess
            def test():
                line = "pytest -q tests"
                subprocess.run(shlex.split(line))
            """,
            ("pytest", "-q", "tests"),
            id="shlex-split-of-a-name",
        ),
        pytest.param(
            """
            import subprocess, sys
            def test():
                subprocess.run([sys.executable, "-c", code], executable="py")
            """,
            ("py", "-c", "code"),
            id="executable-replaces-argv0",
        ),
        pytest.param(
            """
            import os
            def test():
                words = ["x", "run.py"]
                os.spawnv(os.P_WAIT, "bin/python3", words)
            """,
            ("bin/python3", "run.py"),
            id="spawn-path-replaces-argv0",
        ),
        pytest.param(
            """
            import subprocess
            def test():
                subprocess.run(unknown)
            """,
            None,
            id="unbound-name",
        ),
    ],
)
def test_words_read_through_names(source: str, words: tuple[object, ...] | None) -> None:
    assert read_words(source) == words


def test_assigned_values_are_computed_once_per_function() -> None:
    source = "x = ['a']\ndef test():\n    y = ['b']\n    run(y)\n"
    tree = ast.parse(source)
    ctx = Context(tree, source.splitlines(True), "test_x.py", Settings())
    function = tree.body[1]
    assert ctx.per_function(function, assigned_values) is ctx.per_function(function, assigned_values)
    found = ctx.per_function(function, assigned_values).value("y", 4)
    assert found is not None and ast.unparse(found[0]) == "['b']"
    ctx.scopes.append(ctx.scope_of(function))  # type: ignore[arg-type]
    inner, module = enclosing_values(ctx)
    assert inner is ctx.per_function(function, assigned_values)
    assert module.value("x", 4) is not None and inner.value("x", 4) is None
