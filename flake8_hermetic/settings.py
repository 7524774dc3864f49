"""The pack's options: registered with flake8, also read from ``pyproject.toml``.

Precedence, highest first: the command line, the flake8 config
(``setup.cfg``/``tox.ini``/``.flake8``), the ``[tool.flake8-hermetic]``
table of ``pyproject.toml``, the defaults. Every option is registered with
no default so that "not given" can be told apart from "given the default",
and every value is validated here: a bad one is a :class:`ConfigError`,
shown as one line naming the file, the line and the problem.
"""

from __future__ import annotations

import argparse
import configparser
import difflib
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from flake8_hermetic.baseline.format import BASELINE_NAME
from flake8_hermetic import tomlfile
from flake8_hermetic.catalog import all_rules
from flake8_hermetic.options import ConfigError, OptionSpec
from flake8_hermetic.root import configures_pack, find_pyproject, inside, project_root
from flake8_hermetic.testfiles import DEFAULT_TEST_FILES, GlobMatcher

PYPROJECT_TABLE = "flake8-hermetic"

__all__ = ["ConfigError", "OptionSpec", "Settings", "all_options", "register", "resolve"]

#: The options of the pack as a whole; each rule declares its own
#: (``Rule.options``), registered between these two groups, in code order.
GLOBAL_OPTIONS_FIRST = (
    OptionSpec(
        "test-files", "list", DEFAULT_TEST_FILES,
        "Comma-separated globs naming the test files the pack lints "
        "(a glob without '/' matches the file name). Not set: the modules pytest's "
        "own configuration collects, and conftest.py files (see docs/project-model.md)",
    ),
)
GLOBAL_OPTIONS_LAST = (
    OptionSpec(
        "baseline", "path", None,
        f"Baseline file (default: {BASELINE_NAME} in the project root; its paths are relative to that root).",
    ),
    OptionSpec("no-baseline", "flag", False, "Ignore the baseline: report every violation."),
    OptionSpec("rules", "path", None, "YAML file of project pattern rules (HRM8xx)."),
)
GLOBAL_NAMES = frozenset(spec.name for spec in (*GLOBAL_OPTIONS_FIRST, *GLOBAL_OPTIONS_LAST))
#: flake8's own options the table may also set: the pack's commands hand
#: them to flake8 (:mod:`flake8_hermetic.selection`); plain flake8 never
#: reads pyproject.toml, so the plugin leaves them alone.
FLAKE8_KEYS = ("select", "extend-select", "ignore", "extend-ignore", "per-file-ignores", "exclude", "extend-exclude")


@lru_cache(maxsize=None)
def rule_options() -> tuple[OptionSpec, ...]:
    """The options the rules declare, in code order, each once."""
    found: dict[str, OptionSpec] = {}
    for rule in all_rules().values():
        for spec in rule.options:
            if found.get(spec.name, spec) is not spec or spec.name in GLOBAL_NAMES:
                raise RuntimeError(f"option {spec.name!r} of {rule.code} is declared twice")
            found[spec.name] = spec
    return tuple(found.values())


def all_options() -> tuple[OptionSpec, ...]:
    """Every option, in the order of ``--help``."""
    return (*GLOBAL_OPTIONS_FIRST, *rule_options(), *GLOBAL_OPTIONS_LAST)


@lru_cache(maxsize=None)
def rule_option_defaults() -> dict[str, Any]:
    return {spec.name: spec.value(spec.default) for spec in rule_options()}


def help_text(spec: OptionSpec) -> str:
    """The option's help for argparse: ``%(default)s`` is the spec's own
    default, and any other ``%`` is literal (argparse would format it)."""
    default = spec.default
    shown = ",".join(default) if isinstance(default, (tuple, list, frozenset)) else str(default)
    return shown.replace("%", "%%").join(part.replace("%", "%%") for part in spec.help.split("%(default)s"))


class _FlagAction(argparse.Action):
    """``store_true`` for the command line. Not the string "store_true":
    flake8 would read the config value with ``getboolean`` and a typo there
    would be a traceback; as text it reaches :func:`resolve`, which names
    the file and line."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, True)


def register(parser: Any) -> None:
    """Add the options to flake8's option manager."""
    for spec in all_options():
        if spec.kind == "flag":
            parser.add_option(
                spec.flag, action=_FlagAction, default=None,
                parse_from_config=True, help=spec.help,
            )
        else:
            parser.add_option(
                spec.flag,
                default=None,
                parse_from_config=True,
                comma_separated_list=spec.kind == "list",
                normalize_paths=spec.kind == "path",
                help=help_text(spec),
            )
    # Used by the pack's own commands: report the scope and source text of
    # each violation and skip the baseline (the command matches it itself).
    parser.add_option("--hermetic-emit-context", action="store_true", default=False, help=argparse.SUPPRESS)


