"""The guard's hooks: one per process (the xdist controller, each worker, or a plain run).

A worker (or a plain run) points the temp dir at its own directory,
watches each test, and hands its findings on: to the controller through
``workeroutput``, or to its own decision in a plain run. The controller
runs no test: it gathers the findings and decides, once.
"""

from __future__ import annotations

import functools
import glob
import math
import os
import re
import shutil
import stat
import tempfile
from typing import Any

import pytest

from flake8_hermetic.guard import dirwatch, helpers, processes, residue, stable, tasks, watches
from flake8_hermetic.guard.audit import AUDIT
from flake8_hermetic.guard.monitor import Leak, Monitor, code_of
from flake8_hermetic.safeio import read_regular  # at the end, a test may have left no descriptor to import it

OUTPUT_KEY = "hermetic_guard"
CLEAN = "hermetic guard: 0 new, 0 baselined, 0 stale"
UNWATCHED_CHILDREN = ("hermetic guard: child processes (HRM612) are not watched here: no /proc children files "
                      "and no psutil (pip install 'flake8-hermetic[guard]')")
# checkout entries that tools make on every run: caches, coverage data, the baseline's own temporary file
DEFAULT_IGNORES = (
    ".pytest_cache", "__pycache__", ".coverage", ".coverage.*", "*.pyc", ".hypothesis",
    ".mypy_cache", ".ruff_cache",
    # a baseline writer running beside the tests (another run's update, `baseline regenerate`): its
    # temporary file and the lock of the default baseline, each there only while it writes, and the
    # default baseline itself, which such a writer makes where there was none
    ".hermetic-baseline.*.tmp", "hermetic-baseline.txt.lock", "hermetic-baseline.txt",
)
TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")


# pytest's own root for its basetemp, read when tmp_path is first used
PYTEST_TEMPROOT = "PYTEST_DEBUG_TEMPROOT"


class TempRedirect:
    """A fresh temp dir for this process (children inherit it through the environment).

    pytest's basetemp stays where pytest keeps it (with its retention of the
    last runs), outside the guarded directory: its root is pinned to the
    real temp dir unless the run pinned it already.

    The directory's name carries the pid of its process, and the process
    holds an exclusive ``flock`` on it while it lives, so a later run can
    tell one whose process died (``os._exit()``, a killed xdist worker) from
    one still in use, and remove it (:func:`sweep`).
    """

    def __init__(self, label: str, sweep_first: bool = False) -> None:
        self.saved_env = {name: os.environ.get(name) for name in (*TEMP_VARIABLES, PYTEST_TEMPROOT)}
        self.saved_tempdir = tempfile.tempdir
        real = tempfile.gettempdir()
        if sweep_first:
            sweep(real)
        self.path, self.lock = _made_and_locked(real, f"{GUARD_PREFIX}{label}-{os.getpid()}-")
        os.environ.setdefault(PYTEST_TEMPROOT, real)
        for name in TEMP_VARIABLES:
            os.environ[name] = self.path
        tempfile.tempdir = self.path
        self.saved_names = stable.record_tempfile_names()  # their random parts read ``*`` in a finding

    def stop(self) -> None:
        for name, value in self.saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        tempfile.tempdir = self.saved_tempdir
        stable.stop_recording(self.saved_names)
        # what is left was reported before; a file the process still has open (a test's
        # NamedTemporaryFile still referenced) is removed by its own finalizer, which would
        # complain after the summary if it were gone: it stays, with the directory, and the
        # lock stays held until the process exits (the next run removes the rest)
        if not _remove_except(self.path, _open_inside(self.path)):
            return
        if self.lock >= 0:
            os.close(self.lock)
            self.lock = -1


# the guard's per-process temp dirs: hermetic-guard-<label>-<pid>-<tempfile's 8 characters>
GUARD_PREFIX = "hermetic-guard-"
_OWNED = re.compile(r"hermetic-guard-.+-(\d+)-[a-z0-9_]{8}")


