"""Write ``flake8_hermetic/evidence.py``: each rule's figures on the corpus of issue 26, and the default decision.

Reads the results of ``benchmarks/corpus.py`` for both halves and the
held-out reading (``benchmarks/readings/heldout-readings.json``: per rule,
how many findings were read and judged real, false, borderline), and
applies the rules of the issue:

- a rule with a runtime counterpart: on when, on the held-out half, at least
  15 findings were reached by ``prove`` and at least 90 % of those were
  ``leaks`` or ``leaks-on-failure``; off when 15 were reached and fewer
  leaked; otherwise the evidence is thin and the rule stays as it is;
- a rule without one: on when at least 15 held-out findings were read and
  at least 90 % were real; off when 15 were read and fewer were real;
  otherwise thin, unchanged.

The held-out readings are the corpus half's (``rules``) plus those of the
fresh held-out sets read later (``later``: held-out 3 to 7), summed per
rule (:func:`readings_of`); a runtime rule's findings ``prove`` reached on
those sets (``proven``) are added to the corpus half's
(:func:`proven_later`) and shown on its page as a row of their own.

``ruledocs`` renders the figures as each rule page's "Evidence" section.

    python benchmarks/evidence.py --tuning /work/corpus/results-tuning.json \\
        --held-out /work/corpus/results-held-out.json --commit 03ccb05 [--check]
    python benchmarks/evidence.py --reuse [--check]

``--reuse`` keeps the corpus figures of both halves and the commit they were
measured at as ``flake8_hermetic/evidence.py`` has them (the corpus runs
take hours and venvs of their own) and decides again with the readings as
they are now, and the defaults of the rules as they are now.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from corpus import per_rule, rule_sets  # sys.path[0]

HERE = Path(__file__).resolve().parent
TARGET = HERE.parent / "flake8_hermetic" / "evidence.py"
READINGS = HERE / "readings" / "heldout-readings.json"
BAR, ENOUGH = 0.9, 15
KEPT = ("findings", "reached", "leaks", "leaks-on-failure", "no-leak", "not-reached")


def decide(runtime: bool, held: dict[str, int], read: dict[str, int] | None, default_on: bool) -> tuple[str, str]:
    """(decision, why): ``on``, ``off`` or ``thin`` (unchanged: too few to decide)."""
    if runtime:
        reached = held.get("reached", 0)
        if reached < ENOUGH:
            return "thin", f"{reached} held-out findings reached by prove, under {ENOUGH}"
        leaked = held.get("leaks", 0) + held.get("leaks-on-failure", 0)
        share = leaked / reached
        return ("on" if share >= BAR else "off"), f"{leaked} of {reached} reached findings leaked ({share:.0%})"
    if not read or read.get("read", 0) < ENOUGH:
        count = held.get("findings", 0)
        if read and read.get("read", 0) > count:  # the later sets' readings: more than the corpus half found
            return "thin", f"{read['read']} held-out findings read, under {ENOUGH}"
        return "thin", (f"{count} held-out findings, under {ENOUGH}" if count < ENOUGH else
                        f"{read.get('read', 0) if read else 0} held-out findings read, under {ENOUGH}")
    share = read["real"] / read["read"]
    return ("on" if share >= BAR else "off"), f"{read['real']} of {read['read']} read real ({share:.0%})"


def _summed(tables: list[dict[str, dict[str, Any]]], keys: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Per rule, the ``keys`` of every table added up."""
    found: dict[str, dict[str, int]] = {}
    for table in tables:
        for code, counts in table.items():
            row = found.setdefault(code, dict.fromkeys(keys, 0))
            for key in keys:
                row[key] += int(counts.get(key, 0))
    return found


