"""The direct path against flake8's own file checker, on whole suites.

For each corpus, ``flake8-hermetic check`` runs twice with every rule on
(``extend-select = HRM``): once on the direct path and once with the hidden
``--engine flake8``. The two outputs must be the same bytes; the script
prints, per corpus, the files, the findings, the lines that carry a
``noqa`` and whether the outputs agree, and exits 1 on any difference
(the first differing lines are shown).

    python benchmarks/check_equivalence.py CORPUS [CORPUS ...] [--jobs N]

tests/test_direct.py holds the fixtures, the examples and the edge cases
to the same standard inside the suite; this is for corpora too large for it.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

NOQA = re.compile(r"#\s*noqa", re.IGNORECASE)


def run(engine: str, corpus: Path, config: str, jobs: str, cwd: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "flake8_hermetic", "check", "--exit-zero", "--config", config, "-j", jobs,
         "--engine", engine, str(corpus)],
        cwd=cwd, capture_output=True, text=True, check=False, timeout=3600,
    )
    if result.returncode != 0:
        raise SystemExit(f"{corpus}: {engine} exited {result.returncode}: {result.stderr.strip()[-300:]}")
    return result.stdout


def noqa_lines(corpus: Path) -> int:
    count = 0
    for path in corpus.rglob("*.py"):
        try:
            count += len(NOQA.findall(path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/check_equivalence.py")
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--jobs", default="2")
    args = parser.parse_args(argv)
    differ = 0
    with tempfile.TemporaryDirectory(prefix="equivalence-") as workdir:
        config = os.path.join(workdir, "all.cfg")
        Path(config).write_text("[flake8]\nextend-select = HRM\n", encoding="utf-8")
        print(f"{'corpus':<40} {'files':>6} {'noqa':>6} {'findings':>9}  same")
        for corpus in args.corpora:
            direct = run("direct", corpus.resolve(), config, args.jobs, workdir)
            flake8 = run("flake8", corpus.resolve(), config, args.jobs, workdir)
            same = direct == flake8
            files = sum(1 for _ in corpus.rglob("*.py"))
            findings = direct.count("\n") - 1  # the summary line
            print(f"{corpus.name:<40} {files:>6} {noqa_lines(corpus):>6} {findings:>9}  {'yes' if same else 'NO'}")
            if not same:
                differ += 1
                diff = difflib.unified_diff(flake8.splitlines(), direct.splitlines(), "flake8", "direct", lineterm="")
                print("\n".join(list(diff)[:20]))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
