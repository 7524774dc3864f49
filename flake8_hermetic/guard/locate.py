"""Where the guard's baseline is: where the static side would find it.

Kept apart from the decision (:mod:`flake8_hermetic.guard.verdict`), so a
clean run whose baseline holds no runtime entry needs nothing more.
"""

from __future__ import annotations

import os


def _same_key(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_dev


def _flake8_config(start: str) -> str | None:
    """The config file flake8 would find from ``start`` (its own search, without
    importing flake8 into every guarded run): the first ``setup.cfg``,
    ``tox.ini`` or ``.flake8`` with a ``flake8`` section, from ``start`` up,
    stopping below the home directory and at the root."""
    import configparser  # here: a guarded run with --hermetic-no-baseline never needs it

    home = os.path.expanduser("~")
    home_key = _same_key(home) if home != "~" else None
    path = os.path.abspath(start)
    key = _same_key(path)
    while True:
        for candidate in ("setup.cfg", "tox.ini", ".flake8"):
            parser = configparser.RawConfigParser()
            config = os.path.join(path, candidate)
            try:
                parser.read(config, encoding="UTF-8")
            except (UnicodeDecodeError, configparser.Error):
                continue
            if "flake8" in parser or "flake8:local-plugins" in parser:
                return config
        parent = os.path.dirname(path)
        parent_key = _same_key(parent)
        if parent_key == key or parent_key == home_key:
            return None
        path, key = parent, parent_key


def _flake8_option(config_path: str, name: str) -> str | None:
    import configparser

    parser = configparser.RawConfigParser()
    try:
        parser.read(config_path, encoding="utf-8")
    except (configparser.Error, OSError):
        return None
    for key in (name, name.replace("-", "_")):
        if parser.has_option("flake8", key):
            return parser.get("flake8", key).strip()
    return None


def find_baseline(start: str, explicit: str | None = None, no_baseline: bool = False) -> str | None:
    """The baseline the static side would use from ``start``: ``--hermetic-baseline``
    (given here), the flake8 config's ``hermetic-baseline``, the pyproject
    table's ``baseline``, else ``hermetic-baseline.txt`` next to the config."""
    if no_baseline:
        return None
    if explicit:
        return os.path.abspath(os.path.join(start, explicit))
    from flake8_hermetic.baseline.format import BASELINE_NAME

    config = _flake8_config(start)
    if config:
        if (_flake8_option(config, "hermetic-no-baseline") or "").lower() in ("1", "true", "yes", "on"):
            return None
        named = _flake8_option(config, "hermetic-baseline")
        directory = os.path.dirname(config)
        return os.path.abspath(os.path.join(directory, named or BASELINE_NAME))
    from flake8_hermetic.settings import find_pyproject, read_pyproject_table

    pyproject = find_pyproject(start)
    table = read_pyproject_table(pyproject) if pyproject else {}
    if pyproject and table:
        if table.get("no-baseline") or table.get("hermetic-no-baseline"):
            return None
        named = table.get("baseline") or table.get("hermetic-baseline")
        return os.path.abspath(os.path.join(os.path.dirname(pyproject), named or BASELINE_NAME))
    return os.path.abspath(os.path.join(start, BASELINE_NAME))