def readings_of(readings: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Each rule's held-out readings: the corpus half's and every later set's, summed."""
    later = [each.get("rules", {}) for each in readings.get("later", [])]
    return _summed([readings.get("rules", {}), *later], ("read", "real", "false", "borderline"))


def build(tuning: list[dict[str, Any]], held_out: list[dict[str, Any]], readings: dict[str, Any],
          commit: str) -> dict[str, Any]:
    runtime, _default = rule_sets()
    halves = {"tuning": per_rule(tuning, runtime), "held-out": per_rule(held_out, runtime)}
    suites = {half: sorted(r["suite"] for r in results if "error" not in r)
              for half, results in (("tuning", tuning), ("held-out", held_out))}
    return decided(halves, suites, readings, commit, runtime)


def proven_later(readings: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Each runtime rule's findings ``prove`` reached on the later held-out sets, summed."""
    return _summed([each.get("proven", {}) for each in readings.get("later", [])], KEPT)


def decided(halves: dict[str, dict[str, dict[str, int]]], suites: dict[str, list[str]], readings: dict[str, Any],
            commit: str, runtime: set[str] | frozenset[str]) -> dict[str, Any]:
    from flake8_hermetic.catalog import all_rules

    read_by_rule = readings_of(readings)
    later = proven_later(readings)
    rules: dict[str, Any] = {}
    for code, rule in all_rules().items():
        rows = {half: {key: table.get(code, {}).get(key, 0) for key in KEPT} for half, table in halves.items()}
        read = read_by_rule.get(code)
        held = rows["held-out"]
        if code in later:
            rows["later"] = later[code]
            held = {key: held[key] + later[code][key] for key in KEPT}
        decision, why = decide(code in runtime, held, read, rule.default_on)
        rules[code] = {"runtime": code in runtime, **rows, "read": read, "decision": decision, "why": why,
                       "default_on": rule.default_on}
    return {"commit": commit, "suites": suites, "rules": rules}


def reused(readings: dict[str, Any]) -> dict[str, Any]:
    """:func:`decided` on the corpus figures ``flake8_hermetic/evidence.py`` holds now."""
    from flake8_hermetic.evidence import EVIDENCE

    halves: dict[str, dict[str, dict[str, int]]] = {"tuning": {}, "held-out": {}}
    for code, row in EVIDENCE["rules"].items():
        for half in halves:
            halves[half][code] = row[half]  # the corpus halves only: "later" is made again from the readings
    runtime = {code for code, row in EVIDENCE["rules"].items() if row["runtime"]}
    return decided(halves, EVIDENCE["suites"], readings, EVIDENCE["commit"], runtime)


def render(data: dict[str, Any]) -> str:
    # One line a rule, so the module stays readable in a diff and short enough for the layout rule.
    head = {key: value for key, value in data.items() if key != "rules"}
    lines = [f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)}," for key, value in sorted(head.items())]
    rules = [f"  {json.dumps(code)}: {json.dumps(row, sort_keys=True)}" for code, row in sorted(data["rules"].items())]
    body = "{\n" + "\n".join(lines) + '\n "rules": {\n' + ",\n".join(rules) + "\n }\n}"
    return ('"""Each rule\'s figures on the corpus of issue 26 (generated by ``benchmarks/evidence.py``: do not edit).'
            '"""\n\nfrom __future__ import annotations\n\nimport json\nfrom typing import Any\n\n'
            f"EVIDENCE: dict[str, Any] = json.loads(r\"\"\"\n{body}\n\"\"\")  # noqa: E501\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/evidence.py")
    parser.add_argument("--tuning", type=Path)
    parser.add_argument("--held-out", type=Path)
    parser.add_argument("--readings", type=Path, default=READINGS)
    parser.add_argument("--commit", help="the commit the corpus was measured at")
    parser.add_argument("--reuse", action="store_true",
                        help="keep the corpus figures flake8_hermetic/evidence.py holds; decide again")
    parser.add_argument("--check", action="store_true", help="exit 1 if flake8_hermetic/evidence.py differs")
    args = parser.parse_args(argv)
    if args.reuse and (args.tuning or args.held_out or args.commit):
        parser.error("--reuse keeps the recorded corpus figures: give no --tuning, --held-out or --commit with it")
    if not args.reuse and not (args.tuning and args.held_out and args.commit):
        parser.error("give --tuning, --held-out and --commit, or --reuse")
    paths = [args.readings] if args.reuse else [args.tuning, args.held_out, args.readings]
    try:
        loaded = [json.loads(path.read_text()) for path in paths]
    except (OSError, ValueError) as exc:
        print(f"evidence: {exc}", file=sys.stderr)
        return 2
    text = render(reused(loaded[0]) if args.reuse else build(*loaded, commit=args.commit))
    if args.check:
        return int(not TARGET.exists() or TARGET.read_text() != text)
    partial = TARGET.with_name(TARGET.name + ".tmp")
    partial.write_text(text)
    os.replace(partial, TARGET)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
