"""The output formats of ``flake8-hermetic check``: flake8's default lines
(with flake8's colours, ``--show-source`` and ``--statistics``), flake8's
``pylint`` lines, GitHub Actions workflow commands, SARIF 2.1.0, and a JSON array.

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

from flake8.formatting.default import COLORS, COLORS_OFF, Default, Pylint

from flake8_hermetic import __version__
from flake8_hermetic.collect import Found
from flake8_hermetic.testfiles import to_posix

FORMATS = ("default", "pylint", "github", "sarif", "json")
#: ruff's name for flake8's default lines (``--output-format concise``)
ALIASES = {"concise": "default"}
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
    #: the baselined findings flake8 would show (select, per-file-ignores, noqa); SARIF lists them as suppressed
    accepted: list[Found] = field(default_factory=list)
    #: a stale report -> (the baseline file as shown, the entry's line in it): annotated there, not in the test
    stale_at: dict[Found, tuple[str, int]] = field(default_factory=dict)
    #: the baseline file as shown (SARIF's suppression justification names it)
    baseline: str = ""
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


def excluded_line(excluded: Sequence[str]) -> str:
    """The one stderr line for test files flake8's ``exclude`` left out (none: empty)."""
    if not excluded:
        return ""
    modules = [path for path in excluded if os.path.basename(path) != "conftest.py"]
    example = to_posix((modules or list(excluded))[0])
    return f"flake8-hermetic: {test_files(len(excluded))} excluded by exclude (e.g. {example})"


def default(report: Report, *, color: bool = False, show_source: bool = False, statistics: bool = False,
            pylint: bool = False, summary: bool = True) -> str:
    """flake8's own line format (and colours, and ``--show-source``'s caret
    line), or its ``pylint`` format (``path:line: [CODE] message``, no
    colour), then ``--statistics``, then the summary (unless ``summary`` is
    false: ``--quiet``)."""
    lines = []
    line_format = Pylint.error_format if pylint else Default.error_format
    colors = COLORS if color and not pylint else COLORS_OFF
    for found in report.findings():
        lines.append(line_format % {
            "code": found.code, "text": found.message, "path": found.filename, "row": found.line,
            "col": found.col, **colors,
        })
        if show_source and found.physical_line is not None:
            lines.append(source_lines(found))
    if statistics:
        lines.extend(statistics_lines(report.findings()))
    if summary:
        lines.append(report.summary())
    return "".join(line + "\n" for line in lines)


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


def _github_line(report: Report, found: Found) -> str:
    title = f"title={_escape_property(found.code)}::{_escape_data(found.message)}"
    if found in report.stale_at:
        # paid debt is a warning on the baseline's own line: that line is what to delete
        baseline, line = report.stale_at[found]
        return f"::warning file={_escape_property(to_posix(baseline))},line={max(line, 1)},{title}"
    command = "warning" if found in report.stale else "error"
    return f"::{command} file={_escape_property(to_posix(found.filename))},line={found.line},col={found.col},{title}"


def github(report: Report, summary: bool = True) -> str:
    """GitHub Actions workflow commands (annotations on the diff): ``::error``
    for a new finding, ``::warning`` on the baseline's line for a stale entry."""
    lines = [_github_line(report, f) for f in report.findings()]
    return "".join(line + "\n" for line in [*lines, *([report.summary()] if summary else [])])


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


def _baseline_artifact(baseline: str, root: str) -> dict[str, object]:
    absolute = os.path.abspath(baseline)
    try:
        relative = to_posix(os.path.relpath(absolute, root))
    except ValueError:  # another drive on Windows
        relative = "../"
    if relative.startswith("../"):
        return {"uri": Path(absolute).as_uri()}
    return {"uri": relative, "uriBaseId": "%SRCROOT%"}


def _sarif_result(report: Report, found: Found, root: str, index: Mapping[str, int]) -> dict[str, object]:
    level, artifact = "error", _artifact(found)
    region = {"startLine": max(found.line, 1), "startColumn": max(found.col, 1)}
    if found in report.stale_at:
        baseline, line = report.stale_at[found]
        level, artifact, region = "warning", _baseline_artifact(baseline, root), {"startLine": max(line, 1)}
    elif found in report.stale:
        level = "warning"
    result: dict[str, object] = {
        "ruleId": found.code,
        "level": level,
        "message": {"text": found.message},
        "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
    }
    if found.code in index:
        result["ruleIndex"] = index[found.code]
    return result


def sarif(report: Report, rules: Sequence[RuleHelp], root: str) -> str:
    """A SARIF 2.1.0 log: one run, a rule entry per code, a result per finding.

    Paths are relative to ``root`` (the project root, which baseline paths
    are relative to too), declared as ``%SRCROOT%``. A stale entry is a
    warning on its line of the baseline file; the findings the baseline
    accepts follow the reported ones, each with an ``external`` suppression
    naming the baseline.
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
    results = [_sarif_result(report, found, root, index) for found in report.findings()]
    # the debt the baseline accepts: listed as suppressed, so code scanning shows it without failing on it
    justification = f"in the baseline {to_posix(report.baseline)}" if report.baseline else "in the baseline"
    for found in sorted(report.accepted, key=lambda f: (f.filename, f.line, f.col, f.code)):
        result = _sarif_result(report, found, root, index)
        result["suppressions"] = [{"kind": "external", "justification": justification}]
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
