"""The direct path gives flake8's findings, byte for byte.

``flake8-hermetic check`` reads, parses and walks files without flake8's
token passes (:mod:`flake8_hermetic.direct`); the hidden ``--engine flake8``
runs flake8's own file checker instead. Both must print the same bytes:
``noqa`` (multi-line statements and strings included), ``# flake8: noqa``,
per-file-ignores, select/ignore, exclude, unparsable files, and any number
of jobs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import FIXTURES, REPO, hermetic, write_tree

PROJECT = {
    "setup.cfg": """\
        [flake8]
        extend-select = HRM
        per-file-ignores =
            tests/test_ignored.py: HRM2,HRM5
        extend-exclude = tests/skipped
    """,
    "tests/test_noqa.py": '''\
        import os
        import time


        def test_statement():
            time.sleep \\
                (0.5)  # noqa: HRM201


        def test_string():
            open("/tmp/fixed-name.txt", """w
            """).close()  # NOQA:HRM108


        def test_bracketed():
            time.sleep(
                0.5,
            )  # noqa: HRM201


        def test_other_code():
            time.sleep(1)  # noqa: HRM105


        def test_blanket():
            os.chdir("/")  # noqa


        def test_plain():
            time.sleep(2)
            text = """
            noqa is only a word in this string
            """
            assert text
    ''',
    "tests/test_ignored.py": """\
        import os
        import time


        def test_both():
            time.sleep(1)
            os.chdir("/")
    """,
    "tests/test_whole_file.py": """\
        # flake8: noqa
        import time


        def test_sleep():
            time.sleep(1)
    """,
    "tests/skipped/test_excluded.py": """\
        import time


        def test_sleep():
            time.sleep(1)
    """,
    "tests/test_broken.py": "def test_(:\n    pass\n",
    "tests/samples/broken_on_purpose.py": "def (:\n",
    "src/broken.py": "def (:\n",
    "tests/test_no_newline.py": "import time\n\n\ndef test_sleep():\n    time.sleep(1)  # noqa: HRM201",
}


def check(project: Path, *args: str, engine: str) -> str:
    result = hermetic(["check", "--exit-zero", "--engine", engine, *args], cwd=project)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(tmp_path, PROJECT)


def test_the_edges_of_flake8s_decisions(project: Path) -> None:
    direct = check(project, engine="direct")
    assert direct == check(project, engine="flake8")
    lines = [line.removeprefix("./") for line in direct.splitlines()]
    # the noqa at the end of a backslash-continued statement or a multi-line
    # string silences its first line; inside brackets flake8 reads each line alone
    assert not any(line.startswith(("tests/test_noqa.py:6:", "tests/test_noqa.py:11:")) for line in lines)
    assert any(line.startswith("tests/test_noqa.py:16:") and "HRM201" in line for line in lines)
    # a noqa for another code does not silence; a blanket one does; "noqa" in a string is not a comment
    assert any(line.startswith("tests/test_noqa.py:22:") and "HRM201" in line for line in lines)
    assert not any(line.startswith("tests/test_noqa.py:26:") for line in lines)
    assert any(line.startswith("tests/test_noqa.py:30:") and "HRM201" in line for line in lines)
    # per-file-ignores, # flake8: noqa, exclude
    ignored = [line for line in lines if line.startswith("tests/test_ignored.py")]
    assert [line.split()[1] for line in ignored] == ["HRM105"]
    assert not any("test_whole_file" in line or "test_excluded" in line for line in lines)
    # an unparsable test file is reported, an unparsable non-test file is not, nor a support module of
    # the test tree (a sample of broken code: no runner can import it)
    assert any(line.startswith("tests/test_broken.py:1:") and " E999 " in line for line in lines)
    assert not any(line.startswith(("src/", "tests/samples/")) for line in lines)
    assert not any("test_no_newline" in line and "HRM201" in line for line in lines)


def test_selection_and_jobs(project: Path) -> None:
    (project / "narrow.cfg").write_text("[flake8]\nselect = HRM1,HRM2\nignore = HRM105\n", encoding="utf-8")
    narrow = check(project, "--config", "narrow.cfg", "-j1", engine="direct")
    assert narrow == check(project, "--config", "narrow.cfg", "-j1", engine="flake8")
    assert "HRM201" in narrow and "HRM105" not in narrow
    # one job or two: the same output, in the same order
    assert check(project, "-j2", engine="direct") == check(project, "-j1", engine="direct")


@pytest.mark.parametrize("corpus", ["tests/fixtures/rules", "examples"])
def test_the_fixtures_and_examples(corpus: str, tmp_path: Path) -> None:
    """Every rule's fixtures (each rule on, so each kind of finding) and the examples."""
    config = tmp_path / "all.cfg"
    config.write_text("[flake8]\nextend-select = HRM\n", encoding="utf-8")
    target = str(REPO / corpus)
    args = ("--config", str(config), target)
    direct = check(tmp_path, *args, engine="direct")
    assert direct == check(tmp_path, *args, engine="flake8")
    assert direct.count("\n") > (200 if corpus.endswith("rules") else 5)
    assert FIXTURES.is_dir()
