"""What a 100,000-entry baseline adds to a flake8 run.

A generated suite of ``--files`` test files holds ``--per-file`` violations
each (HRM105, ``os.chdir(tmp_path / "dN")``, each text different), and a
baseline accepts every one of them: 100,000 entries by default. Its twin
is the same suite with each flagged call replaced by a call of the same
shape that no rule flags (``os.fspath(...)``), and no baseline.

Both are linted by a full ``flake8`` run (every installed plugin, the
project defaults) in a child process, alternately, ``--repeat`` times. Both
runs print nothing (checked), so the difference is what the baseline
costs: reading and parsing the file once per process, and per linted file
taking the flagged text of each violation and matching it. The figure is
the child's CPU time (user + system), the least of the repeats, so other
processes on a busy machine do not count; the wall time is printed beside
it. The ratio is with / without.

    python benchmarks/bench_baseline.py [--files 1000] [--per-file 100] [--jobs 1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from flake8_hermetic.baseline import load

TESTS_PER_FILE = 10


def write_suite(root: Path, files: int, per_file: int, flagged: bool) -> int:
    """The suite under ``root``; returns the number of flagged calls."""
    call = "os.chdir" if flagged else "os.fspath"
    per_test = max(per_file // TESTS_PER_FILE, 1)
    count = 0
    (root / "tests").mkdir(parents=True)
    (root / "setup.cfg").write_text("[flake8]\nmax-line-length = 120\n", encoding="utf-8")
    for index in range(files):
        lines = ["import os", ""]
        for test in range(TESTS_PER_FILE):
            lines += ["", f"def test_case_{test}(tmp_path):"]
            for _ in range(per_test):
                lines.append(f'    {call}(tmp_path / "d{count}")')
                count += 1
            lines.append("    assert tmp_path.exists()")
            lines.append("")
        text = "\n".join(lines).rstrip("\n") + "\n"
        (root / "tests" / f"test_module_{index}.py").write_text(text, encoding="utf-8")
    return count if flagged else 0


def write_baseline(root: Path, files: int, per_file: int) -> int:
    per_test = max(per_file // TESTS_PER_FILE, 1)
    entries = []
    count = 0
    for index in range(files):
        for test in range(TESTS_PER_FILE):
            for _ in range(per_test):
                where = f"tests/test_module_{index}.py::test_case_{test}"
                entries.append(f'{where}\tHRM105\tos.chdir(tmp_path / "d{count}")')
                count += 1
    entries.sort()
    (root / "hermetic-baseline.txt").write_text("\n".join(entries) + "\n", encoding="utf-8")
    return len(entries)


def flake8_run(root: Path, jobs: int) -> tuple[float, float, str]:
    """(child CPU seconds, wall seconds, output) of one flake8 run."""
    before, start = os.times(), time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--jobs", str(jobs), "."],
        cwd=root, capture_output=True, text=True, timeout=3600, check=False,
    )
    wall, after = time.perf_counter() - start, os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return cpu, wall, result.stdout + result.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--per-file", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as scratch:
        with_baseline, without = Path(scratch, "with"), Path(scratch, "without")
        violations = write_suite(with_baseline, args.files, args.per_file, flagged=True)
        entries = write_baseline(with_baseline, args.files, args.per_file)
        write_suite(without, args.files, args.per_file, flagged=False)
        assert entries == violations

        start = time.process_time()
        load(str(with_baseline / "hermetic-baseline.txt"))
        parse_seconds = time.process_time() - start

        timings: dict[str, list[tuple[float, float]]] = {"with": [], "without": []}
        for _ in range(args.repeat):
            for name, root in (("with", with_baseline), ("without", without)):
                cpu, wall, output = flake8_run(root, args.jobs)
                if output:
                    raise SystemExit(f"the {name}-baseline run is not quiet:\n{output[:2000]}")
                timings[name].append((cpu, wall))

    best = {name: min(runs) for name, runs in timings.items()}
    (cpu_with, wall_with), (cpu_without, wall_without) = best["with"], best["without"]
    print(f"suite: {args.files} files, {violations} violations, baseline of {entries} entries, --jobs {args.jobs}")
    print(f"reading and parsing the baseline alone: {parse_seconds:.3f} s CPU")
    print(f"flake8 with the baseline:    {cpu_with:7.2f} s CPU ({wall_with:.2f} s wall)")
    print(f"flake8 without (twin suite): {cpu_without:7.2f} s CPU ({wall_without:.2f} s wall)")
    print(f"ratio with / without: {cpu_with / cpu_without:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
