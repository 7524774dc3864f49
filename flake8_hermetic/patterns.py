"""Project pattern rules (HRM8xx): ast-grep rules a project declares in YAML.

A rules file (``--hermetic-rules=PATH``) holds a list under ``rules``; each
rule has its own ``HRM8nn`` code and message, an ast-grep rule object
(``rule``, with optional ``constraints`` and ``utils`` exactly as ast-grep
reads them), optional ``files`` globs (default: the test files) and an
optional ``note``. The file is read with ``yaml.safe_load`` and validated
rule by rule when the options are parsed; a problem is one line,
``FILE:LINE: rule HRM8nn: reason``.

Matching parses each file once and runs one ast-grep search for all the
rules that apply to it. ast-grep stops an ``any`` at its first matching
branch and checks ``constraints`` only after the whole rule matched, so a
plain ``any`` of the rules would lose a second rule matching the same node
and a rule whose sibling's constraint failed. The combined rule is
therefore::

    all:
      - any: [R1, ..., Rn]            # cheap filter: most nodes stop here
      - any: [{all: [R1, $$TAG1]}, ANYTHING]
      ...
      - any: [{all: [Rn, $$TAGn]}, ANYTHING]

Every rule's metavariables and utils are renamed apart (``$X`` of HRM801
becomes ``$X_HRM801``), the tag a rule captures says it matched, and each
rule's constraints are checked here on the nodes its metavariables captured
(a verdict that depends on the captured text alone is remembered for the
file). The result equals running every rule on its own
(tests/test_patterns.py compares the two on CPython's test suite and on
generated modules); a single rule runs as written.

ast-grep-py and PyYAML come with the ``patterns`` extra; they are imported
only when a rules file is configured.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flake8_hermetic.violation import Violation
from flake8_hermetic.settings import ConfigError
from flake8_hermetic.testfiles import GlobMatcher

EXTRA_HINT = "pip install 'flake8-hermetic[patterns]'"
CODE_FORM = re.compile(r"^HRM8\d\d$")
METAVARIABLE = re.compile(r"^(\${1,3})([A-Z_][A-Z0-9_]*)$")
MESSAGE_METAVARIABLE = re.compile(r"\$(\$\$)?([A-Z_][A-Z0-9_]*)")
CONSTRAINT_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
# ast-grep's Python grammar reads metavariables spelt with this character.
EXPANDO = "\u00b5"
MATCH_ANYTHING: dict[str, Any] = {"regex": ""}
STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)
CONTEXT_FREE_KEYS = frozenset(("pattern", "kind", "regex", "all", "any", "not"))

FILE_KEYS = ("rules",)
RULE_ENTRY_KEYS = ("code", "message", "rule", "constraints", "utils", "files", "note")
ATOMIC_KEYS = ("pattern", "kind", "regex", "nthChild", "range")
RELATIONAL_KEYS = ("inside", "has", "precedes", "follows")
COMPOSITE_KEYS = ("all", "any", "not", "matches")
RULE_KEYS = ATOMIC_KEYS + RELATIONAL_KEYS + COMPOSITE_KEYS
RELATION_KEYS = RULE_KEYS + ("stopBy", "field")
PATTERN_OBJECT_KEYS = ("context", "selector", "strictness")
STRICTNESS = ("cst", "smart", "ast", "relaxed", "signature")
NTH_CHILD_KEYS = ("position", "ofRule", "reverse")
RANGE_KEYS = ("start", "end")
POSITION_KEYS = ("line", "column")


# (renamed metavariable, constraint rule, whether the rule reads only the node's own text)
ConstraintChecks = tuple[tuple[str, dict[str, Any], bool], ...]


# -- the rules ---------------------------------------------------------------

@dataclass(frozen=True)
class PatternRule:
    """One declared rule. ``rule``/``constraints``/``utils`` are the ast-grep
    objects as written; the ``matching_*`` fields are the same with the
    metavariables and utils renamed apart for the combined search."""

    code: str
    message: str
    rule: Mapping[str, Any]
    constraints: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    utils: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    files: tuple[str, ...] | None = None  # None: the test files
    note: str = ""
    line: int = 0
    matching_rule: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    matching_utils: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, repr=False, compare=False)
    file_matcher: GlobMatcher | None = field(default=None, repr=False, compare=False)
    exclude_matcher: GlobMatcher | None = field(default=None, repr=False, compare=False)
    constraint_checks: ConstraintChecks = field(default=(), repr=False, compare=False)

    @property
    def tag(self) -> str:
        return f"HRMTAG{self.code[3:]}"

    @property
    def suffix(self) -> str:
        return f"_{self.code}"

    def config(self) -> dict[str, Any]:
        """The rule as ast-grep itself would run it alone."""
        config: dict[str, Any] = {"rule": self.rule}
        if self.constraints:
            config["constraints"] = self.constraints
        if self.utils:
            config["utils"] = self.utils
        return config

    def summary(self) -> str:
        return self.message

    def applies_to(self, path: str, is_test_file: bool) -> bool:
        """``files`` selects the file (the test files when it names none),
        and no ``!glob`` of it excludes it."""
        selected = is_test_file if self.file_matcher is None else self.file_matcher.matches(path)
        return selected and not (self.exclude_matcher is not None and self.exclude_matcher.matches(path))


@dataclass(frozen=True)
class PatternMatch:
    code: str
    message: str
    start: tuple[int, int]  # 0-based row, character column (ast-grep's view)
    end: tuple[int, int]


class MatchSpan(ast.AST):
    """The source span of an ast-grep match, positioned like an ast node
    (1-based lines, UTF-8 byte columns), so the baseline's ``what`` text
    comes from the same ``ast.get_source_segment`` as a built-in rule's."""

    _fields = ()
    _attributes = ("lineno", "col_offset", "end_lineno", "end_col_offset")

    def __init__(self, lineno: int, col_offset: int, end_lineno: int, end_col_offset: int) -> None:
        super().__init__()
        self.lineno = lineno
        self.col_offset = col_offset
        self.end_lineno = end_lineno
        self.end_col_offset = end_col_offset


