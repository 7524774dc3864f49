"""The HRM1xx family where an annotated fixture cannot show it: reading a
child's argv, what a conftest chain pins on a real tree, and the
readonly-commands option through real flake8 runs."""

from __future__ import annotations

import ast
import shutil
import sys
import textwrap
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, assume, given, settings

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.engine import Engine
from flake8_hermetic.facts.hostpins import NO_PINS, Pins, conftest_pins, directory_pins, pin_of, pins_in
from flake8_hermetic.facts.argv import parse_git, starts_with
from flake8_hermetic.facts.processes import child_process
from flake8_hermetic.settings import Settings
from tests.helpers import FIXTURES, call_of, codes_by_line, flake8, parses, write_tree

HOME_AND_GIT = Pins(home=True, git_config=True)
GIT_ONLY = Pins(home=False, git_config=True)
LEAK_RULES = [rule for code, rule in all_rules().items() if code.startswith("HRM1")]


# -- facts/processes.py: the argv of a child ---------------------------------------

@pytest.mark.parametrize(
    ("source", "name", "argv"),
    [
        pytest.param('run(["git", "status"])', "subprocess.run", ("git", "status"), id="list"),
        pytest.param('run(("git", ref))', "subprocess.run", ("git", None), id="tuple-with-a-variable"),
        pytest.param('run(["git", *rest])', "subprocess.run", ("git", None), id="starred"),
        pytest.param('run(["git", "log"] + extra)', "subprocess.run", ("git", "log", None), id="concatenated"),
        pytest.param("run(args=['make', 'all'])", "subprocess.run", ("make", "all"), id="args-keyword"),
        pytest.param("system('git commit -m \"a b\"')", "os.system", ("git", "commit", "-m", "a b"), id="shell-quoted"),
        pytest.param("system('echo \"unbalanced')", "os.system", ("echo", '"unbalanced'), id="shell-unbalanced"),
        pytest.param('run(f"git {sub} -q")', "subprocess.run", ("git", None), id="f-string-head"),
        pytest.param('run(f"gi{t}")', "subprocess.run", (None,), id="f-string-partial-word"),
        pytest.param(
            'create_subprocess_exec("git", "fetch", remote)', "asyncio.create_subprocess_exec",
            ("git", "fetch", None), id="varargs",
        ),
        pytest.param('spawnl(P_WAIT, "/bin/git", "git", "init")', "os.spawnl", ("git", "init"), id="spawnl"),
        pytest.param('spawnv(P_WAIT, "/bin/git", ["git", "init"])', "os.spawnv", ("git", "init"), id="spawnv"),
        pytest.param("run(command)", "subprocess.run", None, id="unreadable"),
        pytest.param("run()", "subprocess.run", None, id="no-command"),
    ],
)
def test_child_process_reads_the_literal_argv(source: str, name: str, argv: tuple[str | None, ...] | None) -> None:
    child = child_process(call_of(source), name)
    assert child is not None
    assert child.argv == argv


@pytest.mark.parametrize("name", [pytest.param(None, id="unresolved"), pytest.param("app.run", id="not-a-spawner")])
def test_child_process_ignores_other_calls(name: str | None) -> None:
    assert child_process(call_of('run(["git", "init"])'), name) is None


def test_program_and_keywords() -> None:
    child = child_process(call_of('Popen(["C:\\\\Git\\\\git.exe", "init"], env=e, **kw)'), "subprocess.Popen")
    assert child is not None
    assert child.program == "git"
    assert isinstance(child.keyword("env"), ast.Name)
    assert child.keyword("cwd") is None
    assert child.has_unpacked_kwargs


