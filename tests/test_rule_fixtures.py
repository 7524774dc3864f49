"""Every rule against its annotated fixture file, through real flake8.

A fixture ``tests/fixtures/rules/test_hrmNNN*.py`` marks each line the rule
must flag with a trailing marker comment; every other line (the idiomatic
fixes around them) must stay quiet for that code. A marker is one or more
codes, each optionally followed by the column and the message arguments::

    os.chdir(tmp_path)  # HRM105
    os.chdir(tmp_path)  # HRM105:5
    os.chdir(tmp_path)  # HRM105:5 name=os.chdir
    run(["make"])  # HRM106:5 name=subprocess.run why="runs make, which reads the directory's files"
    x = f(os.chdir(a))  # HRM105:9 HRM106

* ``HRMnnn`` alone: the line is flagged by that code (twice if written twice).
* ``:COL``: the column flake8 prints (1-based: the node's ``col_offset + 1``).
* ``field=value``: the message, the rule's ``message`` template, holds
  ``value`` where the template has ``{field}``; a value with spaces is a
  double-quoted JSON string. Fields left out match anything.

A marker is the whole rest of its line, from its ``#``: codes upper-case,
a column digits right after the colon, field names lower-case, a quoted
value closed, nothing after it (``# HRM105  # noqa`` is not a marker). A
comment that starts like one (``#`` then ``hrm`` in any case and three
digits) but is not a marker, or names a code that is no rule, fails the
fixture's test, naming its file and line, so that a typo never passes for
prose. Prose that starts so (``# HRM108's``) is listed in ``PROSE``.

A fixture file may carry options, on a comment line of its own (not
indented) in its first ten lines, as ``name=value`` pairs (a value with
commas or spaces quoted)::

    # hermetic-options: max-collection-bytes=4096 readonly-commands="make check,git status"

Such a file is linted in a flake8 run of its own, with
``--hermetic-<name>=<value>`` for each pair, in a directory of its own that
also holds the ``conftest.py`` files of its directory and the fixture
directories above it; every other fixture is linted in one flake8 run with
every rule selected. A ``hermetic-options`` comment anywhere else (indented,
after a statement, below line ten) fails the fixture's test.
"""

from __future__ import annotations

import json
import re
import shutil
import string
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from flake8_hermetic.catalog import all_rules
from tests.helpers import FIXTURES, flake8, write_tree

RULE_FIXTURES = FIXTURES / "rules"
RULES = all_rules()
CODES = sorted(code for code, rule in RULES.items() if not rule.retired)  # a retired rule checks nothing

_VALUE = r'(?:"(?:[^"\\]|\\.)*"|[^\s"]+)'
_CODE = r"HRM\d{3}(?::\d+)?"
_TOKEN = re.compile(rf"(?P<code>{_CODE})(?=\s|$)|(?P<key>[a-z_][a-z0-9_]*)=(?P<value>{_VALUE})(?=\s|$)")
MARKER = re.compile(rf"#\s*(?P<marker>{_CODE}(?:\s+(?:{_CODE}|[a-z_][a-z0-9_]*={_VALUE}))*)\s*$")
OPTIONS_LINE = re.compile(r"^#\s*hermetic-options:(?P<pairs>.*)$")
_PAIR = re.compile(rf"(?P<name>[a-z][a-z0-9-]*)=(?P<value>{_VALUE})(?=\s|$)")
OPTIONS_LINES_READ = 10  # an options line sits in the first lines of its file
OPTIONS_LIKE = re.compile(r"#\s*hermetic[-_]options", re.IGNORECASE)
MARKER_LIKE = re.compile(r"#\s*[Hh][Rr][Mm]\d{3}")

#: Comments that start like a marker but are prose, by file (relative to
#: ``tests/fixtures``) and line, with how the comment starts.
PROSE = {
    ("rules/test_hrm303.py", 26): "# HRM108's",
}


@dataclass
class Expected:
    """One finding a marker asks for."""

    code: str
    line: int
    col: int | None = None
    args: dict[str, str] = field(default_factory=dict)

    def matches(self, col: int, message: str) -> bool:
        if self.col is not None and col != self.col:
            return False
        return not self.args or message_pattern(RULES[self.code].message, self.args).fullmatch(message) is not None

    def describe(self) -> str:
        where = f"{self.line}:{self.col}" if self.col is not None else str(self.line)
        args = "".join(f" {key}={value!r}" for key, value in self.args.items())
        return f"{self.code} at {where}{args}"


@dataclass(frozen=True)
class Found:
    line: int
    col: int
    code: str
    message: str


def _unquote(value: str) -> str:
    return json.loads(value) if value.startswith('"') else value


