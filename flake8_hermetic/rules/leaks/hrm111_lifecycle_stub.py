"""HRM111: a lifecycle method (``close``, ``stop``, ``join``, ...) replaced by a stub."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.facts.mocks import MOCKER_FIXTURES, PATCH_MODULES, is_stdlib_module, patch_kind
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


LIFECYCLE_METHODS = frozenset({
    "close", "aclose", "shutdown", "stop", "terminate", "kill", "join", "cancel",
    "disconnect", "dispose", "cleanup", "__exit__", "__aexit__",
})


def _has_wraps(nodes: list[ast.AST]) -> bool:
    return any(
        isinstance(sub, ast.keyword) and sub.arg == "wraps"
        for node in nodes
        for sub in ast.walk(node)
    )


class LifecycleStubRule(Rule):
    """
    Flags a lifecycle method (`close`, `shutdown`, `stop`, `join`, ...) replaced by a stub.

    ## Why is this bad?
    A stub that replaces `close()` or `shutdown()` records the call and
    does nothing else, so whatever the real method stops keeps running: an
    exporter thread, a socket, a child process, a pool. It survives the
    test and changes the process for every later test on the worker (a
    multi-threaded process behaves differently at `fork()`, for one).
    Wrapping the real method observes the call and still stops the thing.

    Flagged: `mock.patch.object(obj, NAME)`, `mock.patch("pkg.mod.NAME")`,
    `monkeypatch.setattr(obj, NAME, ...)`, `monkeypatch.setattr("pkg.mod.NAME", ...)`
    (also `mocker.patch`), for NAME in `close`, `aclose`, `shutdown`,
    `stop`, `terminate`, `kill`, `join`, `cancel`, `disconnect`, `dispose`,
    `cleanup`, `__exit__`, `__aexit__`. A `wraps=` anywhere in the patch
    delegates to the real method and is not flagged, and neither is a
    function of a standard-library module (`patch("os.kill")`,
    `patch.object(os, "close")`): that stubs a system call, not an object's
    lifecycle.

    ## Example
    ```python
    def test_flush_on_exit(self):
        with mock.patch.object(MeterProvider, "shutdown") as shutdown:
            run_app()
        shutdown.assert_called_once()
    ```

    ## Use instead
    ```python
    def test_flush_on_exit(self):
        with mock.patch.object(MeterProvider, "shutdown", autospec=True,
                               wraps=MeterProvider.shutdown) as shutdown:
            run_app()
        shutdown.assert_called_once()
    ```

    ## Options
    None.
    """

    code = "HRM111"
    message = "stubbing {attribute}() leaves what it stops running after the test; spy with wraps= the real method"
    calls = frozenset(f"{owner}{suffix}" for owner in PATCH_MODULES | MOCKER_FIXTURES for suffix in (".patch", ".patch.object"))
    methods = frozenset({"setattr"})

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        found = self._stubbed(node)
        if found is not None:
            yield self.report(node, attribute=found)

    def _stubbed(self, node: ast.Call) -> str | None:
        """The lifecycle method ``node`` replaces without wrapping it, if any."""
        kind = self._patch_kind(node)
        args = node.args
        if kind is None or _has_wraps([*args, *node.keywords]):
            return None
        target = args[0] if args else next((k.value for k in node.keywords if k.arg == "target"), None)
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            return None if kind == "object" else _lifecycle_attribute(target.value)
        if kind in ("object", "setattr") and len(args) >= 2:
            return self._lifecycle_name_given(args)
        return None

    def _patch_kind(self, node: ast.Call) -> str | None:
        """``patch_kind`` of the callee, or "setattr" for ``monkeypatch.setattr``."""
        kind = patch_kind(self.ctx.call_name(node) or "")
        func = node.func
        if kind is None and isinstance(func, ast.Attribute) and func.attr == "setattr":
            kind = "setattr"
        return kind

    def _lifecycle_name_given(self, args: list[ast.expr]) -> str | None:
        """``patch.object(obj, "close")``, ``setattr(obj, "close", f)``: the
        lifecycle method named, unless ``obj`` is a standard-library module."""
        name_given = args[1].value if isinstance(args[1], ast.Constant) else None
        if isinstance(name_given, str) and name_given in LIFECYCLE_METHODS:
            if not is_stdlib_module(self.ctx.resolve(args[0]) or ""):
                return name_given
        return None


def _lifecycle_attribute(target: str) -> str | None:
    """``"pkg.mod.Client.close"`` -> "close", unless its owner is a
    standard-library module (``"os.kill"``)."""
    owner, _, attribute = target.rpartition(".")
    if attribute in LIFECYCLE_METHODS and owner and not is_stdlib_module(owner):
        return attribute
    return None
