"""The output formats of ``flake8-hermetic check``: flake8's default lines
(with flake8's colours, ``--show-source`` and ``--statistics``), GitHub
Actions workflow commands, SARIF 2.1.0, and a JSON array.

Rule help (SARIF's ``rules``) comes from the same pages as ``explain`` and
``docs/rules/``, so the three cannot drift apart.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from flake8.formatting.default import COLORS, COLORS_OFF, Default

from flake8_hermetic import __version__
from flake8_hermetic.collect import Found
from flake8_hermetic.testfiles import to_posix

FORMATS = ("default", "github", "sarif", "json")
HOME_PAGE = "https://github.com/flake8-hermetic/flake8-hermetic"
DOCS_PAGE = HOME_PAGE + "/blob/main/docs/rules/{code}.md"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FLAKE8_CODES = {
    "E902": ("the file could not be read or tokenized", "flake8 could not read or tokenize it: no rule ran on it."),
    "E999": ("the file could not be parsed", "The file is not valid Python for this interpreter: no rule ran on it."),
}


@dataclass(frozen=True)
class RuleHelp:
    code: str
    summary: str
    page: str  # markdown
    has_docs_page: bool = True


@dataclass
class Report:
    """What ``check`` found: reported findings, and how many the baseline accepted."""

    new: list[Found]
    stale: list[Found]
    baselined: int
    #: the baselined findings flake8 would show (select, per-file-ignores, noqa)
    accepted: list[Found] = field(default_factory=list)
    #: how many test files were linted (None: not counted, as for the runtime guard)
    files: int | None = None

    def findings(self) -> list[Found]:
        return sorted(self.new + self.stale, key=lambda f: (f.filename, f.line, f.col, f.code))

    def summary(self) -> str:
        counts = f"{len(self.new)} new, {self.baselined} baselined, {len(self.stale)} stale"
        return counts if self.files is None else f"{test_files(self.files)}, {counts}"


def test_files(count: int) -> str:
    """``1 test file``, ``27 test files``: what a run covered."""
    return f"{count} test file{'' if count == 1 else 's'}"


def default(report: Report, *, color: bool = False, show_source: bool = False, statistics: bool = False) -> str:
    """flake8's own line format (and colours, and ``--show-source``'s caret
    line), then ``--statistics``, then the summary."""
    lines = []
    for found in report.findings():
        lines.append(Default.error_format % {
            "code": found.code, "text": found.message, "path": found.filename, "row": found.line,
            "col": found.col, **(COLORS if color else COLORS_OFF),
        })
        if show_source and found.physical_line is not None:
            lines.append(source_lines(found))
    if statistics:
        lines.extend(statistics_lines(report.findings()))
    return "\n".join([*lines, report.summary()]) + "\n"


def source_lines(found: Found) -> str:
    """flake8's ``--show-source``: the line, and a caret under the column
    (the line's own tabs kept, so the caret lines up)."""
    line = found.physical_line or ""
    indent = "".join(c if c.isspace() else " " for c in line[: found.col - 1])
    return f"{line.rstrip(chr(10)).rstrip(chr(13))}\n{indent}^"


def statistics_lines(findings: Sequence[Found]) -> list[str]:
    """flake8's ``--statistics``: per code, ``COUNT CODE MESSAGE`` with the
    first finding's message, codes in order."""
    first: dict[str, Found] = {}
    counts: dict[str, int] = {}
    for found in sorted(findings, key=lambda f: (f.filename, f.line, f.col)):
        first.setdefault(found.code, found)
        counts[found.code] = counts.get(found.code, 0) + 1
    return [f"{counts[code]:<5} {code} {first[code].message}" for code in sorted(counts)]


def json_findings(report: Report) -> str:
    """One JSON array, an object per finding: new, baselined and stale.

    The schema is documented in docs/ci.md: ``path`` (from the project
    root, ``/``-separated, as in the baseline), ``line``, ``column`` (from
    1), ``code``, ``message``, ``node_id`` (the baseline's ``where``),
    ``status`` (``"new"``, ``"baselined"`` or ``"stale"``) and
    ``baselined`` (``status == "baselined"``).
    """
    rows = [(f, "new") for f in report.new] + [(f, "baselined") for f in report.accepted]
    rows += [(f, "stale") for f in report.stale]
    rows.sort(key=lambda row: (row[0].path, row[0].line, row[0].col, row[0].code, row[1]))
    objects = []
    for found, status in rows:
        path = to_posix(found.path)
        objects.append({
            "path": path,
            "line": found.line,
            "column": found.col,
            "code": found.code,
            "message": found.message,
            "node_id": f"{path}::{found.scope}" if found.scope else path,
            "status": status,
            "baselined": status == "baselined",
        })
    return json.dumps(objects, indent=2, ensure_ascii=False) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(report: Report) -> str:
    """GitHub Actions ``::error`` workflow commands (annotations on the diff)."""
    lines = [
        f"::error file={_escape_property(to_posix(f.filename))},line={f.line},col={f.col},"
        f"title={_escape_property(f.code)}::{_escape_data(f.message)}"
        for f in report.findings()
    ]
    return "\n".join([*lines, report.summary()]) + "\n"


def _summary_of(page: str, fallback: str) -> str:
    first = page.lstrip().splitlines()[0] if page.strip() else ""
    heading = re.match(r"#\s*HRM[0-9]{3}:\s*(.+)", first)
    if not heading:
        return fallback
    return re.sub(r"\s*\*\(off by default.*\)\*$", "", heading.group(1)).strip()


def rule_help(codes: Iterable[str], pages: Mapping[str, str], extra: Mapping[str, tuple[str, str]]) -> list[RuleHelp]:
    """Help for ``codes``: the rule pages, then ``extra`` (code -> (summary,
    markdown)) for the project's own rules, then flake8's E902/E999."""
    helps = []
    for code in sorted(set(codes)):
        if code in pages:
            helps.append(RuleHelp(code, _summary_of(pages[code], code), pages[code]))
        elif code in extra:
            summary, page = extra[code]
            helps.append(RuleHelp(code, summary, page, has_docs_page=False))
        elif code in FLAKE8_CODES:
            summary, text = FLAKE8_CODES[code]
            helps.append(RuleHelp(code, summary, text, has_docs_page=False))
        else:
            helps.append(RuleHelp(code, code, code, has_docs_page=False))
    return helps


def _artifact(found: Found) -> dict[str, object]:
    path = found.path
    if path.startswith("../") or os.path.isabs(path):
        return {"uri": Path(os.path.abspath(found.filename)).as_uri()}
    # a URI reference: a space, "#" or "?" in a name would read as a query or a fragment
    return {"uri": urllib.parse.quote(path.encode("utf-8", "surrogateescape"), safe="/"), "uriBaseId": "%SRCROOT%"}


def sarif(report: Report, rules: Sequence[RuleHelp], root: str) -> str:
    """A SARIF 2.1.0 log: one run, a rule entry per code, a result per finding.

    Paths are relative to ``root`` (the project root, which baseline paths
    are relative to too), declared as ``%SRCROOT%``.
    """
    index = {rule.code: position for position, rule in enumerate(rules)}
    driver_rules = []
    for rule in rules:
        entry: dict[str, object] = {
            "id": rule.code,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.summary},
            "help": {"text": rule.page, "markdown": rule.page},
            "defaultConfiguration": {"level": "error"},
        }
        if rule.has_docs_page:
            entry["helpUri"] = DOCS_PAGE.format(code=rule.code)
        driver_rules.append(entry)
    results = []
    for found in report.findings():
        result: dict[str, object] = {
            "ruleId": found.code,
            "level": "error",
            "message": {"text": found.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": _artifact(found),
                    "region": {"startLine": max(found.line, 1), "startColumn": max(found.col, 1)},
                },
            }],
        }
        if found.code in index:
            result["ruleIndex"] = index[found.code]
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "flake8-hermetic",
                "version": __version__,
                "informationUri": HOME_PAGE,
                "rules": driver_rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(root).as_uri().rstrip("/") + "/"}},
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