class PatternRuleSet:
    """The rules of one file, and the one-pass search over a source file."""

    def __init__(self, path: str, rules: Sequence[PatternRule]) -> None:
        self.path = path
        self.rules = tuple(rules)
        self._searches: dict[tuple[str, ...], _Search] = {}

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(rule.code for rule in self.rules)

    def by_code(self) -> dict[str, PatternRule]:
        return {rule.code: rule for rule in self.rules}

    def only(self, codes: frozenset[str] | set[str]) -> PatternRuleSet:
        """The same file restricted to ``codes`` (the ones a run selects)."""
        return PatternRuleSet(self.path, [rule for rule in self.rules if rule.code in codes])

    def for_file(self, path: str, is_test_file: bool) -> tuple[PatternRule, ...]:
        return tuple(rule for rule in self.rules if rule.applies_to(path, is_test_file))

    def search(self, source: str, rules: Sequence[PatternRule]) -> list[PatternMatch]:
        """Every (rule, node) match of ``rules`` in ``source``, one pass."""
        if not rules:
            return []
        key = tuple(rule.code for rule in rules)
        search = self._searches.get(key)
        if search is None:
            search = self._searches[key] = _Search(rules)
        return search.run(source)

    def lint(self, tree: ast.AST, source: str, rules: Sequence[PatternRule]) -> list[Violation]:
        """The violations of ``rules`` in a file, positioned as flake8 counts."""
        matches = self.search(source, rules)
        if not matches:
            return []
        rows = source.split("\n")
        scopes = ScopeIndex(tree)
        found = []
        for match in matches:
            line, col = _ast_position(rows, match.start)
            end_line, end_col = _ast_position(rows, match.end)
            found.append(Violation(
                line=line,
                col=col,
                code=match.code,
                message=match.message,
                where=scopes.where(line, col),
                node=MatchSpan(line, col, end_line, end_col),
            ))
        return found


def _glob_matcher(globs: Sequence[str]) -> GlobMatcher | None:
    return GlobMatcher([g.strip() for g in globs]) if globs else None


def _ast_position(rows: Sequence[str], position: tuple[int, int]) -> tuple[int, int]:
    """ast-grep counts characters; ast (and so flake8) counts UTF-8 bytes."""
    row, column = position
    text = rows[row] if row < len(rows) else ""
    return row + 1, len(text[:column].encode("utf-8", "surrogatepass"))


