"""Issue 26, part 2: follow the value, self-consistent home reads, tests bounded by the runner."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from flake8_hermetic.facts.value_flow import FlowIndex, touches_filesystem
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.project.config import config_in
from tests.helpers import codes_by_line, flake8, write_tree

AWAITING_TEST = """\
    async def test_waits(event):
        await event.wait()
"""


@pytest.mark.parametrize(
    ("name", "config", "bounded"),
    [
        pytest.param("pyproject.toml", '[tool.pytest.ini_options]\ntimeout = "20"\n', True, id="pyproject-timeout"),
        pytest.param("pytest.ini", "[pytest]\naddopts = -p timeout --timeout=30\n", True, id="addopts-equals"),
        pytest.param("setup.cfg", "[tool:pytest]\naddopts = --timeout 5 -q\n", True, id="addopts-separate"),
        pytest.param("tox.ini", "[pytest]\ntimeout = 0\n", False, id="zero-is-off"),
        pytest.param("pytest.ini", "[pytest]\naddopts = -q\n", False, id="no-timeout"),
    ],
)
def test_pytest_timeout_config_bounds_every_test(tmp_path: Path, name: str, config: str, bounded: bool) -> None:
    write_tree(tmp_path, {name: config, "tests/test_wait.py": AWAITING_TEST})
    assert (config_in(str(tmp_path)).timeout is not None) is bounded  # type: ignore[union-attr]
    result = flake8(["--select=HRM204", "--hermetic-no-baseline", "tests"], cwd=tmp_path)
    found = [code for _path, _line, code in codes_by_line(result.stdout)]
    assert found == ([] if bounded else ["HRM204"]), result.stdout + result.stderr


def _index(source: str) -> tuple[FlowIndex, ast.Module]:
    tree = ast.parse(textwrap.dedent(source))
    return FlowIndex(tree), tree


def _resolve(node: ast.AST) -> str | None:
    return {"Path": "pathlib.Path", "join": "os.path.join"}.get(dotted_name(node) or "", dotted_name(node))


def _call(tree: ast.Module, name: str) -> ast.Call:
    return next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and dotted_name(n.func) == name)


def test_sources_follow_variables_loops_containers_and_module_constants() -> None:
    index, tree = _index("""
        ROOT = "/etc"
        def test(user):
            base = f"/home/{user}"
            for tool in ("/bin/a", "/bin/b"):
                target = Path(ROOT) / "x"
                run([tool, base, target, user, "-v"])
                base = "/opt"
    """)
    call = _call(tree, "run")
    found = sorted(literal.value for literal in index.sources(call.args[0], _resolve))
    assert found == ["-v", "/bin/a", "/bin/b", "/etc", "/home/", "x"]


def test_sources_stop_at_calls_that_do_not_carry_the_value() -> None:
    index, tree = _index("""
        def test(tool):
            path = tool.find("/usr/bin")
            run(path, len("/usr/lib"), Path("/opt").name)
    """)
    call = _call(tree, "run")
    found = [literal.value for arg in call.args for literal in index.sources(arg, _resolve)]
    assert found == ["/opt"]


@pytest.mark.parametrize(
    ("body", "asserted"),
    [
        pytest.param("assert f() == Path.home() / 'x'", True, id="compared-with-the-code"),
        pytest.param("expected = Path.home() / 'x'\n    assert f() == expected", True, id="through-a-variable"),
        pytest.param("self.assertEqual(f(), str(Path.home()))", True, id="assert-equal"),
        pytest.param("assert Path.home() == '/home/me'", False, id="compared-with-a-literal"),
        pytest.param("assert (Path.home() / 'x').exists()", False, id="reaches-the-filesystem"),
        pytest.param("expected = Path.home()\n    open(expected)", False, id="variable-reaches-open"),
        pytest.param("unused = Path.home()", False, id="never-used"),
        pytest.param("f(Path.home())", False, id="handed-to-the-code"),
    ],
)
def test_only_asserted(body: str, asserted: bool) -> None:
    index, tree = _index(f"def test(self):\n    {body}\n")
    read = _call(tree, "Path.home")
    assert index.only_asserted(read, _resolve, lambda call: touches_filesystem(call, _resolve)) is asserted
