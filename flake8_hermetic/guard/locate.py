"""Where the guard's baseline is: where the static side would find it.

Kept apart from the decision (:mod:`flake8_hermetic.guard.verdict`), so a
clean run whose baseline holds no runtime entry needs nothing more.
"""

from __future__ import annotations

import os
from typing import Any

from flake8_hermetic.root import configures_pack, find_pyproject, inside, project_root, real_location


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


def _table(pyproject: str) -> dict[str, Any]:
    """The pyproject's ``[tool.flake8-hermetic]`` table. The static side's
    reader (and its imports) only when the file can hold one."""
    try:
        with open(pyproject, "rb") as handle:
            if b"flake8-hermetic" not in handle.read():
                return {}
    except OSError:
        return {}
    from flake8_hermetic.settings import read_pyproject_table

    return read_pyproject_table(pyproject)


def locate(start: str, explicit: str | None = None, no_baseline: bool = False) -> tuple[str | None, str]:
    """``(baseline, project root)`` as the static side finds them from
    ``start``: the baseline is ``--hermetic-baseline`` (given here), the
    flake8 config's ``hermetic-baseline``, the pyproject table's
    ``baseline``, else ``hermetic-baseline.txt`` in the project root; the
    root is :func:`flake8_hermetic.root.project_root`'s. A configured
    baseline outside the root is refused (:class:`BaselineError`)."""
    from flake8_hermetic.baseline.format import BASELINE_NAME, BaselineError

    config = _flake8_config(start)
    pyproject = find_pyproject(os.path.dirname(config) if config else start)
    table = _table(pyproject) if pyproject else {}
    root = project_root(config, pyproject, table) if (config or table) else os.path.abspath(start)
    if no_baseline:
        return None, root
    if explicit:
        return os.path.abspath(os.path.join(start, explicit)), root
    named = None
    key = "hermetic-baseline"
    if config and configures_pack(config):
        if (_flake8_option(config, "hermetic-no-baseline") or "").lower() in ("1", "true", "yes", "on"):
            return None, root
        named = _flake8_option(config, "hermetic-baseline")
        source = config
    elif table:
        if table.get("no-baseline") or table.get("hermetic-no-baseline"):
            return None, root
        key = "baseline" if table.get("baseline") else "hermetic-baseline"
        named = table.get(key)
        source = pyproject or ""
    if not named:
        return os.path.join(root, BASELINE_NAME), root
    baseline = os.path.abspath(os.path.join(os.path.dirname(source), str(named)))
    if not inside(baseline, root):
        from flake8_hermetic.settings import _config_line, _table_line

        where = _config_line(source, key) if source == config else _table_line(source, key)
        file, _, line = where.rpartition(":")
        real = real_location(baseline)
        really = f" (really {real}, through a symlinked directory)" if real != baseline else ""
        raise BaselineError(file or source, int(line) if line.isdigit() else 1,
                            f"baseline: {baseline}{really} is outside the project root {root}; "
                            "a configured baseline must live inside the project")
    return baseline, root


def find_baseline(start: str, explicit: str | None = None, no_baseline: bool = False) -> str | None:
    """The baseline the static side would use from ``start`` (see :func:`locate`)."""
    return locate(start, explicit, no_baseline)[0]