class _Search:
    """The combined ast-grep config of a set of rules, and its run."""

    def __init__(self, rules: Sequence[PatternRule]) -> None:
        self.rules = tuple(rules)
        utils: dict[str, Any] = {}
        for rule in self.rules:
            utils.update(rule.matching_utils)
        if len(self.rules) == 1:
            top: dict[str, Any] = dict(self.rules[0].matching_rule)
        else:
            top = {"all": [
                {"any": [rule.matching_rule for rule in self.rules]},
                *(
                    {"any": [{"all": [rule.matching_rule, {"pattern": "$$" + rule.tag}]}, MATCH_ANYTHING]}
                    for rule in self.rules
                ),
            ]}
        self.plan = [(rule, rule.tag, rule.constraint_checks) for rule in self.rules]
        self.config: dict[str, Any] = {"rule": top}
        if utils:
            self.config["utils"] = utils

    def run(self, source: str) -> list[PatternMatch]:
        from ast_grep_py import SgRoot

        root = SgRoot(source, "python").root()
        single = len(self.rules) == 1
        found = []
        memo: dict[tuple[int, str, str], bool] = {}
        for node in root.find_all(self.config):  # type: ignore[call-overload]
            for rule, tag, checks in self.plan:
                if not single and node.get_match(tag) is None:
                    continue
                if checks and not _constraints_hold(node, checks, memo):
                    continue
                span = node.range()
                found.append(PatternMatch(
                    rule.code,
                    _render_message(rule, node),
                    (span.start.line, span.start.column),
                    (span.end.line, span.end.column),
                ))
        return found


def _constraint_checks(code: str, constraints: Mapping[str, Any], utils: Mapping[str, Any]) -> ConstraintChecks:
    """The constraints with their utils inlined (``SgNode.matches()`` takes
    no utils) and the metavariables renamed as in the combined search."""
    checks = []
    for name, constraint in constraints.items():
        inlined = _inline_utils(constraint, utils)
        checks.append((f"{name}_{code}", inlined, _reads_only_the_node(inlined)))
    return tuple(checks)


def _reads_only_the_node(rule: Any) -> bool:
    """True when a rule's verdict on a node depends on its kind and text
    alone (no relation to other nodes, no position)."""
    if isinstance(rule, list):
        return all(_reads_only_the_node(item) for item in rule)
    if not isinstance(rule, dict):
        return True
    return all(key in CONTEXT_FREE_KEYS and _reads_only_the_node(value) for key, value in rule.items())


def _constraints_hold(node: Any, checks: ConstraintChecks, memo: dict[tuple[int, str, str], bool]) -> bool:
    """ast-grep's constraints: each captured single metavariable must match
    its constraint rule (an uncaptured one is not judged). ``matches()``
    compiles the rule on every call, so verdicts that depend only on the
    captured text are remembered for the file."""
    for name, constraint, context_free in checks:
        captured = node.get_match(name)
        if captured is None:
            continue
        if context_free:
            key = (id(constraint), captured.kind(), captured.text())
            verdict = memo.get(key)
            if verdict is None:
                verdict = memo[key] = bool(captured.matches(**constraint))
        else:
            verdict = bool(captured.matches(**constraint))
        if not verdict:
            return False
    return True


def _inline_utils(rule: Any, utils: Mapping[str, Any]) -> Any:
    """``{matches: u, ...}`` -> ``{all: [<u inlined>], ...}`` (the loader has
    made sure every name is defined and ast-grep that none is cyclic)."""
    if isinstance(rule, list):
        return [_inline_utils(item, utils) for item in rule]
    if not isinstance(rule, dict):
        return rule
    inlined = {key: _inline_utils(value, utils) for key, value in rule.items() if key != "matches"}
    if isinstance(rule.get("matches"), str):
        inlined["all"] = [*inlined.get("all", []), _inline_utils(utils[rule["matches"]], utils)]
    return inlined


def _render_message(rule: PatternRule, node: Any) -> str:
    """``$NAME`` in a message is the text the rule's metavariable captured,
    as in ast-grep's own messages; an unknown name stays as written."""
    if "$" not in rule.message:
        return rule.message

    def replace(match: re.Match[str]) -> str:
        renamed = match.group(2) + rule.suffix
        if match.group(1):
            nodes = node.get_multiple_matches(renamed)
            text = ", ".join(n.text() for n in nodes) if nodes else None
        else:
            captured = node.get_match(renamed)
            text = captured.text() if captured is not None else None
        if text is None:
            return match.group(0)
        text = " ".join(text.split())
        return text if len(text) <= 60 else text[:57] + "..."

    return MESSAGE_METAVARIABLE.sub(replace, rule.message)