def _made_and_locked(root: str, prefix: str) -> tuple[str, int]:
    """A new directory in ``root`` and a descriptor holding an exclusive lock
    on it (-1 where there is no ``flock``). A sweep in another pid namespace
    (which cannot see this pid) may remove the directory between its making
    and the lock: then another is made."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock, no sweep
        fcntl = None  # type: ignore[assignment]
    for _ in range(5):
        path = os.path.realpath(tempfile.mkdtemp(prefix=prefix, dir=root))
        if fcntl is None:  # pragma: no cover - Windows
            return path, -1
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _same_file(path, fd):
                return path, fd
        except OSError:  # a sweep holds it, and removes it
            pass
        os.close(fd)
    return path, -1  # never refused: unlocked, a concurrent sweep keeps off it by its live pid


def _same_file(path: str, fd: int) -> bool:
    try:
        named, opened = os.lstat(path), os.fstat(fd)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino) and opened.st_nlink > 0


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not; another user's is)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return True
    return state not in ([b"Z"], [b"X"])


def sweep(root: str) -> int:
    """Remove the guard's temp dirs in ``root`` that their process left (it
    died before its end of session), and return how many: only directories
    of this user whose name has the guard's shape, whose pid is not a live
    process, and on which no process holds the lock (a run in another pid
    namespace, a child forked by a test of the dead run). Never on a platform
    without ``flock``."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return 0
    try:
        with os.scandir(root) as entries:
            names = [entry.name for entry in entries if entry.name.startswith(GUARD_PREFIX)]
    except OSError:
        return 0
    removed = 0
    for name in names:
        match = _OWNED.fullmatch(name)
        if match is None or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
            continue
        path = os.path.join(root, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            if not _same_file(path, fd):
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(path, ignore_errors=True)
            removed += not os.path.lexists(path)
        except OSError:  # held: a live process still uses it
            continue
        finally:
            os.close(fd)
    return removed


def _open_inside(directory: str) -> set[str] | None:
    """The paths under ``directory`` this process has open (None: not knowable here)."""
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return None
    inside = directory.rstrip(os.sep) + os.sep
    found = set()
    for fd in descriptors:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(inside):
            found.add(target)
    return found


def _remove_except(directory: str, kept: set[str] | None) -> bool:
    """Remove ``directory`` but the files in ``kept`` (when None, every regular
    file at its top: one may be open); whether it is gone."""
    if kept is not None and not kept:
        shutil.rmtree(directory, ignore_errors=True)
        return not os.path.lexists(directory)
    try:
        with os.scandir(directory) as entries:
            listed = [(entry.path, entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False))
                      for entry in entries]
    except OSError:
        return False
    left = False
    for path, is_dir, is_file in listed:
        if kept is None and is_file or kept is not None and path in kept:
            left = True
        elif is_dir and kept is not None and any(each.startswith(path + os.sep) for each in kept):
            left = not _remove_except(path, kept) or left
        elif is_dir:
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass
    if left:
        return False
    try:
        os.rmdir(directory)
    except OSError:
        return False
    return True


# seconds a test's threads and children may take to end: more would hold a leaking suite for minutes a test
GRACE_MAX = 600.0


def grace_of(config: pytest.Config) -> float:
    """``hermetic_guard_grace``, or a usage error naming the key and where it was set."""
    text = config.getini("hermetic_guard_grace")
    try:
        value = float(str(text).strip())
    except ValueError:
        value = math.nan
    if 0 <= value <= GRACE_MAX:  # not nan, inf, negative or too long
        return value
    overrides = [o for o in (getattr(config.option, "override_ini", None) or [])
                 if o.split("=", 1)[0].strip() == "hermetic_guard_grace"]
    where = "-o " if overrides else f"{config.inipath}: " if config.inipath else ""
    raise pytest.UsageError(f"{where}hermetic_guard_grace = {text!r}: expected seconds from 0 to {GRACE_MAX:g}")


def operator_home(config: pytest.Config) -> str | None:
    """The home directory, when it is the operator's own (not a pinned one)."""
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE")
    if not home:
        return None
    real = config.getini("hermetic_guard_home")
    if not real:
        try:
            import pwd

            real = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError, OSError):  # no password database (Windows): the profile directory
            real = os.environ.get("USERPROFILE", "")
    if not real:
        return None
    return home if os.path.realpath(home) == os.path.realpath(real) else None