def message_pattern(template: str, args: dict[str, str]) -> re.Pattern[str]:
    """The messages ``template`` can render with ``args`` in its fields (others: anything)."""
    fields = set()
    parts = []
    for literal, name, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is not None:
            fields.add(name)
            parts.append(re.escape(args[name]) if name in args else ".*?")
    unknown = set(args) - fields
    if unknown:
        raise AssertionError(f"marker names {sorted(unknown)}, not fields of {template!r}")
    return re.compile("".join(parts), re.DOTALL)


def parse_marker(text: str, line: int) -> list[Expected]:
    expected: list[Expected] = []
    for token in _TOKEN.finditer(text):
        if token.group("code"):
            code, _, col = token.group("code").partition(":")
            expected.append(Expected(code, line, int(col) if col else None))
        else:
            expected[-1].args[token.group("key")] = _unquote(token.group("value"))
    return expected


def markers(path: Path) -> list[Expected]:
    """Every finding the markers of ``path`` ask for, in line order."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = MARKER.search(line)
        if match:
            found.extend(parse_marker(match.group("marker"), number))
    return found


def malformed_marker(line: str) -> str | None:
    """What is wrong with the marker-like comments of ``line``, if anything:
    each must be a whole marker naming rules (see the module's docstring)."""
    for start in MARKER_LIKE.finditer(line):
        comment = line[start.start():]
        marker = MARKER.fullmatch(comment)
        if marker is None:
            return f"{comment!r} starts like a marker but is not one"
        unknown = sorted({e.code for e in parse_marker(marker.group("marker"), 0)} - set(RULES))
        if unknown:
            return f"{comment!r} names {unknown}, no rule"
    return None


def misplaced_options_line(line: str, number: int) -> bool:
    """An options comment that :func:`fixture_options` would not read."""
    if not OPTIONS_LIKE.search(line):
        return False
    return number > OPTIONS_LINES_READ or OPTIONS_LINE.match(line) is None


def fixture_problems(path: Path, root: Path = RULE_FIXTURES.parent) -> list[str]:
    """The malformed markers and misplaced options lines of ``path``, each as
    file:line (the file relative to ``root``)."""
    relative = path.relative_to(root).as_posix()
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        prose = PROSE.get((relative, number))
        wrong = malformed_marker(line)
        if wrong and not (prose and line[MARKER_LIKE.search(line).start():].startswith(prose)):
            problems.append(f"{relative}:{number}: {wrong} (prose? list it in PROSE)")
        if misplaced_options_line(line, number):
            problems.append(
                f"{relative}:{number}: an options line is read only as the first thing on one of "
                f"lines 1-{OPTIONS_LINES_READ}, written '# hermetic-options: name=value ...'"
            )
    return problems


def fixture_options(path: Path) -> list[str]:
    """The ``--hermetic-NAME=VALUE`` arguments of a fixture's options line."""
    arguments = []
    for line in path.read_text(encoding="utf-8").splitlines()[:OPTIONS_LINES_READ]:
        match = OPTIONS_LINE.match(line)
        if match:
            pairs = match.group("pairs")
            parsed = list(_PAIR.finditer(pairs))
            assert parsed and _PAIR.sub("", pairs).strip() == "", f"{path.name}: cannot read {line!r}"
            arguments.extend(f"--hermetic-{p.group('name')}={_unquote(p.group('value'))}" for p in parsed)
    return arguments


def fixture_files(code: str) -> list[Path]:
    return sorted(RULE_FIXTURES.rglob(f"test_{code.lower()}*.py"))


def parse_report(output: str) -> dict[str, list[Found]]:
    """flake8's default output -> the findings of each file, by its path."""
    report: dict[str, list[Found]] = {}
    for text in output.splitlines():
        parts = text.split(":", 3)
        if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit():
            code, _, message = parts[3].strip().partition(" ")
            report.setdefault(parts[0], []).append(Found(int(parts[1]), int(parts[2]), code, message))
    return report


def run_flake8(root: Path, extra: list[str], target: str) -> dict[str, list[Found]]:
    result = flake8(
        ["--isolated", f"--select={','.join(CODES)}", "--hermetic-no-baseline", *extra, target],
        cwd=root,
    )
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return parse_report(result.stdout)


def move_with_its_conftests(root: Path, relative: str, own: Path) -> None:
    """Move fixture ``root/relative`` to ``own/relative``, copying the
    ``conftest.py`` of its directory and of those above it (below ``root``):
    the rules read what their fixtures pin (HRM109, HRM115)."""
    (own / relative).parent.mkdir(parents=True)
    shutil.move(str(root / relative), own / relative)
    for directory in Path(relative).parents:
        if directory != Path(".") and (root / directory / "conftest.py").is_file():
            shutil.copy(root / directory / "conftest.py", own / directory / "conftest.py")


@pytest.fixture(scope="module")
def fixture_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Found]]:
    """Every fixture's findings, keyed by its path relative to ``tests/fixtures``."""
    root = tmp_path_factory.mktemp("fixtures")
    shutil.copytree(RULE_FIXTURES, root / "rules")
    with_options = {
        path.relative_to(RULE_FIXTURES.parent).as_posix(): fixture_options(path)
        for path in sorted(RULE_FIXTURES.rglob("*.py"))
    }
    with_options = {relative: options for relative, options in with_options.items() if options}
    for index, relative in enumerate(with_options):
        move_with_its_conftests(root, relative, root / f"options{index}")
    report = run_flake8(root, [], "rules")
    for index, (relative, options) in enumerate(with_options.items()):
        report.update(run_flake8(root / f"options{index}", options, relative))
    return report


