"""HRM1xx: side effects that outlive the test.

One module per rule (``hrmNNN_<what it flags>.py``); the machinery several
rules share sits beside them: ``function_facts`` (where a call's result goes
and what the function does with it), ``undone_change`` (the base of HRM105
and HRM107), ``cwd``, ``lifecycle``, ``flow``, ``syntax``, ``temp_paths``. Importing
this package registers its rules.
"""

from flake8_hermetic.rules.leaks import (  # noqa: F401  (importing a rule module registers its rule)
    hrm101_temp_without_cleanup,
    hrm102_removal_in_teardown,
    hrm103_rmtree_ignore_errors,
    hrm104_monkeypatch_undo,
    hrm105_unrestored_chdir,
    hrm106_child_without_cwd,
    hrm107_raw_environ_mutation,
    hrm108_shared_temp_path,
    hrm109_home_read,
    hrm110_fixed_port,
    hrm111_lifecycle_stub,
    hrm112_unjoined_thread,
    hrm113_unwaited_popen,
    hrm114_detached_task,
    hrm115_git_user_config,
)
