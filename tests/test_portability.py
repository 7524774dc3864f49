"""HRM3xx beyond the fixtures: off-by-default rules in real flake8 runs,
module-wide context, and reading the program a child runs."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.engine import Engine
from flake8_hermetic.facts.processes import child_process, program_word
from flake8_hermetic.imports import ImportResolver, module_imports
from flake8_hermetic.settings import Settings
from tests.helpers import codes_by_line, flake8, write_tree

FAMILY = [rule for code, rule in all_rules().items() if code.startswith("HRM3")]

PORTABILITY_HAZARDS = """\
    import os
    import subprocess
    import sys

    import pytest


    @pytest.mark.skipif(sys.platform == "win32", reason="no fork")
    def test_probe(proc, tmp_path):
        os.kill(proc.pid, 0)
        assert os.path.isabs("/usr/bin")
        subprocess.run(["python", "-c", "pass"], check=True, cwd=tmp_path)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path, {"tests/test_hazards.py": PORTABILITY_HAZARDS})


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param([], [(12, "HRM302")], id="default-run-leaves-HRM301-HRM303-HRM304-out"),
        pytest.param(["--extend-select=HRM303,HRM304"], [(8, "HRM304"), (11, "HRM303"), (12, "HRM302")],
                     id="extend-select-turns-them-on"),
        pytest.param(["--select=HRM304"], [(8, "HRM304")], id="select-one-off-rule"),
        pytest.param(["--select=HRM3"], [(8, "HRM304"), (10, "HRM301"), (11, "HRM303"), (12, "HRM302")],
                     id="select-the-family"),
    ],
)
def test_off_by_default_rules_run_only_when_selected(
    project: Path, args: list[str], expected: list[tuple[int, str]],
) -> None:
    result = flake8(["--isolated", "--hermetic-no-baseline", *args, "tests"], cwd=project)
    assert result.returncode == 1, result.stderr
    found = [(line, code) for _, line, code in codes_by_line(result.stdout) if code.startswith("HRM3")]
    assert found == expected


def lint(source: str) -> list[tuple[int, str]]:
    text = textwrap.dedent(source)
    found = Engine(FAMILY).lint(ast.parse(text), text.splitlines(keepends=True), "tests/test_x.py", Settings())
    return sorted((v.line, v.code) for v in found)


def test_a_module_that_simulates_posix_paths_keeps_its_literals() -> None:
    simulated = """
        import posixpath

        def test_join():
            assert os.path.realpath(os.path.join("/usr", "bin")) == "/usr/bin"
    """
    assert lint(simulated) == []
    # "/usr" reaches realpath (the host's rules); "/usr/bin" is only compared (issue 26, follow the value)
    assert lint(simulated.replace("import posixpath", "import os")) == [(5, "HRM303")]


def test_platform_constants_are_followed_in_source_order() -> None:
    assert lint(
        """
        import sys
        import unittest

        @unittest.skipIf(LATER, "no fork() there")
        def test_before():
            pass

        LATER = sys.platform == "win32"
        HOST = "win32"

        @unittest.skipIf(LATER, "no fork() there")
        def test_after():
            pass

        @unittest.skipIf(HOST == "win32", "no fork() there")
        def test_plain_string():
            pass
        """
    ) == [(12, "HRM304")]


def first_child(source: str):  # type: ignore[no-untyped-def]
    tree = ast.parse(textwrap.dedent(source))
    resolver = ImportResolver(module_imports(tree))
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call))
    return child_process(call, resolver.resolve(call.func))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param("import subprocess\nsubprocess.run(['python', '-V'])", "python", id="argv0"),
        pytest.param("import os\nos.system('python3 -V')", "python3", id="shell-string"),
        pytest.param("import subprocess\nsubprocess.run(['python'], executable='tools/py')", "tools/py",
                     id="executable-keyword-wins"),
        pytest.param("import subprocess, sys\nsubprocess.run(['python'], executable=sys.executable)", None,
                     id="executable-not-literal"),
        pytest.param("import os, sys\nos.spawnv(os.P_WAIT, sys.executable, ['python', '-V'])", None,
                     id="spawn-path-not-literal"),
        pytest.param("import os\nos.spawnl(os.P_WAIT, 'py', 'x', '-V')", "py", id="spawn-path-literal"),
        pytest.param("import subprocess\nsubprocess.run(command)", None, id="unknown-argv"),
    ],
)
def test_program_word(source: str, expected: str | None) -> None:
    child = first_child(source)
    assert child is not None
    assert program_word(child) == expected


def test_interpreter_message_names_the_word() -> None:
    text = "import subprocess\nsubprocess.run('python3.12 -m pip', shell=True, cwd='.')\n"
    found = Engine(FAMILY).lint(ast.parse(text), text.splitlines(keepends=True), "test_x.py", Settings())
    assert [v.text for v in found] == [
        "HRM302 'python3.12' runs whichever interpreter the host's PATH finds (or none); "
        "start the child with sys.executable"
    ]