def mismatches(code: str, report: dict[str, list[Found]]) -> list[str]:
    """What differs between what ``code`` flagged and what its fixtures mark."""
    problems = []
    for path in fixture_files(code):
        relative = path.relative_to(RULE_FIXTURES.parent).as_posix()
        expected = [e for e in markers(path) if e.code == code]
        found = [f for f in report.get(relative, []) if f.code == code]
        problems.extend(fixture_problems(path))
        if not expected:
            problems.append(f"{relative} marks no line with # {code}")
            continue
        found_lines = sorted(f.line for f in found)
        expected_lines = [e.line for e in expected]
        if found_lines != expected_lines:
            problems.append(f"{relative}: {code} flagged lines {found_lines}, expected {expected_lines}")
            continue
        # the most demanding markers first, each taking a finding of its line
        left = list(found)
        for wanted in sorted(expected, key=lambda e: (e.col is None, -len(e.args))):
            match = next((f for f in left if f.line == wanted.line and wanted.matches(f.col, f.message)), None)
            if match is None:
                here = [f"{f.col}: {f.message}" for f in found if f.line == wanted.line]
                problems.append(f"{relative}: expected {wanted.describe()}, found {here}")
            else:
                left.remove(match)
    return problems


@pytest.mark.parametrize("code", [pytest.param(code, id=code) for code in CODES])
def test_rule_matches_its_fixture(code: str, fixture_report: dict[str, list[Found]]) -> None:
    assert fixture_files(code), f"{code} has no fixture file tests/fixtures/rules/test_{code.lower()}.py"
    assert mismatches(code, fixture_report) == []


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        pytest.param("x()  # HRM105", [("HRM105", None, {})], id="code"),
        pytest.param("x()  # HRM105 HRM105", [("HRM105", None, {}), ("HRM105", None, {})], id="twice"),
        pytest.param("x()  # HRM105:5", [("HRM105", 5, {})], id="column"),
        pytest.param(
            'x()  # HRM106:3 name=subprocess.run why="runs make, twice" HRM105',
            [("HRM106", 3, {"name": "subprocess.run", "why": "runs make, twice"}), ("HRM105", None, {})],
            id="arguments",
        ),
        pytest.param("x = 1  # HRM108's", [], id="prose"),
        pytest.param("x = 1  # see HRM108", [], id="prose-first"),
        pytest.param("x = 1  # HRM108 flags it", [], id="prose-after"),
    ],
)
def test_marker_syntax(comment: str, expected: list[tuple[str, int | None, dict[str, str]]]) -> None:
    match = MARKER.search(comment)
    parsed = parse_marker(match.group("marker"), 1) if match else []
    assert [(e.code, e.col, e.args) for e in parsed] == expected


def test_fixture_files_no_rule_claims_are_well_formed() -> None:
    """conftest.py and the like: no rule's test reads them, this does."""
    claimed = {path for code in CODES for path in fixture_files(code)}
    others = [path for path in sorted(RULE_FIXTURES.rglob("*.py")) if path not in claimed]
    assert [problem for path in others for problem in fixture_problems(path)] == []


