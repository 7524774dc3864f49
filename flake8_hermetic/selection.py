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
from collections.abc import Callable, Sequence
from typing import Any

from flake8.defaults import VALID_CODE_PREFIX
from flake8.options.config import load_config
from flake8.utils import normalize_path, parse_comma_separated_list, parse_files_to_codes_mapping

from flake8_hermetic.settings import (
    FLAKE8_KEYS,
    ConfigError,
    _table_line,
    find_pyproject,
    read_pyproject_table,
)

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
        if not VALID_CODE_PREFIX.match(code):
            raise ConfigError(
                f"{where()}: {key}: {code!r} is not an error code or prefix (like E501, W, HRM1)"
            )
    return codes


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
