"""The runtime guard: a pytest plugin that catches the leaks syntax cannot see.

``plugin`` is the ``pytest11`` entry point (options only until the guard is
turned on); ``session`` holds the hooks; ``watches`` what is watched, one
class per kind; ``monitor`` the expected state and the judgement of a test;
``verdict`` the baseline decision and the reports; ``codes`` the ``HRM6xx``
codes and their pages.
"""
