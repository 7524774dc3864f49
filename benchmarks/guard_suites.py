"""The runtime guard held to real test suites this project does not own.

For each suite of ``SUITES`` (or those named with ``--suites``):

1. its sdist is downloaded from the package index (``pip download
   --no-binary :all: --no-deps NAME==VERSION``) into ``CACHE/sdists`` and
   unpacked into ``CACHE/src``; a venv of its own, ``CACHE/venvs/NAME-VERSION``,
   gets the suite, its test dependencies, pytest-xdist and this project
   (``pip install -e PROJECT``). What is there already is kept (a venv is
   remade only when its list of requirements changed). ``CACHE`` defaults to
   ``/work/suites`` and must lie outside the project;
2. the suite runs plain (``-p no:hermetic_guard``) and guarded
   (``--hermetic-guard --hermetic-no-baseline --hermetic-guard-report=FILE``),
   both with ``-n 0``, and guarded again with ``-n 2``; the outcomes are the
   counts of pytest's closing line (passed, failed, skipped, errors, xfailed,
   xpassed, deselected) and the node ids of its ``FAILED``/``ERROR`` lines
   (``-rfE``); the findings are the report's ``new`` entries;
3. the cost: ``--rounds`` rounds of a plain and a guarded run one after the
   other, in alternating order (``bench_guard.run_once``), and, with
   ``--together N``, N rounds of both at once pinned to one CPU
   (``bench_guard.run_together``), which compares CPU time on a machine
   whose speed drifts. Each figure is the median of the rounds' own
   guarded/plain ratios (``bench_guard.paired``). A test whose thread or
   child outlived the grace period made the guard wait that long: the
   table shows those seconds (tests with an HRM611/HRM612 finding times
   ``hermetic_guard_grace``) and the wall ratio without them.

It prints a markdown table, then every finding, grouped, and writes the
raw figures to ``CACHE/results.json``.

    python benchmarks/guard_suites.py [--cache DIR] [--project DIR] [--suites attrs,anyio]
                                      [--rounds 5] [--together 5] [--setup-only] [--no-cost]
                                      [--reuse EARLIER.json [--cost-only]] [--out FILE]
    python benchmarks/guard_suites.py --show results.json [--show more.json]

``--reuse`` keeps an earlier file's cost figures and runs the outcomes and
findings again (or, with ``--cost-only``, the reverse), so the slow cost
rounds and a late pass of findings can be taken at different times;
``--show`` prints the table of saved files together.

A guarded run exits 1 when the suite leaks: that is the guard's verdict,
not a failed measurement.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_guard import MODES, child_env, paired, run_once, run_together  # this script's directory is sys.path[0]

REPO = Path(__file__).resolve().parents[1]
OUTCOMES = ("passed", "failed", "skipped", "errors", "xfailed", "xpassed", "deselected")
COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)\b")
CLOSING = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+.* in [\d.]+s(?: \([\d:]+\))?\s*=*$|^=*\s*no tests ran in")
GUARD = ["--hermetic-guard", "--hermetic-no-baseline"]
COMMON = ["-q", "-p", "no:cacheprovider", "-rfE"]


@dataclass(frozen=True)
class Suite:
    name: str
    version: str
    deps: tuple[str, ...]
    args: tuple[str, ...] = ()
    note: str = ""
    env: tuple[tuple[str, str], ...] = field(default=())

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


SUITES = [
    Suite("attrs", "26.1.0", ("cloudpickle", "hypothesis", "pympler")),
    Suite("packaging", "26.4", ("hypothesis", "pretend", "tomli_w", "pip"), ("--ignore=tests/test_version.py",),
          "without tests/test_version.py: its 51,524 parametrized cases take 100 s a run here"),
    Suite("anyio", "4.16.0", ("blockbuster", "hypothesis", "psutil", "pytest-mock", "pytest-timeout", "trustme",
                              "truststore", "uvloop"),
          ("-m", "not network"), "asyncio and uvloop backends (trio not installed: its parameters skip)"),
    Suite("jinja2", "3.1.6", ("trio",)),
    Suite("more-itertools", "11.2.1", ()),
    Suite("toolz", "1.2.0", ()),
]


# ---- pure helpers (tests/test_guard_suites.py) ------------------------------------------------------------------

def closing_counts(output: str) -> dict[str, int] | None:
    """The counts of pytest's closing line (``3 passed, 1 skipped in 0.1s``), or None when there is none."""
    for line in reversed(output.splitlines()):
        text = line.strip()
        if not CLOSING.match(text):
            continue
        counts = dict.fromkeys(OUTCOMES, 0)
        counts["warnings"] = 0
        for number, word in COUNT.findall(text.partition(" in ")[0] if " in " in text else text):
            word = {"error": "errors", "warning": "warnings"}.get(word, word)
            counts[word] += int(number)
        return counts
    return None


