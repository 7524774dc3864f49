"""The pure parsing helpers of benchmarks/guard_suites.py (the benchmark itself is not a test)."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest

from tests.helpers import REPO


@pytest.fixture
def suites(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    for name in ("guard_suites", "bench_guard"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    module = importlib.import_module("guard_suites")
    yield module
    for name in ("guard_suites", "bench_guard"):
        sys.modules.pop(name, None)


def test_closing_counts_reads_every_outcome_of_the_last_closing_line(suites: Any) -> None:
    output = "\n".join([
        "..s.F.x",
        "FAILED tests/test_a.py::test_x - assert 1 in 2",
        "2 passed in 0.01s",  # an earlier run's line quoted in the output: not the closing one
        "hermetic guard: 1 new leak",
        "=== 3 failed, 1210 passed, 4 skipped, 2 errors, 1 error, 3 xfailed, 1 xpassed, "
        "5 deselected, 7 warnings in 12.34s (0:00:12) ===",
    ])
    counts = suites.closing_counts(output)
    assert counts == {"passed": 1210, "failed": 3, "skipped": 4, "errors": 3, "xfailed": 3, "xpassed": 1,
                      "deselected": 5, "warnings": 7}


def test_closing_counts_without_a_closing_line_is_none(suites: Any) -> None:
    assert suites.closing_counts("INTERNALERROR> boom\n") is None
    assert suites.closing_counts("no tests ran in 0.01s")["passed"] == 0


def test_failing_ids_and_findings_compare_as_multisets(suites: Any) -> None:
    output = "FAILED tests/a.py::t[x-y] - boom - again\nERROR tests/b.py::u\nFAILED tests/a.py::t[x-y] - boom\n"
    assert suites.failing_ids(output) == ["ERROR tests/b.py::u", "FAILED tests/a.py::t[x-y]"]
    one = [("a", "HRM601", "tmp*")] * 3 + [("b", "HRM611", "t")]
    other = [("a", "HRM601", "tmp*"), ("c", "HRM612", "sleep")]
    assert suites.multiset_difference(one, other) == ([("a", "HRM601", "tmp*")] * 2 + [("b", "HRM611", "t")],
                                                      [("c", "HRM612", "sleep")])
    assert suites.grace_waits(one + other) == 2
