"""HRM2xx beyond the fixtures: messages, the data flow helpers, and robustness."""

from __future__ import annotations

import ast
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.engine import Engine
from flake8_hermetic.imports import ImportResolver, module_imports
from flake8_hermetic.rules.determinism.clock import ELAPSED, READING, ClockFlow, Durations
from flake8_hermetic.rules.determinism.hrm205_pid_literal import is_pid_name
from flake8_hermetic.settings import Settings
from tests.helpers import flake8, write_tree

FAMILY = [rule for code, rule in all_rules().items() if code.startswith("HRM2")]


def lint(source: str, path: str = "tests/test_sample.py") -> list[tuple[int, str]]:
    """(line, "HRMnnn message") for every HRM2xx finding in ``source``."""
    text = textwrap.dedent(source)
    tree = ast.parse(text)
    found = Engine(FAMILY).lint(tree, text.splitlines(keepends=True), path, Settings())
    return sorted((v.line, v.text) for v in found)


def codes(source: str) -> list[tuple[int, str]]:
    return [(line, text.split()[0]) for line, text in lint(source)]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("pid", True, id="bare"),
        pytest.param("child_pid", True, id="snake"),
        pytest.param("fakePid", True, id="camel"),
        pytest.param("PID2", True, id="upper-digit"),
        pytest.param("ppid", True, id="parent"),
        pytest.param("worker_pids", True, id="plural"),
        pytest.param("rapid", False, id="inside-rapid"),
        pytest.param("stupid_count", False, id="inside-stupid"),
        pytest.param("pidfile", False, id="pidfile-is-a-path"),
        pytest.param("timeout", False, id="unrelated"),
    ],
)
def test_pid_names_are_matched_by_word(name: str, expected: bool) -> None:
    assert is_pid_name(name) is expected


def clock_levels(source: str) -> dict[str, int]:
    """The level ClockFlow gives each name assigned at the end of ``test()``'s body."""
    tree = ast.parse(textwrap.dedent(source))
    function = tree.body[-1]
    assert isinstance(function, ast.FunctionDef)
    resolver = ImportResolver(module_imports(tree))
    flow = ClockFlow(function, resolver.resolve)
    names = [t.id for stmt in function.body if isinstance(stmt, ast.Assign) for t in stmt.targets
             if isinstance(t, ast.Name)]
    return {name: flow.level(ast.Name(id=name, ctx=ast.Load())) for name in names}


def test_clock_flow_tells_readings_from_durations() -> None:
    levels = clock_levels(
        """
        import time
        from time import perf_counter as pc

        def test():
            t0 = pc()
            t1 = time.monotonic()
            raw = max(t0, t1)
            dt = t1 - t0
            ms = round(dt * 1000)
            deadline = t1 + 5
            handle = make_handle(t1 + 5)
            count = len([t0])
            other = time.sleep(1)
        """
    )
    assert levels == {
        "t0": READING,
        "t1": READING,
        "raw": READING,
        "dt": ELAPSED,
        "ms": ELAPSED,
        "deadline": ELAPSED,
        "handle": 0,
        "count": 0,
        "other": 0,
    }


def test_messages_name_the_call_and_the_fix() -> None:
    found = lint(
        """
        import asyncio
        import os
        from time import sleep as snooze

        async def test_x(event):
            snooze(1)
            await asyncio.sleep(1)
            await event.very_long_attribute_name.another_long_attribute.wait()
            os.kill(31337, 9)
        """
    )
    assert found == [
        (7, "HRM201 time.sleep() waits a guessed time and flakes on a loaded host; wait on the state itself "
            "with a timeout (Event.wait, Queue.get, join) or poll with a deadline"),
        (8, "HRM202 await asyncio.sleep() guesses how long another task needs and flakes on a loaded host; "
            "await the event itself, bounded (asyncio.wait_for)"),
        (9, "HRM204 await event.very_long_attribute_name.anothe... never returns if the signal is never sent, "
            "hanging the run; bound it: asyncio.wait_for(..., timeout=) or async with asyncio.timeout()"),
        (10, "HRM205 pid 31337 can name a live process on a long-running host; use a number no OS allocates "
             "(99999999999) or pin the liveness probe"),
    ]


