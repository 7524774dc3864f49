"""Matching pattern rules: one ast-grep search per file for every rule that applies, the
constraints checked on the captured nodes, the messages and scopes of the matches; and the
renaming apart that lets rules share one search. The format is described in
:mod:`flake8_hermetic.patterns`."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flake8_hermetic.testfiles import GlobMatcher
from flake8_hermetic.violation import Violation

METAVARIABLE = re.compile(r"^(\${1,3})([A-Z_][A-Z0-9_]*)$")
MESSAGE_METAVARIABLE = re.compile(r"\$(\$\$)?([A-Z_][A-Z0-9_]*)")
# ast-grep's Python grammar reads metavariables spelt with this character.
EXPANDO = "\u00b5"
MATCH_ANYTHING: dict[str, Any] = {"regex": ""}
STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)
CONTEXT_FREE_KEYS = frozenset(("pattern", "kind", "regex", "all", "any", "not"))


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
        self._searches: dict[tuple[str, ...], Search] = {}

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(rule.code for rule in self.rules)

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
            search = self._searches[key] = Search(rules)
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


def glob_matcher(globs: Sequence[str]) -> GlobMatcher | None:
    return GlobMatcher([g.strip() for g in globs]) if globs else None


def _ast_position(rows: Sequence[str], position: tuple[int, int]) -> tuple[int, int]:
    """ast-grep counts characters; ast (and so flake8) counts UTF-8 bytes."""
    row, column = position
    text = rows[row] if row < len(rows) else ""
    return row + 1, len(text[:column].encode("utf-8", "surrogatepass"))


class Search:
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


def constraint_checks(code: str, constraints: Mapping[str, Any], utils: Mapping[str, Any]) -> ConstraintChecks:
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


# -- renaming apart ------------------------------------------------------------

def rename_apart(rule: Any, suffix: str, code: str) -> Any:
    """A copy of a rule object whose metavariables end in ``suffix`` and whose
    ``matches`` name this rule's prefixed utils, so rules combined into one
    search cannot bind each other's metavariables or utils."""
    if isinstance(rule, list):
        return [rename_apart(item, suffix, code) for item in rule]
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
            renamed[key] = rename_apart(value, suffix, code)
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
