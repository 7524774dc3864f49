"""HRM101: a ``tempfile`` directory or file whose removal is not arranged in the same scope."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import DEF_TYPES, FunctionNode
from flake8_hermetic.project import enclosing_class, requested_fixtures
from flake8_hermetic.project.modules import REDIRECTS_TEMP
from flake8_hermetic.rules.leaks.flow import later_statements
from flake8_hermetic.rules.leaks.function_facts import (
    CONTAINER_METHODS, FunctionRule, Holder, holder_of, kept_on_instance,
)
from flake8_hermetic.rules.leaks.lifecycle import is_registration, method_of, paired_body, pairing_of, removes_any
from flake8_hermetic.rules.leaks.syntax import bool_keyword, mentions, target_names
from flake8_hermetic.rules.leaks.temp_paths import GETTEMPDIR, PATH_CARRIERS
from flake8_hermetic.violation import Violation


def _finally_names(stmt: ast.stmt, nested: bool = False) -> set[str]:
    """The names the ``finally`` of ``stmt`` mentions; with ``nested``, also
    the ``finally`` blocks of the try statements inside it (not inside defs)."""
    names: set[str] = set()
    pending: list[ast.AST] = [stmt]
    while pending:
        node = pending.pop()
        for final in getattr(node, "finalbody", None) or ():
            names |= mentions(final)
        if nested:
            pending.extend(
                child for child in ast.iter_child_nodes(node)
                if isinstance(child, ast.stmt) and not isinstance(child, (*DEF_TYPES, ast.ClassDef))
            )
    return names


def _registers_cleanup_of(ctx: Context, stmt: ast.stmt, names: tuple[str, ...]) -> bool:
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Call) and is_registration(ctx, sub):
            if mentions(sub) & set(names):
                return True
    return False


def _cannot_fail(stmt: ast.stmt, names: set[str]) -> bool:
    """A statement that sits between a temp file's creation and its cleanup
    without a realistic chance to raise, adding any name it binds to
    ``names``: a local ``def`` of the cleanup callback, closing the new
    file (``os.close(fd)``, ``f.close()``), or naming it again
    (``path = f.name``)."""
    if isinstance(stmt, DEF_TYPES):
        if set().union(*(mentions(s) for s in stmt.body)) & names:
            names.add(stmt.name)
        return True
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "close" and mentions(call) & names:
            return not [a for a in call.args if not isinstance(a, (ast.Name, ast.Attribute))]
        return False
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.Name, ast.Attribute)):
        if dotted_name(stmt.value) in names or (mentions(stmt.value) & names and isinstance(stmt.value, ast.Attribute)):
            names.update(n for target in stmt.targets for n in target_names(target))
            return True
    return False


#: the positional index of ``dir`` in each maker's signature
DIR_POSITIONS = {"mkdtemp": 2, "mkstemp": 2, "NamedTemporaryFile": 6, "TemporaryDirectory": 2}
TEMP_MAKERS = {
    "tempfile.mkdtemp": "mkdtemp",
    "tempfile.mkstemp": "mkstemp",
    "tempfile.NamedTemporaryFile": "NamedTemporaryFile",
    "tempfile.TemporaryDirectory": "TemporaryDirectory",
}
#: methods that close a temporary file object (and so remove a deleting one)
CLOSERS = frozenset({"close", "__exit__", "cleanup"})


def _kept_on_instance(function: FunctionNode, names: tuple[str, ...]) -> set[str]:
    """Those of ``names`` kept on ``self`` or ``cls``, also under another
    name (``self.fname = fname.lower()``, ``self.root = root``)."""
    kept = kept_on_instance(names)
    for sub in ast.walk(function):
        if isinstance(sub, ast.Assign) and mentions(sub.value) & set(names):
            kept.update(n for t in sub.targets for n in target_names(t) if n.startswith(("self.", "cls.")))
    return kept


class TempWithoutCleanupRule(FunctionRule):
    """
    Flags a temporary directory or file made with `tempfile` whose removal is not arranged in the same scope.

    ## Why is this bad?
    `mkdtemp()`, `mkstemp()` and `NamedTemporaryFile(delete=False)` hand the
    caller something to delete, and a `TemporaryDirectory()` object that is
    kept instead of entered is only removed when it is garbage-collected. A
    removal placed at the end of the test body never runs when an assertion
    before it fails, which is exactly the run nobody inspects. The
    leftovers pile up in the shared temp directory run after run; on a
    tmpfs it is the inode budget that runs out first, and then every
    process on the machine gets "no space left on device".

    The removal counts when it cannot be skipped: the object is a `with`
    item; the very next statement registers a cleanup that names the
    result (`self.addCleanup`, `request.addfinalizer`,
    `ExitStack.callback`/`enter_context`, `TestCase.enterContext`); a
    `try`/`finally` names it in its `finally`; or a pytest yield fixture
    names it after its `yield`.

    ## Example
    ```python
    def test_export(self):
        out = tempfile.mkdtemp()
        export(out)
        self.assertTrue(os.listdir(out))
        shutil.rmtree(out)  # skipped when the assertion fails
    ```

    ## Use instead
    ```python
    def test_export(tmp_path):
        export(tmp_path)
        assert any(tmp_path.iterdir())

    def test_export_unittest(self):
        out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, out)
        export(out)

    def test_export_with():
        with tempfile.TemporaryDirectory() as out:
            export(out)
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM101` (or `extend-select` in the
    config). On the suites held out from tuning (docs/precision.md), 6 of 10
    on the second held-out set (8 of 16 on the first, whose 8 false were
    self-deleting files held by a local, now left alone) of its findings
    were hazards a maintainer would fix; a default-on rule must reach 80%,
    and the default set 90% overall: a `TemporaryDirectory()` held by a
    local is removed by its finalizer when the frame goes, and a file the
    code under test is expected to delete leaks only when that code breaks.
    It would need to follow a temporary object's lifetime and the code under
    test's own removals.

    ## Options
    None.

    Not flagged either: a plain helper function (not a test or fixture)
    that returns the result, which hands the removal to its caller; a
    context manager's `__enter__`, whose `__exit__` removes it; and a
    result made inside another directory given as `dir=` (say `tmp_path`),
    unless that is `tempfile.gettempdir()` or `os.getcwd()`.

    Left alone as well, because the removal is in view: a result kept on
    `self` (or `cls`, or a module global in `setUpModule`), also under a
    name derived from it (`self.fname = fname.lower()`), that the matching
    teardown (`tearDown`, `tearDownClass`, `teardown_method`,
    `tearDownModule`, also inherited from a base class in the file)
    removes or hands to a function whose name says it cleans: a failure
    later in `setUp` skips `tearDown`, but the pair is the idiom unittest
    is built around (HRM102 reports a `setUp` where that failure is
    likely); a registration or removal reached only through lines that
    merely name the result again, also through path-building calls
    (`self.tdp = Path(self.td.name).resolve()`); a `try` whose body begins
    by removing the result, or a loop over the results that removes each
    (`for fd, name in temps: os.unlink(name)`); names collected from a
    `with NamedTemporaryFile(delete=False)` block into a list that a
    `finally` removes; and a result made inside a `with` block whose
    manager, defined in the same file, swaps `tempfile.tempdir` for a
    directory it removes.

    A named file that deletes itself when closed (`NamedTemporaryFile()`)
    and is kept on `self` or `cls` where nothing closes it (no `with`, no
    `close()` in its class, no cleanup registered) is flagged too: the test
    case outlives the test (unittest keeps every instance until the run
    ends), so the file stays open and on disk. Left alone: one held only by
    a local name, which reference counting closes and deletes when the
    function returns (no later test meets it); a `with` item, any
    `f.close()`, `addCleanup(f.close)`, `with f:`, and a
    result used at once and dropped (`NamedTemporaryFile().name`), and
    `TemporaryFile()`/`SpooledTemporaryFile()`, which have no name on
    disk (POSIX) or live in memory until they roll over.

    Runner-level isolation counts too (the project model reads it, see
    docs/project-model.md): a result made without `dir=` in a file below a
    `conftest.py` that points `tempfile.tempdir` (or `TMPDIR`) at a
    directory made for the run (`mkdtemp()`, the basetemp) and removes it
    at the end (`shutil.rmtree`, `.cleanup()`, an `atexit` registration)
    is not flagged: nothing it leaves outlives the run. Nor is one whose
    test's fixture closure, or a project context manager around it, points
    `tempfile.tempdir` at a directory of its own for the test (see "What it
    leaves alone"). Setting `TMPDIR` does not count: `tempfile` reads it
    once and caches the answer.

    ## Known problems
    A `NamedTemporaryFile(delete=False)` used as a `with` item is closed but
    not removed, so it needs the same cleanup as any other result: a
    registration as the first statement of the `with` body or the statement
    after it (also through a name assigned from it in the body), or a
    `finally`. A removal done by a helper the test calls is not followed,
    nor one reached only through an `except` that removes and re-raises.
    """

    code = "HRM101"
    principles = ("fixture-closure",)
    # on by the held-out evidence: 40 held-out findings reached by prove, 39 leaked (docs/precision.md)
    message = "{name}() leaves {what} behind when the test fails before removing it; use tmp_path, a with block, or register cleanup on the next line"
    calls = frozenset(TEMP_MAKERS)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        kind = TEMP_MAKERS.get(name or "")
        if kind is None:
            return
        keep_file = kind == "NamedTemporaryFile"
        if self._inside_managed_directory(node, kind) or self._hands_over():
            return
        holder = holder_of(self.ctx, node)
        if keep_file and bool_keyword(node, "delete") is not False:
            if self._kept_open(holder):
                yield self.report(node, name=name, what="an open file")
            return
        if holder.how == "registered" or self.handed_back(holder):
            return
        if holder.how == "with":
            if not keep_file or self._cleaned_after_with(holder):
                return
        elif self._cleaned(node, holder) or self._removed_by_teardown(holder):
            return
        if "dir" not in {k.arg for k in node.keywords} and (
            self._inside_swapped_tempdir(node) or self.ctx.project.temp_redirected or self._closure_swaps_tempdir()
        ):
            # runner-level isolation: a conftest above points the temp dir at
            # a per-run directory it removes at exit, so nothing outlives the run
            return
        what = "a directory" if kind in ("mkdtemp", "TemporaryDirectory") else "a file"
        yield self.report(node, name=name, what=what)

    def _kept_open(self, holder: Holder) -> bool:
        """A named file that deletes itself on close (``NamedTemporaryFile()``)
        kept in a name that nothing closes: no ``with``,
        no ``close()`` anywhere in the function (or, kept on ``self``, in
        its class), no cleanup registered, not handed back."""
        function = self.ctx.function
        if holder.how != "assigned" or holder.chained is not None or not holder.names or function is None:
            return False
        if self.handed_back(holder) or not kept_on_instance(holder.names):
            # held by a local only: reference counting closes and deletes it
            # when the frame ends (a failing test's traceback holds it until
            # the runner drops the report): no later test meets it
            return False
        names = set(holder.names)
        searched: list[ast.AST] = [function]
        class_scope = self.ctx.class_scope
        if class_scope is not None and kept_on_instance(holder.names):
            searched.append(class_scope.node)
        for root in searched:
            for sub in ast.walk(root):
                if isinstance(sub, ast.Call):
                    func = sub.func
                    if isinstance(func, ast.Attribute) and func.attr in CLOSERS and dotted_name(func.value) in names:
                        return False
                    if is_registration(self.ctx, sub) and mentions(sub) & names:
                        return False
                    if any(dotted_name(a) in names for a in sub.args) and "clos" in (dotted_name(func) or "").lower():
                        return False
                elif isinstance(sub, ast.withitem) and dotted_name(sub.context_expr) in names:
                    return False
                elif isinstance(sub, (ast.Return, ast.Yield)) and sub.value is not None and mentions(sub.value) & names:
                    return False
        return True

    def _inside_managed_directory(self, node: ast.Call, kind: str) -> bool:
        """``mkdtemp(dir=tmp_path)``: removed with the directory it is made
        in, unless that is the shared temp directory or the working one."""
        where = next((k.value for k in node.keywords if k.arg == "dir"), None)
        position = DIR_POSITIONS[kind]
        if where is None and len(node.args) > position:
            where = node.args[position]
        if where is None or isinstance(where, ast.Constant):
            return False
        if isinstance(where, ast.Call) and self.ctx.call_name(where) in (*GETTEMPDIR, "os.getcwd", "os.getcwdb"):
            return False
        return True

    def _hands_over(self) -> bool:
        """A context manager's ``__enter__`` leaves the removal to its ``__exit__``."""
        scope = self.ctx.function_scope
        return scope is not None and scope.name in ("__enter__", "__aenter__")

    def _cleaned(self, anchor: ast.AST, holder: Holder) -> bool:
        names = holder.names
        if not names:
            return False
        named = set(names)
        first = True
        for stmt, encloses in later_statements(self.ctx, anchor):
            if _finally_names(stmt, nested=not encloses) & named:
                return True
            if not first or encloses:
                continue
            # the very next statement that can fail registers the cleanup
            # or removes the result
            if _registers_cleanup_of(self.ctx, stmt, tuple(named)) or removes_any(stmt, named):
                return True
            if self._removed_right_away(stmt, named):
                return True
            first = _cannot_fail(stmt, named) or self._derives_path(stmt, named)
        return self._after_fixture_yield(anchor, names)

    def _derives_path(self, stmt: ast.stmt, names: set[str]) -> bool:
        """``self.path = Path(tmp.name).resolve()``, ``fds = [fd for fd, _ in temps]``:
        naming the result again through calls that only build paths; adds
        the targets to ``names``."""
        if not isinstance(stmt, ast.Assign) or not mentions(stmt.value) & names:
            return False
        for sub in ast.walk(stmt.value):
            if isinstance(sub, ast.Call) and self.ctx.call_name(sub) not in PATH_CARRIERS:
                if not (isinstance(sub.func, ast.Attribute) and sub.func.attr in ("resolve", "absolute")):
                    return False
        names.update(n for target in stmt.targets for n in target_names(target))
        return True

    def _removed_right_away(self, stmt: ast.stmt, names: set[str]) -> bool:
        """A ``try`` whose body begins by removing the result, or a loop over
        the results that removes each (``for fd, name in temps: os.unlink(name)``)."""
        names = set(names)
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and mentions(stmt.iter) & names:
            names.update(target_names(stmt.target))
        elif not isinstance(stmt, ast.Try):
            return False
        for inner in stmt.body:
            if _registers_cleanup_of(self.ctx, inner, tuple(names)) or removes_any(inner, names):
                return True
            if self._removed_right_away(inner, names):
                return True
            if not (_cannot_fail(inner, names) or self._derives_path(inner, names)):
                return False
        return False

    def _removed_by_teardown(self, holder: Holder) -> bool:
        """Kept on ``self`` (``cls``, or a module global in ``setUpModule``)
        and removed by the matching teardown method, which runs after every
        test however it ends."""
        owner, method = method_of(self.ctx)
        function = self.ctx.function
        if method is None or function is None:
            return False
        pairing = pairing_of(owner, method)
        if pairing is None:
            return False
        kept = set(holder.names) if owner is None else _kept_on_instance(function, holder.names)
        if not kept:
            return False
        return any(
            isinstance(teardown, DEF_TYPES) and teardown.name in pairing.teardowns
            and self._teardown_removes(teardown, kept)
            for teardown in paired_body(self.ctx, owner)
        )

    def _teardown_removes(self, teardown: FunctionNode, kept: set[str]) -> bool:
        """``teardown`` removes one of ``kept`` (also in a loop over them),
        registers its cleanup, or hands it to a function whose name says
        it cleans."""
        loops = {
            name for sub in ast.walk(teardown) if isinstance(sub, (ast.For, ast.comprehension))
            and mentions(sub.iter) & kept for name in target_names(sub.target)
        }
        return any(
            isinstance(sub, ast.stmt) and (removes_any(sub, kept | loops) or _registers_cleanup_of(
                self.ctx, sub, tuple(kept))) for sub in ast.walk(teardown)
        ) or any(
            isinstance(sub, ast.Call) and "clean" in (dotted_name(sub.func) or "").rpartition(".")[2].lower()
            and any(dotted_name(a) in kept for a in sub.args) for sub in ast.walk(teardown)
        )

    def _closure_swaps_tempdir(self) -> bool:
        """A function-scoped fixture of the test's closure (see the project
        model) points ``tempfile.tempdir`` at a directory of its own for the
        test and puts it back (``monkeypatch.setattr(tempfile, "tempdir",
        str(tmp_path))``): what lands there goes with that directory."""
        class_name = enclosing_class(self.ctx.scopes)
        return REDIRECTS_TEMP in self.ctx.project.effects_for_test(requested_fixtures(self.ctx.scopes), class_name)

    def _inside_swapped_tempdir(self, node: ast.Call) -> bool:
        """Inside a ``with`` block whose manager, defined in this file, swaps
        ``tempfile.tempdir`` (and so makes and removes the directory the new
        one lands in)."""
        local = {
            d.name: d for d in self.ctx.tree.body if isinstance(d, DEF_TYPES)
        }
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if not isinstance(ancestor, (ast.With, ast.AsyncWith)) or on_path in ancestor.items:
                continue
            for item in ancestor.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and REDIRECTS_TEMP in self.ctx.project.manager_effects(
                    self.ctx.call_name(call) or ""
                ):
                    return True  # a context manager of the project that swaps it (followed through its modules)
                manager = local.get(dotted_name(call.func) or "") if isinstance(call, ast.Call) else None
                if manager is not None and any(
                    (isinstance(sub, ast.Attribute) and sub.attr == "tempdir")
                    or (isinstance(sub, ast.Constant) and sub.value == "tempdir")
                    for sub in ast.walk(manager)
                ):
                    return True
        return False

    def _cleaned_after_with(self, holder: Holder) -> bool:
        statement = holder.statement
        if statement is None or not holder.names:
            return False
        body = getattr(statement, "body", [])
        names = set(holder.names)
        # with NamedTemporaryFile(delete=False) as f: path = f.name; names.append(f.name)
        for stmt in body:
            if isinstance(stmt, ast.Assign) and mentions(stmt.value) & names:
                names.update(n for target in stmt.targets for n in target_names(target))
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in CONTAINER_METHODS:
                if set().union(*(mentions(a) for a in call.args)) & names:
                    names.update(target_names(call.func.value))
        aliased = Holder(holder.how, tuple(sorted(names)), holder.chained, statement)
        if body and _registers_cleanup_of(self.ctx, body[0], aliased.names):
            return True
        return self._cleaned(statement, aliased)

    def _after_fixture_yield(self, anchor: ast.AST, names: tuple[str, ...]) -> bool:
        scope = self.ctx.function_scope
        function = self.ctx.function
        if scope is None or function is None or not scope.is_fixture:
            return False
        facts = self.facts(function)
        line = getattr(anchor, "lineno", 0)
        if facts.yield_end is None or facts.yield_end < line:
            return False
        return any(facts.mentioned_after(name, facts.yield_end) for name in names)
