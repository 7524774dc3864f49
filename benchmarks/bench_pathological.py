"""The pack's time on one huge test function: linear, not quadratic.

A single test with thousands of statements is rare but real (generated
tests, a table of cases written out by hand), and a rule that rescans the
rest of the function per statement turns it into minutes. Each case below
is one test file with one test of N statements; the pack's checker runs on
it the way flake8 sets it up (every built-in rule selected, the
off-by-default ones included, no baseline), and the figure is its CPU time
(``time.process_time``, the least of the repeats). Doubling N should about
double the time; the budget is one second of pack time for N = 8,000.

Run from the repository root::

    python benchmarks/bench_pathological.py            # N = 1,000 ... 8,000
    python benchmarks/bench_pathological.py --sizes 150000 --repeats 1
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

BUDGET_SECONDS = 1.0
BUDGET_SIZE = 8000

#: case name -> the body of the test for N statements
CASES: dict[str, Callable[[int], str]] = {
    # HRM105 once looked at every later statement for each change of directory
    "consecutive os.chdir": lambda n: "    os.chdir(tmp_path)\n" * n,
    # the import-time step once scanned the function's body for each statement
    "plain assignments": lambda n: "".join(f"    x{i} = {i}\n" for i in range(n)),
    "os.environ writes": lambda n: "".join(f"    os.environ['K{i % 50}'] = 'v'\n" for i in range(n)),
}


def source_of(case: str, size: int) -> str:
    return "import os\n\n\ndef test_huge(tmp_path):\n" + CASES[case](size)


def pack_seconds(directory: str, source: str, repeats: int) -> tuple[float, int]:
    """The least CPU time of the pack's checker on ``source``, and its findings."""
    from flake8_hermetic.checker import HermeticChecker

    path = os.path.join(directory, "test_huge.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    lines = source.splitlines(keepends=True)
    best, found = float("inf"), 0
    for _ in range(repeats):
        tree = ast.parse(source)
        started = time.process_time()
        found = sum(1 for _ in HermeticChecker(tree, path, lines).run())
        best = min(best, time.process_time() - started)
    return best, found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,2000,4000,8000", help="statements per test, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="runs per case (default 3)")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    from flake8.options.parse_args import parse_args

    with tempfile.TemporaryDirectory() as directory:
        parse_args(["--isolated", "--select=HRM", "--hermetic-no-baseline"])  # configures the plugin
        over = []
        print(f"{'case':<22} {'statements':>10} {'pack s':>8} {'findings':>8}")
        for case in CASES:
            for size in sizes:
                seconds, found = pack_seconds(directory, source_of(case, size), args.repeats)
                print(f"{case:<22} {size:>10,} {seconds:>8.3f} {found:>8}")
                if size == BUDGET_SIZE and seconds > BUDGET_SECONDS:
                    over.append(f"{case} ({seconds:.2f} s)")
    if over:
        print(f"over the budget of {BUDGET_SECONDS} s at {BUDGET_SIZE:,} statements: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
