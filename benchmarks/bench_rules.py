"""What flake8-hermetic costs, next to the plugins a test suite already runs.

Two measurements over one corpus of test files (default: the CPython test
suite that ships with the interpreter; any directory as an argument):

1. Per file, in one process: every file is read and parsed once, then
   flake8-hermetic's, flake8-bugbear's and flake8-pytest-style's checkers are
   run on the same tree, round-robin (the order rotates per file and per
   repeat so no checker always runs on a warm cache). Each checker is set up
   the way flake8 sets it up: flake8's own argument parsing loads the
   plugins and calls their ``parse_options``, and each checker class gets
   the constructor arguments flake8 would pass it. The figure per file is
   the least CPU time (``time.process_time_ns``) of the repeats: CPU time,
   not wall time, so other processes on a busy machine do not count.
2. A whole ``flake8`` run over the corpus, in a child process, with only
   flake8's own plugins (pyflakes, pycodestyle, mccabe) and with those plus
   flake8-hermetic. Every installed plugin runs on every file whatever
   ``--select`` says, so "without the pack" has to mean "not loaded": the
   child drops the other plugins from flake8's plugin discovery before
   flake8 starts (see ``FLAKE8_WITH_PLUGINS``). The runs alternate; the
   figure is the child's CPU time (user + system, from ``os.times``), the
   least of the repeats, with the wall time beside it.
3. With ``--instructions EVERY``, the same whole runs over every EVERYth
   file, under valgrind: the instructions each set-up executes. A count
   does not move with the machine's load, so this ratio is steady where
   the CPU times of a shared machine are not.

Run from the repository root::

    python -m pip install -e ".[bench]" && python benchmarks/bench_rules.py
"""

from __future__ import annotations

import argparse
import ast
import gc
import os
import shutil
import statistics
import subprocess
import sys
import time
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: entry name -> the package that provides it, for the checkers timed per file
PER_FILE_CHECKERS = {"HRM": "flake8-hermetic", "B": "flake8-bugbear", "PT": "flake8-pytest-style"}
CORE_PLUGINS = ("flake8", "pyflakes", "pycodestyle", "mccabe")
ALONE = "flake8 (pyflakes, pycodestyle, mccabe)"
#: the whole-run set-ups: name -> (plugin packages, extra flake8 options)
WHOLE_RUNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    ALONE: (CORE_PLUGINS, ()),
    "+ flake8-hermetic": ((*CORE_PLUGINS, "flake8-hermetic"), ()),
    "+ flake8-hermetic, HRM not selected": ((*CORE_PLUGINS, "flake8-hermetic"), ("--select=E,F,W,C90",)),
    "+ flake8-bugbear": ((*CORE_PLUGINS, "flake8-bugbear"), ()),
}

#: A ``python -c`` program: flake8 with plugin discovery limited to the
#: distributions named in argv[1] (comma-separated); the rest of argv is flake8's.
FLAKE8_WITH_PLUGINS = """\
import sys
from flake8.plugins import finder
allowed = set(sys.argv[1].split(","))
discover = finder._find_importlib_plugins
finder._find_importlib_plugins = lambda: (p for p in discover() if p.package in allowed)
from flake8.main.cli import main
sys.exit(main(sys.argv[2:]))
"""


@dataclass
class SourceFile:
    path: str
    tree: ast.Module
    lines: list[str]


@dataclass
class Timing:
    name: str
    per_file_ns: list[list[int]] = field(default_factory=list)  # [file][repeat]
    findings: int = 0

    def best_us(self) -> list[float]:
        return [min(samples) / 1000 for samples in self.per_file_ns]


def default_corpus() -> str:
    import test  # type: ignore[import-not-found]  # the CPython test suite package

    return os.path.dirname(test.__file__)


def load_corpus(root: str) -> tuple[list[SourceFile], int]:
    """Every parseable ``.py`` under ``root``, sorted; and how many were skipped."""
    paths: list[str] = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        paths.extend(os.path.join(directory, name) for name in sorted(filenames) if name.endswith(".py"))
    files, skipped = [], 0
    for path in paths:
        try:
            with tokenize.open(path) as handle:  # honours the coding cookie, as flake8 does
                lines = handle.readlines()
            tree = ast.parse("".join(lines), filename=path)
        except (SyntaxError, ValueError, OSError):  # UnicodeDecodeError is a ValueError
            skipped += 1
            continue
        files.append(SourceFile(path, tree, lines))
    return files, skipped


