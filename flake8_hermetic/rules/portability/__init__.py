"""HRM3xx: portability. One module per rule; importing the package registers them."""

from flake8_hermetic.rules.portability import (  # noqa: F401
    hrm301_kill_zero_probe,
    hrm302_interpreter_by_name,
    hrm303_posix_absolute_path,
    hrm304_platform_skip,
)
