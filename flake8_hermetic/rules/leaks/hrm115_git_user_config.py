"""HRM115: a writing git command run with the operator's own git config."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.argv import ArgvReader, GitCommand, enclosing_values, parse_git, program_name
from flake8_hermetic.facts.environ import ENVIRON
from flake8_hermetic.rules.leaks.faked_spawns import faked_spawner_call
from flake8_hermetic.facts.hostpins import PINNED_VARIABLES, mapping_keys, pin_of
from flake8_hermetic.facts.processes import SPAWNER_CALLS, ChildProcess, child_words
from flake8_hermetic.facts.wrappers import SpawnWrapper
from flake8_hermetic.rules.leaks.wrapped_spawns import WrappedSpawns
from flake8_hermetic.project import requested_fixtures
from flake8_hermetic.nodes import FunctionNode
from flake8_hermetic.rules.leaks.function_facts import FunctionRule
from flake8_hermetic.violation import Violation


GIT_WRITES = frozenset({
    "commit", "tag", "merge", "rebase", "am", "cherry-pick", "revert", "pull", "fetch", "clone",
    "init", "push", "gc", "stash", "worktree", "notes", "submodule",
})


class GitUserConfigRule(WrappedSpawns, FunctionRule):
    """
    Flags a git command that writes, run by a child process with the operator's own git config.

    ## Why is this bad?
    git reads `~/.gitconfig` and the system config on every call. On a
    developer's machine that config signs commits (and waits for a GPG
    agent or a hardware key), runs hooks and templates, rewrites URLs,
    sets the default branch name and merge strategy, or points at a
    credential helper. The same test then passes on CI and hangs, fails
    or behaves differently on a laptop, and a `push` or `fetch` may reach
    a real remote with real credentials.

    Flagged: `commit`, `tag`, `merge`, `rebase`, `am`, `cherry-pick`,
    `revert`, `pull`, `fetch`, `clone`, `init`, `push`, `gc`, `stash`,
    `worktree`, `notes`, `submodule` in a literal argv, unless git gets a
    `-c` option before the subcommand or an `env=` that sets
    `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_NOSYSTEM` or `HOME`. An `env=` built
    outside the function (a parameter, a helper's result) is trusted. The
    same function pinning those variables on an earlier line, or an
    autouse fixture of a `conftest.py` above the file pinning them, or a
    fixture of the project the test requests that pins them (read by the
    project model), exempts the call. The argv is also read through names assigned
    earlier (`cmd = ["git", "commit", ...]; subprocess.run(cmd)`), and a
    wrapper of a spawner in the same file that runs the command its caller
    gives (`def run_cmd(*args): return subprocess.run(args)`, a method
    called as `self.git(...)`) is judged at each call after its
    definition, unless the wrapper pins git's config itself; so is a
    wrapper defined in another module of the test tree and imported at
    module level (`from tests.helpers import run_cmd`,
    `helpers.run_cmd(...)`), read from source by the project model.

    ## Example
    ```python
    def test_log(tmp_path):
        subprocess.run(["git", "init"], cwd=tmp_path, check=True)
        subprocess.run(["git", "commit", "--allow-empty", "-m", "x"], cwd=tmp_path, check=True)
    ```

    ## Use instead
    ```python
    def git(*args, cwd):
        env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        return subprocess.run(["git", *args], cwd=cwd, env=env, check=True)

    def test_log(tmp_path):
        git("init", cwd=tmp_path)
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "--allow-empty", "-m", "x", cwd=tmp_path)
    ```

    ## Options
    None.

    ## Known problems
    Only a command line the rule can read is judged (a literal argv, one
    assigned earlier in the function, one passed through a wrapper the project
    model reads): git run by a library (GitPython, dulwich) or by a helper
    outside the test tree is not seen. An `env=` built outside the function is
    trusted without being read, so a helper's `dict(os.environ)` with nothing
    pinned passes.
    """

    code = "HRM115"
    principles = ("faked-spawner",)
    message = "git {subcommand} runs with the operator's git config (signing, hooks, templates); set GIT_CONFIG_GLOBAL/GIT_CONFIG_NOSYSTEM in env= or use -c"
    calls = SPAWNER_CALLS

    __slots__ = ("_wrappers",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.learn_imported_wrappers()

    def wants_wrapper(self, wrapper: SpawnWrapper) -> bool:
        return not self._isolated_in_wrapper(wrapper)

    def _isolated_in_wrapper(self, wrapper: SpawnWrapper) -> bool:
        """The wrapper pins git's config itself: an isolating ``env=`` of its
        own at its spawner call, or a pin on an earlier line of its body (a
        wrapper of this file or of another module of the test tree)."""
        function = wrapper.function
        env = wrapper.spawner.keyword("env")
        parameters = {a.arg for a in (*function.args.args, *function.args.kwonlyargs)}
        if env is not None and not (isinstance(env, ast.Name) and env.id in parameters):
            return self._env_isolates(env, function)
        lines, _ = self._environment(function)
        return any(pin <= wrapper.spawner.call.lineno for pin in lines)

    def _git(self, node: ast.Call, child: ChildProcess) -> GitCommand | None:
        """The git command line, literal or read through names assigned
        earlier (``cmd = ["git", "commit", ...]; run(cmd)``)."""
        git = child.git
        if git is not None or child.command is None or isinstance(child.command, (ast.List, ast.Tuple)):
            return git
        words = child_words(child, ArgvReader(enclosing_values(self.ctx), self.ctx.resolve), node.lineno)
        if not words or not isinstance(words[0], str) or program_name(words[0]) != "git":
            return None
        return parse_git(tuple(word if isinstance(word, str) else None for word in words))

    def _judge(self, node: ast.Call, child: ChildProcess) -> Iterator[Violation]:
        if child.has_unpacked_kwargs or faked_spawner_call(self.ctx, child.name):
            return
        git = self._git(node, child)
        if git is None or git.subcommand not in GIT_WRITES or git.sets_config:
            return
        env = child.keyword("env")
        if env is not None and self._env_isolates(env):
            return
        if self._pinned_before(node) or self.ctx.pins.git_config or self._fixture_pins():
            return
        yield self.report(node, subcommand=git.subcommand)

    def _env_isolates(self, env: ast.expr, function: FunctionNode | None = None) -> bool:
        if isinstance(env, ast.Dict) or (isinstance(env, ast.Call) and self.ctx.call_name(env) == "dict"):
            return any(key in PINNED_VARIABLES for key in mapping_keys(env))
        if self.ctx.resolve(env) in ENVIRON:
            return False
        function = function or self.ctx.function
        if not isinstance(env, ast.Name) or function is None:
            # os.environ.copy(), self.env, make_env(): built elsewhere, trusted
            return self.ctx.resolve(env) not in ("os.environ.copy", "os.environ().copy")
        _, names = self._environment(function)
        return names.get(env.id, True)

    def _fixture_pins(self) -> bool:
        """A fixture the test requests, or an autouse one, pins git's config (or HOME)."""
        return self.ctx.project.pins_for_test(requested_fixtures(self.ctx.scopes)).git_config

    def _pinned_before(self, node: ast.AST) -> bool:
        line = getattr(node, "lineno", 0)
        for scope in self.ctx.scopes:
            if scope.kind == "function":
                lines, _ = self._environment(scope.node)  # type: ignore[arg-type]
                if any(pin <= line for pin in lines):
                    return True
        return False

    def _environment(self, function: FunctionNode) -> tuple[list[int], dict[str, bool]]:
        return self.ctx.per_function(function, _git_environment)


def _git_environment(function: FunctionNode, ctx: Context) -> tuple[list[int], dict[str, bool]]:
    """The lines where ``function`` pins git config in its own
    environment, and for each name it assigns whether some statement
    sets a pinning key in it."""
    pin_lines: list[int] = []
    names: dict[str, bool] = {}
    for sub in ast.walk(function):
        if isinstance(sub, ast.Assign):
            for target in sub.targets:
                if isinstance(target, ast.Name):
                    isolating = any(k in PINNED_VARIABLES for k in mapping_keys(sub.value))
                    names[target.id] = names.get(target.id, False) or isolating
        pins = pin_of(sub)
        if not pins.git_config:
            continue
        receiver = _pinned_mapping(sub)
        if receiver is None:
            pin_lines.append(getattr(sub, "lineno", 0))
        else:
            names[receiver] = True
    return pin_lines, names


def _pinned_mapping(node: ast.AST) -> str | None:
    """The local mapping a pin writes into (``env["HOME"] = h``,
    ``env.update(HOME=h)``), or None when it pins the process itself."""
    target: ast.AST | None = None
    if isinstance(node, (ast.Assign, ast.Delete)):
        target = node.targets[0]
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        target = node.target
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        target = node.func
    if isinstance(target, (ast.Subscript, ast.Attribute)) and isinstance(target.value, ast.Name):
        name = target.value.id
        return None if name in ("os", "environ", "monkeypatch", "mp", "mock", "patch") else name
    return None
