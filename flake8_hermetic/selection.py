"""flake8's own selection options, as the pack's commands take them.

``check`` and the ``baseline`` commands accept flake8's ``--select``,
``--extend-select``, ``--ignore``, ``--extend-ignore``,
``--per-file-ignores``, ``--exclude`` and ``--extend-exclude``, and the
``[tool.flake8-hermetic]`` table of ``pyproject.toml`` may set the same
keys, so a project without a flake8 config can choose its rules there.
Either way the values become flake8 command-line arguments: flake8's own
option parsing and decision engine stay the only judge of what runs and
what is shown.

Precedence, per key and highest first: the command line, the flake8 config,
the table (the pack's own options rank the same way, see
:mod:`flake8_hermetic.settings`). A key the flake8 config sets is therefore
left to it; a table key is turned into an argument only when neither the
command line nor the flake8 config gives it. Plain ``flake8`` never reads
``pyproject.toml``: the table's keys act in the pack's commands only.

Values are checked here, so a typo is one line naming where it came from
rather than a selection that silently matches nothing (flake8 itself
accepts ``--select=foo`` and then checks nothing).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flake8.defaults import VALID_CODE_PREFIX
from flake8.options.config import load_config
from flake8.style_guide import Decision, DecisionEngine
from flake8.utils import normalize_path, parse_comma_separated_list, parse_files_to_codes_mapping

from flake8_hermetic.settings import (
    FLAKE8_KEYS,
    ConfigError,
    _table_line,
    did_you_mean,
    find_pyproject,
    read_pyproject_table,
)

PACK_PREFIX = "HRM"
STALE = "HRM900"
PROJECT_CODE = re.compile(r"^HRM8[0-9]{0,2}$")  # the project's pattern rules (HRM8nn)
_LOOKALIKES = str.maketrans("OIL", "011")
CODE_KEYS = ("select", "extend-select", "ignore", "extend-ignore")
PATH_KEYS = ("exclude", "extend-exclude")
PER_FILE_KEY = "per-file-ignores"
assert set(FLAKE8_KEYS) == {*CODE_KEYS, *PATH_KEYS, PER_FILE_KEY}

Where = Callable[[], str]


def _items(value: Any, where: Where, key: str, what: str) -> list[str]:
    """A TOML array of strings, or a string flake8 would split (commas, spaces)."""
    if isinstance(value, str):
        return parse_comma_separated_list(value)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value if item.strip()]
        for item in items:
            if "," in item:
                raise ConfigError(f"{where()}: {key}: {item!r}: one {what} per item, without commas")
        return items
    raise ConfigError(f"{where()}: {key}: expected a list of {what}s or a comma-separated string, got {value!r}")


def _codes(value: Any, where: Where, key: str) -> list[str]:
    codes = _items(value, where, key, "code")
    for code in codes:
        problem = code_problem(code) or (retired_problem(code) if key in SELECT_KEYS else "")
        if problem:
            raise ConfigError(f"{where()}: {key}: {problem}")
    return codes


SELECT_KEYS = ("select", "extend-select")


def retired_codes() -> dict[str, str]:
    """The retired rules' codes, with why each was retired."""
    from flake8_hermetic.catalog import all_rules

    return {code: rule.retired for code, rule in all_rules().items() if rule.retired}


def retired_problem(code: str) -> str:
    """Why a select naming ``code`` exactly is refused (``''``: it is not a retired code): it would
    check nothing. A prefix that covers a retired code (``HRM5``) selects the others."""
    why = retired_codes().get(code.upper())
    return f"{code.upper()} is retired and checks nothing ({why}); take it out of the selection" if why else ""


def pack_codes() -> list[str]:
    """Every code a selection may name of the pack: the rules', HRM900 and
    the runtime guard's (a baseline's ``HRM6xx`` entries)."""
    from flake8_hermetic.catalog import all_rules, runtime_codes

    return sorted({*all_rules(), *runtime_codes(), STALE})


def code_problem(code: str, extra: Sequence[str] = ()) -> str:
    """Why ``code`` cannot be a selector (``''``: it can). A selector of the
    pack's (``HRM...``, any case) must be a prefix of one of its codes or of
    ``extra`` (the project's pattern rules); ``HRM8`` and ``HRM8nn`` are the
    project's own space and always accepted."""
    hrm_like = code[:3].upper() == PACK_PREFIX
    if not hrm_like:
        if VALID_CODE_PREFIX.match(code):
            return ""
        return f"{code!r} is not an error code or prefix (like E501, W, HRM1)"
    known = [*pack_codes(), *extra]
    if VALID_CODE_PREFIX.match(code) and (
        any(known_code.startswith(code) for known_code in known) or PROJECT_CODE.match(code)
    ):
        return ""
    # the usual slips first: lower case, the letter O for a zero, I or l for a one
    fixed = code.upper().translate(_LOOKALIKES)
    if fixed != code and code_problem(fixed, extra) == "":
        suggestion = f" (did you mean {fixed!r}?)"
    else:
        suggestion = did_you_mean(code.upper(), [c for c in known if len(c) == len(code)] or known)
    return f"{code!r} is not an error code of the pack (flake8-hermetic){suggestion}"


def _relative(path: str, base: str) -> str:
    """``path`` as flake8 reads one (made absolute only when it holds a
    separator), relative to ``base``, then written relative to the working
    directory when it can be: an absolute Windows path's drive colon would
    split a ``per-file-ignores`` mapping."""
    if base == "" or ("/" not in path and (not os.altsep or os.altsep not in path)):
        return path
    absolute = normalize_path(path, base)
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive
        return absolute
    return relative if relative != "." else absolute


def _paths(value: Any, where: Where, key: str, base: str) -> list[str]:
    return [_relative(path, base) for path in _items(value, where, key, "pattern")]


def _per_file(value: Any, where: Where, key: str, base: str) -> str:
    """``{glob = [codes]}`` (or ``{glob = "E1,E2"}``), or flake8's own
    ``"glob:codes glob:codes"`` string: flake8's string, checked."""
    if isinstance(value, dict):
        mapping = []
        for glob, codes in value.items():
            if not glob.strip() or any(c.isspace() or c in ",:" for c in glob):
                raise ConfigError(f"{where()}: {key}: {glob!r}: a pattern may not be empty or hold spaces, ',' or ':'")
            mapping.append((glob, _codes(codes, where, f"{key}: {glob}")))
    elif isinstance(value, str):
        try:
            mapping = parse_files_to_codes_mapping(value)
        except Exception:  # flake8's ExecutionError: a message of several lines
            raise ConfigError(
                f"{where()}: {key}: expected 'pattern:codes' pairs (like 'tests/*.py:HRM105,E501'), got {value!r}"
            ) from None
        for glob, codes in mapping:
            _codes(codes, where, f"{key}: {glob}")
    else:
        raise ConfigError(f"{where()}: {key}: expected a table of pattern = [codes] or flake8's string, got {value!r}")
    wanted = [(_relative(glob, base), codes) for glob, codes in mapping if codes]
    text = " ".join(f"{glob}:{','.join(codes)}" for glob, codes in wanted)
    try:
        read_back = parse_files_to_codes_mapping(text)
    except Exception:
        read_back = None
    if read_back != wanted:  # a pattern flake8 would read otherwise (as a code, say)
        raise ConfigError(f"{where()}: {key}: flake8 cannot read these patterns back: {value!r}")
    return text


def _argument(key: str, value: Any, where: Where, base: str) -> str:
    if key in CODE_KEYS:
        text = ",".join(_codes(value, where, key))
    elif key in PATH_KEYS:
        text = ",".join(_paths(value, where, key, base))
    else:
        text = _per_file(value, where, key, base)
    return f"--{key}={text}"


def dest(key: str) -> str:
    return key.replace("-", "_")


def command_line_arguments(args: argparse.Namespace) -> list[str]:
    """flake8 arguments for the selection flags the user gave a command."""
    return [
        _argument(key, getattr(args, dest(key)), lambda: "command line", "")
        for key in FLAKE8_KEYS
        if getattr(args, dest(key), None) is not None
    ]


def _given(argv: Sequence[str]) -> set[str]:
    """The keys the flake8 command line ``argv`` already sets."""
    before = argv[: argv.index("--")] if "--" in argv else argv
    return {arg[2:].partition("=")[0] for arg in before if arg.startswith("--")}