def flake8_checkers(argv: Sequence[str]) -> dict[str, Callable[[SourceFile], Any]]:
    """The per-file checker factories, configured by flake8's own option parsing."""
    from flake8.options.parse_args import parse_args

    plugins, options = parse_args(list(argv))
    loaded = {plugin.entry_name: plugin for plugin in plugins.checkers.tree}
    factories: dict[str, Callable[[SourceFile], Any]] = {}
    for entry, package in PER_FILE_CHECKERS.items():
        plugin = loaded.get(entry)
        if plugin is None:
            print(f"note: {package} is not installed; install the bench extra: pip install -e '.[bench]'")
            continue

        def factory(source: SourceFile, plugin: Any = plugin) -> Any:
            available = {
                "tree": source.tree,
                "filename": source.path,
                "lines": source.lines,
                "options": options,
                "max_line_length": options.max_line_length,
                "max_doc_length": options.max_doc_length,
            }
            return plugin.obj(**{name: available[name] for name in plugin.parameters})

        factories[PER_FILE_CHECKERS[entry]] = factory
    return factories


def time_per_file(files: Sequence[SourceFile], factories: dict[str, Callable[[SourceFile], Any]],
                  repeats: int) -> list[Timing]:
    names = list(factories)
    timings = {name: Timing(name, [[] for _ in files]) for name in names}
    clock = time.process_time_ns
    for repeat in range(repeats):
        for index, source in enumerate(files):
            shift = (repeat + index) % len(names)
            for name in names[shift:] + names[:shift]:
                factory = factories[name]
                started = clock()
                found = sum(1 for _ in factory(source).run())
                timings[name].per_file_ns[index].append(clock() - started)
                if repeat == 0:
                    timings[name].findings += found
        gc.collect()
    return [timings[name] for name in names]


def report_per_file(timings: Sequence[Timing]) -> None:
    print(f"{'checker':<22}{'total ms':>10}{'mean us/file':>14}{'median us/file':>16}{'findings':>10}")
    for timing in timings:
        best = timing.best_us()
        print(f"{timing.name:<22}{sum(best) / 1000:>10.1f}{statistics.fmean(best):>14.0f}"
              f"{statistics.median(best):>16.0f}{timing.findings:>10}")
    by_name = {t.name: t for t in timings}
    pack = by_name.get("flake8-hermetic")
    if pack is None:
        return
    for peer in timings:
        if peer is pack:
            continue
        total_ratio = sum(pack.best_us()) / sum(peer.best_us())
        per_file = statistics.median(a / b for a, b in zip(pack.best_us(), peer.best_us()) if b > 0)
        print(f"flake8-hermetic / {peer.name}: {total_ratio:.2f} (total), {per_file:.2f} (median of per-file ratios)")


def children_cpu_seconds() -> float:
    times = os.times()  # the children's fields stay 0 on Windows: the figure falls back to wall time there
    return times.children_user + times.children_system


def flake8_argv(packages: Sequence[str], arguments: Sequence[str]) -> list[str]:
    """A flake8 child limited to ``packages``, quiet about its findings."""
    return [sys.executable, "-c", FLAKE8_WITH_PLUGINS, ",".join(packages), "--isolated", "--exit-zero", *arguments]


