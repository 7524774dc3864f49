"""Recall on real fixes: does ``flake8-hermetic check`` find hazards that tuning-half projects fixed in their history?

``benchmarks/fixes.json`` lists fixes of hazards in test code found in the
git histories of suites of the tuning half (``corpus_split.json``): the
repository, the fix commit and its parent, the test file, the hazard's line
in the parent (and its text), the kind of hazard and the HRM code that
should find it (``null`` where no rule covers the kind: such a fix counts as
missed). For each fix, the parent's top directory of that file (``tests``,
or the package holding its tests) and the root's config files (pytest's
and the packaging ones) are extracted with ``git archive`` into a temp
project; ``flake8-hermetic check --no-baseline --format json`` runs on the
file from that root, with an empty flake8 config (the project's own flake8
``select``/``exclude`` do not apply), once with the default selection and
once with ``--select=HRM``. A fix is found when a finding of its code lies
on the hazard's line or on an earlier line of the same statement.

    python benchmarks/corpus_fixes.py [--fixes benchmarks/fixes.json] [--mirrors /work/.mirror]
                                      [--flake8-hermetic PATH] [--out results.json]

The git directories come from ``/work/.mirror/OWNER+NAME/repo`` (bare
mirrors of the public repositories).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT_FILES = ("setup.cfg", "tox.ini", "pyproject.toml", "pytest.ini", "conftest.py")
FIELDS = ("repo", "commit", "parent", "file", "line", "text", "kind", "code")


class FixError(Exception):
    pass


def read_fixes(path: Path) -> list[dict[str, Any]]:
    try:
        fixes = json.loads(path.read_text())
        for number, fix in enumerate(fixes, 1):
            missing = [key for key in FIELDS if key not in fix]
            if missing:
                raise FixError(f"{path}: fix {number}: missing {', '.join(missing)}")
    except (OSError, ValueError, TypeError) as exc:
        raise FixError(f"{path}: {type(exc).__name__}: {exc}") from exc
    return fixes


def git(gitdir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True, check=False, timeout=300)


def extract(gitdir: Path, fix: dict[str, Any], into: Path) -> Path:
    """The parent's test tree and root config files under ``into``; the hazard's file, checked to hold its text."""
    listed = git(gitdir, "ls-tree", "--name-only", fix["parent"]).stdout.decode().split()
    top = fix["file"].split("/")[0]
    paths = [top, *(name for name in ROOT_FILES if name in listed and name != top)]
    done = git(gitdir, "archive", "--format=tar", fix["parent"], "--", *paths)
    if done.returncode:
        raise FixError(f"git archive {fix['parent'][:10]}: {done.stderr.decode().strip()[-200:]}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(into, filter="data")
    target = into / fix["file"]
    lines = target.read_text(errors="replace").splitlines()
    if len(lines) < fix["line"] or fix["text"] not in lines[fix["line"] - 1]:
        raise FixError(f"{fix['file']}:{fix['line']} in {fix['parent'][:10]} does not hold {fix['text']!r}")
    return target


def statement_start(source: str, line: int) -> int:
    """The first line of the innermost statement that spans ``line`` (``line`` itself if the file does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return line
    spans = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)]
    start = max(spans, default=line)  # the innermost: a compound statement starts before its body
    return start


def check(tool: str, root: Path, target: Path, select: list[str], config: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out.json"
        done = subprocess.run([tool, "check", "--no-baseline", "--config", str(config), "--format", "json",
                               "--exit-zero", "-o", str(out), *select, str(target.relative_to(root))],
                              cwd=root, capture_output=True, text=True, check=False, timeout=300)
        try:
            return json.loads(out.read_text())
        except (OSError, ValueError) as exc:
            raise FixError(f"check gave no JSON (exit {done.returncode}, {exc}): {done.stderr.strip()[-200:]}") \
                from exc


def judge(fix: dict[str, Any], findings: list[dict[str, Any]], start: int) -> tuple[bool, list[str]]:
    """(found, the codes reported on the hazard's statement)."""
    here = sorted({f["code"] for f in findings if start <= f["line"] <= fix["line"]})
    return fix["code"] in here, here


def one(fix: dict[str, Any], args: argparse.Namespace, config: Path) -> dict[str, Any]:
    gitdir = args.mirrors / fix["repo"].replace("/", "+") / "repo"
    result = {key: fix[key] for key in ("repo", "commit", "file", "line", "kind", "code")}
    if not gitdir.is_dir():
        return {**result, "error": f"no git history at {gitdir}"}
    with tempfile.TemporaryDirectory(prefix="corpus-fixes-") as scratch:
        root = Path(scratch)
        try:
            target = extract(gitdir, fix, root)
            start = statement_start(target.read_text(errors="replace"), fix["line"])
            default = check(args.tool, root, target, [], config)
            every = check(args.tool, root, target, ["--select=HRM"], config)
        except (FixError, OSError, subprocess.TimeoutExpired, tarfile.TarError) as exc:
            return {**result, "error": str(exc)}
    result["default"], result["default_codes"] = judge(fix, default, start)
    result["all"], result["all_codes"] = judge(fix, every, start)
    return result


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [r for r in results if "error" not in r]
    ruled = [r for r in judged if r["code"]]
    return {"fixes": len(results), "judged": len(judged), "with_rule": len(ruled),
            "default": sum(r["default"] for r in judged), "all": sum(r["all"] for r in judged)}


def report(results: list[dict[str, Any]]) -> str:
    head = ["repo", "fix", "file:line", "kind", "code", "default", "all rules", "codes on the line (all rules)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        if "error" in r:
            cells = [r["repo"], r["commit"][:10], f"{r['file']}:{r['line']}", r["kind"], r["code"] or "-",
                     "**error**", r["error"][:120], ""]
        else:
            cells = [r["repo"], r["commit"][:10], f"{r['file']}:{r['line']}", r["kind"], r["code"] or "(none)",
                     "found" if r["default"] else "-", "found" if r["all"] else "-", ", ".join(r["all_codes"])]
        lines.append("| " + " | ".join(cells) + " |")
    s = summary(results)
    judged = s["judged"] or 1
    lines += ["", f"{s['fixes']} fixes, {s['judged']} judged ({s['with_rule']} of a kind some rule covers): "
              f"default set found {s['default']} ({s['default'] / judged:.0%}), "
              f"all rules found {s['all']} ({s['all'] / judged:.0%})"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/corpus_fixes.py")
    parser.add_argument("--fixes", type=Path, default=HERE / "fixes.json")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"),
                        help="directory of git mirrors, OWNER+NAME/repo each")
    parser.add_argument("--flake8-hermetic", dest="tool", default=str(Path(sys.executable).parent / "flake8-hermetic"))
    parser.add_argument("--out", type=Path, default=None, help="write the per-fix results here as JSON")
    args = parser.parse_args(argv)
    try:
        fixes = read_fixes(args.fixes)
    except FixError as exc:
        print(f"corpus_fixes: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "empty.cfg"
        config.write_text("[flake8]\n")
        results = [one(fix, args, config) for fix in fixes]
    print(report(results))
    if args.out:
        partial = args.out.with_name(args.out.name + ".tmp")
        partial.write_text(json.dumps({"summary": summary(results), "fixes": results}, indent=1) + "\n")
        partial.replace(args.out)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
