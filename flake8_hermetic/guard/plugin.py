"""The ``pytest11`` entry point: options only, until the guard is turned on.

Loaded into every pytest run of an environment that has the pack, so this
module stays tiny: it declares the options and, only when
``--hermetic-guard`` or ``hermetic_guard = true`` asks for it, registers
the guard (:class:`flake8_hermetic.guard.session.Guard`), whose hooks do
the work. Disabled, no hook of the guard runs for any test.
"""

from __future__ import annotations

from typing import Any


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("hermetic-guard", "flake8-hermetic runtime guard (HRM6xx)")
    group.addoption("--hermetic-guard", action="store_true", default=False,
                    help="fail the run on state a test leaks (temp and checkout residue, cwd, env, threads, ...)")
    group.addoption("--hermetic-guard-update", action="store_true", default=False,
                    help="rewrite the baseline's runtime entries of the tests that ran (implies --hermetic-guard); "
                         "an existing baseline only shrinks unless --hermetic-guard-allow-growth")
    group.addoption("--hermetic-guard-allow-growth", action="store_true", default=False,
                    help="let --hermetic-guard-update add the new findings to an existing baseline")
    group.addoption("--hermetic-guard-report", metavar="FILE", default=None,
                    help="also write the guard's findings to FILE")
    group.addoption("--hermetic-guard-format", choices=("json", "github", "sarif"), default="json",
                    help="format of --hermetic-guard-report (github/sarif as flake8-hermetic check writes them)")
    group.addoption("--hermetic-baseline", metavar="FILE", default=None,
                    help="the baseline file (default: the one flake8-hermetic finds)")
    group.addoption("--hermetic-no-baseline", action="store_true", default=False,
                    help="ignore the baseline: every leak is new")
    parser.addini("hermetic_guard", type="bool", default=False, help="turn the flake8-hermetic runtime guard on")
    parser.addini("hermetic_guard_ignore", type="linelist", default=[],
                  help="more names (globs) of checkout entries the guard ignores")
    parser.addini("hermetic_guard_grace", default="1.0",
                  help="seconds a test's threads and child processes get to finish before they count as leaked")
    parser.addini("hermetic_guard_helpers", type="linelist", default=[],
                  help="process-wide helpers (globs of a thread's name or target, a child's program or command "
                       "line) the guard accepts; multiprocessing's resource tracker and forkserver always are")
    parser.addini("hermetic_guard_orphans", type="bool", default=False,
                  help="make the guarded process a child subreaper (Linux), so a test's orphaned grandchildren "
                       "are found at their test (off: orphans that exit unseen stay zombies of the run)")
    parser.addini("hermetic_guard_home", default="",
                  help="the operator's real home directory (default: the password database's)")


def enabled(config: Any) -> bool:
    return bool(
        config.getoption("hermetic_guard") or config.getoption("hermetic_guard_update")
        or config.getini("hermetic_guard")
    )


def pytest_configure(config: Any) -> None:
    if not enabled(config):
        return
    from flake8_hermetic.guard.session import Guard

    config.pluginmanager.register(Guard(config), "hermetic-guard")