def flake8_run_seconds(packages: Sequence[str], corpus: str, extra: Sequence[str], jobs: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one flake8 run over ``corpus``."""
    argv = flake8_argv(packages, [f"--jobs={jobs}", *extra, corpus])
    cpu_before, started = children_cpu_seconds(), time.perf_counter()
    subprocess.run(argv, cwd=corpus, stdout=subprocess.DEVNULL, check=True, timeout=3600)
    wall = time.perf_counter() - started
    return (children_cpu_seconds() - cpu_before) or wall, wall


def byte_compile_pack() -> None:
    """Write the pack's ``.pyc`` files, as ``pip install`` does: an editable
    install under ``PYTHONDONTWRITEBYTECODE`` would otherwise compile the
    pack from source in every run, which the installed peers never pay."""
    import compileall

    import flake8_hermetic

    compileall.compile_dir(os.path.dirname(flake8_hermetic.__file__), quiet=1)


def report_flake8_runs(corpus: str, repeats: int, jobs: int) -> None:
    byte_compile_pack()
    seconds: dict[str, list[tuple[float, float]]] = {name: [] for name in WHOLE_RUNS}
    for _ in range(repeats):
        for name, (packages, extra) in WHOLE_RUNS.items():
            seconds[name].append(flake8_run_seconds(packages, corpus, extra, jobs))
    alone = seconds[ALONE]
    base = min(cpu for cpu, _ in alone)
    print(f"whole flake8 run, --jobs={jobs}, least CPU time of {repeats}:")
    for name, samples in seconds.items():
        cpu = min(cpu for cpu, _ in samples)
        wall = min(wall for _, wall in samples)
        # the spread: each round's run against the same round's flake8 alone
        rounds = [(run / plain - 1) * 100 for (run, _), (plain, _) in zip(samples, alone)]
        print(f"  {name:<42}{cpu:>8.2f} s CPU  {(cpu / base - 1) * 100:+6.1f}% over flake8 alone"
              f"  (per round {min(rounds):+.1f}% .. {max(rounds):+.1f}%; wall {wall:.2f} s)")


def instructions_of_run(packages: Sequence[str], corpus: str, paths: Sequence[str]) -> int:
    """Instructions one flake8 run over ``paths`` executes, counted by
    valgrind (cachegrind, no cache simulation): the same on a busy machine
    as on an idle one."""
    argv = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={os.devnull}",
            *flake8_argv(packages, ["--jobs=1", *paths])]
    result = subprocess.run(argv, cwd=corpus, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, check=True, timeout=7200)
    for line in result.stderr.splitlines():
        if "I" in line and "refs:" in line:
            return int(line.rpartition("refs:")[2].replace(",", "").strip())
    raise RuntimeError(f"no instruction count in valgrind's output: {result.stderr[-300:]}")


def report_instructions(corpus: str, files: Sequence[SourceFile], every: int) -> None:
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed; skipped")
        return
    byte_compile_pack()
    sample = [os.path.relpath(source.path, corpus) for source in files[::every]]
    lines = sum(len(source.lines) for source in files[::every])
    # the set-ups that select every code: "not selected" costs the same as flake8 alone
    configurations = {name: packages for name, (packages, extra) in WHOLE_RUNS.items() if not extra}
    print(f"instructions of a whole flake8 run (valgrind), every {every}th file: {len(sample)} files, {lines} lines:")
    counts = {name: instructions_of_run(packages, corpus, sample) for name, packages in configurations.items()}
    base = counts[ALONE]
    for name, count in counts.items():
        over = f"{(count / base - 1) * 100:+6.1f}% over flake8 alone" if count != base else ""
        print(f"  {name:<42}{count / 1e9:>8.2f} G  {over}")


def profile_pack(files: Sequence[SourceFile], factories: dict[str, Callable[[SourceFile], Any]], top: int) -> None:
    import cProfile
    import pstats

    factory = factories["flake8-hermetic"]
    profiler = cProfile.Profile()
    profiler.enable()
    for source in files:
        for _ in factory(source).run():
            pass
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", help="directory of test files (default: the CPython test suite)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds of the per-file timing (default 5)")
    parser.add_argument("--flake8-repeats", type=int, default=3, help="runs of each whole-flake8 set-up (default 3)")
    parser.add_argument("--jobs", type=int, default=1, help="flake8 --jobs for the whole runs (default 1)")
    parser.add_argument("--no-flake8", action="store_true", help="skip the whole-flake8 runs")
    parser.add_argument("--profile", type=int, metavar="N", help="cProfile the pack over the corpus; print the top N")
    parser.add_argument("--instructions", type=int, metavar="EVERY",
                        help="also count the instructions of whole flake8 runs with valgrind, over every EVERYth file")
    args = parser.parse_args(argv)

    corpus = os.path.abspath(args.corpus or default_corpus())
    if not os.path.isdir(corpus):
        print(f"bench_rules: {corpus}: not a directory", file=sys.stderr)
        return 2
    files, skipped = load_corpus(corpus)
    if not files:
        print(f"bench_rules: {corpus}: no parseable .py files", file=sys.stderr)
        return 2
    line_count = sum(len(f.lines) for f in files)
    print(f"python {sys.version.split()[0]} on {sys.platform}, {os.cpu_count()} CPUs")
    print(f"corpus: {corpus}: {len(files)} files, {line_count} lines ({skipped} files that do not parse skipped)")

    factories = flake8_checkers(["--isolated"])
    if args.profile:
        profile_pack(files, factories, args.profile)
        return 0
    print(f"per file, in process, fastest of {args.repeats} round-robin repeats:")
    report_per_file(time_per_file(files, factories, args.repeats))
    if not args.no_flake8:
        report_flake8_runs(corpus, args.flake8_repeats, args.jobs)
    if args.instructions:
        report_instructions(corpus, files, args.instructions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