def failing_ids(output: str) -> list[str]:
    """The node ids of the short summary's ``FAILED`` and ``ERROR`` lines (``-rfE``), sorted."""
    found = set()
    for line in output.splitlines():
        for word in ("FAILED ", "ERROR "):
            if line.startswith(word):
                found.add(word + line[len(word):].partition(" - ")[0].strip())
    return sorted(found)


def finding_keys(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(node id, code, what) of each new finding of a guard JSON report, sorted."""
    return sorted((item["nodeid"], item["code"], item["what"]) for item in report.get("new", []))


def multiset_difference(one: list[Any], other: list[Any]) -> tuple[list[Any], list[Any]]:
    """What only ``one`` has and what only ``other`` has, counting repeats."""
    a, b = collections.Counter(one), collections.Counter(other)
    return sorted((a - b).elements()), sorted((b - a).elements())


def grace_waits(keys: list[tuple[str, str, str]]) -> int:
    """Tests whose thread or child outlived the grace period: the guard waited the whole period at each."""
    return len({nodeid for nodeid, code, _ in keys if code in ("HRM611", "HRM612")})


# ---- setting up --------------------------------------------------------------------------------------------------

def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, text=True, capture_output=True, check=False, **kwargs)


def fetch(suite: Suite, cache: Path) -> Path:
    """The unpacked sdist's directory, downloaded and unpacked unless it is there."""
    sdists, src = cache / "sdists", cache / "src"
    sdists.mkdir(parents=True, exist_ok=True)
    src.mkdir(parents=True, exist_ok=True)
    stem = re.compile(rf"^{re.sub(r'[-_.]+', '[-_.]+', suite.name)}-{re.escape(suite.version)}\.(tar\.gz|zip)$", re.I)
    archives = [path for path in sdists.iterdir() if stem.match(path.name)]
    if not archives:
        done = run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-q",
                    "-d", str(sdists), f"{suite.name}=={suite.version}"], timeout=600)
        archives = [path for path in sdists.iterdir() if stem.match(path.name)]
        if done.returncode or not archives:
            raise SetupError(f"{suite.key}: pip download failed: {done.stderr.strip()[-300:]}")
    archive = archives[0]
    top = archive.name[:-len(".tar.gz")] if archive.name.endswith(".tar.gz") else archive.stem
    target = src / top
    if not target.is_dir():
        with tempfile.TemporaryDirectory(dir=src) as scratch:
            with tarfile.open(archive) as tar:
                tar.extractall(scratch, filter="data")
            unpacked = [path for path in Path(scratch).iterdir() if path.is_dir()]
            if len(unpacked) != 1:
                raise SetupError(f"{archive}: expected one top directory, found {len(unpacked)}")
            unpacked[0].rename(target)  # atomic: a half-unpacked tree is never taken for a whole one
    return target


def venv(suite: Suite, source: Path, cache: Path, project: Path) -> Path:
    """The suite's own interpreter, with the suite, its test deps, pytest-xdist and this project."""
    home = cache / "venvs" / suite.key
    python = home / "bin" / "python"
    wanted = json.dumps([str(source), str(project), "pytest-xdist", *suite.deps])
    stamp = home / ".guard-suites-requirements"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    if home.exists():
        shutil.rmtree(home)
    made = run([sys.executable, "-m", "venv", str(home)], timeout=300)
    if made.returncode:
        raise SetupError(f"{suite.key}: venv failed: {made.stderr.strip()[-300:]}")
    installed = run([str(python), "-m", "pip", "install", "-q", str(source), "-e", str(project), "pytest-xdist",
                     *suite.deps], timeout=1800)
    if installed.returncode:
        raise SetupError(f"{suite.key}: pip install failed: {installed.stderr.strip()[-500:]}")
    stamp.write_text(wanted)
    return python


