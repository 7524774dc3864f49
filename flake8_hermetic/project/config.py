"""pytest's configuration, read the way pytest finds it for a file.

Walking up from the file's directory, the first directory holding one of
these decides (in this order within one directory, as pytest checks them):
``pytest.ini`` and ``.pytest.ini`` (always, even without a ``[pytest]``
section), ``pyproject.toml`` with a ``[tool.pytest.ini_options]`` table (or
pytest 9's native ``[tool.pytest]`` table), ``tox.ini`` with a ``[pytest]``
section, ``setup.cfg`` with a ``[tool:pytest]`` section. That directory is
the rootdir. Only ``python_files``, ``testpaths``, ``norecursedirs`` and
pytest-timeout's ``timeout`` (also ``--timeout`` in ``addopts``) are read;
a value left out has pytest's default. Nothing is imported or run.

A config that cannot be parsed is a :class:`ConfigError` naming the file
and line, shown as one line by the plugin.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass
from typing import Any

from flake8_hermetic import tomlfile
from flake8_hermetic.options import ConfigError


DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
DEFAULT_NORECURSEDIRS = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
#: the files pytest reads its configuration from, in the order it checks them in one directory
CONFIG_NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
INI_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest", "setup.cfg": "tool:pytest"}


@dataclass(frozen=True)
class PytestConfig:
    """The collection settings of one rootdir (``path`` None: no config found)."""

    path: str | None = None
    rootdir: str | None = None
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    testpaths: tuple[str, ...] = ()
    norecursedirs: tuple[str, ...] = DEFAULT_NORECURSEDIRS
    #: pytest-timeout's per-test bound in seconds (``timeout`` key, ``--timeout`` in addopts); None: unbounded
    timeout: float | None = None
    #: the names of the classes and functions pytest collects as tests (prefixes or globs)
    python_classes: tuple[str, ...] = ("Test",)
    python_functions: tuple[str, ...] = ("test",)


DEFAULT_CONFIG = PytestConfig()


def _words(value: Any) -> tuple[str, ...]:
    """An ini value (whitespace-separated ``args``/``linelist``) or a TOML list or string."""
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(item) for item in value)
    return ()


def _from_table(path: str, table: dict[str, Any]) -> PytestConfig:
    rootdir = os.path.dirname(path)
    return PytestConfig(
        path=path,
        rootdir=rootdir,
        python_files=_words(table["python_files"]) if "python_files" in table else DEFAULT_PYTHON_FILES,
        testpaths=_words(table.get("testpaths", ())),
        norecursedirs=_words(table["norecursedirs"]) if "norecursedirs" in table else DEFAULT_NORECURSEDIRS,
        timeout=_timeout(table),
        python_classes=_words(table["python_classes"]) if "python_classes" in table else ("Test",),
        python_functions=_words(table["python_functions"]) if "python_functions" in table else ("test",),
    )


def _timeout(table: dict[str, Any]) -> float | None:
    """pytest-timeout's bound: ``--timeout=N``/``--timeout N`` in addopts wins over the ``timeout`` key."""
    words = _words(table.get("addopts", ()))
    value: Any = table.get("timeout")
    for index, word in enumerate(words):
        if word.startswith("--timeout="):
            value = word.partition("=")[2]
        elif word == "--timeout" and index + 1 < len(words):
            value = words[index + 1]
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None  # 0 turns the bound off


def read_pyproject(path: str) -> PytestConfig | None:
    """The pytest table of a ``pyproject.toml``, or None when it has none."""
    try:
        document = tomlfile.load(path)
    except OSError:
        return None
    tool = document.get("tool")
    pytest = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(pytest, dict):
        return None
    legacy = pytest.get("ini_options")
    if isinstance(legacy, dict):
        return _from_table(path, legacy)
    # pytest 9's native table: the options sit in [tool.pytest] itself
    native = {key: value for key, value in pytest.items() if key != "ini_options"}
    return _from_table(path, native) if native or "ini_options" not in pytest else None


def read_ini(path: str, section: str, always: bool) -> PytestConfig | None:
    """The pytest section of an ini-style file; ``always``: the file is
    pytest's own (``pytest.ini``) and counts even without the section."""
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except configparser.ParsingError as exc:
        line = exc.errors[0][0] if getattr(exc, "errors", None) else 1
        raise ConfigError(f"{path}:{line}: invalid ini file: cannot parse {exc.errors[0][1]}") from None
    except configparser.Error as exc:
        line = getattr(exc, "lineno", 1)
        raise ConfigError(f"{path}:{line}: invalid ini file: {exc.message}") from None  # type: ignore[attr-defined]
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}:1: cannot read: {exc}") from None
    if not parser.has_section(section):
        return PytestConfig(path=path, rootdir=os.path.dirname(path)) if always else None
    return _from_table(path, dict(parser.items(section)))


def config_in(directory: str) -> PytestConfig | None:
    """The pytest config of ``directory`` itself, if one of its files is one."""
    for name in CONFIG_NAMES:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        if name == "pyproject.toml":
            found = read_pyproject(path)
        else:
            found = read_ini(path, INI_SECTIONS[name], always=name in ("pytest.ini", ".pytest.ini"))
        if found is not None:
            return found
    return None


class ConfigFinder:
    """:func:`config_in` for a directory and its parents, each directory read once.

    A malformed config is kept in ``problems`` (for the caller to report
    once) and counts as no config: the files below it get pytest's defaults.
    """

    def __init__(self) -> None:
        self._found: dict[str, PytestConfig] = {}
        self.problems: list[ConfigError] = []

    def take_problems(self) -> list[ConfigError]:
        found, self.problems = self.problems, []
        return found

    def for_directory(self, directory: str) -> PytestConfig:
        directory = os.path.abspath(directory)
        walked: list[str] = []
        found: PytestConfig | None = None
        while True:
            known = self._found.get(directory)
            if known is not None:
                found = known
                break
            walked.append(directory)
            try:
                found = config_in(directory)
            except ConfigError as exc:
                self.problems.append(exc)
                found = DEFAULT_CONFIG
            if found is not None:
                break
            parent = os.path.dirname(directory)
            if parent == directory:
                found = DEFAULT_CONFIG
                break
            directory = parent
        for seen in walked:
            self._found[seen] = found
        return found
