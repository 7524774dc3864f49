"""The rounds of ``flake8-hermetic prove``: the project's pytest, as subprocesses, and the proofs.

Round 0 is one plain guarded run with the recorder loaded: which test
first ran each flagged statement, and what the guard saw in it. Then one
run per injection round (:func:`~flake8_hermetic.prove.plan.rounds`). Every
run writes only under the command's own temp dir: the guard's report,
pytest's ``--basetemp``, the recorder's files; the cache provider is off
and no bytecode is written, so the project's tree is left as it was.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flake8_hermetic.collect import Found
from flake8_hermetic.prove.matching import proven_by
from flake8_hermetic.prove.plan import PLAN_VARIABLE, Target, Targets, rounds, write_json

# settrace (3.10/3.11) sees no event after the last statement of a generator or coroutine that could raise
NOT_COMPLETED = "it did not complete the statement" + (
    "" if sys.version_info >= (3, 12) else
    " (it raised, or it is the last statement of a generator or coroutine, after which Python "
    f"{sys.version_info[0]}.{sys.version_info[1]} cannot raise)")
PROOFS = ("leaks", "leaks-on-failure", "no-leak", "not-reached", "no-runtime-check")
PLUGIN = "flake8_hermetic.prove.inject"


class ProveError(Exception):
    """The project's pytest cannot do what prove needs; ``str()`` is the one line."""


@dataclass
class Proof:
    found: Found
    baselined: bool
    proof: str = "not-reached"
    test: str | None = None
    evidence: str = ""
    round: int | None = None
    timed_out: bool = False


@dataclass
class Run:
    """One pytest run: its number (0: the plain run), wall time, what it injected."""

    number: int
    wall: float
    injections: int
    returncode: int
    record: dict[str, Any] = field(default_factory=dict, repr=False)
    leaks: list[tuple[str, str, str]] = field(default_factory=list, repr=False)  # (node id, code, what)
    stopped: bool = False  # killed by the round's own time limit


@dataclass
class Settings:
    root: str
    pytest_args: Sequence[str]
    workdir: str
    timeout: float  # per injected test
    limit: float | None = None  # of one run, seconds (None: derived from the plain run)


def _merge(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The records of every process of a run (xdist workers, the controller) as one."""
    merged: dict[str, Any] = {"items": [], "deselected": [], "skipped": {}, "errors": {}, "injected": {},
                              "timed_out": {}, "reached": {}, "rootdir": ""}
    seen: set[str] = set()
    for record in records:
        merged["rootdir"] = merged["rootdir"] or record["rootdir"]
        for nodeid, path in record["items"]:
            if nodeid not in seen:
                seen.add(nodeid)
                merged["items"].append((nodeid, path))
        merged["deselected"] += [d for d in record["deselected"] if d not in merged["deselected"]]
        for key in ("skipped", "errors", "injected", "timed_out"):
            merged[key].update(record[key])
        for target, (index, nodeid) in record["reached"].items():
            before = merged["reached"].get(target)
            if before is None or (0 <= index < before[0]) or before[0] < 0 <= index:
                merged["reached"][target] = (index, nodeid)
    return merged


def _guard_leaks(path: str) -> list[tuple[str, str, str]]:
    try:
        with open(path, encoding="utf-8") as stream:
            data = json.load(stream)
    except (OSError, ValueError):
        return []
    return [(leak["nodeid"], leak["code"], leak["what"]) for key in ("new", "baselined") for leak in data.get(key, [])]


def _last_line(path: str) -> str:
    """The line of a run's output that says what went wrong: its last error line, else its last line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            lines = [line.strip() for line in stream if line.strip()]
    except OSError:
        return ""
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines)[-1] if lines else ""


def _fixed_order(pytest_args: Sequence[str]) -> list[str]:
    """pytest-randomly would shuffle every run another way: the rounds keep the collection order
    (unless the arguments say how to run it: ``-p no:randomly``, ``-p randomly``, ``--randomly-seed``)."""
    if importlib.util.find_spec("pytest_randomly") is None or any("randomly" in arg for arg in pytest_args):
        return list(pytest_args)
    return ["-p", "no:randomly", *pytest_args]


