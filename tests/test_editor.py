"""The editor: flake8 on one unsaved buffer through stdin.

Editors run ``flake8 --stdin-display-name NAME -`` on the buffer, with NAME
relative to the workspace (python-lsp-server), absolute (VS Code's
notebooks, nvim-lint, ALE), or with backslashes (Windows), and with the
working directory at the workspace root or at the file's directory. The
buffer must get the report the file would get on disk, baseline
included; a half-written buffer gets at most one stale-entry line; a
syntax error gets E999 alone. Language servers also run flake8 over and
over inside one process, which must not keep yesterday's conftest.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tests.helpers import flake8, write_tree

BUFFER = textwrap.dedent("""\
    import os


    def test_known_debt(tmp_path):
        os.chdir(tmp_path)
        assert os.getcwd() == str(tmp_path)


    def test_new_debt(tmp_path):
        os.chdir(tmp_path)
        assert os.getcwd() == str(tmp_path)
""")
KNOWN = "tests/test_buffer.py::test_known_debt\tHRM105\tos.chdir(tmp_path)\n"
STALE = "tests/test_buffer.py::test_renamed\tHRM105\tos.chdir(tmp_path)\n"
REPORT_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<text>.*)$")
# VS Code's flake8 extension asks for this format and reads it with a
# one-line pattern: a message must never break across lines.
VSCODE_FORMAT = "--format=%(row)d,%(col)d,%(code).1s,%(code)s:%(text)s"
VSCODE_LINE = re.compile(r"^\d+,\d+,[A-Z],[A-Z]+\d+:[^\r\n\t]*$")


def report(output: str) -> list[tuple[int, int, str, str]]:
    """(line, col, code, text) of every reported line, the path left out."""
    found = []
    for line in output.splitlines():
        match = REPORT_LINE.match(line)
        assert match, f"not a flake8 report line: {line!r}"
        found.append((int(match["line"]), int(match["col"]), match["code"], match["text"]))
    return found


def make_workspace(root: Path) -> Path:
    return write_tree(root / "ws", {
        "setup.cfg": "[flake8]\nselect = HRM\n",
        "tests/test_buffer.py": BUFFER,
        "hermetic-baseline.txt": KNOWN + STALE,
    })


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def on_disk(workspace: Path) -> list[tuple[int, int, str, str]]:
    result = flake8(["tests/test_buffer.py"], cwd=workspace)
    assert result.returncode == 1, result.stderr
    return report(result.stdout)


@pytest.fixture(scope="module")
def linted_on_disk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, int, str, str]]]:
    """A workspace no test changes, and flake8's report on its file."""
    workspace = make_workspace(tmp_path_factory.mktemp("editor"))
    return workspace, on_disk(workspace)


@pytest.mark.parametrize(
    ("cwd", "display_name"),
    [
        pytest.param(".", "tests/test_buffer.py", id="relative-from-root"),
        pytest.param(".", "./tests/test_buffer.py", id="dot-relative"),
        pytest.param(".", "{ws}/tests/test_buffer.py", id="absolute-from-root"),
        pytest.param(".", "tests\\test_buffer.py", id="windows-separators"),
        pytest.param("tests", "test_buffer.py", id="relative-from-file-dir"),
        pytest.param("tests", "{ws}/tests/test_buffer.py", id="absolute-from-file-dir"),
    ],
)
def test_buffer_reports_what_the_file_on_disk_reports(
    linted_on_disk: tuple[Path, list[tuple[int, int, str, str]]], cwd: str, display_name: str,
) -> None:
    workspace, expected = linted_on_disk
    # the known debt is quiet, the new one reported, the one stale entry named
    assert [(line, code) for line, _, code, _ in expected] == [(1, "HRM900"), (10, "HRM105")]
    assert "test_renamed" in expected[0][3]

    name = display_name.format(ws=workspace)
    result = flake8(["--stdin-display-name", name, "-"], cwd=workspace / cwd, stdin=BUFFER)
    assert "Traceback" not in result.stderr, result.stderr
    assert report(result.stdout) == expected
    assert all(line.startswith(f"{name}:") for line in result.stdout.splitlines())
    assert result.returncode == 1


def test_an_explicit_config_locates_the_baseline_whatever_the_working_directory(workspace: Path) -> None:
    # pylsp's `config` setting and VS Code's `flake8.args` pass --config; a
    # server may run in the file's directory, where flake8 would find no config.
    (workspace / "setup.cfg").rename(workspace / "lint.cfg")
    result = flake8(
        ["--config", str(workspace / "lint.cfg"), "--stdin-display-name", str(workspace / "tests/test_buffer.py"), "-"],
        cwd=workspace / "tests", stdin=BUFFER,
    )
    assert [(line, code) for line, _, code, _ in report(result.stdout)] == [(1, "HRM900"), (10, "HRM105")]


def test_unsaved_edits_are_linted_not_the_file(workspace: Path) -> None:
    # the file on disk still has the new debt; the buffer has fixed it
    edited = BUFFER.replace(
        "def test_new_debt(tmp_path):\n    os.chdir(tmp_path)",
        "def test_new_debt(tmp_path, monkeypatch):\n    monkeypatch.chdir(tmp_path)",
    )
    assert edited != BUFFER
    result = flake8(["--stdin-display-name", "tests/test_buffer.py", "-"], cwd=workspace, stdin=edited)
    assert [code for _, _, code, _ in report(result.stdout)] == ["HRM900"]


def test_a_new_unsaved_file_is_linted_by_its_name(workspace: Path) -> None:
    result = flake8(["--stdin-display-name", "tests/test_not_saved_yet.py", "-"], cwd=workspace, stdin=BUFFER)
    assert [(line, code) for line, _, code, _ in report(result.stdout)] == [(5, "HRM105"), (10, "HRM105")]


