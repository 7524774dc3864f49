"""Asyncio tasks still pending when their event loop closes.

A closed loop never runs its tasks again: a task still pending then (one a
test started with ``create_task`` / ``ensure_future`` and never awaited or
cancelled) is left to the garbage collector, which closes its coroutine
whenever it next collects, so the task's ``finally`` (a file written, a
connection closed) runs during some later test, which gets the blame.

The guard wraps ``asyncio.BaseEventLoop.close`` (every loop of asyncio's
own: ``asyncio.run``, ``asyncio.new_event_loop``, pytest-asyncio's, anyio's
asyncio backend). When a loop closes, the tasks of that loop still pending
are noted for the running test (HRM614), and their coroutines are closed
there and then: what their ``finally`` does happens in the test that left
them, as it would have when the collector got to them, only at a known
moment. ``asyncio.run`` cancels the tasks left at its end itself, so only a
loop closed by hand (or by a fixture) can leave one.

Importing ``asyncio`` costs a guarded run that does not use it more than
the rest of the guard's start, so the wrapper goes in at the first look
that finds ``asyncio`` imported (at collection, when a test module imports
it).
"""

from __future__ import annotations

import sys
from typing import Any

from flake8_hermetic.guard.stable import label

FOUND: list[str] = []  # one text per pending task found at a loop's close, in order
_ORIGINAL: list[Any] = []  # the wrapped ``close``, while installed


def task_label(task: Any) -> str:
    """The task's coroutine, ``module.qualname`` (its ``Task-N`` name changes from run to run)."""
    try:
        coro = task.get_coro()
    except Exception:  # noqa: BLE001 - a task-like object of another library
        return label(type(task).__qualname__)
    name = getattr(coro, "__qualname__", None) or type(coro).__qualname__
    frame = getattr(coro, "cr_frame", None)
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    return label(f"{module}.{name}" if module else str(name))


def _finish(task: Any) -> None:
    """Close the pending task's coroutine now (what the garbage collector would do later)."""
    try:
        coro = task.get_coro()
        if coro is not None and getattr(coro, "cr_frame", None) is not None:
            coro.close()
    except Exception:  # noqa: BLE001 - a finally that awaits, or raises: the collector would only print it
        pass


def install() -> bool:
    """Wrap ``BaseEventLoop.close`` once ``asyncio`` is imported; True when it is wrapped."""
    if _ORIGINAL:
        return True
    asyncio = sys.modules.get("asyncio")
    base = getattr(getattr(asyncio, "base_events", None), "BaseEventLoop", None)
    all_tasks = getattr(asyncio, "all_tasks", None)
    if base is None or all_tasks is None:
        return False
    original = base.close

    def close(self: Any) -> None:
        pending: list[Any] = []
        if not self.is_closed() and not self.is_running():
            try:
                pending = sorted(all_tasks(self), key=task_label)
            except Exception:  # noqa: BLE001 - never in the way of the loop's own close
                pending = []
        original(self)
        for task in pending:
            if not task.done():
                FOUND.append(task_label(task))
                _finish(task)

    close.__wrapped__ = original  # type: ignore[attr-defined]
    base.close = close
    _ORIGINAL.append((base, original))
    return True


def uninstall() -> None:
    while _ORIGINAL:
        base, original = _ORIGINAL.pop()
        base.close = original
    FOUND.clear()
