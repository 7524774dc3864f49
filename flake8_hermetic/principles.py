"""The general principles by which a rule lets code through (issue 26).

A rule names the principles it applies in ``Rule.principles``; its page's
"What it leaves alone" list is generated from them (``ruledocs``), so an
exemption is written once, here, and holds for every rule that uses it.
Each principle has fixture lines on both sides of its edge in the fixture
files of the rules that use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principle:
    key: str
    title: str
    #: one or two sentences, Markdown, for the rule pages
    summary: str


PRINCIPLES: dict[str, Principle] = {}


def principle(key: str, title: str, summary: str) -> Principle:
    if key in PRINCIPLES:
        raise RuntimeError(f"duplicate principle {key}")
    PRINCIPLES[key] = made = Principle(key, title, " ".join(summary.split()))
    return made


# Each helper appends its principle(s) below, one call each (keys are kebab-case).
