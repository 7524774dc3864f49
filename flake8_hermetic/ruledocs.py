"""Rule documentation, generated from the rule classes.

Each rule's class docstring is its page (ruff's shape: What it does, Why is
this bad?, Example, Use instead, Options). ``docs/rules/HRMnnn.md``, the
README's rule table, ``flake8-hermetic rules`` / ``explain`` and the SARIF
help text are all rendered from here, so they cannot drift apart. The
runtime guard's ``HRM6xx`` codes bring their pages from
:mod:`flake8_hermetic.guard.codes`.

A rule's "What it leaves alone" section is generated from the principles it
names in ``Rule.principles`` (:mod:`flake8_hermetic.principles`), each its
title and summary, linked to ``docs/principles.md``, which lists every
principle and the rules that apply it. Its "Known problems" section (what
the rule cannot see) is written in its docstring, and required.

    python -m flake8_hermetic.ruledocs          # rewrite docs/rules, docs/principles.md and the README table
    python -m flake8_hermetic.ruledocs --check  # exit 1 if one is out of date, a rule names an unknown
                                                # principle, a principle is used by no rule, or a rule
                                                # page has no "Known problems"
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from flake8_hermetic.catalog import all_rules, runtime_codes
from flake8_hermetic.principles import PRINCIPLES, Principle
from flake8_hermetic.rule import Rule

TABLE_START = "<!-- rules-table:start -->"
TABLE_END = "<!-- rules-table:end -->"
KNOWN_PROBLEMS = "## Known problems"
LEAVES_ALONE = "## What it leaves alone"
EVIDENCE_HEADING = "## Evidence"
PRINCIPLES_PAGE = "principles.md"
STALE_DOC = """\
# HRM900: stale baseline entry

## What it does
Reports a baseline entry for the linted file that no longer matches any
violation, at line 1 of the file, naming where the entry is written (the
baseline file, relative to the project root, and the line) and what it says.

## Why is this bad?
The baseline is a ratchet: it may only shrink. An entry whose violation was
fixed would silently accept the same hazard if it came back, so the fix is
not finished until the line is deleted.

## Example
```text
tests/test_io.py:1:1: HRM900 stale baseline entry at hermetic-baseline.txt:12: tests/test_io.py::test_read HRM201
time.sleep(1): the debt was paid; delete the line (flake8-hermetic baseline prune)
```

## Use instead
Delete the line, or run `flake8-hermetic baseline prune` (the
`flake8-hermetic-baseline` pre-commit hook runs it for you).

## Options
`--hermetic-baseline`, `--hermetic-no-baseline`.
"""


def leaves_alone(keys: Sequence[str], principles: Mapping[str, Principle] | None = None) -> str:
    """The generated "What it leaves alone" section of a rule applying the
    principles ``keys`` ("" for none); a key no principle has is left out
    here and reported by :func:`problems`."""
    known = PRINCIPLES if principles is None else principles
    items = [
        f"- **[{known[key].title}](../{PRINCIPLES_PAGE}#{key})**: {known[key].summary}" for key in keys if key in known
    ]
    if not items:
        return ""
    return (
        f"{LEAVES_ALONE}\nGenerated from the principles this rule applies (every principle, and the"
        f" rules applying it: [principles.md](../{PRINCIPLES_PAGE})):\n\n" + "\n".join(items) + "\n\n"
    )


def _figures(figures: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``figures``, or the generated ones of flake8_hermetic/evidence.py (imported only when a page is written)."""
    if figures is not None:
        return figures
    from flake8_hermetic.evidence import EVIDENCE

    return EVIDENCE


