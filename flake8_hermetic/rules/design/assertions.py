"""What HRM501 reads in a test: its assertion facts and the calls that check, hand over or fail."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.nodes import FunctionNode
from flake8_hermetic.rules.design.claims import (
    NO_RAISE_HELPER,
    name_words,
    says_no_raise,
)


ASSERTING_CALLS = frozenset(
    {"pytest.raises", "pytest.warns", "pytest.deprecated_call", "pytest.fail", "pytest.RaisesGroup", "pytest.RaisesExc"}
)
#: a keyword that tells the callee to check on the test's behalf (``assert_fingerprint=``, ``proxy_assert_hostname=``)
CHECKING_KEYWORD = re.compile(r"(?:^|_)assert(?:_|$)")
ASSERTING_WORDS = re.compile(r"assert|check|verify|expect", re.IGNORECASE)


# decorators after which the body's outcome is judged by the decorator, or never runs
ALWAYS_SKIPPED = frozenset({"pytest.mark.skip", "unittest.skip"})
EXPECTS_FAILURE = frozenset({"unittest.expectedFailure", "unittest.case.expectedFailure"})
PROPERTY_TESTS = frozenset({"hypothesis.given"})
WARNING_FILTERS = frozenset({"warnings.simplefilter", "warnings.filterwarnings"})
SELF_NAMES = frozenset({"self", "cls"})
# names a TestCase is passed around under, for ``test.fail(...)`` in a module-level helper
TESTCASE_NAMES = SELF_NAMES | {"test", "testcase", "test_case", "tc", "case"}


# run a string of code in this process (an interpreter, a subinterpreter): its failed assert fails the test
CODE_RUNNERS = frozenset({"exec", "eval", "run", "run_string", "run_code", "_run_output"})
# pytest's LineMatcher (``result.stdout.fnmatch_lines([...])``): each one fails the test on a mismatch
RAISING_HELPERS = frozenset(
    {"fnmatch_lines", "fnmatch_lines_random", "no_fnmatch_line", "re_match_lines", "re_match_lines_random", "no_re_match_line"}
)
# validate(), validate_rule(), _validate_marker_names(): raise on an invalid input (is_valid() returns a bool)
RAISING_PREFIX = re.compile(r"_?validate(?:_|$)")


@dataclasses.dataclass(slots=True)
class AssertionFacts:
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
    owner: AssertionFacts | None = None
    #: calls the project model may resolve: ("dotted", canonical name) of an
    #: imported helper, ("self", method) of a method the file does not define,
    #: ("fixture", receiver, method) of a method on a parameter
    outside: list[tuple[str, ...]] | None = None

    def add_outside(self, reference: tuple[str, ...]) -> None:
        if self.outside is None:
            self.outside = []
        self.outside.append(reference)

    def add_callee(self, name: str) -> None:
        if self.callees is None:
            self.callees = set()
        self.callees.add(name)

    def add_test_helper(self, name: str) -> None:
        if self.test_helpers is None:
            self.test_helpers = set()
        self.test_helpers.add(name)


def code_text(node: ast.expr) -> str:
    """The text of a string argument, also through ``dedent("...")``."""
    if isinstance(node, ast.Call) and last_name(node) == "dedent" and node.args:
        node = node.args[0]
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def raising_keyword(call: ast.Call) -> bool:
    """``check=True`` (``subprocess.run``) or ``exitcode=`` (``support.wait_process``): the call fails the test;
    so does a keyword that tells the callee to check something (``assert_fingerprint="AB:CD..."``,
    ``proxy_assert_hostname=host``), unless it switches the check off (``False``, ``None``)."""
    for keyword in call.keywords:
        arg = keyword.arg
        if arg is None:
            continue
        if arg == "exitcode":
            return True
        value = keyword.value
        if arg == "check":
            if isinstance(value, ast.Constant) and value.value is True:
                return True
        elif CHECKING_KEYWORD.search(arg) and not (isinstance(value, ast.Constant) and value.value in (False, None)):
            return True
    return False


ASSERT_LINE = re.compile(r"^\s*(?:with pytest\.raises\(|pytest\.fail\()", re.MULTILINE)


def asserts_in_text(node: ast.expr) -> bool:
    """A string (an f-string, also through ``dedent(...)``) of code that
    asserts (``assert``, ``self.assertEqual``) or expects a raise
    (``pytest.raises``): the check travels in the code."""
    if isinstance(node, ast.Call) and last_name(node) == "dedent" and node.args:
        node = node.args[0]
    if isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    else:
        text = code_text(node)
    # any assertion spelled in the code (``assert``, ``self.assertEqual``), or pytest's raises/fail
    return "assert" in text or ("pytest" in text and ASSERT_LINE.search(text) is not None)


def names_assertion(node: ast.AST) -> bool:
    """``self.assertEqual`` as a value (a default, a callback, a short name
    for it), not the result of a call. (On every argument of every call
    until the test asserts: exact types, no generic name helper.)"""
    kind = type(node)
    if kind is ast.Attribute:
        return "assert" in node.attr.lower()  # type: ignore[attr-defined]
    return kind is ast.Name and "assert" in node.id.lower()  # type: ignore[attr-defined]


def hands_over_an_assertion(call: ast.Call) -> bool:
    """``d.addCallback(self.assertEqual, 1)``: an assertion method handed over as a callback."""
    for argument in call.args:
        if names_assertion(argument):
            return True
    for keyword in call.keywords:
        if names_assertion(keyword.value):
            return True
    return False


def handed_functions(call: ast.Call) -> Iterator[str]:
    """The names of functions handed over as values: ``d.addCallback(self.check)``,
    ``fut.add_done_callback(on_done)``, ``Thread(target=self._worker)`` -> "check",
    "on_done", "_worker". Called later by whoever they are handed to, they
    count as called by the test."""
    for argument in (*call.args, *(k.value for k in call.keywords)):
        kind = type(argument)
        if kind is ast.Name:
            yield argument.id  # type: ignore[attr-defined]
        elif kind is ast.Attribute and type(argument.value) is ast.Name:  # type: ignore[attr-defined]
            if argument.value.id in SELF_NAMES:  # type: ignore[attr-defined]
                yield argument.attr  # type: ignore[attr-defined]


def local_names(function: FunctionNode, _ctx: Context) -> set[str]:
    """The names ``function`` binds itself: parameters, assignments, nested defs."""
    arguments = function.args
    names = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    names.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
            names.add(node.name)
    return names


def names_handed_check(call: ast.Call) -> bool:
    """``d.addCallback(self.check_result)``: a method named as a check handed
    over as a callback (inherited from a base class the file cannot read)."""
    for argument in (*call.args, *(k.value for k in call.keywords)):
        if type(argument) is ast.Attribute and type(argument.value) is ast.Name:  # type: ignore[attr-defined]
            if argument.value.id in SELF_NAMES and names_a_check(argument.attr):  # type: ignore[attr-defined]
                return True
    return False


def asserting_code(node: ast.expr) -> bool:
    """A string of Python code with an ``assert`` in it (also through
    ``dedent("...")``), as handed to a child interpreter
    (``[sys.executable, "-c", CODE]``) or a runner."""
    text = code_text(node)
    if "assert" not in text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(inner, ast.Assert) for inner in ast.walk(tree))


#: spawners that ignore a child's exit status unless told to check it (``check=True`` counts on its own)
UNCHECKED_SPAWNERS = frozenset({"subprocess.run", "subprocess.call", "subprocess.Popen", "os.system"})


def hands_asserting_code(call: ast.Call, name: str | None) -> bool:
    """A ``-c`` code string that asserts handed to a runner of children, in
    its arguments or an argv list: ``self.run_python("-c", "assert ...")``,
    ``run_in_child([sys.executable, "-c", CODE])``: the test ships its check
    to the child, and the runner fails on a bad exit. A spawner that ignores
    the exit status (``subprocess.run`` without ``check=True``) loses it."""
    if name in UNCHECKED_SPAWNERS:
        return False
    sequences = [call.args, *(a.elts for a in call.args if isinstance(a, (ast.List, ast.Tuple)))]
    for elements in sequences:
        for index, element in enumerate(elements[:-1]):
            if isinstance(element, ast.Constant) and element.value == "-c" and asserting_code(elements[index + 1]):
                return True
    return False


def switches_a_check_on(target: ast.expr, value: ast.expr) -> bool:
    """``pool.assert_hostname = "localhost"``: an attribute named as a check
    set to something other than ``False``/``None``."""
    if not isinstance(target, ast.Attribute) or CHECKING_KEYWORD.search(target.attr) is None:
        return False
    return not (isinstance(value, ast.Constant) and value.value in (False, None))


def is_docstring_or_pass(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def only_passes(body: list[ast.stmt]) -> bool:
    return all(isinstance(stmt, (ast.Pass, ast.Continue)) for stmt in body)


BENCHMARK_FIXTURES = frozenset({"benchmark", "aio_benchmark", "async_benchmark"})


def is_benchmark(node: FunctionNode) -> bool:
    """The test requests a benchmark fixture and calls it (``benchmark(f, x)``,
    ``benchmark.pedantic(...)``): it measures speed, it does not check values."""
    names = {arg.arg for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    fixtures = names & BENCHMARK_FIXTURES
    if not fixtures:
        return False
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            func = inner.func
            base = func.value if isinstance(func, ast.Attribute) else func
            if isinstance(base, ast.Name) and base.id in fixtures:
                return True
    return False


def client_half_asserts(facts: AssertionFacts, methods: dict[tuple[int, str], AssertionFacts]) -> bool:
    """Socket tests: ``testFoo()`` is the server half, ``_testFoo()`` of the
    same class the client half, run in a thread, that holds the assertions."""
    partner = methods.get((id(facts.owner), f"_{facts.name}")) if facts.owner else None
    return partner is not None and partner.asserts


def names_a_check(last: str) -> bool:
    """A callee named as a check (``assert``, ``check``, ``verify``,
    ``expect``, ``not_raises``), as a raising matcher or validator
    (``fnmatch_lines``, ``validate_*``), or as a helper saying "no
    exception" (``do_test_no_exception``)."""
    if ASSERTING_WORDS.search(last) or NO_RAISE_HELPER.search(last):
        return True
    if last in RAISING_HELPERS or RAISING_PREFIX.match(last) is not None:
        return True
    lowered = last.lower()
    return ("no" in lowered or "doesnt" in lowered) and says_no_raise(name_words(last))


#: a test case's method that returns a result or fails the test (Twisted's successResultOf/failureResultOf)
RESULT_OF = re.compile(r"ResultOf$|_result_of$")


def fails_the_test(method: str) -> bool:
    """A method of the test case named to fail it: ``fail*``, ``*Fail*``,
    ``successResultOf``/``failureResultOf`` (the result, or a failed test)."""
    return method.startswith("fail") or "Fail" in method or "_fail" in method or RESULT_OF.search(method) is not None


def runs_another_modules_test(func: ast.expr) -> bool:
    """``_testcapi.test_x()``: a test helper called on something other than
    ``self``/``cls`` or ``super()`` runs another module's test."""
    if not isinstance(func, ast.Attribute):
        return False
    receiver = func.value
    return not (isinstance(receiver, ast.Name) and receiver.id in SELF_NAMES) and not is_super_call(receiver)


def turns_into_errors(call: ast.Call) -> bool:
    """``warnings.simplefilter("error", ...)``: the test asserts that no warning is emitted."""
    action = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "action"), None)
    return isinstance(action, ast.Constant) and action.value == "error"


def is_super_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