def test_a_sleep_that_is_measured_is_left_to_the_assertion_rule() -> None:
    assert codes(
        """
        import time

        def test_sleep_length():
            t0 = time.monotonic()
            time.sleep(0.1)
            t1 = time.monotonic()
            assert t1 - t0 < 0.5
        """
    ) == [(8, "HRM203")]


def test_a_lower_bound_on_a_measured_sleep_is_safe_on_a_slow_host() -> None:
    assert codes(
        """
        import time

        def test_sleep_length():
            t0 = time.monotonic()
            time.sleep(0.1)
            t1 = time.monotonic()
            assert t1 - t0 >= 0.1
            assert t1 - t0 <= 0.5
        """
    ) == [(9, "HRM203")]


def test_sleeping_until_a_computed_instant_is_not_a_guess() -> None:
    assert codes(
        """
        import time

        def test_retry_after(handler):
            now = time.time()
            time.sleep(handler.retry_at - now + 0.001)
            time.sleep(handler.retry_at)
        """
    ) == [(7, "HRM201")]


def test_sleep_inside_a_deadline_is_the_slow_work_under_test() -> None:
    assert codes(
        """
        import asyncio
        import time

        async def test_timeout_fires():
            async with asyncio.timeout(0.01):
                time.sleep(0.05)
                await asyncio.sleep(10)
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                raise
            await asyncio.sleep(1)
        """
    ) == [(13, "HRM202")]


def test_nested_coroutines_sleep_as_simulated_work() -> None:
    assert codes(
        """
        import asyncio

        async def helper():
            await asyncio.sleep(0.5)

        async def test_group():
            async def slow_job():
                await asyncio.sleep(0.2)
                return 1

            async with asyncio.TaskGroup() as group:
                group.create_task(slow_job())
            await asyncio.sleep(0.1)
        """
    ) == [(14, "HRM202")]  # the module-level helper reads nothing after its sleep: simulated work


def test_modern_syntax_is_walked_without_error() -> None:
    source = """
        import asyncio
        import time

        async def test_everything(items, event, worker):
            match worker.start(items):
                case [first, *rest] if (n := len(rest)) > 0:
                    time.sleep(first)
                case {"pid": 4242, **others}:
                    pass
                case _:
                    pass
            try:
                pass
            except ValueError:
                await event.wait()
            values = [x async for x in aiter_of(items)]
            total = sum(await asyncio.sleep(0) or 0 for _ in values)
            label = f"{time.time() - total:>{n}}"
            a, *b = c = time.monotonic(), 2
            (pid := 1234)
            return label, a, b, c, others

        def aiter_of(items):
            return items
    """
    # (pid := 1234) reaches no OS call: a record, not a pid (issue 26, follow the value)
    assert codes(source) == [(8, "HRM201"), (16, "HRM204")]


@pytest.fixture(params=["process_time", "monotonic"])
def deep_arithmetic(request: pytest.FixtureRequest) -> Iterator[tuple[ast.Module, str]]:
    """900 nested BinOps, parsed, then linted under a recursion limit of 200:
    a recursive walk of the expression would fail there."""
    terms = " + ".join(["start"] * 900)
    source = f"import time\n\ndef test():\n    start = time.{request.param}()\n    assert {terms} < 1\n"
    tree = ast.parse(source)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    yield tree, source
    sys.setrecursionlimit(limit)


def test_deep_arithmetic_is_followed_without_recursion(deep_arithmetic: tuple[ast.Module, str]) -> None:
    tree, source = deep_arithmetic
    found = Engine(FAMILY).lint(tree, source.splitlines(keepends=True), "test_deep.py", Settings())
    # a CPU-time bound is flagged whatever its slack; a wall-clock one too deep to read is no
    # evidence of a tight bound (principle loose-bound), and is left alone
    expected = [(5, "HRM203")] if "process_time" in source else []
    assert [(v.line, v.code) for v in found] == expected


def test_a_helper_sleep_is_judged_after_the_walk_and_keeps_its_scope() -> None:
    """The hand-over (``target=self._job``) comes before the helper it names;
    the helper the test calls itself stays flagged, under its own scope."""
    text = textwrap.dedent(
        """
        import threading
        import time

        class TestWorkers:
            def test_start(self):
                threading.Thread(target=self._job).start()
                self._wait()

            def _job(self):
                time.sleep(1)

            def _wait(self):
                time.sleep(1)
                assert self.done
        """
    )
    found = Engine(FAMILY).lint(ast.parse(text), text.splitlines(keepends=True), "tests/test_w.py", Settings())
    assert [(v.line, v.code, v.where) for v in found] == [(14, "HRM201", "TestWorkers::_wait")]


