"""HRM501: a test that asserts nothing."""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.nodes import FunctionNode
from flake8_hermetic.project import Role
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.design.claims import (
    comment_text,
    comments_above,
    declares_no_raise,
    runs_a_test,
    states_no_raise,
)
from flake8_hermetic.rules.design.control_flow import TRY_TYPES
from flake8_hermetic.rules.design.assertions import (
    ALWAYS_SKIPPED,
    ASSERTING_CALLS,
    AssertionFacts,
    CODE_RUNNERS,
    EXPECTS_FAILURE,
    PROPERTY_TESTS,
    SELF_NAMES,
    TESTCASE_NAMES,
    WARNING_FILTERS,
    asserts_in_text,
    client_half_asserts,
    fails_the_test,
    handed_functions,
    hands_asserting_code,
    hands_over_an_assertion,
    is_benchmark,
    is_docstring_or_pass,
    is_super_call,
    local_names,
    names_a_check,
    names_assertion,
    names_handed_check,
    only_passes,
    raising_keyword,
    runs_another_modules_test,
    switches_a_check_on,
    turns_into_errors,
)
from flake8_hermetic.rules.design.dropped import dropped_outcome
from flake8_hermetic.rules.design.skips import SKIP_EXCEPTIONS, skips
from flake8_hermetic.violation import Violation