# -- scopes ------------------------------------------------------------------

class ScopeIndex:
    """The pytest node-id scope of a position, as the engine names it for
    built-in rules: classes down to the outermost function; a def nested in
    a function belongs to that function; decorators, defaults and bases sit
    in the enclosing scope."""

    def __init__(self, tree: ast.AST) -> None:
        self._spans: list[tuple[tuple[int, int], tuple[int, int], str]] = []
        stack: list[tuple[ast.AST, str, bool]] = [(tree, "", False)]
        while stack:
            node, where, in_function = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = where if in_function else (f"{where}::{child.name}" if where else child.name)
                    if inner != where and child.body:
                        first, last = child.body[0], child.body[-1]
                        self._spans.append((
                            _statement_start(first),
                            (last.end_lineno or last.lineno, last.end_col_offset or 0),
                            inner,
                        ))
                    is_function = not isinstance(child, ast.ClassDef)
                    stack.append((child, inner, in_function or is_function))
                elif isinstance(child, STATEMENT_HOLDERS):
                    # a def is a statement: expressions never hold one
                    stack.append((child, where, in_function))

    def where(self, line: int, col: int) -> str:
        best: tuple[tuple[int, int], str] | None = None
        position = (line, col)
        for start, end, where in self._spans:
            if start <= position < end and (best is None or start > best[0]):
                best = (start, where)
        return best[1] if best else ""


def _statement_start(stmt: ast.stmt) -> tuple[int, int]:
    """Where a statement's text begins: a decorated def begins at its first
    decorator's ``@`` line (``lineno`` is the ``def`` line)."""
    decorators = getattr(stmt, "decorator_list", None)
    if decorators:
        first = decorators[0]
        return first.lineno, max(first.col_offset - 1, 0)
    return stmt.lineno, stmt.col_offset


# -- loading -----------------------------------------------------------------

_LOADED: dict[str, tuple[tuple[int, int], PatternRuleSet]] = {}


def load_pattern_rules(path: str) -> PatternRuleSet:
    """Read and validate a rules file (once per process per file version).

    Raises :class:`ConfigError` with one line for any problem, including a
    missing ``patterns`` extra.
    """
    path = os.path.abspath(path)
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the pattern rules: {exc.strerror}") from None
    version = (stat.st_mtime_ns, stat.st_size)
    cached = _LOADED.get(path)
    if cached is not None and cached[0] == version:
        return cached[1]
    try:
        import ast_grep_py  # noqa: F401
        import yaml  # noqa: F401
    except ImportError as exc:
        module = getattr(exc, "name", None) or "ast_grep_py"
        missing = {"ast_grep_py": "ast-grep-py", "yaml": "PyYAML"}.get(module, module)
        raise ConfigError(
            f"{path}: pattern rules (HRM8xx) need the 'patterns' extra "
            f"({missing} is not installed): {EXTRA_HINT}"
        ) from None
    rule_set = _Loader(path).load()
    _LOADED[path] = (version, rule_set)
    return rule_set


