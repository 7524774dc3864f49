"""The instructions the pack's checker executes per file, for comparing two commits.

CPU-time ratios on a shared machine move by a few points between runs; an
instruction count does not. This runs flake8-hermetic's checker exactly as
``bench_rules.py`` times it (flake8's own option parsing, the constructor
arguments flake8 passes) over a sample of the corpus, under valgrind, once
with the checker and once loading the same files without it; the difference
is the pack's own work on those files::

    python benchmarks/count_instructions.py --every 10
    python benchmarks/count_instructions.py --every 2 --max-lines 300   # small files only

Run it from two checkouts (each installed in its own environment) to compare
a change against the commit before it. Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_sample(every: int, max_lines: int | None, lint: bool) -> int:
    """In the child: lint (or only load) the sample; returns the number of findings."""
    sys.path.insert(0, str(HERE))
    import bench_rules

    files, _ = bench_rules.load_corpus(bench_rules.default_corpus())
    files = [f for f in files if max_lines is None or len(f.lines) < max_lines][::every]
    make = bench_rules.flake8_checkers(["--isolated"])["flake8-hermetic"]
    found = sum(1 for source in files for _ in make(source).run()) if lint else 0
    print(f"{len(files)} files, {found} findings")
    return found


def count(every: int, max_lines: int | None, lint: bool) -> int:
    argv = [
        "valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
        sys.executable, __file__, "--child", "lint" if lint else "load", "--every", str(every),
    ]
    if max_lines is not None:
        argv += ["--max-lines", str(max_lines)]
    # one hash seed: set and dict iteration orders (and with them, early exits) do not vary by run
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    match = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if match is None:
        raise SystemExit(f"no instruction count in valgrind's output: {result.stderr[-300:]}")
    return int(match.group(1).replace(",", ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=10, help="every Nth file of the corpus (default 10)")
    parser.add_argument("--max-lines", type=int, help="only files shorter than this")
    parser.add_argument("--child", choices=("lint", "load"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_sample(args.every, args.max_lines, args.child == "lint")
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed; nothing counted")
        return 0
    loaded = count(args.every, args.max_lines, lint=False)
    linted = count(args.every, args.max_lines, lint=True)
    print(f"the pack's checker: {(linted - loaded) / 1e6:,.1f} M instructions over the sample")
    return 0


if __name__ == "__main__":
    sys.exit(main())
