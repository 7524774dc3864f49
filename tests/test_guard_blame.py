"""The guard blames the test that made a leak, the same way in every run.

Each look reads the directory events once, before any watch answers, so
the order in which the residue watches ask cannot move a finding to the
next test (or to the session), and a ``-k`` run, a full run and ``-n 2``
blame the same tests. Then what would blind a look or mislead it: a test
that rebinds ``os.environ``, pytest's own ``sys.path`` inserts, a test that
used up the process's descriptors, a leaked thread that used up the grace
period before the children were waited for. Last, a suite that leaks every
kind gives the same findings with and without xdist, three runs in a row.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from flake8_hermetic.guard.audit import AUDIT
from flake8_hermetic.guard.monitor import Leak, Monitor
from flake8_hermetic.guard.residue import Residue
from flake8_hermetic.guard.session import Guard
from flake8_hermetic.guard.verdict import one_finalization, resolve_claims
from tests.helpers import write_tree
from tests.test_guard import LEAKY_CONFTEST, leaky_project

pytest_plugins = ["pytester"]

TIMEOUT = 300


def guarded(pytester: pytest.Pytester, *args: str, name: str = "report.json") -> tuple[pytest.RunResult, list[Any]]:
    """A guarded run of the pytester project; its new findings as sorted ``(nodeid, code, what)``."""
    report = pytester.path.parent / name
    report.unlink(missing_ok=True)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "--hermetic-guard",
                                           "--hermetic-no-baseline", f"--hermetic-guard-report={report}", *args,
                                           timeout=TIMEOUT)
    data = json.loads(report.read_text(encoding="utf-8"))
    return result, sorted((item["nodeid"], item["code"], item["what"]) for item in data["new"])


def fresh_run(pytester: pytest.Pytester, passed: int, *args: str, home: Path | None = None) -> list[Any]:
    """:func:`guarded`, with the residue of the previous run removed first, and every test passed."""
    if home is not None:
        if home.exists():
            shutil.rmtree(home)
        home.mkdir()
    for left in [pytester.path / "build-output.txt", *pytester.path.glob("out-*.txt"),
                 *pytester.path.glob("tests/out-*.txt")]:
        left.unlink(missing_ok=True)
    result, found = guarded(pytester, *args)
    result.assert_outcomes(passed=passed)
    return found


# -- the queue of directory events is read once per look -------------------------------------------------------

ORDER_TESTS = """
import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def test_a_checkout():
    (ROOT / "left-in-checkout.txt").write_text("x")


def test_b_tmp():
    os.close(tempfile.mkstemp()[0])


def test_c_clean():
    pass
"""


def test_residue_is_blamed_on_its_test_whatever_the_last_look_found_and_whichever_tests_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_order=ORDER_TESTS)
    expected = [
        ("test_order.py::test_a_checkout", "HRM602", "left-in-checkout.txt"),
        ("test_order.py::test_b_tmp", "HRM601", "tmp*"),
    ]
    full, found = guarded(pytester)
    full.assert_outcomes(passed=3)
    assert found == expected
    (pytester.path / "left-in-checkout.txt").unlink()
    selected, found = guarded(pytester, "-k", "a_checkout or b_tmp")
    selected.assert_outcomes(passed=2, deselected=1)
    assert found == expected


MODULE_FIXTURE_TESTS = """
import os
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def modfix():
    yield
    with open(os.path.join(tempfile.gettempdir(), "modfix-residue-{name}"), "w") as handle:
        handle.write("x")


@pytest.mark.parametrize("n", range(6))
def test_param(modfix, n):
    if n % 2:
        (Path(__file__).resolve().parent / f"out-{name}-{{n}}.txt").write_text("x")
    else:
        os.close(tempfile.mkstemp(suffix=f"-{name}-{{n}}")[0])