def evidence(code: str, default_on: bool, figures: Mapping[str, Any] | None = None, narrowed: str = "") -> str:
    """The generated "Evidence" section: the rule's figures on both halves of the corpus (issue 26)."""
    figures = _figures(figures)
    entry = figures.get("rules", {}).get(code)
    if entry is None:
        return ""
    lines = [f"{EVIDENCE_HEADING}\nOn the corpus of [precision.md](../precision.md) (26 real suites, split in halves"
             f" before reading; measured at `{figures['commit']}`):\n"]
    if entry["runtime"]:
        lines.append("| half | findings | reached by `prove` | leaks | leaks on failure | no leak |")
        lines.append("|---|---|---|---|---|---|")
        for half in ("tuning", "held-out", "later"):
            row = entry.get(half)
            if row is None:
                continue
            label = "later held-out sets" if half == "later" else half
            lines.append(f"| {label} | {row['findings']} | {row['reached']} | {row['leaks']} |"
                         f" {row['leaks-on-failure']} | {row['no-leak']} |")
    else:
        lines.append(f"Findings: {entry['tuning']['findings']} on the tuning half,"
                     f" {entry['held-out']['findings']} held out (no runtime check: read by hand).")
    read = entry.get("read")
    if read:
        lines.append(f"\nRead by hand on held-out code (the corpus's held-out half and the later held-out sets of"
                     f" precision.md): {read['read']} findings, {read['real']} real,"
                     f" {read['false']} false, {read['borderline']} borderline.")
    state = "on" if default_on else "off"
    verdict = {"thin": f"the evidence is thin ({entry['why']}), so the rule stays {state} by default",
               "on": f"on by default ({entry['why']})", "off": f"off by default ({entry['why']})"}
    lines.append(f"\n**{verdict[entry['decision']][0].upper()}{verdict[entry['decision']][1:]}.**\n")
    if narrowed:  # the figures are of the rule as it was: say what changed since, and that it is unmeasured
        lines.append(f"These figures are of the rule before it was narrowed: {narrowed} What the narrowed rule"
                     " found on later held-out sets is in precision.md; it stays off by default until a held-out"
                     " set reads it at the bar.\n")
    return "\n".join(lines) + "\n"


def page(rule: type[Rule]) -> str:
    """The markdown page of one rule."""
    state = "" if rule.default_on else " *(off by default: enable with `--extend-select=" + rule.code + "`)*"
    if rule.retired:
        state = " *(retired: it checks nothing, and a selection that names it is refused)*"
    body = rule.doc()
    heading = f"# {rule.code}: {rule.summary()}{state}"
    from flake8_hermetic.prove.matching import how_it_is_proven

    proven = how_it_is_proven(rule.code)
    return (
        f"{heading}\n\n## What it does\n{body}\n\n{leaves_alone(rule.principles)}"
        f"{evidence(rule.code, rule.default_on, narrowed=rule.narrowed)}"
        f"## Files\n{rule.judged_files()}\n\n"
        + (f"## How it is proven\n{proven}\n\n" if proven else "")
        + f"## Message\n`{rule.code} {rule.message}`\n"
    )


def users(rules: Mapping[str, type[Rule]]) -> dict[str, list[str]]:
    """Principle key -> the codes of the rules that name it, in code order."""
    found: dict[str, list[str]] = {}
    for code, rule in rules.items():
        for key in rule.principles:
            found.setdefault(key, []).append(code)
    return found


def principles_page(rules: Mapping[str, type[Rule]], principles: Mapping[str, Principle] | None = None) -> str:
    """``docs/principles.md``: every principle, and the rules that apply it."""
    known = PRINCIPLES if principles is None else principles
    used = users(rules)
    parts = [
        "# Principles\n\nThe general principles by which a rule lets code through. A rule names the ones"
        " it applies, and its page's \"What it leaves alone\" lists them; written once, in"
        " `flake8_hermetic/principles.py`, they hold for every rule that uses them. Generated by"
        " `python -m flake8_hermetic.ruledocs`.\n"
    ]
    for key, principle in sorted(known.items(), key=lambda item: item[1].title.lower()):
        codes = ", ".join(f"[{code}](rules/{code}.md)" for code in used.get(key, ())) or "no rule"
        parts.append(f'<a id="{key}"></a>\n\n## {principle.title}\n{principle.summary}\n\nApplied by: {codes}.\n')
    return "\n".join(parts)


def evidence_problems(rules: Mapping[str, type[Rule]], figures: Mapping[str, Any] | None = None) -> list[str]:
    """A rule with no figures in flake8_hermetic/evidence.py, or whose default is not the one its figures decided."""
    figures = _figures(figures)
    found = []
    for code, rule in rules.items():
        entry = figures.get("rules", {}).get(code)
        if entry is None:
            found.append(f"{code}: no figures in flake8_hermetic/evidence.py (run benchmarks/evidence.py)")
        elif entry["decision"] != "thin" and (entry["decision"] == "on") != rule.default_on:
            found.append(f"{code}: the held-out evidence says {entry['decision']} by default ({entry['why']}),"
                         f" but the rule is {'on' if rule.default_on else 'off'}")
    return found


