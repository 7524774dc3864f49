"""The runtime guard through real pytest runs (``pytester.runpytest_subprocess``).

Each leak kind is caught once, at the test that made it, and the tests
after it see the state put back; a run with ``-n 2`` finds the same as a
plain one; the baseline accepts known leaks, fails new ones, reports stale
ones; ``--hermetic-guard-update`` and the static baseline commands leave
each other's entries alone; turned off, the guard does nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from flake8_hermetic.baseline.format import Entry
from flake8_hermetic.guard.monitor import Leak
from flake8_hermetic.guard.stable import stable
from flake8_hermetic.guard.verdict import decide, formatted_report, resolve_claims
from tests.helpers import REPO, hermetic

pytest_plugins = ["pytester"]

SARIF_SCHEMA = REPO / "tests" / "data" / "sarif-2.1.0-rtm.5.json"

LEAKY_CONFTEST = """
import threading

STOP = threading.Event()
CHILDREN = []


def pytest_sessionfinish(session):
    STOP.set()
    for child in CHILDREN:
        child.kill()
        child.wait(timeout=60)
"""

LEAKY_TESTS = """
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path

import pytest

import conftest

ROOT = Path(__file__).resolve().parents[1]


def test_tmp_residue():
    tempfile.mkdtemp()


def test_checkout_residue():
    (ROOT / "build-output.txt").write_text("x")


def test_cwd(tmp_path):
    os.chdir(tmp_path)


def test_cwd_is_back():
    assert Path.cwd() == ROOT


def test_env():
    os.environ["HERMETIC_GUARD_DEMO"] = "secret-value"


def test_env_is_back():
    assert "HERMETIC_GUARD_DEMO" not in os.environ


def test_home():
    (Path(os.environ["HOME"]) / ".demo-cache").mkdir()


def test_umask():
    os.umask(0o077)


def test_umask_is_back():
    mask = os.umask(0o022)
    os.umask(mask)
    assert mask != 0o077


def test_signal():
    signal.signal(signal.SIGUSR1, lambda *args: None)


def test_syspath():
    sys.path.insert(0, str(ROOT / "plugins"))


def test_syspath_is_back():
    assert str(ROOT / "plugins") not in sys.path


def test_warnings():
    warnings.simplefilter("ignore")


def test_logging():
    logging.getLogger().addHandler(logging.NullHandler())


def wait_for_stop():
    conftest.STOP.wait(120)


def test_thread():
    threading.Thread(target=wait_for_stop, daemon=True).start()


def test_child():
    conftest.CHILDREN.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]))


@pytest.fixture
def cleans_up():
    os.environ["CLEANED_BY_FIXTURE"] = "1"
    yield
    del os.environ["CLEANED_BY_FIXTURE"]


def test_fixture_cleanup_counts(cleans_up):
    assert os.environ["CLEANED_BY_FIXTURE"] == "1"


@pytest.fixture(scope="module")
def module_state():
    os.environ["HELD_BY_MODULE"] = "1"
    yield
    del os.environ["HELD_BY_MODULE"]


def test_module_fixture_first(module_state):
    assert os.environ["HELD_BY_MODULE"] == "1"


def test_module_fixture_second(module_state):
    assert os.environ["HELD_BY_MODULE"] == "1"


def test_temp_dir_is_redirected():
    Path(os.environ["GUARD_PROBE"]).write_text(tempfile.gettempdir() + "\\n" + os.environ.get("TMPDIR", ""))
