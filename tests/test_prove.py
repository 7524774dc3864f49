"""``flake8-hermetic prove`` on small real pytest projects, the command run as a subprocess.

Each project is made with ``pytester``; the command runs the project's
pytest itself (``sys.executable -m pytest``), so every proof here comes
from real guarded runs. Run this file with a 3.12+ interpreter to cover
the ``sys.monitoring`` path (3.10/3.11 take the ``settrace`` one).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_hermetic.collect import Found
from flake8_hermetic.prove import report
from flake8_hermetic.prove.matching import RUNTIME_OF, proven_by
from flake8_hermetic.prove.plan import Target, rounds
from flake8_hermetic.prove.runner import Proof, Run
from tests.helpers import child_env, run

pytest_plugins = ["pytester"]

CONFTEST = """
import os

import pytest


@pytest.fixture(autouse=True)
def _forget_cleaned():
    yield
    os.environ.pop("PROVE_CLEANED", None)
"""

LEAKS_ONLY = """
import os


def test_leaks():
    os.environ["PROVE_LEAKED"] = "1"
"""

PROOFS = LEAKS_ONLY + '''

import shutil
import tempfile

import pytest


def make_dir():
    path = tempfile.mkdtemp(
        prefix="made-")
    assert os.path.isdir(path)
    shutil.rmtree(path)


def test_helper():
    make_dir()


def test_two_in_one():
    os.environ["PROVE_CLEANED"] = "1"
    path = tempfile.mkdtemp()
    assert os.path.isdir(path)
    shutil.rmtree(path)


@pytest.fixture
def pinned_mode(monkeypatch):
    monkeypatch.setenv("PROVE_MODE", "test")


def test_undo(monkeypatch, pinned_mode):
    monkeypatch.setenv("PROVE_TOKEN", "x")
    assert os.environ["PROVE_TOKEN"] == "x"
    monkeypatch.undo()
    assert "PROVE_TOKEN" not in os.environ


@pytest.mark.skip(reason="not today")
def test_skipped():
    os.environ["PROVE_SKIPPED"] = "1"


def test_deselected():
    os.environ["PROVE_DESELECTED"] = "1"
'''

BROKEN = """
import os

import no_such_module_for_prove  # noqa: F401


def test_broken():
    os.environ["PROVE_BROKEN"] = "1"
"""


def prove(project: Path, home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "flake8_hermetic", "prove", *args], cwd=project,
               env=env if env is not None else child_env(home), timeout=240)


def tree(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def by_line(output: str) -> dict[tuple[str, int], dict[str, object]]:
    return {(row["path"], row["line"]): row for row in json.loads(output)}


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def test_every_proof_kind_and_the_project_left_untouched(pytester: pytest.Pytester, home: Path) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_proofs=LEAKS_ONLY)
    made = run([sys.executable, "-m", "flake8_hermetic", "baseline", "regenerate", "--select=HRM1"],
               cwd=pytester.path, env=child_env(home))
    assert made.returncode == 0, made.stderr
    pytester.makepyfile(test_proofs=PROOFS, test_broken=BROKEN)
    before = tree(pytester.path)
    assert "hermetic-baseline.txt" in before

    env = {k: v for k, v in child_env(home).items() if k != "PYTHONDONTWRITEBYTECODE"}  # prove must see to it
    result = prove(pytester.path, home, "--select=HRM1", "--format=json", "--", "-p", "no:randomly",
                   "-k", "not deselected", env=env)

    assert result.returncode == 1, result.stderr
    rows = by_line(result.stdout)
    seen = {key: (row["code"], row["proof"], row["test"], row["evidence"]) for key, row in rows.items()}
    assert seen == {
        ("test_broken.py", 7): ("HRM107", "not-reached", None,
                                "import error: ModuleNotFoundError: No module named 'no_such_module_for_prove'"),
        ("test_proofs.py", 5): ("HRM107", "leaks", "test_proofs.py::test_leaks", "PROVE_LEAKED set"),
        # a helper's line, proven through the test that reached it; a statement over two lines
        ("test_proofs.py", 15): ("HRM101", "leaks-on-failure", "test_proofs.py::test_helper", "made-*"),
        # two findings in one test: two rounds; the autouse fixture undoes the write, even on failure
        ("test_proofs.py", 26): ("HRM107", "no-leak", "test_proofs.py::test_two_in_one",
                                 "nothing matching leaked, with or without the injected failure"),
        ("test_proofs.py", 27): ("HRM101", "leaks-on-failure", "test_proofs.py::test_two_in_one", "tmp*"),
        ("test_proofs.py", 40): ("HRM104", "no-runtime-check", None, "the rule has no runtime counterpart"),
        ("test_proofs.py", 46): ("HRM107", "not-reached", None, "skipped: not today"),
        ("test_proofs.py", 50): ("HRM107", "not-reached", None, "deselected: test_proofs.py::test_deselected"),
    }
    assert [key for key, row in rows.items() if row["baselined"]] == [("test_proofs.py", 5)]
    assert {row["round"] for key, row in rows.items() if key in {("test_proofs.py", 26), ("test_proofs.py", 27)}} \
        == {1, 2}
    assert all({"col", "message"} <= set(row) for row in rows.values())
    lines = result.stderr.splitlines()
    assert lines[0] == "8 findings: 1 leaks, 2 leaks-on-failure, 1 no-leak, 3 not-reached, 1 no-runtime-check"
    assert lines[1].startswith("flake8-hermetic prove: 2 injection rounds after the plain run; plain run ")
    assert "round 1 " in lines[1] and "round 2 " in lines[1] and "round 3" not in lines[1]
    assert tree(pytester.path) == before  # no cache, no bytecode, no report, the baseline as it was


XDIST_PROJECT = """
import os
import shutil
import tempfile

