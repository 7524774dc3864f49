"""The ``flake8-hermetic`` commands as subprocesses on a project of the test's own."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import jsonschema
import pytest

from flake8_hermetic import ruledocs
from flake8_hermetic.catalog import all_rules, runtime_codes
from tests.helpers import REPO, child_env, codes_by_line, flake8, hermetic, run, write_tree

CONFIG = "[flake8]\nselect = HRM105,HRM201,HRM900\n"
LEGACY = """\
    import os
    import time


    def test_build(tmp_path):
        os.chdir(tmp_path)


    class TestDeploy:
        def test_twice(self, tmp_path):
            os.chdir(tmp_path)
            os.chdir(tmp_path)
            time.sleep(0.5)
"""
SLEEPY = """\
    import time


    def test_wait():
        time.sleep(1)
"""
EXPECTED_ENTRIES = [
    "tests/test_legacy.py::TestDeploy::test_twice\tHRM105\tos.chdir(tmp_path)",
    "tests/test_legacy.py::TestDeploy::test_twice\tHRM105\tos.chdir(tmp_path)",
    "tests/test_legacy.py::TestDeploy::test_twice\tHRM201\ttime.sleep(0.5)",
    "tests/test_legacy.py::test_build\tHRM105\tos.chdir(tmp_path)",
    "tests/test_sleepy.py::test_wait\tHRM201\ttime.sleep(1)",
]
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif-2.1.0-rtm.5.json"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "project",
        {"setup.cfg": CONFIG, "tests/test_legacy.py": LEGACY, "tests/test_sleepy.py": SLEEPY},
    )


def baseline_file(project: Path) -> Path:
    return project / "hermetic-baseline.txt"


def entries(project: Path) -> list[str]:
    text = baseline_file(project).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def line_of(project: Path, entry: str) -> int:
    """The line number of ``entry`` in the project's baseline."""
    return baseline_file(project).read_text(encoding="utf-8").splitlines().index(entry) + 1