"""

EXPECTED_LEAKS = {
    ("test_tmp_residue", "HRM601", "tmp*"),
    ("test_checkout_residue", "HRM602", "build-output.txt"),
    ("test_cwd", "HRM603", "<basetemp>/test_cwd*"),
    ("test_env", "HRM604", "HERMETIC_GUARD_DEMO set"),
    ("test_home", "HRM605", "~/.demo-cache"),
    ("test_umask", "HRM606", "0077"),
    ("test_signal", "HRM607", "SIGUSR1"),
    ("test_syspath", "HRM608", "added <rootdir>/plugins"),
    ("test_warnings", "HRM609", "added ignore Warning"),
    ("test_logging", "HRM610", "NullHandler"),
    ("test_thread", "HRM611", "test_leaks.wait_for_stop"),
    ("test_child", "HRM612", "python"),
}


def leaky_project(pytester: pytest.Pytester, home: Path, conftest: str = LEAKY_CONFTEST) -> None:
    pytester.makeini(f"""
        [pytest]
        testpaths = tests
        hermetic_guard_grace = 0.2
        hermetic_guard_home = {home}
    """)
    pytester.makepyfile(conftest=conftest)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_leaks.py").write_text(LEAKY_TESTS, encoding="utf-8")


def guarded_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, home: Path, probe: Path,
                *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    shutil.rmtree(home, ignore_errors=False) if home.exists() else None
    home.mkdir()
    (pytester.path / "build-output.txt").unlink(missing_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GUARD_PROBE", str(probe))
    report = pytester.path.parent / f"report{len(args)}.json"
    result = pytester.runpytest_subprocess("-p", "no:warnings", "-p", "no:cacheprovider", *args,
                                           f"--hermetic-guard-report={report}", timeout=300)
    return result, json.loads(report.read_text(encoding="utf-8"))


def found(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(item["nodeid"].rpartition("::")[2], item["code"], item["what"]) for item in report["new"]}


def test_each_leak_is_caught_at_its_test_and_put_back_with_or_without_xdist(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home, probe = tmp_path / "home", tmp_path / "probe.txt"
    leaky_project(pytester, home)

    plain, plain_report = guarded_run(pytester, monkeypatch, home, probe, "--hermetic-guard")
    plain.assert_outcomes(passed=20)
    assert plain.ret == 1  # every test passed: the leaks fail the run
    assert found(plain_report) == EXPECTED_LEAKS
    assert "secret-value" not in plain.stdout.str()  # env values are never shown
    assert "hermetic guard: 12 new, 0 baselined, 0 stale" in plain.stdout.str()
    temp_dir, tmpdir_variable = probe.read_text(encoding="utf-8").splitlines()
    assert temp_dir == tmpdir_variable
    assert re.match(r"hermetic-guard-run-", os.path.basename(temp_dir))
    assert not os.path.exists(temp_dir)  # removed at the end of the run

    distributed, distributed_report = guarded_run(pytester, monkeypatch, home, probe, "-n", "2", "--hermetic-guard")
    distributed.assert_outcomes(passed=20)
    assert distributed.ret == 1
    assert found(distributed_report) == EXPECTED_LEAKS
    assert re.match(r"hermetic-guard-gw\d-", os.path.basename(probe.read_text(encoding="utf-8").splitlines()[0]))


def test_turned_off_the_guard_does_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home, probe, temp = tmp_path / "home", tmp_path / "probe.txt", tmp_path / "tmp"
    leaky_project(pytester, home)
    home.mkdir()
    temp.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GUARD_PROBE", str(probe))
    monkeypatch.setenv("TMPDIR", str(temp))  # the leaky suite's residue lands here, unguarded
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "not is_back", timeout=300)
    result.assert_outcomes(passed=16)
    assert result.ret == 0
    assert "hermetic guard" not in result.stdout.str()
    assert probe.read_text(encoding="utf-8").splitlines() == [str(temp), str(temp)]
    assert [entry.name[:3] for entry in temp.iterdir()] == ["tmp"]  # the mkdtemp() residue, nothing of the guard


def test_a_hermetic_suite_reports_nothing(pytester: pytest.Pytester) -> None:
    (pytester.path / "tests").mkdir()
    shutil.copy(REPO / "examples" / "tests" / "test_hermetic_suite.py", pytester.path / "tests")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", "-n", "2", timeout=300)
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["hermetic guard: 0 new, 0 baselined, 0 stale*"])


def test_residue_made_outside_any_test_is_the_sessions(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="""
        import os
        import tempfile

        os.close(tempfile.mkstemp(suffix=".log")[0])  # at collection


        def test_one():
            assert True
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", timeout=300)
    result.assert_outcomes(passed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines([".: HRM601 left 'tmp*.log' in the temporary directory;*", "hermetic guard: 1 new,*"])


BASELINE_TESTS = """
import os


def test_known():
    os.environ["KNOWN"] = "1"


def test_new():
    os.environ["NEW"] = "1"


def test_fixed():
    pass


def test_deselected():
    os.environ["X"] = "1"
"""

STATIC_ENTRY = 'tests/test_app.py::test_known\tHRM108\t"/tmp/known.txt"'  # a static rule on by default: stale
RUNTIME_ENTRIES = [
    "tests/test_app.py::test_deselected\tHRM604\tX set",  # did not run: judged by nobody
    "tests/test_app.py::test_fixed\tHRM604\tGONE set",  # ran, no longer leaks: stale
    "tests/test_app.py::test_known\tHRM604\tKNOWN set",
    "tests/test_gone.py::test_x\tHRM604\tY set",  # a file that is gone: the update drops it
]


def test_baseline_accepts_known_fails_new_reports_stale_and_update_owns_only_runtime_entries(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_app.py").write_text(BASELINE_TESTS, encoding="utf-8")
    baseline = pytester.path / "hermetic-baseline.txt"
    baseline.write_text("# our debt\n\n" + "\n".join(sorted([STATIC_ENTRY, *RUNTIME_ENTRIES])) + "\n", "utf-8")
    sarif_file = pytester.path.parent / "guard.sarif"

    judged = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--hermetic-guard", "-k", "not deselected",
        f"--hermetic-guard-report={sarif_file}", "--hermetic-guard-format=sarif", timeout=300,
    )
    judged.assert_outcomes(passed=3)
    assert judged.ret == 1
    judged.stdout.fnmatch_lines([
        "tests/test_app.py::test_new: HRM604 left the environment variable NEW set;*",
        "stale baseline entry tests/test_app.py::test_fixed HRM604 GONE set: *",
        "hermetic guard: 1 new, 1 baselined, 1 stale (baseline hermetic-baseline.txt)",
    ])
    log = json.loads(sarif_file.read_text(encoding="utf-8"))
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")), cls=jsonschema.Draft4Validator)
    results = [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in log["runs"][0]["results"]]
    assert results == [("HRM900", "hermetic-baseline.txt", 4), ("HRM604", "tests/test_app.py", 9)]

    updated = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--hermetic-guard-update", "--hermetic-guard-allow-growth", "-n", "2",
        "-k", "not deselected", timeout=300,
    )
    assert updated.ret == 0
    assert baseline.read_text(encoding="utf-8") == "# our debt\n\n" + "\n".join(sorted([
        STATIC_ENTRY,
        "tests/test_app.py::test_deselected\tHRM604\tX set",
        "tests/test_app.py::test_known\tHRM604\tKNOWN set",
        "tests/test_app.py::test_new\tHRM604\tNEW set",
    ])) + "\n"  # and the entry of tests/test_gone.py, a file that is gone, is dropped
    again = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--hermetic-guard", timeout=300)
    assert again.ret == 0
    again.stdout.fnmatch_lines(["hermetic guard: 0 new, 3 baselined, 0 stale*"])

    runtime_lines = [line for line in baseline.read_text(encoding="utf-8").splitlines() if "\tHRM6" in line]
    assert hermetic(["baseline", "check"], cwd=pytester.path).stdout.splitlines() == [
        f"hermetic-baseline.txt:4: stale (matches no violation): {STATIC_ENTRY!r}"
    ]
    assert hermetic(["baseline", "prune"], cwd=pytester.path).returncode == 0
    assert baseline.read_text(encoding="utf-8") == "# our debt\n\n" + "\n".join(runtime_lines) + "\n"
    (pytester.path / ".flake8").write_text("[flake8]\nextend-select = HRM107\n", encoding="utf-8")  # off by default
    assert hermetic(["baseline", "regenerate", "--allow-growth"], cwd=pytester.path).returncode == 0
    regenerated = baseline.read_text(encoding="utf-8").splitlines()
    assert [line for line in regenerated if "\tHRM6" in line] == runtime_lines
    assert {line.split("\t")[1] for line in regenerated[2:]} == {"HRM107", "HRM604"}  # the raw env writes