def table_arguments(argv: Sequence[str]) -> list[str]:
    """flake8 arguments for the table's keys that neither ``argv`` nor the
    flake8 config (found as flake8 finds it for ``argv``) sets."""
    from flake8.main.options import stage1_arg_parser

    preliminary, _ = stage1_arg_parser().parse_known_args(list(argv))
    if preliminary.isolated:
        return []
    cfg, cfg_dir = load_config(preliminary.config, preliminary.append_config, isolated=False)
    pyproject = find_pyproject(cfg_dir)
    table = read_pyproject_table(pyproject) if pyproject else {}
    if not table:
        return []
    assert pyproject is not None
    given = _given(argv)
    in_config = {
        key for key in FLAKE8_KEYS
        if cfg.has_section("flake8") and (cfg.has_option("flake8", key) or cfg.has_option("flake8", dest(key)))
    }
    extra = []
    for key in FLAKE8_KEYS:
        if key in table and key not in given and key not in in_config:
            where: Where = lambda key=key: _table_line(pyproject, key)  # type: ignore[misc]  # noqa: E731
            extra.append(_argument(key, table[key], where, os.path.dirname(pyproject)))
    return extra


def add_options(parser: argparse.ArgumentParser) -> None:
    """The selection flags, spelt and explained as flake8's."""
    group = parser.add_argument_group("flake8's selection (flake8's meaning; also [tool.flake8-hermetic] keys)")
    helps = {
        "select": "codes or prefixes to report (replaces the default selection)",
        "extend-select": "codes or prefixes to add to the selection, e.g. an off-by-default rule",
        "ignore": "codes or prefixes to skip (replaces the default ignore list)",
        "extend-ignore": "codes or prefixes to skip, in addition to the ignore list",
        "per-file-ignores": "codes to skip per file pattern: 'tests/legacy/*.py:HRM105 conftest.py:HRM4'",
        "exclude": "file or directory patterns not to lint (replaces flake8's default list)",
        "extend-exclude": "file or directory patterns not to lint, in addition to --exclude",
    }
    for key in FLAKE8_KEYS:
        metavar = "PATTERNS" if key in PATH_KEYS else "MAPPING" if key == PER_FILE_KEY else "CODES"
        group.add_argument(f"--{key}", dest=dest(key), metavar=metavar, help=helps[key])


# -- the pack's own selection, in every entry point ------------------------------

@dataclass(frozen=True)
class PackSelection:
    """The ``[tool.flake8-hermetic]`` table's selection keys, for the pack's
    own codes only (a table's ``select = ["HRM"]`` does not turn pycodestyle
    off). Read by the plugin wherever flake8 runs it; flake8's own options
    filter on top."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    #: the table's ``per-file-ignores`` as flake8's mapping string, the pack's
    #: codes only, patterns written as flake8 reads them from the working directory
    per_file_ignores: str = ""

    @property
    def selectors(self) -> tuple[str, ...]:
        return (*(self.select or ()), *self.extend_select)

    @property
    def ignores(self) -> tuple[str, ...]:
        return (*self.ignore, *self.extend_ignore)

    def engine(self) -> DecisionEngine:
        """flake8's decision engine over the table's keys alone: no ``select``
        keeps every code of the pack."""
        return DecisionEngine(argparse.Namespace(
            select=list(self.select) if self.select is not None else None,
            extend_select=list(self.extend_select),
            ignore=list(self.ignore),
            extend_ignore=list(self.extend_ignore),
            extended_default_select=[PACK_PREFIX],
            extended_default_ignore=[],
        ))


def table_selection(table: dict[str, Any], pyproject: str | None) -> PackSelection:
    """The table's selection keys, checked (one line naming ``FILE:LINE``)."""
    if not table or pyproject is None:
        return PackSelection()

    def where(key: str) -> Where:
        return lambda: _table_line(pyproject, key)

    def codes(key: str) -> tuple[str, ...]:
        return tuple(_codes(table[key], where(key), key)) if key in table else ()

    per_file = ""
    if PER_FILE_KEY in table:
        text = _per_file(table[PER_FILE_KEY], where(PER_FILE_KEY), PER_FILE_KEY, os.path.dirname(pyproject))
        ours = [(glob, [c for c in group if c.startswith(PACK_PREFIX)])
                for glob, group in parse_files_to_codes_mapping(text)]
        per_file = " ".join(f"{glob}:{','.join(group)}" for glob, group in ours if group)
    return PackSelection(
        select=codes("select") if "select" in table else None,
        extend_select=codes("extend-select"),
        ignore=codes("ignore"),
        extend_ignore=codes("extend-ignore"),
        per_file_ignores=per_file,
    )


