"""HRM2xx: verdicts that change from run to run."""

from flake8_hermetic.rules.determinism import (  # noqa: F401  (importing a rule module registers it)
    hrm201_fixed_sleep,
    hrm202_fixed_async_sleep,
    hrm203_elapsed_time_assertion,
    hrm204_unbounded_await,
    hrm205_pid_literal,
    hrm206_shared_asyncio_primitive,
)
