"""``flake8-hermetic prove`` held to real test suites this project does not own.

The suites are ``guard_suites.SUITES`` (set up by ``benchmarks/guard_suites.py``
in its ``--guard-cache``, default ``/work/suites``) and ``EXTRA``, suites whose
tests use temp dirs, subprocesses, ptys and threads, set up the same way
(``guard_suites.fetch`` and ``guard_suites.venv``) in this script's own
``--cache`` (default ``/work/suites/prove-cache``). For each suite, one at a
time, from its unpacked sdist, in its own venv (which has this project
installed editable):

1. ``flake8-hermetic prove --select=HRM --format json -o FILE --timeout T --
   SUITE_ARGS -q`` (every rule selected; pytest-randomly is turned off by
   prove itself), bounded by ``--suite-timeout``;
2. when prove ran pytest at all, one plain guarded run of the same tests
   (``guard_suites.outcome``: ``--hermetic-guard --hermetic-no-baseline
   -n 0``), the yardstick of the cost.

It prints, per rule (all suites together), then per suite: findings,
reached, ``leaks``, ``leaks-on-failure``, ``no-leak``, ``not-reached`` (with
the reasons grouped), ``no-runtime-check``; per suite the rounds, prove's
total wall time, its ratio to prove's own plain run (what prove's stderr
says) and to the separate guarded run; then every finding of a rule with a
runtime counterpart, with its proof, test and evidence. The raw figures go
to ``CACHE/results.json``.

    python benchmarks/prove_suites.py [--suites anyio,janus] [--timeout 60] [--suite-timeout 900]
                                      [--no-guarded] [--reuse CACHE/results.json] [--out FILE]

Not a timed test: it takes tens of minutes on two cores.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from guard_suites import COMMON, REPO, SUITES, SetupError, Suite, fetch, outcome, run, venv  # sys.path[0]

EXTRA = [
    Suite("janus", "2.0.0", ("pytest-asyncio",), ("-o", "addopts="), "its addopts (--cov-branch ...) dropped"),
    Suite("fasteners", "0.20", ("diskcache", "more_itertools"), note="eventlet not installed: test_eventlet skips"),
    Suite("watchdog", "7.1.0", ("flaky", "pytest-timeout")),
    Suite("pexpect", "4.9.0", ()),
]
#: the tests proven, where a whole suite takes too long to prove on two shared cores (added to its own args)
SUBSET = {"anyio": ("tests/test_sockets.py", "tests/test_fileio.py"),
          "pexpect": ("tests/test_winsize.py", "tests/test_run.py")}
PROOFS = ("leaks", "leaks-on-failure", "no-leak", "not-reached", "no-runtime-check")
REACHED = ("leaks", "leaks-on-failure", "no-leak")
RUNS = re.compile(r"flake8-hermetic prove: (\d+) injection rounds? after the plain run; plain run ([\d.]+) s;"
                  r".*total ([\d.]+) s")


# ---- pure helpers -------------------------------------------------------------------------------------------------

def runs_line(stderr: str) -> dict[str, Any] | None:
    """Rounds, plain and total seconds from prove's stderr line, or None when pytest was not run."""
    for line in reversed(stderr.splitlines()):
        found = RUNS.search(line)
        if found:
            return {"rounds": int(found[1]), "plain": float(found[2]), "total": float(found[3])}
    return None


def reason_kind(evidence: str) -> str:
    """A not-reached reason, grouped: ``skipped: Requires pyright.`` stays, ``import error: ...`` is cut at ':',
    ``reached by TEST in the plain run, but in round N WHY`` loses the test and the round."""
    head, _, rest = evidence.partition(":")
    if head in ("import error", "deselected"):
        return head
    if evidence.startswith("reached by ") and ", but in round " in evidence:  # reached, yet nothing injected
        return "reached, not injected: " + re.sub(r"^\d+ ", "", evidence.partition(", but in round ")[2])
    return evidence if len(evidence) <= 80 else evidence[:77] + "..."