class _Loader:
    def __init__(self, path: str) -> None:
        self.path = path
        self.label = "rules file"
        self.line = 1

    def fail(self, reason: str, line: int | None = None) -> ConfigError:
        return ConfigError(f"{self.path}:{line or self.line}: {self.label}: {reason}")

    def load(self) -> PatternRuleSet:
        import yaml

        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot read the pattern rules: {exc.strerror}") from None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise self.fail("not UTF-8 text", data[: exc.start].count(b"\n") + 1) from None
        try:
            document = yaml.safe_load(text)
            tree = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = mark.line + 1 if mark is not None else 1
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            context, opened = getattr(exc, "context", None), getattr(exc, "context_mark", None)
            if context and opened is not None and opened.line + 1 != line:
                problem += f" ({context.replace('while parsing', 'in')} opened at line {opened.line + 1})"
            raise self.fail(f"invalid YAML: {problem}", line) from None
        lines = _Lines(tree)
        lines.check_duplicate_keys(self, (), deep=False)
        if not isinstance(document, dict):
            raise self.fail("expected a mapping with a 'rules' list at the top")
        self._check_keys(document, FILE_KEYS, lines, (), "the file")
        entries = document.get("rules")
        if not isinstance(entries, list):
            raise self.fail("'rules' must be a list of rules", lines.at(("rules",)))
        rules: list[PatternRule] = []
        seen: dict[str, int] = {}
        for index, entry in enumerate(entries):
            here = ("rules", index)
            self.label = f"rule #{index + 1}"
            self.line = lines.at(here)
            if isinstance(entry, dict) and isinstance(entry.get("code"), str):
                self.label = f"rule {entry['code']}"
            rule = self._rule(entry, here, lines)
            if rule.code in seen:
                raise self.fail(f"duplicate code {rule.code} (first used at line {seen[rule.code]})")
            seen[rule.code] = rule.line
            rules.append(rule)
        self.label = "rules file"
        rule_set = PatternRuleSet(self.path, rules)
        if len(rules) > 1:
            self._probe(_Search(rules).config, lines, ("rules",))
        return rule_set

    # -- one rule ------------------------------------------------------------
    def _rule(self, entry: Any, here: tuple[Any, ...], lines: _Lines) -> PatternRule:
        if not isinstance(entry, dict):
            raise self.fail("expected a mapping with code, message and rule")
        lines.check_duplicate_keys(self, here)
        self._check_keys(entry, RULE_ENTRY_KEYS, lines, here, "a rule")
        for required in ("code", "message", "rule"):
            if required not in entry or entry[required] is None:
                raise self.fail(f"missing '{required}'")
        code = entry["code"]
        if not isinstance(code, str):
            raise self.fail(f"code must be written HRM8nn, got {code!r}", lines.at(here + ("code",)))
        if not CODE_FORM.match(code):
            raise self.fail(
                f"code {code!r} is outside HRM800-HRM899 (pattern rules own that range)",
                lines.at(here + ("code",)),
            )
        message = entry["message"]
        if not isinstance(message, str) or not message.strip():
            raise self.fail("'message' must be a non-empty string", lines.at(here + ("message",)))
        if "\n" in message.strip():
            raise self.fail("'message' must be one line", lines.at(here + ("message",)))
        note = entry.get("note") or ""
        if not isinstance(note, str):
            raise self.fail("'note' must be a string", lines.at(here + ("note",)))
        files = self._files(entry.get("files"), lines, here + ("files",))
        utils = entry.get("utils") or {}
        if not isinstance(utils, dict):
            raise self.fail("'utils' must be a mapping of name to rule", lines.at(here + ("utils",)))
        for name, util in utils.items():
            if not isinstance(name, str):
                raise self.fail(f"util name {name!r} must be a string", lines.at(here + ("utils",)))
            self._check_rule(util, lines, here + ("utils", name), f"utils.{name}")
        rule = entry["rule"]
        self._check_rule(rule, lines, here + ("rule",), "rule")
        constraints = entry.get("constraints") or {}
        if not isinstance(constraints, dict):
            raise self.fail(
                "'constraints' must be a mapping of metavariable to rule", lines.at(here + ("constraints",))
            )
        for name, constraint in constraints.items():
            if not isinstance(name, str) or not CONSTRAINT_NAME.match(name):
                raise self.fail(
                    f"constraint key {name!r} must be a metavariable name without '$' (e.g. TARGET)",
                    lines.at(here + ("constraints",)),
                )
            self._check_rule(constraint, lines, here + ("constraints", name), f"constraints.{name}")
        self._check_matches(rule, utils, lines, here + ("rule",))
        for name, util in utils.items():
            self._check_matches(util, utils, lines, here + ("utils", name))
        for name, constraint in constraints.items():
            self._check_matches(constraint, utils, lines, here + ("constraints", name))
        self._check_patterns(entry, lines, here)
        # ast-grep judges the rule as written (kinds, regexes, cyclic utils) before it is taken apart
        self._probe({"rule": rule, "constraints": constraints, "utils": utils}, lines, here)
        suffix = f"_{code}"
        return PatternRule(
            code=code,
            message=" ".join(message.split()),
            rule=rule,
            constraints=constraints,
            utils=utils,
            files=files,
            note=note.strip(),
            line=self.line,
            matching_rule=_rename(rule, suffix, code),
            matching_utils={f"{code}_{name}": _rename(util, suffix, code) for name, util in utils.items()},
            file_matcher=_glob_matcher([g for g in files or () if not g.startswith("!")]),
            exclude_matcher=_glob_matcher([g[1:] for g in files or () if g.startswith("!")]),
            constraint_checks=_constraint_checks(code, constraints, utils),
        )

    def _files(self, value: Any, lines: _Lines, here: tuple[Any, ...]) -> tuple[str, ...] | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail("'files' must be a list of globs (e.g. ['tests/*.py', 'src/*.py'])", lines.at(here))
        globs = tuple(v.strip() for v in value)
        if "!" in globs:
            raise self.fail("'files': '!' must be followed by the glob to exclude", lines.at(here))
        return globs

    def _check_keys(
        self, mapping: Mapping[Any, Any], known: Sequence[str], lines: _Lines, here: tuple[Any, ...], what: str
    ) -> None:
        for key in mapping:
            if key in known:
                continue
            hint = ""
            if isinstance(key, str):
                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise self.fail(
                f"unknown key {key!r} in {what}{hint}; known: {', '.join(known)}",
                lines.at(here + (key,), key_line=True),
            )

    def _check_rule(self, rule: Any, lines: _Lines, here: tuple[Any, ...], where: str,
                    known: Sequence[str] = RULE_KEYS) -> None:
        """The shape of an ast-grep rule object; ast-grep itself judges the
        rest (kinds, regexes, util cycles) in :meth:`_probe`."""
        if not isinstance(rule, dict) or not rule:
            raise self.fail(f"{where} must be a non-empty ast-grep rule mapping", lines.at(here))
        self._check_keys(rule, known, lines, here, f"{where}")
        for key, value in rule.items():
            inner = here + (key,)
            label = f"{where}.{key}"
            if key in ("kind", "regex", "matches", "field"):
                if not isinstance(value, str) or not value:
                    raise self.fail(f"{label} must be a non-empty string", lines.at(inner))
                if key in ("kind", "regex"):
                    # ast-grep's own (Rust) regex syntax and node kinds, judged where they are written
                    self._probe({"rule": {key: value}}, lines, inner)
            elif key == "pattern":
                self._check_pattern_value(value, lines, inner, label)
            elif key in ("all", "any"):
                if not isinstance(value, list) or not value:
                    raise self.fail(f"{label} must be a non-empty list of rules", lines.at(inner))
                for index, item in enumerate(value):
                    self._check_rule(item, lines, inner + (index,), f"{label}[{index}]")
            elif key == "not":
                self._check_rule(value, lines, inner, label)
            elif key in RELATIONAL_KEYS:
                self._check_rule(value, lines, inner, label, RELATION_KEYS)
            elif key == "stopBy":
                if value not in ("neighbor", "end"):
                    self._check_rule(value, lines, inner, label)
            elif key == "nthChild":
                self._check_nth_child(value, lines, inner, label)
            elif key == "range":
                self._check_range(value, lines, inner, label)

    def _check_pattern_value(self, value: Any, lines: _Lines, here: tuple[Any, ...], label: str) -> None:
        if isinstance(value, str):
            if not value.strip():
                raise self.fail(f"{label} must not be empty", lines.at(here))
            return
        if not isinstance(value, dict):
            raise self.fail(f"{label} must be a string or a mapping with 'context'", lines.at(here))
        self._check_keys(value, PATTERN_OBJECT_KEYS, lines, here, label)
        if not isinstance(value.get("context"), str) or not value["context"].strip():
            raise self.fail(f"{label}.context must be a non-empty string", lines.at(here))
        if "selector" in value and not isinstance(value["selector"], str):
            raise self.fail(f"{label}.selector must be a node kind", lines.at(here + ("selector",)))
        if "strictness" in value and value["strictness"] not in STRICTNESS:
            raise self.fail(
                f"{label}.strictness must be one of {', '.join(STRICTNESS)}", lines.at(here + ("strictness",))
            )

    def _check_nth_child(self, value: Any, lines: _Lines, here: tuple[Any, ...], label: str) -> None:
        if isinstance(value, bool):
            raise self.fail(f"{label} must be a number, a formula like '2n+1', or a mapping", lines.at(here))
        if isinstance(value, (int, str)):
            return
        if not isinstance(value, dict):
            raise self.fail(f"{label} must be a number, a formula like '2n+1', or a mapping", lines.at(here))
        self._check_keys(value, NTH_CHILD_KEYS, lines, here, label)
        if "ofRule" in value:
            self._check_rule(value["ofRule"], lines, here + ("ofRule",), f"{label}.ofRule")

    def _check_range(self, value: Any, lines: _Lines, here: tuple[Any, ...], label: str) -> None:
        if not isinstance(value, dict):
            raise self.fail(f"{label} must be a mapping with start and end", lines.at(here))
        self._check_keys(value, RANGE_KEYS, lines, here, label)
        for end in RANGE_KEYS:
            point = value.get(end)
            if not isinstance(point, dict):
                raise self.fail(f"{label}.{end} must be a mapping with line and column", lines.at(here))
            self._check_keys(point, POSITION_KEYS, lines, here + (end,), f"{label}.{end}")

    def _check_matches(self, value: Any, utils: Mapping[str, Any], lines: _Lines, here: tuple[Any, ...]) -> None:
        for path, name in _matches_references(value, here):
            if name not in utils:
                known = ", ".join(sorted(utils)) or "none"
                raise self.fail(f"matches: {name!r} is not one of this rule's utils (defined: {known})", lines.at(path))

    def _check_patterns(self, entry: Mapping[str, Any], lines: _Lines, here: tuple[Any, ...]) -> None:
        """A pattern must be Python (metavariables aside): ast-grep itself
        quietly matches nothing for ``foo((``."""
        from ast_grep_py import SgRoot

        for path, text in _pattern_texts(entry, here):
            root = SgRoot(text.replace("$", EXPANDO), "python").root()
            if root.find(kind="ERROR") is not None:
                shown = " ".join(text.split())
                raise self.fail(
                    f"pattern {shown!r} is not valid Python (a fragment such as 'except ...:' "
                    "needs a pattern object with context and selector)",
                    lines.at(path),
                )

    def _probe(self, config: Mapping[str, Any], lines: _Lines, here: tuple[Any, ...]) -> None:
        """Let ast-grep compile the config; its complaint becomes one line."""
        from ast_grep_py import SgRoot

        try:
            SgRoot("", "python").root().find_all(dict(config))  # type: ignore[call-overload]
        except Exception as exc:  # ast-grep raises RuntimeError, TypeError or a bare Exception
            reason = _ast_grep_reason(str(exc))
            raise self.fail(f"ast-grep rejects the rule: {reason}", lines.find_scalar(here, reason)) from None


