"""HRM3xx: tests that hold on one operating system only (POSIX paths and
signals, the interpreter's name, a skip by platform name).

One module per rule; importing the package registers them. The family has no
machinery of its own: what it shares with others is in ``flake8_hermetic.facts``.
"""

from flake8_hermetic.rules.portability import (  # noqa: F401
    hrm301_kill_zero_probe,
    hrm302_interpreter_by_name,
    hrm303_posix_absolute_path,
    hrm304_platform_skip,
)
