"""HRM5xx: test design that hides what a test proves."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
from collections.abc import Iterator
from functools import lru_cache

from flake8_hermetic.engine import Context, FunctionNode
from flake8_hermetic.registry import Rule, Violation

# -- HRM501: tests that assert nothing -----------------------------------------

ASSERTING_CALLS = frozenset({"pytest.raises", "pytest.warns", "pytest.deprecated_call", "pytest.fail"})
ASSERTING_WORDS = re.compile(r"assert|check|verify|expect", re.IGNORECASE)
SKIP_CALLS = frozenset({"pytest.skip", "pytest.xfail"})
SKIP_EXCEPTIONS = frozenset({"unittest.SkipTest", "unittest.case.SkipTest", "SkipTest", "pytest.skip.Exception"})
# decorators after which the body's outcome is judged by the decorator, or never runs
ALWAYS_SKIPPED = frozenset({"pytest.mark.skip", "unittest.skip"})
EXPECTS_FAILURE = frozenset({"unittest.expectedFailure", "unittest.case.expectedFailure"})
PROPERTY_TESTS = frozenset({"hypothesis.given"})
WARNING_FILTERS = frozenset({"warnings.simplefilter", "warnings.filterwarnings"})
SELF_NAMES = frozenset({"self", "cls"})
# names a TestCase is passed around under, for ``test.fail(...)`` in a module-level helper
TESTCASE_NAMES = SELF_NAMES | {"test", "testcase", "test_case", "tc", "case"}
NO_RAISE_HELPER = re.compile(r"not_?raises?$", re.IGNORECASE)
NO_RAISE_WORDS = frozenset({"crash", "crashes", "segfault", "segfaults", "hang", "hangs", "smoke"})
NO_RAISE_PAIRS = frozenset(
    {("not", "raise"), ("not", "raises"), ("doesnt", "raise"), ("no", "error"), ("no", "errors"), ("no", "exception"), ("no", "exceptions")}
)


@dataclasses.dataclass
class FunctionFacts:
    """What the walk saw inside one function (its nested defs included)."""

    name: str
    asserts: bool = False
    #: functions and classes of this file it calls, by name
    callees: set[str] = dataclasses.field(default_factory=set)
    #: called names that contain "test": helpers that run a test, asserting inside
    test_helpers: set[str] = dataclasses.field(default_factory=set)
    #: for a method, its class: a class asserts when one of its methods does
    owner: FunctionFacts | None = None


def _words(name: str) -> list[str]:
    """``testSpawnDoesntHang`` and ``test_spawn_doesnt_hang`` -> test, spawn, doesnt, hang."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]


def declares_no_raise(name: str) -> bool:
    """Whether a test's name says its claim is "this does not raise"
    (``test_no_crash_on_empty``, ``test_parse_does_not_raise``, ``testSpawnDoesntHang``)."""
    words = _words(name)
    if NO_RAISE_WORDS.intersection(words):
        return True
    return any(pair in NO_RAISE_PAIRS for pair in zip(words, words[1:]))


