"""The baseline file as text: parsing, refusing, rendering, writing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from flake8_hermetic.baseline import BaselineError, Entry, load, parse, render
from flake8_hermetic.baseline.format import entry_path, parse_all, write_atomic

ENTRY = "tests/test_x.py::TestA::test_b\tHRM201\ttime.sleep(0.5)"


def test_a_line_is_where_code_what() -> None:
    baseline = parse(f"{ENTRY}\ntests/test_io.py\tHRM108\t*\n", "b.txt")
    assert baseline.entries == [
        Entry("tests/test_x.py", "TestA::test_b", "HRM201", "time.sleep(0.5)"),
        Entry("tests/test_io.py", "", "HRM108", "*"),
    ]
    assert [e.line for e in baseline.entries] == [1, 2]
    assert baseline.entries[0].where == "tests/test_x.py::TestA::test_b"
    assert [e.is_any for e in baseline.entries] == [False, True]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"\ufeff{ENTRY}\r\n", id="bom-crlf"),
        pytest.param(f"{ENTRY}\r\n\r\n", id="crlf"),
        pytest.param(f"{ENTRY}", id="no-final-newline"),
        pytest.param(f"\n\n{ENTRY}\n\n", id="blank-lines"),
    ],
)
def test_line_endings_and_bom_do_not_matter(text: str) -> None:
    assert [e.render() for e in parse(text, "b.txt").entries] == [ENTRY]


def test_bom_and_crlf_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "hermetic-baseline.txt"
    path.write_bytes(b"\xef\xbb\xbf# header\r\n" + ENTRY.encode() + b"\r\n")
    baseline = load(str(path))
    assert baseline.header == ["# header"]
    assert [e.render() for e in baseline.entries] == [ENTRY]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        pytest.param("tests/test_x.py\tHRM201", "expected 3 TAB-separated fields", id="two-fields"),
        pytest.param("tests/test_x.py\tHRM201\ta\tb", "found 4", id="four-fields"),
        pytest.param("tests/test_x.py  HRM201  time.sleep(1)", "found 1", id="spaces-not-tabs"),
        pytest.param("tests/test_x.py\tE501\tx", "'E501' is not an error code", id="foreign-code"),
        pytest.param("tests/test_x.py\thrm201\tx", "is not an error code", id="lower-case-code"),
        pytest.param("tests/test_x.py\tHRM2010\tx", "is not an error code", id="long-code"),
        pytest.param("tests/test_x.py\tHRM201\t ", "empty 'what' field", id="empty-what"),
        pytest.param("../elsewhere/test_x.py\tHRM201\tx", "leaves the project root", id="dotdot"),
        pytest.param("tests/../../test_x.py\tHRM201\tx", "leaves the project root", id="inner-dotdot"),
        pytest.param("/abs/test_x.py\tHRM201\tx", "is absolute", id="absolute"),
        pytest.param("C:/src/test_x.py\tHRM201\tx", "is absolute", id="drive"),
        pytest.param("tests\\test_x.py\tHRM201\tx", "backslashes", id="backslash"),
        pytest.param("./tests/test_x.py\tHRM201\tx", "not normalised", id="dot-slash"),
        pytest.param("tests/test_x.py::\tHRM201\tx", "empty part", id="empty-node-id"),
        pytest.param("<<<<<<< HEAD", "merge-conflict marker", id="conflict-ours"),
        pytest.param("=======", "merge-conflict marker", id="conflict-middle"),
        pytest.param(">>>>>>> branch", "merge-conflict marker", id="conflict-theirs"),
    ],
)
def test_a_malformed_line_is_refused_with_file_and_line(line: str, reason: str) -> None:
    text = f"# header\n{ENTRY}\n{line}\n"
    with pytest.raises(BaselineError) as caught:
        parse(text, "base/hermetic-baseline.txt")
    message = str(caught.value)
    assert message.startswith("base/hermetic-baseline.txt:3: "), message
    assert reason in message
    assert caught.value.line == 3


def test_parse_all_reports_every_malformed_line_and_keeps_the_rest() -> None:
    text = f"{ENTRY}\nbad line\n<<<<<<< HEAD\ntests/test_y.py\tHRM105\tos.chdir(d)\n"
    baseline, problems = parse_all(text, "b.txt")
    assert [p.line for p in problems] == [2, 3]
    assert [e.line for e in baseline.entries] == [1, 4]


def test_not_utf8_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "b.txt"
    path.write_bytes(ENTRY.encode() + b"\n" + b"tests/t.py\tHRM201\t\xff\xfe\n")
    with pytest.raises(BaselineError, match=r"b\.txt:2: not UTF-8 text"):
        load(str(path))


def test_a_missing_file_is_an_empty_baseline(tmp_path: Path) -> None:
    baseline = load(str(tmp_path / "absent.txt"))
    assert (baseline.entries, baseline.header) == ([], [])


def test_header_comments_are_the_comments_above_the_first_entry() -> None:
    text = "\n# first\n#\n\n# second paragraph\n\n" + ENTRY + "\n# a comment below the last entry\n"
    baseline = parse(text, "b.txt")
    assert baseline.header == ["# first", "#", "", "# second paragraph"]
    assert baseline.footer == ["# a comment below the last entry"]
    assert render(baseline.header, baseline.entries, baseline.footer) == text.lstrip("\n")
    # one block of comments straight above the entries is the header, as it always was
    assert parse("# h\n" + ENTRY + "\n", "b.txt").header == ["# h"]


# without a header, a blank line first tells the first entry's comments from a header
@pytest.mark.parametrize("header", [pytest.param("# h\n\n", id="with-header"), pytest.param("\n", id="no-header")])
def test_comments_above_an_entry_are_its_own_and_move_with_it(header: str) -> None:
    text = (
        header + "# why b\ntests/b.py\tHRM105\tos.chdir(x)\n"
        "# why a, line 1\n# why a, line 2\n\ntests/a.py\tHRM105\t*\n"
    )
    baseline = parse(text, "b.txt")
    assert [e.comments for e in baseline.entries] == [("# why b",), ("# why a, line 1", "# why a, line 2")]
    rendered = render(baseline.header, baseline.entries, baseline.footer)
    assert rendered == (
        header + "# why a, line 1\n# why a, line 2\ntests/a.py\tHRM105\t*\n# why b\ntests/b.py\tHRM105\tos.chdir(x)\n"
    )
    again = parse(rendered, "b.txt")
    assert render(again.header, again.entries, again.footer) == rendered
    assert [e.comments for e in again.entries] == [("# why a, line 1", "# why a, line 2"), ("# why b",)]


def test_render_sorts_and_is_stable() -> None:
    entries = parse(
        "tests/b.py\tHRM105\tos.chdir(x)\ntests/a.py::test_z\tHRM201\ttime.sleep(1)\ntests/a.py\tHRM105\t*\n", "b.txt"
    ).entries
    text = render(["# h"], entries)
    assert text == (
        "# h\n\ntests/a.py\tHRM105\t*\ntests/a.py::test_z\tHRM201\ttime.sleep(1)\ntests/b.py\tHRM105\tos.chdir(x)\n"
    )
    again = parse(text, "b.txt")
    assert render(again.header, again.entries) == text
    assert render([], []) == ""


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        pytest.param("./tests/test_x.py", "tests/test_x.py", id="dot-slash"),
        pytest.param("tests\\test_x.py", "tests/test_x.py", id="windows-separators"),
        pytest.param("tests/sub/../test_x.py", "tests/test_x.py", id="dotdot-inside"),
        pytest.param("{root}/tests/test_x.py", "tests/test_x.py", id="absolute"),
        pytest.param("{outside}/test_x.py", "../test_x.py", id="outside"),
    ],
)
def test_entry_path_is_posix_relative_to_the_baseline(
    filename: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    name = filename.format(root=root, outside=tmp_path)
    assert entry_path(name, str(root)) == expected


@pytest.fixture
def _file_modes(tmp_path: Path) -> None:
    """Skip where a file's permission bits cannot be set (only read-only on Windows)."""
    probe = tmp_path / "probe"
    probe.write_bytes(b"")
    probe.chmod(0o640)
    if stat.S_IMODE(probe.stat().st_mode) != 0o640:
        pytest.skip("permission bits are not kept on this file system")
    probe.unlink()


@pytest.mark.usefixtures("_file_modes")
def test_write_atomic_replaces_the_file_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "hermetic-baseline.txt"
    path.write_text("old\n", encoding="utf-8")
    path.chmod(0o640)
    write_atomic(str(path), "new\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hermetic-baseline.txt"]


def test_write_atomic_leaves_the_old_file_and_no_temporary_when_writing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "hermetic-baseline.txt"
    path.write_bytes(b"old\n")

    def interrupted(descriptor: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(str(path), "new\n")
    assert path.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hermetic-baseline.txt"]


def test_a_new_file_gets_the_default_permissions(tmp_path: Path) -> None:
    path = tmp_path / "hermetic-baseline.txt"
    write_atomic(str(path), "x\n")
    plain = tmp_path / "plain.txt"
    plain.write_text("x\n", encoding="utf-8")  # open() applies the umask to 0o666
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
