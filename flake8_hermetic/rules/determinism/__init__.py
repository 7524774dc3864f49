"""HRM2xx: verdicts that change from run to run.

One module per rule; importing the package registers them. Shared by the
family: ``clock`` (which values are clock readings or durations, HRM201-203),
``deadlines`` (whether a wait is bounded, HRM201, HRM202, HRM204),
``signals`` (what a coroutine awaits, HRM204), ``handed_callables`` (code
handed to a thread or pool, HRM201), ``sleeps`` (a sleep's duration) and
``trees`` (small tree walks).
"""

from flake8_hermetic.rules.determinism import (  # noqa: F401  (importing a rule module registers it)
    hrm201_fixed_sleep,
    hrm202_fixed_async_sleep,
    hrm203_elapsed_time_assertion,
    hrm204_unbounded_await,
    hrm205_pid_literal,
    hrm206_shared_asyncio_primitive,
)