class SetupError(Exception):
    pass


# ---- measuring ---------------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    counts: dict[str, int] | None
    failing: list[str]
    code: int
    wall: float
    findings: list[tuple[str, str, str]] | None = None
    messages: dict[tuple[str, str, str], str] = field(default_factory=dict)
    tail: str = ""


def outcome(python: Path, source: Path, args: list[str], guard: bool, workers: int, scratch: Path) -> Outcome:
    report = scratch / f"report-{'guard' if guard else 'plain'}-n{workers}.json"
    report.unlink(missing_ok=True)
    extra = [*GUARD, f"--hermetic-guard-report={report}"] if guard else MODES["absent"]
    started = time.perf_counter()
    done = run([str(python), "-m", "pytest", *args, "-n", str(workers), *extra], cwd=source, env=child_env(),
               timeout=3600)
    found = Outcome(closing_counts(done.stdout), failing_ids(done.stdout), done.returncode,
                    time.perf_counter() - started, tail="\n".join(done.stdout.splitlines()[-15:]) + done.stderr[-500:])
    if guard:
        try:
            data = json.loads(report.read_text())
        except (OSError, ValueError) as exc:
            found.tail += f"\n(no guard report: {exc})"
        else:
            found.findings = finding_keys(data)
            found.messages = {(i["nodeid"], i["code"], i["what"]): i["message"] for i in data.get("new", [])}
    return found


def cost(python: Path, source: Path, args: list[str], rounds: int, together: int) -> dict[str, Any]:
    exe, suite_args = str(python), [*args, "-n", "0"]
    walls: dict[str, list[float]] = {"absent": [], "guard": []}
    cpus: dict[str, list[float]] = {"absent": [], "guard": []}
    for number in range(rounds):
        for mode in ("absent", "guard") if number % 2 == 0 else ("guard", "absent"):
            wall, cpu, _ = run_once(exe, source, suite_args, mode)
            walls[mode].append(wall)
            cpus[mode].append(cpu)
    shared: list[dict[str, tuple[float, float, int]]] = []
    if together:
        one_cpu = {sorted(os.sched_getaffinity(0))[0]}
        shared = [run_together(exe, source, suite_args, ["absent", "guard"], one_cpu, number)
                  for number in range(together)]
    result: dict[str, Any] = {"rounds": rounds, "together": together, "walls": walls, "cpus": cpus,
                              "together_cpus": {m: [r[m][1] for r in shared] for m in ("absent", "guard")}}
    if rounds:
        result["wall_paired"] = paired(walls["guard"], walls["absent"])
        result["cpu_paired"] = paired(cpus["guard"], cpus["absent"])
        result["wall_absent"] = statistics.median(walls["absent"])
    if together:
        result["together_paired"] = paired(result["together_cpus"]["guard"], result["together_cpus"]["absent"])
    return result


def measure(suite: Suite, python: Path, source: Path, args: argparse.Namespace) -> dict[str, Any]:
    suite_args = [*COMMON, *suite.args]
    earlier = {result["suite"]: result for result in args.earlier}
    if args.cost_only:
        blank = {"suite": suite.key, "note": suite.note, "args": suite_args, "grace": args.grace,
                 **dict.fromkeys(("plain", "guard", "xdist"))}
        found = dict(earlier.get(suite.key) or blank)
        found["cost"] = cost(python, source, suite_args, args.rounds, args.together)
        return found
    with tempfile.TemporaryDirectory(prefix="guard-suites-", dir=args.cache) as scratch:
        plain = outcome(python, source, suite_args, False, 0, Path(scratch))
        guarded = outcome(python, source, suite_args, True, 0, Path(scratch))
        xdist = outcome(python, source, suite_args, True, 2, Path(scratch))
    found: dict[str, Any] = {"suite": suite.key, "note": suite.note, "args": suite_args,
                             "plain": plain.__dict__, "guard": guarded.__dict__, "xdist": xdist.__dict__,
                             "grace": args.grace}
    for one in (found["plain"], found["guard"], found["xdist"]):
        one["messages"] = [[*key, message] for key, message in one["messages"].items()]
    if suite.key in earlier and "cost" in earlier[suite.key]:
        found["cost"] = earlier[suite.key]["cost"]
    elif not args.no_cost:
        found["cost"] = cost(python, source, suite_args, args.rounds, args.together)
    return found


