"""What the runtime guard adds to a test suite's run.

Runs one suite's tests in child processes, in up to three modes, side by
side in one run:

- ``absent``: the plugin not loaded (``-p no:hermetic_guard``);
- ``disabled``: loaded, not turned on (what every pytest run in an
  environment with the pack pays);
- ``guard``: ``--hermetic-guard --hermetic-no-baseline``;
- ``control``: ``absent`` again, to show the measurement's own noise.

By default the modes run one after the other, in alternating order each
round (so a busy moment of a shared machine falls on all of them alike).
For each, the median wall time and the median CPU time (user + system of
the child and its reaped children, xdist workers included) over the
rounds; the ratios are against the first mode. The ``paired`` columns are
the median of each round's own ratio (a mode against the first one's run
next to it in time), which a slow stretch of a shared machine moves less.
A guarded run exits 1 when the suite leaks: that is the guard's verdict,
not a failed measurement.

``--together`` runs the modes of a round at the same time instead, all
pinned to the same CPUs (``--cpus``, default the first one this process
may use), and compares the CPU time each one used. On a machine whose speed
drifts from minute to minute (a shared VM), every mode then runs at the
same speed, and the round's ratio is steady where wall times are not: two
``absent`` runs together (``--modes absent,control``) agree within about
1 % a round. For a suite that does not wait (wall time equals CPU time when
it runs alone) the added CPU time is the added wall time. It errs high, if
anything: processes that share a CPU evict each other's caches, which costs
the mode with more per-test work more (the ratio grows with the number of
runs sharing it).

``--instructions`` runs each mode once more under valgrind (cachegrind, no
cache simulation, ``PYTHONHASHSEED=0``) and prints the instructions each
run executed: the same on a busy machine as on an idle one (two runs of a
mode differ by under 0.1 % on a suite that never waits on time, up to
0.6 % on click's and markdown's). Instructions miss what the guard costs
beyond them (cache misses, system calls), so they read lower than time.

    python benchmarks/bench_guard.py [--rounds 5] [--suite DIR] [--python PY] [--modes absent,guard]
                                     [--together [--cpus 0]] [--instructions] [-- PYTEST-ARGS ...]

The default suite is this project's own, with the README's ``-n 2 -q``.
"""

from __future__ import annotations

import argparse
import os
import random
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
    "control": ["-p", "no:hermetic_guard"],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child_env() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def run_once(python: str, suite: Path, args: list[str], mode: str) -> tuple[float, float, int]:
    env = child_env()
    cpu_before, started = children_cpu(), time.perf_counter()
    result = subprocess.run(
        [python, "-m", "pytest", *args, *MODES[mode]], cwd=suite, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, check=False, timeout=3600, env=env,
    )
    return time.perf_counter() - started, children_cpu() - cpu_before, result.returncode


def run_together(python: str, suite: Path, args: list[str], modes: list[str], cpus: set[int],
                 seed: int) -> dict[str, tuple[float, float, int]]:
    """Every mode at once, pinned to ``cpus``; (wall, CPU, exit status) of each."""
    env = child_env()
    launch = list(modes)
    random.Random(seed).shuffle(launch)  # who starts first: no mode always does
    started: list[tuple[str, subprocess.Popen[bytes], float]] = []
    for mode in launch:
        child = subprocess.Popen(
            [python, "-m", "pytest", *args, *MODES[mode]], cwd=suite, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=env,
        )
        os.sched_setaffinity(child.pid, cpus)  # before it has done more than start
        started.append((mode, child, time.perf_counter()))
    found: dict[str, tuple[float, float, int]] = {}
    for mode, child, began in started:
        _, status, usage = os.wait4(child.pid, 0)  # what it used, its reaped children included
        child.returncode = os.waitstatus_to_exitcode(status)
        found[mode] = (time.perf_counter() - began, usage.ru_utime + usage.ru_stime, child.returncode)
    return found


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
    parser.add_argument("--together", action="store_true",
                        help="run a round's modes at the same time on the same CPUs, and compare their CPU time")
    parser.add_argument("--cpus", default=None,
                        help="with --together: the CPUs to pin every mode to, as 0 or 0,1 (default: the first one)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each mode's instructions once, under valgrind")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default: -n 2 -q)")
    args = parser.parse_args(argv)
    pytest_args = args.pytest_args or ["-n", "2", "-q"]
    python = str(Path(args.python).absolute()) if "/" in args.python else args.python
    order = [mode for mode in MODES if mode in args.modes.split(",")]
    if args.together:
        return together(args, python, pytest_args, order)
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


def together(args: argparse.Namespace, python: str, pytest_args: list[str], order: list[str]) -> int:
    if not hasattr(os, "sched_setaffinity"):
        print("--together pins processes to CPUs (os.sched_setaffinity): not available here", file=sys.stderr)
        return 2
    allowed = sorted(os.sched_getaffinity(0))
    try:
        cpus = {int(cpu) for cpu in args.cpus.split(",")} if args.cpus else {allowed[0]}
    except ValueError:
        print(f"--cpus {args.cpus!r}: expected CPU numbers such as 0 or 0,1", file=sys.stderr)
        return 2
    if not cpus <= set(allowed):
        print(f"--cpus {args.cpus}: this process may use CPUs {','.join(map(str, allowed))}", file=sys.stderr)
        return 2
    for mode in order:  # warm-up: bytecode caches (compiling them would count), file system caches
        run_once(python, args.suite, pytest_args, mode)
    rounds = [run_together(python, args.suite, pytest_args, order, cpus, number) for number in range(args.rounds)]
    for number, found in enumerate(rounds, 1):
        print(f"round {number}: " + ", ".join(f"{m} {found[m][1]:.2f}s cpu" for m in order), file=sys.stderr)
    if not rounds:
        return 0
    base = order[0]
    print(f"suite: {args.suite} | pytest {' '.join(pytest_args)} | {args.rounds} rounds, every mode at once "
          f"on CPU {','.join(map(str, sorted(cpus)))}")
    print(f"{'mode':<9} {'cpu s':>8} {'ratio':>7} {'paired':>7} {'q1':>7} {'q3':>7} {'wall s':>8}  exit")
    for mode in order:
        cpu = statistics.median(found[mode][1] for found in rounds)
        ratios = sorted(found[mode][1] / found[base][1] for found in rounds)
        q1, q3 = (statistics.quantiles(ratios, n=4)[0::2] if len(ratios) > 1 else (ratios[0], ratios[0]))
        wall = statistics.median(found[mode][0] for found in rounds)
        print(f"{mode:<9} {cpu:8.2f} {cpu / statistics.median(f[base][1] for f in rounds):7.3f} "
              f"{statistics.median(ratios):7.3f} {q1:7.3f} {q3:7.3f} {wall:8.2f}  "
              f"{','.join(map(str, sorted({found[mode][2] for found in rounds})))}")
    print("(cpu: user + system, reaped children included; paired, q1, q3: each round's own ratio; "
          "wall: shared with the other modes)")
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
