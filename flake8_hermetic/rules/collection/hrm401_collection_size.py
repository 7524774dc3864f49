"""HRM401: a large value built while the test module is collected."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.project import Role
from flake8_hermetic.rule import Rule
from flake8_hermetic.rules.collection.import_time import collection_time
from flake8_hermetic.rules.collection.sizes import FOLD_DEPTH, BYTES_BUILDERS, Built, Folded, SizeFolder, human_size
from flake8_hermetic.violation import Violation


class CollectionSizeRule(Rule):
    """
    Flags a large value built while the test module is collected.

    Inside the arguments of `@pytest.mark.parametrize(...)`, and anywhere at
    module or class scope of a test file, the rule folds constant
    expressions to the number of bytes they build: `b"x" * (64 * 1024 * 1024)`,
    `"a" * 40_000_001`, `[0] * N`, `bytes(N)`, `bytearray(N)`,
    `list(range(N))`, `os.urandom(N)`, and sums of those; `N` may be a name
    bound to a constant earlier in the module or class. It reports the
    outermost expression reaching `--hermetic-max-collection-bytes` and
    names its size. Folding only reads literals: nothing is evaluated, and
    an absurd `"x" * 10**100` is reported rather than attempted.

    ## Why is this bad?
    Collection imports every test module in every xdist worker before the
    first test runs. A payload built at module scope is paid by each worker
    and lives until the process ends. Inside `parametrize` it is worse: the
    mark holds the value on the test function for the whole session, so
    one test's 64 MiB buffer is carried by all the others, and a run on a
    small machine (or with many workers) goes out of memory long before
    the test that needs it.

    ## Example
    ```python
    BIG_FRAME = b"\\0" * (64 * 1024 * 1024)

    @pytest.mark.parametrize("payload", [b"x" * 40_000_000])
    def test_upload(payload):
        assert upload(payload).ok
    ```

    ## Use instead
    ```python
    FRAME_SIZE = 64 * 1024 * 1024

    @pytest.mark.parametrize("size", [pytest.param(40_000_000, id="40MB")])
    def test_upload(size):
        payload = b"x" * size
        assert upload(payload).ok
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM401` (or `extend-select` in the
    config). On the suites held out from tuning (docs/precision.md), 0 of 2
    of its findings were hazards a maintainer would fix; a default-on rule
    must reach 80%, and the default set 90% overall: both were values just
    at the size threshold, where moving them would be churn for a negligible
    per-worker cost.

    ## Options
    `--hermetic-max-collection-bytes` (default 1048576): the size from which
    a value is reported.

    ## Known problems
    Only constant expressions are folded: a size computed by a function, or
    read from a name bound inside a function, is not seen. A list counts
    its slots and the items it builds itself; items it merely points at
    are counted where they were built.
    """

    code = "HRM401"
    default_on = False
    # collected test modules only: a support module is imported by the runner only through a test
    # (child scripts, sample modules and __main__ scripts never are), a conftest is setup code
    roles = frozenset({Role.TEST_MODULE})
    message = "{size} built at collection time and paid by every xdist worker; build it inside the test body"
    calls = frozenset({*BYTES_BUILDERS, "bytes", "bytearray", "list", "tuple"})
    methods = frozenset({"encode"})
    options = (
        OptionSpec(
            "max-collection-bytes", "int", 1024 * 1024,
            "Size in bytes from which a value built at collection time is flagged (HRM401).",
        ),
    )

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.timing = collection_time(ctx)
        self.folder = SizeFolder(ctx)
        self.limit = ctx.settings.option("max-collection-bytes")
        self._reported: set[int] = set()

    def visit_Assign(self, node: ast.Assign) -> Iterator[Violation]:
        if self.timing.import_time(node):
            value = self.folder.fold(node.value)
            for target in node.targets:
                self._bind(target, value)
        return iter(())

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Iterator[Violation]:
        if node.value is not None and self.timing.import_time(node):
            self._bind(node.target, self.folder.fold(node.value))
        return iter(())

    def visit_AugAssign(self, node: ast.AugAssign) -> Iterator[Violation]:
        if self.timing.import_time(node):
            self._bind(node.target, None)
        return iter(())

    def _bind(self, target: ast.AST, value: Folded) -> None:
        if isinstance(target, ast.Name):
            self.folder.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:
                self._bind(item.value if isinstance(item, ast.Starred) else item, None)

    def visit_BinOp(self, node: ast.BinOp) -> Iterator[Violation]:
        if isinstance(node.op, (ast.Mult, ast.Add)):
            yield from self._check(node)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        yield from self._check(node)

    def visit_List(self, node: ast.List) -> Iterator[Violation]:
        # a display allocates little unless it spreads a range: ``[*range(N)]``
        if any(isinstance(item, ast.Starred) for item in node.elts):
            yield from self._check(node)

    visit_Tuple = visit_List

    def _check(self, node: ast.expr) -> Iterator[Violation]:
        runs, in_parametrize = self.timing.of(node)
        if not (runs or in_parametrize):
            return
        value = self.folder.fold(node)
        if not isinstance(value, Built) or value.size < self.limit:
            return
        # a reported ancestor already covers this value; it lies within the fold depth
        nearby = self.ctx.parents[-(FOLD_DEPTH + 1):]
        if any(id(ancestor) in self._reported for ancestor in nearby):
            return
        self._reported.add(id(node))
        violation = self.report(node, size=human_size(value.size))
        yield dataclasses.replace(violation, where=self.ctx.where_of(node))
