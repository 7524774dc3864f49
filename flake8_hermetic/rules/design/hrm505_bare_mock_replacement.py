"""HRM505: a bare ``Mock()`` patched in as a replacement."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from flake8_hermetic.facts.mocks import MOCK_CLASSES, PATCH_MODULES
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


PATCH_OPTIONS = frozenset({"spec", "spec_set", "create", "autospec", "new_callable"})
# (name suffix, position of ``new``); patch.multiple takes its replacements as keywords
PATCHERS = ((".patch", 1), (".patch.object", 2), (".patch.multiple", None))
NOT_A_PATCHER = -1


def _new_position(name: str) -> int | None:
    """Where a patcher named ``name`` takes ``new`` (None: as keywords, for
    ``patch.multiple``), or ``NOT_A_PATCHER``."""
    for suffix, position in PATCHERS:
        head = name[: -len(suffix)]
        if name.endswith(suffix) and (head in PATCH_MODULES or head.endswith("mocker")):
            return position
    return NOT_A_PATCHER


def _patched_in(node: ast.Call, position: int | None) -> list[ast.expr]:
    """``new`` (at ``position`` or by keyword), ``return_value=``, and the
    keyword replacements of ``patch.multiple``."""
    values = [node.args[position]] if position is not None and len(node.args) > position else []
    for keyword in node.keywords:
        if keyword.arg in ("new", "return_value"):
            values.append(keyword.value)
        elif position is None and keyword.arg is not None and keyword.arg not in PATCH_OPTIONS:
            values.append(keyword.value)
    return values


def _set_as_attribute(node: ast.Call) -> list[ast.expr]:
    """The value of ``monkeypatch.setattr(target, name, value)`` or ``setattr("a.b", value)``."""
    values = [k.value for k in node.keywords if k.arg == "value"]
    string_target = bool(node.args) and isinstance(node.args[0], (ast.Constant, ast.JoinedStr))
    if string_target and len(node.args) == 2:
        values.append(node.args[1])
    elif len(node.args) >= 3:
        values.append(node.args[2])
    return values


def _is_monkeypatch(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        return False
    name = last_name(node)
    return "monkeypatch" in name.lower() or name == "mp"


class BareMockReplacementRule(Rule):
    """
    Flags a bare `MagicMock()` or `Mock()` (no `spec`/`spec_set`) patched in as a replacement.

    The mock is reported where it is handed to `mock.patch(...)`,
    `mock.patch.object(...)` or `mock.patch.multiple(...)` (as `new`,
    positionally or by keyword, or as `return_value=`), to pytest-mock's
    `mocker.patch...`, or to `monkeypatch.setattr(...)` as the value.
    `Mock(SomeClass)` (a positional spec), `spec=`, `spec_set=` and
    `create_autospec(...)` are the fixes and are not reported.

    ## Why is this bad?
    A mock without a spec accepts every attribute and every call, and
    each attribute it hands out is another truthy mock. Code that reads a
    flag off it (`if config.telemetry.enabled:`) takes the branch the test
    never meant to run; a typo or a renamed method on the real object
    still "works" against the mock. The test keeps passing while the
    interface it stands in for has changed.

    ## Example
    ```python
    def test_report(monkeypatch):
        monkeypatch.setattr(app, "load_config", MagicMock())
        with mock.patch("app.client.Session", MagicMock()):
            assert app.report()
    ```

    ## Use instead
    ```python
    def test_report(monkeypatch):
        monkeypatch.setattr(app, "load_config", mock.create_autospec(app.load_config))
        with mock.patch("app.client.Session", autospec=True):
            assert app.report()
    ```

    ## Options
    None.

    ## Known problems
    A bare mock bound to a name first and then patched in is not followed.
    """

    code = "HRM505"
    message = "bare {name}() accepts any attribute or call, so the test passes against a wrong interface; use create_autospec() or {name}(spec=...)"
    calls = frozenset(f"{owner}{suffix}" for owner in (*PATCH_MODULES, "*mocker") for suffix, _ in PATCHERS)
    methods = frozenset({"setattr"})
    default_on = False

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        for value in self._replacements(node):
            name = self._bare_mock(value)
            if name is not None:
                yield dataclasses.replace(self.report(value, name=name), where=self.ctx.where_of(node))

    def _replacements(self, node: ast.Call) -> list[ast.expr]:
        """The values ``node`` patches in, if it is a patch call."""
        position = _new_position(self.ctx.call_name(node) or "")
        if position is not NOT_A_PATCHER:
            return _patched_in(node, position)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "setattr" and _is_monkeypatch(func.value):
            return _set_as_attribute(node)
        return []

    def _bare_mock(self, node: ast.expr) -> str | None:
        if not isinstance(node, ast.Call) or node.args:
            return None
        name = self.ctx.call_name(node) or ""
        module, _, cls = name.rpartition(".")
        is_mock = cls in MOCK_CLASSES and (module in PATCH_MODULES or module.endswith("mocker"))
        if not is_mock or any(k.arg in ("spec", "spec_set") or k.arg is None for k in node.keywords):
            return None
        return cls