"""


def test_a_module_fixture_finalizer_residue_is_found_at_the_same_tests_with_and_without_xdist(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(**{f"test_mod_{name}": MODULE_FIXTURE_TESTS.format(name=name) for name in "abc"})
    runs = [fresh_run(pytester, 18, "-n", workers) for workers in ("0", "2")]
    assert runs[0] == runs[1]
    assert len(runs[0]) == 21  # 18 of the tests, 3 of the module fixtures' finalizers
    assert ("test_mod_b.py::test_param[5]", "HRM601", "modfix-residue-b") in runs[0]
    assert ("test_mod_b.py::test_param[4]", "HRM601", "tmp*-b-*") in runs[0]


def test_a_finalization_under_xdist_marks_the_other_workers_entry_not_the_one_the_test_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the race of the test above, made deterministic: another worker writes out-3.txt while this worker's
    # module fixture is set up (the fixture's hold takes it), then this worker's test writes out-1.txt and
    # the fixture is finalized in its teardown. Both entries are 'out-*.txt': the mark that the finalization
    # left one (the other worker's) must not land on the test's own, or ``one_finalization`` drops it
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    watch = Residue("checkout", {str(checkout): ""}, [])
    watch.shared = True
    monitor = Monitor([watch], claims=True)
    monkeypatch.setattr(AUDIT, "seen", set())
    monitor.begin()
    before = monitor.snapshot()
    (checkout / "out-3.txt").write_text("x")  # the other worker's: this process's audit hook never saw it
    monitor.hold(1, before, monitor.snapshot())
    monitor.begin()
    (checkout / "out-1.txt").write_text("x")
    AUDIT.seen.add(str(checkout / "out-1.txt"))  # what the worker's audit hook records for its own write
    monitor.finalizing_starts(1)
    marks = sorted(monitor.release(1))
    leaks = monitor.judge("t.py::test_param[1]", "t.py", 0)
    assert [(leak.claim["entry"], leak.claim["wrote"]) for leak in leaks] == [("out-1.txt", True), ("out-3.txt", False)]
    # the finalization left the other worker's entry (its hold had it), the test made its own
    assert marks == [("HRM602", "out-*.txt", False, "out-3.txt"), ("HRM602", "out-*.txt", True, "out-1.txt")]
    # the session marks them on the test's leaks; the fixture is finalized at index 5 with -n 0 (the other
    # worker's mark): this worker's mark of what the finalization left is dropped, the test's write stands
    guard = Guard.__new__(Guard)
    identity = {"scope": "module", "node": "t.py", "baseid": "", "argname": "modfix", "param": None, "switch": False}
    guard.positions, guard.finalized = {"t.py::test_param[1]": 1}, [(*mark, identity) for mark in marks]
    guard._mark(SimpleNamespace(nodeid="t.py::test_param[1]"), leaks)
    other = Leak("t.py::test_param[5]", "HRM602", "out-*.txt", claim={**leaks[1].claim, "wrote": False},
                 fixtures=[{**identity, "index": 5, "own": True}])
    kept = resolve_claims(one_finalization([*leaks, other]))
    assert sorted((leak.nodeid, leak.claim["entry"], leak.claim.get("guess", False)) for leak in kept) == [
        ("t.py::test_param[1]", "out-1.txt", False), ("t.py::test_param[5]", "out-3.txt", True)]


# -- what would blind a look ---------------------------------------------------------------------------------

REBINDING_TESTS = """
import os

import pytest


@pytest.fixture(scope="module")
def held():
    yield


def test_first(held):
    pass


def test_rebinds(held):
    os.environ = os.environ.copy()


def test_the_real_mapping_is_back(held):
    assert type(os.environ) is os._Environ


def test_writes_after(held):
    os.environ["WRITTEN_AFTER_THE_REBINDING"] = "1"


def test_last(held):
    pass
"""


def test_a_test_that_rebinds_os_environ_is_one_finding_and_the_real_mapping_comes_back(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_env=REBINDING_TESTS)
    result, found = guarded(pytester)
    result.assert_outcomes(passed=5)
    assert found == [
        ("test_env.py::test_rebinds", "HRM604", "os.environ replaced by a dict"),
        ("test_env.py::test_writes_after", "HRM604", "WRITTEN_AFTER_THE_REBINDING set"),
    ]


SYSPATH_PROJECT = {
    "src/pkg/__init__.py": "",
    "src/pkg/test_x.py": "def test_x():\n    pass\n",
    "tests/__init__.py": "",
    "tests/test_y.py": "import sys\n\n\ndef test_y():\n    pass\n\n\n"
                       "def test_leaks():\n    sys.path.append('/nonexistent/plugins')\n",
    "conftest.py": "",
    "pytest.ini": "[pytest]\ntestpaths = src tests\n",
}


@pytest.mark.parametrize("mode", [pytest.param(mode, id=mode) for mode in ("prepend", "append", "importlib")])
def test_what_pytest_puts_on_sys_path_while_it_sets_up_a_package_is_the_expected_state(
    pytester: pytest.Pytester, mode: str
) -> None:
    write_tree(pytester.path, SYSPATH_PROJECT)
    result, found = guarded(pytester, f"--import-mode={mode}")
    result.assert_outcomes(passed=3)
    assert found == [("tests/test_y.py::test_leaks", "HRM608", "added /nonexistent/plugins")]


DESCRIPTOR_CONFTEST = """
import resource

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
"""

DESCRIPTOR_TESTS = """
import os
import resource
import tempfile

HELD = []
LIMIT = resource.getrlimit(resource.RLIMIT_NOFILE)


def test_uses_up_the_descriptors():
    os.close(tempfile.mkstemp(suffix=".held")[0])
    try:
        while True:
            HELD.append(open(os.devnull))
    except OSError:
        pass


def test_gives_them_back():
    while HELD:
        HELD.pop().close()


def test_allows_none():
    os.close(tempfile.mkstemp(suffix=".unlisted")[0])
    resource.setrlimit(resource.RLIMIT_NOFILE, (3, LIMIT[1]))  # below every descriptor the process holds


def test_allows_them_again():
    resource.setrlimit(resource.RLIMIT_NOFILE, LIMIT)
