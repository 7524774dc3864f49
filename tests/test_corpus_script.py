"""The pure helpers of benchmarks/corpus.py and benchmarks/corpus_fixes.py (the benchmarks themselves are not tests)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO

MODULES = ("corpus", "corpus_fixes", "guard_suites", "prove_suites", "bench_guard")


@pytest.fixture
def corpus(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    for name in MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield importlib.import_module("corpus")
    for name in MODULES:
        sys.modules.pop(name, None)


def write_split(path: Path, pairs: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"seed": 1, "pairs": pairs}))
    return path


def test_read_split_gives_each_suite_its_version_and_half(corpus: Any, tmp_path: Path) -> None:
    split = write_split(tmp_path / "split.json", [
        {"suites": ["a==1.0", "b==2.0"], "tuning": "b==2.0"},
        {"suites": ["c==3", "d==4"], "tuning": "c==3"},
    ])
    assert corpus.read_split(split) == {"a": ("1.0", "held-out"), "b": ("2.0", "tuning"),
                                        "c": ("3", "tuning"), "d": ("4", "held-out")}


@pytest.mark.parametrize("pairs", [
    pytest.param([{"suites": ["a==1", "b==2"], "tuning": "c==3"}], id="tuning-not-in-pair"),
    pytest.param([{"suites": ["a==1"], "tuning": "a==1"}], id="one-suite"),
    pytest.param([{"suites": ["a==1", "b"], "tuning": "a==1"}], id="no-version"),
    pytest.param([{"suites": ["a==1", "b==2"], "tuning": "a==1"}, {"suites": ["a==1", "c==2"], "tuning": "c==2"}],
                 id="listed-twice"),
    pytest.param([{"suites": ["a==1", "b==2"]}], id="no-tuning-key"),
])
def test_read_split_rejects_a_bad_file_naming_it(corpus: Any, tmp_path: Path, pairs: list[dict[str, Any]]) -> None:
    split = write_split(tmp_path / "split.json", pairs)
    with pytest.raises(corpus.SplitError, match="split.json"):
        corpus.read_split(split)


def test_the_recorded_split_has_13_pairs_half_and_half(corpus: Any) -> None:
    split = corpus.read_split(corpus.SPLIT)
    halves = [half for _, half in split.values()]
    assert (len(split), halves.count("tuning"), halves.count("held-out")) == (26, 13, 13)
    assert set(split) <= set(corpus.SUITES)


FAKE = [
    {"suite": "a-1", "half": "tuning",
     "findings": [{"code": "HRM101", "line": 1}, {"code": "HRM101", "line": 2}, {"code": "HRM501", "line": 3},
                  {"code": "HRM112", "line": 4}],
     "proofs": [{"code": "HRM101", "proof": "leaks"}, {"code": "HRM101", "proof": "not-reached"},
                {"code": "HRM112", "proof": "leaks-on-failure"}]},
    {"suite": "b-1", "half": "tuning",
     "findings": [{"code": "HRM101", "line": 9}], "proofs": [{"code": "HRM101", "proof": "no-leak"}]},
]


def test_per_rule_adds_check_findings_and_prove_proofs_over_suites(corpus: Any) -> None:
    rules = corpus.per_rule(FAKE, {"HRM101", "HRM112"})
    assert rules["HRM101"] == {"findings": 3, "reached": 2, "leaks": 1, "leaks-on-failure": 0, "no-leak": 1,
                               "not-reached": 1, "no-runtime-check": 0}
    assert rules["HRM501"] == {**corpus.blank(), "findings": 1, "no-runtime-check": 1}
    assert rules["HRM112"]["reached"] == rules["HRM112"]["leaks-on-failure"] == 1


def test_totals_sum_only_the_named_rules(corpus: Any) -> None:
    rules = corpus.per_rule(FAKE, {"HRM101", "HRM112"})
    total = corpus.totals(rules, {"HRM112", "HRM501"})
    assert total == {**corpus.blank(), "findings": 2, "reached": 1, "leaks-on-failure": 1, "no-runtime-check": 1}


def test_statement_start_is_the_first_line_of_the_innermost_statement(corpus: Any) -> None:
    fixes = importlib.import_module("corpus_fixes")
    source = "def test():\n    if x:\n        t = f(\n            1234,\n        )\n"
    assert [fixes.statement_start(source, line) for line in (2, 3, 4)] == [2, 3, 3]
    assert fixes.statement_start("def (:\n", 1) == 1


def test_a_slow_suite_is_proven_on_the_test_files_that_hold_checkable_findings(corpus: Any) -> None:
    findings = [
        {"path": "tests/test_b.py", "code": "HRM101"},
        {"path": "tests/test_a.py", "code": "HRM107"},
        {"path": "tests/test_a.py", "code": "HRM101"},
        {"path": "tests/test_style.py", "code": "HRM504"},  # prove cannot check it: its file is not run
        {"path": "tests/conftest.py", "code": "HRM101"},  # not a test module: pytest would collect it twice
        {"path": "tests/helpers_test.py", "code": "HRM105"},
    ]
    assert corpus.flagged_files(findings, ["HRM101", "HRM105", "HRM107"]) == [
        "tests/helpers_test.py", "tests/test_a.py", "tests/test_b.py"]
    assert corpus.flagged_files(findings, []) == []