def test_a_nested_target_is_told_apart_from_a_same_named_one_in_another_test() -> None:
    assert codes(
        """
        import threading
        import time

        def test_handed():
            def work():
                time.sleep(1)
            threading.Thread(target=work).start()

        def test_called():
            def work():
                time.sleep(1)
                assert results
            work()
        """
    ) == [(12, "HRM201")]


@pytest.mark.parametrize(
    ("expression", "grows"),
    [
        pytest.param("end - start", True, id="difference-of-readings"),
        pytest.param("time.monotonic() - start", True, id="fresh-minus-stored"),
        pytest.param("elapsed * 1000", True, id="scaled"),
        pytest.param("1000 * elapsed", True, id="scaled-on-the-left"),
        pytest.param("elapsed / 2 + 1", True, id="offset"),
        pytest.param("round(elapsed, 2)", True, id="rounded"),
        pytest.param("total", True, id="accumulated"),
        pytest.param("times[-1] - times[0]", True, id="list-of-readings"),
        pytest.param("elapsed * -1", False, id="negated"),
        pytest.param("1 / elapsed", False, id="reciprocal"),
        pytest.param("deadline - time.monotonic()", False, id="remaining"),
        pytest.param("abs(elapsed - 1)", False, id="distance"),
        pytest.param("cpu_end - cpu_start", False, id="cpu-time"),
        pytest.param("start", False, id="a-reading"),
    ],
)
def test_durations_a_slow_host_can_only_lengthen(expression: str, grows: bool) -> None:
    source = f"""
        import time

        def test():
            start = time.monotonic()
            end = time.monotonic()
            elapsed = end - start
            total = 0.0
            total += elapsed
            deadline = start + 5
            times = [time.monotonic() for _ in range(3)]
            cpu_start = time.process_time()
            cpu_end = time.process_time()
            probe = {expression}
    """
    tree = ast.parse(textwrap.dedent(source))
    function = tree.body[-1]
    assert isinstance(function, ast.FunctionDef)
    probe = function.body[-1]
    assert isinstance(probe, ast.Assign)
    resolve = ImportResolver(module_imports(tree)).resolve
    durations = Durations(function, ClockFlow(function, resolve), resolve)
    assert durations.grows(probe.value) is grows


# -- guessed-wait (issue 26): a sleep is a guessed wait only when a later assertion reads state
# -- another party must have changed by then


def test_a_sleep_before_a_read_of_the_clock_threshold_is_not_a_guess() -> None:
    """No party runs beside the test: the asserted state is a function of the clock."""
    assert codes(
        """
        import time

        def test_ttl(cache):
            cache.set("k", 1, ttl=0.1)
            time.sleep(0.2)
            assert cache.get("k") is None
        """
    ) == []


def test_a_sleep_before_a_read_of_a_started_party_is_a_guess() -> None:
    assert codes(
        """
        import threading
        import time

        def test_ttl(cache):
            threading.Thread(target=cache.expire_loop).start()
            cache.set("k", 1, ttl=0.1)
            time.sleep(0.2)
            assert cache.get("k") is None
        """
    ) == [(8, "HRM201")]


def test_a_party_started_by_a_conftest_fixture_is_seen(tmp_path: Path) -> None:
    """The fixture's body is read from the conftest the project model names."""
    write_tree(tmp_path, {
        "conftest.py": (
            "import threading\nimport pytest\n\n\n@pytest.fixture\ndef worker():\n"
            "    t = threading.Thread(target=print)\n    t.start()\n    yield t\n    t.join(timeout=5)\n\n\n"
            "@pytest.fixture\ndef idle():\n    return 1\n"
        ),
        "test_w.py": (
            "import time\n\n\ndef test_started(worker):\n    time.sleep(1)\n    assert worker.done\n\n\n"
            "def test_idle(idle):\n    idle.expire(ttl=0.5)\n    time.sleep(1)\n    assert idle\n"
        ),
    })
    result = flake8(["--isolated", "--select=HRM201", "--hermetic-no-baseline", "test_w.py"], cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert [line.split(":")[1] for line in result.stdout.splitlines()] == ["5"]