def _option_codes(options: argparse.Namespace) -> dict[str, list[str]]:
    """The codes flake8's own selection options name, by key."""
    found = {key: list(getattr(options, dest(key), None) or ()) for key in CODE_KEYS}
    per_file = getattr(options, "per_file_ignores", "") or ""
    try:
        found[PER_FILE_KEY] = [code for _, group in parse_files_to_codes_mapping(per_file) for code in group]
    except Exception:  # flake8 reports its own malformed mapping
        found[PER_FILE_KEY] = []
    return found


def check_option_codes(options: argparse.Namespace, config_path: str | None, extra: Sequence[str] = ()) -> None:
    """flake8 accepts ``--select=HRM1O5`` and then matches nothing: a code
    of the pack's form that is none of its codes is refused here, with the
    flake8 config's ``FILE:LINE`` when it comes from there."""
    for key, codes in _option_codes(options).items():
        for code in codes:
            if code[:3].upper() != PACK_PREFIX:
                continue  # another plugin's (flake8 itself checks the form of config values)
            problem = code_problem(code, extra) or (retired_problem(code) if key in SELECT_KEYS else "")
            if problem:
                raise ConfigError(f"{_option_source(config_path, key, code)}: {key}: {problem}")


def _option_source(config_path: str | None, key: str, code: str) -> str:
    """``FILE:LINE`` of the flake8 config line whose ``key`` names ``code``, else "command line"."""
    if config_path and os.path.isfile(config_path):
        pattern = re.compile(r"^\s*" + "[-_]".join(map(re.escape, key.split("-"))) + r"\s*[=:]", re.IGNORECASE)
        with open(config_path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
        for number, line in enumerate(lines, 1):
            if not pattern.match(line):
                continue
            # the value, with its continuation lines
            value = [line.partition("=")[2] if "=" in line else line.partition(":")[2]]
            for more in lines[number:]:
                if not more[:1].isspace():
                    break
                value.append(more)
            if code in re.split(r"[\s,:]+", " ".join(value)):
                return f"{config_path}:{number}"
    return "command line"


def named(code: str, selectors: Sequence[str]) -> bool:
    """Does a select or extend-select name ``code``: its code, or a prefix of
    it from ``HRM`` on (``H`` alone is no one's choice of an opinionated rule)?"""
    return any(len(selector) >= len(PACK_PREFIX) and code.startswith(selector) for selector in selectors)


def selectors_of(options: argparse.Namespace, table: PackSelection) -> tuple[str, ...]:
    """Every select and extend-select: flake8's (command line, flake8 config) and the table's."""
    return (*(options.select or ()), *(getattr(options, "extend_select", None) or ()), *table.selectors)


def pack_enabled(
    options: argparse.Namespace, table: PackSelection, codes: Sequence[str], off: Sequence[str] = (),
) -> frozenset[str]:
    """The codes of ``codes`` the pack runs: the table's selection keeps
    them, flake8's own (its decision engine, as it will filter the output)
    keeps them, and one of ``off`` (the off-by-default rules) also needs a
    select or extend-select that names it, wherever that is written: an
    ``ignore =`` list (which replaces flake8's default one) never turns it
    on, as flake8-bugbear keeps its B9 codes off."""
    flake8_engine = DecisionEngine(options)
    table_engine = table.engine()
    selectors = selectors_of(options, table)
    off_set = set(off)
    return frozenset(
        code for code in codes
        if table_engine.decision_for(code) is Decision.Selected
        and flake8_engine.decision_for(code) is Decision.Selected
        and (code not in off_set or named(code, selectors))
    )


def stale_follows(options: argparse.Namespace, table: PackSelection, enabled: Sequence[str] | frozenset[str]) -> bool:
    """HRM900 runs wherever a rule of the pack runs, whatever the selection's
    spelling (``select = HRM1`` leaves out ``HRM9``), unless an ignore names
    it (``HRM9``, ``HRM90``, ``HRM900``): a broad ``ignore = HRM`` that a
    select overrides for some rules does not."""
    if not enabled:
        return False
    ignores = (*(options.ignore or ()), *(getattr(options, "extend_ignore", None) or ()), *table.ignores)
    return not any(len(ignore) > len(PACK_PREFIX) and STALE.startswith(ignore) for ignore in ignores)
