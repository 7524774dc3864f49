"""What regenerate, prune and stats do to the entries, as data in, data out."""

from __future__ import annotations

from dataclasses import dataclass

from flake8_hermetic.baseline import Baseline, Entry, parse
from flake8_hermetic.baseline import ratchet

ENABLED = frozenset({"HRM105", "HRM201"})


@dataclass(frozen=True)
class Hit:
    scope: str
    code: str
    what: str


def baseline(*lines: str) -> Baseline:
    return parse("# kept\n" + "".join(line + "\n" for line in lines), "hermetic-baseline.txt")


def linted(*hits: Hit, codes: frozenset[str] = ENABLED) -> ratchet.Judged:
    return ratchet.Judged(list(hits), codes)


def rendered(entries: list[Entry]) -> list[str]:
    return [e.render() for e in entries]


def everything_exists(path: str) -> bool:
    return True


def test_regenerate_writes_every_current_violation_of_judged_files() -> None:
    old = baseline("tests/a.py::test_x\tHRM105\tos.chdir(old)")
    current = {"tests/a.py": linted(Hit("test_x", "HRM105", "os.chdir(new)"), Hit("", "HRM201", "time.sleep(1)"))}
    assert rendered(ratchet.regenerate(old, current, everything_exists)) == [
        "tests/a.py\tHRM201\ttime.sleep(1)",
        "tests/a.py::test_x\tHRM105\tos.chdir(new)",
    ]


def test_regenerate_keeps_files_not_judged_codes_that_did_not_run_and_drops_missing_files() -> None:
    old = baseline(
        "tests/other.py::test_y\tHRM201\ttime.sleep(2)",  # not linted this run
        "tests/a.py::test_x\tHRM502\tif x:",  # rule not enabled
        "src/b.py\tHRM105\tos.chdir(d)",  # only a pattern rule ran on it
        "tests/gone.py::test_z\tHRM105\tos.chdir(d)",  # file deleted
        "tests/a.py::test_x\tHRM105\tos.chdir(fixed)",  # fixed
    )
    current = {"tests/a.py": linted(), "src/b.py": linted(codes=frozenset({"HRM801"}))}
    entries = ratchet.regenerate(old, current, lambda path: path != "tests/gone.py")
    assert rendered(entries) == [
        "src/b.py\tHRM105\tos.chdir(d)",
        "tests/a.py::test_x\tHRM502\tif x:",
        "tests/other.py::test_y\tHRM201\ttime.sleep(2)",
    ]


def test_regenerate_keeps_a_star_entry_that_still_matches_instead_of_listing_its_violations() -> None:
    old = baseline("tests/a.py::test_x\tHRM201\t*", "tests/a.py::test_y\tHRM201\t*", "tests/a.py::test_x\tHRM201\t*")
    current = {"tests/a.py": linted(Hit("test_x", "HRM201", "time.sleep(1)"), Hit("test_x", "HRM201", "time.sleep(2)"))}
    assert rendered(ratchet.regenerate(old, current, everything_exists)) == [
        "tests/a.py::test_x\tHRM201\t*",  # once; test_y's star matched nothing
    ]


def test_regenerate_never_writes_an_empty_what() -> None:
    entries = ratchet.regenerate(Baseline("b.txt"), {"tests/a.py": linted(Hit("", "HRM105", ""))}, everything_exists)
    assert rendered(entries) == ["tests/a.py\tHRM105\t?"]


def test_prune_drops_stale_and_missing_file_entries_and_adds_nothing() -> None:
    old = baseline(
        "tests/a.py::test_x\tHRM105\tos.chdir(d)",
        "tests/a.py::test_x\tHRM105\tos.chdir(d)",
        "tests/gone.py\tHRM201\t*",
        "tests/other.py::test_y\tHRM201\ttime.sleep(2)",
    )
    current = {"tests/a.py": linted(Hit("test_x", "HRM105", "os.chdir(d)"), Hit("test_new", "HRM105", "os.chdir(e)"))}
    kept, dropped = ratchet.prune(old, current, lambda path: path != "tests/gone.py")
    assert rendered(kept) == [
        "tests/a.py::test_x\tHRM105\tos.chdir(d)",
        "tests/other.py::test_y\tHRM201\ttime.sleep(2)",
    ]
    assert [(entry.line, reason) for entry, reason in dropped] == [
        (3, "stale (matches no violation)"),
        (4, "tests/gone.py does not exist"),
    ]


