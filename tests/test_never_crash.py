"""Any file that parses lints without an exception, with every rule enabled.

Three sources of input, all through the real checker in-process (flake8's own
option parsing selects every built-in rule, off-by-default ones included):

- the CPython test suite that ships with the interpreter (~800 real test
  files, unittest and pytest idioms, every syntax the running Python has),
  split into shards so ``pytest -n 2`` spreads them over both workers;
- hand-written pathological sources (deep nesting, huge folds, odd shapes);
- generated sources: hypothesmith's programs (from the grammar, and from
  libCST syntax trees) wrapped into a test, a TestCase method and a
  fixture, and programs built from the very calls the rules look for, with
  arguments of every shape. Hypothesis runs derandomized with a bounded
  number of examples and no example database: every run, CI's included,
  sees the same programs.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import textwrap
import tokenize
import traceback
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import hypothesmith  # a missing test extra must fail this module, not skip it
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_hermetic.catalog import all_rules
from flake8_hermetic.checker import HermeticChecker

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles odd code

SHARDS = 4
PROPERTY_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI is reproducible
    database=None,  # nothing written into the checkout
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
# hypothesmith's programs are slow to draw (about 0.1 s each): fewer of them.
GENERATOR_SETTINGS = settings(PROPERTY_SETTINGS, max_examples=60)


@pytest.fixture(scope="module")
def _every_rule() -> Iterator[None]:
    """The checker's runtime with every built-in rule selected, as flake8 sets it."""
    from flake8.options.parse_args import parse_args

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HermeticChecker, "runtime", None)
        _, options = parse_args(["--isolated", "--select=HRM", "--hermetic-no-baseline"])
        assert isinstance(options, argparse.Namespace)
        runtime = HermeticChecker.runtime
        assert runtime is not None
        assert sorted(rule.code for rule in runtime.engine.rule_classes) == sorted(all_rules())
        yield


@pytest.fixture(scope="module")
def lint_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the generated files claim to live (nothing is written there): a
    test directory of this test's own, so the conftest lookup reads nothing else."""
    return tmp_path_factory.mktemp("never_crash") / "tests"


