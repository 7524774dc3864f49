"""The guard's newer watches and fallbacks, through real pytest runs.

A listening socket a test leaves open; process-wide helpers that a library
starts once (reported once, against the session, the same under xdist, or
accepted by name); a grandchild orphaned by a double fork (kept among the
guarded process's descendants by a child subreaper); an asyncio task still
pending when its loop closes; and a host whose psutil cannot list children
either, which the run says.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from flake8_hermetic.guard import processes, sockets, watches
from flake8_hermetic.guard.session import CLEAN, UNWATCHED_CHILDREN
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


def _descriptor_limit() -> bool:
    try:
        import resource
    except ImportError:
        return False
    return hasattr(resource, "RLIMIT_NOFILE")


PSUTIL_READS_PROC = _psutil_reads_proc()
DESCRIPTOR_LIMIT = _descriptor_limit()
ABSTRACT_UNIX = _abstract_unix_sockets()
SUBREAPER = processes.can_keep_orphans()
PROC_CHILDREN = processes._has_proc_children()


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


def open_one_of_each(stack: contextlib.ExitStack) -> None:
    """A TCP server on an ephemeral port, a UDP socket on a fixed one, an abstract unix server."""
    stack.enter_context(socket.create_server(("127.0.0.1", 0)))
    for port in range(20600, 21000):  # below the ephemeral range
        udp = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        try:
            udp.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    unix = stack.enter_context(socket.socket(socket.AF_UNIX))
    unix.bind(f"\0hermetic-guard-each-{os.getpid()}")
    unix.listen()


@pytest.mark.skipif(not (ABSTRACT_UNIX and PSUTIL_READS_PROC), reason="needs /proc/net, psutil and abstract sockets")
def test_psutil_names_the_sockets_as_the_kernel_tables_do() -> None:
    ephemeral = sockets.ephemeral_ports()
    with contextlib.ExitStack() as stack:
        open_one_of_each(stack)
        by_tables = sorted(what for _, what in sockets.listening(sockets.socket_inodes(), ephemeral, str))
        by_psutil = sorted(what for _, what in sockets.listening_psutil(ephemeral, str))
    assert by_psutil == by_tables
    assert [what.split()[0] for what in by_tables] == ["tcp", "udp", "unix"]
    assert by_tables[0] == "tcp 127.0.0.1:* listening"
    assert by_tables[2] == f"unix @hermetic-guard-each-{os.getpid()} listening"


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


@pytest.fixture
def orphan_pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Where the double-fork tests write their grandchildren's pids (``ORPHAN_PIDS``):
    those outlive the run by design, and are killed when the test ends."""
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv("ORPHAN_PIDS", str(pids))
    yield pids
    for name in os.listdir(pids):
        try:
            os.kill(int(name), signal.SIGKILL)
        except OSError:  # gone already
            pass


@pytest.mark.skipif(not SUBREAPER, reason="no child subreapers here (Linux's prctl)")
def test_a_grandchild_whose_parent_exited_is_still_found_at_its_test(
    pytester: pytest.Pytester, orphan_pids: Path
) -> None:
    pytester.makepyfile(test_orphan=DOUBLE_FORK_TESTS)
    unasked = guarded(pytester)  # not a subreaper unless the config asks: the orphan went to init
    unasked.assert_outcomes(passed=2)
    assert os.listdir(orphan_pids), "the middle process did not start the grandchild"
    assert helper_findings(unasked) == []
    pytester.makeini("[pytest]\nhermetic_guard_orphans = true\n")
    result = guarded(pytester)
    result.assert_outcomes(passed=2)
    assert helper_findings(result) == [
        "test_orphan.py::test_double_fork: HRM612 left a child process running: python; wait for it or kill it"]


MIDDLE_THEN_EXIT = (
    "import subprocess, sys, time; "
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1)']); "
    "print(child.pid, flush=True); time.sleep(0.5)"
)


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def state_of(pid: int) -> str:
    stat = processes._proc_stat(pid)
    return stat[0] if stat else "gone"


