"""The output of ``flake8-hermetic prove``: the formats of ``check``, each with the proofs."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Sequence

from flake8_hermetic import reporting
from flake8_hermetic.prove.runner import PROOFS, Proof, Run
from flake8_hermetic.testfiles import to_posix

FORMATS = ("text", "json", "github", "sarif")


def _order(proofs: Sequence[Proof]) -> list[Proof]:
    return sorted(proofs, key=lambda p: (p.found.filename, p.found.line, p.found.col, p.found.code))


def proof_text(proof: Proof) -> str:
    """``leaks-on-failure in tests/test_x.py::test_y: tmp*``, as the text and the annotations show it."""
    where = f" in {proof.test}" if proof.test and proof.proof not in ("not-reached", "no-runtime-check") else ""
    baselined = " (baselined)" if proof.baselined else ""
    evidence = f": {proof.evidence}" if proof.evidence else ""
    return f"{proof.proof}{where}{evidence}{baselined}"


def summary(proofs: Sequence[Proof]) -> str:
    counts = Counter(p.proof for p in proofs)
    noun = "finding" if len(proofs) == 1 else "findings"
    return f"{len(proofs)} {noun}: " + ", ".join(f"{counts[kind]} {kind}" for kind in PROOFS)


def runs_line(runs: Sequence[Run]) -> str:
    """How many runs it took, and each one's wall time (for the cost of a proof)."""
    if not runs:
        return "flake8-hermetic prove: no finding of a rule with a runtime counterpart: pytest was not run"
    rounds = len(runs) - 1
    parts = [f"plain run {runs[0].wall:.2f} s"] + [
        f"round {run.number} {run.wall:.2f} s ({run.injections} injected"
        f"{', stopped at its time limit' if run.stopped else ''})"
        for run in runs[1:]
    ]
    total = sum(run.wall for run in runs)
    return (f"flake8-hermetic prove: {rounds} injection round{'' if rounds == 1 else 's'} after the plain run; "
            f"{'; '.join(parts)}; total {total:.2f} s")


def text(proofs: Sequence[Proof]) -> str:
    lines = []
    for proof in _order(proofs):
        line = reporting.default(reporting.Report([proof.found], [], 0), summary=False).rstrip("\n")
        lines.append(f"{line} [{proof_text(proof)}]")
    lines.append(summary(proofs))
    return "".join(line + "\n" for line in lines)


def json_proofs(proofs: Sequence[Proof]) -> str:
    """One JSON array, an object per finding (the schema is in docs/prove.md)."""
    objects = []
    for proof in _order(proofs):
        found = proof.found
        path = to_posix(found.path)
        objects.append({
            "path": path, "line": found.line, "col": found.col, "code": found.code, "message": found.message,
            "node_id": f"{path}::{found.scope}" if found.scope else path,
            "proof": proof.proof, "test": proof.test, "evidence": proof.evidence, "baselined": proof.baselined,
            "round": proof.round, "timed_out": proof.timed_out,
        })
    return json.dumps(objects, indent=2, ensure_ascii=False) + "\n"


def _annotated(proof: Proof) -> reporting.Found:
    return dataclasses.replace(proof.found, message=f"{proof.found.message} [prove: {proof_text(proof)}]")


def github(proofs: Sequence[Proof]) -> str:
    """``check``'s workflow commands, the proof in each message."""
    return reporting.github(reporting.Report([_annotated(p) for p in _order(proofs)], [], 0), summary=False)


def sarif(proofs: Sequence[Proof], rules: Sequence[reporting.RuleHelp], root: str) -> str:
    """``check``'s SARIF log: the proof in each message and in the result's ``properties``;
    the baselined findings listed as suppressed, as ``check`` lists them."""
    new = [p for p in _order(proofs) if not p.baselined]
    accepted = [p for p in _order(proofs) if p.baselined]
    report = reporting.Report([_annotated(p) for p in new], [], len(accepted), [_annotated(p) for p in accepted])
    log = json.loads(reporting.sarif(report, rules, root))
    for result, proof in zip(log["runs"][0]["results"], [*new, *accepted]):
        result["properties"] = {"proof": proof.proof, "test": proof.test, "evidence": proof.evidence,
                                "timedOut": proof.timed_out}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
