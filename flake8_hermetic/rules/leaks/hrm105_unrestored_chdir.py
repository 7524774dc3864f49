"""HRM105: ``os.chdir()``/``os.fchdir()`` that nothing the reader sees changes back."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.facts.names import callee_last_name
from flake8_hermetic.project.modules import RESTORES_CWD
from flake8_hermetic.rules.leaks.cwd import CWD_FIXTURES
from flake8_hermetic.rules.leaks.undone_change import UndoneChangeRule, saved_from
from flake8_hermetic.violation import Violation


class ChdirRule(UndoneChangeRule):
    """
    Flags `os.chdir()` and `os.fchdir()` in a test file when nothing the reader sees changes back.

    ## Why is this bad?
    The working directory belongs to the process, not to the test. A test
    that changes it and fails (or forgets) before changing it back leaves
    every later test on the same worker running somewhere else: relative
    paths resolve into the wrong tree and files get written into the
    checkout. Under `pytest -n auto` the victim is a test that happened to
    be scheduled next, which makes the failure look random.

    ## Example
    ```python
    def test_build(tmp_path):
        os.chdir(tmp_path)
        build()
    ```

    ## Use instead
    ```python
    def test_build(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        build()

    def test_build_ctx(tmp_path):
        with contextlib.chdir(tmp_path):
            build()
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM105` (or `extend-select` in the
    config). On the suites held out from tuning (docs/precision.md), 0 of 1
    of its findings were hazards a maintainer would fix; a default-on rule
    must reach 80%, and the default set 90% overall: the one finding changed
    directory in a context manager's `__enter__` whose `__exit__` changes
    back. The rule needs that shape (a restoring `__exit__`), and more
    held-out findings, before it can be trusted by default.

    ## Options
    None.

    ## Known problems
    Only a change nobody visibly undoes is reported. Left alone:

    - the way back: a `chdir` to a directory saved from `os.getcwd()` or
      `Path.cwd()`, or any `chdir` in a `finally`, a teardown method,
      after a fixture's `yield`, in `__exit__`, in a `restore*()` function
      or in a local function registered as a cleanup;
    - a `chdir` inside a `try` (body or handler) whose `finally` changes
      directory, or followed by such a `try` (past the lines that save the
      old directory and plain assignments of local names);
    - one with a cleanup registered before it, or right after it, that
      changes back (`self.addCleanup(os.chdir, old)`);
    - one in `setUp` or a test method whose class (or a base class in the
      file) changes back in `tearDown` or in a cleanup its `setUp`
      registered, and the same for `setUpClass`/`tearDownClass`,
      `setup_method`/`teardown_method`, `setUpModule`/`tearDownModule`. A
      failure later in `setUp` skips `tearDown`, but the pair is the idiom
      unittest is built around;
    - one inside a `with` block (or under a decorator) whose manager is
      about the working directory (`os_helper.change_cwd()`,
      `path.as_cwd()`);
    - a test that asks for a fixture that changes back, as a parameter or
      with `@pytest.mark.usefixtures()` on it or its class: `pytester`,
      `testdir`, one named for saving the directory (`save_cwd`), or one
      of the same file that changes back after its `yield`;
    - one in a forked child (`if pid == 0:` after `os.fork()`, a
      `preexec_fn`), under `if __name__ == "__main__":`, or expected to
      fail.

    - what the test's fixture closure or a project context manager around
      the `chdir` changes back (see "What it leaves alone").

    - in a class derived from a base class of another module of the
      project whose per-test teardown (`tearDown`, `asyncTearDown`,
      `teardown_method`) changes back to the saved directory (read by the project model).

    A restore done by a fixture the test does not ask for (and that is
    not autouse), or by a fixture of a wider scope, does not count.
    """

    code = "HRM105"
    principles = ("fixture-closure",)
    default_on = False
    message = "{name}() leaks the working directory to later tests; use monkeypatch.chdir() or contextlib.chdir()"
    CHDIRS = frozenset({"os.chdir", "os.fchdir"})
    calls = CHDIRS

    CWD_READERS = frozenset({"os.getcwd", "os.getcwdb", "pathlib.Path.cwd"})
    STATE_WORDS = ("cwd", "chdir", "workdir")
    RESTORING_FIXTURES = CWD_FIXTURES
    RESTORED_STATE = "cwd"
    RESTORED_EFFECT = RESTORES_CWD

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        if name in self.CHDIRS and not self.is_restore(node) and not self.undone(node):
            yield self.report(node, name=name)

    def changes(self, node: ast.AST) -> bool:
        return any(isinstance(sub, ast.Call) and self.ctx.call_name(sub) in self.CHDIRS for sub in ast.walk(node))

    def names_state(self, node: ast.AST) -> bool:
        names = self.CHDIRS | self.CWD_READERS
        return any(
            isinstance(sub, (ast.Name, ast.Attribute)) and self.ctx.resolve(sub) in names for sub in ast.walk(node)
        )

    def restoring_manager(self, call: ast.Call) -> bool:
        """``contextlib.chdir()``, ``change_cwd()``, ``temp_cwd()``, ``p.as_cwd()``."""
        name = callee_last_name(self.ctx, call).lower()
        return "cwd" in name or "chdir" in name

    def is_restore(self, call: ast.Call) -> bool:
        """Whether the call goes back to a directory saved from the current one."""
        return bool(call.args) and saved_from(self.ctx, call.args[0], self.CWD_READERS)