def regenerate(project: Path, *args: str) -> str:
    """``regenerate --allow-growth``: these tests are about what is written, not the ratchet."""
    result = hermetic(["baseline", "regenerate", "--allow-growth", *args], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# -- regenerate ------------------------------------------------------------------------

def test_regenerate_writes_every_violation_then_flake8_is_quiet_and_a_second_run_changes_nothing(
    project: Path,
) -> None:
    first = regenerate(project)
    assert first.splitlines()[:2] == ["HRM105 +3 -0", "HRM201 +2 -0"]
    assert first.splitlines()[2].startswith("hermetic-baseline.txt: 5 entries (new file: ")
    assert first.splitlines()[2].endswith("; 2 test files linted")
    assert entries(project) == EXPECTED_ENTRIES
    written = baseline_file(project).read_bytes()
    assert written.startswith(b"# ")  # a new file gets a header saying what it is
    assert flake8(["."], cwd=project).stdout == ""
    second = regenerate(project)
    assert second.splitlines() == ["no changes", "hermetic-baseline.txt: 5 entries (unchanged); 2 test files linted"]
    assert baseline_file(project).read_bytes() == written


def test_regenerate_keeps_the_header_and_star_entries_that_still_match(project: Path) -> None:
    header = "# Legacy hazards: owned by the platform team.\n#\n# Ask in #testing before adding lines.\n"
    baseline_file(project).write_text(
        header
        + "\n"
        + "tests/test_legacy.py::TestDeploy::test_twice\tHRM105\t*\n"
        + "tests/test_sleepy.py::test_gone\tHRM201\t*\n"
        + "tests/test_sleepy.py::test_wait\tHRM201\ttime.sleep(99)\n",
        encoding="utf-8",
    )
    output = regenerate(project)
    assert output.splitlines()[:2] == ["HRM105 +1 -0", "HRM201 +2 -2"]
    text = baseline_file(project).read_text(encoding="utf-8")
    assert text.startswith(header + "\n")
    assert entries(project) == [
        "tests/test_legacy.py::TestDeploy::test_twice\tHRM105\t*",
        "tests/test_legacy.py::TestDeploy::test_twice\tHRM201\ttime.sleep(0.5)",
        "tests/test_legacy.py::test_build\tHRM105\tos.chdir(tmp_path)",
        "tests/test_sleepy.py::test_wait\tHRM201\ttime.sleep(1)",
    ]


def test_regenerate_sees_what_flake8_sees(project: Path) -> None:
    write_tree(project, {
        "setup.cfg": CONFIG + "extend-exclude = tests/vendored\n"
                              "per-file-ignores =\n    tests/test_ignored.py: HRM105\n",
        "tests/vendored/test_vendored.py": SLEEPY,
        "tests/test_ignored.py": "import os\nimport time\n\n\ndef test_x():\n    os.chdir('/')\n    time.sleep(1)\n",
        "tests/test_noqa.py": "import time\n\n\ndef test_y():\n    time.sleep(1)  # noqa: HRM201\n",
        "src/app.py": SLEEPY,  # not a test file
    })
    regenerate(project)
    assert entries(project) == ["tests/test_ignored.py::test_x\tHRM201\ttime.sleep(1)", *EXPECTED_ENTRIES]
    assert flake8(["."], cwd=project).stdout == ""


def test_regenerate_of_some_paths_keeps_the_entries_of_the_others(project: Path) -> None:
    regenerate(project)
    edit(project / "tests" / "test_sleepy.py", "time.sleep(1)", "time.sleep(2)")
    edit(project / "tests" / "test_legacy.py", "    os.chdir(tmp_path)\n\n", "    pass\n\n")
    output = regenerate(project, "tests/test_sleepy.py")
    assert output.splitlines()[0] == "HRM201 +1 -1"
    assert entries(project) == [*EXPECTED_ENTRIES[:4], "tests/test_sleepy.py::test_wait\tHRM201\ttime.sleep(2)"]


def test_regenerate_with_parallel_jobs_writes_the_same_bytes(project: Path) -> None:
    write_tree(project, {f"tests/test_copy_{index}.py": LEGACY for index in range(4)})
    regenerate(project, "--jobs", "2")
    parallel = baseline_file(project).read_bytes()
    assert parallel.count(b"test_copy_") == 16
    baseline_file(project).unlink()
    regenerate(project, "--jobs", "1")
    assert baseline_file(project).read_bytes() == parallel


def test_regenerate_no_grow_refuses_a_new_violation_and_writes_nothing(project: Path) -> None:
    regenerate(project)
    before = baseline_file(project).read_bytes()
    edit(project / "tests" / "test_sleepy.py", "time.sleep(1)", "time.sleep(1)\n    time.sleep(3)")
    refused = hermetic(["baseline", "regenerate", "--no-grow"], cwd=project)
    assert refused.returncode == 1
    assert codes_by_line(refused.stdout) == [("tests/test_sleepy.py", 6, "HRM201")]
    assert "1 new violation would be added to hermetic-baseline.txt; nothing written" in refused.stderr
    assert baseline_file(project).read_bytes() == before


def test_regenerate_no_grow_lets_the_baseline_shrink_and_lines_change(project: Path) -> None:
    regenerate(project)
    edit(project / "tests" / "test_sleepy.py", "time.sleep(1)", "time.sleep(2)")  # edited: not growth
    edit(project / "tests" / "test_legacy.py", "    os.chdir(tmp_path)\n\n", "    pass\n\n")  # fixed
    result = hermetic(["baseline", "regenerate", "--no-grow"], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[:2] == ["HRM105 +0 -1", "HRM201 +1 -1"]
    assert len(entries(project)) == 4


def test_regenerate_treats_default_rules_as_selected_when_select_names_no_hrm_prefix(project: Path) -> None:
    write_tree(project, {
        "setup.cfg": "[flake8]\nselect = E,F,W\nextend-ignore = HRM302\n",
        "tests/test_paths.py": (
            "import subprocess\n\n\n"
            "def test_hosts():\n    assert open('/etc/hosts')\n\n\n"
            "def test_report():\n    with open('/tmp/report.txt', 'w') as out:\n        out.write('x')\n"
            "    assert out.closed\n\n\n"
            "def test_child():\n"
            "    assert subprocess.run(['python', '-c', 'pass'], check=False).returncode == 0\n"
        ),
    })
    regenerate(project)
    codes = {line.split("\t")[1] for line in entries(project)}
    assert "HRM108" in codes  # default-on: selected
    assert "HRM302" not in codes  # default-on, but the project's ignore still wins
    assert not codes & {"HRM105", "HRM201", "HRM303"}  # off by default: stay off
    write_tree(project, {"setup.cfg": "[flake8]\nselect = E,F,W\nextend-select = HRM303,HRM201\n"})
    regenerate(project)
    codes = {line.split("\t")[1] for line in entries(project)}
    assert codes == {"HRM302", "HRM108", "HRM201", "HRM303"}  # HRM105 (off by default, not selected) stays off


# -- prune, check, stats --------------------------------------------------------------

def test_prune_drops_stale_and_missing_file_entries_never_adds(project: Path) -> None:
    regenerate(project)
    with baseline_file(project).open("a", encoding="utf-8") as handle:
        handle.write("tests/test_deleted.py::test_z\tHRM105\tos.chdir(d)\n")
    edit(project / "tests" / "test_legacy.py", "    os.chdir(tmp_path)\n\n", "    pass\n\n")  # fixed
    edit(project / "tests" / "test_sleepy.py", "time.sleep(1)", "time.sleep(1)\n    time.sleep(3)")  # new
    before = baseline_file(project).read_bytes()

    check = hermetic(["baseline", "prune", "--check"], cwd=project)
    assert check.returncode == 1
    assert check.stdout.splitlines() == [
        "hermetic-baseline.txt:7: stale (matches no violation); would remove: "
        "tests/test_legacy.py::test_build\tHRM105\tos.chdir(tmp_path)",
        "hermetic-baseline.txt:9: tests/test_deleted.py does not exist; would remove: "
        "tests/test_deleted.py::test_z\tHRM105\tos.chdir(d)",
    ]
    assert baseline_file(project).read_bytes() == before

    pruned = hermetic(["baseline", "prune"], cwd=project)
    assert pruned.returncode == 0
    assert pruned.stdout.splitlines()[-2:] == ["HRM105 +0 -2", "hermetic-baseline.txt: 4 entries; 2 test files linted"]
    assert entries(project) == [EXPECTED_ENTRIES[0], EXPECTED_ENTRIES[1], EXPECTED_ENTRIES[2], EXPECTED_ENTRIES[4]]
    assert baseline_file(project).read_text(encoding="utf-8").startswith("# flake8-hermetic baseline")
    again = hermetic(["baseline", "prune", "--check"], cwd=project)
    assert (again.returncode, again.stdout) == (0, "")


def test_baseline_check_reports_stale_missing_and_malformed_lines(project: Path) -> None:
    baseline_file(project).write_text(
        "# header\n"
        + "\n".join(EXPECTED_ENTRIES)
        + "\ntests/test_legacy.py::test_build\tHRM201\ttime.sleep(5)\n"
        + "tests/test_gone.py\tHRM105\t*\n"
        + "tests/test_legacy.py HRM105 os.chdir(tmp_path)\n",
        encoding="utf-8",
    )
    result = hermetic(["baseline", "check"], cwd=project)
    assert result.returncode == 1
    assert [line.split(": ", 1)[0] for line in result.stdout.splitlines()] == [
        "hermetic-baseline.txt:7", "hermetic-baseline.txt:8", "hermetic-baseline.txt:9",
    ]
    reasons = [line.split(": ", 1)[1] for line in result.stdout.splitlines()]
    assert reasons[0].startswith("stale (matches no violation): ")
    assert reasons[1].startswith("tests/test_gone.py does not exist: ")
    assert reasons[2] == "expected 3 TAB-separated fields (where, code, what), found 1"
    baseline_file(project).write_text("\n".join(EXPECTED_ENTRIES) + "\n", encoding="utf-8")
    clean = hermetic(["baseline", "check"], cwd=project)
    assert (clean.returncode, clean.stdout) == (
        0, "hermetic-baseline.txt: 5 entries, 5 judged, all current (2 test files linted)\n"
    )


def test_stats_counts_per_code_and_file_most_first(project: Path) -> None:
    baseline_file(project).write_text(
        "\n".join([*EXPECTED_ENTRIES, "conftest.py\tHRM201\ttime.sleep(1)", "integration/test_a.py\tHRM105\t*"]) + "\n",
        encoding="utf-8",
    )
    result = hermetic(["baseline", "stats"], cwd=project)
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        "hermetic-baseline.txt: 7 entries",
        "",
        "code    entries",
        "HRM105        4",
        "HRM201        3",
        "",
        "file                   entries",
        "tests/test_legacy.py         4",
        "conftest.py                  1",
        "integration/test_a.py        1",
        "tests/test_sleepy.py         1",
    ]
    by_directory = hermetic(["baseline", "stats", "--by", "directory"], cwd=project)
    assert by_directory.stdout.splitlines()[2:] == [
        "directory    entries",
        "tests              5",
        ".                  1",
        "integration        1",
    ]


# -- check ------------------------------------------------------------------------------

@pytest.fixture
def half_baselined(project: Path) -> Path:
    """A baseline with one stale entry, and one violation that is new."""
    regenerate(project)
    edit(project / "tests" / "test_legacy.py", "    os.chdir(tmp_path)\n\n", "    pass\n\n")
    edit(project / "tests" / "test_sleepy.py", "time.sleep(1)", "time.sleep(1)\n    time.sleep(3)")
    return project


def test_check_prints_new_and_stale_and_a_summary(half_baselined: Path) -> None:
    result = hermetic(["check"], cwd=half_baselined)
    assert result.returncode == 1
    assert codes_by_line(result.stdout) == [
        ("tests/test_legacy.py", 1, "HRM900"),
        ("tests/test_sleepy.py", 6, "HRM201"),
    ]
    assert result.stdout.splitlines()[-1] == "2 test files, 1 new, 4 baselined, 1 stale"
    # the same findings flake8 itself reports with the plugin, paths as typed
    typed = hermetic(["check", "."], cwd=half_baselined)
    assert codes_by_line(flake8(["."], cwd=half_baselined).stdout) == codes_by_line(typed.stdout)
    assert codes_by_line(typed.stdout)[0][0] == "./tests/test_legacy.py"


def test_check_exit_zero_reports_the_same_and_exits_0(half_baselined: Path) -> None:
    strict = hermetic(["check"], cwd=half_baselined)
    lenient = hermetic(["check", "--exit-zero"], cwd=half_baselined)
    assert (strict.returncode, lenient.returncode) == (1, 0)
    assert lenient.stdout == strict.stdout


def test_check_runs_on_the_bundled_examples(tmp_path: Path) -> None:
    result = hermetic(["check", "--exit-zero", str(REPO / "examples")], cwd=tmp_path)
    assert result.returncode == 0
    flagged = {(Path(path).name, code) for path, _, code in codes_by_line(result.stdout)}
    assert {name for name, _ in flagged} == {"test_leaky_suite.py"}  # the hermetic twin stays quiet
    default_codes = {code for _, code in flagged}
    assert default_codes >= {"HRM101", "HRM108"}
    off = {"HRM102", "HRM103", "HRM105", "HRM106", "HRM107", "HRM109", "HRM201", "HRM501"}
    assert not default_codes & off  # off by default
    assert result.stdout.splitlines()[-1].endswith("new, 0 baselined, 0 stale")
    config = tmp_path / "setup.cfg"
    config.write_text("[flake8]\nextend-select = HRM107,HRM109,HRM201\n", encoding="utf-8")
    selected = hermetic(["check", "--exit-zero", "--config", str(config), str(REPO / "examples")], cwd=tmp_path)
    codes = {code for _, _, code in codes_by_line(selected.stdout)}
    assert codes == default_codes | {"HRM107", "HRM109", "HRM201"}
    # the README's first command: the demo's own config turns every rule on
    demo = hermetic(
        ["check", "--exit-zero", "--config", str(REPO / "examples" / "setup.cfg"), str(REPO / "examples")],
        cwd=tmp_path,
    )
    shown = {(Path(path).name, code) for path, _, code in codes_by_line(demo.stdout)}
    assert {name for name, _ in shown} == {"test_leaky_suite.py"}
    assert {code for _, code in shown} == {
        "HRM101", "HRM102", "HRM103", "HRM105", "HRM106", "HRM107", "HRM108", "HRM109", "HRM201",
    }
    # both suites are linted as test modules: the twin's quiet is earned
    assert demo.stdout.splitlines()[-1] == "2 test files, 9 new, 0 baselined, 0 stale"


def test_check_github_format(half_baselined: Path) -> None:
    result = hermetic(["check", "--format", "github"], cwd=half_baselined)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    # the stale entry: a warning on its own line of the baseline, its fields readable
    stale_line = line_of(half_baselined, "tests/test_legacy.py::test_build\tHRM105\tos.chdir(tmp_path)")
    assert lines[0] == (
        f"::warning file=hermetic-baseline.txt,line={stale_line},title=HRM900::stale baseline entry at "
        f"hermetic-baseline.txt:{stale_line}: tests/test_legacy.py::test_build HRM105 os.chdir(tmp_path): "
        "the debt was paid; delete the line (flake8-hermetic baseline prune)"
    )
    assert lines[1].startswith("::error file=tests/test_sleepy.py,line=6,col=5,title=HRM201::time.sleep() ")
    assert lines[2] == "2 test files, 1 new, 4 baselined, 1 stale"


def test_check_sarif_is_valid_sarif_with_a_rule_per_code(half_baselined: Path) -> None:
    result = hermetic(["check", "--format", "sarif"], cwd=half_baselined)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(log, schema, cls=jsonschema.Draft4Validator)
    [sarif_run] = log["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["HRM105", "HRM201", "HRM900"]
    assert rules[0]["help"]["markdown"] == ruledocs.pages()["HRM105"]
    found = [
        (r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
         r["locations"][0]["physicalLocation"]["region"]["startLine"], rules[r["ruleIndex"]]["id"],
         r.get("suppressions"))
        for r in sarif_run["results"]
    ]
    stale_line = line_of(half_baselined, "tests/test_legacy.py::test_build\tHRM105\tos.chdir(tmp_path)")
    suppressed = [{"kind": "external", "justification": "in the baseline hermetic-baseline.txt"}]
    assert found == [
        # the stale entry, on its line of the baseline file
        ("HRM900", "warning", "hermetic-baseline.txt", stale_line, "HRM900", None),
        ("HRM201", "error", "tests/test_sleepy.py", 6, "HRM201", None),
        # the four the baseline accepts: in the log, suppressed
        ("HRM105", "error", "tests/test_legacy.py", 11, "HRM105", suppressed),
        ("HRM105", "error", "tests/test_legacy.py", 12, "HRM105", suppressed),
        ("HRM201", "error", "tests/test_legacy.py", 13, "HRM201", suppressed),
        ("HRM201", "error", "tests/test_sleepy.py", 5, "HRM201", suppressed),
    ]
    assert result.stderr == "2 test files, 1 new, 4 baselined, 1 stale\n"


def test_check_is_clean_after_regenerate(project: Path) -> None:
    regenerate(project)
    result = hermetic(["check", "tests"], cwd=project)
    assert (result.returncode, result.stdout) == (0, "2 test files, 0 new, 5 baselined, 0 stale\n")
    absolute = hermetic(["check", str(project / "tests" / "test_legacy.py")], cwd=project)
    assert (absolute.returncode, absolute.stdout) == (0, "1 test file, 0 new, 4 baselined, 0 stale\n")


def test_check_reports_a_test_file_it_could_not_parse_whatever_is_selected(project: Path) -> None:
    write_tree(project, {"tests/test_broken.py": "def test_x(:\n    pass\n", "src/broken.py": "def (:\n"})
    result = hermetic(["check", "--baseline", "none.txt"], cwd=project)
    assert result.returncode == 1
    assert ("tests/test_broken.py", 1, "E999") in codes_by_line(result.stdout)
    assert "src/broken.py" not in result.stdout  # not a file the pack lints
    assert result.stdout.splitlines()[-1] == "2 test files, 6 new, 0 baselined, 0 stale"


# -- bad input ---------------------------------------------------------------------------

MALFORMED = [
    pytest.param("tests/test_legacy.py\tHRM105\n", "expected 3 TAB-separated fields", id="field-count"),
    pytest.param("tests/test_legacy.py\tHRMX05\tos.chdir(d)\n", "is not an error code", id="bad-code"),
    pytest.param(">>>>>>> feature\n", "merge-conflict marker", id="conflict-marker"),
    pytest.param("tests/../../outside.py\tHRM105\tos.chdir(d)\n", "leaves the project root", id="escaping"),
]


COMMANDS = {
    "check": ["check"],
    "regenerate": ["baseline", "regenerate"],
    "prune": ["baseline", "prune"],
    "stats": ["baseline", "stats"],
}


@pytest.mark.parametrize(
    ("command", "line", "reason"),
    [
        # every form through check, and every command with one form
        *(pytest.param(COMMANDS["check"], *form.values, id=f"check-{form.id}") for form in MALFORMED),
        *(
            pytest.param(COMMANDS[name], *form.values, id=f"{name}-{form.id}")
            for name, form in zip(("regenerate", "prune", "stats"), MALFORMED)
        ),
    ],
)
def test_a_malformed_baseline_is_refused_with_file_and_line(
    project: Path, command: list[str], line: str, reason: str
) -> None:
    text = "# header\n" + EXPECTED_ENTRIES[0] + "\n" + line
    baseline_file(project).write_text(text, encoding="utf-8")
    result = hermetic(command, cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    [message] = result.stderr.splitlines()
    assert message.startswith("hermetic-baseline.txt:3: ")
    assert reason in message
    assert baseline_file(project).read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(["frobnicate"], "invalid choice: 'frobnicate'", id="unknown-command"),
        pytest.param([], "the following arguments are required: COMMAND", id="no-command"),
        pytest.param(["baseline"], "the following arguments are required: ACTION", id="no-action"),
        pytest.param(["check", "--format", "xml"], "invalid choice: 'xml'", id="bad-format"),
        pytest.param(["check", "--colour"], "unrecognized arguments: --colour", id="unknown-option"),
        pytest.param(["check", "--jobs", "many"], "'many' must be 'auto' or an integer", id="bad-jobs"),
        pytest.param(["explain"], "the following arguments are required: HRMnnn", id="explain-nothing"),
    ],
)
def test_bad_options_give_one_line_and_status_2(tmp_path: Path, args: list[str], expected: str) -> None:
    result = hermetic(args, cwd=tmp_path)
    assert result.returncode == 2
    [message] = result.stderr.splitlines()
    assert expected in message


def test_a_bad_config_value_is_one_line_and_status_2(project: Path) -> None:
    write_tree(project, {"setup.cfg": CONFIG + "hermetic-max-collection-bytes = lots\n"})
    result = hermetic(["check"], cwd=project)
    assert result.returncode == 2
    [message] = result.stderr.splitlines()
    assert "setup.cfg:" in message
    assert "max-collection-bytes" in message


# -- a write that dies half-way ------------------------------------------------------

# Put first on the child's sys.path: replaces os.fsync, which write_atomic calls
# once the temporary file holds the new text and before it replaces the old file.
DYING_WRITE = """\
import os
import signal


def fsync(descriptor):
    if os.environ["DYING_WRITE"] == "kill":
        os.ftruncate(descriptor, os.fstat(descriptor).st_size // 2)  # half written...
        os.kill(os.getpid(), signal.SIGKILL)  # ...when the machine dies
    raise KeyboardInterrupt  # Ctrl-C at the worst moment


os.fsync = fsync
"""


def regenerate_dying(project: Path, how: str) -> tuple[int, str]:
    seam = project.parent / "seam"
    write_tree(seam, {"sitecustomize.py": DYING_WRITE})
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    env = {**child_env(home), "PYTHONPATH": str(seam), "DYING_WRITE": how}
    result = run([sys.executable, "-m", "flake8_hermetic", "baseline", "regenerate", "--allow-growth"],
                 cwd=project, env=env)
    return result.returncode, result.stderr


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL on this platform")
def test_a_killed_regenerate_leaves_the_old_file_whole(project: Path) -> None:
    baseline_file(project).write_text("# old\n\n" + EXPECTED_ENTRIES[4] + "\n", encoding="utf-8")
    before = baseline_file(project).read_bytes()
    status, stderr = regenerate_dying(project, "kill")
    assert status == -signal.SIGKILL, stderr
    assert baseline_file(project).read_bytes() == before
    leftovers = sorted(p.name for p in project.glob(".hermetic-baseline.*.tmp"))
    assert len(leftovers) == 1  # half-written, and harmless:
    assert flake8(["."], cwd=project).stdout.count("HRM105") == 3
    regenerate(project)
    assert entries(project) == EXPECTED_ENTRIES
    assert baseline_file(project).read_text(encoding="utf-8").startswith("# old\n")


def test_ctrl_c_during_regenerate_leaves_the_old_file_whole_and_no_temporary(project: Path) -> None:
    baseline_file(project).write_text("# old\n\n" + EXPECTED_ENTRIES[4] + "\n", encoding="utf-8")
    before = baseline_file(project).read_bytes()
    assert regenerate_dying(project, "interrupt") == (130, "flake8-hermetic: interrupted\n")
    assert baseline_file(project).read_bytes() == before
    assert list(project.glob(".hermetic-baseline.*")) == []


# -- rules and explain -------------------------------------------------------------------

def test_rules_lists_every_rule_with_its_default(tmp_path: Path) -> None:
    result = hermetic(["rules", "--format", "markdown"], cwd=tmp_path)
    assert result.returncode == 0
    defaults = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[-1] for line in result.stdout.splitlines()[2:]}
    expected = {code: "retired |" if rule.retired else "on |" if rule.default_on else "off |"
                for code, rule in all_rules().items()}
    runtime = {code: "guard |" for code in runtime_codes()}
    assert defaults == {**expected, **runtime, "HRM900": "on |"}
    assert list(defaults)[-1] == "HRM900"
    assert "](" not in result.stdout  # links are for the README, not the terminal


