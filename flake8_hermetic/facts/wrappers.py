"""A project's own wrappers of a spawner, and their callers' command lines.

``def run_cmd(*args, cwd=None): return subprocess.run(args, cwd=cwd)``
hands the command to its callers: nothing on the spawner's own line says
what runs, while ``run_cmd("git", "init", "repo")`` says all of it. A
:class:`SpawnWrapper` turns such a call back into the
:class:`~flake8_hermetic.facts.processes.ChildProcess` the wrapper starts
(:meth:`SpawnWrapper.child_for`), so the rules about children (HRM106,
HRM115) judge the caller's line as they would a direct spawner call.

:func:`same_file_wrapper` recognises a wrapper of the file being walked,
at its spawner call; the project model hands the rules the wrappers of
other modules of the test tree in the same form
(``ctx.project.spawn_wrappers()``, read from source by :func:`wrapper_of`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flake8_hermetic.facts.processes import COMMAND_KEYWORDS, ChildProcess
from flake8_hermetic.nodes import FunctionNode

if TYPE_CHECKING:
    from flake8_hermetic.facts.view import FileView

#: a parameter the caller did not pass and that has no default
_MISSING = object()


@dataclass(frozen=True)
class SpawnWrapper:
    """A function whose spawner call runs the command its caller gives."""

    #: the name its callers call it by: ``run_cmd``, or ``self.run_cmd`` for a method
    callee: str
    function: FunctionNode
    #: the spawner call inside ``function``
    spawner: ChildProcess
    #: the ``*args`` parameter spread into the command (``["git", *args]``, ``args``)
    varargs: str | None
    #: or the parameter that is the whole command (``def run(cmd): run(cmd)``)
    argv_parameter: str | None
    method: bool

    def child_for(self, call: ast.Call) -> ChildProcess | None:
        """The child a call of the wrapper starts, its command and keywords
        read from the caller's arguments; None when the call says nothing
        about what runs."""
        bound = _bind(self.function, call, self.method)
        command: ast.expr | None
        kind = self.spawner.kind
        if self.varargs is not None:
            command = _spread(self.spawner.command, self.varargs, bound.get(self.varargs, ()))
            kind = "argv"
        else:
            value = bound.get(self.argv_parameter or "", _MISSING)
            command = value if isinstance(value, ast.expr) else None
        if command is None or kind == "spawn":
            return None
        keywords: list[ast.keyword] = []
        for keyword in self.spawner.call.keywords:
            if keyword.arg in COMMAND_KEYWORDS:
                continue
            if keyword.arg is None:
                # **kwargs forwarded: the caller's keywords that are no parameter of the wrapper
                extra = bound.get("**", ())
                keywords.extend(extra if isinstance(extra, tuple) else ())
                continue
            value = keyword.value
            if isinstance(value, ast.Name) and value.id in bound:
                passed = bound[value.id]
                if not isinstance(passed, ast.expr) or (isinstance(passed, ast.Constant) and passed.value is None):
                    continue  # left to the default None: as if not passed
                value = passed
            keywords.append(ast.keyword(arg=keyword.arg, value=value))
        synthetic = ast.Call(func=call.func, args=[command], keywords=keywords)
        ast.copy_location(synthetic, call)
        return ChildProcess(self.callee, synthetic, kind)


def same_file_wrapper(ctx: FileView, child: ChildProcess) -> SpawnWrapper | None:
    """The wrapper whose spawner call ``child`` is (the node being visited),
    if the function it is in passes its own ``*args`` or a parameter as the
    command: a module-level function, or a method (called as ``self.name``)."""
    function = ctx.function
    if function is None or ctx.scope.node is not function or len(ctx.scopes) < 2:
        return None
    outer = ctx.scopes[-2].kind
    if outer not in ("module", "class"):
        return None
    method = outer == "class"
    callee = f"self.{function.name}" if method else function.name
    return wrapper_of(function, child, callee, method)


def wrapper_of(function: FunctionNode, child: ChildProcess, callee: str, method: bool = False) -> SpawnWrapper | None:
    """The wrapper ``function`` is when its spawner call ``child`` runs its
    own ``*args`` or a parameter as the command; ``callee`` is the name its
    callers call it by. One reading for a wrapper of the walked file and
    one of another module of the test tree (read by the project model)."""
    arguments = function.args
    varargs = arguments.vararg.arg if arguments.vararg is not None else None
    command = child.command
    if varargs is not None and _spreads(command, varargs):
        return SpawnWrapper(callee, function, child, varargs, None, method)
    if isinstance(command, ast.Name):
        names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        if command.id in names[1 if method else 0:]:
            return SpawnWrapper(callee, function, child, None, command.id, method)
    return None


def _spreads(command: ast.expr | None, varargs: str) -> bool:
    if isinstance(command, ast.Name):
        return command.id == varargs
    if isinstance(command, ast.Call) and isinstance(command.func, ast.Name) and command.func.id in ("list", "tuple"):
        return len(command.args) == 1 and _spreads(command.args[0], varargs)
    if isinstance(command, (ast.List, ast.Tuple)):
        spread = [e for e in command.elts if isinstance(e, ast.Starred)]
        return len(spread) == 1 and isinstance(spread[0].value, ast.Name) and spread[0].value.id == varargs
    return False


def _spread(command: ast.expr | None, varargs: str, passed: object) -> ast.expr | None:
    """The wrapper's command with its ``*args`` replaced by what the caller passed."""
    words = list(passed) if isinstance(passed, tuple) else []
    if isinstance(command, ast.Call):
        command = command.args[0] if command.args else None
    if isinstance(command, ast.Name):
        return ast.List(elts=words, ctx=ast.Load())
    if isinstance(command, (ast.List, ast.Tuple)):
        elements: list[ast.expr] = []
        for element in command.elts:
            if isinstance(element, ast.Starred) and isinstance(element.value, ast.Name) and element.value.id == varargs:
                elements.extend(words)
            else:
                elements.append(element)
        return ast.List(elts=elements, ctx=ast.Load())
    return None


def _bind(function: FunctionNode, call: ast.Call, method: bool) -> dict[str, object]:
    """The caller's argument for each parameter of ``function`` (its default
    when not passed, ``_MISSING`` without one); the extra positional
    arguments as a tuple under the ``*args`` name, the extra keywords under
    ``"**"``."""
    arguments = function.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][1 if method else 0:]
    defaults: dict[str, object] = {}
    all_positional = [*arguments.posonlyargs, *arguments.args]
    for parameter, default in zip(all_positional[len(all_positional) - len(arguments.defaults):], arguments.defaults):
        defaults[parameter.arg] = default
    for keyword_only, keyword_default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        defaults[keyword_only.arg] = keyword_default if keyword_default is not None else _MISSING
    bound: dict[str, object] = {name: defaults.get(name, _MISSING) for name in positional}
    bound.update({a.arg: defaults.get(a.arg, _MISSING) for a in arguments.kwonlyargs})
    given = [a for a in call.args if not isinstance(a, ast.Starred)]
    for name, value in zip(positional, given):
        bound[name] = value
    if arguments.vararg is not None:
        bound[arguments.vararg.arg] = tuple(call.args[len(positional):])
    extra = []
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg in bound:
            bound[keyword.arg] = keyword.value
        else:
            extra.append(keyword)
    bound["**"] = tuple(extra)
    return bound
