"""Rule documentation, generated from the rule classes.

Each rule's class docstring is its page (ruff's shape: What it does, Why is
this bad?, Example, Use instead, Options). ``docs/rules/HRMnnn.md``, the
README's rule table, ``flake8-hermetic rules`` / ``explain`` and the SARIF
help text are all rendered from here, so they cannot drift apart. The
runtime guard's ``HRM6xx`` codes bring their pages from
:mod:`flake8_hermetic.guard.codes`.

    python -m flake8_hermetic.ruledocs          # rewrite docs/rules and the README table
    python -m flake8_hermetic.ruledocs --check  # exit 1 if either is out of date
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from flake8_hermetic.catalog import all_rules, runtime_codes
from flake8_hermetic.rule import Rule

TABLE_START = "<!-- rules-table:start -->"
TABLE_END = "<!-- rules-table:end -->"
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


def page(rule: type[Rule]) -> str:
    """The markdown page of one rule."""
    state = "" if rule.default_on else " *(off by default: enable with `--extend-select=" + rule.code + "`)*"
    body = rule.doc()
    heading = f"# {rule.code}: {rule.summary()}{state}"
    from flake8_hermetic.prove.matching import how_it_is_proven

    proven = how_it_is_proven(rule.code)
    return (
        f"{heading}\n\n## What it does\n{body}\n\n## Files\n{rule.judged_files()}\n\n"
        + (f"## How it is proven\n{proven}\n\n" if proven else "")
        + f"## Message\n`{rule.code} {rule.message}`\n"
    )


def pages() -> dict[str, str]:
    rendered = {code: page(rule) for code, rule in all_rules().items()}
    rendered.update({code: runtime.page() for code, runtime in runtime_codes().items()})
    rendered["HRM900"] = STALE_DOC
    return rendered


def table() -> str:
    rows = ["| code | what it flags | default |", "|---|---|---|"]
    for code, rule in all_rules().items():
        default = "on" if rule.default_on else "off"
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
    """Write (or, with ``check``, compare) the pages and the README table."""
    outdated = []
    docs = root / "docs" / "rules"
    wanted = {docs / f"{code}.md": text for code, text in pages().items()}
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
    return outdated


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flake8_hermetic.ruledocs")
    parser.add_argument("--check", action="store_true", help="only report what is out of date")
    parser.add_argument("--root", default=".", help="the repository root")
    args = parser.parse_args(argv)
    outdated = sync(Path(args.root), args.check)
    for path in outdated:
        print(f"{path}: out of date" if args.check else f"wrote {path}")
    return 1 if (args.check and outdated) else 0


if __name__ == "__main__":
    sys.exit(main())
