"""HRM5xx: test design that hides what a test proves."""

from __future__ import annotations

import ast
import dataclasses
import io
import os
import re
import tokenize
from collections.abc import Iterator, Sequence
from functools import lru_cache

from flake8_hermetic.context import Context
from flake8_hermetic.nodes import FunctionNode
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation

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
# words of a test's name that state "this call goes through" (``test_overload_succeeds``, ``test_is_picklable``)
SUCCESS_WORDS = frozenset(
    {"succeeds", "success", "works", "ok", "accepts", "accepted", "can", "picklable", "pickleable", "hashable", "importable"}
)
NO_RAISE_PAIRS = frozenset(
    {("not", "raise"), ("not", "raises"), ("doesnt", "raise"), ("no", "error"), ("no", "errors"), ("no", "exception"), ("no", "exceptions")}
)
# What a docstring or comment says when the test's claim is "this (no longer) crashes or raises".
# Only words that make sense for that claim: "should return 3" in a test that looks at nothing stays flagged.
_BAD_OUTCOME = r"(?:raise|fail|crash|error|exception|throw|blow|break|die|abort|segfault|hang|deadlock|overflow|choke|leak)"
NO_RAISE_TEXT = re.compile(
    "|".join(
        (
            # the bug was a crash
            r"\bcrash", r"\bseg(?:mentation)?[ -]?faults?\b", r"\bdumps? core\b", r"\bcore dump",
            r"\bhang(?:s|ing)?\b", r"\bdeadlock", r"\bblow(?:s|n)? up\b",
            r"\b(?:stack|buffer|memory|heap) (?:overflow|overrun|overread)", r"\buse[- ]after[- ]free\b",
            r"\binfinite (?:loop|recursion)", r"\bassert(?:ion)?[- ](?:fail|error)", r"\bsmoke[- ]test",
            # the bug was an exception: "used to raise", "this raised on 3.10", "resulted in SystemError"
            rf"\bused to (?:erroneously )?{_BAD_OUTCOME}", r"\b(?:would|used to) assert\b", rf"\b(?:would|could|will) (?:\w+ )?{_BAD_OUTCOME}",
            r"\b(?:this|it|which) (?:raised|threw|failed)\b", r"\bresulted in \w*(?:error|exception|fault)",
            r"\b(?:fails|failed|raises|raised|crashes|crashed) (?:when|with|if|on)\b", r"\bdid not work\b",
            r"\b(?:was|were) failing\b", r"\bbroke\b",
            # a leak the refleak hunter (regrtest -R) catches: "super.__init__ leaked memory"
            r"\b(?:ref(?:erence)?[- ]?)?leak(?:s|ed|ing)?\b",
            r"\bleads? to\W+\w*(?:error|exception)", r"\b(?:raised|threw)\W+\w*(?:error|exception)",
            r"\bcause[sd]?\b[^.]{0,40}\bto raise\b",
            # the claim spelled out: "shouldn't raise", "without error", "should work", "is allowed"
            rf"\b(?:not|never|no longer) (?:\w+ )?{_BAD_OUTCOME}", r"\bno (?:error|exception|crash|failure)s?\b",
            r"\bwithout (?:an? |any )?(?:error|exception|crash|failure|problem)s?\b",
            r"\bnot an error\b", r"\bruns? cleanly\b", r"\bfall apart\b",
            r"\b(?:should|must|can|will|needs? to) (?:still |also |now |simply |always )?"
            r"(?:work|succeed|compile ok|handle|hide|cope|be able|accept|be supported)",
            r"\b(?:should|must|is|are|it's) (?:also |still )?(?:be )?(?:ok|okay|fine|allowed|accepted|possible|supported)\b",
            r"\b(?:should|must) pass\b", r"\bcan (?:still |also )?be \w+(?:ed|en)\b",
            r"\bworks\b", r"\bwork\s*(?:[.!]|$)", r"\bsucceed(?:s|ed)?\b", r"\bnothing happens\b",
            r"\bsilent(?:ly)?\b",
        )
    )
)
# a regression test named after the report it closes: its claim is "this no longer fails"
REGRESSION_NAME = re.compile(r"(?:bpo|gh|issue|bug)_?\d{3,}|(?:^|_)regression(?:_|$)", re.IGNORECASE)
REGRESSION_TEXT = re.compile(r"\b(?:bpo|gh|issue|bug)\s?[-#:]?\s?#?\d{3,}|\bregression\b|(?:^|\s)#\d{4,}\b", re.IGNORECASE)
# doesn't, shouldn't, won't, and the same without the apostrophe
_NOT = re.compile(r"n['\u2019]t\b|\b(do|does|did|should|would|could|must|is|are|was|were)nt\b")
# run a string of code in this process (an interpreter, a subinterpreter): its failed assert fails the test
CODE_RUNNERS = frozenset({"exec", "eval", "run", "run_string", "run_code", "_run_output"})
# pytest's LineMatcher (``result.stdout.fnmatch_lines([...])``): each one fails the test on a mismatch
RAISING_HELPERS = frozenset(
    {"fnmatch_lines", "fnmatch_lines_random", "no_fnmatch_line", "re_match_lines", "re_match_lines_random", "no_re_match_line"}
)
# validate(), validate_rule(), _validate_marker_names(): raise on an invalid input (is_valid() returns a bool)
RAISING_PREFIX = re.compile(r"_?validate(?:_|$)")