def problems(rules: Mapping[str, type[Rule]], principles: Mapping[str, Principle] | None = None) -> list[str]:
    """What the pages cannot be right with, one line each: a rule naming a
    principle nobody defined, a principle no rule applies, a rule page
    without a "Known problems" section (what the rule cannot see)."""
    known = PRINCIPLES if principles is None else principles
    found: list[str] = []
    for code, rule in rules.items():
        found.extend(
            f"{code}: names the principle {key!r}, which flake8_hermetic/principles.py does not define"
            for key in rule.principles
            if key not in known
        )
        section = rule.doc().partition(f"\n{KNOWN_PROBLEMS}\n")[2].split("\n## ")[0].strip()
        if not section:
            found.append(f"{code}: its docstring has no {KNOWN_PROBLEMS!r} section saying what the rule cannot see")
    used = users(rules)
    found.extend(f"principle {key!r} is applied by no rule" for key in known if key not in used)
    return found


def pages() -> dict[str, str]:
    rendered = {code: page(rule) for code, rule in all_rules().items()}
    rendered.update({code: runtime.page() for code, runtime in runtime_codes().items()})
    rendered["HRM900"] = STALE_DOC
    return rendered


def table() -> str:
    rows = ["| code | what it flags | default |", "|---|---|---|"]
    for code, rule in all_rules().items():
        default = "retired" if rule.retired else "on" if rule.default_on else "off"
        summary = rule.summary().replace("|", "\\|")
        rows.append(f"| [{code}](docs/rules/{code}.md) | {summary} | {default} |")
    for code, runtime in runtime_codes().items():
        summary = runtime.summary.replace("|", "\\|")
        rows.append(f"| [{code}](docs/rules/{code}.md) | {summary} | guard |")
    rows.append("| [HRM900](docs/rules/HRM900.md) | a stale baseline entry: the debt was paid, delete the line | on |")
    return "\n".join(rows)


def _replace_table(readme: str) -> str:
    head, start, rest = readme.partition(TABLE_START)
    _, end, tail = rest.partition(TABLE_END)
    if not start or not end:
        raise SystemExit(f"README.md: missing {TABLE_START} / {TABLE_END} markers")
    return f"{head}{TABLE_START}\n{table()}\n{TABLE_END}{tail}"


def sync(root: Path, check: bool) -> list[str]:
    """Write (or, with ``check``, compare) the pages, the principles page and
    the README table; what is out of date. With ``check``, also the
    :func:`problems` of the rules' documentation."""
    outdated = []
    docs = root / "docs" / "rules"
    wanted = {docs / f"{code}.md": text for code, text in pages().items()}
    wanted[root / "docs" / PRINCIPLES_PAGE] = principles_page(all_rules())
    readme = root / "README.md"
    wanted[readme] = _replace_table(readme.read_text(encoding="utf-8"))
    for path, text in wanted.items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            outdated.append(str(path.relative_to(root)))
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                temporary = path.with_name(path.name + ".tmp")
                temporary.write_text(text, encoding="utf-8")
                os.replace(temporary, path)
    for extra in sorted(docs.glob("*.md")):
        if extra not in wanted:
            outdated.append(f"{extra.relative_to(root)} (documents no rule)")
    if check:
        outdated.extend(problems(all_rules()) + evidence_problems(all_rules()))
    return outdated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flake8_hermetic.ruledocs")
    parser.add_argument("--check", action="store_true", help="only report what is out of date")
    parser.add_argument("--root", default=".", help="the repository root")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not (root / "README.md").is_file():
        print(f"{root / 'README.md'}: not found; give the repository root with --root", file=sys.stderr)
        return 2
    outdated = sync(root, args.check)
    found = problems(all_rules()) + evidence_problems(all_rules())
    for path in outdated:
        if path not in found:
            print(f"{path}: out of date" if args.check else f"wrote {path}")
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found or (args.check and outdated) else 0


if __name__ == "__main__":
    sys.exit(main())
