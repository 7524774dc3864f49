"""Every built-in rule, by code: the one module that imports the families."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flake8_hermetic.rule import REGISTRY, Rule

if TYPE_CHECKING:
    from flake8_hermetic.guard.codes import RuntimeCode


def all_rules() -> dict[str, type[Rule]]:
    """Every built-in rule, by code, importing the families on first use."""
    import flake8_hermetic.rules  # noqa: F401  (importing the families registers their rules)

    return dict(sorted(REGISTRY.items()))


def runtime_codes() -> dict[str, RuntimeCode]:
    """The runtime guard's codes (``HRM6xx``), by code: not flake8 rules, but
    documented, listed and explained with them."""
    from flake8_hermetic.guard.codes import BY_CODE

    return dict(sorted(BY_CODE.items()))
