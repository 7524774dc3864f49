"""A rule's findings do not depend on which other rules run beside it.

Rules share facts computed once per function (``Context.per_function``):
if a shared fact depended on where, or by which rule, it was first asked
for, a rule could report one thing alone and another in a run of every
rule. Each rule is run alone and inside a run of all rules, over every
fixture and the project's own tests, and must report the same.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.engine import Engine
from flake8_hermetic.settings import Settings
from tests.helpers import source_corpus_params

RULES = all_rules()

Finding = tuple[int, int, str, str]


def lint(rules: list, text: str, path: str) -> list[Finding]:
    found = Engine(rules).lint(ast.parse(text), text.splitlines(True), path, Settings())
    return sorted((v.line, v.col, v.text, v.where) for v in found)


def alone_and_together(text: str, path: str) -> tuple[list[Finding], list[Finding]]:
    together = lint(list(RULES.values()), text, path)
    alone = sorted(finding for rule in RULES.values() for finding in lint([rule], text, path))
    return alone, together


@pytest.mark.parametrize("path", source_corpus_params())
def test_each_rule_alone_reports_what_it_reports_among_all(path: Path) -> None:
    alone, together = alone_and_together(path.read_text(encoding="utf-8"), str(path))
    assert alone == together


def test_a_fact_shared_across_nested_scopes_follows_the_bindings_where_it_is_asked() -> None:
    # HRM201 asks for the outer coroutine's deadlines from inside a(), where
    # `asyncio` is the module; HRM204 asks from inside b(), where a local
    # hides it. Whichever asks first, HRM204 reports the same.
    source = textwrap.dedent(
        """
        import asyncio
        import time


        async def test_outer():
            ev = asyncio.Event()

            async def a():
                time.sleep(1)

            async def b():
                asyncio = None
                await ev.wait()

            await asyncio.wait_for(a(), 1)
            await asyncio.wait_for(b(), 1)
        """
    )
    hrm204 = [f for f in lint([RULES["HRM204"]], source, "tests/test_x.py")]
    both = [f for f in lint([RULES["HRM201"], RULES["HRM204"]], source, "tests/test_x.py") if "HRM204" in f[2]]
    assert [f[:2] for f in hrm204] == [(14, 8)]
    assert both == hrm204