def _kill(process: subprocess.Popen[bytes]) -> None:
    """The run and every process it started (its own session), where the platform has process groups."""
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is not None:
            killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            process.kill()
    except ProcessLookupError:
        pass


def run_pytest(settings: Settings, number: int, targets: list[Target], inject: dict[int, str]) -> Run:
    """One guarded pytest run in the project root, with the recorder and its plan."""
    directory = os.path.join(settings.workdir, f"round-{number}")
    os.makedirs(directory)
    plan = os.path.join(directory, "plan.json")
    write_json(plan, {"targets": [t.as_json() for t in targets], "inject": {str(k): v for k, v in inject.items()},
                      "timeout": settings.timeout, "out": directory})
    report = os.path.join(directory, "guard.json")
    command = [sys.executable, "-m", "pytest", "-p", PLUGIN, "--hermetic-guard", "--hermetic-no-baseline",
               f"--hermetic-guard-report={report}", "--hermetic-guard-format=json", "-p", "no:cacheprovider",
               "--continue-on-collection-errors", f"--basetemp={os.path.join(directory, 'basetemp')}",
               *_fixed_order(settings.pytest_args)]
    env = {**os.environ, PLAN_VARIABLE: plan, "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    stopped = False
    with open(os.path.join(directory, "stdout"), "wb") as out, open(os.path.join(directory, "stderr"), "wb") as err:
        process = subprocess.Popen(command, cwd=settings.root, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=err, start_new_session=hasattr(os, "killpg"))
        try:
            returncode = process.wait(timeout=settings.limit)
        except subprocess.TimeoutExpired:
            stopped = True
            _kill(process)
            returncode = process.wait()
        except BaseException:
            _kill(process)
            process.wait()
            raise
    wall = time.monotonic() - started
    records = []
    for name in sorted(os.listdir(directory)):
        if name.startswith("record-") and name.endswith(".json"):
            with open(os.path.join(directory, name), encoding="utf-8") as stream:
                records.append(json.load(stream))
    if number == 0 and not records:
        reason = _last_line(os.path.join(directory, "stderr")) or _last_line(os.path.join(directory, "stdout"))
        raise ProveError(f"flake8-hermetic: pytest could not be started with {sys.executable}"
                         + (f": {reason}" if reason else f" (exit status {returncode})"))
    return Run(number, wall, len(inject), returncode, _merge(records) if records else {}, _guard_leaks(report),
               stopped)


def _matching(run: Run, test: str, code: str) -> str | None:
    """The guard's ``what`` of a leak in ``test`` that proves a finding of ``code``, or None."""
    codes = proven_by(code)
    found = sorted(what for nodeid, leak, what in run.leaks if nodeid == test and leak in codes)
    return "; ".join(found) if found else None


def _check_plain_run(run: Run, settings: Settings) -> None:
    record = run.record
    if run.returncode in (3, 4) and not record.get("items"):
        reason = _last_line(os.path.join(settings.workdir, "round-0", "stderr"))
        raise ProveError(f"flake8-hermetic: pytest refused the run (exit status {run.returncode})"
                         + (f": {reason}" if reason else ""))
    if not record.get("items") and not record.get("errors"):
        given = " ".join(settings.pytest_args)
        raise ProveError(f"flake8-hermetic: the pytest arguments {given!r} select no test" if given
                         else "flake8-hermetic: pytest collected no test in the project")


def _in_scope(nodeid: str, scope: str) -> bool:
    name = nodeid.partition("::")[2]
    return bool(scope) and (name == scope or name.startswith((scope + "[", scope + "::")))


def not_reached_reason(record: dict[str, Any], found: Found, target: Target, outside: bool) -> str:
    """Why no test ran a finding's line: an import error, deselected, skipped, not collected, or none did."""
    rootdir = record.get("rootdir", "")
    for nodeid, error in sorted(record.get("errors", {}).items()):
        where = os.path.realpath(os.path.join(rootdir, nodeid.split("::")[0]))
        if target.file == where or target.file.startswith(where.rstrip(os.sep) + os.sep):
            return f"import error: {error}"
    if outside:
        return "ran only outside any test (at import or collection)"
    items = [nodeid for nodeid, path in record.get("items", []) if os.path.realpath(path) == target.file]
    deselected = [entry.partition("::")[2] for entry in record.get("deselected", [])
                  if os.path.realpath(entry.split("::")[0]) == target.file]
    scoped = [nodeid for nodeid in items if _in_scope(nodeid, found.scope)]
    scoped_out = [nodeid for nodeid in deselected if _in_scope(nodeid, found.scope)]
    if not scoped and not scoped_out:
        scoped, scoped_out = items, deselected
    if scoped_out and not scoped:
        return "deselected: " + ", ".join(sorted(scoped_out)[:3]) + (" ..." if len(scoped_out) > 3 else "")
    skipped = record.get("skipped", {})
    if scoped and all(nodeid in skipped for nodeid in scoped):
        return f"skipped: {skipped[scoped[0]]}"
    if not items:
        return "not collected: pytest collected no test from this file"
    return "not executed by any test that ran"


def _plain_proofs(proofs: list[Proof], located: list[Target | None], plain: Run) -> dict[int, str]:
    """Judge by the plain run; the targets still to inject, with the test that injects each."""
    chosen: dict[int, str] = {}
    reached = plain.record.get("reached", {})
    for proof, target in zip(proofs, located):
        if not proven_by(proof.found.code):
            proof.proof, proof.evidence = "no-runtime-check", "the rule has no runtime counterpart"
            continue
        if target is None:
            proof.evidence = "the file cannot be parsed"
            continue
        index, test = reached.get(str(target.id), (None, ""))
        if index is None or index < 0:
            proof.evidence = not_reached_reason(plain.record, proof.found, target, index is not None)
            continue
        proof.test, proof.round = test, 0
        what = _matching(plain, test, proof.found.code)
        if what is not None:
            proof.proof, proof.evidence = "leaks", what
        else:
            chosen[target.id] = test
    return chosen


def _injected_proofs(proofs: list[Proof], located: list[Target | None], run: Run) -> None:
    inject_record = run.record
    injected = inject_record.get("injected", {})
    timed_out = inject_record.get("timed_out", {})
    for proof, target in zip(proofs, located):
        if target is None or proof.proof != "not-reached" or proof.test is None:
            continue
        if proof.round not in (0, None) or str(target.id) not in run.record.get("planned", {}):
            continue
        proof.round = run.number
        test = proof.test
        if str(target.id) not in injected:
            why = "its round was stopped at its time limit" if run.stopped else NOT_COMPLETED
            proof.evidence = f"reached by {test} in the plain run, but in round {run.number} {why}: nothing injected"
            continue
        proof.timed_out = str(target.id) in timed_out
        what = _matching(run, test, proof.found.code)
        hung = " (the test hung after the injected failure and was stopped)" if proof.timed_out else ""
        if what is not None:
            proof.proof, proof.evidence = "leaks-on-failure", what + hung
        else:
            proof.proof = "no-leak"
            proof.evidence = "nothing matching leaked, with or without the injected failure" + hung


def prove(findings: Sequence[tuple[Found, bool]], settings: Settings) -> tuple[list[Proof], list[Run]]:
    """Every finding's proof, and the runs it took."""
    proofs = [Proof(found, baselined) for found, baselined in findings]
    targets = Targets()
    located = [targets.target(p.found.filename, p.found.line, p.found.col) if proven_by(p.found.code) else None
               for p in proofs]
    every = targets.all()
    if not every:  # nothing a run could prove: pytest is not started
        _plain_proofs(proofs, located, Run(0, 0.0, 0, 0))
        return proofs, []
    plain = run_pytest(settings, 0, every, {})
    _check_plain_run(plain, settings)
    chosen = _plain_proofs(proofs, located, plain)
    runs = [plain]
    limit = settings.limit
    for number, inject in enumerate(rounds(chosen, every), 1):
        settings.limit = limit if limit is not None else 3 * plain.wall + settings.timeout * len(inject) + 60
        run = run_pytest(settings, number, every, inject)
        run.record["planned"] = {str(k): v for k, v in inject.items()}
        _injected_proofs(proofs, located, run)
        runs.append(run)
    settings.limit = limit
    return proofs, runs