# -- the decision as data in, data out ----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "normal"), [
    pytest.param("tmpab3_9xyz", "tmp*", id="mkdtemp"),
    pytest.param("tmpk2j3h4g5.json", "tmp*.json", id="mkstemp-suffix"),
    pytest.param("myapp-k3j_x9ab", "myapp-*", id="prefix"),
    pytest.param("/run/guard/pytest-12/test_x0", "<tmp>/pytest-*/test_x*", id="root-and-counters"),
    pytest.param("cache-marker", "cache-marker", id="plain-name"),
])
def test_stable_what_normalises_random_parts(text: str, normal: str) -> None:
    assert stable(text, [("/run/guard", "<tmp>")]) == normal


def claim(nodeid: str, start: float, end: float, made: float, wrote: bool = False) -> Leak:
    return Leak(nodeid, "HRM602", "out.txt", claim={"start": start, "end": end, "made": made, "wrote": wrote})


@pytest.mark.parametrize(("claims", "winner"), [
    pytest.param([claim("t::a", 0, 5, 3), claim("t::b", 1, 4, 3, wrote=True)], "t::b", id="the-writer"),
    pytest.param([claim("t::a", 0, 2, 3), claim("t::b", 2.5, 4, 3)], "t::b", id="running-when-made"),
    pytest.param([claim("t::a", 0, 5, 3), claim("t::b", 2, 4, 3)], "t::b", id="latest-start-before"),
])
def test_shared_residue_goes_to_one_claim(claims: list[Leak], winner: str) -> None:
    assert [leak.nodeid for leak in resolve_claims(claims)] == [winner]