@lru_cache(maxsize=4096)  # asked for every call in a test, of a few hundred distinct names
def runs_a_test(name: str) -> bool:
    """Whether a helper's name says it runs a test (``_test_roundtrip``,
    ``runTest``, ``run_unittest``, ``testmod``), not ``get_latest``."""
    return any(w.startswith("test") or w in ("unittest", "doctest") for w in _words(name))


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _is_docstring_or_pass(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


class NoAssertionRule(Rule):
    """
    Flags a test that asserts nothing.

    A `test*` function or method is reported when nothing in its body (its
    nested functions included) can fail it on purpose: no `assert`, no
    `pytest.raises/warns/deprecated_call/fail`, no `self.assert*` or
    `self.fail*`, no mock `.assert_*()` call, no `raise AssertionError`, no
    `warnings.simplefilter("error")` (every warning becomes a failure), no
    call of a function whose name contains `assert`, `check`, `verify` or
    `expect`, and no assertion method handed over as a callback
    (`d.addCallback(self.assertEqual, 1)`). A call of a helper defined in
    the same file counts when that helper asserts (followed through
    helpers calling helpers, through a class whose methods assert, and
    through a decorator of the file that wraps the test), and so does
    `super().test_x()`.

    Not reported: a test that always skips (an unconditional
    `pytest.skip()`, `pytest.xfail()`, `self.skipTest()`, `raise
    unittest.SkipTest`, or an unconditional skip decorator), one that only
    raises `NotImplementedError` (an abstract test), an empty body (`pass`
    or a docstring: a base-class test switched off in a subclass),
    `@unittest.expectedFailure` tests, and hypothesis `@given` tests.

    ## Why is this bad?
    A test without an assertion passes whenever its code does not raise.
    It counts towards coverage and shows green, but it would still pass if
    the function returned the wrong answer, wrote to the wrong place or
    did nothing at all. Such a test usually lost its assertion in a
    refactor, or was written to exercise code, not to check it.

    ## Example
    ```python
    def test_export(tmp_path):
        export(tmp_path / "out.csv")
    ```

    ## Use instead
    ```python
    def test_export(tmp_path):
        export(tmp_path / "out.csv")
        assert (tmp_path / "out.csv").read_text().startswith("id,name")
    ```

    ## Options
    None.

    ## Known problems
    A test whose only claim is "this does not raise" is reported unless
    its name says so: the words `crash`, `segfault`, `hang`, `smoke`, or
    `not raise`, `doesnt raise`, `no error`, `no exception`, in snake or
    camel case (`test_no_crash_on_empty`, `test_load_does_not_raise`,
    `testSpawnDoesntHang`). Write the claim down, or name the test for it.

    A helper imported from another module cannot be read: it counts when
    its name says it checks (`assert`, `check`, `verify`, `expect`) or
    runs a test (`self._test_roundtrip()`, `support.run_unittest()`), and
    not otherwise.
    """

    code = "HRM501"
    message = "test {name}() asserts nothing, so it passes whatever the code does; assert something about the outcome"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.facts: dict[int, FunctionFacts] = {}
        self.defined: set[str] = set()  # names of the functions and classes of this file
        self.tests: list[tuple[FunctionFacts, Violation]] = []
        self.judged = os.path.basename(ctx.path) != "conftest.py"

    # -- the defs ------------------------------------------------------------
    def visit_FunctionDef(self, node: FunctionNode) -> Iterator[Violation]:
        defaults = (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None))
        if any("assert" in _last_name(default).lower() for default in defaults):
            self._mark_asserting()  # def check(v, test_fn=self.assertEqual) inside a test
        enclosing = self.ctx.scope
        owner = self.facts.get(id(enclosing.node)) if enclosing.kind == "class" else None
        facts = FunctionFacts(node.name, owner=owner)
        self.facts[id(node)] = facts
        self.defined.add(node.name)
        scope = self.ctx.scope_of(node)
        # a test def inside a function is never collected
        collected = scope.is_test and all(s.kind != "function" for s in self.ctx.scopes)
        if self.judged and collected and not self._exempt(node):
            for decorator in node.decorator_list:
                # a decorator of this file may wrap the body in the real check (``@jump_test(1, 3, [3])``)
                wrapper = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(wrapper, ast.Name) and not self.ctx.resolver.is_bound(wrapper.id):
                    facts.callees.add(wrapper.id)
            violation = self.report(node, name=node.name)
            self.tests.append((facts, dataclasses.replace(violation, where=self.ctx.where_of(node))))
        return iter(())

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> Iterator[Violation]:
        facts = FunctionFacts(node.name)
        self.facts[id(node)] = facts
        self.defined.add(node.name)
        return iter(())

    def _exempt(self, node: FunctionNode) -> bool:
        if declares_no_raise(node.name):
            return True
        for decorator in node.decorator_list:
            name = self.ctx.resolve(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""
            if name in ALWAYS_SKIPPED or name in EXPECTS_FAILURE or name in PROPERTY_TESTS:
                return True
        if all(_is_docstring_or_pass(stmt) for stmt in node.body):
            return True
        return any(self._always_skips(stmt) for stmt in node.body)

    def _always_skips(self, stmt: ast.stmt) -> bool:
        """An unconditional skip, or ``raise NotImplementedError``, at the top of the body."""
        if skips(self.ctx, stmt):
            return True
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            return self.ctx.resolve(exc) == "NotImplementedError"
        return False

    # -- what the bodies do ----------------------------------------------------
    def _enclosing_facts(self) -> Iterator[FunctionFacts]:
        for scope in self.ctx.scopes:
            if scope.kind == "function":
                facts = self.facts.get(id(scope.node))
                if facts is not None:
                    yield facts

    def _mark_asserting(self) -> None:
        for facts in self._enclosing_facts():
            facts.asserts = True

    def visit_Assert(self, node: ast.Assert) -> Iterator[Violation]:
        self._mark_asserting()
        return iter(())

    def visit_Raise(self, node: ast.Raise) -> Iterator[Violation]:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if exc is not None and _last_name(exc) in ("AssertionError", "failureException"):
            self._mark_asserting()
        return iter(())

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        # an assertion method bound to a short name: eq = self.assertEqual
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        if any("assert" in _last_name(value).lower() for value in values):
            self._mark_asserting()
        return iter(())

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not any(True for _ in self._enclosing_facts()):
            return iter(())
        func = node.func
        last = _last_name(func)
        name = self.ctx.call_name(node)
        if ASSERTING_WORDS.search(last) or NO_RAISE_HELPER.search(last) or name in ASSERTING_CALLS:
            self._mark_asserting()
            return iter(())
        if name in WARNING_FILTERS and _turns_into_errors(node):
            self._mark_asserting()  # any warning now fails the test
            return iter(())
        if last in ("exec", "eval") and node.args and isinstance(node.args[0], ast.Constant):
            if "assert" in str(node.args[0].value):  # the test's code is in the string
                self._mark_asserting()
                return iter(())
        if runs_a_test(last):
            for facts in self._enclosing_facts():
                facts.test_helpers.add(last)
        for argument in (*node.args, *(k.value for k in node.keywords)):
            # an assertion method handed over as a callback: d.addCallback(self.assertEqual, 1)
            if "assert" in _last_name(argument).lower():
                self._mark_asserting()
                return iter(())
        if isinstance(func, ast.Attribute):
            receiver = func.value
            if isinstance(receiver, ast.Name) and receiver.id in TESTCASE_NAMES and last.startswith("fail"):
                self._mark_asserting()
            elif _is_super_call(receiver) and last.startswith("test"):
                self._mark_asserting()  # the inherited test holds the assertion
            elif (isinstance(receiver, ast.Name) and receiver.id in SELF_NAMES) or _is_super_call(receiver):
                self._record_callee(last)
        elif isinstance(func, ast.Name) and not self.ctx.resolver.is_bound(func.id):
            self._record_callee(func.id)
        return iter(())

    def _record_callee(self, name: str) -> None:
        for facts in self._enclosing_facts():
            facts.callees.add(name)

    # -- the verdict -----------------------------------------------------------
    def finish(self) -> Iterator[Violation]:
        callers: dict[str, list[FunctionFacts]] = {}
        for facts in self.facts.values():
            for callee in facts.callees:
                callers.setdefault(callee, []).append(facts)
        for facts in self.facts.values():
            # a test helper of another module (``self._test_encoding()``, ``enum._test_simple_enum()``)
            if any(name not in self.defined for name in facts.test_helpers):
                facts.asserts = True
        pending = [facts for facts in self.facts.values() if facts.asserts]
        while pending:
            helper = pending.pop()
            related = [*callers.get(helper.name, ()), *([helper.owner] if helper.owner else [])]
            for caller in related:
                if not caller.asserts:
                    caller.asserts = True
                    pending.append(caller)
        for facts, violation in self.tests:
            if not facts.asserts:
                yield violation


def skips(ctx: Context, stmt: ast.stmt) -> bool:
    """``pytest.skip()``, ``pytest.xfail()``, ``self.skipTest()`` or ``raise unittest.SkipTest``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if ctx.call_name(call) in SKIP_CALLS:
            return True
        return isinstance(call.func, ast.Attribute) and call.func.attr == "skipTest"
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        return (ctx.resolve(exc) or "") in SKIP_EXCEPTIONS
    return False


def _turns_into_errors(call: ast.Call) -> bool:
    """``warnings.simplefilter("error", ...)``: the test asserts that no warning is emitted."""
    action = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "action"), None)
    return isinstance(action, ast.Constant) and action.value == "error"


def _is_super_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


# -- HRM502: branching inside a test --------------------------------------------

CONTROL_FLOW: dict[type[ast.AST], str] = {
    ast.If: "if",
    ast.For: "for",
    ast.AsyncFor: "async for",
    ast.While: "while",
    ast.Try: "try",
    ast.Match: "match",
}
if hasattr(ast, "TryStar"):  # Python 3.11+
    CONTROL_FLOW[ast.TryStar] = "try"
CONTROL_FLOW_TYPES = tuple(CONTROL_FLOW)
TRY_TYPES = tuple(kind for kind, word in CONTROL_FLOW.items() if word == "try")


class ControlFlowInTestRule(Rule):
    """
    Flags `if`, `for`, `while`, `match` and `try` in the body of a test.

    Only the outermost such statement of a `test*` function or method is
    reported (an `if` inside a `for` is one finding). An `if` whose body only
    skips or xfails the test (`pytest.skip()`, `self.skipTest()`) is a
    guard, not a branch, and is not reported; neither is control flow in
    a nested helper function or in a fixture.

    ## Why is this bad?
    A branch in a test means the test checks different things on
    different runs, and a loop means one test checks many cases and stops
    at the first failing one, hiding the rest. The report names one test
    either way, so the reader cannot tell which case broke or whether the
    interesting branch ran at all. A `try` around the code under test
    often swallows the very failure the test exists to catch.

    ## Example
    ```python
    def test_parse(raw, expected_error):
        if expected_error:
            with pytest.raises(ValueError):
                parse(raw)
        else:
            assert parse(raw)
    ```

    ## Use instead
    ```python
    @pytest.mark.parametrize("raw", [pytest.param("1", id="digit"), pytest.param("0x1", id="hex")])
    def test_parse_accepts(raw):
        assert parse(raw)

    @pytest.mark.parametrize("raw", [pytest.param("", id="empty")])
    def test_parse_rejects(raw):
        with pytest.raises(ValueError):
            parse(raw)
    ```

    ## Options
    None.
    """

    code = "HRM502"
    message = "`{kind}` in a test body checks several cases under one name; parametrize, or split success and failure tests"
    default_on = False

    def _check(self, node: ast.stmt) -> Iterator[Violation]:
        scope = self.ctx.function_scope
        if scope is None or not scope.is_test or self.ctx.enclosing(*CONTROL_FLOW_TYPES) is not None:
            return
        if isinstance(node, ast.If) and not node.orelse and all(skips(self.ctx, stmt) for stmt in node.body):
            return
        if isinstance(node, TRY_TYPES) and not node.handlers:  # type: ignore[attr-defined]
            return  # try/finally only guarantees cleanup (the fix HRM101/HRM113 ask for); it does not branch
        if isinstance(node, (ast.For, ast.AsyncFor)) and _runs_subtests(node):
            return
        yield self.report(node, kind=CONTROL_FLOW[type(node)])

    visit_If = visit_For = visit_AsyncFor = visit_While = visit_Try = visit_Match = _check
    if hasattr(ast, "TryStar"):
        visit_TryStar = _check


def _runs_subtests(loop: ast.For | ast.AsyncFor) -> bool:
    """``for x in cases: with self.subTest(x=x): ...``: every case is reported on its own."""
    if len(loop.body) != 1 or not isinstance(loop.body[0], (ast.With, ast.AsyncWith)):
        return False
    for item in loop.body[0].items:
        call = item.context_expr
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            receiver = _last_name(call.func.value)
            if call.func.attr == "subTest" or (call.func.attr == "test" and receiver == "subtests"):
                return True
    return False


# -- HRM503: parametrize rows without ids ----------------------------------------

PARAM = "pytest.param"


class UnnamedParametrizeRowRule(Rule):
    """
    Flags a `@pytest.mark.parametrize` row that is not `pytest.param(..., id=...)` when no `ids=` is given.

    Each row of a literal list (or tuple) of argument values is checked,
    and the element of a comprehension that builds the rows; rows that
    come from a name or a function call cannot be seen and are left
    alone. `metafunc.parametrize(...)` in `pytest_generate_tests` is
    checked the same way.

    ## Why is this bad?
    Without an id pytest names each case after its values (`test_x[1-2]`,
    the whole of a long string) or, for any other object, after the
    argument name and the row's position (`test_x[payload0]`). Positional
    ids shift when a row is added, removed or reordered, so a failure
    report, a `-k` selection, a baseline entry or a CI history no longer
    points at the same case; value ids change whenever the data does. A
    readable id also says what the case is for, which raw values rarely
    do.

    ## Example
    ```python
    @pytest.mark.parametrize("raw, expected", [("1", 1), ("0x1", 1)])
    def test_parse(raw, expected):
        assert parse(raw) == expected
    ```

    ## Use instead
    ```python
    @pytest.mark.parametrize(
        "raw, expected",
        [pytest.param("1", 1, id="decimal"), pytest.param("0x1", 1, id="hex")],
    )
    def test_parse(raw, expected):
        assert parse(raw) == expected
    ```

    ## Options
    None.
    """

    code = "HRM503"
    message = "parametrize row without an id: pytest names the case from its values or its position; use pytest.param(..., id=...)"
    calls = frozenset({"pytest.mark.parametrize"})
    methods = frozenset({"parametrize"})
    default_on = False

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not self._is_parametrize(node) or any(k.arg == "ids" or k.arg is None for k in node.keywords):
            return
        if len(node.args) >= 4:  # ids given positionally: (argnames, argvalues, indirect, ids)
            return
        rows = node.args[1] if len(node.args) > 1 else None
        for keyword in node.keywords:
            if keyword.arg == "argvalues":
                rows = keyword.value
        where = self.ctx.where_of(node)
        if isinstance(rows, (ast.List, ast.Tuple, ast.Set)):
            for row in rows.elts:
                if not isinstance(row, ast.Starred) and not self._named(row):
                    yield dataclasses.replace(self.report(row), where=where)
        elif isinstance(rows, (ast.ListComp, ast.GeneratorExp, ast.SetComp)) and not self._named(rows.elt):
            yield dataclasses.replace(self.report(rows.elt), where=where)

    def _is_parametrize(self, node: ast.Call) -> bool:
        if self.ctx.call_name(node) == "pytest.mark.parametrize":
            return True
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "parametrize"
            and isinstance(func.value, ast.Name)
            and func.value.id == "metafunc"
        )

    def _named(self, row: ast.expr) -> bool:
        if not (isinstance(row, ast.Call) and self.ctx.call_name(row) == PARAM):
            return False
        return any(k.arg == "id" or k.arg is None for k in row.keywords)


# -- HRM504: private names of the code under test ---------------------------------

TEST_TREE_PARTS = frozenset({"tests", "test", "testing", "conftest"})


def in_test_tree(module: str, level: int) -> bool:
    """Whether an import reads from the test suite itself, not the code under test.

    A relative import stays inside the test package; so does a module path
    with a ``tests``/``test``/``testing`` part, a ``test_*``/``*_test``
    module, a ``conftest``, or a private test-support module (``_testcapi``).
    """
    if level > 0:
        return True
    return any(
        part in TEST_TREE_PARTS or part.startswith(("test_", "_test")) or part.endswith("_test")
        for part in module.split(".")
    )


class PrivateImportRule(Rule):
    """
    Flags a test importing a `_private` name from the code under test.

    `from mypkg.parser import _tokenize` is reported for each imported
    name that starts with one underscore (not a dunder, not `_` itself).
    Imports from the test tree are the suite's own helpers and are not
    reported: relative imports, and modules with a `tests`, `test` or
    `testing` part, a `test_*`, `*_test` or `_test*` part, or `conftest`
    (`from tests.helpers import _make_repo`, `from _testcapi import ...`).
    A private name that mentions tests (`_cleanup_tests`,
    `_test_simple_enum`) is a hook the code offers its own tests and is not
    reported either. `import pkg._impl` binds a module, not a name, and is
    not judged.

    ## Why is this bad?
    An underscore is the author's statement that the name may change
    without notice. A test built on it pins the implementation instead of
    the behaviour: a refactor that keeps every public promise breaks the
    test, and a test that passes says nothing about what callers get.
    The pull to test a private helper directly usually means it deserves
    to be public, in a module of its own.

    ## Example
    ```python
    from mypkg.parser import _tokenize

    def test_tokenize():
        assert _tokenize("a b") == ["a", "b"]
    ```

    ## Use instead
    ```python
    from mypkg.parser import parse

    def test_parse_splits_words():
        assert parse("a b").words == ["a", "b"]
    ```

    ## Options
    None.
    """

    code = "HRM504"
    message = "{name} is private to {module}; a test built on it pins the implementation; test the public API"
    default_on = False

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Iterator[Violation]:
        module = node.module or ""
        if in_test_tree(module, node.level):
            return
        for alias in node.names:
            name = alias.name
            # a private name about tests (``_cleanup_tests``) is a hook the code offers its tests
            if name.startswith("_") and not name.startswith("__") and name != "_" and "test" not in name.lower():
                at = alias if hasattr(alias, "lineno") else node
                yield self.report(at, name=name, module=module)


# -- HRM505: stand-ins with no interface ------------------------------------------

MOCK_MODULES = ("unittest.mock", "mock")
MOCK_CLASSES = frozenset({"Mock", "MagicMock", "AsyncMock", "NonCallableMock", "NonCallableMagicMock"})
PATCH_OPTIONS = frozenset({"spec", "spec_set", "create", "autospec", "new_callable"})
# (name suffix, position of ``new``); patch.multiple takes its replacements as keywords
PATCHERS = ((".patch", 1), (".patch.object", 2), (".patch.multiple", None))


def _is_monkeypatch(node: ast.AST) -> bool:
    name = _last_name(node)
    return "monkeypatch" in name.lower() or name == "mp"


class BareMockReplacementRule(Rule):
    """
    Flags a bare `MagicMock()` or `Mock()` (no `spec`/`spec_set`) patched in as a replacement.

    The mock is reported where it is handed to `mock.patch(...)`,
    `mock.patch.object(...)` or `mock.patch.multiple(...)` (as `new`,
    positionally or by keyword, or as `return_value=`), to pytest-mock's
    `mocker.patch...`, or to `monkeypatch.setattr(...)` as the value.
    `Mock(SomeClass)` (a positional spec), `spec=`, `spec_set=` and
    `create_autospec(...)` are the fixes and are not reported.

    ## Why is this bad?
    A mock without a spec accepts every attribute and every call, and
    each attribute it hands out is another truthy mock. Code that reads a
    flag off it (`if config.telemetry.enabled:`) takes the branch the test
    never meant to run; a typo or a renamed method on the real object
    still "works" against the mock. The test keeps passing while the
    interface it stands in for has changed.

    ## Example
    ```python
    def test_report(monkeypatch):
        monkeypatch.setattr(app, "load_config", MagicMock())
        with mock.patch("app.client.Session", MagicMock()):
            assert app.report()
    ```

    ## Use instead
    ```python
    def test_report(monkeypatch):
        monkeypatch.setattr(app, "load_config", mock.create_autospec(app.load_config))
        with mock.patch("app.client.Session", autospec=True):
            assert app.report()
    ```

    ## Options
    None.

    ## Known problems
    A bare mock bound to a name first and then patched in is not followed.
    """

    code = "HRM505"
    message = "bare {name}() accepts any attribute or call, so the test passes against a wrong interface; use create_autospec() or {name}(spec=...)"
    calls = frozenset(f"{owner}{suffix}" for owner in (*MOCK_MODULES, "*mocker") for suffix, _ in PATCHERS)
    methods = frozenset({"setattr"})
    default_on = False

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        for value in self._replacements(node):
            name = self._bare_mock(value)
            if name is not None:
                yield dataclasses.replace(self.report(value, name=name), where=self.ctx.where_of(node))

    def _replacements(self, node: ast.Call) -> list[ast.expr]:
        func = node.func
        name = self.ctx.call_name(node) or ""
        for suffix, position in PATCHERS:
            head = name[: -len(suffix)]
            if name.endswith(suffix) and (head in MOCK_MODULES or head.endswith("mocker")):
                values = [node.args[position]] if position is not None and len(node.args) > position else []
                for keyword in node.keywords:
                    if keyword.arg in ("new", "return_value"):
                        values.append(keyword.value)
                    elif position is None and keyword.arg is not None and keyword.arg not in PATCH_OPTIONS:
                        values.append(keyword.value)
                return values
        if isinstance(func, ast.Attribute) and func.attr == "setattr" and _is_monkeypatch(func.value):
            values = [k.value for k in node.keywords if k.arg == "value"]
            string_target = bool(node.args) and isinstance(node.args[0], (ast.Constant, ast.JoinedStr))
            if string_target and len(node.args) == 2:
                values.append(node.args[1])
            elif len(node.args) >= 3:
                values.append(node.args[2])
            return values
        return []

    def _bare_mock(self, node: ast.expr) -> str | None:
        if not isinstance(node, ast.Call) or node.args:
            return None
        name = self.ctx.call_name(node) or ""
        module, _, cls = name.rpartition(".")
        is_mock = cls in MOCK_CLASSES and (module in MOCK_MODULES or module.endswith("mocker"))
        if not is_mock or any(k.arg in ("spec", "spec_set") or k.arg is None for k in node.keywords):
            return None
        return cls
