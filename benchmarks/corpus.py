"""Every rule, and ``flake8-hermetic prove``, on the 26 suites of issue 26, split in two halves before reading.

The split is read from ``benchmarks/corpus_split.json`` (13 pairs of similar
suites, one of each pair in the tuning half, the other held out); this
script never recomputes it. For each suite of the chosen half (or those
named with ``--suites``):

1. its sdist is found in ``CACHE/sdists`` or a ``--reuse-dirs`` directory's
   ``sdists`` (else downloaded into ``CACHE/sdists`` with ``pip download
   --no-binary :all: --no-deps``) and unpacked into ``CACHE/src`` unless an
   unpacked copy is already in one of the ``src`` directories;
2. its venv: one whose stamp lists exactly the suite's source, this project,
   pytest-xdist and the suite's test deps (``SUITES`` below, taken from its
   own packaging metadata) is reused from ``CACHE/venvs`` or a reuse
   directory's ``venvs``; else one is made in ``CACHE/venvs``
   (``guard_suites.venv``);
3. with ``--setup-only``: one plain run of its tests (``-p no:hermetic_guard
   -n 0``), whose counts say the venv works (no finding is read);
   otherwise ``flake8-hermetic check --select=HRM --no-baseline --format
   json`` from the suite's root (every rule) and ``flake8-hermetic prove
   --select=RULES`` (the rules with a runtime counterpart) ``--format json
   --timeout T -- ARGS -q``, bounded by ``--suite-timeout``.

A suite that fails to set up is reported and skipped. Then it prints, per
rule, both halves side by side (findings of ``check``; ``reached``,
``leaks``, ``leaks-on-failure``, ``no-leak``, ``not-reached`` of ``prove``;
``no-runtime-check``: findings of a rule ``prove`` cannot check) and the
default set's totals per half. The raw figures go to
``CACHE/results-<half>.json``.

    python benchmarks/corpus.py [--half tuning|held-out|both] [--suites a,b] [--setup-only]
                                [--reuse results.json ...] [--cache /work/corpus] [--timeout 60]
                                [--suite-timeout 900] [--reuse-dirs /work/suites,/work/suites/prove-cache]

Not a timed test: the tuning half takes most of an hour on two shared cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench_guard import child_env  # sys.path[0]
from guard_suites import COMMON, REPO, SUITES as GUARD_SUITES, SetupError, Suite, closing_counts, run, venv
from prove_suites import EXTRA, REACHED, SUBSET as PROVE_SUBSET, runs_line

SPLIT = Path(__file__).resolve().with_name("corpus_split.json")
HALVES = ("tuning", "held-out")
PROOFS = ("leaks", "leaks-on-failure", "no-leak", "not-reached")
COLUMNS = ("findings", "reached", *PROOFS, "no-runtime-check")
NO_ADDOPTS = ("-o", "addopts=")

#: every suite of the split: test deps from its own metadata (pyproject test extras/groups, tox.ini, setup.cfg)
SUITES: dict[str, Suite] = {suite.name: suite for suite in (
    *[s for s in GUARD_SUITES if s.name != "toolz"], *[s for s in EXTRA if s.name != "watchdog"],
    Suite("werkzeug", "3.1.9", ("cffi", "cryptography", "ephemeral-port-reserve", "pytest-timeout", "watchdog")),
    Suite("copier", "9.19.1", ("pexpect", "pytest-gitconfig", "inline-snapshot", "coverage"), NO_ADDOPTS,
          "its addopts (-n auto) dropped"),
    Suite("schedule", "1.2.2", ("pytz",)),
    Suite("keyring", "25.7.0", ("pyfakefs",)),
    Suite("pebble", "5.2.3", ()),
    # the held-out half
    Suite("filelock", "4.3.1", ("pytest-asyncio", "pytest-mock", "pytest-timeout", "virtualenv"),
          note="the released wheel installed (its sdist's build needs python-sbom, not on the index); "
               "pytest-randomly (in its test group) not installed"),
    Suite("ptyprocess", "0.7.0", ()),
    Suite("pytest-httpserver", "1.2.1", ("requests",)),
    Suite("mako", "1.4.3", ("beaker", "markupsafe", "pygments", "babel", "dogpile.cache", "lingua")),
    Suite("boltons", "26.2.0", (), ("tests",), "its tox command's test dir"),
    Suite("aiosqlite", "0.22.1", (), ("aiosqlite/tests/smoke.py",),
          "its unittest module (tests are aiosqlite/tests/smoke.py, which pytest's default python_files skips)"),
    Suite("aiofiles", "25.1.0", ("pytest-asyncio",)),
    Suite("build", "1.6.1", ("filelock", "wheel", "setuptools", "setuptools_scm", "pip", "pytest-mock",
                             "pytest-rerunfailures", "uv", "virtualenv"), ("-m", "not network")),
    Suite("cattrs", "26.2.1", ("hypothesis", "pytest-benchmark", "immutables", "ujson", "orjson", "msgpack", "pyyaml",
                               "tomlkit", "cbor2", "pymongo", "msgspec", "tomli-w")),
    Suite("cookiecutter", "2.7.1", ("pytest-mock", "freezegun"), NO_ADDOPTS, "its addopts (--cov ...) dropped"),
    Suite("tenacity", "9.2.1", ("tornado",)),
    Suite("platformdirs", "4.14.9", ("appdirs", "pytest-mock", "coverage"),
          note="the released wheel installed (its sdist's build needs python-sbom, not on the index)"),
    Suite("loky", "3.7.0", ("packaging", "psutil")),
)}
#: suites installed from the index's release of the same version, not from the sdist (which does not build here)
FROM_INDEX = {"filelock", "platformdirs"}
#: held-out suites whose plain run takes minutes here (build 190 s, cattrs 336 s, loky 442 s, filelock over 480 s,
#: measured with --setup-only before any finding was read): prove is given the test files that hold findings of the
#: rules it checks (chosen by the script, not by hand), so each round runs those files only; a finding in a helper
#: module or conftest.py whose tests live in other files is then not reached
FLAGGED_ONLY = {"build", "cattrs", "loky", "filelock"}
TEST_FILE = re.compile(r"(test_.*|.*_test)\.py$")
#: the tests proven, where a whole suite takes too long to prove on two shared cores (tuning suites only)
SUBSET = {**PROVE_SUBSET,
          "copier": ("tests/test_copy.py", "tests/test_cleanup.py", "tests/test_dirty_local.py", "tests/test_tasks.py")}


class SplitError(Exception):
    pass


# ---- pure helpers (tests/test_corpus_script.py) ------------------------------------------------------------------

def read_split(path: Path) -> dict[str, tuple[str, str]]:
    """``{name: (version, half)}`` from the recorded split; a bad file raises SplitError naming it."""
    try:
        data = json.loads(path.read_text())
        pairs = data["pairs"]
        found: dict[str, tuple[str, str]] = {}
        for number, pair in enumerate(pairs, 1):
            suites, tuning = pair["suites"], pair["tuning"]
            if len(suites) != 2 or tuning not in suites:
                raise SplitError(f"{path}: pair {number}: two suites, one of them the tuning one, expected")
            for spec in suites:
                name, _, version = spec.partition("==")
                if not version or name in found:
                    raise SplitError(f"{path}: pair {number}: {spec!r} is not NAME==VERSION, or is listed twice")
                found[name] = (version, HALVES[spec != tuning])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SplitError(f"{path}: {type(exc).__name__}: {exc}") from exc
    return found


def blank() -> dict[str, int]:
    return dict.fromkeys(COLUMNS, 0)


def per_rule(results: list[dict[str, Any]], runtime: set[str]) -> dict[str, dict[str, int]]:
    """Per rule over the results: check's findings, prove's proofs (rules with a runtime counterpart), and, for a
    rule without one, its findings again as ``no-runtime-check``."""
    rules: dict[str, dict[str, int]] = {}
    for result in results:
        for finding in result.get("findings") or []:
            if not finding["code"].startswith("HRM"):
                continue  # E999: a file that does not parse (the status line counts them)
            row = rules.setdefault(finding["code"], blank())
            row["findings"] += 1
            row["no-runtime-check"] += finding["code"] not in runtime
        for proof in result.get("proofs") or []:
            row = rules.setdefault(proof["code"], blank())
            if proof["proof"] in PROOFS:
                row[proof["proof"]] += 1
                row["reached"] += proof["proof"] in REACHED
    return rules


def totals(rules: dict[str, dict[str, int]], codes: set[str]) -> dict[str, int]:
    """The sum of each column over the rules ``codes`` names."""
    out = blank()
    for code, row in rules.items():
        if code in codes:
            for column in COLUMNS:
                out[column] += row[column]
    return out


# ---- measuring ---------------------------------------------------------------------------------------------------

def locate(suite: Suite, cache: Path, reuse_dirs: list[Path]) -> Path:
    """The unpacked sdist: an existing copy, else the sdist (found or downloaded) unpacked into CACHE/src."""
    stem = re.sub(r"[-_.]+", "[-_.]+", suite.name) + "-" + re.escape(suite.version)
    for base in (cache, *reuse_dirs):
        for path in sorted((base / "src").glob("*")) if (base / "src").is_dir() else ():
            if path.is_dir() and re.fullmatch(stem, path.name, re.I):
                return path
    archive_name = re.compile(stem + r"\.(tar\.gz|zip)", re.I)
    archives = [path for base in (cache, *reuse_dirs) if (base / "sdists").is_dir()
                for path in sorted((base / "sdists").iterdir()) if archive_name.fullmatch(path.name)]
    sdists, src = cache / "sdists", cache / "src"
    sdists.mkdir(parents=True, exist_ok=True)
    src.mkdir(parents=True, exist_ok=True)
    if not archives:
        done = run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-q",
                    "-d", str(sdists), f"{suite.name}=={suite.version}"], timeout=600)
        archives = [path for path in sorted(sdists.iterdir()) if archive_name.fullmatch(path.name)]
        if done.returncode or not archives:
            raise SetupError(f"pip download failed: {done.stderr.strip()[-300:]}")
    if archives[0].suffix == ".zip":
        raise SetupError(f"{archives[0]}: a zip sdist; unpack it into {src} by hand")
    with tempfile.TemporaryDirectory(dir=src) as scratch:
        with tarfile.open(archives[0]) as tar:
            tar.extractall(scratch, filter="data")
        unpacked = [path for path in Path(scratch).iterdir() if path.is_dir()]
        if len(unpacked) != 1:
            raise SetupError(f"{archives[0]}: expected one top directory, found {len(unpacked)}")
        target = src / unpacked[0].name
        unpacked[0].rename(target)  # atomic: a half-unpacked tree is never taken for a whole one
    return target


def interpreter(suite: Suite, source: Path, cache: Path, reuse_dirs: list[Path], project: Path) -> Path:
    """A venv made earlier with exactly this suite's requirements, else a new one in CACHE/venvs."""
    wanted = json.dumps([str(source), str(project), "pytest-xdist", *suite.deps])
    for base in reuse_dirs:
        home = base / "venvs" / suite.key
        stamp = home / ".guard-suites-requirements"
        if (home / "bin" / "python").exists() and stamp.exists() and stamp.read_text() == wanted:
            return home / "bin" / "python"
    if suite.name not in FROM_INDEX:
        return venv(suite, source, cache, project)
    home = cache / "venvs" / suite.key
    python, stamp = home / "bin" / "python", home / ".corpus-requirements"
    wanted = json.dumps([f"{suite.name}=={suite.version}", str(project), "pytest-xdist", *suite.deps])
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    if home.exists():
        shutil.rmtree(home)
    for command in ([sys.executable, "-m", "venv", str(home)],
                    [str(python), "-m", "pip", "install", "-q", f"{suite.name}=={suite.version}", "-e", str(project),
                     "pytest-xdist", *suite.deps]):
        done = run(command, timeout=1800)
        if done.returncode:
            raise SetupError(f"{suite.key}: {command[2]} failed: {done.stderr.strip()[-500:]}")
    stamp.write_text(wanted)
    return python


