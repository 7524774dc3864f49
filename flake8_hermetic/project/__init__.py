"""The project model: what a file's neighbours tell the rules.

A rule sees one file; pytest runs it with its conftests, its plugins, its
helpers and its configuration. This package reads those from source (never
importing or running project code) and answers, for the linted file, through
``ctx.project`` (a :class:`~flake8_hermetic.project.model.ProjectView`):

- ``role``: :class:`Role` of the file (a collected test module, a conftest,
  a support module of the test tree, or not test code), from pytest's
  ``python_files``, ``testpaths`` and ``norecursedirs`` (``config``);
- ``fixture(name)``, ``fixture_effects(name)``, ``autouse_fixtures()``,
  ``effects_for_test(requested)``: the fixtures visible to the file (its
  own, the conftest chain's, the ``pytest_plugins`` modules'), with scope,
  autouse and effects (``modules.CHANGES_CWD``, ``RESTORES_CWD``,
  ``RESTORES_ENV``, ``SETS_ENV``, ``PINS_HOME``, ``PINS_GIT``);
- ``pins`` (home and git config pinned by the conftest chain),
  ``pins_for_test(requested)`` (also by the fixtures a test requests, see
  :func:`requested_fixtures`, or that are autouse) and
  ``temp_redirected`` (a conftest points the temp dir at a per-run
  directory it removes);
- ``is_asserting_helper(dotted)``, ``is_asserting_method(cls, name)``,
  ``fixture_method_asserts(fixture, method)``: a helper that asserts, raises
  or fails the test, itself or through the helpers it calls;
- ``wrapper_kind(dotted)``: ``"spawn"``, ``"sleep"`` or ``"temp"`` for a
  project function that hands its arguments to such a call.
- ``spawn_wrappers()``: the spawner wrappers of other modules of the test
  tree the file imports, by canonical call name, as the
  :class:`~flake8_hermetic.facts.wrappers.SpawnWrapper` a wrapper of the
  file itself is (def node and spawner call read from source, once per
  process), for HRM106 and HRM115.

The facts layer's level: rules import it; it imports the core and the facts.
"""

from __future__ import annotations

from flake8_hermetic.project.model import Project, ProjectView
from flake8_hermetic.project.requests import enclosing_class, requested_fixtures
from flake8_hermetic.project.roles import TEST_CODE, Role

__all__ = ["TEST_CODE", "Project", "ProjectView", "Role", "current", "enclosing_class", "new_run", "requested_fixtures"]

_current: Project | None = None


def new_run() -> Project:
    """A fresh model for a new flake8 run (parsed modules stay cached by their stamp)."""
    global _current
    _current = Project()
    return _current


def current() -> Project:
    """The model of the current run."""
    return _current if _current is not None else new_run()
