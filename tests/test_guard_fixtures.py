"""A broader fixture's finalization under the guard: found once, with or without xdist.

A module-, class- or session-scoped fixture whose tests are spread over two
xdist workers is set up and finalized on each. What its finalization
leaves (residue it makes, an env var its setup set and never unset) is
found by each worker at a different test; ``-n 0`` finds it once, at the
last of its tests. The guard marks such leaks with the fixture and the
test's place in the collection, and the decision keeps the one ``-n 0``
reports. A test's own leak is never merged away.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flake8_hermetic.guard.monitor import Leak
from flake8_hermetic.guard.verdict import one_finalization

pytest_plugins = ["pytester"]

CONFTEST = """
import os
import tempfile
from pathlib import Path

import pytest


def note(label):
    \"\"\"Say which process set a fixture up (the outer test checks that both workers did).\"\"\"
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (Path(os.environ["GUARD_NOTES"]) / f"{label}-{worker}").touch()


@pytest.fixture(scope="session")
def session_residue():
    note("session")
    yield
    tempfile.mkdtemp(suffix="-session-left")


@pytest.fixture(scope="module")
def module_residue(request):
    \"\"\"One fixture, set up and finalized for each module that uses it.\"\"\"
    note(request.module.__name__)
    yield
    tempfile.mkdtemp(suffix="-module-left")
"""

MODULE_TESTS = """
import os
import time

import pytest

from conftest import note


@pytest.fixture(scope="module")
def env_never_unset():
    note("env")
    os.environ["SET_BY_MODULE_FIXTURE"] = "1"


@pytest.mark.parametrize("n", range(8))
def test_module(module_residue, env_never_unset, session_residue, n):
    time.sleep(0.1)
"""

TWIN_TESTS = """
import tempfile
import time

import pytest

from conftest import note


@pytest.fixture(scope="module")
def first():
    note("first")
    yield
    tempfile.mkdtemp(suffix="-twin")


@pytest.fixture(scope="module")
def second():
    note("second")
    yield
    tempfile.mkdtemp(suffix="-twin")


@pytest.mark.parametrize("n", range(8))
def test_twins(first, second, module_residue, session_residue, n):
    time.sleep(0.1)
"""

OWN_TESTS = """
import os
import tempfile
import time

import pytest

from conftest import note


@pytest.fixture(scope="module")
def residue_at_teardown():
    note("residue")
    yield
    tempfile.mkdtemp(suffix="-module-left")


@pytest.fixture(scope="module")
def sets_at_teardown():
    note("sets")
    yield
    os.environ["ALSO_SET_BY_THE_LAST_TEST"] = "1"


@pytest.mark.parametrize("n", range(7))
def test_module(residue_at_teardown, sets_at_teardown, n):
    time.sleep(0.1)


def test_last_leaks_its_own(residue_at_teardown, sets_at_teardown):
    os.environ["OWN_LEAK"] = "1"
    os.environ["ALSO_SET_BY_THE_LAST_TEST"] = "1"
    tempfile.mkdtemp(suffix="-module-left")
"""


def project(pytester: pytest.Pytester, modules: dict[str, str]) -> None:
    pytester.makeini("""
        [pytest]
        testpaths = tests
    """)
    pytester.makepyfile(conftest=CONFTEST)
    (pytester.path / "tests").mkdir()
    for name, text in modules.items():
        (pytester.path / "tests" / f"{name}.py").write_text(text, encoding="utf-8")


def findings(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, notes: Path, *args: str,
             passed: int) -> tuple[list[tuple[str, str, str]], set[str]]:
    """The guard's findings (node id, code, what: a sorted list, so a finding
    found twice shows twice) and which fixtures each process set up."""
    notes.mkdir()
    monkeypatch.setenv("GUARD_NOTES", str(notes))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite's own worker, when it runs under xdist
    report = notes.parent / f"{notes.name}.json"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", *args,
                                           f"--hermetic-guard-report={report}", timeout=300)
    result.assert_outcomes(passed=passed)
    assert result.ret == 1  # every test passed: the leaks fail the run
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    found = sorted((item["nodeid"], item["code"], item["what"]) for item in data["new"])
    return found, {entry.name for entry in notes.iterdir()}


def on_both_workers(*labels: str) -> set[str]:
    return {f"{label}-{worker}" for label in labels for worker in ("gw0", "gw1")}


MODULE_AND_SESSION_FINDINGS = sorted([
    ("tests/test_mod.py::test_module[7]", "HRM601", "tmp*-module-left"),
    ("tests/test_mod.py::test_module[7]", "HRM604", "SET_BY_MODULE_FIXTURE set"),
    # the same fixture of the conftest, finalized for another module: another finding
    ("tests/test_twins.py::test_twins[7]", "HRM601", "tmp*-module-left"),
    # two fixtures leaving the same name stay two findings
    ("tests/test_twins.py::test_twins[7]", "HRM601", "tmp*-twin"),
    ("tests/test_twins.py::test_twins[7]", "HRM601", "tmp*-twin"),
    # the session's fixture is finalized after the last test of the session
    ("tests/test_twins.py::test_twins[7]", "HRM601", "tmp*-session-left"),
])


def test_module_and_session_fixture_finalizer_leaks_are_found_once_with_or_without_xdist(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project(pytester, {"test_mod": MODULE_TESTS, "test_twins": TWIN_TESTS})

    plain, plain_notes = findings(pytester, monkeypatch, tmp_path / "plain", passed=16)
    assert plain == MODULE_AND_SESSION_FINDINGS
    assert plain_notes == {"test_mod-main", "test_twins-main", "env-main", "session-main",
                           "first-main", "second-main"}

    distributed, distributed_notes = findings(pytester, monkeypatch, tmp_path / "distributed", "-n", "2",
                                              "--dist", "load", passed=16)
    # each fixture was set up, and finalized, on both workers: each found its leaks ...
    assert distributed_notes == on_both_workers("test_mod", "test_twins", "env", "session", "first", "second")
    # ... and the run reports them once, at the test -n 0 blames
    assert distributed == plain


OWN_FINDINGS = sorted([
    ("tests/test_own.py::test_last_leaks_its_own", "HRM604", "OWN_LEAK set"),
    # the test set it before the fixture's finalization set it again: the test's leak, once
    ("tests/test_own.py::test_last_leaks_its_own", "HRM604", "ALSO_SET_BY_THE_LAST_TEST set"),
    # the same name made by the test and by the finalization: one each
    ("tests/test_own.py::test_last_leaks_its_own", "HRM601", "tmp*-module-left"),
    ("tests/test_own.py::test_last_leaks_its_own", "HRM601", "tmp*-module-left"),
])


def test_a_tests_own_leak_in_the_teardown_that_finalizes_a_leaky_fixture_stays_its_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project(pytester, {"test_own": OWN_TESTS})

    plain, _ = findings(pytester, monkeypatch, tmp_path / "plain", passed=8)
    assert plain == OWN_FINDINGS

    distributed, notes = findings(pytester, monkeypatch, tmp_path / "distributed", "-n", "2", "--dist", "load",
                                  passed=8)
    assert notes == on_both_workers("residue", "sets")
    assert distributed == plain


PARAMETER_TESTS = """
import tempfile
import time

