"""Which files are tests: pytest's ``python_files`` and ``norecursedirs``
under the rootdir, ``testpaths`` no boundary; and the ``check`` summary of
the test files flake8's ``exclude`` left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flake8_hermetic.project import Project, Role
from tests.helpers import hermetic, write_tree

PASSING = "def test_a():\n    assert True\n"
UNIT_AND_INTEGRATION = {
    "pytest.ini": "[pytest]\ntestpaths = tests/unit\nnorecursedirs = .* fixtures\n",
    "tests/unit/test_a.py": PASSING,
    "tests/integration/test_b.py": PASSING,
    "tests/integration/conftest.py": "",
    "tests/integration/helpers.py": "",
    "tests/integration/fixtures/test_data.py": PASSING,
    "scripts/test_release.py": PASSING,
    "src/pkg/core.py": "",
}


@pytest.mark.parametrize(
    ("relative", "role"),
    [
        pytest.param("tests/unit/test_a.py", Role.TEST_MODULE, id="under-testpaths"),
        pytest.param("tests/integration/test_b.py", Role.TEST_MODULE, id="integration-tree-beside-unit"),
        pytest.param("scripts/test_release.py", Role.TEST_MODULE, id="anywhere-under-the-rootdir"),
        pytest.param("tests/integration/conftest.py", Role.CONFTEST, id="conftest"),
        pytest.param("tests/integration/helpers.py", Role.SUPPORT, id="helper"),
        pytest.param("tests/integration/fixtures/test_data.py", Role.SUPPORT, id="norecursedirs-still-bounds"),
        pytest.param("src/pkg/core.py", Role.NOT_TEST, id="library"),
        pytest.param("env/lib/tests/test_vendored.py", Role.SUPPORT, id="virtualenv"),
    ],
)
def test_testpaths_is_no_boundary(tmp_path: Path, relative: str, role: Role) -> None:
    write_tree(tmp_path, {**UNIT_AND_INTEGRATION, "env/pyvenv.cfg": "", "env/lib/tests/test_vendored.py": ""})
    assert Project().role(str(tmp_path / relative)) is role


def test_an_integration_tree_beside_the_unit_tree_is_linted(tmp_path: Path) -> None:
    server = 'import socket\n\n\ndef test_b():\n    socket.socket().bind(("127.0.0.1", 8080))\n'
    write_tree(tmp_path, {**UNIT_AND_INTEGRATION, "tests/integration/test_b.py": server})
    result = hermetic(["check", "--no-baseline", "--select=HRM110"], cwd=tmp_path)
    assert "tests/integration/test_b.py:5:5: HRM110" in result.stdout, result.stdout + result.stderr
    assert "4 test files" in result.stdout  # test_a, test_b, scripts/test_release and the conftest


EXCLUDED = {
    **UNIT_AND_INTEGRATION,
    "setup.cfg": "[flake8]\nextend-exclude = tests/integration,scripts/test_release.py\n",
    ".venv/lib/test_vendored.py": PASSING,
    "env/pyvenv.cfg": "",
    "env/lib/tests/test_vendored.py": PASSING,
}


def test_check_says_how_many_test_files_exclude_left_out(tmp_path: Path) -> None:
    write_tree(tmp_path, EXCLUDED)
    result = hermetic(["check", "--no-baseline"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    # test_b and conftest under the excluded directory, and the excluded file; not the helper, not the
    # norecursedirs module, not the virtualenvs' files
    assert result.stderr.splitlines() == [
        "flake8-hermetic: 3 test files excluded by exclude (e.g. scripts/test_release.py)",
    ]
    assert "1 test file, 0 new" in result.stdout


def test_the_summary_goes_to_stderr_in_every_format_and_quiet_drops_it(tmp_path: Path) -> None:
    write_tree(tmp_path, EXCLUDED)
    as_json = hermetic(["check", "--no-baseline", "--format", "json"], cwd=tmp_path)
    assert json.loads(as_json.stdout) == []
    assert "3 test files excluded by exclude" in as_json.stderr
    quiet = hermetic(["check", "--no-baseline", "-q"], cwd=tmp_path)
    assert quiet.stderr == ""


def test_the_packs_own_exclude_counts_too(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        **UNIT_AND_INTEGRATION,
        "pyproject.toml": '[tool.flake8-hermetic]\nextend-exclude = ["tests/integration"]\n',
    })
    result = hermetic(["check", "--no-baseline", "tests"], cwd=tmp_path)
    assert "flake8-hermetic: 2 test files excluded by exclude (e.g. tests/integration/test_b.py)" in result.stderr


def test_no_line_when_exclude_leaves_out_no_test_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        **UNIT_AND_INTEGRATION,
        "setup.cfg": "[flake8]\nextend-exclude = src,tests/integration/helpers.py\n",
    })
    result = hermetic(["check", "--no-baseline"], cwd=tmp_path)
    assert "excluded by exclude" not in result.stderr, result.stderr


def test_a_run_whose_exclude_left_out_every_test_file_says_so(tmp_path: Path) -> None:
    write_tree(tmp_path, EXCLUDED)
    result = hermetic(["check", "--no-baseline", "tests/integration"], cwd=tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("flake8-hermetic: no test file found in tests/integration, so nothing was checked; ")
    assert line.endswith("; 2 test files excluded by exclude (e.g. tests/integration/test_b.py)")
    assert "Traceback" not in result.stderr
