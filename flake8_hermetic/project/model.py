"""The project model: cross-file facts of the test tree, read lazily.

One :class:`Project` per flake8 run (the plugin makes a new one in
``parse_options``); the modules it parses are kept for the process, keyed
by path and checked against the file's size and modification time once
per run, so a language server that lints one buffer after another still
sees a conftest edit. Directories are visited only when a file below them
is linted, and a module is parsed only when a rule asks about it.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from flake8_hermetic.facts.hostpins import NO_PINS, Pins
from flake8_hermetic.facts.processes import child_process
from flake8_hermetic.facts.wrappers import SpawnWrapper, wrapper_of
from flake8_hermetic.imports import module_imports
from flake8_hermetic.nodes import DEF_TYPES
from flake8_hermetic.project.config import ConfigFinder, PytestConfig
from flake8_hermetic.project.modules import (
    CHANGES_CWD, FAILING_CALLS, PER_TEST_TEARDOWNS, PINS_GIT, PINS_HOME, RESTORES_CWD, RESTORES_ENV, Fixture,
    Function, ModuleFacts, own_walk, plugins_of, read_classes,
    read_fixtures, read_module, resolve_with,
)
from flake8_hermetic.project.roles import Role, RoleFinder, defines_test_cases, matches_python_files

MAX_DEPTH = 12  # helper chains followed across modules
#: what a helper's or a context manager's ``__exit__``'s write of the state means in teardown position
TEARDOWN_RESTORES = {"cwd": frozenset({RESTORES_CWD}), "env": frozenset({RESTORES_ENV})}
#: base classes whose methods are known: the object protocol and unittest's
KNOWN_BASES = frozenset({"object", "Exception", "TestCase", "IsolatedAsyncioTestCase"})


@dataclass
class _Cached:
    stamp: tuple[int, int]
    facts: ModuleFacts | None


#: path -> facts, for the process (checked against the file's stamp once per run)
_MODULES: dict[str, _Cached] = {}
#: path -> (stamp, its module-level spawner wrappers by name), for the process
_WRAPPERS: dict[str, tuple[tuple[int, int], dict[str, SpawnWrapper]]] = {}


def read_spawn_wrappers(tree: ast.Module) -> dict[str, SpawnWrapper]:
    """The module-level functions of ``tree`` that run the command their
    caller gives (see :func:`~flake8_hermetic.facts.wrappers.wrapper_of`),
    by name: their spawner call read through the module's own imports."""
    aliases = module_imports(tree)
    found: dict[str, SpawnWrapper] = {}
    for stmt in tree.body:
        if not isinstance(stmt, DEF_TYPES) or stmt.name in found:
            continue
        calls = sorted((n for n in own_walk(stmt) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            child = child_process(call, resolve_with(aliases, call.func))
            wrapper = wrapper_of(stmt, child, stmt.name) if child is not None else None
            if wrapper is not None:
                found[stmt.name] = wrapper
                break
    return found


def normal_path(path: str) -> str:
    """An absolute path; an editor's Windows separators count as separators everywhere."""
    return os.path.abspath(path.replace("\\", "/"))


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


class Project:
    """The model of every project the run's files belong to."""

    def __init__(self) -> None:
        self.configs = ConfigFinder()
        self.roles = RoleFinder()
        self._checked: dict[str, ModuleFacts | None] = {}
        self._module_paths: dict[tuple[str, str], str | None] = {}
        self._asserting: dict[tuple[str, str], bool] = {}
        self._in_tree: dict[str, bool] = {}
        self._managed: dict[tuple[str, str], frozenset[str]] = {}

    # -- files -----------------------------------------------------------------
    def module(self, path: str) -> ModuleFacts | None:
        """The facts of the module at ``path`` (None: unreadable or not Python)."""
        path = os.path.abspath(path)
        if path in self._checked:
            return self._checked[path]
        stamp = _stamp(path)
        cached = _MODULES.get(path)
        if stamp is None:
            facts = None
        elif cached is not None and cached.stamp == stamp:
            facts = cached.facts
        else:
            try:
                with open(path, "rb") as handle:
                    tree = ast.parse(handle.read(), filename=path)
                facts = read_module(path, tree)
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # a file too deep to parse
                facts = None
            _MODULES[path] = _Cached(stamp, facts)
        self._checked[path] = facts
        return facts

    def spawn_wrapper(self, path: str, name: str) -> SpawnWrapper | None:
        """The module-level function ``name`` of the module at ``path`` as a
        spawner wrapper (its def node and spawner call, from source), read
        once per process and file version; None when it is none."""
        stamp = _stamp(path)
        if stamp is None:
            return None
        cached = _WRAPPERS.get(path)
        if cached is None or cached[0] != stamp:
            try:
                with open(path, "rb") as handle:
                    tree = ast.parse(handle.read(), filename=path)
                wrappers = read_spawn_wrappers(tree)
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # a file too deep to parse
                wrappers = {}
            cached = _WRAPPERS[path] = (stamp, wrappers)
        return cached[1].get(name)

    def config(self, path: str) -> PytestConfig:
        return self.configs.for_directory(os.path.dirname(os.path.abspath(path)))

    def role(self, path: str, tree: ast.Module | None = None) -> Role:
        """The file's role; with its tree, a support module of ``TestCase``
        classes is a test module (its cases run where it is imported)."""
        path = normal_path(path)
        config = self.config(path)
        problems = self.configs.take_problems()
        if problems:
            raise problems[0]  # once: the directory now counts as having pytest's defaults
        role = self.roles.role(path, config)
        if role is Role.SUPPORT and tree is not None and defines_test_cases(tree):
            return Role.TEST_MODULE
        return role

    def in_test_tree(self, path: str) -> bool:
        """The module is test code (a test module, conftest or support module), not the code under test."""
        known = self._in_tree.get(path)
        if known is None:
            known = self._in_tree[path] = self.roles.role(path, self.config(path)) is not Role.NOT_TEST
        return known

    def conftests(self, path: str) -> list[str]:
        """The conftest files pytest loads for ``path``, from the top down."""
        path = os.path.abspath(path)
        directory = os.path.dirname(path)
        config = self.config(path)
        top = self.roles.base_of(directory, config)
        found = []
        while True:
            if "conftest.py" in self.roles.listing(directory):
                candidate = os.path.join(directory, "conftest.py")
                if candidate != path:
                    found.append(candidate)
            parent = os.path.dirname(directory)
            if directory == top or parent == directory:
                break
            directory = parent
        found.reverse()
        return found

    # -- modules by name ---------------------------------------------------------
    def find_module(self, name: str, importer: str) -> str | None:
        """The file of module ``name`` imported from the file ``importer``:
        relative names from its package, absolute ones from the directory
        above its top package, its rootdir, or the rootdir's ``src``."""
        key = (name, os.path.dirname(importer))
        if key in self._module_paths:
            return self._module_paths[key]
        found = None
        level = len(name) - len(name.lstrip("."))
        parts = [p for p in name.lstrip(".").split(".") if p]
        if level:
            base = os.path.dirname(os.path.abspath(importer))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            found = self._module_file(base, parts)
        else:
            for base in self._import_bases(importer):
                found = self._module_file(base, parts)
                if found:
                    break
        self._module_paths[key] = found
        return found

    def _import_bases(self, importer: str) -> list[str]:
        directory = os.path.dirname(os.path.abspath(importer))
        top = directory
        while "__init__.py" in self.roles.listing(top) and os.path.dirname(top) != top:
            top = os.path.dirname(top)
        bases = [top]
        rootdir = self.config(importer).rootdir or self.roles.project_root(directory)
        if rootdir:
            bases += [rootdir, os.path.join(rootdir, "src")]
        return bases

    def _module_file(self, base: str, parts: list[str]) -> str | None:
        if not parts:
            candidate = os.path.join(base, "__init__.py")
            return candidate if os.path.isfile(candidate) else None
        directory = os.path.join(base, *parts[:-1])
        names = self.roles.listing(directory)
        if parts[-1] + ".py" in names:
            return os.path.join(directory, parts[-1] + ".py")
        if parts[-1] in names and "__init__.py" in self.roles.listing(os.path.join(directory, parts[-1])):
            return os.path.join(directory, parts[-1], "__init__.py")
        return None

    def test_module(self, path: str | None) -> ModuleFacts | None:
        """The facts of a module of the test tree; None for any other file
        (the code under test, the standard library: never parsed)."""
        return self.module(path) if path and self.in_test_tree(path) else None

    def locate(self, dotted: str, importer: str) -> tuple[ModuleFacts, str] | None:
        """The module of the test tree and the qualname (``f`` or
        ``Class.method``) a dotted reference names, trying the longest module
        prefix first."""
        parts = dotted.split(".")
        leading = len(dotted) - len(dotted.lstrip("."))
        for split in range(len(parts) - 1, 0, -1):
            module_name, rest = ".".join(parts[:split]), parts[split:]
            if len(rest) > 2 or (leading and split <= leading):
                continue
            facts = self.test_module(self.find_module(module_name, importer))
            if facts is not None:
                return facts, ".".join(rest)
        return None

    # -- helpers -----------------------------------------------------------------
    def function(self, module: ModuleFacts, qualname: str, depth: int = 0) -> tuple[ModuleFacts, Function] | None:
        """A function or method of ``module``; a method missing from its class
        is looked up in the class's bases, local or imported."""
        found = module.functions.get(qualname)
        if found is not None:
            return module, found
        owner, dot, method = qualname.partition(".")
        if not dot or depth > MAX_DEPTH:
            return None
        for base in module.classes.get(owner, ()):
            if base in module.classes:
                hit = self.function(module, f"{base}.{method}", depth + 1)
            else:
                located = self.locate(base, module.path)
                hit = self.function(located[0], f"{located[1]}.{method}", depth + 1) if located else None
            if hit is not None:
                return hit
        return None

    def class_chain(self, module: ModuleFacts, class_name: str, depth: int = 0) -> Iterator[tuple[ModuleFacts, str]]:
        """The class, then each base the model can read, depth first: a base
        of the same module, or one imported from the project (unittest's
        and the builtins' bases are not walked)."""
        if depth > MAX_DEPTH:
            return
        yield module, class_name
        for base in module.classes.get(class_name, ()):
            if base in module.classes:
                yield from self.class_chain(module, base, depth + 1)
            elif not base.startswith("unittest.") and base not in KNOWN_BASES:
                located = self.locate(base, module.path)
                if located is not None:
                    yield from self.class_chain(located[0], located[1], depth + 1)

    def unread_base(self, module: ModuleFacts, class_name: str, depth: int = 0) -> bool:
        """Whether the class, or a class it derives from, has a base the
        model cannot read: neither the project's nor the standard library's
        ``unittest`` (a third-party test framework's base class)."""
        if depth > MAX_DEPTH:
            return False
        for base in module.classes.get(class_name, ()):
            if base in module.classes:
                if self.unread_base(module, base, depth + 1):
                    return True
                continue
            if base in KNOWN_BASES or base.startswith("unittest."):
                continue
            located = self.locate(base, module.path)
            if located is None or located[1] not in located[0].classes:
                return True
            if self.unread_base(located[0], located[1], depth + 1):
                return True
        return False

    def asserts(self, module: ModuleFacts, qualname: str, depth: int = 0) -> bool:
        """Whether the helper asserts, raises or fails the test, itself or
        through a helper it calls (a fixpoint over the call graph, memoised;
        a cycle counts as not asserting)."""
        key = (module.path, qualname)
        known = self._asserting.get(key)
        if known is not None:
            return known
        self._asserting[key] = False  # in progress: a cycle ends here
        hit = self.function(module, qualname)
        result = False
        # only the test tree's helpers check: the code under test raising is the workload, not a check
        if hit is not None and depth <= MAX_DEPTH and self.in_test_tree(hit[0].path):
            owner_module, function = hit
            owner = function.qualname.partition(".")[0] if "." in function.qualname else None
            result = function.asserts or any(
                self._callee_asserts(owner_module, owner, kind, name, depth) for kind, name in function.callees
            )
        self._asserting[key] = result
        return result

    def _callee_asserts(self, module: ModuleFacts, owner: str | None, kind: str, name: str, depth: int) -> bool:
        if kind == "self":
            return owner is not None and self.asserts(module, f"{owner}.{name}", depth + 1)
        if kind == "local":
            return name in module.functions and self.asserts(module, name, depth + 1)
        located = self.locate(name, module.path)
        return located is not None and self.asserts(located[0], located[1], depth + 1)

    def view(self, path: str, tree: ast.Module) -> ProjectView:
        return ProjectView(self, path, tree)

    # -- what a fixture's managers and teardown helpers do -------------------------
    def reference(self, module: ModuleFacts, dotted: str) -> tuple[ModuleFacts, str] | None:
        """The module and qualname a name used in ``module`` refers to: one of its
        own functions or classes, or one of the test tree's, through its imports."""
        if dotted.partition(".")[0] in module.functions or dotted.partition(".")[0] in module.classes:
            return module, dotted
        return self.locate(dotted, module.path)

    def fixture_effects(self, module: ModuleFacts | None, fixture: Fixture, depth: int = 0) -> frozenset[str]:
        """``fixture``'s own effects, those of the project's context managers its
        ``yield`` runs inside and of the project helpers its teardown calls (a
        write of the state there is the way back)."""
        effects = fixture.effects
        if module is None or depth > MAX_DEPTH or not (fixture.managers or fixture.finalizers):
            return effects
        for name in fixture.managers:
            effects = effects | self.manager_effects(module, name, depth + 1)
        for name in fixture.finalizers:
            hit = self.reference(module, name)
            function = self.function(*hit) if hit is not None else None
            for state in function[1].touches if function is not None else ():
                effects = effects | TEARDOWN_RESTORES.get(state, frozenset())
        return effects

    def manager_effects(self, module: ModuleFacts, name: str, depth: int = 0) -> frozenset[str]:
        """What ``with name(...):`` does around its block, for a manager of the
        project: a ``@contextmanager`` that restores the state after its
        ``yield``, or a class whose ``__exit__`` writes it back (memoised; a
        cycle adds nothing)."""
        hit = self.reference(module, name)
        if hit is None or depth > MAX_DEPTH:
            return frozenset()
        owner, qualname = hit
        key = (owner.path, qualname)
        known = self._managed.get(key)
        if known is not None:
            return known
        self._managed[key] = frozenset()
        effects: frozenset[str] = frozenset()
        if qualname in owner.classes:
            for method in ("__exit__", "__aexit__"):
                exit_hit = self.function(owner, f"{qualname}.{method}")
                for state in exit_hit[1].touches if exit_hit is not None else ():
                    effects = effects | TEARDOWN_RESTORES[state] | ({CHANGES_CWD} if state == "cwd" else set())
        else:
            function = self.function(owner, qualname)
            if function is not None and function[1].manager is not None:
                effects = self.fixture_effects(function[0], function[1].manager, depth)
        self._managed[key] = effects
        return effects


class ProjectView:
    """The model as one linted file sees it (``ctx.project``).

    Every answer is computed on first use: a file whose rules ask nothing
    costs nothing beyond its role.
    """

    def __init__(self, project: Project, path: str, tree: ast.Module) -> None:
        self.project = project
        self.path = normal_path(path)
        self.tree = tree
        self._own: ModuleFacts | None = None
        self._tops: set[str] | None = None
        self._own_fixtures: dict[str, Fixture] | None = None
        self._classes: ModuleFacts | None = None
        self._fixtures: dict[str, Fixture] | None = None
        #: name -> every definition this file sees, nearest first (an override requests the next one)
        self._definitions: dict[str, list[Fixture]] = {}
        self._effects: dict[int, frozenset[str]] = {}  # by id: the fixtures live as long as the run's modules
        self._spawn_wrappers: dict[str, SpawnWrapper] | None = None

    @property
    def role(self) -> Role:
        return self.project.role(self.path, self.tree)

    @property
    def collects_functions(self) -> bool:
        """pytest collects this module's ``test*`` functions: its name
        matches ``python_files`` (a library of ``TestCase`` classes that
        only counts as a test module for its classes does not)."""
        return matches_python_files(self.path, self.project.config(self.path).python_files)

    @property
    def test_timeout(self) -> float | None:
        """pytest-timeout's per-test bound configured for this file's rootdir, in seconds (None: none)."""
        return self.project.config(self.path).timeout

    def in_project(self, dotted: str, importer: str) -> bool:
        """Whether the object ``dotted`` names (as imported by the file
        ``importer``) is one of the project's own: a module of the project
        (found beside the importer's package, at the rootdir or in its
        ``src``; not the standard library, not an installed one), or a name
        that module defines rather than imports (``utils.DEFAULTS`` is the
        project's; ``utils.time``, the module it imported, is not)."""
        stripped = dotted.lstrip(".")
        dots = dotted[: len(dotted) - len(stripped)]
        parts = stripped.split(".") if stripped else []
        for cut in range(len(parts), -1 if dots else 0, -1):
            path = self.project.find_module(dots + ".".join(parts[:cut]), importer)
            if path is None:
                continue
            rest = parts[cut:]
            if not rest:
                return True
            if len(rest) > 1:
                return False
            facts = self.project.module(path)
            return facts is not None and rest[0] not in facts.aliases
        return False

    @property
    def own(self) -> ModuleFacts:
        """The facts of the linted module itself (from its tree, not the disk:
        an editor's buffer may be newer)."""
        if self._own is None:
            self._own = read_module(self.path, self.tree)
        return self._own

    @property
    def own_fixtures(self) -> dict[str, Fixture]:
        """The module-level fixtures of the linted module (its own fixtures
        only: cheaper than reading all of it)."""
        if self._own is not None:
            return self._own.fixtures
        if self._own_fixtures is None:
            self._own_fixtures = read_fixtures(self.path, self.tree)
        return self._own_fixtures

    @property
    def own_classes(self) -> ModuleFacts:
        """The linted module's classes (bases, class fixtures) without its
        functions: what the questions about a test class's bases need. Its
        ``path`` is marked so the helpers' memo never mistakes it for the
        module read in full."""
        if self._classes is None:
            self._classes = read_classes(self.path + "::classes", self.tree)
        return self._classes

    @property
    def own_plugins(self) -> tuple[str, ...]:
        return plugins_of(self.tree)

    def conftest_modules(self) -> list[ModuleFacts]:
        found = [self.project.module(p) for p in self.project.conftests(self.path)]
        return [facts for facts in found if facts is not None]

    def _plugin_modules(self, modules: list[ModuleFacts]) -> list[ModuleFacts]:
        """The ``pytest_plugins`` modules ``modules`` name, and those these name in turn."""
        found: list[ModuleFacts] = []
        seen = {module.path for module in modules}
        pending = list(modules)
        while pending:
            module = pending.pop(0)
            for name in module.pytest_plugins:
                path = self.project.find_module(name, module.path)
                facts = self.project.module(path) if path else None
                if facts is not None and facts.path not in seen:
                    seen.add(facts.path)
                    found.append(facts)
                    pending.append(facts)
        return found

    # -- fixtures ----------------------------------------------------------------
    def fixtures(self) -> dict[str, Fixture]:
        """The fixtures this file sees by name: its own first, then the
        nearest conftest's, then those of the ``pytest_plugins`` modules."""
        if self._fixtures is None:
            chain = self.conftest_modules()
            definitions: dict[str, list[Fixture]] = {}
            for name, fixture in self.own_fixtures.items():
                definitions[name] = [fixture]
            own_plugins = [self.project.module(p) for p in (
                self.project.find_module(name, self.path) for name in self.own_plugins) if p]
            for module in [*reversed(chain), *self._plugin_modules([*chain, *filter(None, own_plugins)]),
                           *filter(None, own_plugins)]:
                for name, fixture in module.fixtures.items():
                    if fixture not in definitions.setdefault(name, []):
                        definitions[name].append(fixture)
            self._definitions = definitions
            self._fixtures = {name: found[0] for name, found in definitions.items()}
        return self._fixtures

    def fixture(self, name: str) -> Fixture | None:
        """The fixture named ``name`` visible to this file, if the project defines it."""
        return self.fixtures().get(name)

    def requested_by(self, fixture: Fixture, name: str) -> Fixture | None:
        """The fixture ``fixture`` gets for its parameter ``name``: the one
        this file sees, or, for a parameter of its own name (an override
        that extends the fixture above it), the next definition further up."""
        self.fixtures()
        found = self._definitions.get(name, [])
        if name == fixture.name and fixture in found:
            index = found.index(fixture) + 1
            return found[index] if index < len(found) else None
        return found[0] if found else None

    def _module_of(self, fixture: Fixture) -> ModuleFacts | None:
        return self.own if fixture.path.partition("::")[0] == self.path else self.project.module(fixture.path)

    def effects_of(self, fixture: Fixture) -> frozenset[str]:
        """What a fixture does for a test: its own effects (with the project's
        managers and teardown helpers it calls) and those of the
        function-scoped fixtures it requests, transitively (a cycle adds nothing)."""
        known = self._effects.get(id(fixture))
        if known is not None:
            return known
        self._effects[id(fixture)] = frozenset()  # a cycle adds nothing
        effects = self.project.fixture_effects(self._module_of(fixture), fixture)
        for requested in fixture.requests:
            inner = self.requested_by(fixture, requested)
            if inner is not None and inner.scope == "function":
                effects = effects | self.effects_of(inner)
        self._effects[id(fixture)] = effects
        return effects

    def fixture_effects(self, name: str) -> frozenset[str]:
        """What requesting ``name`` does for a test (:meth:`effects_of`)."""
        fixture = self.fixture(name)
        return self.effects_of(fixture) if fixture is not None else frozenset()

    def closure(self, requested: list[str] | tuple[str, ...], class_name: str | None = None) -> list[str]:
        """Every fixture name a test that requests ``requested`` gets, as
        pytest computes it: those, the autouse fixtures in force (the
        module's, the conftest chain's, the plugins', its class's and its
        bases'), and what each requests in turn, at any depth; names the
        project does not define (``pytester``) are listed but not followed."""
        return list(dict.fromkeys(name for name, _ in self.closure_fixtures(requested, class_name)))

    def closure_fixtures(
        self, requested: Sequence[str], class_name: str | None = None,
    ) -> list[tuple[str, Fixture | None]]:
        """:meth:`closure` with each name's definition (None for a name the project does not define), each once."""
        found: list[tuple[str, Fixture | None]] = []
        seen: set[int] = set()
        pending = self._roots(requested, class_name)
        while pending:
            name, fixture = pending.pop(0)
            if fixture is None:
                if (name, None) not in found:
                    found.append((name, None))
                continue
            if id(fixture) in seen:
                continue
            seen.add(id(fixture))
            found.append((name, fixture))
            pending.extend((inner, self.requested_by(fixture, inner)) for inner in fixture.requests)
        return found

    def _roots(self, requested: Sequence[str], class_name: str | None) -> list[tuple[str, Fixture | None]]:
        """The requested fixtures (the test's class's or its bases' first), then the autouse ones."""
        in_class: dict[str, Fixture] = {}
        requested = list(requested)
        for index, (module, name) in enumerate(self.project.class_chain(self.own_classes, class_name or "")):
            in_class = {**module.class_fixtures.get(name, {}), **in_class}
            if index:  # a base class's marks are inherited (the test's class's own are in ``requested``)
                requested += module.class_marks.get(name, ())
        roots: list[tuple[str, Fixture | None]] = [(n, in_class.get(n) or self.fixture(n)) for n in requested]
        roots += [(f.name, f) for f in self.autouse_fixtures()]
        roots += [(f.name, f) for f in in_class.values() if f.autouse]
        return roots

    def autouse_fixtures(self) -> list[Fixture]:
        """The module-level autouse fixtures in force for this file's tests."""
        return [fixture for fixture in self.fixtures().values() if fixture.autouse]

    def class_autouse(self, class_name: str) -> list[Fixture]:
        """The autouse fixtures defined in a class of this file and in its
        bases (of this file or imported from the project)."""
        return [
            fixture
            for module, name in self.project.class_chain(self.own_classes, class_name)
            for fixture in module.class_fixtures.get(name, {}).values()
            if fixture.autouse
        ]

    def teardown_restores(self, class_name: str) -> frozenset[str]:
        """The state ("cwd", "env") that a per-test teardown (``tearDown``,
        ``asyncTearDown``, ``teardown_method``) of a base class in another
        module of the project writes back after every test of this file's
        class ``class_name`` (``TempdirManager.tearDown``:
        ``os.chdir(self._olddir)``). The file's own classes are the rules'."""
        touched: set[str] = set()
        for module, name in self.project.class_chain(self.own_classes, class_name):
            if module is self.own_classes:
                continue
            for method in PER_TEST_TEARDOWNS:
                function = module.functions.get(f"{name}.{method}")
                if function is not None:
                    touched.update(function.touches)
        return frozenset(touched)

    def effects_for_test(self, requested: list[str] | tuple[str, ...], class_name: str | None = None) -> frozenset[str]:
        """What happens around a test that requests ``requested`` (its
        parameters and ``usefixtures`` names), in the class ``class_name``
        of this file if any: those fixtures' effects and the autouse
        fixtures' (the module's, the conftest chain's, the plugins', the
        class's and its bases'), counted only for function scope (a wider
        fixture restores after many tests, not after this one)."""
        effects: frozenset[str] = frozenset()
        for _, fixture in self._roots(requested, class_name):
            if fixture is not None and fixture.scope == "function":
                effects = effects | self.effects_of(fixture)
        return effects

    def manager_effects(self, dotted: str) -> frozenset[str]:
        """What ``with dotted(...):`` (canonical name) in this file does around its
        block, for a context manager of this file or of the test tree (see
        :meth:`Project.manager_effects`)."""
        if dotted.partition(".")[0] in self._top_names:
            return self.project.manager_effects(self.own, dotted)
        located = self.project.locate(dotted, self.path)
        return self.project.manager_effects(located[0], located[1]) if located else frozenset()

    def pins_for_test(self, requested: list[str] | tuple[str, ...]) -> Pins:
        """The conftest chain's pins, and those of the fixtures the test
        requests or that are autouse, of any scope (a pin holds for as long
        as the fixture lives, and it isolates every test under it)."""
        pins = self.pins
        for name in [*requested, *(f.name for f in self.autouse_fixtures())]:
            effects = self.fixture_effects(name)
            if PINS_HOME in effects or PINS_GIT in effects:
                pins = pins | Pins(home=PINS_HOME in effects, git_config=PINS_GIT in effects or PINS_HOME in effects)
        return pins

    # -- the tree above ------------------------------------------------------------
    @property
    def pins(self) -> Pins:
        """What the conftest chain pins for this file (home, git config)."""
        pins = NO_PINS
        for module in self.conftest_modules():
            pins = pins | module.pins
        return pins

    @property
    def temp_redirected(self) -> bool:
        """A conftest above points the temp dir at a per-run directory it removes."""
        return any(module.redirects_temp for module in self.conftest_modules())

    # -- helpers and wrappers ------------------------------------------------------
    @property
    def _top_names(self) -> set[str]:
        """The names the module's own top-level defs and classes bind (no walk)."""
        if self._tops is None:
            defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            self._tops = {stmt.name for stmt in self.tree.body if isinstance(stmt, defs)}
        return self._tops

    def _resolved(self, dotted: str) -> tuple[ModuleFacts, str] | None:
        # the module itself is read only when the name is one of its own defs
        if dotted.partition(".")[0] in self._top_names:
            return self.own, dotted
        return self.project.locate(dotted, self.path)

    def reexported(self, dotted: str) -> str | None:
        """The canonical name of something a project module re-exports:
        ``.pytest.fail`` after ``from . import pytest``, where the package's
        ``__init__`` did ``import pytest``, is ``pytest.fail``; None when
        no project module re-exports the name."""
        leading = len(dotted) - len(dotted.lstrip("."))
        names = dotted[leading:].split(".")
        for split in range(len(names) - 1, -1, -1):
            if split == 0 and not leading:
                break
            module_name = "." * leading + ".".join(names[:split])
            module = self.project.test_module(self.project.find_module(module_name, self.path))
            if module is None:
                continue
            target = module.aliases.get(names[split])
            defined_here = names[split] in module.functions or names[split] in module.classes
            if not target or target.startswith(".") or defined_here:
                return None
            return ".".join([target, *names[split + 1:]])
        return None

    def is_asserting_helper(self, dotted: str) -> bool:
        """Whether the helper a call names (its canonical name, as
        ``ctx.call_name`` gives it: ``tests.helpers.check``,
        ``.util.Env.invoke``, a function of this file) asserts, raises or
        fails the test, itself or through the helpers it calls; or whether
        it is ``pytest.fail``/``pytest.raises`` re-exported by a module of
        the project (``from . import pytest``)."""
        located = self._resolved(dotted)
        if located is not None:
            return self.project.asserts(*located)
        return self.reexported(dotted) in FAILING_CALLS

    def is_asserting_method(self, class_name: str, method: str) -> bool:
        """``self.method()`` in a class of this file, for a method the file
        does not define: the method, found in the class's bases imported
        from the test tree, asserts."""
        return self.project.asserts(self.own_classes, f"{class_name}.{method}")

    def inherits_unread(self, class_name: str, method: str) -> bool:
        """``self.method()`` in a class of this file that neither the class
        nor its readable bases define, while some base comes from outside
        the project (a test framework's ``*TestCase``): what it does cannot
        be read, so a rule must not assume it checks nothing."""
        if self.project.function(self.own_classes, f"{class_name}.{method}") is not None:
            return False
        return self.project.unread_base(self.own_classes, class_name)

    def fixture_method_asserts(self, fixture_name: str, method: str) -> bool:
        """``env.invoke()`` where ``env`` is a fixture of the project that
        returns an instance of a project class whose ``invoke`` asserts."""
        fixture = self.fixture(fixture_name)
        if fixture is None:
            return False
        module = self.project.module(fixture.path) if fixture.path != self.path else self.own
        function = module.functions.get(fixture.name) if module else None
        if module is None or function is None or not function.returns:
            return False
        returned = function.returns
        if returned in module.classes:
            return self.project.asserts(module, f"{returned}.{method}")
        located = self.project.locate(returned, module.path)
        return located is not None and self.project.asserts(located[0], f"{located[1]}.{method}")

    def wrapper_kind(self, dotted: str) -> str | None:
        """``"spawn"``, ``"sleep"`` or ``"temp"`` when the function a call
        names (canonical name) is a project wrapper that hands its arguments
        to a child-process spawner, a sleep or a temp maker; else None."""
        located = self._resolved(dotted)
        if located is None:
            return None
        hit = self.project.function(*located)
        return hit[1].wraps if hit else None

    def spawn_wrappers(self) -> dict[str, SpawnWrapper]:
        """The spawner wrappers of other modules of the test tree that this
        file imports at module level, by the canonical name its calls give
        (``tests.helpers.run_cmd`` after ``from tests import helpers`` or
        ``from tests.helpers import run_cmd``, ``.helpers.run_cmd``): the
        same :class:`SpawnWrapper` a wrapper of the file itself is, so the
        rules judge their calls alike. Never imports project code."""
        if self._spawn_wrappers is None:
            found: dict[str, SpawnWrapper] = {}
            for local, target in module_imports(self.tree).items():
                if local in self._top_names:
                    continue
                module = self.project.test_module(self.project.find_module(target, self.path))
                if module is not None and module.path != self.path:
                    # a module of the test tree: its wrappers, called as ``helpers.run_cmd``
                    for name, function in module.functions.items():
                        if function.wraps == "spawn" and "." not in name:
                            self._add_wrapper(found, f"{target}.{name}", module.path, name)
                    continue
                located = self.project.locate(target, self.path)
                if located is not None and located[0].path != self.path and "." not in located[1]:
                    function = located[0].functions.get(located[1])
                    if function is not None and function.wraps == "spawn":
                        self._add_wrapper(found, target, located[0].path, located[1])
            self._spawn_wrappers = found
        return self._spawn_wrappers

    def _add_wrapper(self, found: dict[str, SpawnWrapper], callee: str, path: str, name: str) -> None:
        wrapper = self.project.spawn_wrapper(path, name)
        if wrapper is not None:
            found[callee] = dataclasses.replace(wrapper, callee=callee)