import pytest


from conftest import note


@pytest.fixture(scope="module", params=["a", "b"])
def flavour(request):
    note("flavour-" + request.param)
    return request.param


@pytest.fixture(scope="module")
def built(flavour):
    \"\"\"Not parametrized itself, but set up again for each flavour.\"\"\"
    yield
    tempfile.mkdtemp(suffix="-built")


@pytest.mark.parametrize("n", range(6))
def test_build(built, n):
    time.sleep(0.1)
"""


def test_a_fixture_set_up_once_per_parameter_of_what_it_depends_on_is_found_once_per_parameter(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    project(pytester, {"test_param": PARAMETER_TESTS})
    plain, _ = findings(pytester, monkeypatch, tmp_path / "plain", passed=12)
    assert plain == [
        # finalized when the next flavour is set up, and at the end of the module: two findings
        ("tests/test_param.py::test_build[b-0]", "HRM601", "tmp*-built"),
        ("tests/test_param.py::test_build[b-5]", "HRM601", "tmp*-built"),
    ]

    distributed, notes = findings(pytester, monkeypatch, tmp_path / "distributed", "-n", "2", "--dist", "load",
                                  passed=12)
    assert notes == on_both_workers("flavour-a", "flavour-b")  # each worker switched from a to b
    assert distributed == plain


# -- the merge as data in, data out ---------------------------------------------------------------------------

def finalized(nodeid: str, index: int, what: str = "tmp*", argname: str = "made_here", own: bool = False,
              switch: bool = False) -> Leak:
    mark = {"scope": "module", "node": "t.py", "baseid": "t.py", "argname": argname, "param": "",
            "switch": switch, "index": index, "own": own}
    return Leak(nodeid, "HRM601", what, fixtures=[mark])


@pytest.mark.parametrize(("leaks", "kept"), [
    pytest.param([finalized("t.py::a", 3), finalized("t.py::c", 7), finalized("t.py::b", 5)], ["t.py::c"],
                 id="the-highest-index"),
    pytest.param([finalized("t.py::a", 3), finalized("t.py::c", 7, argname="other")], ["t.py::a", "t.py::c"],
                 id="another-fixture"),
    pytest.param([finalized("t.py::a", 3), finalized("t.py::c", 7, what="other*")], ["t.py::a", "t.py::c"],
                 id="another-what"),
    pytest.param([finalized("t.py::a", 3), finalized("t.py::c", 7, own=True)], ["t.py::c"],
                 id="the-test-made-it-where-n0-finalizes"),
    pytest.param([finalized("t.py::a", 3, own=True), finalized("t.py::c", 7)], ["t.py::a", "t.py::c"],
                 id="a-tests-own-is-never-dropped"),
    pytest.param([Leak("t.py::a", "HRM601", "tmp*"), finalized("t.py::c", 7)], ["t.py::a", "t.py::c"],
                 id="unmarked"),
    pytest.param([finalized("t.py::b", 4, switch=True), finalized("t.py::c", 6, switch=True),
                  finalized("t.py::d", 7)], ["t.py::b"], id="the-first-parameter-switch"),
])
def test_one_finalization_keeps_what_a_plain_run_reports(leaks: list[Leak], kept: list[str]) -> None:
    assert [leak.nodeid for leak in one_finalization(leaks)] == kept


def test_the_marks_travel_from_worker_to_controller() -> None:
    leak = finalized("t.py::c", 7)
    assert Leak.from_dict(json.loads(json.dumps(leak.as_dict()))) == leak
