"""Dump every finding of every rule (default-off ones included) over corpora.

A refactoring that must not change what the pack reports is checked by
dumping before and after and comparing the two files byte for byte::

    python benchmarks/dump_findings.py -o before.txt DIR [DIR ...]
    # ... change the code ...
    python benchmarks/dump_findings.py -o after.txt DIR [DIR ...]
    cmp before.txt after.txt

Each directory is linted by a real ``flake8`` run in a child process, from
the directory's parent (``python -m flake8`` puts the working directory on
``sys.path``), with every HRM rule selected, no baseline and no project
config (``--isolated``). Files are judged by their role, as pytest's own
configuration gives it (see docs/project-model.md), except in this
checkout's own ``tests/`` and ``examples/``: their rule fixtures and
examples are samples pytest never collects, linted for recall with the
``test-files`` globs of ``testfiles.DEFAULT_TEST_FILES``. A line of the
dump is ``PARENT/DIR/PATH:LINE:COL: CODE MESSAGE`` (``repo/DIR/...`` for
this checkout's own ``tests/`` and ``examples/``), sorted, so the dump does
not depend on the order jobs finish in. With no directory given, the
corpus is the CPython test suite that ships with the interpreter, the
project's own ``tests/`` and ``examples/``.

``--compare OLD`` exits 1 and prints the first differing lines when the new
dump differs from OLD.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMAT = "%(path)s:%(row)d:%(col)d: %(code)s %(text)s"


def default_corpora() -> list[Path]:
    return [Path(sysconfig.get_paths()["stdlib"]) / "test", ROOT / "tests", ROOT / "examples"]


def dump(directory: Path, jobs: str) -> list[str]:
    directory = directory.resolve()
    command = [
        sys.executable, "-m", "flake8", "--isolated", "--select=HRM", "--hermetic-no-baseline",
        f"--jobs={jobs}", f"--format={FORMAT}", directory.name,
    ]
    if directory.is_relative_to(ROOT):
        from flake8_hermetic.testfiles import DEFAULT_TEST_FILES

        command[4:4] = [f"--hermetic-test-files={','.join(DEFAULT_TEST_FILES)}"]
    done = subprocess.run(command, cwd=directory.parent, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1) or done.stderr.strip():
        sys.exit(f"{directory}: flake8 exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    # this checkout's own directories are "repo/...", whatever its folder is called
    prefix = "repo/" if directory.is_relative_to(ROOT) else directory.parent.name + "/"
    return [prefix + line for line in done.stdout.splitlines() if line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directories", nargs="*", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--compare", type=Path, help="an earlier dump to compare against")
    parser.add_argument("--jobs", default=str(os.cpu_count() or 1))
    args = parser.parse_args(argv)
    lines: list[str] = []
    for directory in args.directories or default_corpora():
        found = dump(directory, args.jobs)
        print(f"{directory}: {len(found)} findings", file=sys.stderr)
        lines.extend(found)
    lines.sort()
    text = "".join(line + "\n" for line in lines)
    temporary = args.output.with_name(args.output.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, args.output)
    print(f"{len(lines)} findings -> {args.output}", file=sys.stderr)
    if args.compare is None:
        return 0
    old = args.compare.read_text(encoding="utf-8").splitlines()
    if old == lines:
        print(f"identical to {args.compare}", file=sys.stderr)
        return 0
    gone = sorted(set(old) - set(lines))
    new = sorted(set(lines) - set(old))
    print(f"DIFFERENT from {args.compare}: {len(gone)} gone, {len(new)} new", file=sys.stderr)
    for line in gone[:20]:
        print(f"- {line}")
    for line in new[:20]:
        print(f"+ {line}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