def checkout_directories(config: pytest.Config) -> dict[str, str]:
    rootdir = str(config.rootpath)
    directories = {rootdir: ""}
    for pattern in config.getini("testpaths") or []:
        for path in sorted(glob.glob(os.path.join(rootdir, pattern))) or [os.path.join(rootdir, pattern)]:
            if os.path.isdir(path) and os.path.realpath(path) != os.path.realpath(rootdir):
                label = os.path.relpath(path, rootdir).replace(os.sep, "/") + "/"
                directories[os.path.abspath(path)] = label
    return directories


def parameters(fixturedef: Any, request: Any) -> str:
    """The parameters this instance of a fixture was set up with: its own and
    those of the parametrized fixtures it depends on (a fixture that depends
    on a parametrized one is set up again for each parameter), as
    ``name=index`` pairs; the same on every xdist worker."""
    item = getattr(request, "_pyfuncitem", None)
    indices = getattr(getattr(item, "callspec", None), "indices", None)
    if not indices:
        return ""
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    seen: set[str] = set()
    todo = [fixturedef.argname, *fixturedef.argnames]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            found = definitions.get(name)
            if found:
                todo.extend(found[-1].argnames)
    return ",".join(f"{name}={indices[name]}" for name in sorted(seen) if name in indices)


class Guard:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.worker = hasattr(config, "workerinput")
        self.controller = False
        self.monitor: Monitor | None = None
        self.redirect: TempRedirect | None = None
        self.leaks: list[Leak] = []
        self.ran: list[str] = []
        self.notes: list[str] = []  # lines for the summary: what the guard could not see
        self.helpers: helpers.Helpers | None = None  # the process-wide helpers seen (not on the controller)
        self.verdict: Any = None
        self.error: str | None = None  # the one line of a refused decision (see ``_refuse``)
        self.tmp_watch: watches.Residue | None = None
        self.notifier: dirwatch.Notifier | None = None
        self.audit_before: tuple[frozenset[str], bool] | None = None
        self.clean = False  # nothing to decide: no leak, no runtime entry, no update, no report
        self.clean_baseline: str | None = None
        self.pending: list[tuple[Any, dict[str, Any]]] = []  # broader fixtures being set up, with the state before
        self.scopes: dict[Any, str] = {}  # fixturedef -> its scope (the property is an enum lookup)
        # leaks the finalization of a broader fixture made, or found made, in the running test's teardown
        self.finalized: list[tuple[str, str, bool, str, dict[str, Any]]] = []
        self.positions: dict[str, int] | None = None  # node id -> index in the collection (same on every worker)

    # -- start ---------------------------------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = self.config
        grace = grace_of(config)
        self.controller = not self.worker and config.pluginmanager.has_plugin("dsession")
        if self.controller:  # no temp dir of its own: it removes those its dead workers (or dead runs) left
            real = tempfile.gettempdir()
            sweep(real)
            config.add_cleanup(functools.partial(sweep, real))  # after the workers are gone
            return
        factory = getattr(config, "_tmp_path_factory", None)

        def basetemp() -> str:
            try:
                return str(factory.getbasetemp()) if factory is not None else ""
            except OSError:
                return ""

        label = config.workerinput["workerid"] if self.worker else "run"  # type: ignore[attr-defined]
        self.redirect = TempRedirect(label, sweep_first=not self.worker)
        rootdir = str(config.rootpath)
        home = operator_home(config)
        roots = watches.Roots([(self.redirect.path, "<tmp>"), (rootdir, "<rootdir>"), (home or "", "~")],
                              later=[(basetemp, "<basetemp>")])
        ignores = [*DEFAULT_IGNORES, *config.getini("hermetic_guard_ignore")]
        checkout = checkout_directories(config)
        for directory in checkout:
            for extra in (config.getoption("basetemp") or "", config.getoption("hermetic_guard_report") or ""):
                if extra and os.path.dirname(os.path.abspath(extra)) == directory:
                    ignores.append(os.path.basename(extra))
        self.notifier = dirwatch.Notifier()
        self.tmp_watch = watches.Residue("tmp", {self.redirect.path: ""}, ["pytest-of-*"], self.notifier)
        found: list[watches.Watch] = [self.tmp_watch, watches.Residue("checkout", checkout, ignores, self.notifier)]
        found[-1].shared = True
        shared_dirs = list(checkout)
        if home:
            found.append(watches.Residue("home", {home: "~/"}, [], self.notifier))
            found[-1].shared = True
            shared_dirs.append(home)
        self.helpers = helpers.Helpers(config.getini("hermetic_guard_helpers"))
        # the signal and timer watches read the handlers again only after a call that may change them
        watches.HANDLER_CHANGES.install()
        config.add_cleanup(watches.HANDLER_CHANGES.uninstall)
        found += [
            watches.WorkingDirectory(roots), watches.Environment(), watches.Umask(),
            watches.Timers(), watches.SignalHandlers(), watches.TempfileDir(roots),  # timers first
            watches.SysPath(roots, config.getoption("importmode")), watches.WarningFilters(), watches.RootHandlers(),
            watches.Threads(grace, self.helpers), watches.Children(grace, self.helpers),
            watches.ListeningSockets(roots), watches.PendingTasks(),
        ]
        if config.getini("hermetic_guard_orphans"):  # orphaned grandchildren stay ours to see (Linux)
            config.add_cleanup(processes.keep_orphans())
        config.add_cleanup(tasks.uninstall)
        self.monitor = Monitor(found, claims=self.worker)
        if self.worker or not processes.kernel_counts_children():  # what only the audit hook can tell
            self.audit_before = AUDIT.install(shared_dirs if self.worker else ())

    # -- per test -----------------------------------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        monitor = self.monitor
        if monitor is None:
            yield
            return
        monitor.begin()
        yield
        # the protocol ran setup, call and teardown: the test's fixtures (and
        # those of scopes that ended with it) are finalized
        file, line, _ = item.location
        nodeid = item.nodeid
        self.ran.append(nodeid)
        found = monitor.judge(nodeid, file, line)
        if stable.MADE and self.tmp_watch is not None:  # names drawn in this test: keep those still there
            stable.keep_made_in(self.tmp_watch.state)
        if self.finalized:
            self._mark(item, found)
        if found:
            self.leaks.extend(found)

    # -- broader-scoped fixtures -------------------------------------------------------------------------
    # The fixture hook runs for every fixture of every test, so it is a plain
    # hook, not a wrapper (a wrapper costs pluggy two generators and a result
    # object a call, the largest share of the guard's per-test cost on a
    # suite of fast tests), and there is no post-finalizer hook: a broader
    # fixture gets a finalizer of the guard's own. Its setup is bracketed by
    # a snapshot when it starts and one at the next event after it ended:
    # the next fixture's setup, the test's call, or its teardown.

    @pytest.hookimpl(tryfirst=True)
    def pytest_fixture_setup(self, fixturedef: Any, request: Any) -> None:
        monitor = self.monitor
        if monitor is None or monitor.expected is None:
            return None
        if self.pending:
            self._hold_finished()
        scope = self.scopes.get(fixturedef)
        if scope is None:
            scope = self.scopes[fixturedef] = fixturedef.scope
        if scope != "function":
            # registered before pytest's own hook registers the fixture's
            # teardown, so it runs after it (finalizers run last in, first out)
            fixturedef.addfinalizer(functools.partial(self._released, fixturedef, request))
            self.pending.append((fixturedef, monitor.snapshot()))
        return None  # the fixture is set up by pytest's own hook

    def _hold_finished(self, every: bool = False) -> None:
        """Hold what each broader fixture whose setup has ended changed (pytest
        records its result, or its error, as ``cached_result`` when the setup
        ends; one that is still running has a fixture set up inside it)."""
        assert self.monitor is not None
        running = []
        for fixturedef, before in reversed(self.pending):  # the innermost first
            if every or getattr(fixturedef, "cached_result", None) is not None:
                self.monitor.hold(id(fixturedef), before, self.monitor.snapshot())
                # finalizers run last in, first out: this one runs before the fixture's own
                # (and before those of fixtures set up after it that depend on it: the
                # monitor notes the state again after each of those)
                fixturedef.addfinalizer(functools.partial(self.monitor.finalizing_starts, id(fixturedef)))
            else:
                running.append((fixturedef, before))
        self.pending = running[::-1]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        if self.pending:
            self._hold_finished()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        if self.pending:  # a setup that failed (the call did not run)
            self._hold_finished(every=True)

    def _released(self, fixturedef: Any, request: Any) -> None:
        """The fixture's own finalizers ran: what it held is no longer expected,
        and what its finalization left is marked (see ``_mark``)."""
        monitor = self.monitor
        if monitor is None or not monitor.held or id(fixturedef) not in monitor.held:
            return
        found = monitor.release(id(fixturedef))
        if found:
            node = getattr(request, "node", None)
            identity = {"scope": fixturedef.scope, "node": getattr(node, "nodeid", ""),
                        "baseid": fixturedef.baseid, "argname": fixturedef.argname,
                        "param": parameters(fixturedef, request),
                        # finalized while a test is set up: a parametrized fixture it depends on moves on
                        # to its next parameter (pytest names the phase in the environment, at no cost)
                        "switch": os.environ.get("PYTEST_CURRENT_TEST", "").endswith("(setup)")}
            self.finalized += [(code, what, own, entry, identity) for code, what, own, entry in found]

    def _mark(self, item: pytest.Item, found: list[Leak]) -> None:
        """Mark the leaks of ``item`` that a broader fixture's finalization made
        (or found made by the test), with the fixture and the test's place in
        the collection: ``verdict.one_finalization`` keeps, of the workers that
        finalized the same fixture, the finding ``-n 0`` makes."""
        if self.positions is None:
            self.positions = {each.nodeid: index for index, each in enumerate(item.session.items)}
        index = self.positions.get(item.nodeid, -1)
        for code, what, own, entry, identity in self.finalized:
            mark = {**identity, "index": index, "own": own}
            for leak in found:
                # an entry of a shared directory (xdist) is marked on its own leak, not on another of its name
                if leak.code == code and leak.what == what and (leak.claim.get("entry") == entry if entry else (
                        own or not any(not m["own"] for m in leak.fixtures))):
                    leak.fixtures.append(mark)
                    break
        self.finalized = []

    # -- end --------------------------------------------------------------------------------------------------

    def _session_residue(self) -> None:
        """What is left in the temp dir and was never reported: made outside any test."""
        if self.tmp_watch is None or self.monitor is None:
            return
        left = self.tmp_watch.take() - self.monitor.reported
        for name in self.tmp_watch.leaks(frozenset(), left):
            self.leaks.append(Leak(".", code_of("tmp"), name))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}).get(OUTPUT_KEY)
        if output:
            import json

            data = json.loads(output)
            # a finding of the session is one process's: once per run, not once per worker
            self.leaks.extend(helpers.one_per_process(self.leaks, [Leak.from_dict(item) for item in data["leaks"]]))
            self.ran.extend(data["ran"])
            self.notes.extend(data.get("notes", []))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.controller:
            self._session_residue()
            if self.monitor is not None:  # residue listings that failed (see ``Monitor.notes``)
                self.notes.extend(self.monitor.notes())
            residue.SPARE.release()  # no listing is left to make: the decision gets the reserve descriptor
            if self.helpers is not None:
                self.leaks.extend(self.helpers.session_leaks())  # shared helpers: found once, against the session
            if self.audit_before is not None:
                AUDIT.restore(self.audit_before)
            if self.redirect is not None:
                self.redirect.stop()
            if self.notifier is not None:
                self.notifier.close()
        if self.worker:
            import json

            self.config.workeroutput[OUTPUT_KEY] = json.dumps(  # type: ignore[attr-defined]
                {"leaks": [leak.as_dict() for leak in self.leaks], "ran": self.ran, "notes": self.notes}
            )
            return
        self._decide(session)

    def _nothing_to_decide(self, baseline: str | None) -> bool:
        """No leak, no update, and no runtime entry in the baseline: a clean run."""
        config = self.config
        if self.leaks or config.getoption("hermetic_guard_update") or config.getoption("hermetic_guard_report"):
            return False
        try:
            data = read_regular(baseline or "")  # a FIFO or /dev/zero is refused, not read
        except FileNotFoundError:
            return True  # no baseline: nothing in it
        except OSError:
            return False  # unreadable: the decision refuses it in one line, as it would with a leak
        return b"\tHRM6" not in data

    def _decide(self, session: pytest.Session) -> None:
        if self.config.getoption("hermetic_no_baseline") and self._nothing_to_decide(None):
            self.clean, self.clean_baseline = True, None  # no baseline to find, nothing to say
            return
        from flake8_hermetic.baseline.format import BaselineError, write_atomic
        from flake8_hermetic.guard.locate import locate
        from flake8_hermetic.options import ConfigError

        config = self.config
        start = str(config.invocation_params.dir)
        rootdir = str(config.rootpath)
        report = config.getoption("hermetic_guard_report")
        try:
            baseline, root = locate(start, config.getoption("hermetic_baseline"),
                                    config.getoption("hermetic_no_baseline"))
            if self._nothing_to_decide(baseline):
                self.clean, self.clean_baseline = True, baseline
                return
        except (BaselineError, ConfigError, OSError) as exc:
            self._refuse(session, str(exc))
            return
        from flake8_hermetic.guard import verdict as verdicts

        try:
            # the report's file is judged before the baseline is written: a refused report writes nothing
            target = verdicts.report_target(os.path.join(start, report), baseline, report) if report else None
            self.verdict = verdicts.decide(self.leaks, self.ran, baseline, rootdir,
                                           update=config.getoption("hermetic_guard_update"), root=root,
                                           allow_growth=config.getoption("hermetic_guard_allow_growth"))
            if target is not None:
                text = verdicts.formatted_report(self.verdict, config.getoption("hermetic_guard_format"), rootdir)
                try:
                    write_atomic(target, text)
                except OSError as exc:
                    raise verdicts.Refused(f"--hermetic-guard-report={report}: cannot write: {exc.strerror}") from None
        except (BaselineError, ConfigError, OSError, verdicts.Refused) as exc:
            self._refuse(session, str(exc))
            return
        if self.verdict.new and not self.verdict.written and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _refuse(self, session: pytest.Session, message: str) -> None:
        self.verdict = None
        self.error = message
        session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.worker:
            return
        self._summary(terminalreporter)
        for note in self.notes:
            terminalreporter.write_line(note, yellow=True)
        notice = processes.unwatched_notice(UNWATCHED_CHILDREN)
        if notice:  # said, not skipped silently: HRM612 could not fire in this run
            terminalreporter.write_line(notice, yellow=True)
        from flake8_hermetic.guard import sockets

        if not sockets.watchable():  # nor HRM613
            terminalreporter.write_line(sockets.UNWATCHED, yellow=True)

    def _summary(self, terminalreporter: Any) -> None:
        error = self.error
        if error:
            terminalreporter.section("hermetic guard", red=True)
            terminalreporter.write_line(f"flake8-hermetic guard: {error}")
            return
        if self.verdict is None and not self.clean:
            return
        shown: str | None = self.verdict.baseline_path if self.verdict is not None else self.clean_baseline
        if shown:
            shown = os.path.relpath(shown, str(self.config.invocation_params.dir))
        if self.verdict is None:
            terminalreporter.section("hermetic guard", green=True)
            terminalreporter.write_line(CLEAN + (f" (baseline {shown})" if shown else ""))
            return
        from flake8_hermetic.guard import verdict as verdicts

        lines = verdicts.terminal_lines(self.verdict, shown)
        bad = bool(self.verdict.new) and not self.verdict.written
        terminalreporter.section("hermetic guard", red=bad, green=not bad and not self.verdict.stale,
                                 yellow=bool(self.verdict.stale) and not bad)
        for line in lines:
            terminalreporter.write_line(line)