@pytest.mark.parametrize(
    ("argv", "subcommand", "sets_config", "chooses_directory"),
    [
        pytest.param(
            ("git", "-C", "repo", "-c", "a=b", "--no-pager", "commit", "-m", "x"), "commit", True, True,
            id="all-options",
        ),
        pytest.param(("git", "commit", "-c", "HEAD"), "commit", False, False, id="reuse-message-is-not-config"),
        pytest.param(("git", "--git-dir=.git", "fetch"), "fetch", False, True, id="git-dir-joined"),
        pytest.param(("git", "--work-tree", None, "pull"), "pull", False, True, id="work-tree-value-unknown"),
        pytest.param(("git", "--config-env=user.name=N", "tag"), "tag", True, False, id="config-env"),
        pytest.param(("git", None, "commit"), None, False, False, id="non-literal-word"),
        pytest.param(("git", "-c"), None, True, False, id="truncated"),
        pytest.param(("git",), None, False, False, id="bare"),
    ],
)
def test_parse_git(
    argv: tuple[str | None, ...], subcommand: str | None, sets_config: bool, chooses_directory: bool
) -> None:
    git = parse_git(argv)
    assert git.subcommand == subcommand
    assert git.sets_config is sets_config
    assert git.chooses_directory is chooses_directory


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(("../tools/git", "--no-pager", "log", "-1"), True, id="path-and-global-option"),
        pytest.param(("git.exe", "status"), True, id="windows-exe"),
        pytest.param(("git", "-C", "repo", "status"), True, id="git-C"),
        pytest.param(("git", "config", "--get", "user.name"), True, id="three-words"),
        pytest.param(("git", "config", "--global", "--get", "x"), False, id="words-must-be-leading"),
        pytest.param(("git", "commit"), False, id="a-write"),
        pytest.param(("git",), False, id="too-short"),
        pytest.param((None, "status"), False, id="unknown-program"),
        pytest.param((), False, id="empty"),
        pytest.param(("make", "check", "-j2"), True, id="any-program"),
    ],
)
def test_starts_with(argv: tuple[str | None, ...], expected: bool) -> None:
    prefixes = [("git", "status"), ("git", "log"), ("git", "config", "--get"), ("make", "check")]
    assert starts_with(argv, prefixes) is expected


# -- facts/hostpins.py: what pins the home and git's config ----------------------------

@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param('monkeypatch.setenv("HOME", p)', HOME_AND_GIT, id="setenv-home"),
        pytest.param('monkeypatch.delenv("USERPROFILE")', HOME_AND_GIT, id="delenv-userprofile"),
        pytest.param('monkeypatch.setenv("GIT_CONFIG_GLOBAL", p)', GIT_ONLY, id="setenv-git"),
        pytest.param('os.environ["HOME"] = p', HOME_AND_GIT, id="environ-store"),
        pytest.param('del env["HOME"]', HOME_AND_GIT, id="mapping-delete"),
        pytest.param('mock.patch.dict(os.environ, {"GIT_CONFIG_NOSYSTEM": "1"})', GIT_ONLY, id="patch-dict"),
        pytest.param('mock.patch.dict("os.environ", HOME=p)', HOME_AND_GIT, id="patch-dict-keywords"),
        pytest.param('os.environ.update({"HOME": p})', HOME_AND_GIT, id="update"),
        pytest.param('monkeypatch.setattr(Path, "home", f)', HOME_AND_GIT, id="setattr-path-home"),
        pytest.param('mock.patch("pathlib.Path.home")', HOME_AND_GIT, id="patch-path-home"),
        pytest.param('monkeypatch.setattr("os.path.expanduser", f)', HOME_AND_GIT, id="setattr-expanduser"),
        pytest.param('os.environ["HOME"]', NO_PINS, id="read-subscript"),
        pytest.param('os.environ.get("HOME")', NO_PINS, id="read-get"),
        pytest.param('os.getenv("GIT_CONFIG_GLOBAL")', NO_PINS, id="read-getenv"),
        pytest.param("Path.home()", NO_PINS, id="read-home"),
        pytest.param('dict(os.environ, HOME=p)', NO_PINS, id="building-a-dict"),
        pytest.param('monkeypatch.setenv("PATH", p)', NO_PINS, id="other-variable"),
        pytest.param('monkeypatch.setattr(Path, "cwd", f)', NO_PINS, id="other-attribute"),
    ],
)
def test_what_pins(source: str, expected: Pins) -> None:
    assert pins_in(ast.parse(source)) == expected


