"""Which runtime guard codes prove a static rule's finding.

One table, derived from the guard's own data: each runtime code's
``prevented_by`` (:mod:`flake8_hermetic.guard.codes`) links the static rules
that flag its shape, so HRM601 names HRM101 and HRM108, HRM611 names HRM112
and HRM114. Plain data: importable without pytest (``ruledocs`` uses it).
"""

from __future__ import annotations

import re

from flake8_hermetic.guard.codes import CODES

_LINK = re.compile(r"\[(HRM[0-9]{3})\]\(")


def _table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for runtime in CODES:
        for rule in _LINK.findall(runtime.prevented_by):
            table.setdefault(rule, []).append(runtime.code)
    return {rule: tuple(sorted(codes)) for rule, codes in sorted(table.items())}


#: static rule -> the runtime codes whose leak, in the test that ran the line, proves it
RUNTIME_OF: dict[str, tuple[str, ...]] = _table()


def proven_by(code: str) -> tuple[str, ...]:
    """The runtime codes that prove ``code``'s findings (empty: no runtime check)."""
    return RUNTIME_OF.get(code, ())


def how_it_is_proven(code: str) -> str | None:
    """The rule page's "How it is proven" paragraph, or None for a rule with no runtime counterpart."""
    codes = proven_by(code)
    if not codes:
        return None
    named = " or ".join(f"[{runtime}]({runtime}.md)" for runtime in codes)
    return (
        f"`flake8-hermetic prove` runs the test that first executes the flagged line under the runtime guard, "
        f"once as it is and once with a failure injected right after the statement: the finding is proven "
        f"(`leaks`, `leaks-on-failure`) when the guard reports {named} in that test, and `no-leak` when it "
        "reports neither (see `docs/prove.md`)."
    )
