"""The held-out evidence behind each rule's default (issue 26): the decision rule, the pages, the check."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest

from flake8_hermetic import ruledocs
from flake8_hermetic.catalog import all_rules
from flake8_hermetic.evidence import EVIDENCE
from tests.helpers import REPO


@pytest.fixture
def evidence(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    for name in ("evidence", "corpus", "guard_suites", "prove_suites", "bench_guard"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module("evidence")


@pytest.mark.parametrize(("held", "decision"), [
    pytest.param({"reached": 15, "leaks": 10, "leaks-on-failure": 4}, "on", id="14-of-15"),
    pytest.param({"reached": 15, "leaks": 10, "leaks-on-failure": 3}, "off", id="13-of-15"),
    pytest.param({"reached": 14, "leaks": 14, "leaks-on-failure": 0}, "thin", id="all-of-14"),
    pytest.param({"findings": 40, "reached": 0}, "thin", id="never-reached"),
])
def test_a_runtime_rule_is_decided_by_what_prove_reached(evidence: Any, held: dict[str, int], decision: str) -> None:
    assert evidence.decide(True, held, None, False)[0] == decision


@pytest.mark.parametrize(("findings", "read", "decision"), [
    pytest.param(40, {"read": 20, "real": 18, "false": 1, "borderline": 1}, "on", id="90-percent"),
    pytest.param(40, {"read": 20, "real": 17, "false": 2, "borderline": 1}, "off", id="borderline-not-real"),
    pytest.param(40, {"read": 14, "real": 14, "false": 0, "borderline": 0}, "thin", id="too-few-read"),
    pytest.param(9, None, "thin", id="too-few-found"),
])
def test_a_rule_without_one_is_decided_by_reading(evidence: Any, findings: int, read: dict[str, int] | None,
                                                  decision: str) -> None:
    assert evidence.decide(False, {"findings": findings}, read, True)[0] == decision


def _figures(decision: str) -> dict[str, Any]:
    row = {"findings": 3, "reached": 2, "leaks": 1, "leaks-on-failure": 1, "no-leak": 0, "not-reached": 1}
    return {"commit": "abc1234", "rules": {"HRM101": {
        "runtime": True, "tuning": row, "held-out": row, "read": None, "decision": decision, "why": "WHY"}}}


def test_later_held_out_sets_add_their_readings_and_proofs_to_the_corpus_half(evidence: Any) -> None:
    row = {"findings": 4, "reached": 1, "leaks": 0, "leaks-on-failure": 0, "no-leak": 1, "not-reached": 3}
    halves = {"tuning": {}, "held-out": {"HRM106": row}}
    readings = {
        "rules": {"HRM104": {"read": 2, "real": 0, "false": 2, "borderline": 0}},
        "later": [
            {"rules": {"HRM104": {"read": 1, "real": 1, "false": 0}}},
            {"rules": {"HRM104": {"read": 12, "real": 0, "false": 10, "borderline": 2}},
             "proven": {"HRM106": {"findings": 14, "reached": 14, "no-leak": 14}}},
        ],
    }
    assert evidence.readings_of(readings)["HRM104"] == {"read": 15, "real": 1, "false": 12, "borderline": 2}
    rules = evidence.decided(halves, {}, readings, "abc1234", {"HRM106"})["rules"]
    # 15 read (2 + 1 + 12), 1 real: decided, no longer thin
    assert (rules["HRM104"]["decision"], rules["HRM104"]["why"]) == ("off", "1 of 15 read real (7%)")
    # the corpus half's 1 reached and the later 14: 15, none leaked
    assert rules["HRM106"]["later"]["reached"] == 14 and rules["HRM106"]["held-out"] == row
    assert (rules["HRM106"]["decision"], rules["HRM106"]["why"]) == ("off", "0 of 15 reached findings leaked (0%)")
    assert "later" not in rules["HRM101"]
    # without the later proofs the same rule is thin
    assert evidence.decided(halves, {}, {"rules": {}}, "abc1234", {"HRM106"})["rules"]["HRM106"]["decision"] == "thin"


def test_the_recorded_evidence_is_what_the_readings_decide_now(evidence: Any) -> None:
    import json

    readings = json.loads((REPO / "benchmarks" / "readings" / "heldout-readings.json").read_text())
    assert evidence.render(evidence.reused(readings)) == (REPO / "flake8_hermetic" / "evidence.py").read_text()


def test_the_check_fails_a_rule_whose_default_the_evidence_contradicts_or_that_has_no_figures() -> None:
    rules = {code: rule for code, rule in all_rules().items() if code in ("HRM105", "HRM108")}
    assert not rules["HRM105"].default_on and rules["HRM108"].default_on

    def figures(decision: str) -> dict[str, Any]:
        made = _figures(decision)
        made["rules"] = {"HRM105": made["rules"]["HRM101"]}
        return made

    assert ruledocs.evidence_problems(rules, figures("thin")) == [
        "HRM108: no figures in flake8_hermetic/evidence.py (run benchmarks/evidence.py)"]
    assert ruledocs.evidence_problems({"HRM105": rules["HRM105"]}, figures("on")) == [
        "HRM105: the held-out evidence says on by default (WHY), but the rule is off"]
    assert ruledocs.evidence_problems({"HRM105": rules["HRM105"]}, figures("off")) == []


def test_the_page_shows_both_halves_and_says_when_the_evidence_is_thin() -> None:
    text = ruledocs.evidence("HRM101", False, _figures("thin"))
    assert "| tuning | 3 | 2 | 1 | 1 | 0 |" in text and "| held-out | 3 | 2 | 1 | 1 | 0 |" in text
    assert "measured at `abc1234`" in text
    assert "**The evidence is thin (WHY), so the rule stays off by default.**" in text
    assert ruledocs.evidence("HRM999", False, _figures("thin")) == ""


def test_a_narrowed_rule_s_page_says_its_figures_are_of_the_rule_as_it_was() -> None:
    plain = ruledocs.evidence("HRM101", False, _figures("off"))
    narrowed = ruledocs.evidence("HRM101", False, _figures("off"), narrowed="it flagged more.")
    assert "narrowed" not in plain
    assert narrowed.startswith(plain.rstrip("\n"))
    assert "These figures are of the rule before it was narrowed: it flagged more. What the narrowed rule" in narrowed
    assert narrowed.endswith("reads it at the bar.\n\n") and plain.endswith(".**\n\n")
    page = ruledocs.pages()["HRM503"]
    assert all_rules()["HRM503"].narrowed and "before it was narrowed: " + all_rules()["HRM503"].narrowed in page


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_every_rule_has_its_figures_and_its_page_shows_them(code: str) -> None:
    assert code in EVIDENCE["rules"]
    shown = ruledocs.evidence(code, all_rules()[code].default_on)
    assert shown and shown in ruledocs.pages()[code]


def test_a_thin_rule_says_how_many_were_read_when_the_later_sets_read_more(evidence: Any) -> None:
    read = {"read": 4, "real": 3, "false": 1, "borderline": 0}
    assert evidence.decide(False, {"findings": 1}, read, True) == ("thin", "4 held-out findings read, under 15")
    assert evidence.decide(False, {"findings": 1}, None, True) == ("thin", "1 held-out findings, under 15")
