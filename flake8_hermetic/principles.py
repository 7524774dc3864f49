"""The general principles by which a rule lets code through (issue 26).

A rule names the principles it applies in ``Rule.principles``; its page's
"What it leaves alone" list is generated from them (``ruledocs``), so an
exemption is written once, here, and holds for every rule that uses it.
Each principle has fixture lines on both sides of its edge in the fixture
files of the rules that use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principle:
    key: str
    title: str
    #: one or two sentences, Markdown, for the rule pages
    summary: str


PRINCIPLES: dict[str, Principle] = {}


def principle(key: str, title: str, summary: str) -> Principle:
    if key in PRINCIPLES:
        raise RuntimeError(f"duplicate principle {key}")
    PRINCIPLES[key] = made = Principle(key, title, " ".join(summary.split()))
    return made


# Each helper appends its principle(s) below, one call each (keys are kebab-case).

principle(
    "follow-the-value",
    "Follow the value",
    """A pid or a path is flagged only where it reaches a call that touches the host
    (`os.kill`, `psutil.Process`, `open`, `Path(...).read_text()`, `subprocess`, the `os`
    file functions), directly or through the function's own variables. A value that only
    reaches a mock, a patched call, the code under test, a string operation, an assertion's
    comparison or a record (a list, dict or parametrize row) never touches the host.""",
)

principle(
    "self-consistent-home",
    "A home read compared with the code's own read",
    """A read of the home that only builds the expected value of an assertion
    (`assert f() == os.path.expanduser("~/x")`, `expected = Path.home() / "x"` then
    `assert result == expected`, a parametrize row the test only asserts with) is computed
    the way the code under test computes it, so the verdict is the same on every host. A
    home read that reaches the filesystem (`open`, `exists`, `listdir`...) or is compared
    with a literal is still flagged.""",
)

principle(
    "bounded-by-runner",
    "Bounded by the runner",
    """A test the runner bounds as a whole does not wait forever: pytest-timeout configured
    for the rootdir (`timeout = N` in the pytest configuration, or `--timeout` in `addopts`),
    `@pytest.mark.timeout(N)` on the test, its class or in `pytestmark`, tornado's
    `@gen_test`, or a test decorator given a timeout (`@async_test(timeout=5)`).
    Hypothesis's `deadline` is not a bound: it is checked only after an example returns.""",
)

principle(
    "fixture-closure",
    "Fixture closure as pytest computes it",
    """A test is judged with every fixture pytest gives it: its parameters, `usefixtures` marks on it,
    its class (a decorator or a class `pytestmark`) and the module's `pytestmark` (one mark or a list;
    a module-level alias of the mark, `usefixtures = pytest.mark.usefixtures("clean_env")`, counts),
    the autouse fixtures of the module, its class and its bases, every `conftest.py` above it and the
    `pytest_plugins` modules (and theirs), and what each of those requests in turn, at any depth (an
    override that requests its own name gets the definition above it; a cycle adds nothing). A
    function-scoped fixture among them restores the state when it uses `monkeypatch` for it
    (`monkeypatch.chdir`, `monkeypatch.setattr(os, "environ", ...)`, `monkeypatch.setattr(tempfile,
    "tempdir", ...)`; a key it set or deleted, `monkeypatch.delenv("K")`, is put back whatever the test
    wrote to it, also when the test itself called it before the write), puts it back after its `yield`
    or in a `finally`, or yields inside a context manager of the project that does, or calls a
    project helper in its teardown that writes it back (followed through the project's modules: a
    `@contextmanager` of `tests/helpers.py`, a class whose `__exit__` changes back). A change made
    inside such a project context manager in the test itself (`with clean_env(): ...`), or in the
    `__enter__` of a class whose `__exit__` always changes back, is undone as well. A fixture of a
    wider scope restores after many tests, not this one, and does not count.""",
)

