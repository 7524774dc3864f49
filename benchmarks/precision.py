"""Findings per suite and per rule on real projects, and reading sheets for judging them.

docs/precision.md is measured with this script. Each suite is linted as a
new user would lint it: a real ``flake8`` run in a child process, from the
suite's own root directory (so the pack reads the suite's pytest
configuration and decides its file roles from it), every HRM rule selected,
no baseline and no flake8 config of the suite's (``--isolated``)::

    python benchmarks/precision.py SUITE_ROOT [SUITE_ROOT ...]
    python benchmarks/precision.py --sheet reading.md --per-rule 30 SUITE_ROOT ...

The table gives, per suite, the files the pack judged, their lines, and the
findings of the rules that are on by default, in total and per 1,000 lines
of judged code; then the findings per rule (on and off) over all suites.

``--sheet FILE`` writes a reading sheet: for every rule, every finding when
it has ``--per-rule`` or fewer, else a sample of that many drawn with
``random.Random(7)`` from the sorted findings; each with the flagged line
and the lines around it, and a blank ``verdict:`` to fill in (real, false
or borderline, by the standard in docs/precision.md).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SEPARATOR = "\x1f"
LINTED_CODE = "HRM000"
FORMAT = "%(path)s\t%(row)d\t%(col)d\t%(code)s\t%(text)s"
CONTEXT_LINES = 4


@dataclass(frozen=True)
class Finding:
    suite: str
    path: str
    line: int
    col: int
    code: str
    message: str


@dataclass
class SuiteRun:
    name: str
    root: Path
    files: list[str]
    lines: int
    findings: list[Finding]


def default_on() -> dict[str, bool]:
    from flake8_hermetic.catalog import all_rules

    return {code: rule.default_on for code, rule in all_rules().items()}


def lint(root: Path, jobs: str) -> SuiteRun:
    command = [
        sys.executable, "-m", "flake8", "--isolated", "--select=HRM", "--hermetic-no-baseline",
        "--hermetic-emit-context", f"--jobs={jobs}", f"--format={FORMAT}", ".",
    ]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1) or done.stderr.strip():
        sys.exit(f"{root}: flake8 exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    files: list[str] = []
    findings: list[Finding] = []
    for row in done.stdout.splitlines():
        path, line, col, code, text = row.split("\t", 4)
        path = path.removeprefix("./")
        if code == LINTED_CODE:
            files.append(path)
        elif code.startswith("HRM"):
            findings.append(Finding(root.name, path, int(line), int(col), code, text.split(SEPARATOR)[0]))
    lines = 0
    for path in files:
        with open(root / path, "rb") as handle:
            lines += sum(1 for _ in handle)
    return SuiteRun(root.name, root, sorted(files), lines, sorted(findings, key=lambda f: (f.path, f.line, f.code)))


def per_thousand(count: int, lines: int) -> str:
    return f"{1000 * count / lines:.2f}" if lines else "-"


def table(runs: list[SuiteRun], on: dict[str, bool]) -> str:
    out = ["| suite | files judged | lines | default-on findings | per 1,000 lines | all findings |",
           "|---|---|---|---|---|---|"]
    for run in runs:
        count_on = sum(1 for f in run.findings if on.get(f.code))
        out.append(f"| {run.name} | {len(run.files)} | {run.lines:,} | {count_on} | "
                   f"{per_thousand(count_on, run.lines)} | {len(run.findings)} |")
    codes = sorted({f.code for run in runs for f in run.findings})
    out += ["", "| code | default | " + " | ".join(run.name for run in runs) + " | total |",
            "|---|---|" + "---|" * len(runs) + "---|"]
    for code in codes:
        counts = [sum(1 for f in run.findings if f.code == code) for run in runs]
        state = "on" if on.get(code) else "off"
        out.append(f"| {code} | {state} | " + " | ".join(map(str, counts)) + f" | {sum(counts)} |")
    return "\n".join(out) + "\n"


def sheet(runs: list[SuiteRun], per_rule: int) -> str:
    by_code: dict[str, list[tuple[SuiteRun, Finding]]] = {}
    for run in runs:
        for finding in run.findings:
            by_code.setdefault(finding.code, []).append((run, finding))
    out: list[str] = []
    for code in sorted(by_code):
        found = by_code[code]
        chosen = found if len(found) <= per_rule else random.Random(7).sample(found, per_rule)
        chosen.sort(key=lambda item: (item[1].suite, item[1].path, item[1].line))
        out.append(f"## {code}: {len(chosen)} read of {len(found)}\n")
        for run, finding in chosen:
            source = (run.root / finding.path).read_text(encoding="utf-8", errors="replace").splitlines()
            first = max(finding.line - CONTEXT_LINES, 1)
            last = min(finding.line + CONTEXT_LINES, len(source))
            out.append(f"### {finding.suite}/{finding.path}:{finding.line}:{finding.col} {finding.message}\n")
            out.append("```")
            for number in range(first, last + 1):
                mark = ">" if number == finding.line else " "
                out.append(f"{mark}{number:5d} {source[number - 1]}")
            out.append("```")
            out.append("verdict:\n")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+", type=Path, help="suite root directories")
    parser.add_argument("-j", "--jobs", default="1")
    parser.add_argument("--sheet", type=Path, help="write a reading sheet here")
    parser.add_argument("--per-rule", type=int, default=30)
    parser.add_argument("--json", type=Path, help="write every finding here, as JSON")
    args = parser.parse_args(argv)
    runs = [lint(root.resolve(), args.jobs) for root in args.roots]
    sys.stdout.write(table(runs, default_on()))
    if args.sheet:
        args.sheet.write_text(sheet(runs, args.per_rule), encoding="utf-8")
    if args.json:
        rows = [finding.__dict__ for run in runs for finding in run.findings]
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
