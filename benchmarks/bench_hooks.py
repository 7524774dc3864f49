"""What the pre-commit hooks cost on a commit, in a project of real size.

Builds a throw-away git repository from a corpus of test files (by default
the CPython test suite that ships with the interpreter), adopts the pack
there (`baseline regenerate`), and installs this checkout's two hooks as
``.pre-commit-hooks.yaml`` declares them (same ``entry``, ``files``,
``types``, ``always_run``, ``pass_filenames``; run as ``language: system``
from this interpreter's environment, so nothing is downloaded). Then it
times ``pre-commit run`` on three kinds of staged change, each the median
of ``--rounds`` runs:

- ``docs``: a documentation-only change (``README.md``);
- ``test``: one test file edited;
- ``baseline``: the baseline file edited (a comment added).

    python benchmarks/bench_hooks.py [CORPUS] [--rounds 3] [--files 300]

Needs git and pre-commit (the ``test`` extra installs pre-commit).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
KEYS = ("id", "name", "entry", "files", "types", "always_run", "pass_filenames", "require_serial")


def default_corpus() -> Path:
    import test  # the CPython test suite, where the interpreter ships it

    return Path(test.__file__).parent


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    bindir = os.path.dirname(sys.executable)
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
               PRE_COMMIT_HOME=str(home / "pre-commit"), PATH=bindir + os.pathsep + env.get("PATH", ""))
    return env


def run(args: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    if check and result.returncode != 0:
        raise SystemExit(f"bench_hooks: {' '.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


def hooks_config() -> str:
    manifest = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hooks = [{**{k: hook[k] for k in KEYS if k in hook}, "language": "system"} for hook in manifest]
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}, sort_keys=False)


def build(project: Path, corpus: Path, count: int, env: dict[str, str]) -> list[Path]:
    tests = project / "tests"
    tests.mkdir(parents=True)
    chosen = sorted(corpus.glob("test_*.py"))[:count]
    for source in chosen:
        shutil.copyfile(source, tests / source.name)
    (project / "README.md").write_text("# A project\n", encoding="utf-8")
    (project / "setup.cfg").write_text("[flake8]\nextend-select = HRM1,HRM2\n", encoding="utf-8")
    (project / ".pre-commit-config.yaml").write_text(hooks_config(), encoding="utf-8")
    run([sys.executable, "-m", "flake8_hermetic", "baseline", "regenerate"], project, env)
    run(["git", "init", "-q"], project, env)
    run(["git", "config", "user.email", "bench@example.invalid"], project, env)
    run(["git", "config", "user.name", "bench"], project, env)
    run(["git", "add", "-A"], project, env)
    run(["git", "commit", "-q", "-m", "adopt", "--no-verify"], project, env)
    return sorted(tests.glob("*.py"))


def timed(project: Path, env: dict[str, str], path: Path, addition: str) -> tuple[float, str]:
    original = path.read_bytes()
    path.write_bytes(original + addition.encode())
    run(["git", "add", str(path)], project, env)
    started = time.perf_counter()
    result = run(["pre-commit", "run"], project, env, check=False)
    elapsed = time.perf_counter() - started
    path.write_bytes(original)
    run(["git", "add", str(path)], project, env)
    ran = [line for line in result.stdout.splitlines() if "flake8-hermetic" in line]
    return elapsed, "; ".join(" ".join(line.split()) for line in ran)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_hooks.py")
    parser.add_argument("corpus", nargs="?", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=300, help="test files copied from the corpus")
    args = parser.parse_args(argv)
    corpus = args.corpus or default_corpus()
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as workdir:
        home, project = Path(workdir) / "home", Path(workdir) / "project"
        home.mkdir()
        env = environment(home)
        files = build(project, corpus, args.files, env)
        run(["pre-commit", "run", "--all-files"], project, env, check=False)  # warm: pre-commit's own set-up
        changes = {
            "docs": (project / "README.md", "More words.\n"),
            "test": (files[len(files) // 2], "\n\ndef test_added():\n    assert True\n"),
            "baseline": (project / "hermetic-baseline.txt", "# a note\n"),
        }
        print(f"{len(files)} test files from {corpus}; median of {args.rounds} `pre-commit run` per change")
        for name, (path, addition) in changes.items():
            samples = [timed(project, env, path, addition) for _ in range(args.rounds)]
            wall = statistics.median(s for s, _ in samples)
            print(f"{name:<9} {wall:6.2f} s   {samples[-1][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