principle(
    "never-runs",
    "Code that never runs cannot leak",
    """A finding in code that never runs in a test run is not reported: a branch whose condition is
    the same on every supported Python (`if False:`, `if TYPE_CHECKING:`, `if six.PY2:`,
    `if sys.version_info < (3, 10):` and its `else` when reversed; `sys.version_info >= (3, 12)` is
    decided nowhere), `if __name__ == "__main__":` in a module pytest imports, the statements after
    an unconditional `return`, `raise`, `continue`, `break`, `pytest.skip()`, `pytest.fail()`,
    `self.skipTest()` or `sys.exit()` in the same block, and, in a collected test module, the body of
    a method neither pytest nor unittest calls (of a class whose name does not match `python_classes`,
    that is no `TestCase`, no base of a collected class and that nothing names; or a method whose name
    matches neither `python_functions` nor a setup/teardown hook and that nothing names) and of a
    local def nothing names. A name counts only when code that runs reads it (a helper called only
    from an uncollected method never runs); a decorator that may register the function, a base class
    from another module, a class inside a class and a module-level function (which another module
    may import) keep the code live. In a fixture, a branch taken only for a doctest (`if
    isinstance(request.node, DoctestItem):`) is not what the fixture does for a test function: its
    patches and changes are not counted for the tests it serves.""",
)

principle(
    "nothing-running",
    "A stub that leaves nothing running; a thread joined where the test joins it",
    """A stub of `close`/`join`/`stop` on an object the test built and never started (a
    `threading.Thread`, `Timer` or `multiprocessing.Process` before `.start()`, a connection before
    `.connect()`), or made to raise to test the error path (`side_effect=OSError`, a `Mock` or a def
    that raises, `stub.side_effect = OSError` on the patch's result), leaves nothing running. A
    thread is joined when the test joins it through a list (`for t in threads: t.join()`), registers
    the join (`self.addCleanup(t.join)`), or hands it (or the list holding it) to a helper of the
    module or class whose body joins its argument (`def stop_all(threads): for t in threads: t.join()`).""",
)

principle(
    "fixed-port-server",
    "A fixed port is a hazard where something listens on it",
    """Only a listener is judged: a fixed, non-zero port (a literal, a module constant, a local
    variable or a `self.port` the class sets to one value, sums of these included) given to a
    server of any framework (`port=`/`*_port=` of any call that is not a client's, `.listen(N)` above
    a backlog's size, `bind((host, N))`, `(host, N)` after a host in a `run`/`serve`/`make_server`-like
    call, a `host:N` URL handed to a server). Left alone: a port given only to a client (a callee
    named `connect`, `Client`, `get`, `Proxy`, `url`..., or a `remote_port=`), to a mock or a record
    (`dict(port=...)`, `call(port=...)`, inside an `assert` or a comparison), port 0 or a value read
    back, a name bound to more than one value, and URLs that are only parsed. A client and a server
    agreeing on a literal is one finding, at the server.""",
)

principle(
    "guessed-wait",
    "A sleep is a guessed wait only when a later assertion reads what another party changed",
    """A sleep is reported when an assertion after it in the same function reads state that another
    party (a thread, a process, a task, a server, a pool, a signal, a callback handed away) could
    have changed in the meantime. Left alone: a sleep followed, before any assertion, by a bounded
    wait on the state (`join(5)`, `wait(timeout=...)`, `wait_for(t, 5)`, a `while` loop that polls);
    an observation window (every assertion after it says nothing happened: `assert not results`,
    `== 0`, `assertFalse`, unless the same thing was asserted true before the sleep); a sleep the
    test expects never to end (`pytest.fail()` next, or a flag set next that is asserted unset);
    a sleep in a helper or a stub that nothing after it in that helper reads (simulated work);
    and, where no party was started in the test, its class's `setUp` or a fixture it requests, a
    sleep after the test handed the code a time (`ttl=`, `interval=`, a `timedelta`), or one whose
    only check is a `pytest.raises` around it. A sleep in a test with nothing after it is still
    reported.""",
)