import pytest


@pytest.fixture
def configured():
    os.environ["PROVE_CLEANED"] = "1"
    return "ok"


def test_first(configured):
    assert configured == "ok"


def test_plain():
    assert True


def test_second(configured):
    path = tempfile.mkdtemp()
    assert os.path.isdir(path)
    shutil.rmtree(path)


def test_fourth(configured):
    assert configured
"""


def test_xdist_gives_the_same_proofs(pytester: pytest.Pytester, home: Path) -> None:
    pytest.importorskip("xdist")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_spread=XDIST_PROJECT)
    results = [prove(pytester.path, home, "--select=HRM1", "--format=json", "--", "-p", "no:randomly", *extra)
               for extra in ([], ["-n", "2"])]
    proofs = [{key: (row["proof"], row["test"], row["evidence"]) for key, row in by_line(r.stdout).items()}
              for r in results]
    assert proofs[0] == {
        # a fixture's line: proven through the first test, in collection order, that set it up
        ("test_spread.py", 10): ("no-leak", "test_spread.py::test_first",
                                 "nothing matching leaked, with or without the injected failure"),
        ("test_spread.py", 23): ("leaks-on-failure", "test_spread.py::test_second", "tmp*"),
    }, results[0].stderr
    assert proofs[1] == proofs[0], results[1].stderr
    assert [r.returncode for r in results] == [1, 1]


PRECISION = """
import json
import os
import traceback


def log(entry):
    with open(os.environ["PROVE_LOG"], "a") as stream:
        stream.write(json.dumps(entry) + "\\n")


def helper(steps):
    os.environ[
        "PROVE_MULTI"] = "1"
    steps.append("after")


def last(steps):
    steps.append("before")
    os.environ["PROVE_LAST"] = "1"


def test_injected():
    steps = []
    try:
        helper(steps)
    except Exception as exc:
        value = os.environ.pop("PROVE_MULTI", None)  # noqa: HRM107
        frame = [f for f in traceback.extract_tb(exc.__traceback__) if "flake8_hermetic" not in f.filename][-1]
        log({"test": "injected", "exc": type(exc).__name__, "frame": frame.name, "line": frame.lineno,
             "set": value, "steps": steps})
        raise
    os.environ.pop("PROVE_MULTI", None)  # noqa: HRM107
    log({"test": "injected", "exc": None, "steps": steps})


def test_at_return():
    steps = []
    try:
        last(steps)
    except Exception as exc:
        value = os.environ.pop("PROVE_LAST", None)  # noqa: HRM107
        frame = [f for f in traceback.extract_tb(exc.__traceback__) if "flake8_hermetic" not in f.filename][-1]
        log({"test": "return", "exc": type(exc).__name__, "frame": frame.name,
             "set": value, "steps": steps})
        raise
    os.environ.pop("PROVE_LAST", None)  # noqa: HRM107
    log({"test": "return", "exc": None, "steps": steps})


