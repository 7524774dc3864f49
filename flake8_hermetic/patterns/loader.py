"""Reading and validating a pattern rules file: one line ``FILE:LINE: rule HRM8nn: reason`` per
problem (the format is described in :mod:`flake8_hermetic.patterns`)."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from flake8_hermetic.safeio import read_regular
from flake8_hermetic.settings import ConfigError
from flake8_hermetic.patterns.matching import (
    EXPANDO,
    PatternRule,
    PatternRuleSet,
    constraint_checks,
    glob_matcher,
    rename_apart,
    Search,
)


#: a rules file is a few kilobytes; past these it is not one
MAX_BYTES = 4 * 1024 * 1024
MAX_NODES = 100_000
SURROGATE = re.compile("[\ud800-\udfff]")
EXTRA_HINT = "pip install 'ast-grep-py>=0.30' 'PyYAML>=6'"  # the extra's packages: the pack itself is not on PyPI yet
CODE_FORM = re.compile(r"HRM8[0-9][0-9]")  # used with fullmatch
CONSTRAINT_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
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
        try:
            return self._load()
        except RecursionError:
            raise self.fail("nested too deep to read", 1) from None

    def _load(self) -> PatternRuleSet:
        import yaml

        try:
            data = read_regular(self.path, MAX_BYTES)
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot read the pattern rules: {exc.strerror}") from None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise self.fail("not UTF-8 text", data[: exc.start].count(b"\n") + 1) from None
        try:
            # the node graph first: its size with every alias expanded is
            # checked before anything builds or walks the expansion
            tree = yaml.compose(text, Loader=yaml.SafeLoader)
            self._check_graph(tree)
            document = yaml.safe_load(text)
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
            if isinstance(entry, dict) and isinstance(entry.get("code"), str) and entry["code"].isprintable():
                self.label = f"rule {entry['code']}"
            rule = self._rule(entry, here, lines)
            if rule.code in seen:
                raise self.fail(f"duplicate code {rule.code} (first used at line {seen[rule.code]})")
            seen[rule.code] = rule.line
            rules.append(rule)
        self.label = "rules file"
        rule_set = PatternRuleSet(self.path, rules)
        if len(rules) > 1:
            self._probe(Search(rules).config, lines, ("rules",))
        return rule_set

    def _check_graph(self, tree: Any) -> None:
        """Refuse a document whose aliases expand past :data:`MAX_NODES`
        nodes (a few hundred bytes of ``&a [*b, *b]`` can stand for
        gigabytes), and text no encoder can write (a lone surrogate from a
        ``"\\ud800"`` escape). Each node is visited once; the expanded size
        of a node is counted from its children's, never by expanding."""
        import yaml

        sizes: dict[int, int] = {}
        stack: list[tuple[Any, bool]] = [(tree, False)] if tree is not None else []
        while stack:
            node, done = stack.pop()
            if id(node) in sizes:
                continue
            if isinstance(node, yaml.ScalarNode):
                if SURROGATE.search(node.value):
                    line = node.start_mark.line + 1
                    raise self.fail("a lone surrogate (\\ud800-\\udfff) in a string is not text", line)
                sizes[id(node)] = 1
                continue
            children = (
                [part for pair in node.value for part in pair] if isinstance(node, yaml.MappingNode) else node.value
            )
            if not done:
                stack.append((node, True))
                stack.extend((child, False) for child in children if id(child) not in sizes)
                continue
            size = sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if size > MAX_NODES:
                raise self.fail(
                    f"the document expands to more than {MAX_NODES:,} nodes (aliases repeating anchors); "
                    "write the rules out", node.start_mark.line + 1,
                )

    # -- one rule ------------------------------------------------------------
    def _rule(self, entry: Any, here: tuple[Any, ...], lines: _Lines) -> PatternRule:
        if not isinstance(entry, dict):
            raise self.fail("expected a mapping with code, message and rule")
        lines.check_duplicate_keys(self, here)
        self._check_keys(entry, RULE_ENTRY_KEYS, lines, here, "a rule")
        for required in ("code", "message", "rule"):
            if required not in entry or entry[required] is None:
                raise self.fail(f"missing '{required}'")
        code = self._code(entry["code"], lines, here)
        message = self._text(entry["message"], lines, here + ("message",))
        note = entry.get("note") or ""
        if not isinstance(note, str):
            raise self.fail("'note' must be a string", lines.at(here + ("note",)))
        files = self._files(entry.get("files"), lines, here + ("files",))
        utils = self._utils(entry.get("utils") or {}, lines, here)
        rule = entry["rule"]
        self._check_rule(rule, lines, here + ("rule",), "rule")
        constraints = self._constraints(entry.get("constraints") or {}, lines, here)
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
            matching_rule=rename_apart(rule, suffix, code),
            matching_utils={f"{code}_{name}": rename_apart(util, suffix, code) for name, util in utils.items()},
            file_matcher=glob_matcher([g for g in files or () if not g.startswith("!")]),
            exclude_matcher=glob_matcher([g[1:] for g in files or () if g.startswith("!")]),
            constraint_checks=constraint_checks(code, constraints, utils),
        )

    def _code(self, code: Any, lines: _Lines, here: tuple[Any, ...]) -> str:
        if not isinstance(code, str):
            raise self.fail(f"code must be written HRM8nn, got {code!r}", lines.at(here + ("code",)))
        if not CODE_FORM.fullmatch(code):
            raise self.fail(
                f"code {code!r} is outside HRM800-HRM899 (pattern rules own that range)",
                lines.at(here + ("code",)),
            )
        return code

    def _text(self, message: Any, lines: _Lines, here: tuple[Any, ...]) -> str:
        if not isinstance(message, str) or not message.strip():
            raise self.fail("'message' must be a non-empty string", lines.at(here))
        if "\n" in message.strip():
            raise self.fail("'message' must be one line", lines.at(here))
        return message

    def _utils(self, utils: Any, lines: _Lines, here: tuple[Any, ...]) -> dict[str, Any]:
        if not isinstance(utils, dict):
            raise self.fail("'utils' must be a mapping of name to rule", lines.at(here + ("utils",)))
        for name, util in utils.items():
            if not isinstance(name, str):
                raise self.fail(f"util name {name!r} must be a string", lines.at(here + ("utils",)))
            self._check_rule(util, lines, here + ("utils", name), f"utils.{name}")
        return utils

    def _constraints(self, constraints: Any, lines: _Lines, here: tuple[Any, ...]) -> dict[str, Any]:
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
        return constraints

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