principle(
    "poll-timeout",
    "An elapsed-time check inside a polling loop is the loop's timeout",
    """An assertion on elapsed time inside a `while` loop (`while not ready(): assert
    monotonic() - start < 10; sleep(0.01)`) bounds how long the loop polls; it is the
    deadline HRM201 recommends, not a claim about how fast the code is.""",
)

principle(
    "loose-bound",
    "A bound on elapsed time that leaves the host half a second is no hazard",
    """A loaded CI host stalls a test for a few hundred milliseconds (a collection, a neighbour's build),
    so what makes a timing check flaky is its slack: the seconds the bound allows beyond the wait the
    test sets up between its two readings (`sleep(0.2)`, `wait(timeout=1)`; a wait as long as the bound
    or longer is a timeout the test expects not to run out). An upper bound on wall-clock time with half
    a second of slack or more (`elapsed < 5`, `elapsed < timeout + 1`) is left alone; one with less
    (`elapsed < 0.2`, `elapsed < timeout + 0.4`, `== approx(1.0, abs=0.2)`) is flagged. A bound whose
    seconds literals and names bound once do not give is left alone; CPU time has no safe slack.""",
)

principle(
    "names-a-capability",
    "A platform skip stands in for a capability only when its reason names one the platform lacks",
    """A skip on the platform's name guesses wrong when the platform stands in for something a probe
    can ask for: its reason says the platform lacks it (`not available`, `not supported`, `no`,
    `needs`, `cannot`) and names it, as an API (`mkfifo()`, `os.getuid`, `AF_UNIX`, `SIGINT`) or as a
    feature of the OS or the file system (symlinks, hard links, UNIX sockets, fork, signals,
    permissions and ownership, FIFOs, ptys, `/proc`, case sensitivity, what a file name may hold).
    A skip without a reason, or whose reason names only the platform ("Windows-only test", "applies
    only to POSIX", "won't run on Windows") or a behaviour of it, has the platform as its subject,
    and is left alone; so is one that cites a defect.""",
)

principle(
    "dropped-outcome",
    "A test that asserts nothing has lost an assertion only where it drops an outcome",
    """A test that only calls the code under test (`server.start(); server.stop()`) claims that the code
    does not raise, and the call is its check: a smoke test, left alone. It has lost an assertion when it
    computes an outcome and never looks at it: a statement with no effect (`result == 3`), a builtin
    that only computes a value called as a statement (`repr(obj)`, `len(rows)`), or a name bound to a
    call's result (`rows = query()`, `with patch(...) as send:`) that nothing in the test reads. A
    subscript or attribute statement (`data["key"]`) raises on a miss and is a check; `_` is a
    deliberate drop; a class body inside the test binds attributes; a test marked as a benchmark
    (`@pytest.mark.benchmark`, on it, its class or the module) measures.""",
)

principle(
    "reads-only",
    "A child that only reads its working directory leaves nothing in it",
    """A child started without `cwd=` leaks into the checkout only when it writes where it runs: a shell
    redirection to a relative file, `git`, a build or formatting tool (`make`, `tox`, `nox`, `black`,
    `./configure`, `setup.py`), `pip wheel`/`pip download`, `pip install .`, a file utility that
    writes (`touch`, `cp`, `rm`, `tar`), or a `-c` snippet that writes a relative path (`open("out",
    "w")`, `Path("build").mkdir()`). One that only reads there (runs a script by a relative path, is
    given a relative input, imports from it with `python -m`, lists it, an interactive shell, a tool
    that only reads its configuration: `flake8`, `pyright`) is left alone: run from elsewhere it
    fails loudly, and it leaves nothing behind. So is a tool whose only write is a cache or data file
    the guard expects in a checkout (`mypy`'s `.mypy_cache`, `pytest`'s `.pytest_cache`, `ruff
    check`'s `.ruff_cache`, `coverage run`'s `.coverage`), unless it is told to write more (`ruff
    format`, `--fix`, `coverage html`).""",
)

