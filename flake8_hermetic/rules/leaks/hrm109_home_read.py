"""HRM109: a read of the operator's home directory inside a function of a test file."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.environ import (
    ENV_GETTERS, ENVIRON, EXPANDUSER_CALLS, EXPANDUSER_METHODS, HOME_CALLS, home_variable,
)
from flake8_hermetic.facts.hostpins import pin_sites
from flake8_hermetic.project import requested_fixtures
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.facts.value_flow import flow_index, touches_filesystem
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


#: calls that look only at the type of their first argument
TYPE_CHECKS = frozenset({"assertIsInstance", "assertNotIsInstance", "isinstance"})


def _no_tilde(node: ast.AST | None) -> bool:
    """A literal path without ``~``: expanduser() leaves it alone."""
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    if isinstance(value, bytes):
        return not value.startswith(b"~")
    return isinstance(value, str) and not value.startswith("~")


class HomeReadRule(Rule):
    """
    Flags a read of the operator's home directory inside a function of a test file.

    ## Why is this bad?
    The home directory is the one place a test can reach the real user's
    configuration, credentials and caches. A test that resolves `~` reads
    (and often writes) the developer's own files: it passes on CI, where
    the home is empty, and behaves differently (or damages something) on a
    laptop. Flagged: `Path.home()`, `os.path.expanduser()` of a path that
    may start with `~`, `Path(...).expanduser()`, and `os.environ["HOME"]`,
    `os.getenv("HOME")`, `os.environ.get("HOME")` (also `USERPROFILE`).
    The same read at import time is HRM402.

    Not flagged when the same function pins the home on an earlier line
    (`monkeypatch.setenv("HOME", ...)`, `env["HOME"] = ...`,
    `mock.patch.dict(os.environ, {"HOME": ...})`, a patch of `Path.home`
    or `os.path.expanduser`, also as a decorator of the function or its
    class), or when an autouse fixture of a `conftest.py` above the file
    pins it for the whole tree, or the test requests (as a parameter or
    with `usefixtures`) a fixture of the project (this file, a conftest
    above it, a `pytest_plugins` module) that pins it, itself or through
    the fixtures it requests (read by the project model). Also left alone: a read whose value only
    has its type checked (`assertIsInstance(expanduser("~"), str)`), and
    a helper function (not a test or fixture) that expands a path given
    to it as a parameter, which honours its caller's (or the command
    line's) choice.

    **Self-consistent.** A read that only builds the expected value of an
    assertion, compared with what the code under test computes
    (`assert f() == os.path.expanduser("~/x")`, or `expected = Path.home() / "x"`
    then `assert result == expected`), gives the same verdict on every
    host and is left alone. Still flagged: a read compared only with a
    literal (`assertEqual(expanduser("~"), "/home/me")`), or one that
    reaches the filesystem (`open`, `exists`, `listdir`, `.read_text()`).

    ## Example
    ```python
    def test_default_config():
        (Path.home() / ".toolrc").write_text("[tool]")
        assert load_config().loaded
    ```

    ## Use instead
    ```python
    def test_default_config(tmp_path, monkeypatch):
        monkeypatch.setenv("HOME", str(tmp_path))
        (Path.home() / ".toolrc").write_text("[tool]")
        assert load_config().loaded

    # or once for the whole suite, in tests/conftest.py
    @pytest.fixture(autouse=True)
    def isolated_home(tmp_path, monkeypatch):
        monkeypatch.setenv("HOME", str(tmp_path))
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM109` (or `extend-select` in the config):
    after narrowing, 1 of its 10 findings on ten real suites was a real hazard: almost all
    were tests of home expansion itself, comparing one read of the real home with another, which
    gives the same verdict on every host
    (see docs/precision.md). In an application's own suite, where such code is rare,
    it is worth turning on.

    ## Options
    None.

    ## Known problems
    A read handed to the code under test, or a home the code under test
    reads itself, is not followed. A read compared inside an assertion with
    the result of code that opens the file (`assert load() == expanduser("~/x")`)
    is taken for a self-consistent comparison.
    """

    code = "HRM109"
    message = "{what} reads the operator's real home; pin HOME first (monkeypatch.setenv), or in an autouse conftest fixture"
    default_on = False
    calls = HOME_CALLS | EXPANDUSER_CALLS | EXPANDUSER_METHODS | ENV_GETTERS
    principles = ("self-consistent-home",)

    __slots__ = ()

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node) or ""
        if name in HOME_CALLS:
            what = "Path.home()"
        elif name in EXPANDUSER_CALLS:
            if _no_tilde(node.args[0] if node.args else None) or self._expands_a_given_path(node):
                return
            what = f"{name}()"
        elif name in EXPANDUSER_METHODS:
            path_call = node.func.value  # type: ignore[attr-defined]
            if path_call.args and all(_no_tilde(a) for a in path_call.args):
                return
            what = "Path.expanduser()"
        elif name in ENV_GETTERS:
            key = home_variable(node.args[0] if node.args else None)
            if key is None:
                return
            what = f"{name}({key!r})"
        else:
            return
        if self._exempt(node):
            return
        yield self.report(node, what=what)

    def visit_Subscript(self, node: ast.Subscript) -> Iterator[Violation]:
        if not isinstance(node.ctx, ast.Load) or self.ctx.resolve(node.value) not in ENVIRON:
            return
        key = home_variable(node.slice)
        if key is not None and not self._exempt(node):
            yield self.report(node, what=f"{self.ctx.resolve(node.value)}[{key!r}]")

    def _expands_a_given_path(self, node: ast.Call) -> bool:
        """A helper (not a test or fixture) expanding its own parameter: it
        honours a path its caller (or the command line) chose."""
        scope = self.ctx.function_scope
        argument = node.args[0] if node.args else None
        if scope is None or self.ctx.in_test or not isinstance(argument, ast.Name):
            return False
        arguments = scope.node.args  # type: ignore[attr-defined]
        return any(a.arg == argument.id for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))

    def _exempt(self, node: ast.AST) -> bool:
        if self.ctx.at_module_level:
            return True  # import time: HRM402
        parent = self.ctx.parent
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
            if last_name(parent) in TYPE_CHECKS:
                return True  # only the type of the value is looked at
        if self._self_consistent(node):
            return True
        line = getattr(node, "lineno", 0)
        for scope in self.ctx.scopes:
            if scope.kind == "module":
                continue
            if any(pin <= line for pin in self._home_pins(scope.node)):
                return True
        return self.ctx.pins.home or self.ctx.project.pins_for_test(requested_fixtures(self.ctx.scopes)).home

    def _self_consistent(self, node: ast.AST) -> bool:
        """The read only builds what an assertion compares the code's own
        result with (``assert f() == Path.home() / "x"``, also through a
        variable), reaching no file."""
        index = self.ctx.per_function(self.ctx.tree, flow_index, names=False)
        resolve = self.ctx.resolve
        return index.only_asserted(node, resolve, lambda call: touches_filesystem(call, resolve))  # type: ignore[arg-type]

    def _home_pins(self, definition: ast.AST) -> list[int]:
        return self.ctx.per_function(definition, _home_pin_lines)


def _home_pin_lines(definition: ast.AST, ctx: Context) -> list[int]:
    """The lines where a function (or a class's decorators) pins the home."""
    if isinstance(definition, ast.ClassDef):
        sites = [site for d in definition.decorator_list for site in pin_sites(d)]
    else:
        sites = list(pin_sites(definition))
    return [line for line, pins in sites if pins.home]