@pytest.mark.parametrize("spelling", [pytest.param("HRM105", id="upper"), pytest.param("hrm105", id="lower")])
def test_explain_prints_the_rule_page(tmp_path: Path, spelling: str) -> None:
    result = hermetic(["explain", spelling, "--format", "markdown"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == ruledocs.pages()["HRM105"]


def test_explain_prints_a_runtime_guard_page(tmp_path: Path) -> None:
    result = hermetic(["explain", "HRM603", "--format", "markdown"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == ruledocs.pages()["HRM603"]
    assert "## Prevented statically by\n[HRM105](HRM105.md)" in result.stdout


@pytest.mark.parametrize("code", [pytest.param("HRM999", id="unknown"), pytest.param("E501", id="foreign")])
def test_explain_an_unknown_code_is_one_line_and_status_2(tmp_path: Path, code: str) -> None:
    result = hermetic(["explain", code], cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    [message] = result.stderr.splitlines()
    assert f"unknown rule code '{code}'" in message


# -- the project's own rules -------------------------------------------------------------

PATTERN_RULES = """\
    rules:
      - code: HRM801
        message: os.kill(pid, 0) is no liveness probe; use pid_exists()
        note: It terminates the process on Windows.
        files: ["src/*.py"]
        rule:
          pattern: os.kill($PID, 0)
"""


@pytest.fixture
def pattern_project(project: Path) -> Path:
    pytest.importorskip("ast_grep_py")
    return write_tree(project, {
        "setup.cfg": "[flake8]\nselect = HRM105,HRM801,HRM900\nhermetic-rules = rules.yml\n",
        "rules.yml": PATTERN_RULES,
        "src/app.py": "import os\n\n\ndef alive(pid):\n    return os.kill(pid, 0)\n",
    })


def test_rules_and_explain_include_the_project_pattern_rules(pattern_project: Path) -> None:
    rows = hermetic(["rules", "--format", "markdown"], cwd=pattern_project).stdout.splitlines()
    assert rows[-2:] == [
        "| HRM801 | os.kill(pid, 0) is no liveness probe; use pid_exists() | on |",
        "| HRM900 | a stale baseline entry: the debt was paid, delete the line | on |",
    ]
    page = hermetic(["explain", "HRM801", "--format", "markdown"], cwd=pattern_project)
    assert page.returncode == 0
    assert page.stdout.startswith("# HRM801: os.kill(pid, 0) is no liveness probe; use pid_exists()\n")
    assert "`rules.yml:2`" in page.stdout
    assert "It terminates the process on Windows." in page.stdout


def test_a_file_only_pattern_rules_run_on_keeps_the_entries_of_the_other_codes(pattern_project: Path) -> None:
    baseline_file(pattern_project).write_text("src/app.py::alive\tHRM105\tos.chdir(d)\n", encoding="utf-8")
    regenerate(pattern_project)
    assert entries(pattern_project) == [
        "src/app.py::alive\tHRM105\tos.chdir(d)",  # HRM105 never runs on src/: not judged there
        "src/app.py::alive\tHRM801\tos.kill(pid, 0)",
        *[entry for entry in EXPECTED_ENTRIES if "HRM105" in entry],
    ]


def test_a_baseline_that_cannot_be_written_is_one_line_and_status_2(project: Path) -> None:
    result = hermetic(["baseline", "regenerate", "--baseline", "missing/dir/known.txt"], cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "flake8-hermetic: cannot write missing/dir/known.txt: No such file or directory\n"