_UNSET: Any = object()


@dataclass(frozen=True)
class Settings:
    """Everything the rules and the checker read, resolved once per process."""

    test_files: tuple[str, ...] = DEFAULT_TEST_FILES
    baseline_path: str | None = None
    rules_path: str | None = None
    enabled: frozenset[str] = frozenset()
    emit_context: bool = False
    #: the project root (see :func:`project_root`): every path of the baseline,
    #: the ``test-files`` globs and SARIF's ``%SRCROOT%`` are relative to it
    config_dir: str = "."
    stdin: bool = False
    matcher: GlobMatcher = field(default=GlobMatcher(DEFAULT_TEST_FILES), compare=False)
    #: the user named the test files (``test-files``): their globs decide
    #: which files are test code, not pytest's configuration
    test_files_given: bool = False
    #: where ``test-files`` is set (``FILE:LINE`` or "the command line"), when given
    test_files_source: str = ""
    #: a config sets the pack's options, or a baseline file exists: the user
    #: adopted the pack (a selection leaving out every HRM code is then worth a word)
    configured: bool = False
    #: the values of the options the rules declare, by name; one left out has its default
    rule_options: dict[str, Any] = field(default_factory=dict, hash=False)
    #: the ``[tool.flake8-hermetic]`` table read ({} when none) and its file: the
    #: plugin takes its selection keys from it (:mod:`flake8_hermetic.selection`)
    table: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    pyproject: str | None = None
    #: the flake8 config flake8 used for this run, if any
    config_path: str | None = None

    def option(self, name: str) -> Any:
        """The value of the rule option ``name`` (as its ``convert`` made it)."""
        value = self.rule_options.get(name, _UNSET)
        if value is not _UNSET:
            return value
        defaults = rule_option_defaults()
        if name not in defaults:
            raise KeyError(f"no rule declares the option {name!r} (declared: {', '.join(sorted(defaults))})")
        return defaults[name]


# -- where the configuration lives ------------------------------------------

def preliminary_option(options: argparse.Namespace, name: str) -> Any:
    """``--config`` / ``--isolated`` as flake8 parsed them for this run.

    flake8 reads these in a preliminary pass and leaves them out of the
    options it hands plugins (they stay at their defaults there), so the
    value is taken from that pass: the ``args0`` of ``parse_args`` up the
    call stack.
    """
    value = getattr(options, name, None)
    if value:
        return value
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "parse_args":
            preliminary = frame.f_locals.get("args0")
            if isinstance(preliminary, argparse.Namespace):
                return getattr(preliminary, name, None)
        frame = frame.f_back  # type: ignore[assignment]
    return None


def find_flake8_config(options: argparse.Namespace) -> str | None:
    """The flake8 config file flake8 itself used for this run, if any."""
    if preliminary_option(options, "isolated"):
        return None
    explicit = preliminary_option(options, "config")
    if explicit:
        return os.path.abspath(explicit)
    return flake8_config_in(".")


def flake8_config_in(directory: str) -> str | None:
    """The flake8 config file flake8 would find from ``directory`` (absolute), if any."""
    try:
        from flake8.options.config import _find_config_file
    except ImportError:  # pragma: no cover - flake8 moved its internals
        return None
    found = _find_config_file(os.path.abspath(directory))
    return os.path.abspath(found) if found else None


