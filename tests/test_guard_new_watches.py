"""The guard's newer watches and fallbacks, through real pytest runs.

A listening socket a test leaves open; process-wide helpers that a library
starts once (reported once, against the session, the same under xdist, or
accepted by name); a grandchild orphaned by a double fork (kept among the
guarded process's descendants by a child subreaper); an asyncio task still
pending when its loop closes; and a host whose psutil cannot list children
either, which the run says.
"""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import pytest

from flake8_hermetic.guard import processes, sockets, watches
from flake8_hermetic.guard.session import UNWATCHED_CHILDREN
from tests.test_guard import LEAKY_CONFTEST

pytest_plugins = ["pytester"]


def _psutil_reads_proc() -> bool:
    try:
        import psutil  # type: ignore[import-untyped]
    except ImportError:
        return False
    return hasattr(psutil, "PROCFS_PATH")  # where psutil reads the kernel's process files (a path it can be told)


def _abstract_unix_sockets() -> bool:
    family = getattr(socket, "AF_UNIX", None)
    if family is None or not sockets.has_proc():
        return False
    try:
        with socket.socket(family) as probe:
            probe.bind(f"\0hermetic-guard-probe-{os.getpid()}")
    except OSError:
        return False
    return True


PSUTIL_READS_PROC = _psutil_reads_proc()
ABSTRACT_UNIX = _abstract_unix_sockets()
SUBREAPER = processes.can_keep_orphans()


def guarded(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--hermetic-guard",
                                         "--hermetic-no-baseline", *args, timeout=300)


def findings(result: pytest.RunResult, code: str) -> list[str]:
    return sorted(line for line in result.stdout.lines if f": {code} " in line)


# -- psutil installed, and as blind as the guard --------------------------------------------------------

PSUTIL_BLIND = """
import psutil

from flake8_hermetic.guard import processes

processes.PROC = "/nonexistent-proc"  # as in a mount namespace with an empty tmpfs on /proc
psutil.PROCFS_PATH = "/nonexistent-proc"
"""

CHILD_TESTS = """
import subprocess
import sys

import conftest


def test_child():
    conftest.CHILDREN.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]))
"""


@pytest.mark.skipif(not PSUTIL_READS_PROC, reason="no psutil, or one that does not read /proc")
def test_a_psutil_that_cannot_list_children_is_said_not_taken_for_none(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(conftest=LEAKY_CONFTEST + PSUTIL_BLIND, test_child=CHILD_TESTS)
    result = guarded(pytester)
    result.assert_outcomes(passed=1)
    output = result.stdout.str()
    assert processes.PSUTIL_BLIND in output
    assert UNWATCHED_CHILDREN not in output  # psutil is there: the other notice would send the user to install it
    assert "HRM612" not in output.replace(processes.PSUTIL_BLIND, "")


# -- listening sockets (HRM613) -------------------------------------------------------------------------------

SOCKET_TESTS = """
import os
import socket

HELD = []


def free_fixed_port(kind):
    for port in range(20000, 20500):  # below the ephemeral range: a port a test would hard-code
        sock = socket.socket(socket.AF_INET, kind)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        return sock
    raise RuntimeError("no free port")


def test_ephemeral_server():
    HELD.append(socket.create_server(("127.0.0.1", 0)))


def test_fixed_server():
    sock = free_fixed_port(socket.SOCK_STREAM)
    sock.listen()
    HELD.append(sock)


def test_fixed_udp():
    HELD.append(free_fixed_port(socket.SOCK_DGRAM))


def test_unix_server():
    sock = socket.socket(socket.AF_UNIX)
    sock.bind("\\0hermetic-guard-test-%d" % os.getpid())
    sock.listen()
    HELD.append(sock)


def test_closed_server_and_client():
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname(), timeout=10)
        client.close()


def test_after_them():
    assert len(HELD) == 4
"""


@pytest.mark.skipif(not ABSTRACT_UNIX, reason="no abstract unix sockets, or no /proc/net to read them from")
def test_a_listening_socket_is_reported_at_its_test_with_a_stable_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sockets=SOCKET_TESTS)
    result = guarded(pytester)
    result.assert_outcomes(passed=6)
    assert result.ret == 1
    result.stdout.re_match_lines([
        r"test_sockets.py::test_ephemeral_server: HRM613 left a socket open: tcp 127\.0\.0\.1:\* listening;.*",
        r"test_sockets.py::test_fixed_server: HRM613 left a socket open: tcp 127\.0\.0\.1:20\d\d\d listening;.*",
        r"test_sockets.py::test_fixed_udp: HRM613 left a socket open: udp 127\.0\.0\.1:20\d\d\d bound;.*",
        r"test_sockets.py::test_unix_server: HRM613 left a socket open: unix @hermetic-guard-test-\* listening;.*",
    ], consecutive=False)
    assert len(findings(result, "HRM613")) == 4  # the closed ones are no finding, and each is found once


@pytest.mark.skipif(not sockets.has_proc(), reason="no /proc/self/fd: psutil is asked instead")
def test_a_look_with_no_new_descriptor_reads_no_socket_table(monkeypatch: pytest.MonkeyPatch) -> None:
    watch = watches.ListeningSockets(watches.Roots([]))
    first = watch.take()
    read: list[str] = []
    real = sockets.socket_inodes

    def counted() -> frozenset[int]:
        read.append("fds")
        return real()

    monkeypatch.setattr(sockets, "socket_inodes", counted)
    assert all(watch.take() is first for _ in range(100))
    assert read == []
    with socket.create_server(("127.0.0.1", 0)) as server:
        held = watch.take()
        assert [what for _, what in held - first] == ["tcp 127.0.0.1:* listening"]
        assert server.fileno() >= 0
    assert watch.take() == first