def _ast_grep_reason(text: str) -> str:
    """The most specific cause in ast-grep's error chain, without its backtrace."""
    text = text.split("Stack backtrace:")[0]
    if "regex parse error" in text:
        last = text.strip().splitlines()[-1].strip()
        return "regex parse error: " + re.sub(r"^error:\s*", "", last)
    causes = []
    for line in text.splitlines():
        line = re.sub(r"^\d+:\s*", "", line.strip())
        if line and line not in ("cannot get matcher", "Caused by:"):
            causes.append(line)
    generic = ("is not configured correctly", "Rule contains invalid", "Invalid Kind")
    specific = [c for c in causes if not any(g in c for g in generic)]
    return (specific or causes or ["invalid rule"])[-1]


def _matches_references(value: Any, here: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "matches" and isinstance(inner, str):
                yield here + (key,), inner
            else:
                yield from _matches_references(inner, here + (key,))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _matches_references(inner, here + (index,))


def _pattern_texts(value: Any, here: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "pattern" and isinstance(inner, str):
                yield here + (key,), inner
            elif key == "pattern" and isinstance(inner, dict) and isinstance(inner.get("context"), str):
                yield here + (key, "context"), inner["context"]
            else:
                yield from _pattern_texts(inner, here + (key,))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _pattern_texts(inner, here + (index,))


# -- renaming apart ------------------------------------------------------------

def _rename(rule: Any, suffix: str, code: str) -> Any:
    """A copy of a rule object whose metavariables end in ``suffix`` and whose
    ``matches`` name this rule's prefixed utils, so rules combined into one
    search cannot bind each other's metavariables or utils."""
    if isinstance(rule, list):
        return [_rename(item, suffix, code) for item in rule]
    if not isinstance(rule, dict):
        return rule
    renamed: dict[str, Any] = {}
    for key, value in rule.items():
        if key == "pattern" and isinstance(value, str):
            renamed[key] = _rename_pattern(value, suffix)
        elif key == "pattern" and isinstance(value, dict):
            renamed[key] = {**value, "context": _rename_pattern(value["context"], suffix)}
        elif key == "matches" and isinstance(value, str):
            renamed[key] = f"{code}_{value}"
        elif key in ("kind", "regex", "field", "range", "selector", "strictness"):
            renamed[key] = value
        else:
            renamed[key] = _rename(value, suffix, code)
    return renamed


def _rename_pattern(pattern: str, suffix: str) -> str:
    """Rename the metavariables of a pattern the way ast-grep finds them: a
    leaf whose whole text is ``$NAME``/``$$NAME``/``$$$NAME`` (so ``"$HOME/x"``
    in a string stays literal text)."""
    if "$" not in pattern:
        return pattern
    from ast_grep_py import SgRoot

    root = SgRoot(pattern.replace("$", EXPANDO), "python").root()
    edits: list[tuple[int, int, str]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        children = node.children()
        if children:
            stack.extend(children)
            continue
        span = node.range()
        text = pattern[span.start.index:span.end.index]
        match = METAVARIABLE.match(text)
        if match:
            edits.append((span.start.index, span.end.index, f"{match.group(1)}{match.group(2)}{suffix}"))
    for start, end, replacement in sorted(edits, reverse=True):
        pattern = pattern[:start] + replacement + pattern[end:]
    return pattern


# -- positions in the YAML ------------------------------------------------------

class _Lines:
    """1-based line numbers of values in the YAML, by their key path."""

    def __init__(self, tree: Any) -> None:
        self.tree = tree

    def _node(self, path: tuple[Any, ...], key_line: bool = False) -> Any:
        import yaml

        node = self.tree
        key_node = None
        for step in path:
            key_node = None
            if isinstance(node, yaml.MappingNode):
                for candidate, value_node in node.value:
                    if getattr(candidate, "value", None) == str(step):
                        key_node, node = candidate, value_node
                        break
                else:
                    return node
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
                node = node.value[step]
            else:
                return node
        return key_node if key_line and key_node is not None else node

    def at(self, path: tuple[Any, ...], key_line: bool = False) -> int:
        node = self._node(path, key_line)
        return node.start_mark.line + 1 if node is not None else 1

    def find_scalar(self, path: tuple[Any, ...], reason: str) -> int:
        """The line of the value a message names in backquotes (a bad kind,
        an undefined util), searched under ``path``; else ``path``'s line."""
        import yaml

        names = re.findall(r"`([^`]+)`", reason)
        start = self._node(path)
        if names and start is not None:
            stack = [start]
            while stack:
                node = stack.pop()
                if isinstance(node, yaml.ScalarNode) and node.value in names:
                    return node.start_mark.line + 1
                if isinstance(node, yaml.MappingNode):
                    for key_node, value_node in reversed(node.value):
                        stack.extend((value_node, key_node))
                elif isinstance(node, yaml.SequenceNode):
                    stack.extend(reversed(node.value))
        return self.at(path)

    def check_duplicate_keys(self, loader: _Loader, path: tuple[Any, ...], deep: bool = True) -> None:
        """safe_load keeps the last of two equal keys; a typo'd copy of a
        rule would then vanish silently."""
        import yaml

        start = self._node(path) if path else self.tree
        stack = [start] if start is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key_node, value_node in node.value:
                    key = getattr(key_node, "value", None)
                    if isinstance(key_node, yaml.ScalarNode) and key in seen:
                        raise loader.fail(
                            f"duplicate key {key!r} (first at line {seen[key]})", key_node.start_mark.line + 1
                        )
                    seen[key] = key_node.start_mark.line + 1
                    if deep:
                        stack.append(value_node)
            elif isinstance(node, yaml.SequenceNode) and deep:
                stack.extend(node.value)