def test_stale_entries_never_flood_a_half_written_buffer(workspace: Path) -> None:
    many_stale = "".join(
        f"tests/test_buffer.py::test_gone_{index}\tHRM105\tos.chdir(tmp_path)\n" for index in range(12)
    )
    (workspace / "hermetic-baseline.txt").write_text(KNOWN + many_stale, encoding="utf-8")
    # on disk, every stale entry is its own line: the baseline should be pruned
    assert [code for _, _, code, _ in on_disk(workspace)].count("HRM900") == 12

    # half-written: the known test renamed mid-typing, the rest not written yet
    half_written = "import os\n\n\ndef test_kno(tmp_path):\n    assert tmp_pa\n"
    result = flake8(["--stdin-display-name", "tests/test_buffer.py", "-"], cwd=workspace, stdin=half_written)
    found = report(result.stdout)
    assert [(line, code) for line, _, code, _ in found] == [(1, "HRM900")]
    assert "13 baseline entries for this file match nothing" in found[0][3]
    assert "flake8-hermetic baseline prune" in found[0][3]


def test_one_stale_entry_in_a_buffer_is_named_as_on_disk(workspace: Path) -> None:
    result = flake8(["--stdin-display-name", "tests/test_buffer.py", "-"], cwd=workspace, stdin=BUFFER)
    stale = [text for _, _, code, text in report(result.stdout) if code == "HRM900"]
    assert len(stale) == 1, stale
    assert "stale baseline entry" in stale[0]
    assert "test_renamed" in stale[0]


def test_syntax_error_gives_e999_only(workspace: Path) -> None:
    many_stale = "".join(f"tests/test_buffer.py::test_{index}\tHRM105\t*\n" for index in range(5))
    (workspace / "hermetic-baseline.txt").write_text(many_stale, encoding="utf-8")
    broken = BUFFER + "\n\ndef test_typing(tmp_path:\n    os.chdir(\n"
    result = flake8(
        ["--select=E999,HRM", "--stdin-display-name", "tests/test_buffer.py", "-"], cwd=workspace, stdin=broken,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert [code for _, _, code, _ in report(result.stdout)] == ["E999"]
    assert result.returncode == 1


def test_vscode_output_format_keeps_every_message_on_one_line(workspace: Path) -> None:
    (workspace / "hermetic-baseline.txt").write_text(STALE + STALE.replace("renamed", "other"), encoding="utf-8")
    result = flake8([VSCODE_FORMAT, "--stdin-display-name", str(workspace / "tests/test_buffer.py"), "-"],
                    cwd=workspace, stdin=BUFFER)
    lines = result.stdout.splitlines()
    assert len(lines) == 3, result.stdout  # two HRM105 and the stale entries folded into one line
    assert [line for line in lines if not VSCODE_LINE.match(line)] == []


def test_a_checkout_inside_a_directory_named_tests_is_not_all_test_files(tmp_path: Path) -> None:
    # Globs are matched from the project root: the absolute path an editor
    # hands over (".../tests/ws/src/app.py") must not make app code a test file.
    workspace = write_tree(tmp_path / "tests" / "ws", {
        "setup.cfg": "[flake8]\nselect = HRM\n",
        "src/app.py": "import os\n\n\ndef test_like_name():\n    os.chdir('/')\n    assert os.getcwd() == '/'\n",
    })
    source = (workspace / "src" / "app.py").read_text(encoding="utf-8")
    result = flake8(["--stdin-display-name", str(workspace / "src" / "app.py"), "-"], cwd=workspace, stdin=source)
    assert result.stdout == ""
    assert result.returncode == 0
    moved = flake8(["--stdin-display-name", str(workspace / "tests" / "test_app.py"), "-"], cwd=workspace, stdin=source)
    assert [code for _, _, code, _ in report(moved.stdout)] == ["HRM105"]


# -- a language server runs flake8 many times in one process ------------------

HOME_READER = textwrap.dedent("""\
    from pathlib import Path


    def test_home():
        assert Path.home().is_dir()
""")
PINNING_CONFTEST = """\
    import pytest


    @pytest.fixture(autouse=True)
    def _isolated_home(monkeypatch, tmp_path):
        monkeypatch.setenv("HOME", str(tmp_path))
"""


def lint_in_process(capsys: pytest.CaptureFixture[str], source: str) -> list[str]:
    """One flake8 run on a buffer inside this process, as a language server does it."""
    import io

    from flake8.main import cli

    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(source.encode("utf-8")), encoding="utf-8"))
        cli.main(["--stdin-display-name", "tests/test_home.py", "-"])
    return [code for _, _, code, _ in report(capsys.readouterr().out)]


def test_a_long_lived_process_sees_conftest_and_baseline_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    workspace = write_tree(tmp_path, {
        "setup.cfg": "[flake8]\nselect = HRM\n",
        "tests/test_home.py": HOME_READER,
        "tests/conftest.py": PINNING_CONFTEST.replace("autouse=True", "autouse=False"),
    })
    monkeypatch.chdir(workspace)
    source = HOME_READER
    assert lint_in_process(capsys, source) == ["HRM109"]

    write_tree(workspace, {"tests/conftest.py": PINNING_CONFTEST})
    assert lint_in_process(capsys, source) == []

    (workspace / "tests" / "conftest.py").unlink()
    assert lint_in_process(capsys, source) == ["HRM109"]

    write_tree(workspace, {"hermetic-baseline.txt": "tests/test_home.py::test_home\tHRM109\t*\n"})
    assert lint_in_process(capsys, source) == []