def test_unchanged():
    steps = []
    helper(steps)
    os.environ.pop("PROVE_MULTI", None)  # noqa: HRM107
    log({"test": "unchanged", "steps": steps})
"""


def test_injection_is_right_after_the_statement_in_its_frame(
        pytester: pytest.Pytester, home: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    pytester.makepyfile(test_precise=PRECISION)
    log = tmp_path_factory.mktemp("log") / "log.jsonl"
    env = {**child_env(home), "PROVE_LOG": str(log)}
    result = prove(pytester.path, home, "--select=HRM107", "--", "-p", "no:randomly", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    plain, injected = entries[:3], entries[3:]
    # raised as the frame returns: settrace's return event leaves no traceback entry of the frame itself
    returned_from = "last" if sys.version_info >= (3, 12) else "test_at_return"
    assert plain == [
        {"test": "injected", "exc": None, "steps": ["after"]},
        {"test": "return", "exc": None, "steps": ["before"]},
        {"test": "unchanged", "steps": ["after"]},
    ]
    # one round: each test holds one finding; the statement completed (the variable is set), nothing after it ran,
    # the exception is raised in the helper's frame at the next line (or at its return); the third test ran as is
    assert injected == [
        {"test": "injected", "exc": "HermeticProveInjected", "frame": "helper", "line": 14, "set": "1", "steps": []},
        {"test": "return", "exc": "HermeticProveInjected", "frame": returned_from, "set": "1", "steps": ["before"]},
        {"test": "unchanged", "steps": ["after"]},
    ]
    assert "2 findings: 0 leaks, 0 leaks-on-failure, 2 no-leak" in result.stdout
    assert "test_precise.py:12:5: HRM107 " in result.stdout
    assert "1 injection round after the plain run" in result.stderr


HANGS = """
import os
import threading


def test_hangs_on_failure():
    done = False
    try:
        os.environ["PROVE_HANG"] = "1"
        done = True
    finally:
        if not done:
            threading.Event().wait()
    os.environ.pop("PROVE_HANG", None)
