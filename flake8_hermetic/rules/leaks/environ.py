"""The process environment mapping, by its canonical names."""

from __future__ import annotations


ENVIRON = frozenset({"os.environ", "os.environb"})