# -- process-wide helpers -------------------------------------------------------------------------------------

SHARED_POOL = """
from concurrent.futures import ThreadPoolExecutor

POOL = None


def run(value):
    global POOL
    if POOL is None:  # a library's executor, made on first use and kept
        POOL = ThreadPoolExecutor(max_workers=1)
    return POOL.submit(lambda: value * 2).result(timeout=60)
"""

POOL_TESTS = """
import pytest

import sharedlib


@pytest.mark.parametrize("value", range(6))
def test_uses_the_shared_pool(value):
    assert sharedlib.run(value) == value * 2
"""

HELPER_CONFTEST = LEAKY_CONFTEST + """
import threading


def start_named_helper():
    thread = threading.Thread(target=STOP.wait, args=(120,), name="metrics-flusher", daemon=True)
    thread.start()
"""

NAMED_HELPER_TESTS = """
import multiprocessing.resource_tracker

import conftest


def test_starts_a_named_helper():
    conftest.start_named_helper()


def test_starts_the_resource_tracker():
    multiprocessing.resource_tracker.ensure_running()
"""


def helper_findings(result: pytest.RunResult) -> list[str]:
    return sorted(line for line in result.stdout.lines if ": HRM6" in line)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["n0", "n2"])
def test_a_shared_pool_is_reported_once_against_the_session_under_xdist_too(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    pytester.makepyfile(sharedlib=SHARED_POOL, test_pool=POOL_TESTS)
    result = guarded(pytester, *workers)
    result.assert_outcomes(passed=6)
    assert helper_findings(result) == [
        ".: HRM611 left a thread running: concurrent.futures.thread._worker; join it (with a timeout) before "
        "the test ends"]


def test_a_named_helper_is_accepted_in_config_and_the_resource_tracker_always(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(conftest=HELPER_CONFTEST, test_helpers=NAMED_HELPER_TESTS)
    result = guarded(pytester)
    result.assert_outcomes(passed=2)
    assert helper_findings(result) == [
        "test_helpers.py::test_starts_a_named_helper: HRM611 left a thread running: threading.Event.wait; "
        "join it (with a timeout) before the test ends"]
    pytester.makeini("[pytest]\nhermetic_guard_helpers =\n    metrics-*\n")
    accepted = guarded(pytester)
    accepted.assert_outcomes(passed=2)
    assert helper_findings(accepted) == []
    assert accepted.ret == 0


# -- a grandchild orphaned by a double fork -------------------------------------------------------------------

DOUBLE_FORK_TESTS = """
import os
import subprocess
import sys

SLEEPER = "import time; time.sleep(60)"
MIDDLE = (
    "import os, subprocess, sys; "
    "child = subprocess.Popen([sys.executable, '-c', %r], start_new_session=True); "
    "open(os.path.join(os.environ['ORPHAN_PIDS'], str(child.pid)), 'w').close()" % SLEEPER
)


def test_double_fork():
    subprocess.run([sys.executable, "-c", MIDDLE], check=True, timeout=60)  # the middle exits at once


def test_after_it():
    pass
"""


@pytest.mark.skipif(not SUBREAPER, reason="no child subreapers here (Linux's prctl)")
def test_a_grandchild_whose_parent_exited_is_still_found_at_its_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv("ORPHAN_PIDS", str(pids))
    pytester.makepyfile(test_orphan=DOUBLE_FORK_TESTS)
    try:
        result = guarded(pytester)
    finally:
        for name in os.listdir(pids):
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:  # gone already
                pass
    result.assert_outcomes(passed=2)
    assert os.listdir(pids), "the middle process did not start the grandchild"
    assert helper_findings(result) == [
        "test_orphan.py::test_double_fork: HRM612 left a child process running: python; wait for it or kill it"]


# -- an asyncio task pending when its loop closes (HRM614) ----------------------------------------------------

PENDING_TASK_TESTS = """
import asyncio
import gc
from pathlib import Path

ROOT = Path(__file__).resolve().parent


async def flush_on_exit():
    try:
        await asyncio.sleep(3600)
    finally:
        (ROOT / "flushed-late.txt").write_text("x")


async def start():
    asyncio.ensure_future(flush_on_exit())  # detached: never awaited nor cancelled
    await asyncio.sleep(0)


def test_detaches_a_task():
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(start())
    finally:
        loop.close()


def test_next_one_collects():
    gc.collect()  # where the task's finally would run without the guard


def test_asyncio_run_cancels_its_own():
    async def main():
        asyncio.ensure_future(asyncio.sleep(3600))
        await asyncio.sleep(0)

    asyncio.run(main())
"""


def test_a_task_pending_at_its_loop_s_close_is_its_test_s_with_what_it_does(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tasks=PENDING_TASK_TESTS)
    result = guarded(pytester)
    result.assert_outcomes(passed=3)
    assert helper_findings(result) == [
        "test_tasks.py::test_detaches_a_task: HRM602 left 'flushed-late.txt' in the checkout; write under tmp_path, "
        "pass cwd= to child processes",
        "test_tasks.py::test_detaches_a_task: HRM614 left an asyncio task pending when its event loop closed: "
        "test_tasks.flush_on_exit; await or cancel it before the loop closes",
    ]
