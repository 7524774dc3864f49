"""HRM114: an asyncio task created as a bare statement, its handle thrown away."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.imports import dotted_name
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.leaks.flow import expects_failure
from flake8_hermetic.rules.leaks.syntax import target_names
from flake8_hermetic.violation import Violation


TASK_FACTORIES = frozenset({"asyncio.create_task", "asyncio.ensure_future"})
LOOP_GETTERS = frozenset({"asyncio.get_running_loop", "asyncio.get_event_loop", "asyncio.new_event_loop"})


class DetachedTaskRule(Rule):
    """
    Flags an asyncio task created as a bare statement, its handle thrown away.

    ## Why is this bad?
    Nobody can await, cancel or even see a task whose handle was dropped.
    It keeps running after the test returns, resolves paths and
    configuration from whatever the next test set up, and when the loop
    closes it is destroyed mid-flight ("Task was destroyed but it is
    pending"), with its `finally` blocks running at some later garbage
    collection. The event loop holds only a weak reference, so the task
    may also vanish before it finishes.

    Flagged: `asyncio.create_task(...)`, `asyncio.ensure_future(...)` and
    `loop.create_task(...)` as expression statements. `X.create_task(...)`
    counts only when `X` is evidently an event loop: a name or attribute
    with `loop` in it (`loop`, `self.loop`, `event_loop`) or a call of
    `asyncio.get_running_loop()`, `get_event_loop()` or `new_event_loop()`.
    Any other receiver is left alone, because `create_task` is also the
    method of a task group (`tg`, a group handed to a helper as `g`), of a
    trio/anyio nursery and of project schedulers, which own their tasks;
    a receiver bound by `async with asyncio.TaskGroup() as X` is never
    flagged, whatever its name. A call that the test expects to raise
    (inside `with pytest.raises(...)` or `with self.assertRaises(...)`) is
    not flagged either.

    ## Example
    ```python
    async def test_heartbeat():
        asyncio.create_task(heartbeat(conn))
        assert await conn.recv() == b"ping"
    ```

    ## Use instead
    ```python
    async def test_heartbeat():
        task = asyncio.create_task(heartbeat(conn))
        try:
            assert await asyncio.wait_for(conn.recv(), timeout=5) == b"ping"
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def test_heartbeat_group():
        async with asyncio.TaskGroup() as tg:
            tg.create_task(heartbeat(conn))
            ...
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM114` (or `extend-select` in the config):
    after narrowing, at most 3 of its 15 findings on ten real suites were real hazards: most
    were fire-and-forget tasks that visibly finish inside the test, which the syntax cannot tell
    from a task that outlives it
    (see docs/precision.md). In an application's own suite, where such code is rare,
    it is worth turning on.

    ## Options
    None.

    ## Known problems
    A loop kept under a name without `loop` in it (`self.ev.create_task`)
    is not recognised.
    """

    code = "HRM114"
    message = "{name}() result is discarded: the task outlives the test; keep it and await or cancel it"
    default_on = False

    def visit_Expr(self, node: ast.Expr) -> Iterator[Violation]:
        call = node.value
        if not isinstance(call, ast.Call):
            return
        name = self.ctx.call_name(call) or ""
        func = call.func
        if name in TASK_FACTORIES:
            what = name
        elif isinstance(func, ast.Attribute) and func.attr == "create_task" and self._is_loop(func.value):
            what = f"{self.ctx.resolve(func.value) or dotted_name(func.value) or '...'}.create_task"
        else:
            return
        # these climb the ancestors: only for the few calls that would be reported
        if not expects_failure(self.ctx, node) and not self.ctx.expected_to_raise(node):
            yield self.report(call, name=what)

    def _is_loop(self, receiver: ast.expr) -> bool:
        """``loop``, ``self.loop``, ``asyncio.get_running_loop()``; never a
        name bound by ``async with asyncio.TaskGroup() as name``."""
        if isinstance(receiver, ast.Call):
            return self.ctx.call_name(receiver) in LOOP_GETTERS
        text = dotted_name(receiver)
        if text is None or "loop" not in text.rpartition(".")[2].lower():
            return False
        for ancestor, _ in self.ctx.ancestors_in_function():
            if isinstance(ancestor, (ast.With, ast.AsyncWith)):
                for item in ancestor.items:
                    if text in target_names(item.optional_vars):
                        owner = self.ctx.resolve(item.context_expr) or ""
                        return not owner.rstrip("()").endswith("TaskGroup")
        return True