def test_prune_keeps_an_edited_line_as_written() -> None:
    old = baseline("tests/a.py::test_x\tHRM105\tos.chdir(old)")
    kept, dropped = ratchet.prune(old, {"tests/a.py": linted(Hit("test_x", "HRM105", "os.chdir(new)"))},
                                  everything_exists)
    assert (rendered(kept), dropped) == (["tests/a.py::test_x\tHRM105\tos.chdir(old)"], [])


def test_judge_reports_new_violations_and_stale_entries_per_file() -> None:
    old = baseline("tests/a.py::test_x\tHRM105\tos.chdir(d)", "tests/a.py::test_x\tHRM201\ttime.sleep(1)")
    added = Hit("test_x", "HRM105", "os.chdir(e)")
    judged = ratchet.judge(old, {"tests/a.py": linted(Hit("test_x", "HRM105", "os.chdir(d)"), added)})
    new, stale = judged["tests/a.py"]
    assert new == [added]
    assert rendered(stale) == ["tests/a.py::test_x\tHRM201\ttime.sleep(1)"]


def test_changes_count_lines_added_and_removed_per_code() -> None:
    old = baseline("a.py\tHRM105\tx", "a.py\tHRM105\tx", "a.py\tHRM201\ty").entries
    new = baseline("a.py\tHRM105\tx", "a.py\tHRM105\tz", "a.py\tHRM105\tw").entries
    assert ratchet.changes(old, new) == {"HRM105": (2, 1), "HRM201": (0, 1)}
    assert ratchet.changes(old, old) == {}


def test_stats_count_per_code_and_top_level_directory_most_first() -> None:
    entries = baseline(
        "tests/unit/a.py\tHRM105\tx", "tests/b.py\tHRM201\ty", "tests/b.py\tHRM201\tz",
        "conftest.py\tHRM201\tq", "integration/c.py\tHRM105\tw",
    ).entries
    by_code, by_directory = ratchet.stats(entries)
    assert by_code == [("HRM201", 3), ("HRM105", 2)]
    assert by_directory == [("tests", 3), (".", 1), ("integration", 1)]


RUNTIME = [
    "tests/a.py::test_x\tHRM604\tAPP_MODE set",  # its file is judged
    "tests/gone.py::test_z\tHRM611\tapp.serve",  # its file is gone
]


def test_regenerate_and_prune_leave_runtime_entries_alone_unless_their_file_is_gone() -> None:
    old = baseline(*RUNTIME, "tests/a.py::test_x\tHRM105\tos.chdir(d)", "tests/gone.py::test_z\tHRM105\tos.chdir(d)")
    current = {"tests/a.py": linted(codes=ENABLED | {"HRM604", "HRM611"})}  # even if a run claimed those codes

    def exists(path: str) -> bool:
        return path != "tests/gone.py"

    # a deleted test file's runtime entries go too: none of its tests runs again (issue 27)
    assert rendered(ratchet.regenerate(old, current, exists)) == RUNTIME[:1]
    kept, dropped = ratchet.prune(old, current, exists)
    assert rendered(kept) == RUNTIME[:1]
    assert [(entry.path, entry.code) for entry, _ in dropped] == [
        ("tests/gone.py", "HRM611"), ("tests/a.py", "HRM105"), ("tests/gone.py", "HRM105"),
    ]
    assert all(stale == [] for _, stale in ratchet.judge(baseline(*RUNTIME), current).values())