class NoAssertionRule(Rule):
    """
    Flags a test that asserts nothing and drops an outcome it computed.

    A `test*` function or method is reported when nothing in its body (its
    nested functions included) can fail it on purpose: no `assert`, no
    `pytest.raises/warns/deprecated_call/fail`, no `self.assert*` or
    `self.fail*`, no mock `.assert_*()` call, no `raise AssertionError` (or
    `raise TestFailed`), no `warnings.simplefilter("error")` (every warning
    becomes a failure), no call of a function whose name contains `assert`,
    `check`, `verify` or `expect`, and no assertion method handed over as a
    callback (`d.addCallback(self.assertEqual, 1)`). A call of a helper
    defined in the same file counts when that helper asserts (followed
    through helpers calling helpers, through a class whose methods assert,
    and through a decorator of the file that wraps the test), and so does
    `super().test_x()`.

    Helpers of the test tree count as well (the project model reads them
    from source, see docs/project-model.md): a function or method of a
    support module, a conftest, a `pytest_plugins` module or a base class
    in another module that asserts, raises, calls `pytest.fail` or
    `self.fail*`/`self.assert*`, or calls such a helper, resolved through
    the file's imports (`from tests.helpers import run_ok`,
    `helpers.run_ok()`), through `self.` (a base class imported from a
    helper module) and through a fixture's value (`env.invoke()`, where
    the `env` fixture returns an instance of a project class whose
    `invoke` raises on a bad exit status). A `self.` method that neither
    the file nor the project defines, in a class derived from a base
    outside the project other than `unittest`'s (a test framework's
    `MemoryLeakTestCase.execute()`), cannot be read and is given the
    benefit of the doubt: it is counted as a check.

    **Only a test that drops an outcome is reported.** A test that only
    calls the code under test claims that it does not raise (a smoke
    test). One that computes an outcome and never looks at it has lost its
    assertion: `export(1) == 1` as a statement, `repr(obj)` as a
    statement, `rows = query()` or `with patch(...) as send:` with the
    name never read. The rest of this page says what counts as the test
    looking.

    Checks made another way count too:

    - a helper that raises on a mismatch: pytest's `LineMatcher`
      (`result.stdout.fnmatch_lines([...])`, `fnmatch_lines_random`,
      `no_fnmatch_line`, `re_match_lines`, `re_match_lines_random`,
      `no_re_match_line`) and `validate()` / `validate_*()` (jsonschema's
      validators, and most libraries' validate functions, raise on an
      invalid input; `is_valid()` returns a bool and does not count);
    - a call that is told to fail on a bad exit: `check=True`
      (`subprocess.run`), `exitcode=` (`support.wait_process(pid,
      exitcode=0)`);
    - a test of another module run from this one (`_testcapi.test_x()`),
      a helper whose name says "no exception" (`self.do_test_no_exception()`);
    - a check spelled out with `raise`: a raise under an `if` (`if code !=
      3: raise Exception(...)`, a bare re-raise after looking at `errno`),
      in the `else` of a `try`, or in a `try` whose handlers only `pass` (the
      test fails when the handler misses it); in the test or a helper of the
      file, not in a function nested in another (a fake that raises is the
      workload), and not a skip;
    - the CPython socket tests' client half: `testFoo()` runs the server,
      `_testFoo()` of the same class runs in a thread and holds the
      assertions.
    - a check that arrives later: a function of the file handed over as a
      value (`d.addCallback(self._check)`, `fut.add_done_callback(on_done)`,
      `Thread(target=self._worker)`) counts as called, and asserts when its
      body does; a method named as a check handed over
      (`d.addCallback(self.check_result)`) counts on its own;
    - a method of the test case that fails it by its name: `self.fail*()`,
      `*Fail*` (`self.assertFailure`), `*ResultOf` (Twisted's
      `successResultOf`/`failureResultOf`: the result, or a failed test);
    - a method of `self` the file does not define, inherited from a base
      class the project model cannot read (a package installed outside the
      project, other than unittest: a leak checker's
      `self.execute(self.proc.name)`): it gets the benefit of the doubt;
    - a callee told to check on the test's behalf: a keyword or attribute
      named `assert_*`/`*_assert_*` set to something other than
      `False`/`None` (`assert_fingerprint="AB:..."`,
      `pool.assert_hostname = "localhost"`);
    - code that carries its check: a `-c` code string with an `assert`
      handed to a runner of children (`self.run_python("-c", "assert x")`,
      not `subprocess.run` without `check=True`, which loses the exit
      status), or a string of code (an f-string, or a name bound to one
      in the same function) with an `assert` line or `pytest.raises` handed
      to a `run*` runner (`server.run_webworker(code)`);
    - `pytest.RaisesGroup`/`pytest.RaisesExc`, and pytest re-exported by the
      test package (`from . import pytest`: `pytest.raises`, `pytest.fail`,
      `raise pytest.skip(...)` are read as pytest's).

    Not reported: a test that always skips (an unconditional
    `pytest.skip()`, `pytest.xfail()`, `self.skipTest()`, `raise
    unittest.SkipTest`, or an unconditional skip decorator), one that only
    raises `NotImplementedError` (an abstract test), an empty body (`pass`
    or a docstring: a base-class test switched off in a subclass),
    `@unittest.expectedFailure` tests, hypothesis `@given` tests, and a
    benchmark test (one that requests pytest-benchmark's `benchmark`
    fixture and calls it: it measures speed, its report is the outcome). A
    module-level `test*` function is judged only in a module a runner
    collects functions from (`test*.py`, `*_test.py`): in `lock_tests.py`
    or `audit-tests.py` it is a helper or a script run by another test, and
    neither is a module-level `def testfunction(self, ...)` (a method body
    attached to a class later). The module names come from pytest's
    `python_files` in the project's configuration when it sets them
    (`check_*.py` makes `check_io.py` a collected module).

    A test whose claim is "this does not crash or raise" is not reported
    when it says so. In its name: `crash`, `segfault`, `hang`, `smoke`,
    `succeeds`, `success`, `works`, `ok`, `accepts`, `accepted`, `can`,
    `picklable`, `hashable`, `importable`, or `not raise`, `no error`, `no
    exception`, in snake or camel case (`test_no_crash_on_empty`,
    `testSpawnDoesntHang`, `test_overload_succeeds`). In its docstring, its
    comments or the comment block right above it: words for a crash
    (crash, segfault, hang, deadlock, "blows up", "buffer overflow",
    "assertion failure"), for a bug that raised ("used to raise", "this
    raised on 3.10", "resulted in SystemError", "would fail without", "was
    failing", "broke"), for a leak the refleak hunter catches ("leaked
    memory"), or for the claim itself ("shouldn't crash", "without error",
    "should work", "should succeed", "is allowed", "are accepted", "nothing
    happens"). A regression test named after the report it closes
    (`test_bpo31113`, `test_gh_12345`, `test_issue_4567`, `test_regression`)
    or that cites it (`# Issue #24581`, `bpo-45773`, `gh-99999`) claims the
    same: the bug it reproduces made the code fail. So do "without
    raising an exception", "exits cleanly" (also `cleanly` in the name),
    "would block forever", "failed assertion" (a quoted traceback), "must
    not kill", and an issue or pull-request URL (`.../issues/1115`). Words that only
    describe a value ("returns 3", "should return the rows") do not count:
    such a test stays reported.

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

    ## Off by default
    Turn it on with `--extend-select=HRM501` (or `extend-select` in the
    config) to audit a suite; it is not a gate. On suites it was never tuned
    on, most tests it reported did check something in a way the rule cannot
    read from the test tree: a harness of an installed base class, a child
    or worker that carries the assertion, a runner configuration that turns
    warnings into errors; and most of the rest were smoke tests whose claim,
    "this does not raise", a maintainer accepts as it stands. After the
    narrowing below and the project model (helpers of the test tree that
    assert count), 7 of the 27 findings left on the tuning half of the new
    suites were tests a maintainer would give an assertion (26%; 0 of 36 in
    three samples before the narrowing): far under the 80% a default-on
    rule must reach (docs/precision.md). To reach it, the rule would need
    to follow every callee into installed test frameworks and child
    processes and to read the runner's warning filters, and to tell a smoke
    test that states its claim in code from one that claims nothing.

    ## Options
    None.

    ## Known problems
    A smoke test that states no claim (`self.cx.commit()` and nothing
    else) is reported: state the claim in its name, docstring or a comment,
    or assert something about the outcome. The words are matched, not
    understood: a comment that mentions a crash it does not test silences
    the rule for that test.

    A helper outside the project (an installed library) cannot be read: it
    counts when its name says it checks (`assert`, `check`, `verify`,
    `expect`), raises (the list above) or runs a test
    (`self._test_roundtrip()`, `support.run_unittest()`), and not
    otherwise. Only module-level classes and functions of the project are
    followed, and a fixture's value only when the fixture returns or
    yields a call of a project class. Code
    with assertions handed to an in-process runner as a string
    (`_run_output(interp, "assert x")`) is not recognised either, except
    for `exec`/`eval`.
    """

    code = "HRM501"
    principles = ("dropped-outcome",)
    narrowed = ("it flagged every test that asserts nothing; it now flags one that also computes an outcome"
                " and drops it (a smoke test that only calls is left alone).")
    default_on = False
    # tests are what the runner collects: a helper module's test-named functions are not tests
    roles = frozenset({Role.TEST_MODULE})
    message = "test {name}() asserts nothing, so it passes whatever the code does; assert something about the outcome"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.facts: dict[int, AssertionFacts] = {}
        self.defined: set[str] = set()  # names of the functions and classes of this file
        self.tests: list[tuple[AssertionFacts, FunctionNode, str]] = []
        #: the file's classes by name: whether each has an imported base, itself or through a base
        #: names bound to a string of code with an ``assert`` line (for a runner)
        self._asserting_code_names: set[tuple[int, str]] = set()
        #: innermost scope (id) -> the facts of the functions around it, outermost first
        self._chains: dict[int, tuple[AssertionFacts, ...]] = {}
        #: each method (id) -> its class, noted as the walk meets it (the marks of a silent test's class)
        self._classes: dict[int, ast.ClassDef] = {}
        basename = os.path.basename(ctx.path)
        self.judged = basename != "conftest.py"
        # a module-level test* function is collected from a module named as pytest's python_files say
        # (test_*.py / *_test.py unless configured): in lock_tests.py, a library of TestCase classes,
        # or audit-tests.py it is a helper or a script
        self.collects_functions = ctx.project.collects_functions

    # -- the defs ------------------------------------------------------------
    def visit_FunctionDef(self, node: FunctionNode) -> Iterator[Violation]:
        defaults = (*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None))
        if any(names_assertion(default) for default in defaults):
            self._mark_asserting()  # def check(v, test_fn=self.assertEqual) inside a test
        enclosing = self.ctx.scope
        owner = None
        if enclosing.kind == "class":
            owner = self.facts.get(id(enclosing.node))
            self._classes[id(node)] = enclosing.node  # type: ignore[assignment]
        facts = AssertionFacts(node.name, owner=owner)
        self.facts[id(node)] = facts
        self.defined.add(node.name)
        scope = self.ctx.scope_of(node)
        # a test def inside a function is never collected
        collected = scope.is_test and all(s.kind != "function" for s in self.ctx.scopes)
        if self.ctx.scope.kind == "module":
            # ``def testfunction(self, ...)`` at module level is a method body waiting for its class
            takes_self = bool(node.args.args) and node.args.args[0].arg == "self"
            collected = collected and self.collects_functions and not takes_self
        if self.judged and collected and not self._exempt(node):
            for decorator in node.decorator_list:
                # a decorator of this file may wrap the body in the real check (``@jump_test(1, 3, [3])``)
                wrapper = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(wrapper, ast.Name) and not self.ctx.resolver.is_bound(wrapper.id):
                    facts.add_callee(wrapper.id)
            self.tests.append((facts, node, self.ctx.where_of(node)))
        return iter(())

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> Iterator[Violation]:
        facts = AssertionFacts(node.name)
        self.facts[id(node)] = facts
        self.defined.add(node.name)
        return iter(())

    def _exempt(self, node: FunctionNode) -> bool:
        """A decorator skips the test, expects it to fail or makes it a
        property test (read where the decorators are evaluated)."""
        for decorator in node.decorator_list:
            name = self.ctx.resolve(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""
            if name in ALWAYS_SKIPPED or name in EXPECTS_FAILURE or name in PROPERTY_TESTS:
                return True
        return False

    def _exempt_by_body(self, node: FunctionNode) -> bool:
        """The name says "does not raise", or the body is empty or always
        skips. Asked after the walk, and only of a test that asserts
        nothing: most tests never need it."""
        if declares_no_raise(node.name) or is_benchmark(node) or self._marked_benchmark(node):
            return True
        if all(is_docstring_or_pass(stmt) for stmt in node.body):
            return True
        return any(self._always_skips(stmt) for stmt in node.body)

    def _marked_benchmark(self, node: FunctionNode) -> bool:
        """The test is marked a benchmark (pytest-codspeed's ``@pytest.mark.benchmark``), on
        itself, its class or the module's ``pytestmark``: it measures, its report is the outcome."""
        marks: list[ast.expr] = list(node.decorator_list)
        scopes: list[list[ast.stmt]] = [self.ctx.tree.body]  # type: ignore[attr-defined]
        owner = self._classes.get(id(node))
        if owner is not None:
            marks.extend(owner.decorator_list)
            scopes.append(owner.body)
        for body in scopes:
            for stmt in body:
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
                ):
                    marks.extend(stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value])
        return any(
            self.ctx.resolve(mark.func if isinstance(mark, ast.Call) else mark) == "pytest.mark.benchmark"
            for mark in marks
        )

    def _always_skips(self, stmt: ast.stmt) -> bool:
        """An unconditional skip, or ``raise NotImplementedError``, at the top of the body."""
        if skips(self.ctx, stmt):
            return True
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            return self.ctx.resolve(exc) == "NotImplementedError"
        return False

    # -- what the bodies do ----------------------------------------------------
    def _enclosing_facts(self) -> tuple[AssertionFacts, ...]:
        """The facts of the functions the walk is in (the same for every node
        of one scope: kept per innermost scope)."""
        key = id(self.ctx.scope.node)
        chain = self._chains.get(key)
        if chain is None:
            chain = self._chains[key] = tuple(
                facts for scope in self.ctx.scopes if scope.kind == "function"
                for facts in [self.facts.get(id(scope.node))] if facts is not None
            )
        return chain

    def _mark_asserting(self) -> None:
        for facts in self._enclosing_facts():
            facts.asserts = True

    def visit_Assert(self, node: ast.Assert) -> Iterator[Violation]:
        self._mark_asserting()
        return iter(())

    def visit_Raise(self, node: ast.Raise) -> Iterator[Violation]:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if exc is None:
            # except OSError as error: if error.errno != errno.EBADF: raise
            if self._checks_by_raising(node, None):
                self._mark_asserting()
            return iter(())
        name = last_name(node.exc)
        if name in ("AssertionError", "failureException") or name.endswith(("Failed", "Failure")):
            self._mark_asserting()  # raise AssertionError, raise support.TestFailed(...)
        elif self._checks_by_raising(node, exc):
            self._mark_asserting()
        return iter(())

    def _checks_by_raising(self, node: ast.Raise, exc: ast.expr | None) -> bool:
        """``if code != 3: raise Exception(...)`` in a test or a helper of the
        file: a check spelled out. A raise in a function nested inside another
        is left out (a fake that raises is the workload), and so are skips."""
        functions = [scope for scope in self.ctx.scopes if scope.kind == "function"]
        if len(functions) != 1:
            return False
        resolved = (self.ctx.resolve(exc) or last_name(node.exc)) if exc is not None else ""
        if resolved in SKIP_EXCEPTIONS or resolved == "NotImplementedError" or "Skip" in resolved:
            return False
        for ancestor, child in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, ast.If):
                return True
            if not isinstance(ancestor, TRY_TYPES):
                continue
            attempt: ast.Try = ancestor  # type: ignore[assignment]  # ast.TryStar (3.11+) has the same fields
            if any(child is stmt for stmt in attempt.orelse):
                return True  # try: f() / except X: pass / else: raise
            if any(child is stmt for stmt in attempt.body):
                # try: raise x() / except all_errors: pass -- fails when the handler misses it
                return bool(attempt.handlers) and all(only_passes(h.body) for h in attempt.handlers)
        return False

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        # an assertion method bound to a short name: eq = self.assertEqual
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        if any(names_assertion(value) for value in values):
            self._mark_asserting()
        # pool.assert_hostname = "localhost": the object is told to check on the test's behalf
        elif any(switches_a_check_on(target, node.value) for target in node.targets):
            self._mark_asserting()
        # code = f"""... assert x ...""": a string of code that asserts, for a runner later
        elif isinstance(node.value, (ast.Constant, ast.JoinedStr, ast.Call)) and asserts_in_text(node.value):
            scope = id(self.ctx.scope.node)
            self._asserting_code_names.update((scope, t.id) for t in node.targets if isinstance(t, ast.Name))
        return iter(())

    def _settled(self) -> bool:
        """Every function around the node asserts (or there is none): nothing
        a call adds can change a verdict, since marking, callees and test
        helpers only ever set ``asserts`` on these same functions. Most calls
        of a test come after its first assertion."""
        for facts in self._enclosing_facts():  # asked on every call: a loop, no generator
            if not facts.asserts:
                return False
        return True

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self._settled():
            return iter(())
        func = node.func
        last = last_name(node)
        if self._fails_by_itself(node, last):
            self._mark_asserting()
            return iter(())
        if runs_a_test(last):
            if runs_another_modules_test(func):
                self._mark_asserting()  # _testcapi.test_buildvalue_N(): a test of another module
                return iter(())
            for facts in self._enclosing_facts():
                facts.add_test_helper(last)
        if hands_over_an_assertion(node) or names_handed_check(node) or hands_asserting_code(
            node, self.ctx.call_name(node)
        ):
            self._mark_asserting()
            return iter(())
        handed_names = list(handed_functions(node))
        if handed_names:
            function = self.ctx.function
            local = self.ctx.per_function(function, local_names, names=False) if function is not None else set()
            for handed in handed_names:
                # a local (a parameter, a nested def: its asserts already count) is not a helper of the file
                if handed not in local and not self.ctx.resolver.is_bound(handed):
                    self._record_callee(handed)
        if isinstance(func, ast.Attribute):
            self._judge_method_call(func.value, last)
            self._record_outside(node, func.value, last)
        elif isinstance(func, ast.Name) and not self.ctx.resolver.is_bound(func.id):
            self._record_callee(func.id)
        elif isinstance(func, ast.Name):
            self._record_outside(node, None, last)
        return iter(())

    def _record_outside(self, node: ast.Call, receiver: ast.expr | None, last: str) -> None:
        """A helper of the test tree the project model may read: an imported
        function or module attribute (``helpers.check_output()``), or a
        method on a parameter (``env.invoke()``, ``env`` a fixture)."""
        reference: tuple[str, ...]
        if receiver is None or (isinstance(receiver, ast.Name) and self.ctx.resolver.is_bound(receiver.id)):
            reference = ("dotted", self.ctx.call_name(node) or "")
        elif isinstance(receiver, ast.Name) and receiver.id not in SELF_NAMES:
            if not self._is_parameter(receiver.id):
                return
            reference = ("fixture", receiver.id, last)
        elif isinstance(receiver, ast.Name) and last not in self.defined:
            reference = ("self", last)  # a method of a base class in another module
        else:
            return
        for facts in self._enclosing_facts():
            facts.add_outside(reference)

    def _fails_by_itself(self, node: ast.Call, last: str) -> bool:
        """The call can fail the test whatever it is given: an assertion
        helper by its name, ``pytest.raises``, a raising checker
        (``result.stdout.fnmatch_lines([...])``, ``check=True``), a helper
        named "no exception", warnings turned into errors, or a string of
        code with an ``assert`` run in this process."""
        name = self.ctx.call_name(node)
        if name is not None and name.startswith("."):
            name = name.lstrip(".")  # a test package that re-exports pytest: ``from . import pytest``
        if names_a_check(last) or name in ASSERTING_CALLS or raising_keyword(node):
            return True
        if name in WARNING_FILTERS and turns_into_errors(node):
            return True  # any warning now fails the test
        # the test's code is in the string: interp.run(dedent("assert ...")), server.run_webworker(code)
        if not node.args or not (last in CODE_RUNNERS or last.startswith("run_")):
            return False
        code = node.args[0]
        if isinstance(code, ast.Name):
            return (id(self.ctx.scope.node), code.id) in self._asserting_code_names
        return asserts_in_text(code)

    def _judge_method_call(self, receiver: ast.expr, last: str) -> None:
        """``self.fail*()``, ``super().test_x()`` (the inherited test holds
        the assertion), or a call of a method the file may define."""
        if isinstance(receiver, ast.Name) and receiver.id in TESTCASE_NAMES and fails_the_test(last):
            self._mark_asserting()
        elif is_super_call(receiver) and last.startswith("test"):
            self._mark_asserting()
        elif (isinstance(receiver, ast.Name) and receiver.id in SELF_NAMES) or is_super_call(receiver):
            self._record_callee(last)

    def _is_parameter(self, name: str) -> bool:
        """``name`` is a parameter of a function around the call (a test's fixture)."""
        for scope in self.ctx.scopes:
            if scope.kind == "function":
                arguments = scope.node.args  # type: ignore[attr-defined]
                if any(a.arg == name for a in (*arguments.args, *arguments.kwonlyargs)):
                    return True
        return False

    def _record_callee(self, name: str) -> None:
        for facts in self._enclosing_facts():
            facts.add_callee(name)

    # -- the verdict -----------------------------------------------------------
    def finish(self) -> Iterator[Violation]:
        if any(not facts.asserts for facts, _, _ in self.tests):
            self._ask_the_project()
        self._spread_assertions()
        methods = {(id(facts.owner), facts.name): facts for facts in self.facts.values() if facts.owner}
        for facts, node, where in self.tests:
            if facts.asserts or client_half_asserts(facts, methods):
                continue
            if (
                not self._exempt_by_body(node)
                and not self._states_its_claim(node)
                and dropped_outcome(node) is not None
            ):
                # reported at the def; the baseline's what is the test's first statement (a call,
                # mostly), not the def line and its docstring
                acting = next((stmt for stmt in node.body if not is_docstring_or_pass(stmt)), node)
                yield dataclasses.replace(self.report(node, name=node.name), where=where, node=acting)

    def _ask_the_project(self) -> None:
        """Helpers of the test tree (support modules, conftests, the
        ``pytest_plugins`` modules, a base class in another module) that
        assert, raise or fail the test count as the test's assertion: the
        project model reads them, and the helpers they call, from source."""
        project = self.ctx.project
        for facts in self._reachable_from_silent_tests():
            if facts.asserts:
                continue
            owner = facts.owner.name if facts.owner is not None else None
            for reference in facts.outside or ():
                if reference[0] == "dotted":
                    hit = bool(reference[1]) and project.is_asserting_helper(reference[1])
                elif reference[0] == "self":
                    # a method the file defines is the file's own helper: the spread below judges it
                    hit = owner is not None and reference[1] not in self.defined and (
                        project.is_asserting_method(owner, reference[1]) or project.inherits_unread(owner, reference[1])
                    )
                else:
                    hit = project.fixture_method_asserts(reference[1], reference[2])
                if hit:
                    facts.asserts = True
                    break

    def _reachable_from_silent_tests(self) -> list[AssertionFacts]:
        """The tests that assert nothing so far, and the functions of the
        file they call, directly or not: only those can change a verdict."""
        by_name: dict[str, list[AssertionFacts]] = {}
        for facts in self.facts.values():
            by_name.setdefault(facts.name, []).append(facts)
        pending = [facts for facts, _, _ in self.tests if not facts.asserts]
        seen = {id(facts) for facts in pending}
        found = []
        while pending:
            facts = pending.pop()
            found.append(facts)
            for callee in facts.callees or ():
                for helper in by_name.get(callee, ()):
                    if id(helper) not in seen:
                        seen.add(id(helper))
                        pending.append(helper)
        return found

    def _spread_assertions(self) -> None:
        """A function asserts when a helper of the file it calls asserts, a
        class when one of its methods does, and a function that calls a test
        helper of another module (``self._test_encoding()``,
        ``enum._test_simple_enum()``) asserts through it."""
        callers: dict[str, list[AssertionFacts]] = {}
        for facts in self.facts.values():
            for callee in facts.callees or ():
                callers.setdefault(callee, []).append(facts)
            if any(name not in self.defined for name in facts.test_helpers or ()):
                facts.asserts = True
        pending = [facts for facts in self.facts.values() if facts.asserts]
        while pending:
            helper = pending.pop()
            for caller in (*callers.get(helper.name, ()), *([helper.owner] if helper.owner else [])):
                if not caller.asserts:
                    caller.asserts = True
                    pending.append(caller)

    def _states_its_claim(self, node: FunctionNode) -> bool:
        """The docstring, the string statements and the comments of the test
        (and the comment block above it) say "this does not crash or raise"."""
        texts = [
            stmt.value.value for stmt in node.body
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        ]
        first = min((d.lineno for d in node.decorator_list), default=node.lineno)
        texts.append(comments_above(self.ctx.lines, first))
        texts.append(comment_text(self.ctx.lines, node.lineno, node.end_lineno or node.lineno))
        return states_no_raise(" ".join(texts))


#: pytest-benchmark's fixtures: a test that runs one measures, and its report is the outcome
