"""The rule base class: a small self-registering class per hazard."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from flake8_hermetic.options import OptionSpec
from flake8_hermetic.project.roles import TEST_CODE, Role
from flake8_hermetic.violation import Violation

if TYPE_CHECKING:
    from flake8_hermetic.context import Context
    from flake8_hermetic.options import RuleSettings

REGISTRY: dict[str, type[Rule]] = {}


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

    __slots__ = ("ctx",)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("code")
        if code is None:
            return
        if code in REGISTRY:
            raise RuntimeError(f"duplicate rule code {code}")
        REGISTRY[code] = cls

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