@pytest.mark.skipif(not (SUBREAPER and PROC_CHILDREN), reason="no child subreapers or /proc children files here")
def test_an_orphan_seen_as_a_grandchild_is_reaped_when_it_exits_and_a_child_never() -> None:
    put_back = processes.keep_orphans()
    try:
        middle = subprocess.Popen([sys.executable, "-c", MIDDLE_THEN_EXIT], stdout=subprocess.PIPE, text=True)
        own = subprocess.Popen([sys.executable, "-c", "pass"])
        try:
            grandchild = int(middle.stdout.readline())  # type: ignore[union-attr]
            assert grandchild in {pid for pid, _ in processes.running_children()}  # seen below its parent
            assert middle.wait(timeout=60) == 0
            assert wait_until(lambda: state_of(grandchild) == "Z" and state_of(own.pid) == "Z")  # both ours now
            assert processes.running_children() == frozenset()
            assert state_of(grandchild) == "gone"  # the orphan is reaped
            assert state_of(own.pid) == "Z"  # a child of our own is left for its Popen
        finally:
            own.wait(timeout=60)
            middle.stdout.close()  # type: ignore[union-attr]
    finally:
        put_back()
    assert own.returncode == 0


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


# -- the same findings with -n 0 and -n 2 ---------------------------------------------------------------------

ONE_SERVER_TESTS = """
import socket

HELD = []


def test_leaves_a_server():
    HELD.append(socket.create_server(("127.0.0.1", 0)))
"""


@pytest.mark.skipif(not SUBREAPER, reason="no child subreapers here (Linux's prctl)")
def test_the_new_watches_find_the_same_with_and_without_xdist(pytester: pytest.Pytester, orphan_pids: Path) -> None:
    pytester.makeini("[pytest]\nhermetic_guard_orphans = true\n")
    pytester.makepyfile(sharedlib=SHARED_POOL, test_pool=POOL_TESTS, test_tasks=PENDING_TASK_TESTS,
                        test_orphan=DOUBLE_FORK_TESTS, test_server=ONE_SERVER_TESTS)
    plain = guarded(pytester, "-p", "no:xdist")
    (pytester.path / "flushed-late.txt").unlink()  # the residue the run found: gone, as in a fresh checkout
    spread = guarded(pytester, "-n", "2")
    plain.assert_outcomes(passed=12)
    spread.assert_outcomes(passed=12)
    assert len(helper_findings(plain)) == 5  # orphan, server, task and its late write, the shared pool once
    assert helper_findings(spread) == helper_findings(plain)


# -- a session end with no descriptor left -----------------------------------------------------------------

NO_DESCRIPTOR_LEFT_TESTS = """
import os
import resource

HELD = []


def test_uses_up_every_descriptor():
    lowest = os.open(os.devnull, os.O_RDONLY)
    os.close(lowest)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowest + 1, hard))
    for _ in range(lowest + 2):  # the holes below the limit, then the one that fails
        try:
            HELD.append(open(os.devnull))
        except OSError:
            break
    else:
        raise AssertionError("the descriptor limit was not reached")
"""


@pytest.mark.skipif(not DESCRIPTOR_LIMIT, reason="no RLIMIT_NOFILE here")
@pytest.mark.parametrize(("option", "baseline", "summary"), [
    ("--hermetic-no-baseline", "", CLEAN),  # the file is not read
    # the whole decision: the baseline found, read and judged
    ("--hermetic-guard", "test_fds.py::test_uses_up_every_descriptor\tHRM604\tGONE set\n",
     "hermetic guard: 0 new, 0 baselined, 1 stale*"),
], ids=["no-baseline", "stale-entry"])
def test_a_test_that_leaves_no_free_descriptor_does_not_crash_the_session_end(
    pytester: pytest.Pytester, option: str, baseline: str, summary: str,
) -> None:
    pytester.makepyfile(test_fds=NO_DESCRIPTOR_LEFT_TESTS)
    (pytester.path / "hermetic-baseline.txt").write_text(baseline, encoding="utf-8")
    # hypothesis's plugin imports at the summary, so it would crash there first
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist",
                                           "-p", "no:hypothesispytest", "--hermetic-guard", option, timeout=300)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([summary])
