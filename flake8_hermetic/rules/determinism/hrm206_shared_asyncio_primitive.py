"""HRM206: an asyncio primitive created at module or class scope of a test file."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation

ASYNCIO_PRIMITIVES = frozenset(
    {f"asyncio.{name}" for name in ("Lock", "Event", "Condition", "Semaphore", "BoundedSemaphore")}
    | {f"asyncio.locks.{name}" for name in ("Lock", "Event", "Condition", "Semaphore", "BoundedSemaphore")}
    | {f"asyncio.{name}" for name in ("Queue", "LifoQueue", "PriorityQueue")}
    | {f"asyncio.queues.{name}" for name in ("Queue", "LifoQueue", "PriorityQueue")}
    | {"asyncio.Future", "asyncio.futures.Future"}
)


class SharedAsyncioPrimitiveRule(Rule):
    """
    Flags an asyncio lock, event, condition, semaphore, queue or future created at module or class scope of a test file.

    ## Why is this bad?
    An asyncio primitive belongs to the event loop that first uses it. Test
    runners (pytest-asyncio, anyio, `IsolatedAsyncioTestCase`) give each test
    a fresh loop, so a primitive created once at import time is shared by
    tests running on different loops. It works while nobody has to wait on
    it, then a test that hits contention gets `RuntimeError: ... is bound to
    a different event loop`, or a waiter that never wakes. Whether that
    happens depends on test order and timing. It also carries state (a set
    event, queued items) from one test into the next.

    Primitives created inside a function, a lambda or a `default_factory`
    are made per call and are not flagged.

    ## Example
    ```python
    READY = asyncio.Event()

    class TestWorker:
        lock = asyncio.Lock()
    ```

    ## Use instead
    ```python
    @pytest.fixture
    def ready():
        return asyncio.Event()

    class TestWorker:
        async def test_locking(self):
            lock = asyncio.Lock()
            ...
    ```

    ## Options
    None.

    ## Known problems
    Only a primitive created by the call itself at module or class scope is
    seen: one made by a helper called at import time (`LOCK = make_lock()`),
    or by a session-scoped fixture shared by many tests, is not. Since Python
    3.10 a primitive binds to a loop only when first used, so one used by a
    single test is harmless and still flagged.
    """

    code = "HRM206"
    message = "{name}() at import time is shared by every test and binds to one event loop; create it per test (inside the test or a fixture)"
    calls = ASYNCIO_PRIMITIVES

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not self.ctx.at_module_level:
            return
        name = self.ctx.call_name(node)
        if name not in ASYNCIO_PRIMITIVES:
            return
        if any(isinstance(parent, ast.Lambda) for parent in self.ctx.parents):
            return
        yield self.report(node, name=name)
