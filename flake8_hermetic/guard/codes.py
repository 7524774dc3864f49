"""The runtime guard's codes (``HRM6xx``): one per kind of leak, each with
its page, in the shape of the static rules' pages.

Plain data, importable without pytest: ``flake8-hermetic rules`` /
``explain``, ``docs/rules/`` and SARIF's rule help are rendered from it by
:mod:`flake8_hermetic.ruledocs`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuntimeCode:
    code: str
    kind: str  # the watch that reports it
    summary: str  # the one line of the table
    message: str  # ``{what}`` is the baseline's what field
    prevented_by: str  # the static rule(s) that flag the shape, in markdown
    why: str
    example: str  # python
    instead: str  # python
    # the static rules whose hazard is a write of the state this code watches: a finding of theirs that
    # leaks shows as this code in its test (``flake8-hermetic prove``). Rules ``prevented_by`` names for a
    # read (of the home, of a path relative to the checkout) or for state outside what the guard watches
    # (a fixed ``/tmp`` path: the guard's temp dir is its own) are not proven by it.
    proves: tuple[str, ...] = ()

    def page(self) -> str:
        return (
            f"# {self.code}: {self.summary}\n\n"
            f"## What it does\nReported by the runtime guard (`pytest --hermetic-guard`, see `docs/guard.md`), "
            f"not by flake8: {self.summary[0].lower() + self.summary[1:]} The finding is attributed to the test's "
            "node id and judged after the test's own fixtures are torn down, so a fixture's cleanup counts.\n\n"
            f"## Why is this bad?\n{self.why}\n\n"
            f"## Example\n```python\n{self.example}\n```\n\n"
            f"## Use instead\n```python\n{self.instead}\n```\n\n"
            f"## Prevented statically by\n{self.prevented_by}\n\n"
            "## Options\n`--hermetic-guard` / `hermetic_guard = true`, `--hermetic-baseline`, "
            "`--hermetic-guard-update` (see `docs/guard.md`).\n\n"
            f"## Message\n`{self.code} {self.message}`\n"
        )


CODES: tuple[RuntimeCode, ...] = (
    RuntimeCode(
        "HRM601", "tmp", "A test left an entry in the temporary directory.",
        "left {what!r} in the temporary directory; remove it, or use tmp_path",
        "[HRM101](HRM101.md) (a `tempfile` result nobody removes), [HRM102](HRM102.md) (a removal only "
        "`tearDown` makes, which a failing `setUp` skips), [HRM103](HRM103.md) (a removal whose errors are "
        "ignored) and [HRM108](HRM108.md) (a fixed name in the shared temp dir).",
        "Files left in the temp dir pile up on CI hosts, and a later test (or another run on the same host) "
        "that reuses the name reads the previous test's data.",
        "def test_export():\n    path = tempfile.mkdtemp()\n    export(path)",
        "def test_export(tmp_path):\n    export(tmp_path)",
        proves=("HRM101", "HRM102", "HRM103"),
    ),
    RuntimeCode(
        "HRM602", "checkout", "A test left a new entry in the checkout (the rootdir's top level or a test path).",
        "left {what!r} in the checkout; write under tmp_path, pass cwd= to child processes",
        "[HRM106](HRM106.md) (a child process started without `cwd=`) and [HRM404](HRM404.md) "
        "(a repository path relative to the working directory).",
        "A file written into the checkout makes the next run differ from this one, can be committed by accident, "
        "and under xdist can be read by a test on another worker.",
        "def test_build():\n    subprocess.run([\"make\"], check=True)  # writes build/ into the checkout",
        "def test_build(tmp_path):\n"
        "    subprocess.run([\"make\", \"-C\", SRC, f\"O={tmp_path}\"], cwd=tmp_path, check=True)",
        proves=("HRM106",),
    ),
    RuntimeCode(
        "HRM603", "cwd", "A test left the working directory changed.",
        "left the working directory at {what!r}; use monkeypatch.chdir()",
        "[HRM105](HRM105.md) (`os.chdir()` with nothing that changes back).",
        "Every later test on the same worker runs in the other directory, and relative paths there resolve "
        "somewhere else: a failure that depends on test order.",
        "def test_build(tmp_path):\n    os.chdir(tmp_path)",
        "def test_build(tmp_path, monkeypatch):\n    monkeypatch.chdir(tmp_path)",
        proves=("HRM105",),
    ),
    RuntimeCode(
        "HRM604", "env", "A test left an environment variable set, removed or changed (named, never its value).",
        "left the environment variable {what}; use monkeypatch.setenv()/delenv()",
        "[HRM107](HRM107.md) (a raw write to `os.environ`).",
        "Child processes and every later test on the same worker see the variable: a test passes or fails "
        "depending on which test ran before it.",
        "def test_mode():\n    os.environ[\"APP_MODE\"] = \"test\"",
        "def test_mode(monkeypatch):\n    monkeypatch.setenv(\"APP_MODE\", \"test\")",
        proves=("HRM107",),
    ),
    RuntimeCode(
        "HRM605", "home", "A test left a new entry at the top level of the operator's real home directory.",
        "left {what!r} in the operator's home directory; point HOME at tmp_path",
        "[HRM109](HRM109.md) (a read of the operator's home) and [HRM115](HRM115.md) "
        "(git run with the operator's own config).",
        "The suite writes into the developer's own home: dotfiles and caches that change how the next run, "
        "and the developer's own tools, behave.",
        "def test_cache():\n    Cache(Path.home() / \".mycache\").store(\"x\")",
        "def test_cache(tmp_path, monkeypatch):\n    monkeypatch.setenv(\"HOME\", str(tmp_path))\n"
        "    Cache(Path.home() / \".mycache\").store(\"x\")",
    ),
    RuntimeCode(
        "HRM606", "umask", "A test left the process umask changed.",
        "left the umask at {what}; restore it in a finally block",
        "No static rule sees an `os.umask()` call that is not restored; the guard is the only check.",
        "Every file a later test creates gets other permissions than it would alone.",
        "def test_private_file():\n    os.umask(0o077)",
        "def test_private_file():\n    old = os.umask(0o077)\n    try:\n        ...\n"
        "    finally:\n        os.umask(old)",
    ),
    RuntimeCode(
        "HRM607", "signals", "A test left a signal handler installed.",
        "left a handler installed for {what}; restore the previous one",
        "No static rule sees a `signal.signal()` call that is not restored; the guard is the only check.",
        "A later test that sends or receives the signal runs the stale handler, often a closure over the "
        "earlier test's objects.",
        "def test_reload():\n    signal.signal(signal.SIGHUP, app.reload)",
        "def test_reload(monkeypatch):\n    monkeypatch.setattr(signal, \"SIGHUP\", signal.SIGHUP)\n"
        "    old = signal.signal(signal.SIGHUP, app.reload)\n    try:\n        ...\n    finally:\n"
        "        signal.signal(signal.SIGHUP, old)",
    ),
    RuntimeCode(
        "HRM608", "syspath", "A test left `sys.path` changed.",
        "left sys.path changed: {what}; use monkeypatch.syspath_prepend()",
        "No static rule sees a `sys.path` edit that is not undone; the guard is the only check.",
        "Later tests import other modules than they would alone (a fixture's copy instead of the installed package).",
        "def test_plugin(tmp_path):\n    sys.path.insert(0, str(tmp_path))",
        "def test_plugin(tmp_path, monkeypatch):\n    monkeypatch.syspath_prepend(tmp_path)",
    ),
    RuntimeCode(
        "HRM609", "warnings", "A test left `warnings.filters` changed.",
        "left warnings.filters changed: {what}; use warnings.catch_warnings() or pytest.warns()",
        "No static rule sees a warning filter that is not undone; the guard is the only check.",
        "A later test that expects a warning (or an error from `-W error`) no longer gets it.",
        "def setup_module():\n    warnings.simplefilter(\"ignore\")",
        "def test_quiet():\n    with warnings.catch_warnings():\n"
        "        warnings.simplefilter(\"ignore\")\n        ...",
    ),
    RuntimeCode(
        "HRM610", "logging", "A test left a handler on the root logger.",
        "left a {what} on the root logger; remove it, or use caplog",
        "No static rule sees a root logger handler that is not removed; the guard is the only check.",
        "Every later test's log records go through the stale handler too: output into a closed file, "
        "records kept alive, duplicated lines.",
        "def test_log(tmp_path):\n    logging.getLogger().addHandler(logging.FileHandler(tmp_path / \"log\"))",
        "def test_log(caplog):\n    ...\n    assert \"done\" in caplog.text",
    ),
    RuntimeCode(
        "HRM611", "threads", "A test left a thread running after the grace period.",
        "left a thread running: {what}; join it (with a timeout) before the test ends",
        "[HRM112](HRM112.md) (a thread started and never joined) and [HRM114](HRM114.md) "
        "(a detached asyncio task).",
        "The thread keeps running into later tests: it writes into their state, holds their ports, "
        "and fails them at random.",
        "def test_server():\n    threading.Thread(target=serve, daemon=True).start()",
        "def test_server():\n    t = threading.Thread(target=serve)\n    t.start()\n    try:\n        ...\n"
        "    finally:\n        stop()\n        t.join(timeout=10)",
        proves=("HRM112", "HRM114"),
    ),
    RuntimeCode(
        "HRM612", "children", "A test left a child process running.",
        "left a child process running: {what}; wait for it or kill it",
        "[HRM113](HRM113.md) (a `Popen` never waited on or killed).",
        "The process outlives the test: it holds files, ports and CPU, and may write into the next test's directories.",
        "def test_daemon():\n    subprocess.Popen([\"sleep\", \"60\"])",
        "def test_daemon():\n    with subprocess.Popen([\"sleep\", \"60\"]) as proc:\n        ...\n        proc.kill()",
        proves=("HRM113",),
    ),
    RuntimeCode(
        "HRM613", "sockets", "A test left a socket listening (TCP, unix) or bound to a fixed port (UDP).",
        "left a socket open: {what}; close it (a with block, or a fixture's finalizer)",
        "[HRM110](HRM110.md) (a server on a fixed port).",
        "The port (or the unix socket's path) stays taken for the rest of the process: a later test, another "
        "xdist worker or the next run that binds it fails with `EADDRINUSE`, and a client may reach the stale "
        "server instead of its own.",
        "def test_server():\n    server = socket.create_server((\"127.0.0.1\", 8080))\n    serve_in_background(server)",
        "def test_server():\n    with socket.create_server((\"127.0.0.1\", 0)) as server:\n"
        "        port = server.getsockname()[1]\n        ...",
        proves=("HRM110",),
    ),
    RuntimeCode(
        "HRM614", "tasks", "A test left an asyncio task pending when its event loop closed.",
        "left an asyncio task pending when its event loop closed: {what}; await or cancel it before the loop closes",
        "[HRM114](HRM114.md) (a detached asyncio task).",
        "A closed loop never resumes the task: its `finally` runs whenever the garbage collector gets to it, "
        "during some later test, which then gets the blame for what it does (the guard runs it at the close).",
        "def test_watch(tmp_path):\n    loop = asyncio.new_event_loop()\n"
        "    loop.run_until_complete(start_watcher(tmp_path))  # create_task(), never awaited\n    loop.close()",
        "def test_watch(tmp_path):\n    async def main():\n        task = await start_watcher(tmp_path)\n"
        "        task.cancel()\n        await asyncio.gather(task, return_exceptions=True)\n\n"
        "    asyncio.run(main())",
        proves=("HRM114",),
    ),
    RuntimeCode(
        "HRM615", "timers", "A test left an interval timer pending (`signal.alarm()`, `signal.setitimer()`).",
        "left a timer pending: {what} (the guard cancelled it); cancel it in a finally block "
        "(signal.alarm(0), signal.setitimer(which, 0))",
        "No static rule sees a timer that is not cancelled; the guard is the only check.",
        "The timer fires during a later test: its signal runs a stale handler there, or, once the handler is "
        "the default again, ends the whole run (`Alarm clock`, every result lost).",
        "def test_timeout():\n    signal.signal(signal.SIGALRM, on_timeout)\n    signal.alarm(1)\n    fast_call()",
        "def test_timeout():\n    old = signal.signal(signal.SIGALRM, on_timeout)\n    signal.alarm(1)\n    try:\n"
        "        fast_call()\n    finally:\n        signal.alarm(0)\n        signal.signal(signal.SIGALRM, old)",
    ),
    RuntimeCode(
        "HRM616", "tempdir", "A test left `tempfile.tempdir` changed.",
        "left tempfile.tempdir changed to {what}; use monkeypatch.setattr(tempfile, \"tempdir\", ...)",
        "No static rule sees an assignment to `tempfile.tempdir` that is not undone; the guard is the only check.",
        "Every later `tempfile` call of the process makes its files there: a later test's temp files land in an "
        "earlier test's directory (removed under it, or shared with it), and the guard's temp-dir watch "
        "(HRM601) no longer sees them.",
        "def test_export(tmp_path):\n    tempfile.tempdir = str(tmp_path)",
        "def test_export(tmp_path, monkeypatch):\n    monkeypatch.setattr(tempfile, \"tempdir\", str(tmp_path))",
    ),
)

BY_CODE = {code.code: code for code in CODES}
BY_KIND = {code.kind: code for code in CODES}