def setup_run(python: Path, source: Path, suite: Suite, timeout: float) -> dict[str, Any]:
    """One plain run of the suite's tests, bounded by ``timeout`` (its process group killed past it): the counts
    and, for a run that did not get going, the import and usage errors (what a missing dependency looks like). No
    finding, failing test or traceback is kept."""
    command = [str(python), "-m", "pytest", *COMMON, *suite.args, "-n", "0", "-p", "no:hermetic_guard"]
    started = time.perf_counter()
    with subprocess.Popen(command, cwd=source, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True) as child:
        try:
            output, _ = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return {"counts": None, "exit": None, "wall": round(time.perf_counter() - started, 1),
                    "problems": [f"timed out after {timeout:.0f} s"]}
    problems = sorted({line.strip()[:160] for line in output.splitlines()[-200:]
                       if re.search(r"ModuleNotFoundError|No module named|usage:|error: unrecognized", line)})
    return {"counts": closing_counts(output), "exit": child.returncode, "wall": round(time.perf_counter() - started, 1),
            "problems": problems[:5]}


def lint(python: Path, source: Path, scratch: Path) -> dict[str, Any]:
    out = scratch / "check.json"
    started = time.perf_counter()
    done = run([str(python.parent / "flake8-hermetic"), "check", "--select=HRM", "--no-baseline", "--format", "json",
                "--exit-zero", "-o", str(out)], cwd=source, timeout=1200)
    try:
        findings = json.loads(out.read_text())
    except (OSError, ValueError) as exc:
        return {"check_error": f"no JSON from check (exit {done.returncode}, {exc}): {done.stderr.strip()[-300:]}",
                "findings": []}
    return {"findings": findings, "check_wall": round(time.perf_counter() - started, 1),
            "check_summary": done.stderr.strip()[-300:]}