# ---- reporting ---------------------------------------------------------------------------------------------------

def percent(ratio: float | None) -> str:
    return "" if ratio is None else f"{(ratio - 1) * 100:+.1f} %"


def row(result: dict[str, Any]) -> str:
    plain, guard, xdist = result["plain"], result["guard"], result["xdist"]
    counts = plain["counts"] or {}
    tests = ", ".join(f"{counts[k]} {k}" for k in OUTCOMES if counts.get(k)) or "(no closing line)"
    same = plain["counts"] is not None and {k: plain["counts"][k] for k in OUTCOMES} == \
        {k: (guard["counts"] or {}).get(k) for k in OUTCOMES} and plain["failing"] == guard["failing"]
    n0, n2 = guard["findings"], xdist["findings"]
    by_code = collections.Counter(code for _, code, _ in n0 or [])
    findings = "none" if n0 == [] else ", ".join(f"{n} {c}" for c, n in sorted(by_code.items())) or "(no report)"
    equal = "yes" if n0 is not None and n0 == n2 else "**no**" if n0 is not None and n2 is not None else "?"
    if equal == "**no**":
        only0, only2 = multiset_difference(n0, n2)
        equal += f" ({len(only0)} only at -n 0, {len(only2)} only at -n 2)"
    spent = result.get("cost", {})
    waits = grace_waits(n0 or []) * result["grace"]
    wall = spent.get("wall_paired")
    bare = None
    if wall is not None and waits:
        bare = (wall * spent["wall_absent"] - waits) / spent["wall_absent"]
    cells = [result["suite"], tests, "yes" if same else "**no**", findings, equal,
             percent(spent.get("cpu_paired")), percent(spent.get("together_paired")), percent(wall),
             f"{waits:.1f} s" if waits else "0", percent(bare) if bare is not None else percent(wall)]
    return "| " + " | ".join(cells) + " |"


