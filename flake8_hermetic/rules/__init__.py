"""The built-in rule families; importing this module registers every rule."""

from flake8_hermetic.rules import collection, design, determinism, leaks, portability  # noqa: F401