def flagged_files(findings: list[dict[str, Any]], rules: list[str]) -> list[str]:
    """The test files holding findings of ``rules``, in path order (what a slow suite's prove is given)."""
    return sorted({f["path"] for f in findings if f["code"] in rules and TEST_FILE.match(Path(f["path"]).name)})


def prove(python: Path, source: Path, suite: Suite, rules: list[str], args: argparse.Namespace,
          scratch: Path, findings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out = scratch / "proofs.json"
    subset = list(SUBSET.get(suite.name, ()))
    if suite.name in FLAGGED_ONLY:
        subset = flagged_files(findings or [], rules)
        if not subset:
            return {"prove_command": "(no test file holds a finding prove can check)", "proofs": [], "runs": None}
    suite_args = [*suite.args, *subset, "-q"]
    command = [str(python.parent / "flake8-hermetic"), "prove", "--select=" + ",".join(rules), "--format", "json",
               "-o", str(out), "--timeout", str(args.timeout), "--", *suite_args]
    result: dict[str, Any] = {"prove_command": " ".join(command[1:]).replace(str(out), "FILE")}
    started = time.perf_counter()
    try:
        done = run(command, cwd=source, timeout=args.suite_timeout)
    except subprocess.TimeoutExpired:
        return {**result, "prove_error": f"prove did not finish in {args.suite_timeout:.0f} s", "proofs": []}
    result.update(prove_wall=round(time.perf_counter() - started, 1), prove_exit=done.returncode,
                  runs=runs_line(done.stderr))
    try:
        result["proofs"] = json.loads(out.read_text())
    except (OSError, ValueError) as exc:
        result.update(prove_error=f"no JSON from prove (exit {done.returncode}, {exc}): {done.stderr.strip()[-300:]}",
                      proofs=[])
    return result


def measure(suite: Suite, half: str, args: argparse.Namespace, rules: list[str]) -> dict[str, Any]:
    """One suite's record; a suite that cannot be set up gets ``error`` and nothing else."""
    result: dict[str, Any] = {"suite": suite.key, "half": half, "note": suite.note, "pytest_args": list(suite.args)}
    started = time.perf_counter()
    try:
        source = locate(suite, args.cache, args.reuse_dirs)
        python = interpreter(suite, source, args.cache, args.reuse_dirs, args.project)
    except (SetupError, OSError, subprocess.TimeoutExpired, tarfile.TarError) as exc:
        return {**result, "error": f"setup: {exc}"}
    result.update(source=str(source), python=str(python), setup_wall=round(time.perf_counter() - started, 1))
    with tempfile.TemporaryDirectory(prefix="corpus-", dir=args.cache) as scratch:
        try:
            if args.setup_only:
                result["plain"] = setup_run(python, source, suite, args.setup_timeout)
            else:
                result.update(lint(python, source, Path(scratch)))
                result.update(prove(python, source, suite, rules, args, Path(scratch), result.get("findings")))
        except (OSError, subprocess.TimeoutExpired) as exc:
            result["error"] = f"run: {exc}"
    return result


# ---- reporting ---------------------------------------------------------------------------------------------------

def table(results: list[dict[str, Any]], runtime: set[str], default: set[str]) -> str:
    by_half = {half: per_rule([r for r in results if r["half"] == half], runtime) for half in HALVES}
    shown = [half for half in HALVES if any(r["half"] == half for r in results)]
    head = ["rule", "default", *[f"{half} {column}" for half in shown for column in COLUMNS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for code in sorted(set().union(*(by_half[half] for half in shown))):
        cells = [code, "on" if code in default else "off"]
        cells += [str(by_half[half].get(code, blank())[column]) for half in shown for column in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    for half in shown:
        total = totals(by_half[half], default)
        lines.append(f"\ndefault set ({', '.join(sorted(default))}), {half} half: "
                     + ", ".join(f"{total[column]} {column}" for column in COLUMNS))
    return "\n".join(lines)


def status(result: dict[str, Any]) -> str:
    if result.get("error"):
        return f"| {result['suite']} | {result['half']} | **{result['error'][:200]}** | | |"
    if "plain" in result:
        plain = result["plain"]
        counts = ", ".join(f"{n} {k}" for k, n in (plain["counts"] or {}).items() if n) or "(no closing line)"
        problems = "; ".join(plain["problems"])
        return (f"| {result['suite']} | {result['half']} | installed ({result['setup_wall']} s) | "
                f"exit {plain['exit']}: {counts} ({plain['wall']} s) | {problems} |")
    runs = result.get("runs") or {}
    prove_text = result.get("prove_error") or (f"{runs.get('rounds')} rounds, {result.get('prove_wall')} s"
                                               if runs else f"pytest not run ({result.get('prove_wall')} s)")
    unparsed = sum(not f["code"].startswith("HRM") for f in result.get("findings") or [])
    prove_text += f"; {unparsed} files that do not parse (E999)" if unparsed else ""
    return (f"| {result['suite']} | {result['half']} | {len(result.get('findings') or []) - unparsed} findings "
            f"({result.get('check_error') or str(result.get('check_wall')) + ' s'}) | {prove_text} | "
            f"{len(result.get('proofs') or [])} proofs |")


def report(results: list[dict[str, Any]], runtime: set[str], default: set[str], setup_only: bool) -> str:
    head = ["suite", "half", "setup / check", "plain run / prove", "notes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *map(status, results)]
    measured = [r for r in results if not r.get("error") and "plain" not in r]
    if not setup_only and measured:
        lines += ["", "Per rule (check: every rule; prove: the rules with a runtime counterpart):", "",
                  table(measured, runtime, default)]
    return "\n".join(lines)


def save(results: list[dict[str, Any]], path: Path) -> None:
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps(results, indent=1) + "\n")
    partial.replace(path)


def load_reused(paths: list[Path]) -> dict[str, dict[str, Any]]:
    earlier: dict[str, dict[str, Any]] = {}
    for path in paths:
        for result in json.loads(path.read_text()):
            if not result.get("error") and not result.get("prove_error") and not result.get("check_error"):
                earlier[result["suite"]] = result
    return earlier


def rule_sets() -> tuple[set[str], set[str]]:
    """(rules with a runtime counterpart, rules on by default), from this project's catalog."""
    from flake8_hermetic.catalog import all_rules
    from flake8_hermetic.prove.matching import RUNTIME_OF
    rules = all_rules()
    return set(RUNTIME_OF) & set(rules), {code for code, rule in rules.items() if rule.default_on}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python benchmarks/corpus.py")
    parser.add_argument("--half", choices=(*HALVES, "both"), default="tuning")
    parser.add_argument("--suites", default="", help="comma-separated names (default: the whole half)")
    parser.add_argument("--setup-only", action="store_true", help="install, and run each suite's tests once plainly")
    parser.add_argument("--reuse", type=Path, action="append", default=[],
                        help="an earlier results file: its suites are kept (unless they failed); repeatable")
    parser.add_argument("--cache", type=Path, default=Path("/work/corpus"), help="sdists, src, venvs, results")
    parser.add_argument("--reuse-dirs", default="/work/suites,/work/suites/prove-cache",
                        help="comma-separated directories with sdists/, src/ and venvs/ made earlier, to reuse")
    parser.add_argument("--project", type=Path, default=REPO, help="the flake8-hermetic checkout to install")
    parser.add_argument("--split", type=Path, default=SPLIT)
    parser.add_argument("--timeout", type=float, default=60.0, help="prove's --timeout (per injected test)")
    parser.add_argument("--suite-timeout", type=float, default=900.0, help="bound on one suite's prove run")
    parser.add_argument("--setup-timeout", type=float, default=600.0, help="bound on --setup-only's plain run")
    parser.add_argument("--out", type=Path, default=None, help="results file (default CACHE/results-HALF.json)")
    args = parser.parse_args(argv)
    args.cache, args.project = args.cache.resolve(), args.project.resolve()
    args.reuse_dirs = [Path(d).resolve() for d in args.reuse_dirs.split(",") if d]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.cache == args.project or args.project in args.cache.parents:
        print(f"--cache {args.cache}: inside the project {args.project}; give a directory outside it", file=sys.stderr)
        return 2
    try:
        split = read_split(args.split)
        earlier = load_reused(args.reuse)
    except SplitError as exc:
        print(f"corpus: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"--reuse: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    missing = sorted(set(split) - set(SUITES))
    names = [name for name in args.suites.split(",") if name] or \
        [name for name, (_, half) in split.items() if args.half in ("both", half)]
    unknown = sorted(set(names) - set(split))
    if missing or unknown:
        print(f"corpus: no table entry for {', '.join(missing)}" if missing else
              f"--suites: not in the split: {', '.join(unknown)} (known: {', '.join(split)})", file=sys.stderr)
        return 2
    runtime, default = rule_sets()
    args.cache.mkdir(parents=True, exist_ok=True)
    out = args.out or args.cache / f"results-{args.half}{'-setup' if args.setup_only else ''}.json"
    results, failed = [], 0
    for name in names:
        version, half = split[name]
        suite = replace(SUITES[name], version=version)
        if suite.key in earlier and ("plain" in earlier[suite.key]) == args.setup_only:
            results.append(earlier[suite.key])
            continue
        print(f"{suite.key} ({half}): {'setting up' if args.setup_only else 'linting and proving'}",
              file=sys.stderr, flush=True)
        results.append(measure(suite, half, args, sorted(runtime)))
        failed |= bool(results[-1].get("error") or results[-1].get("prove_error"))
        print(status(results[-1]), file=sys.stderr, flush=True)
        save(results, out)  # after each suite: a run that is stopped loses only the suite it was on
    save(results, out)
    print(report(results, runtime, default, args.setup_only))
    print(f"\nresults: {out}", file=sys.stderr)
    return failed


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
