"""The ratchet baseline: its file format and how violations are matched to it."""

from flake8_hermetic.baseline.format import Baseline, BaselineError, Entry, load, parse, render
from flake8_hermetic.baseline.matching import match

__all__ = ["Baseline", "BaselineError", "Entry", "load", "match", "parse", "render"]
