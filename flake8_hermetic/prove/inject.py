"""The pytest plugin of ``flake8-hermetic prove`` (loaded with ``-p``, in the project's own run).

It reads its plan from the JSON file ``$HERMETIC_PROVE_PLAN`` names: the
flagged statements (:class:`~flake8_hermetic.prove.plan.Target`), which
of them to inject into which test, the per-test timeout, and the directory
its record goes to. For each statement it records the first test, in
collection order, that executed it; in an injection round it raises
:class:`HermeticProveInjected` in the frame that ran the statement, right
after the statement completes (at the frame's next line outside the
statement, or at its return), the first time the chosen test runs it.

Only the flagged code objects are traced: on Python 3.12+ with
``sys.monitoring`` (LINE and PY_RETURN events set on those code objects
alone; every other code object gets one PY_START callback, then DISABLE),
elsewhere with ``sys.settrace``, whose global function hands a local
tracer to frames of those code objects only.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from typing import Any

import pytest

from flake8_hermetic.prove.plan import PLAN_VARIABLE, write_json

_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR


class HermeticProveInjected(Exception):
    """The failure ``flake8-hermetic prove`` injects right after a flagged statement."""


class HermeticProveTimeout(Exception):
    """A test still running ``--timeout`` seconds after the failure was injected into it."""


class _Watched:
    """The targets of one code object."""

    def __init__(self, targets: list[dict[str, Any]]) -> None:
        self.targets = [(t["id"], t["start"], t["end"]) for t in targets]


class Recorder:
    def __init__(self, plan: dict[str, Any]) -> None:
        self.out = plan["out"]
        self.inject = {int(k): v for k, v in plan.get("inject", {}).items()}
        self.timeout = float(plan.get("timeout", 60))
        self.by_code: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        for target in plan["targets"]:
            self.by_code.setdefault((target["file"], target["name"], target["first"]), []).append(target)
        self.files = {key[0] for key in self.by_code}
        self.real: dict[str, str] = {}
        self.cache: dict[Any, _Watched | None] = {}
        self.current: tuple[int, str] | None = None
        self.positions: dict[str, int] = {}
        self.reached: dict[int, tuple[int, str]] = {}  # target -> (collection index, node id); -1: outside a test
        self.injected: dict[int, str] = {}
        self.timed_out: dict[int, str] = {}
        # id(frame) -> (its code's targets, target, start, end, id(the exception handled when it started))
        self.armed: dict[int, tuple[_Watched, int, int, int, int]] = {}
        self.items: list[tuple[str, str]] = []
        self.deselected: list[str] = []
        self.skipped: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self.rootdir = ""
        self.alarm: Any = None
        self.injected_here: int | None = None
        self.tool: int | None = None  # sys.monitoring's tool id (3.12+)
        self.tracer: Any = None  # settrace's global function (elsewhere)
        self.recording = not self.inject  # the plain run: every test is traced
        self.chosen = set(self.inject.values())

    # -- which code objects ---------------------------------------------------------------------------

    def watched(self, code: Any) -> _Watched | None:
        try:
            return self.cache[code]
        except KeyError:
            pass
        filename = code.co_filename
        real = self.real.get(filename)
        if real is None:
            real = self.real[filename] = filename if filename[:1] == "<" or filename in self.files or os.path.basename(
                filename) not in {os.path.basename(f) for f in self.files} else os.path.realpath(filename)  # no I/O
        targets = self.by_code.get((real, code.co_name, code.co_firstlineno)) if real in self.files else None
        found = self.cache[code] = _Watched(targets) if targets else None
        return found

    # -- the events -----------------------------------------------------------------------------------

    def line(self, frame_id: int, line: int, watched: _Watched, exception: Any) -> None:
        """A line of a watched code object starts, in the frame ``frame_id``."""
        __tracebackhide__ = True
        armed = self.armed.get(frame_id)
        if armed is not None:
            owner, target, start, end, handled = armed
            if owner is watched and start <= line <= end:
                return
            del self.armed[frame_id]
            # the same exception state as when it started (an exception caught here: the statement raised)
            if owner is watched and handled == id(exception):
                self.fire(target, start)
        current = self.current
        for target, start, end in watched.targets:
            if start <= line <= end:
                self.reach(target, current)
                if current is not None and self.inject.get(target) == current[1] and target not in self.injected \
                        and self.injected_here is None:
                    self.armed[frame_id] = (watched, target, start, end, id(exception))

    def returned(self, frame_id: int, watched: _Watched | None) -> None:
        __tracebackhide__ = True
        armed = self.armed.pop(frame_id, None)
        if armed is not None and armed[0] is watched:
            self.fire(armed[1], armed[2])

    def reach(self, target: int, current: tuple[int, str] | None) -> None:
        index, nodeid = current if current is not None else (-1, "")
        before = self.reached.get(target)
        if before is None or (0 <= index < before[0]) or before[0] < 0 <= index:
            self.reached[target] = (index, nodeid)

    def fire(self, target: int, start: int) -> None:
        __tracebackhide__ = True  # pytest shows the traceback down to the flagged code's frame
        assert self.current is not None
        self.injected[target] = self.current[1]
        self.injected_here = target
        self.armed.clear()
        if self.timeout > 0 and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
            self.start_alarm(target)
        raise HermeticProveInjected(f"injected by flake8-hermetic prove after the statement at line {start}")

    def start_alarm(self, target: int) -> None:
        def expired(signum: int, frame: Any) -> None:
            self.timed_out[target] = self.injected[target]
            raise HermeticProveTimeout(f"still running {self.timeout:g} s after the injected failure")

        self.alarm = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)

    def stop_alarm(self) -> None:
        if self.alarm is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.alarm)
            self.alarm = None

    # -- the hooks ------------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.rootdir = str(session.config.rootpath)
        self.install()

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            text = str(report.longrepr).strip().splitlines()
            last = text[-1].strip() if text else "collection failed"
            self.errors[report.nodeid] = last[1:].strip() if last.startswith("E ") else last

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.extend(str(item.path) + "::" + item.nodeid for item in items)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = [(item.nodeid, str(item.path)) for item in session.items]
        self.positions = {item.nodeid: index for index, item in enumerate(session.items)}

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        self.current = (self.positions.get(item.nodeid, sys.maxsize), item.nodeid)
        self.injected_here = None
        self.armed.clear()
        self.rearm(item.nodeid)
        try:
            yield
        finally:
            self.stop_alarm()  # before the guard looks (its wrapper is outside this one)
            self.current = None
            self.armed.clear()

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.skipped and report.nodeid not in self.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            self.skipped[report.nodeid] = str(reason).removeprefix("Skipped: ")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.uninstall()
        config = session.config
        label = config.workerinput["workerid"] if hasattr(config, "workerinput") else "main"  # type: ignore
        record = {
            "rootdir": self.rootdir, "items": self.items, "deselected": self.deselected,
            "skipped": self.skipped, "errors": self.errors, "injected": self.injected,
            "timed_out": self.timed_out, "reached": {str(k): list(v) for k, v in self.reached.items()},
            "controller": config.pluginmanager.has_plugin("dsession"),
        }
        write_json(os.path.join(self.out, f"record-{label}.json"), record)

    # -- tracing: installed per interpreter -----------------------------------------------------------

    def install(self) -> None:
        if sys.version_info >= (3, 12) and self._install_monitoring():
            return
        self.tracer = self._global()
        self._trace(self.recording)

    def _trace(self, on: bool) -> None:
        tracer = self.tracer if on else None
        if sys.gettrace() is not tracer:
            sys.settrace(tracer)
        threading.settrace(tracer)  # type: ignore[arg-type]

    def rearm(self, nodeid: str) -> None:
        """settrace: on for every test of the plain run, for the chosen tests only in an injection
        round (the others run untraced); and back on after an injection, which dropped it."""
        if self.tracer is not None:
            self._trace(self.recording or nodeid in self.chosen)

    def uninstall(self) -> None:
        if self.tool is not None:
            monitoring = sys.monitoring  # type: ignore[attr-defined]
            monitoring.set_events(self.tool, 0)
            for event in (monitoring.events.PY_START, monitoring.events.LINE, monitoring.events.PY_RETURN):
                monitoring.register_callback(self.tool, event, None)
            monitoring.free_tool_id(self.tool)
            self.tool = None
        elif self.tracer is not None:
            self._trace(False)

    def _global(self) -> Any:
        """settrace's global function: a local tracer for the frames of the watched code objects only."""
        cache, watched_of, missing = self.cache, self.watched, object()

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            code = frame.f_code
            watched = cache.get(code, missing)
            if watched is missing:
                watched = watched_of(code)
            if watched is None:
                return None
            return self._local(watched, bool(code.co_flags & _GENERATOR_FLAGS))

        return tracer

    def _local(self, watched: _Watched, generator: bool) -> Any:
        def local(frame: Any, event: str, arg: Any) -> Any:
            __tracebackhide__ = True
            if event == "line":
                self.line(id(frame), frame.f_lineno, watched, sys.exc_info()[1])
            elif event == "return" and not generator:  # a generator's yield reads as a return here
                self.returned(id(frame), watched)
            elif event == "exception":
                self.armed.pop(id(frame), None)  # the statement raised: it did not complete
            return local

        return local

    def _install_monitoring(self) -> bool:
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        tool = next((t for t in (4, 3, 5, 2, 1, 0) if monitoring.get_tool(t) is None), None)
        if tool is None:  # every tool id is taken: settrace instead
            return False
        monitoring.use_tool_id(tool, "flake8-hermetic prove")
        events = monitoring.events
        disable = monitoring.DISABLE

        def started(code: Any, offset: int) -> Any:
            if self.watched(code) is not None:
                monitoring.set_local_events(tool, code, events.LINE | events.PY_RETURN)
            return disable

        def line(code: Any, number: int) -> Any:
            __tracebackhide__ = True
            watched = self.watched(code)
            if watched is not None:
                self.line(id(sys._getframe(1)), number, watched, sys.exception())  # type: ignore[attr-defined]
            return None

        def returned(code: Any, offset: int, value: Any) -> Any:
            __tracebackhide__ = True
            self.returned(id(sys._getframe(1)), self.watched(code))
            return None

        monitoring.register_callback(tool, events.PY_START, started)
        monitoring.register_callback(tool, events.LINE, line)
        monitoring.register_callback(tool, events.PY_RETURN, returned)
        monitoring.set_events(tool, events.PY_START)
        self.tool = tool
        return True


def pytest_configure(config: pytest.Config) -> None:
    path = os.environ.get(PLAN_VARIABLE)
    if not path:
        return
    with open(path, encoding="utf-8") as stream:
        plan = json.load(stream)
    config.pluginmanager.register(Recorder(plan), "hermetic-prove-recorder")
