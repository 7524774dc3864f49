"""Which functions, methods and classes of a file are handed to other code
(a thread, a pool, a server) rather than called by it: code that runs beside the test."""

from __future__ import annotations

import ast

from flake8_hermetic.context import Context

#: a binding of a function or class name: (id of the outermost function holding it, id of the
#: frame defining it, name); both ids are 0 for a module-level name
Binding = tuple[int, int, str]


class HandedCallables:
    """Which functions, methods and classes of a file are handed to other code
    (passed as an argument: ``Thread(target=f)``, ``pool.map(f, ...)``,
    ``run_in_executor(None, f)``, ``settrace(f)``, ``HTTPServer(addr, Handler)``)
    and which the file calls itself (``f()``, ``self.f()``), filled call by
    call during the walk.
    """

    __slots__ = ("ctx", "handed", "called", "handed_attributes", "called_methods")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.handed: set[tuple[int, str]] = set()
        self.called: set[tuple[int, str]] = set()
        self.handed_attributes: set[tuple[str, str]] = set()
        self.called_methods: set[str] = set()

    def record(self, call: ast.Call) -> None:
        func = call.func
        if type(func) is ast.Name:
            function = self.ctx.function
            self.called.add((id(function) if function is not None else 0, func.id))
            self.called.add((-1, func.id))
        elif type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in ("self", "cls"):
            self.called_methods.add(func.attr)
        values: list[ast.expr] = [*call.args, *(keyword.value for keyword in call.keywords)]
        top = 0
        while values:
            value = values.pop()
            kind = type(value)
            if kind is ast.Name:
                if not top:
                    top = next((id(s.node) for s in self.ctx.scopes if s.kind == "function"), -1)
                self.handed.add((top, value.id))  # type: ignore[attr-defined]
                self.handed.add((-1, value.id))  # type: ignore[attr-defined]
            elif kind is ast.Attribute and type(value.value) is ast.Name:  # type: ignore[attr-defined]
                self.handed_attributes.add((value.value.id, value.attr))  # type: ignore[attr-defined]
            elif kind in (ast.Tuple, ast.List, ast.Starred):
                values.extend(value.elts if kind is not ast.Starred else [value.value])  # type: ignore[attr-defined]

    def method_handed_only(self, class_name: str, method: str) -> bool:
        """``self.method``, ``cls.method`` or ``Class.method`` is handed to other
        code and ``self.method()`` / ``cls.method()`` is never called."""
        return method not in self.called_methods and any(
            (receiver, method) in self.handed_attributes for receiver in ("self", "cls", class_name)
        )

    def handed_only(self, binding: Binding) -> bool:
        """Handed to other code and never called directly where it is defined
        (for a module-level name: anywhere in the file)."""
        top, frame, name = binding
        if not top:
            return (-1, name) in self.handed and (-1, name) not in self.called
        return (top, name) in self.handed and (frame, name) not in self.called


def is_thread_class(ctx: Context, node: ast.ClassDef) -> bool:
    """A subclass of a thread or process class: its ``run`` is the body of another thread."""
    return any((ctx.resolve(base) or "").rpartition(".")[2].endswith(("Thread", "Process")) for base in node.bases)
