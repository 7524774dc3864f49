"""What the runtime guard adds to a test suite's run.

Runs one suite's tests in child processes, three ways, side by side in one
run, in alternating order each round (so a busy moment of a shared machine
falls on all three alike):

- ``absent``: the plugin not loaded (``-p no:hermetic_guard``);
- ``disabled``: loaded, not turned on (what every pytest run in an
  environment with the pack pays);
- ``guard``: ``--hermetic-guard --hermetic-no-baseline``.

For each, the median wall time and the median CPU time (user + system of
the child and its reaped children, xdist workers included) over the
rounds; the ratios are against ``absent``. The ``paired`` columns are the
median of each round's own ratio (a mode against the ``absent`` run next
to it in time), which a slow stretch of a shared machine moves less. A
guarded run exits 1 when the suite leaks: that is the guard's verdict, not
a failed measurement.

``--instructions`` runs each mode once more under valgrind (cachegrind, no
cache simulation, ``PYTHONHASHSEED=0``) and prints the instructions each
run executed: the same on a busy machine as on an idle one (two runs of a
mode differ by under 0.1 % on a suite that never waits on time, up to
0.6 % on click's and markdown's), so it shows a change of a point or two that wall time on a
shared machine cannot.

    python benchmarks/bench_guard.py [--rounds 5] [--suite DIR] [--python PY] [--modes absent,guard]
                                     [--instructions] [-- PYTEST-ARGS ...]

The default suite is this project's own, with the README's ``-n 2 -q``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODES = {
    "absent": ["-p", "no:hermetic_guard"],
    "disabled": [],
    "guard": ["--hermetic-guard", "--hermetic-no-baseline"],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(python: str, suite: Path, args: list[str], mode: str) -> tuple[float, float, int]:
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    cpu_before, started = children_cpu(), time.perf_counter()
    result = subprocess.run(
        [python, "-m", "pytest", *args, *MODES[mode]], cwd=suite, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, check=False, timeout=3600, env=env,
    )
    return time.perf_counter() - started, children_cpu() - cpu_before, result.returncode


def instructions(python: str, suite: Path, args: list[str], mode: str) -> int:
    """Instructions of one run of ``mode``, counted by valgrind."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"  # the same dict and set layouts in every run
    result = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={os.devnull}",
         python, "-m", "pytest", *args, *MODES[mode]],
        cwd=suite, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False, timeout=7200, env=env,
    )
    for line in result.stderr.splitlines():
        if "I" in line and "refs:" in line:
            return int(line.rpartition("refs:")[2].replace(",", "").strip())
    raise RuntimeError(f"no instruction count in valgrind's output: {result.stderr[-300:]}")


def paired(values: list[float], base: list[float]) -> float:
    return statistics.median(value / other for value, other in zip(values, base))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_guard.py")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--suite", type=Path, default=REPO, help="the directory pytest runs in")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the suite's environment")
    parser.add_argument("--modes", default=",".join(MODES), help="which of absent,disabled,guard to run")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each mode's instructions once, under valgrind")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default: -n 2 -q)")
    args = parser.parse_args(argv)
    pytest_args = args.pytest_args or ["-n", "2", "-q"]
    python = str(Path(args.python).absolute()) if "/" in args.python else args.python
    order = [mode for mode in MODES if mode in args.modes.split(",")]
    walls: dict[str, list[float]] = {mode: [] for mode in order}
    cpus: dict[str, list[float]] = {mode: [] for mode in order}
    codes: dict[str, set[int]] = {mode: set() for mode in order}
    for mode in order:  # warm-up: bytecode caches (compiling them would count), file system caches
        run_once(python, args.suite, pytest_args, mode)
    for number in range(args.rounds):
        for mode in order if number % 2 == 0 else reversed(order):
            wall, cpu, code = run_once(python, args.suite, pytest_args, mode)
            walls[mode].append(wall)
            cpus[mode].append(cpu)
            codes[mode].add(code)
        print(f"round {number + 1}: " + ", ".join(f"{m} {walls[m][-1]:.2f}s/{cpus[m][-1]:.2f}s cpu" for m in order),
              file=sys.stderr)
    base = order[0]
    if args.rounds:
        wall_table(args, pytest_args, order, walls, cpus, codes)
    if args.instructions:
        if shutil.which("valgrind") is None:
            print("instructions: valgrind is not installed; skipped")
            return 0
        counted = {mode: instructions(python, args.suite, pytest_args, mode) for mode in order}
        print(f"{'mode':<9} {'instructions':>16} {'ratio':>7}   (valgrind, one run each)")
        for mode in order:
            print(f"{mode:<9} {counted[mode]:16,} {counted[mode] / counted[base]:7.3f}")
    return 0


def wall_table(args: argparse.Namespace, pytest_args: list[str], order: list[str], walls: dict[str, list[float]],
               cpus: dict[str, list[float]], codes: dict[str, set[int]]) -> None:
    base = order[0]
    base_wall, base_cpu = statistics.median(walls[base]), statistics.median(cpus[base])
    print(f"suite: {args.suite} | pytest {' '.join(pytest_args)} | {args.rounds} rounds, medians")
    print(f"{'mode':<9} {'wall s':>8} {'ratio':>7} {'paired':>7} {'cpu s':>8} {'ratio':>7} {'paired':>7}  exit")
    for mode in order:
        wall, cpu = statistics.median(walls[mode]), statistics.median(cpus[mode])
        print(f"{mode:<9} {wall:8.2f} {wall / base_wall:7.3f} {paired(walls[mode], walls[base]):7.3f} "
              f"{cpu:8.2f} {cpu / base_cpu:7.3f} {paired(cpus[mode], cpus[base]):7.3f}  "
              f"{','.join(map(str, sorted(codes[mode])))}")


if __name__ == "__main__":
    sys.exit(main())