principle(
    "faked-spawner",
    "A child started while the spawner is a fake starts nothing",
    """pytest-subprocess's fixture (`fp`, `fake_process`) replaces `subprocess.Popen` for the whole
    test: every child it starts is answered by a registered fake, so nothing runs, nothing is written
    into the working directory and no git config is read. A test whose fixture closure, as pytest
    computes it, holds that fixture (under a name the project does not define itself) is left alone
    by the rules about children, and a fixed temp path in such a child's command line or `cwd=`
    reaches no file (HRM108). The fake answers what goes through `subprocess` (and
    `asyncio.create_subprocess_*`, `os.popen`) only: `os.system`, `os.spawn*` or `pexpect` start real
    children under it, and so does any command once the test calls `fp.allow_unregistered()` or
    `fp.pass_command()`; a helper's parameter named `fp` (not a test or a fixture) is a file.""",
)

principle(
    "nothing-else-to-revert",
    "`undo()` with nothing of anyone else's to revert",
    """`monkeypatch.undo()` reverts everything patched through the test's one `monkeypatch`. It harms
    only when another fixture patched through it: one in the test's fixture closure, as pytest computes
    it (its parameters, `usefixtures` marks, the autouse fixtures in force and what each asks for in
    turn; for an `undo()` in a fixture, that fixture's own closure), that asks for `monkeypatch`, or
    pytest's `pytester`, which sets its environment through it. Where none does, the `undo()` drops
    only the function's own patches, and is left alone.""",
)

principle(
    "own-names-only",
    "`undo()` that gives back only the project's own defaults",
    """What `monkeypatch.undo()` takes from the rest of a test is what the other fixtures patched
    through it. That harms when the patch faced the host: an environment variable, the working
    directory, `sys.path`, or a name of the standard library or of an installed library (the clock,
    `subprocess.Popen`, `requests.get`). A fixture whose every patch is of a name in one of the
    project's own modules (`monkeypatch.setattr(utils, "DEFAULT_TIMEOUT", 0.1)`, where `utils` is
    the project's; its top package found beside the test tree, at the rootdir or in `src`) gives the
    rest of the test the project's own defaults back, not the host, and is left alone. The object
    patched must be the project's module or a name that module defines: `utils.time` (a module it
    imported) or `"pkg.clock.time.sleep"` is the standard library's. A patch the reader cannot name
    (of a local object, `monkeypatch` handed to a helper, bound to another name, used in a nested def
    or a lambda) counts as facing the host.""",
)

principle(
    "stable-case-ids",
    "A case is judged by whether it moves between processes",
    """pytest names a case after its value (a string, a number, bytes, a class or function's name) or
    after the argument and its position; both are the same in every run and on every host, so a row
    without an id is left alone. Flagged is what moves between two processes: rows iterated from a set
    not visibly made of integers (string hashes are randomised per process), and a value pytest names
    the case after that is drawn at collection (random, the clock, the pid, a uuid's text, a fresh temp
    name). An object pytest names by position (`uuid4()`, `datetime.now()`), a row given an id, and a
    set passed through `sorted()` are stable.""",
)

principle(
    "silent-miss",
    "A relative path matters where missing it is silent",
    """A repository path relative to the working directory is flagged only where a run from another
    directory would miss it silently: a glob or a walk that finds nothing, an existence test whose
    answer picks a branch or a loop (or is asserted false). Where a miss raises (`open`, `read_text`,
    `listdir`, `stat`) or is asserted true (`assert Path("src").exists()`), that run fails loudly,
    and running from the root is the suite's own choice: left alone.""",
)

principle(
    "hidden-case",
    "Control flow is a hazard where it hides a case",
    """A loop is several cases under one name only when it walks a table of cases written in the test
    module (a literal of at least two rows, or a module-level name bound to one) and asserts on each;
    a `try` hides the case it was written for only when its check sits in the `except` clause and
    nothing fails when no exception comes. A loop that builds setup, iterates the API under test,
    compares one value element by element or repeats one case, a branch on a version or on the case's
    own parameters, a `try` whose body ends in `pytest.fail()` (a hand-rolled `pytest.raises`) and a
    `try`/`finally` are one case each: left alone.""",
)