def tally(proofs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per rule: findings, each proof's count, and the not-reached reasons counted."""
    rules: dict[str, dict[str, Any]] = {}
    for proof in proofs:
        rule = rules.setdefault(proof["code"], {"findings": 0, **dict.fromkeys(PROOFS, 0),
                                                "reasons": collections.Counter(), "baselined": 0})
        rule["findings"] += 1
        rule[proof["proof"]] += 1
        rule["baselined"] += bool(proof.get("baselined"))
        if proof["proof"] == "not-reached":
            rule["reasons"][reason_kind(proof.get("evidence") or "")] += 1
    return rules


def ratio(top: float | None, bottom: float | None) -> str:
    return f"{top / bottom:.2f}" if top is not None and bottom else ""


# ---- measuring ---------------------------------------------------------------------------------------------------

def where(suite: Suite, args: argparse.Namespace) -> Path:
    return args.guard_cache if suite in SUITES else args.cache


def prove(suite: Suite, python: Path, source: Path, args: argparse.Namespace) -> dict[str, Any]:
    suite_args = [*suite.args, *SUBSET.get(suite.name, ()), "-q"]
    result: dict[str, Any] = {"suite": suite.key, "note": suite.note, "pytest_args": suite_args}
    with tempfile.TemporaryDirectory(prefix="prove-suites-", dir=args.cache) as scratch:
        out = Path(scratch) / "proofs.json"
        command = [str(python.parent / "flake8-hermetic"), "prove", "--select=HRM", "--format", "json", "-o", str(out),
                   "--timeout", str(args.timeout), "--", *suite_args]
        result["command"] = " ".join(command[1:]).replace(str(out), "FILE")
        started = time.perf_counter()
        try:
            done = run(command, cwd=source, timeout=args.suite_timeout)
        except subprocess.TimeoutExpired:
            result.update(error=f"prove did not finish in {args.suite_timeout:.0f} s", proofs=[])
            return result
        result["wall"] = time.perf_counter() - started
        result["exit"] = done.returncode
        result["stderr"] = done.stderr[-2000:]
        result["runs"] = runs_line(done.stderr)
        try:
            result["proofs"] = json.loads(out.read_text())
        except (OSError, ValueError) as exc:
            result.update(error=f"no JSON from prove (exit {done.returncode}, {exc}): {done.stderr.strip()[-300:]}",
                          proofs=[])
            return result
        if result["runs"] and not args.no_guarded:
            guarded = outcome(python, source, [*COMMON, *suite_args], True, 0, Path(scratch))
            result["guarded"] = {"wall": guarded.wall, "counts": guarded.counts, "exit": guarded.code}
    return result


# ---- reporting ---------------------------------------------------------------------------------------------------

def rule_rows(rules: dict[str, dict[str, Any]], label: str = "") -> list[str]:
    lines = []
    for code, rule in sorted(rules.items()):
        if rule["findings"] == rule["no-runtime-check"]:
            continue
        reached = sum(rule[p] for p in REACHED)
        reasons = "; ".join(f"{n} {why}" for why, n in rule["reasons"].most_common())
        cells = ([label] if label else []) + [code, rule["findings"], reached, rule["leaks"],
                                              rule["leaks-on-failure"], rule["no-leak"],
                                              f"{rule['not-reached']}" + (f" ({reasons})" if reasons else "")]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return lines


def tables(results: list[dict[str, Any]]) -> str:
    every = [proof for result in results for proof in result["proofs"]]
    rules = tally(every)
    head = ["rule", "findings", "reached", "leaks", "leaks-on-failure", "no-leak", "not-reached (why)"]
    lines = ["Per rule, all suites (rules with a runtime counterpart):", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head), *rule_rows(rules)]
    silent = {code: rule["findings"] for code, rule in sorted(rules.items())
              if rule["findings"] == rule["no-runtime-check"]}
    lines += ["", "no-runtime-check: " + (", ".join(f"{n} {code}" for code, n in silent.items()) or "none")]
    head = ["suite", "rule", "findings", "reached", "leaks", "leaks-on-failure", "no-leak", "not-reached (why)"]
    lines += ["", "Per suite and rule:", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for result in results:
        rows = rule_rows(tally(result["proofs"]), result["suite"])
        lines += rows or [f"| {result['suite']} | (no leak-rule finding) | 0 | | | | | |"]
    head = ["suite", "findings (leak rules / all)", "rounds", "prove plain run", "prove total", "total / own plain",
            "guarded run", "total / guarded run"]
    lines += ["", "Cost:", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for result in results:
        proofs = result["proofs"]
        leak = sum(p["proof"] != "no-runtime-check" for p in proofs)
        runs, guarded = result.get("runs"), result.get("guarded", {}).get("wall")
        if result.get("error"):
            cells = [result["suite"], f"{leak} / {len(proofs)}", "**" + result["error"] + "**", "", "", "", "", ""]
        elif not runs:
            cells = [result["suite"], f"{leak} / {len(proofs)}", "0 (pytest not run)", "", "", "", "", ""]
        else:
            cells = [result["suite"], f"{leak} / {len(proofs)}", str(runs["rounds"]), f"{runs['plain']:.1f} s",
                     f"{runs['total']:.1f} s", ratio(runs["total"], runs["plain"]),
                     f"{guarded:.1f} s" if guarded else "", ratio(runs["total"], guarded)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def details(results: list[dict[str, Any]]) -> str:
    lines = []
    for result in results:
        lines.append(f"\n### {result['suite']}: {result.get('command', '')}")
        if result.get("note"):
            lines.append(result["note"])
        if result.get("guarded"):
            lines.append(f"guarded run: exit {result['guarded']['exit']}, {result['guarded']['counts']}")
        for proof in result["proofs"]:
            if proof["proof"] == "no-runtime-check":
                continue
            extra = " (baselined)" if proof.get("baselined") else ""
            extra += " (timed out)" if proof.get("timed_out") else ""
            lines.append(f"- {proof['path']}:{proof['line']} {proof['code']} **{proof['proof']}**{extra} "
                         f"round {proof.get('round')} in `{proof.get('test')}`: {proof.get('evidence')}")
    return "\n".join(lines)


def save(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    out = args.out or args.cache / "results.json"
    partial = out.with_name(out.name + ".tmp")
    partial.write_text(json.dumps(results, indent=1) + "\n")
    partial.replace(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/prove_suites.py")
    parser.add_argument("--guard-cache", type=Path, default=Path("/work/suites"),
                        help="where guard_suites.py keeps its suites (sdists, src, venvs)")
    parser.add_argument("--cache", type=Path, default=Path("/work/suites/prove-cache"),
                        help="where the EXTRA suites and the results go (outside the project)")
    parser.add_argument("--project", type=Path, default=REPO, help="the flake8-hermetic checkout to install")
    parser.add_argument("--suites", default="", help="comma-separated names (default: all)")
    parser.add_argument("--timeout", type=float, default=60.0, help="prove's --timeout (per injected test)")
    parser.add_argument("--suite-timeout", type=float, default=900.0, help="bound on one suite's prove run")
    parser.add_argument("--no-guarded", action="store_true", help="skip the separate guarded run (cost yardstick)")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="an earlier results.json: its suites are kept (unless they failed), the others run")
    parser.add_argument("--out", type=Path, default=None, help="where the raw figures go (CACHE/results.json)")
    args = parser.parse_args(argv)
    args.cache, args.project = args.cache.resolve(), args.project.resolve()
    args.guard_cache = args.guard_cache.resolve()
    if args.cache == args.project or args.project in args.cache.parents:
        print(f"--cache {args.cache}: inside the project {args.project}; give a directory outside it", file=sys.stderr)
        return 2
    known = [*SUITES, *EXTRA]
    names = [name for name in args.suites.split(",") if name]
    unknown = sorted(set(names) - {suite.name for suite in known})
    if unknown:
        print(f"--suites: unknown {', '.join(unknown)} (known: {', '.join(s.name for s in known)})", file=sys.stderr)
        return 2
    try:
        reused = json.loads(args.reuse.read_text()) if args.reuse else []
        earlier = {r["suite"]: r for r in reused if not r.get("error")}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"--reuse {args.reuse}: {exc}", file=sys.stderr)
        return 2
    args.cache.mkdir(parents=True, exist_ok=True)
    results, failed = [], 0
    for suite in [suite for name in names for suite in known if suite.name == name] if names else known:
        if suite.key in earlier:
            results.append(earlier[suite.key])
            continue
        try:
            source = fetch(suite, where(suite, args))
            python = venv(suite, source, where(suite, args), args.project)
        except (SetupError, OSError, subprocess.TimeoutExpired, tarfile.TarError) as exc:
            print(f"{suite.key}: {exc}", file=sys.stderr)
            failed = 1
            continue
        print(f"{suite.key}: proving ({python})", file=sys.stderr, flush=True)
        results.append(prove(suite, python, source, args))
        failed |= bool(results[-1].get("error"))
        print(f"{suite.key}: {results[-1].get('error') or results[-1].get('runs')}", file=sys.stderr, flush=True)
        save(results, args)  # after each suite: a suite that is stopped loses only itself
    if results:
        save(results, args)
        print(tables(results))
        print(details(results))
    return failed


if __name__ == "__main__":
    sys.exit(main())
