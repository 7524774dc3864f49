"""What the guard watches: one small class per kind of leak, by where it lives.

- :mod:`~flake8_hermetic.guard.watchbase`: the ``Watch`` protocol
  (``take``, ``leaks``, ``restore``, and ``apply``/``revert``/``reapply``
  for broader-scoped fixtures), ``SetWatch``, and ``Roots`` (stable paths);
- :mod:`~flake8_hermetic.guard.residue`: what is left on disk (the temp
  dir, the checkout, the home directory), adopted once reported;
- :mod:`~flake8_hermetic.guard.procstate`: the process state the guard puts
  back (working directory, environment, umask, interval timers, signal
  handlers, ``tempfile.tempdir``, ``sys.path``, warning filters, the root
  logger's handlers);
- :mod:`~flake8_hermetic.guard.running`: what keeps running (threads and
  child processes, less the process-wide helpers; listening sockets;
  pending asyncio tasks), adopted once reported.

This module names them all, for the session that builds them and for the
tests; it defines nothing of its own.
"""

from __future__ import annotations

from flake8_hermetic.guard.procstate import (
    HANDLER_CHANGES,
    PYTEST_CURRENT_TEST,
    WATCHED_SIGNALS,
    Environment,
    RootHandlers,
    SignalHandlers,
    SysPath,
    TempfileDir,
    Timers,
    Umask,
    WarningFilters,
    WorkingDirectory,
)
from flake8_hermetic.guard.residue import MTIME_TRUST, Residue, ignore_matcher
from flake8_hermetic.guard.running import Children, ListeningSockets, PendingTasks, Threads
from flake8_hermetic.guard.watchbase import Roots, SetWatch, State, Watch

__all__ = [
    "HANDLER_CHANGES", "MTIME_TRUST", "PYTEST_CURRENT_TEST", "WATCHED_SIGNALS",
    "Children", "Environment", "ListeningSockets", "PendingTasks", "Residue", "RootHandlers", "Roots",
    "SetWatch", "SignalHandlers", "State", "SysPath", "TempfileDir", "Threads", "Timers", "Umask",
    "WarningFilters", "Watch", "WorkingDirectory", "ignore_matcher",
]