def table(results: list[dict[str, Any]]) -> str:
    head = ["suite", "tests (plain, -n 0)", "same outcomes", "findings (-n 0)", "-n 2 = -n 0",
            "CPU, one after the other", "CPU, together", "wall", "grace waited", "wall less grace"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [row(result) for result in results]
    return "\n".join(lines)


def details(results: list[dict[str, Any]]) -> str:
    lines = []
    for result in results:
        guard, xdist, plain = result["guard"], result["xdist"], result["plain"]
        lines.append(f"\n### {result['suite']}: pytest {' '.join(result['args'])}")
        lines.append(f"exit: plain {plain['code']}, guard {guard['code']}, guard -n 2 {xdist['code']}; "
                     f"counts plain {plain['counts']}, guard {guard['counts']}, -n 2 {xdist['counts']}")
        if plain["failing"] or guard["failing"]:
            lines.append(f"failing plain: {plain['failing']}\nfailing guard: {guard['failing']}")
        if guard["findings"] is None or plain["counts"] is None:
            lines.append("```\n" + guard["tail"] + "\n" + plain["tail"] + "\n```")
        messages = {tuple(m[:3]): m[3] for m in guard["messages"] + xdist["messages"]}
        for nodeid, code, what in guard["findings"] or []:
            lines.append(f"- {code} `{what}` at {nodeid}: {messages.get((nodeid, code, what), '')}")
        if guard["findings"] is not None and xdist["findings"] is not None:
            only0, only2 = multiset_difference(guard["findings"], xdist["findings"])
            lines += [f"- only at -n 0: {key}" for key in only0] + [f"- only at -n 2: {key}" for key in only2]
    return "\n".join(lines)


def save(results: list[dict[str, Any]], out: Path) -> None:
    partial = out.with_name(out.name + ".tmp")
    partial.write_text(json.dumps(results, indent=1) + "\n")
    partial.replace(out)


def loaded(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Results read back from JSON: the findings as tuples again."""
    for result in results:
        for run in ("plain", "guard", "xdist"):
            if result.get(run) and result[run].get("findings") is not None:
                result[run]["findings"] = [tuple(key) for key in result[run]["findings"]]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/guard_suites.py")
    parser.add_argument("--cache", type=Path, default=Path("/work/suites"),
                        help="where the sdists, unpacked suites and venvs go (outside the project)")
    parser.add_argument("--project", type=Path, default=REPO, help="the flake8-hermetic checkout to install")
    parser.add_argument("--suites", default="", help="comma-separated names (default: all of SUITES)")
    parser.add_argument("--rounds", type=int, default=5, help="plain/guarded rounds one after the other")
    parser.add_argument("--together", type=int, default=0, help="rounds of both at once on one CPU (CPU ratio)")
    parser.add_argument("--grace", type=float, default=1.0,
                        help="the suites' hermetic_guard_grace (none of SUITES sets it: the guard's default)")
    parser.add_argument("--setup-only", action="store_true", help="download, unpack and install; measure nothing")
    parser.add_argument("--no-cost", action="store_true", help="outcomes and findings only")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="an earlier results.json: its cost figures are kept (outcomes and findings run again)")
    parser.add_argument("--cost-only", action="store_true",
                        help="with --reuse: measure the cost again, keep the outcomes and findings of --reuse")
    parser.add_argument("--show", type=Path, action="append", default=[],
                        help="print the table of saved results.json files (repeatable); run nothing")
    parser.add_argument("--out", type=Path, default=None, help="where the raw figures go (CACHE/results.json)")
    args = parser.parse_args(argv)
    if args.show:
        try:
            shown = [result for path in args.show for result in loaded(json.loads(path.read_text()))]
        except (OSError, ValueError) as exc:
            print(f"--show: {exc}", file=sys.stderr)
            return 2
        merged: dict[str, dict[str, Any]] = {}
        for result in shown:  # a later file's outcomes or cost fill in an earlier one's of the same suite
            entry = merged.setdefault(result["suite"], dict(result))
            if result.get("plain") is not None:
                entry.update({k: v for k, v in result.items() if k != "cost"})
            if "cost" in result:
                entry["cost"] = result["cost"]
        complete = [entry for entry in merged.values() if entry.get("plain") is not None]
        print(table(complete))
        print(details(complete))
        return 0
    args.cache, args.project = args.cache.resolve(), args.project.resolve()
    if args.cache == args.project or args.project in args.cache.parents:
        print(f"--cache {args.cache}: inside the project {args.project}; give a directory outside it",
              file=sys.stderr)
        return 2
    names = [name for name in args.suites.split(",") if name]
    unknown = sorted(set(names) - {suite.name for suite in SUITES})
    if unknown:
        print(f"--suites: unknown {', '.join(unknown)} (known: {', '.join(s.name for s in SUITES)})", file=sys.stderr)
        return 2
    chosen = [suite for suite in SUITES if not names or suite.name in names]
    try:
        args.earlier = loaded(json.loads(args.reuse.read_text())) if args.reuse else []
    except (OSError, ValueError) as exc:
        print(f"--reuse {args.reuse}: {exc}", file=sys.stderr)
        return 2
    args.cache.mkdir(parents=True, exist_ok=True)
    results, failed = [], 0
    for suite in chosen:
        try:
            source = fetch(suite, args.cache)
            python = venv(suite, source, args.cache, args.project)
        except (SetupError, OSError, subprocess.TimeoutExpired, tarfile.TarError) as exc:
            print(f"{suite.key}: {exc}", file=sys.stderr)
            failed = 1
            continue
        print(f"{suite.key}: ready ({python})", file=sys.stderr)
        if not args.setup_only:
            try:
                results.append(measure(suite, python, source, args))
            except (SetupError, subprocess.TimeoutExpired) as exc:
                print(f"{suite.key}: {exc}", file=sys.stderr)
                failed = 1
                continue
            save(results, args.out or args.cache / "results.json")  # after each suite: a stopped run keeps the rest
            if results[-1]["plain"] is not None:
                print(row(results[-1]), file=sys.stderr)
    if results and results[0]["plain"] is not None:
        print(table(results))
        print(details(results))
    return failed


if __name__ == "__main__":
    sys.exit(main())