def test_pin_of_is_one_node() -> None:
    tree = ast.parse('f(monkeypatch.setenv("HOME", p))')
    assert pin_of(tree.body[0]) == NO_PINS
    assert pins_in(tree) == HOME_AND_GIT


@pytest.mark.parametrize(
    ("conftest", "expected"),
    [
        pytest.param(
            """
            import pytest

            @pytest.fixture(autouse=True)
            def isolate(monkeypatch, tmp_path):
                monkeypatch.setenv("HOME", str(tmp_path))
            """,
            HOME_AND_GIT, id="autouse-fixture",
        ),
        pytest.param(
            """
            from pytest import fixture

            @fixture(scope="session", autouse=True)
            def isolate(tmp_path_factory):
                yield from _pin(tmp_path_factory)

            def _pin(factory):
                with mock.patch.dict(os.environ, GIT_CONFIG_GLOBAL=str(factory.mktemp("git"))):
                    yield
            """,
            GIT_ONLY, id="helper-called-by-the-fixture",
        ),
        pytest.param(
            """
            import pytest

            @pytest.fixture
            def home(monkeypatch, tmp_path):
                monkeypatch.setenv("HOME", str(tmp_path))
            """,
            NO_PINS, id="not-autouse",
        ),
        pytest.param(
            """
            import pytest

            class TestGroup:
                @pytest.fixture(autouse=True)
                def home(self, monkeypatch, tmp_path):
                    monkeypatch.setenv("HOME", str(tmp_path))
            """,
            NO_PINS, id="class-autouse-covers-its-class-only",
        ),
        pytest.param(
            """
            import os, tempfile
            os.environ["HOME"] = tempfile.mkdtemp()
            """,
            HOME_AND_GIT, id="module-level",
        ),
        pytest.param(
            """
            def pytest_configure(config):
                os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
            """,
            GIT_ONLY, id="session-hook",
        ),
        pytest.param(
            """
            import pytest

            @pytest.fixture(autouse=True)
            def report(request):
                print(os.environ["HOME"], os.getenv("GIT_CONFIG_GLOBAL"))
            """,
            NO_PINS, id="reads-only",
        ),
        pytest.param("def broken(:\n", NO_PINS, id="syntax-error"),
    ],
)
def test_conftest_pins(tmp_path: Path, conftest: str, expected: Pins) -> None:
    write_tree(tmp_path, {"conftest.py": conftest})
    assert conftest_pins(str(tmp_path / "conftest.py")) == expected


def test_conftest_chain_stops_at_the_project_root(tmp_path: Path) -> None:
    home_pin = AUTOUSE.format(autouse=True, variable="HOME")
    git_pin = AUTOUSE.format(autouse=True, variable="GIT_CONFIG_NOSYSTEM")
    write_tree(
        tmp_path,
        {
            "conftest.py": home_pin,  # above the project root: not part of the chain
            "project/pyproject.toml": "",
            "project/tests/conftest.py": git_pin,
            "project/tests/unit/deep/test_a.py": "",
            "project/other/test_b.py": "",
        },
    )
    project = tmp_path / "project"
    assert directory_pins(str(project / "tests" / "unit" / "deep")) == GIT_ONLY
    assert directory_pins(str(project / "other")) == NO_PINS
    assert directory_pins(str(tmp_path)) == HOME_AND_GIT


HOME_AND_GIT_READS = """\
    import subprocess
    from pathlib import Path


    def test_it(tmp_path):
        assert Path.home()
        subprocess.run(["git", "commit", "-m", "x"], cwd=tmp_path)
"""
AUTOUSE = """\
    import pytest


    @pytest.fixture(autouse={autouse})
    def isolate(monkeypatch, tmp_path):
        monkeypatch.setenv("{variable}", str(tmp_path))
"""