def test_a_claim_won_by_time_says_it_is_a_guess_and_a_writer_s_does_not(tmp_path: Path) -> None:
    by_writer = [claim("t.py::a", 0, 5, 3), claim("t.py::b", 1, 4, 3, wrote=True)]
    by_time = [claim("t.py::a", 0, 2, 3), claim("t.py::b", 2.5, 4, 3)]  # another entry, made by a child process
    by_time[0].what = by_time[1].what = by_time[0].claim["entry"] = by_time[1].claim["entry"] = "child.txt"
    verdict = decide(by_writer + by_time, ["t.py::a", "t.py::b"], None, str(tmp_path), update=False)
    messages = {(j.leak.nodeid, j.what, j.guess): j.message for j in verdict.new}
    assert sorted(messages) == [("t.py::b", "child.txt", True), ("t.py::b", "out.txt", False)]
    assert "guess" not in messages[("t.py::b", "out.txt", False)]
    assert "rerun with -n 0" in messages[("t.py::b", "child.txt", True)]
    report = json.loads(formatted_report(verdict, "json", str(tmp_path)))
    assert sorted(item["attribution"] for item in report["new"]) == ["exact", "guess"]


def test_update_keeps_static_entries_unrun_tests_and_star_entries(tmp_path: Path) -> None:
    baseline = tmp_path / "hermetic-baseline.txt"
    baseline.write_text("\n".join([
        "a.py::t1\tHRM604\t*", "a.py::t2\tHRM604\tOLD set", "a.py::t1\tHRM201\ttime.sleep(1)",
        "a.py::t3\tHRM611\tx.run",
    ]) + "\n", encoding="utf-8")
    (tmp_path / "a.py").write_text("", encoding="utf-8")  # the test file is there: its entries stay
    leaks = [Leak("a.py::t1", "HRM604", "A set"), Leak("a.py::t1", "HRM604", "B set")]
    verdict = decide(leaks, ["a.py::t1", "a.py::t2"], str(baseline), str(tmp_path), update=True)
    assert (len(verdict.new), len(verdict.baselined), [e.render() for e in verdict.stale]) == (
        0, 2, ["a.py::t2\tHRM604\tOLD set"])
    assert baseline.read_text(encoding="utf-8").splitlines()[-3:] == [
        "a.py::t1\tHRM201\ttime.sleep(1)", "a.py::t1\tHRM604\t*", "a.py::t3\tHRM611\tx.run",
    ]
    assert Entry("a.py", "t1", "HRM604", "*").render() in baseline.read_text(encoding="utf-8")


def test_github_format_annotates_the_test_and_the_stale_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    baseline = tmp_path / "hermetic-baseline.txt"
    baseline.write_text("tests/test_a.py::test_old\tHRM611\tapp.serve\n", encoding="utf-8")
    leaks = [Leak("tests/test_a.py::test_env", "HRM604", "APP_MODE set", "tests/test_a.py", 7)]
    verdict = decide(leaks, ["tests/test_a.py::test_env", "tests/test_a.py::test_old"], str(baseline), str(tmp_path),
                     update=False)
    assert formatted_report(verdict, "github", str(tmp_path)).splitlines() == [
        "::warning file=hermetic-baseline.txt,line=1,title=HRM900::stale baseline entry "
        "tests/test_a.py::test_old HRM611 app.serve: the test no longer leaks this; delete the line "
        "(or run pytest --hermetic-guard-update)",
        "::error file=tests/test_a.py,line=7,col=1,title=HRM604::left the environment variable APP_MODE set; "
        "use monkeypatch.setenv()/delenv()",
        "1 new, 0 baselined, 1 stale",
    ]