@dataclasses.dataclass(slots=True)
class FunctionFacts:
    """What the walk saw inside one function (its nested defs included).

    One per def and class of the file: slotted, and the sets made on first
    use, so a file of many small tests costs the garbage collector little."""

    name: str
    asserts: bool = False
    #: functions and classes of this file it calls, by name
    callees: set[str] | None = None
    #: called names that contain "test": helpers that run a test, asserting inside
    test_helpers: set[str] | None = None
    #: for a method, its class: a class asserts when one of its methods does
    owner: FunctionFacts | None = None

    def add_callee(self, name: str) -> None:
        if self.callees is None:
            self.callees = set()
        self.callees.add(name)

    def add_test_helper(self, name: str) -> None:
        if self.test_helpers is None:
            self.test_helpers = set()
        self.test_helpers.add(name)


def _words(name: str) -> list[str]:
    """``testSpawnDoesntHang`` and ``test_spawn_doesnt_hang`` -> test, spawn, doesnt, hang."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]


def declares_no_raise(name: str) -> bool:
    """Whether a test's name says its claim is "this does not raise"
    (``test_no_crash_on_empty``, ``test_parse_does_not_raise``, ``testSpawnDoesntHang``)."""
    words = _words(name)
    if NO_RAISE_WORDS.intersection(words) or SUCCESS_WORDS.intersection(words):
        return True
    if REGRESSION_NAME.search(name):
        return True
    return _says_no_raise(words)


def _says_no_raise(words: list[str]) -> bool:
    return any(pair in NO_RAISE_PAIRS for pair in zip(words, words[1:]))


def states_no_raise(text: str) -> bool:
    """Whether a docstring or comment says the test's claim is that the code
    no longer crashes or raises ("used to raise SystemError", "shouldn't
    crash", "A crash ensued", "should work when no changes were made")."""
    text = _NOT.sub(lambda match: f"{match.group(1) or ''} not", text.lower())
    text = " ".join(text.split())
    return NO_RAISE_TEXT.search(text) is not None or REGRESSION_TEXT.search(text) is not None


def _comment_text(lines: Sequence[str], first: int, last: int) -> str:
    """The comments of lines ``first..last`` (1-based), tokenized on their own."""
    chunk = "".join(lines[first - 1:last])
    if "#" not in chunk:
        return ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(chunk).readline))
    except (tokenize.TokenError, SyntaxError):
        return ""
    return " ".join(token.string.lstrip("#") for token in tokens if token.type == tokenize.COMMENT)


def _comments_above(lines: Sequence[str], line: int) -> str:
    """The block of comment lines right above ``line`` (1-based)."""
    above = []
    for index in range(line - 2, -1, -1):
        stripped = lines[index].strip() if index < len(lines) else ""
        if not stripped.startswith("#"):
            break
        above.append(stripped.lstrip("#"))
    return " ".join(reversed(above))