"""


def test_a_test_that_hangs_after_injection_is_stopped(pytester: pytest.Pytester, home: Path) -> None:
    pytester.makepyfile(test_hang=HANGS)
    result = prove(pytester.path, home, "--select=HRM107", "--format=json", "--timeout=1", "--",
                   "-p", "no:randomly")
    assert result.returncode == 1, result.stderr
    [row] = json.loads(result.stdout)
    assert (row["proof"], row["timed_out"]) == ("leaks-on-failure", True)
    assert "the test hung after the injected failure and was stopped" in row["evidence"]


def _usage_case(case: str, project: Path, home: Path,
                factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str] | None]:
    if case == "empty":
        return factory.mktemp("empty"), None
    if case == "broken-pytest":  # an environment whose pytest cannot start
        fake = factory.mktemp("fake")
        (fake / "pytest").mkdir()
        (fake / "pytest" / "__init__.py").write_text("raise ImportError('this pytest is broken')\n")
        return project, {**child_env(home), "PYTHONPATH": str(fake)}
    return project, None


@pytest.mark.parametrize(("case", "args", "expected"), [
    ("project", ["--format=nope"], "invalid choice: 'nope'"),
    ("project", ["--timeout=0"], "--timeout"),
    ("empty", [], "no test file found"),
    ("project", ["--select=HRM107", "--", "-k", "no_such_test"], "select no test"),
    ("broken-pytest", ["--select=HRM107"], "pytest could not be started"),
], ids=["bad-flag", "bad-timeout", "not-a-project", "selects-nothing", "no-pytest"])
def test_usage_errors_are_one_line(pytester: pytest.Pytester, home: Path, tmp_path_factory: pytest.TempPathFactory,
                                   case: str, args: list[str], expected: str) -> None:
    pytester.makepyfile(test_one="import os\n\n\ndef test_one():\n    os.environ['PROVE_X'] = '1'\n")
    project, env = _usage_case(case, pytester.path, home, tmp_path_factory)
    result = prove(project, home, *args, env=env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


# -- the parts, without a run ----------------------------------------------------------------------------------


def test_the_table_is_the_guard_codes_own() -> None:
    from flake8_hermetic.guard.codes import CODES

    expected = {"HRM101": "HRM601", "HRM102": "HRM601", "HRM103": "HRM601", "HRM105": "HRM603",
                "HRM106": "HRM602", "HRM107": "HRM604", "HRM110": "HRM613", "HRM112": "HRM611",
                "HRM113": "HRM612", "HRM114": "HRM614"}
    assert {rule: runtime for rule, runtime in expected.items() if runtime in proven_by(rule)} == expected
    assert all(f"[{rule}]" in next(c for c in CODES if c.code == code).prevented_by
               for rule, codes in RUNTIME_OF.items() for code in codes)
    assert proven_by("HRM104") == ()
    # related on the guard code's page, but no write the guard watches: a read of the home or of the
    # checkout, a fixed /tmp path outside the guard's own temp dir
    assert [proven_by(rule) for rule in ("HRM108", "HRM109", "HRM115", "HRM404")] == [(), (), (), ()]


def test_rounds_are_as_few_as_the_busiest_test() -> None:
    targets = [Target(n, "/p/t.py", 10 * n, 10 * n, "f", 1) for n in range(5)]
    planned = rounds({0: "a", 1: "a", 2: "a", 3: "b", 4: "c"}, targets)
    assert planned == [{0: "a", 3: "b", 4: "c"}, {1: "a"}, {2: "a"}]
    assert rounds({}, targets) == []


def _proofs() -> list[Proof]:
    found = Found("tests/test_x.py", "tests/test_x.py", 3, 5, "HRM107", "assigning os.environ[...] leaks", "test_x")
    other = Found("tests/test_x.py", "tests/test_x.py", 9, 5, "HRM101", "mkdtemp leaks", "test_y")
    return [Proof(found, False, "leaks-on-failure", "tests/test_x.py::test_x", "X set", 1),
            Proof(other, True, "no-leak", "tests/test_x.py::test_y", "nothing matching leaked", 1)]


def test_github_and_sarif_carry_the_proof(tmp_path: Path) -> None:
    proofs = _proofs()
    github = report.github(proofs).splitlines()
    assert github[0].startswith("::error file=tests/test_x.py,line=3,col=5,title=HRM107::")
    assert github[0].endswith("[prove: leaks-on-failure in tests/test_x.py::test_x: X set]")
    assert "[prove: no-leak in tests/test_x.py::test_y: nothing matching leaked (baselined)]" in github[1]
    log = json.loads(report.sarif(proofs, [], str(tmp_path)))
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["properties"]["proof"], "suppressions" in r) for r in results] == [
        ("HRM107", "leaks-on-failure", False), ("HRM101", "no-leak", True)]
    assert results[0]["properties"]["test"] == "tests/test_x.py::test_x"
    text = report.text(proofs).splitlines()
    assert text[0] == ("tests/test_x.py:3:5: HRM107 assigning os.environ[...] leaks "
                       "[leaks-on-failure in tests/test_x.py::test_x: X set]")
    assert text[-1] == "2 findings: 0 leaks, 1 leaks-on-failure, 1 no-leak, 0 not-reached, 0 no-runtime-check"
    line = report.runs_line([Run(0, 1.5, 0, 0), Run(1, 2.25, 3, 1)])
    assert line == ("flake8-hermetic prove: 1 injection round after the plain run; plain run 1.50 s; "
                    "round 1 2.25 s (3 injected); total 3.75 s")


LAST_OF_A_GENERATOR = """
import shutil
import tempfile

import pytest


@pytest.fixture
def scratch():
    path = tempfile.mkdtemp()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_uses(scratch):
    assert scratch
"""


def test_a_statement_that_ends_a_generator_says_why_nothing_was_injected(
    pytester: pytest.Pytester, home: Path
) -> None:
    pytester.makepyfile(test_gen=LAST_OF_A_GENERATOR)
    result = prove(pytester.path, home, "--select=HRM103", "--format=json", "--", "-p", "no:randomly")
    row = by_line(result.stdout)[("test_gen.py", 11)]
    assert row["test"] == "test_gen.py::test_uses", result.stderr
    # sys.monitoring (3.12+) raises as the generator's frame returns; settrace sees no event after the
    # generator's last statement that could raise, and says so
    monitoring = sys.version_info >= (3, 12)
    expected = ("no-leak", "nothing matching leaked") if monitoring else (
        "not-reached", "last statement of a generator or coroutine")
    assert (row["proof"], expected[1] in str(row["evidence"])) == (expected[0], True), row