def test_prose_is_still_there() -> None:
    """Each ``PROSE`` entry names a marker-like comment that is there (else drop it)."""
    lines = {
        (relative, number): (RULE_FIXTURES.parent / relative).read_text(encoding="utf-8").splitlines()[number - 1]
        for relative, number in PROSE
    }
    stale = {
        place: line for place, line in lines.items()
        if not (found := MARKER_LIKE.search(line)) or not line[found.start():].startswith(PROSE[place])
    }
    assert stale == {}


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("x()  # HRM105:x", id="column-not-digits"),
        pytest.param("x()  # HRM105: 5", id="space-after-colon"),
        pytest.param("x()  # HRM105:5:6", id="two-columns"),
        pytest.param("x()  # HRM105 Name=x", id="field-upper-case"),
        pytest.param('x()  # HRM105 name="os.chdir', id="unclosed-quote"),
        pytest.param("x()  # HRM105 name=", id="empty-value"),
        pytest.param("x()  # HRM105 name=x  # noqa", id="noqa-after"),
        pytest.param("x()  # HRM105  # HRM106", id="two-comments"),
        pytest.param("x()  # hrm105", id="lower-case"),
        pytest.param("x()  # Hrm105", id="mixed-case"),
        pytest.param("x()  #HRM1050", id="four-digits"),
        pytest.param("x()  # HRM105, HRM106", id="comma"),
        pytest.param("x()  # HRM105 flags it", id="words-after"),
        pytest.param("x = 1  # HRM108's", id="prose-unlisted"),
        pytest.param("x()  # HRM999", id="no-such-rule"),
    ],
)
def test_malformed_markers_are_refused(line: str, tmp_path: Path) -> None:
    assert malformed_marker(line) is not None
    fixture = tmp_path / "rules" / "test_hrm105.py"
    fixture.parent.mkdir()
    fixture.write_text(f'"""Doc."""\n\n{line}\n', encoding="utf-8")
    problems = fixture_problems(fixture, root=tmp_path)
    assert [problem[: len("rules/test_hrm105.py:3: ")] for problem in problems] == ["rules/test_hrm105.py:3: "]


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("x()  # HRM105", id="code"),
        pytest.param("x()  #HRM105:5 name=os.chdir", id="no-space"),
        pytest.param('x()  # HRM106:5 name=subprocess.run why="runs make, twice" HRM105', id="arguments"),
        pytest.param("x()  # noqa: F401  # HRM105", id="noqa-before"),
        pytest.param("x = 1  # see HRM108", id="prose-first"),
        pytest.param("x = 1", id="no-comment"),
    ],
)
def test_well_formed_lines_pass(line: str) -> None:
    assert malformed_marker(line) is None


def test_message_arguments_match_only_their_fields() -> None:
    template = "{name}() runs a child that {why}; pass cwd="
    assert message_pattern(template, {"name": "run"}).fullmatch("run() runs a child that x; pass cwd=")
    assert not message_pattern(template, {"name": "run"}).fullmatch("os.run() runs a child that x; pass cwd=")
    with pytest.raises(AssertionError, match="not fields"):
        message_pattern(template, {"nmae": "run"})


def test_options_line_becomes_command_line_options(tmp_path: Path) -> None:
    fixture = tmp_path / "test_x.py"
    fixture.write_text(
        '"""Doc."""\n# hermetic-options: max-collection-bytes=4096 readonly-commands="make check,git status"\n',
        encoding="utf-8",
    )
    assert fixture_options(fixture) == [
        "--hermetic-max-collection-bytes=4096",
        "--hermetic-readonly-commands=make check,git status",
    ]
    assert fixture_problems(fixture, root=tmp_path) == []


def test_an_options_fixture_takes_its_conftests_along(tmp_path: Path) -> None:
    root, own = tmp_path / "all", tmp_path / "own"
    names = ("rules/conftest.py", "rules/pinned/conftest.py", "rules/pinned/test_x.py", "rules/test_y.py")
    write_tree(root, {relative: f"# {relative}\n" for relative in names})
    move_with_its_conftests(root, "rules/pinned/test_x.py", own)
    moved = sorted(path.relative_to(own).as_posix() for path in own.rglob("*.py"))
    assert moved == ["rules/conftest.py", "rules/pinned/conftest.py", "rules/pinned/test_x.py"]
    assert (own / "rules/pinned/conftest.py").read_text(encoding="utf-8") == "# rules/pinned/conftest.py\n"
    assert not (root / "rules/pinned/test_x.py").exists()
    assert (root / "rules/pinned/conftest.py").exists()


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        pytest.param([*["x = 1"] * 10, "# hermetic-options: max-collection-bytes=4096"], 11, id="below-line-10"),
        pytest.param(["if True:", "    # hermetic-options: max-collection-bytes=4096"], 2, id="indented"),
        pytest.param(["x = 1  # hermetic-options: max-collection-bytes=4096"], 1, id="after-code"),
        pytest.param(["# hermetic-options max-collection-bytes=4096"], 1, id="no-colon"),
        pytest.param(["# Hermetic-Options: max-collection-bytes=4096"], 1, id="capitals"),
    ],
)
def test_a_misplaced_options_line_is_a_problem(lines: list[str], where: int, tmp_path: Path) -> None:
    fixture = tmp_path / "rules" / "test_hrm401_option.py"
    fixture.parent.mkdir()
    fixture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert fixture_options(fixture) == []  # read by no one ...
    problems = fixture_problems(fixture, root=tmp_path)  # ... so refused
    prefix = f"rules/test_hrm401_option.py:{where}: "
    assert [problem[: len(prefix)] for problem in problems] == [prefix]
