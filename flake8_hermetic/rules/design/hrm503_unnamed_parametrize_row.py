"""HRM503: a ``parametrize`` row without an id."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


PARAM = "pytest.param"


class UnnamedParametrizeRowRule(Rule):
    """
    Flags a `@pytest.mark.parametrize` row that is not `pytest.param(..., id=...)` when no `ids=` is given.

    Each row of a literal list (or tuple) of argument values is checked,
    and the element of a comprehension that builds the rows; rows that
    come from a name or a function call cannot be seen and are left
    alone. `metafunc.parametrize(...)` in `pytest_generate_tests` is
    checked the same way.

    ## Why is this bad?
    Without an id pytest names each case after its values (`test_x[1-2]`,
    the whole of a long string) or, for any other object, after the
    argument name and the row's position (`test_x[payload0]`). Positional
    ids shift when a row is added, removed or reordered, so a failure
    report, a `-k` selection, a baseline entry or a CI history no longer
    points at the same case; value ids change whenever the data does. A
    readable id also says what the case is for, which raw values rarely
    do.

    ## Example
    ```python
    @pytest.mark.parametrize("raw, expected", [("1", 1), ("0x1", 1)])
    def test_parse(raw, expected):
        assert parse(raw) == expected
    ```

    ## Use instead
    ```python
    @pytest.mark.parametrize(
        "raw, expected",
        [pytest.param("1", 1, id="decimal"), pytest.param("0x1", 1, id="hex")],
    )
    def test_parse(raw, expected):
        assert parse(raw) == expected
    ```

    ## Options
    None.

    ## Known problems
    Rows that come from a name or a function call (`argvalues=CASES`) cannot
    be seen and are left alone, and any `ids=` (a callable too) is trusted to
    name every row. A row's id is not read for meaning:
    `id="1"` counts as a name.
    """

    code = "HRM503"
    message = "parametrize row without an id: pytest names the case from its values or its position; use pytest.param(..., id=...)"
    calls = frozenset({"pytest.mark.parametrize"})
    methods = frozenset({"parametrize"})
    default_on = False

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not self._is_parametrize(node) or any(k.arg == "ids" or k.arg is None for k in node.keywords):
            return
        if len(node.args) >= 4:  # ids given positionally: (argnames, argvalues, indirect, ids)
            return
        rows = node.args[1] if len(node.args) > 1 else None
        for keyword in node.keywords:
            if keyword.arg == "argvalues":
                rows = keyword.value
        where = self.ctx.where_of(node)
        if isinstance(rows, (ast.List, ast.Tuple, ast.Set)):
            for row in rows.elts:
                if not isinstance(row, ast.Starred) and not self._named(row):
                    yield dataclasses.replace(self.report(row), where=where)
        elif isinstance(rows, (ast.ListComp, ast.GeneratorExp, ast.SetComp)) and not self._named(rows.elt):
            yield dataclasses.replace(self.report(rows.elt), where=where)

    def _is_parametrize(self, node: ast.Call) -> bool:
        if self.ctx.call_name(node) == "pytest.mark.parametrize":
            return True
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "parametrize"
            and isinstance(func.value, ast.Name)
            and func.value.id == "metafunc"
        )

    def _named(self, row: ast.expr) -> bool:
        if not (isinstance(row, ast.Call) and self.ctx.call_name(row) == PARAM):
            return False
        return any(k.arg == "id" or k.arg is None for k in row.keywords)