def read_pyproject_table(path: str) -> dict[str, Any]:
    """The ``[tool.flake8-hermetic]`` table, or {} when there is none."""
    try:
        document = tomlfile.load(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    tool = document.get("tool", {})
    table = tool.get(PYPROJECT_TABLE, {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{_table_line(path, PYPROJECT_TABLE)}: [tool.{PYPROJECT_TABLE}] must be a table")
    return table


def _config_key_pattern(key: str) -> re.Pattern[str]:
    """``key`` as flake8 accepts it in a config: dashes or underscores."""
    return re.compile(r"^\s*" + "[-_]".join(map(re.escape, key.split("-"))) + r"\s*[=:]", re.IGNORECASE)


def _config_source(config_path: str | None, spec: OptionSpec, given: Any) -> tuple[str, str, str | None]:
    """Where a value flake8 handed over came from: ``(FILE:LINE or "command
    line", the directory a relative path in it is relative to, the value as
    the config writes it, or None from the command line)``.

    flake8 merges its config under the command line before a plugin sees
    the options, so the value is compared with the config's own text.
    """
    cwd = os.path.abspath(".")
    if not config_path or not os.path.isfile(config_path):
        return "command line", cwd, None
    parser = configparser.RawConfigParser()
    try:
        parser.read(config_path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return "command line", cwd, None
    names = (spec.flag[2:], spec.dest)
    raw = next((parser.get("flake8", n) for n in names if parser.has_option("flake8", n)), None)
    if raw is None:
        return "command line", cwd, None
    from flake8.utils import normalize_path, parse_comma_separated_list

    config_dir = os.path.dirname(config_path)
    if spec.kind == "list":
        same = list(given) == parse_comma_separated_list(raw)
    elif spec.kind == "path":
        same = given == normalize_path(raw, config_dir)
    elif spec.kind == "flag":
        same = isinstance(given, str)  # the command line's flag gives True
    else:
        same = given == raw
    if not same:
        return "command line", cwd, None
    return _config_line(config_path, spec.flag[2:]), config_dir, raw


def _config_line(config_path: str | None, key: str) -> str:
    """``FILE:LINE`` of ``key`` in a flake8 config, or "the command line"."""
    if config_path and os.path.isfile(config_path):
        pattern = _config_key_pattern(key)
        with open(config_path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if pattern.match(line):
                    return f"{config_path}:{number}"
    return "command line"


_TABLE_HEADER = re.compile(rf'^\s*\[\s*tool\s*\.\s*"?{PYPROJECT_TABLE}"?\s*\]')
_ANY_HEADER = re.compile(r"^\s*\[")


def _table_line(pyproject: str, key: str) -> str:
    """``FILE:LINE`` of ``key`` in the ``[tool.flake8-hermetic]`` table.

    A bare ``key =`` counts only inside the table (``baseline`` may well be
    a key of another tool's table); the dotted forms (``tool.flake8-hermetic.key``,
    ``flake8-hermetic.key``) count anywhere. Falls back to the table's header.
    """
    quoted = rf'"?{re.escape(key)}"?\s*='
    bare = re.compile(rf"^\s*{quoted}")
    dotted = re.compile(rf'^\s*(?:tool\s*\.\s*)?"?{PYPROJECT_TABLE}"?\s*\.\s*{quoted}|^\s*tool\s*\.\s*{quoted}')
    in_table = False
    header_line = 1
    with open(pyproject, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            if _TABLE_HEADER.match(line):
                in_table, header_line = True, number
            elif _ANY_HEADER.match(line):
                in_table = False
            elif (in_table and bare.match(line)) or dotted.match(line):
                return f"{pyproject}:{number}"
    return f"{pyproject}:{header_line}"


# -- values ------------------------------------------------------------------

def _as_list(value: Any, where: Callable[[], str], spec: OptionSpec) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part for part in re.split(r"[,\n]", value)]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where()}: {spec.name}: expected a list of strings, got {value!r}")
    items = tuple(v.strip() for v in value if v.strip())
    if not items and spec.name == "test-files":
        # nothing would be linted and every run would pass
        raise ConfigError(f"{where()}: {spec.name}: empty; name at least one glob, or leave the option out")
    return items


def _as_int(value: Any, where: Callable[[], str], spec: OptionSpec) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{where()}: {spec.name}: expected a whole number of bytes, got {value!r}")
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        if not (text.isascii() and text.isdigit()):  # "²" is a digit int() refuses
            raise ConfigError(f"{where()}: {spec.name}: expected a whole number of bytes, got {value!r}")
        value = int(text)
    if not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where()}: {spec.name}: expected a positive whole number of bytes, got {value!r}")
    return value


def _as_flag(value: Any, where: Callable[[], str], spec: OptionSpec) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in configparser.RawConfigParser.BOOLEAN_STATES:
        return configparser.RawConfigParser.BOOLEAN_STATES[value.strip().lower()]
    hint = did_you_mean(value.strip().lower(), FLAG_WORDS) if isinstance(value, str) else ""
    raise ConfigError(f"{where()}: {spec.name}: expected true or false, got {value!r}{hint}")


FLAG_WORDS = ("true", "false", "yes", "no", "on", "off")


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest of ``choices``, or ''."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _as_path(value: Any, where: Callable[[], str], spec: OptionSpec, base: str, written: Any = None) -> str:
    """A file path, absolute. ``written`` is the value as the config file
    spells it (flake8 hands over ``/`` normalised to ``''``)."""
    shown = value if written is None else written
    if not isinstance(value, str) or not value.strip():
        if isinstance(shown, str) and shown.strip():
            raise ConfigError(f"{where()}: {spec.name}: {shown.strip()!r} is a directory; expected a file path")
        raise ConfigError(f"{where()}: {spec.name}: expected a file path, got {shown!r}")
    if "\0" in value:
        raise ConfigError(f"{where()}: {spec.name}: a file path cannot hold a NUL byte, got {value!r}")
    path = os.path.normpath(os.path.join(base, value.strip()))
    if os.path.isdir(path):
        raise ConfigError(f"{where()}: {spec.name}: {shown.strip()!r} is a directory; expected a file path")
    return path


_VALIDATORS: dict[str, Callable[[Any, Callable[[], str], OptionSpec], Any]] = {
    "list": _as_list,
    "phrases": _as_list,
    "int": _as_int,
    "flag": _as_flag,
}


def _check_table_keys(table: dict[str, Any], pyproject: str | None, specs: Sequence[OptionSpec]) -> None:
    known = {spec.name for spec in specs} | {"hermetic-" + spec.name for spec in specs} | set(FLAKE8_KEYS)
    names = [*(spec.name for spec in specs), *FLAKE8_KEYS]
    for key in table:
        if key not in known:
            assert pyproject is not None
            # extend_select, test_files: flake8's config spelling of a key
            hint = did_you_mean(str(key).replace("_", "-").lower(), names) or f" (known: {', '.join(names)})"
            raise ConfigError(f"{_table_line(pyproject, key)}: [tool.{PYPROJECT_TABLE}]: unknown key {key!r}{hint}")


@dataclass(frozen=True)
class _Sources:
    """Where the values of one run come from, below the command line."""

    config_path: str | None
    pyproject: str | None
    table: dict[str, Any]
    table_dir: str

    def value(self, options: argparse.Namespace, spec: OptionSpec) -> Any:
        """The validated value of ``spec``, from the highest level that gives it."""
        return self.located(options, spec)[0]

    def located(self, options: argparse.Namespace, spec: OptionSpec) -> tuple[Any, Callable[[], str] | None]:
        """The validated value of ``spec``, and where a config file gives it
        (``FILE:LINE``; None: the command line or the default)."""
        given = getattr(options, spec.dest, None)
        written = None
        if given is not None:
            source, base, written = _config_source(self.config_path, spec, given)
            where: Callable[[], str] = lambda: source  # noqa: E731
            in_config = written is not None
        elif spec.name in self.table or "hermetic-" + spec.name in self.table:
            key = spec.name if spec.name in self.table else "hermetic-" + spec.name
            given = self.table[key]
            base = self.table_dir
            where = lambda: _table_line(self.pyproject, key)  # type: ignore[arg-type]  # noqa: E731
            in_config = True
        else:
            return spec.default, None
        if spec.kind == "path":
            return _as_path(given, where, spec, base, written), where if in_config else None
        return _VALIDATORS[spec.kind](given, where, spec), where if in_config else None


def resolve(options: argparse.Namespace, enabled: frozenset[str]) -> Settings:
    """Merge the command line, the flake8 config and the pyproject table."""
    config_path = find_flake8_config(options)
    isolated = bool(preliminary_option(options, "isolated"))
    pyproject = None if isolated else find_pyproject(os.path.dirname(config_path) if config_path else ".")
    table = read_pyproject_table(pyproject) if pyproject else {}
    table_dir = os.path.dirname(pyproject) if pyproject else os.path.abspath(".")
    specs = all_options()
    _check_table_keys(table, pyproject, specs)
    sources = _Sources(config_path, pyproject, table, table_dir)
    located = {spec.name: sources.located(options, spec) for spec in specs}
    values = {name: value for name, (value, _) in located.items()}
    root = project_root(config_path, pyproject, table)
    baseline_path = None
    if not values["no-baseline"]:
        baseline_path = values["baseline"] or os.path.join(root, BASELINE_NAME)
        configured_at = located["baseline"][1]
        # A checkout's own config must not make the commands write outside it;
        # a path on the command line is the user's own choice.
        if configured_at is not None and not inside(baseline_path, root):
            raise ConfigError(
                f"{configured_at()}: baseline: {baseline_path} is outside the project root {root}; "
                "a configured baseline must live inside the project (pass --baseline on the command line instead)"
            )
    filenames = getattr(options, "filenames", None) or []
    test_files_at = located["test-files"][1]
    return Settings(
        test_files=values["test-files"],
        baseline_path=baseline_path,
        rules_path=values["rules"],
        enabled=enabled,
        emit_context=bool(getattr(options, "hermetic_emit_context", False)),
        config_dir=root,
        stdin=list(filenames) == ["-"],
        matcher=GlobMatcher(values["test-files"]),
        # _Sources.value hands back the spec's own default object when no level gives the option
        test_files_given=values["test-files"] is not GLOBAL_OPTIONS_FIRST[0].default,
        test_files_source=test_files_at() if test_files_at is not None else "the command line",
        configured=bool(table) or configures_pack(config_path) or os.path.isfile(baseline_path or ""),
        rule_options={spec.name: spec.value(values[spec.name]) for spec in rule_options()},
        table=table,
        pyproject=pyproject,
        config_path=config_path,
    )


def enabled_codes(options: argparse.Namespace, codes: Sequence[str]) -> frozenset[str]:
    """The codes this run selects, decided by flake8's own decision engine."""
    from flake8.style_guide import Decision, DecisionEngine

    engine = DecisionEngine(options)
    return frozenset(code for code in codes if engine.decision_for(code) is Decision.Selected)