def _code_text(node: ast.expr) -> str:
    """The text of a string argument, also through ``dedent("...")``."""
    if isinstance(node, ast.Call) and _last_name(node.func) == "dedent" and node.args:
        node = node.args[0]
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _raising_keyword(call: ast.Call) -> bool:
    """``check=True`` (``subprocess.run``) or ``exitcode=`` (``support.wait_process``): the call fails the test."""
    for keyword in call.keywords:
        if keyword.arg == "exitcode":
            return True
        if keyword.arg == "check" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
            return True
    return False


@lru_cache(maxsize=4096)  # asked for every call in a test, of a few hundred distinct names
def runs_a_test(name: str) -> bool:
    """Whether a helper's name says it runs a test (``_test_roundtrip``,
    ``runTest``, ``run_unittest``, ``testmod``), not ``get_latest``, and not
    a class (``unittest.SkipTest``, ``TestSuite``)."""
    if name[:1].isupper():
        return False
    return any(w.startswith("test") or w in ("unittest", "doctest") for w in _words(name))


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _is_docstring_or_pass(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _only_passes(body: list[ast.stmt]) -> bool:
    return all(isinstance(stmt, (ast.Pass, ast.Continue)) for stmt in body)


class NoAssertionRule(Rule):
    """
    Flags a test that asserts nothing.

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

    Not reported: a test that always skips (an unconditional
    `pytest.skip()`, `pytest.xfail()`, `self.skipTest()`, `raise
    unittest.SkipTest`, or an unconditional skip decorator), one that only
    raises `NotImplementedError` (an abstract test), an empty body (`pass`
    or a docstring: a base-class test switched off in a subclass),
    `@unittest.expectedFailure` tests, and hypothesis `@given` tests. A
    module-level `test*` function is judged only in a module a runner
    collects functions from (`test*.py`, `*_test.py`): in `lock_tests.py`
    or `audit-tests.py` it is a helper or a script run by another test, and
    neither is a module-level `def testfunction(self, ...)` (a method body
    attached to a class later).

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
    same: the bug it reproduces made the code fail. Words that only
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

    ## Options
    None.

    ## Known problems
    A smoke test that states no claim (`self.cx.commit()` and nothing
    else) is reported: state the claim in its name, docstring or a comment,
    or assert something about the outcome. The words are matched, not
    understood: a comment that mentions a crash it does not test silences
    the rule for that test.

    A helper imported from another module cannot be read: it counts when
    its name says it checks (`assert`, `check`, `verify`, `expect`), raises
    (the list above) or runs a test (`self._test_roundtrip()`,
    `support.run_unittest()`), and not otherwise, so a fixture's
    `venv.run([...])` that fails on a non-zero exit is not recognised. Code
    with assertions handed to an in-process runner as a string
    (`_run_output(interp, "assert x")`) is not recognised either, except
    for `exec`/`eval`.
    """

    code = "HRM501"
    message = "test {name}() asserts nothing, so it passes whatever the code does; assert something about the outcome"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.facts: dict[int, FunctionFacts] = {}
        self.defined: set[str] = set()  # names of the functions and classes of this file
        self.tests: list[tuple[FunctionFacts, FunctionNode, str]] = []
        #: innermost scope (id) -> the facts of the functions around it, outermost first
        self._chains: dict[int, tuple[FunctionFacts, ...]] = {}
        basename = os.path.basename(ctx.path)
        self.judged = basename != "conftest.py"
        # a module-level test* function is collected from test*.py / *_test.py only (pytest's and
        # unittest's defaults): in lock_tests.py or audit-tests.py it is a helper or a script
        self.collects_functions = basename.startswith("test") or basename.endswith("_test.py")

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
        facts = FunctionFacts(node.name)
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
        if declares_no_raise(node.name):
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
    def _enclosing_facts(self) -> tuple[FunctionFacts, ...]:
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
        name = _last_name(exc)
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
        resolved = (self.ctx.resolve(exc) or _last_name(exc)) if exc is not None else ""
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
                return bool(attempt.handlers) and all(_only_passes(h.body) for h in attempt.handlers)
        return False

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        # an assertion method bound to a short name: eq = self.assertEqual
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        if any("assert" in _last_name(value).lower() for value in values):
            self._mark_asserting()
        return iter(())

    def _settled(self) -> bool:
        """Every function around the node asserts (or there is none): nothing
        a call adds can change a verdict, since marking, callees and test
        helpers only ever set ``asserts`` on these same functions. Most calls
        of a test come after its first assertion."""
        return all(facts.asserts for facts in self._enclosing_facts())

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if self._settled():
            return iter(())
        func = node.func
        last = _last_name(func)
        name = self.ctx.call_name(node)
        if ASSERTING_WORDS.search(last) or NO_RAISE_HELPER.search(last) or name in ASSERTING_CALLS:
            self._mark_asserting()
            return iter(())
        no_raise_helper = ("no" in last.lower() or "doesnt" in last.lower()) and _says_no_raise(_words(last))
        raising = last in RAISING_HELPERS or RAISING_PREFIX.match(last) is not None
        if raising or _raising_keyword(node) or no_raise_helper:
            self._mark_asserting()  # result.stdout.fnmatch_lines([...]), self.do_test_no_exception()
            return iter(())
        if name in WARNING_FILTERS and _turns_into_errors(node):
            self._mark_asserting()  # any warning now fails the test
            return iter(())
        if last in CODE_RUNNERS and node.args and "assert" in _code_text(node.args[0]):
            self._mark_asserting()  # the test's code is in the string: interp.run(dedent("assert ..."))
            return iter(())
        if runs_a_test(last):
            receiver = func.value if isinstance(func, ast.Attribute) else None
            if receiver is not None and not (isinstance(receiver, ast.Name) and receiver.id in SELF_NAMES):
                if not _is_super_call(receiver):
                    self._mark_asserting()  # _testcapi.test_buildvalue_N(): a test of another module
                    return iter(())
            for facts in self._enclosing_facts():
                facts.add_test_helper(last)
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
            facts.add_callee(name)

    # -- the verdict -----------------------------------------------------------
    def finish(self) -> Iterator[Violation]:
        callers: dict[str, list[FunctionFacts]] = {}
        for facts in self.facts.values():
            for callee in facts.callees or ():
                callers.setdefault(callee, []).append(facts)
        for facts in self.facts.values():
            # a test helper of another module (``self._test_encoding()``, ``enum._test_simple_enum()``)
            if any(name not in self.defined for name in facts.test_helpers or ()):
                facts.asserts = True
        pending = [facts for facts in self.facts.values() if facts.asserts]
        while pending:
            helper = pending.pop()
            related = [*callers.get(helper.name, ()), *([helper.owner] if helper.owner else [])]
            for caller in related:
                if not caller.asserts:
                    caller.asserts = True
                    pending.append(caller)
        methods = {(id(facts.owner), facts.name): facts for facts in self.facts.values() if facts.owner}
        for facts, node, where in self.tests:
            if facts.asserts:
                continue
            # socket tests: testFoo() is the server half, _testFoo() the client half run in a thread
            partner = methods.get((id(facts.owner), f"_{facts.name}")) if facts.owner else None
            if partner is not None and partner.asserts:
                continue
            if not self._exempt_by_body(node) and not self._states_its_claim(node):
                yield dataclasses.replace(self.report(node, name=node.name), where=where)

    def _states_its_claim(self, node: FunctionNode) -> bool:
        """The docstring, the string statements and the comments of the test
        (and the comment block above it) say "this does not crash or raise"."""
        texts = [
            stmt.value.value for stmt in node.body
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        ]
        first = min((d.lineno for d in node.decorator_list), default=node.lineno)
        texts.append(_comments_above(self.ctx.lines, first))
        texts.append(_comment_text(self.ctx.lines, node.lineno, node.end_lineno or node.lineno))
        return states_no_raise(" ".join(texts))


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
