"""An option of the pack: declared by the rule that reads it, or global.

A rule declares its knobs on its class (``options = (OptionSpec(...),)``);
:mod:`flake8_hermetic.settings` registers every declared option with flake8,
reads it from the command line, the flake8 config and the pyproject table,
validates it, and hands the rule its value through ``settings.option(name)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

#: How a value is spelt and validated:
#: "list"     comma-separated words (flake8's own list parsing);
#: "phrases"  comma-separated items that may hold spaces ("git status");
#: "int"      a positive whole number;
#: "path"     a file path, relative to the file that gave it;
#: "flag"     true or false.
OptionKind = Literal["list", "phrases", "int", "path", "flag"]


class ConfigError(Exception):
    """A bad option value or config file; ``str()`` is the one line to show."""


@dataclass(frozen=True)
class OptionSpec:
    name: str  # without the leading "hermetic-"
    kind: OptionKind
    default: Any
    help: str
    #: turns the validated value (and the default) into what the rule reads,
    #: once per run: e.g. ``frozenset`` for a set of names
    convert: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in get_args(OptionKind):
            raise ValueError(f"option {self.name!r}: kind {self.kind!r} is not one of {get_args(OptionKind)}")

    @property
    def flag(self) -> str:
        return f"--hermetic-{self.name}"

    @property
    def dest(self) -> str:
        return "hermetic_" + self.name.replace("-", "_")

    def value(self, validated: Any) -> Any:
        """What ``settings.option(name)`` returns for a validated value."""
        return self.convert(validated) if self.convert is not None else validated


class RuleSettings(Protocol):
    """What the rules, their context and the engine read of the settings:
    the value of a declared option. ``settings.Settings`` implements it; the
    layers below the settings are typed against this, so that none of them
    imports ``settings`` (which imports the catalog, and so every rule), not
    even under ``TYPE_CHECKING`` (``tests/test_layout.py``)."""

    def option(self, name: str) -> Any:
        """The value of the rule option ``name`` (as its ``convert`` made it)."""