def test_conftest_chain_through_flake8(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "setup.cfg": "[metadata]\nname = demo\n",
            "home_pinned/conftest.py": AUTOUSE.format(autouse=True, variable="HOME"),
            "home_pinned/sub/test_a.py": HOME_AND_GIT_READS,
            "git_pinned/conftest.py": AUTOUSE.format(autouse=True, variable="GIT_CONFIG_GLOBAL"),
            "git_pinned/test_b.py": HOME_AND_GIT_READS,
            "not_autouse/conftest.py": AUTOUSE.format(autouse=False, variable="HOME"),
            "not_autouse/test_c.py": HOME_AND_GIT_READS,
            "unpinned/test_d.py": HOME_AND_GIT_READS,
        },
    )
    shutil.copytree(FIXTURES / "rules" / "hrm1_git_config_pinned", tmp_path / "fixture")
    result = flake8(["--isolated", "--select=HRM109,HRM115", "--hermetic-no-baseline", "."], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert codes_by_line(result.stdout) == [
        ("./fixture/test_hrm109_git_pin_only.py", 9, "HRM109"),
        ("./git_pinned/test_b.py", 6, "HRM109"),
        ("./not_autouse/test_c.py", 6, "HRM109"),
        ("./not_autouse/test_c.py", 7, "HRM115"),
        ("./unpinned/test_d.py", 6, "HRM109"),
        ("./unpinned/test_d.py", 7, "HRM115"),
    ]


# -- the readonly-commands option from the configuration files ---------------------------
# (the default list and the command line: tests/fixtures/rules/test_hrm106*.py)

CHILDREN = """\
    import subprocess


    def test_children():
        subprocess.run(["make", "check"])
        subprocess.run(["git", "status"])
        subprocess.run(["make", "install"])
        subprocess.run(["make", "--version"])
"""


@pytest.mark.parametrize(
    ("files", "args", "flagged"),
    [
        pytest.param(
            {"setup.cfg": "[flake8]\nhermetic-readonly-commands =\n    make check\n"}, [], [6, 7], id="flake8-config",
        ),
        pytest.param(
            {"pyproject.toml": '[tool.flake8-hermetic]\nreadonly-commands = ["make"]\n'}, [], [6], id="pyproject",
        ),
    ],
)
def test_readonly_commands_option(tmp_path: Path, files: dict[str, str], args: list[str], flagged: list[int]) -> None:
    write_tree(tmp_path, {"tests/test_children.py": CHILDREN, **files})
    result = flake8(["--select=HRM106", "--hermetic-no-baseline", *args, "tests"], cwd=tmp_path)
    assert result.returncode == (1 if flagged else 0), result.stderr
    assert [line for _, line, _ in codes_by_line(result.stdout)] == flagged


# -- HRM106 says why the child depends on the directory ---------------------------------

REASONS = """\
    import os
    import subprocess
    import sys

    SETUP = [sys.executable, "setup.py"]


    def test_reasons(tmp_path):
        subprocess.run(["tox"])
        subprocess.run([sys.executable, "-m", "coverage", "html"])
        subprocess.run([sys.executable, "-m", "mypkg"])
        subprocess.run([sys.executable, "-c", "open('log.txt', 'w')"])
        os.system("date > stamp.txt")
        subprocess.run(SETUP + ["build"])
        subprocess.run(["cp", "a", str(tmp_path)])
        subprocess.run(["git", "commit", "-m", "x"])
"""


def test_hrm106_message_names_the_reason(tmp_path: Path) -> None:
    write_tree(tmp_path, {"tests/test_reasons.py": REASONS})
    result = flake8(["--select=HRM106", "--hermetic-no-baseline", "tests"], cwd=tmp_path)
    reasons = [line.split("a child that ", 1)[1].split("; pass cwd=")[0] for line in result.stdout.splitlines()]
    assert reasons == [
        "runs tox, which works on the current directory",
        "runs python -m coverage, which works on the current directory",
        "runs a -c snippet that opens the relative path 'log.txt'",
        "redirects to the relative path 'stamp.txt'",
        "runs the script 'setup.py', a path relative to the working directory",
        "runs cp on the relative path 'a'",
        "runs git in the working directory's repository",
    ], result.stderr


# -- never crash -------------------------------------------------------------------------

ODD_SYNTAX = """\
import os, subprocess, tempfile, threading
from unittest import mock
import pytest

async def test_async_forms(tmp_path):
    async with mock.patch.object(x, "close") as (a, b):
        pass
    [d async for d in agen() if (t := tempfile.mkdtemp())]
    match subprocess.Popen(["git", "commit"]):
        case [first, *rest] if first:
            os.environ[first] = rest
        case {"k": v, **other}:
            threading.Thread(target=v).start()
        case _:
            pass
    lambda: tempfile.mkdtemp()
    global G
    G = subprocess.Popen
    del os.environ[k], x[0]
    (yield)

@pytest.fixture(autouse=True)
def pinned_tz(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")

class TestX:
    def test_y(self, monkeypatch=lambda: os.chdir("/")):
        @mock.patch("a.b.close")
        class Inner(threading.Thread):
            def run(self):
                return os.path.expanduser(*args)
        Inner().start()
        with (tempfile.NamedTemporaryFile(delete=False) as f, open(f) as g):
            monkeypatch.undo()
        try:
            pass
        except OSError:
            tempfile.mkstemp()
        finally:
            pass
"""


def lint(source: str, path: str = "tests/test_x.py") -> list[str]:
    tree = ast.parse(source)
    return [v.code for v in Engine(LEAK_RULES).lint(tree, source.splitlines(True), path, Settings())]


def test_odd_syntax_lints_without_error() -> None:
    codes = set(lint(ODD_SYNTAX))
    assert {"HRM101", "HRM104", "HRM105", "HRM107", "HRM109", "HRM112", "HRM113"} <= codes


NEW_SYNTAX = [
    pytest.param(
        (3, 11),
        """
        import tempfile

        def test_groups():
            try:
                pass
            except* OSError:
                tempfile.mkstemp()
        """,
        ["HRM101"],
        id="except-star",
    ),
    pytest.param(
        (3, 12),
        """
        import os
        import tempfile

        type Alias[T] = list[T]

        def test_generic[T](tmp_path: T) -> None:
            path = f"{"/tmp/" + name}/{f"{x!r:>{width}}"}"
            d = tempfile.mkdtemp()
            os.remove(path)
        """,
        ["HRM101", "HRM108"],
        id="type-params-and-nested-f-strings",
    ),
    pytest.param(
        (3, 11),
        """
        import os

        def test_groups(tmp_path):
            saved = os.getcwd()
            try:
                os.chdir(tmp_path)
                os.environ["MODE"] = "x"
            except* OSError:
                os.chdir("/")
            finally:
                os.chdir(saved)
        """,
        ["HRM107"],
        id="except-star-finally-undoes-the-chdir-only",
    ),
]


def codes_or_syntax_error(source: str) -> list[str] | str:
    """The sorted codes found, or "SyntaxError" where this Python cannot parse the source."""
    try:
        ast.parse(source)
    except SyntaxError:
        return "SyntaxError"
    return sorted(lint(source))


@pytest.mark.parametrize(("version", "source", "codes"), NEW_SYNTAX)
def test_newer_syntax_lints_without_error(version: tuple[int, int], source: str, codes: list[str]) -> None:
    # Older interpreters cannot parse it (flake8 reports E999 there); newer ones must lint it.
    expected = codes if sys.version_info >= version else "SyntaxError"
    assert codes_or_syntax_error(textwrap.dedent(source)) == expected


# generated code such as ``"a"()`` parses with a SyntaxWarning: the source's, not the pack's
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar())
def test_any_module_that_parses_lints_without_error(source: str) -> None:
    assume(parses(source))
    assert isinstance(lint(source), list)
