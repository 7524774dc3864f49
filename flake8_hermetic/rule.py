"""The rule base class: a small self-registering class per hazard."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, ClassVar

from flake8_hermetic.facts.reachability import Collection, never_runs
from flake8_hermetic.options import OptionSpec
from flake8_hermetic.project.roles import TEST_CODE, Role
from flake8_hermetic.violation import Violation

if TYPE_CHECKING:
    from flake8_hermetic.context import Context
    from flake8_hermetic.options import RuleSettings

REGISTRY: dict[str, type[Rule]] = {}
#: the principle of the rules whose findings in code that never runs are dropped
NEVER_RUNS = "never-runs"


class Rule:
    """Base of every built-in rule.

    A subclass names its ``code`` and ``message`` (a ``str.format`` template),
    says whether it runs by default, and defines ``visit_<NodeType>``
    generators that take the node and yield violations through
    :meth:`report`.  The class docstring is the rule's documentation page
    (What it does / Why is this bad? / Example / Use instead / Options).
    A rule reads the tree and the context; it never changes the tree.
    """

    code: ClassVar[str]
    message: ClassVar[str]
    default_on: ClassVar[bool] = True
    #: The options this rule reads (``settings.option(name)``): registered
    #: with flake8 and the pyproject table by :mod:`flake8_hermetic.settings`.
    options: ClassVar[tuple[OptionSpec, ...]] = ()
    #: The calls ``visit_Call`` is for, by the callee's canonical name
    #: (``ctx.call_name``): ``"time.sleep"``, or an fnmatch pattern
    #: (``"os.spawn*"``, ``"*.glob"``). The engine resolves each call once and
    #: hands it only to the rules that declared its name here or its method
    #: in ``methods``; a rule that declares neither gets every call.
    calls: ClassVar[frozenset[str] | None] = None
    #: Calls of a method with one of these names (``x.undo()``: ``"undo"``),
    #: whatever ``x`` is, also when it has no canonical name (``a[0].undo()``).
    methods: ClassVar[frozenset[str] | None] = None
    #: The file roles (see :mod:`flake8_hermetic.project.roles`) whose files
    #: this rule judges: collected test modules and conftests unless it says
    #: otherwise. The engine runs only the rules of the linted file's role.
    roles: ClassVar[frozenset[Role]] = TEST_CODE
    #: The keys of the principles (:mod:`flake8_hermetic.principles`) by
    #: which this rule lets code through; its page lists them.
    principles: ClassVar[tuple[str, ...]] = ()
    #: Whether the hazard needs the flagged code to run (a leak, a wait, a
    #: host read): then a finding in code that never runs (dead branches,
    #: code after ``return``, methods pytest never calls: see
    #: :mod:`flake8_hermetic.facts.reachability`) is dropped, and the rule
    #: applies the principle "never-runs". None: by family, yes for HRM1xx
    #: to HRM3xx; no for HRM4xx (they judge a module's import-time code as
    #: written, where no method is involved) and HRM5xx (how a test is
    #: written, which holds for code nobody runs yet too).
    needs_to_run: ClassVar[bool | None] = None
    #: Set when the rule was narrowed after its corpus figures were taken (issue 26): what changed, in a
    #: sentence, shown with those figures on its page (they describe the rule as it was).
    narrowed: ClassVar[str] = ""
    #: Set when the rule was retired (issue 26): why, in a sentence. A retired rule checks nothing
    #: (it has no visitors), a selection that names it exactly is refused with the reason, and its
    #: baseline entries are stale in every test file, so the ratchet drops them.
    retired: ClassVar[str] = ""

    __slots__ = ("ctx",)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("code")
        if code is None:
            return
        if code in REGISTRY:
            raise RuntimeError(f"duplicate rule code {code}")
        REGISTRY[code] = cls
        if cls.judges_running_code() and NEVER_RUNS not in cls.principles:
            cls.principles = (*cls.principles, NEVER_RUNS)

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def report(self, node: ast.AST, **fmt: object) -> Violation:
        return Violation(
            line=getattr(node, "lineno", 1),
            col=getattr(node, "col_offset", 0),
            code=self.code,
            message=self.message.format(**fmt) if fmt else self.message,
            where=self.ctx.where,
            node=node,
        )

    def finish(self) -> Iterator[Violation]:
        """Called once after the walk, for rules that judge the whole module."""
        return iter(())

    @classmethod
    def judges_running_code(cls) -> bool:
        """``needs_to_run``, or the family's default."""
        if cls.needs_to_run is not None:
            return cls.needs_to_run
        return getattr(cls, "code", "").startswith(("HRM1", "HRM2", "HRM3"))

    @classmethod
    def handled_node_types(cls) -> dict[type[ast.AST], str]:
        handled = {}
        for name, _ in inspect.getmembers(cls, inspect.isfunction):
            if name.startswith("visit_"):
                node_type = getattr(ast, name[len("visit_"):], None)
                if isinstance(node_type, type):
                    handled[node_type] = name
        return handled

    @classmethod
    def wanted_calls(cls, settings: RuleSettings) -> frozenset[str] | None:
        """``calls``, for a rule whose callees also come from the settings."""
        return cls.calls

    @classmethod
    def judged_files(cls) -> str:
        """One line for the rule's page: which files it judges."""
        names = {
            Role.TEST_MODULE: "collected test modules",
            Role.CONFTEST: "conftest.py files",
            Role.SUPPORT: "support modules of the test tree",
        }
        kinds = [text for role, text in names.items() if role in cls.roles]
        return "Judges " + (", ".join(kinds[:-1]) + " and " + kinds[-1] if len(kinds) > 1 else kinds[0]) + (
            " (pytest's `python_files`, `testpaths` and `norecursedirs` decide; see docs/project-model.md)."
        )

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The first line of the doc: what the rule does."""
        for line in cls.doc().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                return line
        return cls.message


def drop_never_run(found: list[Violation], ctx: Context, rules: Iterable[type[Rule]]) -> list[Violation]:
    """``found`` less the findings of the ``rules`` that need the code to
    run (``Rule.judges_running_code``) in code of the file that never runs.
    The file's reachability is computed only when there is such a finding."""
    codes = {rule.code for rule in rules if rule.judges_running_code()}
    if not any(violation.code in codes for violation in found):
        return found
    view = ctx.project
    config = view.project.config(ctx.path)
    collected = view.role is Role.TEST_MODULE and view.collects_functions
    unreached = never_runs(ctx.tree, Collection(config.python_classes, config.python_functions, collected))
    if not unreached.spans:
        return found
    return [v for v in found if v.code not in codes or unreached.why(v.line, v.col) is None]
