"""The baseline's matching passes as plain data in, data out."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from flake8_hermetic.baseline import Entry, match

ENABLED = frozenset({"HRM105", "HRM201", "HRM502"})


@dataclass(frozen=True)
class Hit:
    """A violation as match() sees it: where, code, flagged text, and a line to tell copies apart."""

    scope: str
    code: str
    what: str
    line: int = 0


def entry(scope: str, code: str, what: str) -> Entry:
    return Entry("tests/test_x.py", scope, code, what)


def run_match(
    entries: list[Entry], hits: list[Hit], enabled: frozenset[str] = ENABLED
) -> tuple[list[Hit], list[Entry]]:
    return match(entries, hits, key=lambda h: (h.scope, h.code), what=lambda h: h.what, enabled=enabled)


def test_an_exact_entry_accepts_its_violation() -> None:
    assert run_match([entry("test_a", "HRM105", "os.chdir(d)")], [Hit("test_a", "HRM105", "os.chdir(d)")]) == ([], [])


def test_the_exact_pass_runs_before_the_loose_one() -> None:
    # in file order the violation would take the first entry; the exact pass
    # gives it its own, so the entry of the fixed line is the stale one
    first, second = entry("test_a", "HRM105", "os.chdir(a)"), entry("test_a", "HRM105", "os.chdir(b)")
    new, stale = run_match([first, second], [Hit("test_a", "HRM105", "os.chdir(b)")])
    assert (new, stale) == ([], [first])


def test_an_edited_line_is_accepted_loosely_in_the_same_test() -> None:
    new, stale = run_match([entry("test_a", "HRM105", "os.chdir(old)")], [Hit("test_a", "HRM105", "os.chdir(new)")])
    assert (new, stale) == ([], [])


@pytest.mark.parametrize(
    ("hit", "why"),
    [
        pytest.param(Hit("test_b", "HRM105", "os.chdir(d)"), "another test", id="other-scope"),
        pytest.param(Hit("test_a", "HRM201", "os.chdir(d)"), "another code", id="other-code"),
    ],
)
def test_an_entry_accepts_nothing_outside_its_scope_and_code(hit: Hit, why: str) -> None:
    only = entry("test_a", "HRM105", "os.chdir(d)")
    new, stale = run_match([only], [hit])
    assert new == [hit], why
    assert stale == [only], why


def test_identical_entries_are_a_multiset() -> None:
    twice = [entry("TestX::test_a", "HRM201", "time.sleep(1)")] * 2
    hits = [Hit("TestX::test_a", "HRM201", "time.sleep(1)", line) for line in (3, 4)]
    assert run_match(twice, hits) == ([], [])
    third = Hit("TestX::test_a", "HRM201", "time.sleep(1)", 5)
    new, stale = run_match(twice, [*hits, third])
    assert (new, stale) == ([third], [])
    new, stale = run_match(twice, hits[:1])
    assert (new, stale) == ([], [twice[0]])


def test_a_star_entry_accepts_any_number_of_its_group() -> None:
    star = entry("test_a", "HRM201", "*")
    hits = [Hit("test_a", "HRM201", f"time.sleep({n})", n) for n in range(5)]
    assert run_match([star], hits) == ([], [])
    outside = Hit("test_b", "HRM201", "time.sleep(1)")
    assert run_match([star], [*hits, outside]) == ([outside], [])


def test_a_star_entry_that_accepts_nothing_is_stale() -> None:
    star = entry("test_a", "HRM201", "*")
    assert run_match([star], []) == ([], [star])
    # the exact entries took everything: the star accepted nothing
    exact = entry("test_a", "HRM201", "time.sleep(1)")
    assert run_match([exact, star], [Hit("test_a", "HRM201", "time.sleep(1)")]) == ([], [star])


def test_a_repeated_star_entry_is_stale() -> None:
    star = entry("test_a", "HRM201", "*")
    new, stale = run_match([star, star], [Hit("test_a", "HRM201", "time.sleep(1)")])
    assert (new, stale) == ([], [star])


def test_stars_consume_only_after_exact_and_loose_passes() -> None:
    entries = [entry("test_a", "HRM201", "time.sleep(1)"), entry("test_a", "HRM201", "*")]
    hits = [Hit("test_a", "HRM201", "time.sleep(1)", 1), Hit("test_a", "HRM201", "time.sleep(2)", 2)]
    assert run_match(entries, hits) == ([], [])


def test_the_loose_pass_takes_leftover_entries_in_file_order() -> None:
    entries = [entry("test_a", "HRM105", "os.chdir(a)"), entry("test_a", "HRM105", "os.chdir(b)")]
    new, stale = run_match(entries, [Hit("test_a", "HRM105", "os.chdir(edited)")])
    assert (new, stale) == ([], [entries[1]])


def test_entries_of_codes_not_enabled_are_never_stale() -> None:
    off = entry("test_a", "HRM502", "if x:")
    assert run_match([off], [], enabled=frozenset({"HRM105"})) == ([], [])
    assert run_match([off], [], enabled=ENABLED) == ([], [off])


def test_what_is_computed_only_for_violations_whose_group_has_entries() -> None:
    asked: list[Hit] = []

    def what(hit: Hit) -> str:
        asked.append(hit)
        return hit.what

    grouped, ungrouped = Hit("test_a", "HRM105", "os.chdir(a)"), Hit("test_b", "HRM105", "os.chdir(b)")
    match([entry("test_a", "HRM105", "os.chdir(a)")], [grouped, ungrouped], key=lambda h: (h.scope, h.code),
          what=what, enabled=ENABLED)
    assert asked == [grouped]


def test_no_entries_returns_every_violation_as_new() -> None:
    hits = [Hit("", "HRM105", "os.chdir(a)"), Hit("test_a", "HRM201", "time.sleep(1)")]
    assert run_match([], hits) == (hits, [])
