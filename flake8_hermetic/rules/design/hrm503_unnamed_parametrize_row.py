"""HRM503: ``parametrize`` cases that differ between processes (narrowed from "a row without an id")."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation

PARAM = "pytest.param"

# calls whose value differs between two processes (or two runs): drawn at random, read off the clock,
# the process's own id, a fresh temporary name
UNSTABLE_SOURCES = frozenset({
    "random.random", "random.randint", "random.randrange", "random.choice", "random.uniform",
    "random.getrandbits", "random.gauss", "random.randbytes", "random.triangular",
    "secrets.token_hex", "secrets.token_urlsafe", "secrets.token_bytes", "secrets.randbelow", "secrets.choice",
    "os.urandom", "os.getpid", "uuid.uuid1", "uuid.uuid4",
    "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns", "time.perf_counter",
    "time.perf_counter_ns", "time.process_time", "datetime.datetime.now", "datetime.datetime.utcnow",
    "datetime.datetime.today", "datetime.date.today", "tempfile.mkdtemp", "tempfile.mktemp",
    "builtins.id", "id",
})
# objects pytest names by position (``argname0``): only their text, or a part of it, makes a value id
OBJECT_SOURCES = frozenset({"uuid.uuid1", "uuid.uuid4", "datetime.datetime.now", "datetime.datetime.utcnow",
                            "datetime.datetime.today", "datetime.date.today"})
TEXT_OF = frozenset({"str", "builtins.str", "repr", "builtins.repr", "format", "builtins.format"})
TEXT_ATTRIBUTES = frozenset({"hex", "int", "urn", "isoformat", "timestamp", "strftime", "ctime"})
SET_CALLS = frozenset({"set", "frozenset", "builtins.set", "builtins.frozenset"})


class UnnamedParametrizeRowRule(Rule):
    """
    Flags `parametrize` cases that differ between processes: rows from a set of strings, or a value drawn at collection (random, the clock, the pid) that pytest names the case after.

    A set iterates in another order in each process unless it is visibly
    made of integers; a value drawn from random, the clock, the pid, a
    uuid's text or a fresh temp name gives the case another id in each.

    Narrowed from "every row without an id": a positional or value id is
    stable between runs and hosts, so naming every row was churn by this
    pack's standard (0 of 20 held-out findings real). What is left is the
    part where the cases themselves move. The rows of a literal list or
    tuple, the element of a comprehension, and a module-level name bound
    to a set are read; `metafunc.parametrize(...)` is checked the same
    way.

    ## Why is this bad?
    pytest-xdist has every worker collect the suite and refuses to run when
    two workers collected different lists ("Different tests were collected
    between gw0 and gw1"). A set of strings iterates in a different order in
    each process (string hashing is randomised per process), so the cases,
    and the ids pytest gives them, come in another order on each worker,
    and an `ids=` list is matched to other values in each. A value drawn
    at collection (`random.random()`, `str(uuid4())`, `time.time()`,
    `os.getpid()`) gives the case a different id in every process: the
    workers disagree, and `-k`, `--lf`, a baseline entry or a CI history
    never finds the same case twice.

    ## Example
    ```python
    @pytest.mark.parametrize("scheme", {"http", "https"})
    def test_fetch(scheme):
        assert fetch(f"{scheme}://example.test")


    @pytest.mark.parametrize("token", [secrets.token_hex(8)])
    def test_token(token):
        assert check(token)
    ```

    ## Use instead
    ```python
    @pytest.mark.parametrize("scheme", sorted({"http", "https"}))
    def test_fetch(scheme):
        assert fetch(f"{scheme}://example.test")


    @pytest.mark.parametrize("token", [pytest.param(secrets.token_hex(8), id="random-token")])
    def test_token(token):
        assert check(token)
    ```

    ## Options
    None.

    ## Known problems
    Rows built by a function call or a name bound anywhere but at module
    level cannot be seen. `set(...)` of an argument the rule cannot read is
    taken for a set of strings, unless it is visibly integers (`range`, a
    list of int literals), whose hashes are the same in every process.
    """

    code = "HRM503"
    message = ("parametrize cases that differ between processes: {why} (xdist workers collect different "
               "lists; -k, --lf and baselines miss the case); {fix}")
    calls = frozenset({"pytest.mark.parametrize"})
    methods = frozenset({"parametrize"})
    default_on = False
    principles = ("stable-case-ids",)
    narrowed = ("it flagged every row without an id, which by the standard of precision.md is churn (pytest's"
                " ids are the same in every run); it now flags only cases that move between processes.")

    SET_WHY = "the rows come from a set, which iterates in another order in each process"
    SET_FIX = "use sorted(...) or a list"
    VALUE_WHY = "the case is named after a value drawn at collection ({source})"
    VALUE_FIX = "give it a fixed id (pytest.param(..., id=...))"

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        if not self._is_parametrize(node):
            return
        rows = node.args[1] if len(node.args) > 1 else None
        for keyword in node.keywords:
            if keyword.arg == "argvalues":
                rows = keyword.value
        if rows is None:
            return
        where = self.ctx.where_of(node)
        shown = rows
        if isinstance(rows, ast.Name):  # a module-level name bound to a set
            rows = self.ctx.module_value(rows.id) or rows
        if self._unordered(rows):
            yield dataclasses.replace(self.report(shown, why=self.SET_WHY, fix=self.SET_FIX), where=where)
            return
        if any(k.arg == "ids" or k.arg is None for k in node.keywords) or len(node.args) >= 4:
            return  # ids given (positionally: argnames, argvalues, indirect, ids): pytest does not name the cases
        if isinstance(rows, (ast.List, ast.Tuple)):
            elements = [row for row in rows.elts if not isinstance(row, ast.Starred)]
        elif isinstance(rows, (ast.ListComp, ast.GeneratorExp)):
            elements = [rows.elt]
        else:
            return
        for row in elements:
            if self._named(row):
                continue
            source = self._drawn(row)
            if source:
                yield dataclasses.replace(
                    self.report(row, why=self.VALUE_WHY.format(source=source), fix=self.VALUE_FIX), where=where)

    # -- the rows' order -------------------------------------------------------------------

    def _unordered(self, rows: ast.expr) -> bool:
        """A set whose order may differ between processes: not visibly made only of integers."""
        if isinstance(rows, ast.Set):
            return not all(_int_literal(element) for element in rows.elts)
        if isinstance(rows, ast.SetComp):
            return True
        if isinstance(rows, ast.Call) and self.ctx.call_name(rows) in SET_CALLS:
            if not rows.args:
                return False  # empty: no order
            argument = rows.args[0]
            if isinstance(argument, ast.Call) and self.ctx.call_name(argument) in {"range", "builtins.range"}:
                return False
            if isinstance(argument, (ast.List, ast.Tuple, ast.Set)) and all(_int_literal(e) for e in argument.elts):
                return False
            return True
        return False

    # -- the rows' ids ----------------------------------------------------------------------

    def _drawn(self, row: ast.expr) -> str | None:
        """The unstable source a value of ``row`` pytest names the case after is drawn from, if any."""
        values = row.elts if isinstance(row, ast.Tuple) else [row]
        for value in values:
            source = self._text_source(value)
            if source:
                return source
        return None

    def _text_source(self, value: ast.expr) -> str | None:
        """The unstable source of ``value`` when pytest would make its id from it (a str, a number, bytes)."""
        if isinstance(value, ast.JoinedStr):
            for part in value.values:
                if isinstance(part, ast.FormattedValue):
                    inner = self._source(part.value)
                    if inner:
                        return inner
            return None
        if isinstance(value, ast.BinOp):  # "user-" + str(uuid4()), a sum of readings
            return self._text_source(value.left) or self._text_source(value.right)
        if isinstance(value, ast.Call):
            name = self.ctx.call_name(value)
            if name in TEXT_OF and value.args:
                return self._source(value.args[0])
            if isinstance(value.func, ast.Attribute) and value.func.attr in TEXT_ATTRIBUTES:
                return self._source(value.func.value)
            if name in UNSTABLE_SOURCES and name not in OBJECT_SOURCES:
                return name.removeprefix("builtins.") + "()"
            return None
        if isinstance(value, ast.Attribute) and value.attr in TEXT_ATTRIBUTES:  # uuid4().hex
            return self._source(value.value)
        return None

    def _source(self, value: ast.expr) -> str | None:
        """The unstable call ``value`` is (text or object), if it is one."""
        if isinstance(value, ast.Call):
            name = self.ctx.call_name(value)
            if name in UNSTABLE_SOURCES:
                return name.removeprefix("builtins.") + "()"
        return self._text_source(value)

    # -- shared -----------------------------------------------------------------------------

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


def _int_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int
