"""HRM402: the operator's home, or host state the project names, read at import time."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING

from flake8_hermetic.context import Context
from flake8_hermetic.facts.value_flow import flow_index, touches_filesystem
from flake8_hermetic.facts.environ import (
    ENV_GETTERS, ENVIRON, EXPANDUSER_CALLS, EXPANDUSER_METHODS, HOME_CALLS, home_variable,
)
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.project import Role
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.collection.import_time import collection_time
from flake8_hermetic.violation import Violation

if TYPE_CHECKING:
    from flake8_hermetic.options import RuleSettings


#: calls that read the operator's home directory
HOME_READERS = HOME_CALLS | EXPANDUSER_CALLS | EXPANDUSER_METHODS
SKIP_MARKS = frozenset({"pytest.mark.skipif", "pytest.mark.skip", "pytest.mark.xfail"})
PARAMETRIZE = "pytest.mark.parametrize"


class ImportTimeHostProbeRule(Rule):
    """
    Flags a read of the operator's home, or of host state the project names, at import time.

    Module-level statements, class bodies, decorator arguments (a
    `skipif` condition included, in its string form too) and default values
    run when pytest imports the module. There the rule reports
    `Path.home()`, `os.path.expanduser()`, `Path(...).expanduser()`,
    `os.environ["HOME"]`, `os.getenv("HOME")` / `os.environ.get("HOME")`
    (also `USERPROFILE`), and calls of the functions listed in
    `--hermetic-host-readers`, all resolved through the file's imports.

    ## Why is this bad?
    Import happens during collection, before any fixture has run, so
    nothing the suite does to isolate the host (an autouse fixture that
    pins `HOME`, a patched config loader) is in force yet. A module-level
    probe or a `skipif` condition reads the real operator's home and
    configuration: the test is skipped or configured differently on every
    developer's machine, and a probe that writes (creating a default
    config on first read) changes the operator's files.

    **Self-consistent.** A home read that only builds what assertions
    compare the code's result with is left alone: a module constant used
    only in assertions (`EXPECTED = Path.home() / "x"`, then
    `assert f() == EXPECTED`), or a value of a `parametrize` row whose
    test uses every parameter only inside assertions
    (`assert is_trusted(trust, repo) == expected`) and hands none to the
    filesystem there. Still flagged: a read that reaches the filesystem
    (`(Path.home() / ".gitconfig").exists()`, a `skipif` probe), a
    constant used anywhere else, a row whose parameter the test hands to
    code outside an assertion, and the project's own host readers.

    ## Example
    ```python
    CONFIG = Path.home() / ".myapp" / "config.toml"

    @pytest.mark.skipif(not os.path.exists(os.path.expanduser("~/.ssh")), reason="no ssh")
    def test_deploy():
        ...
    ```

    ## Use instead
    ```python
    @pytest.fixture
    def config_path(tmp_path, monkeypatch):
        monkeypatch.setenv("HOME", str(tmp_path))
        return Path.home() / ".myapp" / "config.toml"

    @pytest.fixture
    def ssh_dir(tmp_path):
        if not shutil.which("ssh"):
            pytest.skip("no ssh client")
        return tmp_path / ".ssh"
    ```

    ## Options
    `--hermetic-host-readers`: dotted names of the project's own functions
    that read host state (`myapp.config.load`), matched against the
    resolved name of each call.

    ## Known problems
    Only direct calls are seen: a module-level call of a local helper that
    reads the home inside is not followed. A parametrized home path that
    the code under test opens inside an assertion (`assert load(path)`) is
    taken for a compared value and missed.
    """

    code = "HRM402"
    # collected test modules only: a support module is imported by the runner only through a test
    # (child scripts, sample modules and __main__ scripts never are), a conftest is setup code
    roles = frozenset({Role.TEST_MODULE})
    principles = ("self-consistent-home",)
    message = "{name} reads the host at import time, before any fixture can pin it; probe inside a fixture"
    calls = HOME_READERS | ENV_GETTERS | SKIP_MARKS
    options = (
        OptionSpec(
            "host-readers", "list", (),
            "Comma-separated dotted names of project functions that read host "
            "state, flagged when called at import time (HRM402).",
            convert=frozenset,
        ),
    )

    @classmethod
    def wanted_calls(cls, settings: RuleSettings) -> frozenset[str] | None:
        return (cls.calls or frozenset()) | settings.option("host-readers")  # the project's own probes too

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.timing = collection_time(ctx)
        self.readers = HOME_READERS | ctx.settings.option("host-readers")

    def _reads_host(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Call):
            name = self.ctx.call_name(node)
            if name in self.readers:
                return f"{name}()"
            if name in ENV_GETTERS and node.args and home_variable(node.args[0]) is not None:
                return f"{name}({node.args[0].value!r})"  # type: ignore[attr-defined]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if self.ctx.resolve(node.value) in ENVIRON and home_variable(node.slice) is not None:
                return f"os.environ[{node.slice.value!r}]"  # type: ignore[attr-defined]
        return None

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self._reads_host(node)
        if name is None:
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                yield from self._string_condition(node)
            return
        if self.timing.import_time(node) and not self._self_consistent(node):
            yield dataclasses.replace(self.report(node, name=name), where=self.ctx.where_of(node))

    def _self_consistent(self, node: ast.expr) -> bool:
        """A home read (not one of the project's host readers) that only builds
        what assertions compare the code's result with: a module constant
        used only in assertions, or a value of a ``parametrize`` row whose
        test uses its parameters only in assertions, reaching no file."""
        if isinstance(node, ast.Call) and self.ctx.call_name(node) not in HOME_READERS | ENV_GETTERS:
            return False
        index = self.ctx.per_function(self.ctx.tree, flow_index, names=False)
        resolve = self.ctx.resolve

        def host(call: ast.Call) -> bool:
            return touches_filesystem(call, resolve)

        if index.only_asserted(node, resolve, host):
            return True
        parametrize = index.reaches_call(node, resolve, lambda call: resolve(call.func) == PARAMETRIZE)
        test = self.ctx.decorated(node)
        if parametrize is None or test is None or isinstance(test, ast.ClassDef) or not parametrize.args:
            return False
        names = _argnames(parametrize.args[0])
        return bool(names) and all(index.parameter_only_asserted(test, name, resolve, host) for name in names)

    def visit_Subscript(self, node: ast.Subscript) -> Iterator[Violation]:
        name = self._reads_host(node)
        if name is not None and self.timing.import_time(node) and not self._self_consistent(node):
            yield dataclasses.replace(self.report(node, name=name), where=self.ctx.where_of(node))

    def _string_condition(self, node: ast.Call) -> Iterator[Violation]:
        """``skipif("os.path.expanduser('~') ...")``: pytest evaluates the string at collection."""
        if self.ctx.call_name(node) not in SKIP_MARKS or not self.timing.import_time(node):
            return
        condition = node.args[0]
        try:
            parsed = ast.parse(condition.value, mode="eval")  # type: ignore[attr-defined]
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return
        for inner in ast.walk(parsed):
            name = self._reads_host(inner)
            if name is not None:
                yield dataclasses.replace(self.report(condition, name=name), where=self.ctx.where_of(node))
                return


def _argnames(node: ast.expr) -> list[str]:
    """``parametrize``'s names: ``"a, b"`` or ``("a", "b")``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [name.strip() for name in node.value.split(",") if name.strip()]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []
