"""HRM1xx: side effects that outlive the test."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.registry import Rule, Violation


class ChdirRule(Rule):
    """
    Flags `os.chdir()` and `os.fchdir()` anywhere in a test file.

    ## Why is this bad?
    The working directory belongs to the process, not to the test. A test
    that changes it and fails (or forgets) before changing it back leaves
    every later test on the same worker running somewhere else: relative
    paths resolve into the wrong tree and files get written into the
    checkout. Under `pytest -n auto` the victim is a test that happened to
    be scheduled next, which makes the failure look random.

    ## Example
    ```python
    def test_build(tmp_path):
        os.chdir(tmp_path)
        build()
    ```

    ## Use instead
    ```python
    def test_build(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        build()

    def test_build_ctx(tmp_path):
        with contextlib.chdir(tmp_path):
            build()
    ```

    ## Options
    None.
    """

    code = "HRM105"
    message = "{name}() leaks the working directory to later tests; use monkeypatch.chdir() or contextlib.chdir()"

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        if name in ("os.chdir", "os.fchdir"):
            yield self.report(node, name=name)