def lint(source: str, filename: str) -> list[tuple[int, int, str, type]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings of generated code
        # HRM405: the tree scan is sharded on purpose, each worker parses only its own share
        tree = ast.parse(source)  # noqa: HRM405
    return list(HermeticChecker(tree, filename, source.splitlines(keepends=True)).run())


def cpython_test_files() -> list[str]:
    import test  # the CPython test suite package; a Python without it must fail this test

    root = os.path.dirname(test.__file__)
    found = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found.extend(os.path.join(directory, name) for name in sorted(filenames) if name.endswith(".py"))
    return found


def crashes(paths: Sequence[str]) -> tuple[int, list[str]]:
    """(how many of ``paths`` parse and were linted, a traceback for each whose lint raised)."""
    linted, failures = 0, []
    for path in paths:
        try:
            with tokenize.open(path) as handle:
                lines = handle.readlines()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes in old test files are not our business
                tree = ast.parse("".join(lines), filename=path)
        except (SyntaxError, ValueError):
            continue  # not Python this interpreter parses (badsyntax_*.py, bad coding cookies)
        try:
            list(HermeticChecker(tree, path, lines).run())
        except Exception:  # noqa: BLE001  (collect every crash, then fail once with all of them)
            failures.append(f"{path}: {traceback.format_exc(limit=-3)}")
        linted += 1
    return linted, failures


@pytest.mark.parametrize("shard", [pytest.param(k, id=f"shard{k + 1}of{SHARDS}") for k in range(SHARDS)])
@pytest.mark.usefixtures("_every_rule")
def test_cpython_test_suite_lints_without_exception(shard: int) -> None:
    files = cpython_test_files()
    assert len(files) > 500, "the CPython test suite is not where `import test` says"
    linted, failures = crashes(files[shard::SHARDS])
    assert linted > 100
    assert not failures, "\n".join(failures)


DEEP = 150  # below the parser's limit of 200 nested parentheses
CHAIN = 600  # a left-nested chain this long still parses under pytest's stack

PATHOLOGICAL = {
    "empty": "",
    "comment-only": "# nothing\n",
    "crlf-and-tabs": "import os\r\ndef test_a():\r\n\tos.chdir('/tmp/x')\r\n\tos.kill(\t123, 0)\r\n",
    "form-feed": "import os\n\x0c\ndef test_a():\n\x0c    os.chdir('/tmp/x')\n",
    "long-binop-chain": "X = " + " + ".join(["'a'"] * CHAIN) + "\n",
    "long-mult-chain": "X = b'x'" + " * 2" * 200 + "\n",
    "long-attribute-chain": "import os\ndef test_a():\n    os" + ".a" * CHAIN + "()\n",
    "nested-calls": "import os\nX = " + "os.path.join(" * DEEP + "'/tmp/x'" + ")" * DEEP + "\n",
    "nested-lists": "X = " + "[" * DEEP + "0" + "]" * DEEP + " * 10**9\n",
    "nested-defs": "".join("    " * depth + f"def test_{depth}():\n" for depth in range(60)) + "    " * 60 + "pass\n",
    "nested-lambdas": "f = " + "lambda: " * DEEP + "__import__('time').sleep(1)\n",
    "huge-fold": "X = 'x' * 10**100\nY = [0] * (1 << 64)\nZ = b'' * -1\nW = 'x' * 1e308\nV = bytes(10**30)\n",
    "negative-and-odd-sizes": "X = bytearray(-1)\nY = list(range(10**12))\nZ = 'a' * True\nW = [*range(2**40)]\n",
    "starred-everywhere": textwrap.dedent("""\
        import os, subprocess, time, shutil, tempfile
        def test_a(*args, **kwargs):
            subprocess.run(*args, **kwargs)
            os.kill(*args)
            time.sleep(*args)
            shutil.rmtree(*args, **kwargs)
            tempfile.mkdtemp(**kwargs)
            os.environ.update(**kwargs)
            subprocess.Popen(*[["git", "commit"]])
        """),
    "parametrize-odd-shapes": textwrap.dedent("""\
        import pytest
        ROWS = []
        @pytest.mark.parametrize()
        @pytest.mark.parametrize("a")
        @pytest.mark.parametrize(*ROWS)
        @pytest.mark.parametrize("a,b", ROWS, ids=None)
        @pytest.mark.parametrize(argnames="a", argvalues=[1, pytest.param()])
        @pytest.mark.skipif()
        @pytest.mark.skipif(reason="x")
        @pytest.fixture()()
        def test_a(a):
            pass
        """),
    "unittest-odd-shapes": textwrap.dedent("""\
        import unittest, shutil
        class T(unittest.TestCase, metaclass=type):
            def setUp(self, *a): self.addCleanup()
            def tearDown(self): shutil.rmtree()
            @classmethod
            def tearDownClass(cls): shutil.rmtree(*cls.dirs, ignore_errors=1)
            def test_(self): self.assertEqual
        class U(T):
            async def asyncSetUp(self): await self.x.wait()
            def test_nested(self):
                class V(unittest.TestCase):
                    def test_inner(self): pass
        """),
    "modern-syntax": textwrap.dedent("""\
        import asyncio, os, pytest
        async def test_a():
            async with asyncio.timeout(1):
                await asyncio.sleep(x := 1)
            try:
                pass
            EXCEPT_STAR (OSError, ValueError) as group:
                raise group
            match os.environ:
                case {"HOME": home, **rest} if home:
                    os.chdir(home)
                case [*_] | str():
                    pass
                case _:
                    await (lambda: asyncio.sleep(1))()
            f"{(yield)=!r:>{width}}" if False else None
        """).replace("EXCEPT_STAR", "except*" if sys.version_info >= (3, 11) else "except"),  # except* is 3.11+
    "relative-and-star-imports": textwrap.dedent("""\
        from . import *
        from .. import os as os
        from .sub.mod import chdir
        import os.path as p, subprocess as sp
        def test_a():
            chdir(p.expanduser("~"))
            sp.run(["python", "-c", ""])
            from os import chdir as cd
            cd("/")
        """),
    "non-literal-ports-and-pids": textwrap.dedent("""\
        import os, socket
        def test_a(sock, pid=os.getpid()):
            sock.bind(("", *ports))
            sock.bind(())
            socket.create_server(address)
            os.kill(-1, 0)
            os.kill(2**70, 9)
            os.waitpid(pid=True, options=0)
        """),
}
if sys.version_info >= (3, 12):
    PATHOLOGICAL["pep695"] = textwrap.dedent("""\
        type Alias[T] = list[T]
        class Box[T: (int, str), *Ts, **P]:
            def test_a[U](self, value: U) -> U: return value
        def test_f[T](x: T = f"{'nested' f'{1}'}") -> T: ...
        """)


@pytest.mark.parametrize("source", [pytest.param(s, id=name) for name, s in PATHOLOGICAL.items()])
@pytest.mark.usefixtures("_every_rule")
def test_pathological_sources_lint_without_exception(source: str, lint_dir: Path) -> None:
    ast.parse(source)  # each case must be valid Python, or it tests nothing
    lint(source, str(lint_dir / "test_case.py"))


# -- generated sources ------------------------------------------------------------

HEADER = (
    "import asyncio, os, shutil, socket, subprocess, sys, tempfile, threading, time, unittest\n"
    "import pytest\nfrom pathlib import Path\nfrom unittest import mock\n"
)

#: the callees the rules look for (and a few they must ignore)
CALLEES = (
    "tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.NamedTemporaryFile", "tempfile.TemporaryDirectory",
    "tempfile.gettempdir", "shutil.rmtree", "os.rmdir", "Path(d).rmdir", "monkeypatch.undo", "os.chdir",
    "os.fchdir", "subprocess.run", "subprocess.Popen", "subprocess.check_output", "asyncio.create_subprocess_exec",
    "os.system", "os.popen", "os.spawnl", "os.environ.update", "os.environ.pop", "os.putenv", "os.unsetenv",
    "os.path.join", "Path.home", "os.path.expanduser", "os.getenv", "os.environ.get", "sock.bind",
    "socket.create_server", "asyncio.start_server", "mock.patch", "mock.patch.object", "mock.patch.dict",
    "monkeypatch.setattr", "monkeypatch.setenv", "threading.Thread", "threading.Timer", "asyncio.create_task",
    "asyncio.ensure_future", "time.sleep", "asyncio.sleep", "time.time", "time.monotonic", "self.assertLess",
    "asyncio.wait_for", "asyncio.Future", "asyncio.Event", "asyncio.Lock", "os.kill", "os.killpg", "os.waitpid",
    "sys.exit", "os._exit", "exit", "pytest.importorskip", "pytest.skip", "pytest.raises", "pytest.param",
    "pytest.mark.parametrize", "pytest.mark.skipif", "pytest.fixture", "mock.MagicMock", "open", "glob.glob",
    "self.addCleanup", "request.addfinalizer", "stack.callback", "print", "len",
)
ATOMS = st.sampled_from((
    "0", "1", "-1", "22", "8080", "4194304", "99999999999", "2**70", "1e308", "None", "True", "...",
    "''", "'/tmp/x'", "'/tmp/'", "b'/var/tmp/y'", "'~'", "'HOME'", "'USERPROFILE'", "'tests/data'", "'src'",
    "'close'", "'os.kill'", "'pathlib.Path.home'", "f'/tmp/{name}'", "f'{x!r:>{w}}'", "'a' * 10**9", "[0] * 10**8",
    "x", "self", "p", "t", "pid", "tmp_path", "monkeypatch", "*args", "**kwargs", "lambda: 0", "(yield)",
    "['python', '-c', 'pass']", "['git', 'commit', '-m', 'x']", "'git -c a=b tag v1'", "('', 0)", "('', 5000)",
    "{'HOME': d}", "dict(os.environ, HOME=d)", "sys.platform == 'win32'", "os.name", "range(3)",
))
KEYWORDS = st.sampled_from((
    "cwd", "env", "delete", "ignore_errors", "timeout", "port", "host", "pid", "wraps", "new", "return_value",
    "spec", "id", "ids", "reason", "autouse", "target", "daemon", "shell", "argvalues", "argnames",
))
PLACEMENTS = (
    "{call}\n",
    "X = {call}\n",
    "@pytest.mark.parametrize('a', [{call}])\ndef test_p(a):\n    pass\n",
    "@pytest.mark.skipif({call}, reason='r')\ndef test_s():\n    pass\n",
    "def test_a(tmp_path, monkeypatch):\n    r = {call}\n    r.start()\n",
    "def test_b():\n    for i in range(3):\n        {call}\n    while True:\n        {call}\n        break\n",
    "async def test_c():\n    await {call}\n    t = {call}\n    await t\n",
    "@pytest.fixture\ndef fx(request):\n    d = {call}\n    yield d\n    {call}\n",
    "def test_d():\n    with {call} as d:\n        pass\n"
    "    try:\n        p = {call}\n    finally:\n        p.kill()\n",
    "class TestE(unittest.TestCase):\n    def setUp(self):\n        self.d = {call}\n"
    "    def tearDown(self):\n        {call}\n    def test_e(self):\n        assert {call}\n",
    "class TestF:\n    q = {call}\n    def test_f(self, pid={call}):\n        pid = {call}\n",
    "def test_g():\n    start = time.monotonic()\n    {call}\n    assert time.monotonic() - start < {call}\n",
)


@st.composite
def hazard_calls(draw: st.DrawFn) -> str:
    callee = draw(st.sampled_from(CALLEES))
    args = draw(st.lists(ATOMS, max_size=4))
    keywords = draw(st.lists(st.tuples(KEYWORDS, ATOMS.filter(lambda a: not a.startswith("*"))), max_size=3,
                             unique_by=lambda kw: kw[0]))
    inner = ", ".join([*args, *(f"{name}={value}" for name, value in keywords)])
    call = f"{callee}({inner})"
    return draw(st.sampled_from((call, f"{call}.start()", f"{call}()", f"{call}[0]", f"{call} * 2")))


@st.composite
def hazard_programs(draw: st.DrawFn) -> str:
    chunks = [HEADER]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        placement = draw(st.sampled_from(PLACEMENTS))
        chunks.append(placement.replace("{call}", "{}").format(*(
            draw(hazard_calls()) for _ in range(placement.count("{call}"))
        )))
    return "".join(chunks)


def parses(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


@PROPERTY_SETTINGS
@given(source=hazard_programs().filter(parses))  # no `yield` or `**kwargs` drawn where Python forbids it
@pytest.mark.usefixtures("_every_rule")
def test_generated_hazard_programs_lint_without_exception(source: str, lint_dir: Path) -> None:
    lint(source, str(lint_dir / "test_generated.py"))


WRAPPERS = (
    "{body}",
    "def test_generated(tmp_path, monkeypatch):\n{indented}",
    "class TestGenerated(unittest.TestCase):\n    def test_generated(self):\n{indented2}",
    "@pytest.fixture\ndef generated():\n{indented}\n    yield\n",
)


def with_hazard(body: str, hazard: str) -> str:
    """``body`` with ``hazard`` appended to its innermost last block (a class
    body, a loop, a ``with``), or as a statement of its own when that does not parse."""
    code_lines = [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    last = code_lines[-1] if code_lines else ""
    indent = last[: len(last) - len(last.lstrip())]
    for candidate in (f"{body.rstrip()}\n{indent}{hazard}\n", f"{body.rstrip()}\n{hazard}\n"):
        if parses(candidate):
            return candidate
    return body


def lint_wrapped(body: str, hazard: str, filename: str) -> None:
    """Lint ``body`` (with a hazard call in it) in every wrapper: drawing one
    wrapper per example would mostly draw the first."""
    body = with_hazard(body, hazard)
    indented = textwrap.indent(body, "    ") or "    pass\n"
    for wrapper in WRAPPERS:
        wrapped = HEADER + wrapper.format(body=body, indented=indented, indented2=textwrap.indent(indented, "    "))
        lint(wrapped if parses(wrapped) else body, filename)  # `from __future__` and friends only parse at the top


@GENERATOR_SETTINGS
@given(body=hypothesmith.from_grammar(), hazard=hazard_calls())
@pytest.mark.usefixtures("_every_rule")
def test_grammar_generated_sources_lint_without_exception(body: str, hazard: str, lint_dir: Path) -> None:
    lint_wrapped(body, hazard, str(lint_dir / "test_generated.py"))


@GENERATOR_SETTINGS
@given(body=hypothesmith.from_node(), hazard=hazard_calls())
@pytest.mark.usefixtures("_every_rule")
def test_syntax_tree_generated_sources_lint_without_exception(body: str, hazard: str, lint_dir: Path) -> None:
    lint_wrapped(body, hazard, str(lint_dir / "test_generated.py"))
