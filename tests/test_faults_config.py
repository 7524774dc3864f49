"""Issue 16, the configuration half: every bad input is one line and exit 2.

Options, ``pyproject.toml``, flake8's own start-up errors, a conftest the
parser cannot take, a rules file built to hang or crash the reader, and the
SARIF URIs of odd file names: through the real ``flake8-hermetic`` command
and plain ``flake8`` on a project of the test's own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import flake8, hermetic, write_tree

CHDIR = "import os\n\n\ndef test_a(t):\n    os.chdir(t)\n"
SELECT = "[flake8]\nselect = HRM105\n"
RULE = "rules:\n  - code: HRM801\n    message: {message}\n    rule: {rule}\n"


def _deep_toml(root: Path) -> None:
    (root / "pyproject.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")


def _utf16_toml(root: Path) -> None:
    (root / "pyproject.toml").write_bytes('[tool.flake8-hermetic]\ntest-files = ["*.py"]\n'.encode("utf-16"))


def _text(name: str, text: str) -> Callable[[Path], None]:
    return lambda root: write_tree(root, {name: text}) and None


def _rules(text: str) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        (root / "rules.yml").write_text(text, encoding="utf-8")
        (root / "setup.cfg").write_text(SELECT + "hermetic-rules = rules.yml\n", encoding="utf-8")

    return make


def _alias_bomb() -> str:
    """Under 1 KB of YAML that stands for 2**24 rule mappings."""
    anchors = "".join(f"      u{n}: &a{n} {{any: [*a{n - 1}, *a{n - 1}]}}\n" for n in range(1, 25))
    return "rules:\n  - code: HRM801\n    message: m\n    utils:\n      u0: &a0 {pattern: x}\n" + anchors + (
        "    rule: {pattern: x}\n"
    )


def _special_rules(name: str) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        if name == "fifo":
            os.mkfifo(root / "rules.yml")
            target = "rules.yml"
        else:
            target = str(Path(os.devnull).parent / name)
        (root / "setup.cfg").write_text(SELECT + f"hermetic-rules = {target}\n", encoding="utf-8")

    return make


NEEDS_POSIX = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and /dev/zero are POSIX")

#: (what the project gets, the command-line arguments, what the one line says)
ONE_LINE_CASES = [
    pytest.param(_text("setup.cfg", SELECT + "hermetic-max-collection-bytes = \u00b2\n"), [],
                 "setup.cfg:3: max-collection-bytes: expected a whole number of bytes, got '\u00b2'", id="superscript"),
    pytest.param(_text("setup.cfg", SELECT + "hermetic-max-collection-bytes = \u0661\u0662\n"), [],
                 "setup.cfg:3: max-collection-bytes: expected a whole number of bytes", id="arabic-indic-digits"),
    pytest.param(_text("setup.cfg", SELECT + "hermetic-rules = a\x00b.yml\n"), [],
                 "setup.cfg:3: rules: a file path cannot hold a NUL byte", id="nul-in-path"),
    pytest.param(_text("setup.cfg", SELECT + "hermetic-test-files =\n"), [],
                 "setup.cfg:3: test-files: empty; name at least one glob", id="empty-test-files"),
    pytest.param(_text("pyproject.toml", "[tool.flake8-hermetic]\ntest-files = []\n"), [],
                 "pyproject.toml:2: test-files: empty; name at least one glob", id="empty-test-files-list"),
    pytest.param(_utf16_toml, [], "pyproject.toml:1: not UTF-8 text (it starts with a UTF-16/32 byte-order mark)",
                 id="utf16-pyproject"),
    pytest.param(_deep_toml, [], "pyproject.toml:1: invalid TOML: nested too deep to read", id="deep-pyproject"),
    pytest.param(_text("other.cfg", SELECT), ["--config", "missing.cfg"],
                 "flake8-hermetic: the specified config file does not exist: missing.cfg", id="missing-config"),
    pytest.param(_text("setup.cfg", SELECT + "select = HRM\n"), [],
                 "setup.cfg:3: duplicate option 'select' in section [flake8]", id="duplicate-option"),
    pytest.param(_rules(RULE.format(message='"bad \\ud800 text"', rule="{pattern: print($A)}")), [],
                 "rules.yml:3: rules file: a lone surrogate", id="lone-surrogate"),
    pytest.param(_rules(RULE.format(message="m", rule="{all: [" * 300 + "{pattern: x}" + "]}" * 300)), [],
                 "rules.yml:1: rules file: nested too deep to read", id="deep-rules"),
    pytest.param(_rules(_alias_bomb()), [], "rules file: the document expands to more than 100,000 nodes",
                 id="alias-bomb"),
    pytest.param(_rules("rules:\n  - code: |\n      HRM801\n    message: m\n    rule: {pattern: x}\n"), [],
                 "rules.yml:2: rule #1: code 'HRM801\\n' is outside", id="code-with-newline"),
    pytest.param(_rules("rules:\n  - code: HRM8\u0660\u0661\n    message: m\n    rule: {pattern: x}\n"), [],
                 "code 'HRM8\u0660\u0661' is outside HRM800-HRM899", id="code-with-arabic-indic-digits"),
    pytest.param(_special_rules("fifo"), [], "rules.yml: cannot read the pattern rules: a FIFO, not a regular file",
                 id="fifo-rules", marks=NEEDS_POSIX),
    pytest.param(_special_rules("zero"), [], "zero: cannot read the pattern rules: a character device",
                 id="zero-rules", marks=NEEDS_POSIX),
]


@pytest.mark.parametrize(("make", "args", "expected"), ONE_LINE_CASES)
def test_bad_input_is_one_line_and_status_2(
    tmp_path: Path, make: Callable[[Path], None], args: list[str], expected: str
) -> None:
    root = write_tree(tmp_path / "project", {"setup.cfg": SELECT, "tests/test_a.py": CHDIR})
    make(root)
    result = hermetic(["check", *args], cwd=root)  # the helper's timeout fails a hang
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert expected in result.stderr


@pytest.mark.parametrize(("make", "expected"), [
    pytest.param(_text("setup.cfg", SELECT + "hermetic-max-collection-bytes = \u00b2\n"),
                 "max-collection-bytes: expected a whole number", id="superscript"),
    pytest.param(_text("setup.cfg", SELECT + "hermetic-rules = a\x00b.yml\n"), "cannot hold a NUL byte",
                 id="nul-in-path"),
    pytest.param(_utf16_toml, "not UTF-8 text", id="utf16-pyproject"),
    pytest.param(_deep_toml, "nested too deep to read", id="deep-pyproject"),
])
def test_flake8_itself_reports_bad_options_without_a_traceback(
    tmp_path: Path, make: Callable[[Path], None], expected: str
) -> None:
    root = write_tree(tmp_path / "project", {"setup.cfg": SELECT, "tests/test_a.py": CHDIR})
    make(root)
    result = flake8(["tests"], cwd=root)
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert expected in result.stderr


DEEP_SOURCE = "x = " + "-" * 100_000 + "1\n"  # parses nowhere: MemoryError or RecursionError in ast.parse


def test_a_conftest_too_deep_to_parse_does_not_crash_the_lint_of_a_sound_test(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "project", {"setup.cfg": SELECT + "extend-exclude = conftest.py\n",
                                             "tests/test_a.py": CHDIR})
    (root / "tests" / "conftest.py").write_text(DEEP_SOURCE, encoding="utf-8")
    plain = flake8(["tests"], cwd=root)
    assert (plain.returncode, plain.stderr) == (1, "")
    assert plain.stdout.startswith("tests/test_a.py:5:5: HRM105 ")
    checked = hermetic(["check"], cwd=root)
    assert checked.returncode == 1 and checked.stdout.startswith("tests/test_a.py:5:5: HRM105 "), checked.stderr


def test_a_file_flake8_itself_cannot_parse_is_one_line_from_the_command(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "project", {"setup.cfg": SELECT, "tests/test_a.py": CHDIR})
    (root / "tests" / "test_deep.py").write_text(DEEP_SOURCE, encoding="utf-8")
    result = hermetic(["check"], cwd=root)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        f"flake8-hermetic: flake8 failed with {result.stderr.split()[4]} a file is nested too deep to parse"
    ]


def test_sarif_uris_of_relative_paths_are_percent_encoded(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "project", {"setup.cfg": SELECT, "tests/a b#c?d%/test_x.py": CHDIR})
    result = hermetic(["check", "--format", "sarif"], cwd=root)
    assert result.returncode == 1, result.stderr
    locations = [
        location["physicalLocation"]["artifactLocation"]
        for found in json.loads(result.stdout)["runs"][0]["results"]
        for location in found["locations"]
    ]
    assert locations == [{"uri": "tests/a%20b%23c%3Fd%25/test_x.py", "uriBaseId": "%SRCROOT%"}]
