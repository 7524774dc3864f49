"""What ``flake8-hermetic check`` costs next to parsing alone and to ruff.

Side by side in one run, on one corpus, in alternating order each round (a
busy moment of a shared machine falls on every mode alike), each mode in a
child process:

- ``parse``: read and ``ast.parse`` every file flake8's discovery finds
  under the corpus (listed beforehand), and nothing else: the floor;
- ``check-j1``: ``flake8-hermetic check -j1`` (the direct path, one process);
- ``check``: ``flake8-hermetic check`` with its default jobs;
- ``flake8-path``: ``check -j1`` through flake8's own file checker (what
  ``check`` cost before the direct path), with the hidden ``--engine flake8``;
- ``ruff``: ``ruff check --select E,F,W,B,PT`` where ruff is installed (the
  ``bench`` extra), as a team that lints with ruff runs it.

Each mode's median wall time and median CPU time (user + system of the
child and its reaped children, so ``check``'s workers count) are printed,
then the two ratios the issue sets targets for: ``check-j1`` CPU over
``parse`` CPU (at most 2.5), and ``check`` wall over ``ruff`` wall (at most
1.5).

    python benchmarks/bench_check.py CORPUS [--rounds 5] [--modes parse,check-j1,check,ruff]
                                     [--config FILE]

``check`` runs in a temporary directory with ``--config`` (default: an
empty one), so the corpus's own configuration and baseline play no part;
the same for ruff (``--isolated``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("parse", "check-j1", "check", "flake8-path", "ruff")
DEFAULT_MODES = ("parse", "check-j1", "check", "ruff")

# The floor: read and parse each file flake8's discovery finds (listed beforehand, so
# neither flake8's start-up nor its discovery is counted), and nothing else.
PARSE_ONLY = """
import ast, sys, tokenize
for name in open(sys.argv[1], encoding="utf-8").read().splitlines():
    try:
        with tokenize.open(name) as handle:
            ast.parse(handle.read())
    except (SyntaxError, ValueError, UnicodeError, OSError):
        pass
"""


def discovered(corpus: str, config: str) -> list[str]:
    """The files ``check`` would read: flake8's own discovery with the same config."""
    from flake8.discover_files import expand_paths
    from flake8.options.parse_args import parse_args

    _, options = parse_args(["--config", config, "--", corpus])
    return list(expand_paths(paths=[corpus], stdin_display_name="stdin", filename_patterns=options.filename,
                             exclude=(*options.exclude, *options.extend_exclude)))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command(mode: str, corpus: str, config: str, listing: str) -> list[str] | None:
    check = [sys.executable, "-m", "flake8_hermetic", "check", "--exit-zero", "--config", config]
    if mode == "parse":
        return [sys.executable, "-c", PARSE_ONLY, listing]
    if mode == "check-j1":
        return [*check, "-j1", corpus]
    if mode == "check":
        return [*check, corpus]
    if mode == "flake8-path":
        return [*check, "-j1", "--engine", "flake8", corpus]
    ruff = shutil.which("ruff") or shutil.which("ruff", path=os.path.dirname(sys.executable))
    if ruff is None:
        return None
    return [ruff, "check", "--isolated", "--no-cache", "--exit-zero", "--select", "E,F,W,B,PT", corpus]


def run_once(argv: list[str], cwd: str) -> tuple[float, float]:
    cpu_before, started = children_cpu(), time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False,
                            timeout=3600)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu_before
    if result.returncode != 0:
        raise SystemExit(f"bench_check: {' '.join(argv[:6])} ... exited {result.returncode}: "
                         f"{result.stderr.decode(errors='replace').strip()[-300:]}")
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_check.py")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES), help=f"comma-separated, of {','.join(MODES)}")
    parser.add_argument("--config", help="flake8 config for check (default: an empty one)")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown or not args.corpus.is_dir():
        parser.error(f"unknown modes {sorted(unknown)}" if unknown else f"{args.corpus} is not a directory")
    with tempfile.TemporaryDirectory(prefix="bench-check-") as workdir:
        config = os.path.abspath(args.config) if args.config else os.path.join(workdir, "empty.cfg")
        if not args.config:
            Path(config).write_text("[flake8]\n", encoding="utf-8")
        corpus = str(args.corpus.resolve())
        listing = os.path.join(workdir, "files.txt")
        Path(listing).write_text("\n".join(discovered(corpus, config)), encoding="utf-8")
        commands = {m: command(m, corpus, config, listing) for m in modes}
        for mode in [m for m, c in commands.items() if c is None]:
            print(f"{mode}: not installed here, left out (pip install -e '.[bench]')", file=sys.stderr)
            del commands[mode]
        times: dict[str, list[tuple[float, float]]] = {m: [] for m in commands}
        for round_ in range(args.rounds):
            order = list(commands) if round_ % 2 == 0 else list(reversed(commands))
            for mode in order:
                times[mode].append(run_once(commands[mode], workdir))
    files = sum(1 for _ in args.corpus.rglob("*.py"))
    print(f"{args.corpus}: {files} .py files, {args.rounds} rounds, {os.cpu_count()} CPUs; medians")
    print(f"{'mode':<12} {'wall s':>8} {'cpu s':>8}")
    medians = {}
    for mode, samples in times.items():
        wall = statistics.median(w for w, _ in samples)
        cpu = statistics.median(c for _, c in samples)
        medians[mode] = (wall, cpu)
        print(f"{mode:<12} {wall:>8.2f} {cpu:>8.2f}")
    if "parse" in medians and "check-j1" in medians:
        print(f"check -j1 CPU / ast.parse CPU: {medians['check-j1'][1] / medians['parse'][1]:.2f} (target <= 2.5)")
    if "ruff" in medians and "check" in medians:
        print(f"check wall / ruff wall: {medians['check'][0] / medians['ruff'][0]:.2f} (target <= 1.5)")
    if "flake8-path" in medians and "check-j1" in medians:
        print(f"check -j1 CPU / flake8's path CPU: {medians['check-j1'][1] / medians['flake8-path'][1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
