"""Which runtime guard codes prove a static rule's finding.

One table, derived from the guard's own data: each runtime code's
``proves`` (:mod:`flake8_hermetic.guard.codes`) names the static rules whose
hazard writes the state it watches, so HRM601 proves HRM101, HRM102 and
HRM103, HRM611 proves HRM112 and HRM114. A rule its page only relates to
the code (HRM109, a read of the home; HRM108, a fixed ``/tmp`` path outside
the guard's own temp dir) has no runtime check. Plain data: importable
without pytest (``ruledocs`` uses it).
"""

from __future__ import annotations

from flake8_hermetic.guard.codes import CODES


def _table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for runtime in CODES:
        for rule in runtime.proves:
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
