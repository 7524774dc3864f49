"""Every built-in rule, by code: the one module that imports the families."""

from __future__ import annotations

from flake8_hermetic.rule import REGISTRY, Rule


def all_rules() -> dict[str, type[Rule]]:
    """Every built-in rule, by code, importing the families on first use."""
    import flake8_hermetic.rules  # noqa: F401  (importing the families registers their rules)

    return dict(sorted(REGISTRY.items()))