"""


@pytest.mark.skipif(importlib.util.find_spec("resource") is None, reason="no descriptor limits to set here")
def test_a_residue_listing_that_fails_keeps_the_previous_one_looks_again_and_says_so(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(DESCRIPTOR_CONFTEST)
    pytester.makepyfile(test_fds=DESCRIPTOR_TESTS)
    result, found = guarded(pytester)
    result.assert_outcomes(passed=4)
    assert found == [
        # the guard's descriptor in reserve lists the directory when the test holds all the others
        ("test_fds.py::test_allows_them_again", "HRM601", "tmp*.unlisted"),
        ("test_fds.py::test_uses_up_the_descriptors", "HRM601", "tmp*.held"),
    ]
    # none to be had at all: the previous listing is kept, the next look lists again, and the summary says so
    result.stdout.fnmatch_lines([
        "hermetic guard: could not list the temporary directory after test_fds.py::test_allows_none "
        "(Too many open files); listed again after test_fds.py::test_allows_them_again: *",
    ])


GRACE_TESTS = """
import subprocess
import sys
import threading
import time

STOP = threading.Event()
CHILDREN = []


def test_leaks_a_thread_and_a_child_that_outlives_one_grace_period():
    threading.Thread(target=STOP.wait, args=(60,), daemon=True).start()
    ends = time.time() + 1.6  # the grace period is 1 s: this child outlives it, and not two of them
    CHILDREN.append(subprocess.Popen(
        [sys.executable, "-c", "import sys, time; time.sleep(max(0.0, float(sys.argv[1]) - time.time()))",
         repr(ends)]))


def test_ends_them():
    STOP.set()
    for child in CHILDREN:
        child.wait(timeout=60)
"""


def test_one_grace_period_from_the_end_of_the_test_is_shared_by_threads_and_children(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nhermetic_guard_grace = 1.0\n")
    pytester.makepyfile(test_grace=GRACE_TESTS)
    result, found = guarded(pytester)
    result.assert_outcomes(passed=2)
    test = "test_grace.py::test_leaks_a_thread_and_a_child_that_outlives_one_grace_period"
    assert found == [(test, "HRM611", "threading.Event.wait"), (test, "HRM612", "python")]


# -- a suite that leaks every kind ---------------------------------------------------------------------------

EVERY_KIND_CONFTEST = LEAKY_CONFTEST + """
SOCKETS = []


def pytest_unconfigure(config):
    for sock in SOCKETS:
        sock.close()
"""

MODULE_FIXTURE_LEAKS = """
import os
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def leaves_at_teardown():
    yield
    with open(os.path.join(tempfile.gettempdir(), "module-finalizer-residue"), "w") as handle:
        handle.write("x")


@pytest.mark.parametrize("n", range(4))
def test_uses_the_module_fixture(leaves_at_teardown, n):
    if n % 2:  # the checkout, then the temp dir: each look must read the events before any watch answers
        (Path(__file__).resolve().parent / f"out-{n}.txt").write_text("x")
    else:
        os.close(tempfile.mkstemp(suffix=f"-{n}.part")[0])
"""

MORE_LEAKS = """
import asyncio
import os
import signal
import socket
import tempfile

import conftest


def test_rebinds_the_environment():
    os.environ = os.environ.copy()


def test_listens():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    conftest.SOCKETS.append(server)


async def forever():
    await asyncio.sleep(3600)


def test_leaves_a_task_pending():
    loop = asyncio.new_event_loop()
    loop.create_task(forever())
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()


def test_leaves_an_alarm():
    signal.signal(signal.SIGALRM, lambda *args: None)
    signal.alarm(300)


def test_points_tempfile_elsewhere():
    tempfile.tempdir = None
"""


def test_a_suite_that_leaks_every_kind_finds_the_same_with_and_without_xdist_three_runs_in_a_row(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home, probe = tmp_path / "home", tmp_path / "probe.txt"
    leaky_project(pytester, home, EVERY_KIND_CONFTEST)
    (pytester.path / "tests" / "test_more.py").write_text(MORE_LEAKS, encoding="utf-8")
    (pytester.path / "tests" / "test_module_fixture.py").write_text(MODULE_FIXTURE_LEAKS, encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GUARD_PROBE", str(probe))
    runs = [fresh_run(pytester, 29, "-p", "no:warnings", "-n", workers, home=home)
            for _ in range(3) for workers in ("0", "2")]
    assert all(run == runs[0] for run in runs), [(Counter(run) - Counter(runs[0]), Counter(runs[0]) - Counter(run))
                                                 for run in runs]
    assert {code for _, code, _ in runs[0]} == {f"HRM6{n:02d}" for n in range(1, 17)}  # every kind
    test = "tests/test_module_fixture.py::test_uses_the_module_fixture"
    assert [found for found in runs[0] if found[0].startswith(test)] == [
        (f"{test}[0]", "HRM601", "tmp*-*.part"),
        (f"{test}[1]", "HRM602", "tests/out-*.txt"),
        (f"{test}[2]", "HRM601", "tmp*-*.part"),
        (f"{test}[3]", "HRM601", "module-finalizer-residue"),  # its teardown finalizes the module's fixture
        (f"{test}[3]", "HRM602", "tests/out-*.txt"),
    ]
