"""Cleanup and teardown, as HRM1xx sees them: what registers a cleanup, what
removes a file, which teardown pairs with which setup, the classes of
the file a method's class inherits from, and the helpers of the file a
function hands a value to (and whether such a helper joins it).
"""

from __future__ import annotations

import ast
from typing import Literal, NamedTuple

from flake8_hermetic.context import Context
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import DEF_TYPES, FunctionNode
from flake8_hermetic.rules.leaks.syntax import mentions, target_names


#: methods (and functions) that register a callback or a context to run at
#: the end of the test: unittest, pytest's request, contextlib.ExitStack
CLEANUP_REGISTRARS = frozenset({
    "addCleanup", "addClassCleanup", "addAsyncCleanup", "addModuleCleanup", "addfinalizer",
    "callback", "push_async_callback", "enter_context", "enter_async_context",
    "enterContext", "enterClassContext", "enterAsyncContext",
})
CLEANUP_FUNCTIONS = frozenset({"atexit.register", "weakref.finalize"})


def is_registration(ctx: Context, call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in CLEANUP_REGISTRARS:
        return True
    if isinstance(func, ast.Name) and func.id in CLEANUP_REGISTRARS:
        return True
    return ctx.call_name(call) in CLEANUP_FUNCTIONS


#: the last name of calls that delete a file or directory
REMOVERS = frozenset({"remove", "unlink", "rmdir", "removedirs", "rmtree", "cleanup"})


def removes_any(stmt: ast.stmt, names: set[str]) -> bool:
    """``os.unlink(path)``, ``shutil.rmtree(d)``, ``tmp.cleanup()`` as a statement."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call):
        return False
    return last_name(call) in REMOVERS and bool(mentions(call) & names)


SETUP_METHODS = frozenset({"setUp", "setUpClass", "asyncSetUp"})
#: the teardowns that run after each kind of method, and the setups whose
#: registered cleanups do
INSTANCE_TEARDOWNS = ("tearDown", "asyncTearDown", "teardown_method", "teardown")
INSTANCE_SETUPS = ("setUp", "asyncSetUp", "setup_method", "setup")
CLASS_TEARDOWNS = ("tearDownClass", "teardown_class")
CLASS_SETUPS = ("setUpClass", "setup_class")
MODULE_TEARDOWNS = ("tearDownModule", "teardown_module")
MODULE_SETUPS = ("setUpModule", "setup_module")
TEARDOWNS = frozenset({*INSTANCE_TEARDOWNS, *CLASS_TEARDOWNS, *MODULE_TEARDOWNS})


def method_of(ctx: Context) -> tuple[ast.ClassDef | None, FunctionNode | None]:
    """The innermost class around the node and its method that holds it, or
    (outside classes) the module-level function."""
    scopes = ctx.scopes
    for index in range(len(scopes) - 1, -1, -1):
        if scopes[index].kind == "class":
            inner = scopes[index + 1] if index + 1 < len(scopes) else None
            method = inner.node if inner is not None and inner.kind == "function" else None
            return scopes[index].node, method  # type: ignore[return-value]
    outer = next((s for s in scopes if s.kind == "function"), None)
    return None, outer.node if outer is not None else None  # type: ignore[return-value]


def class_family(ctx: Context, owner: ast.ClassDef) -> list[ast.ClassDef]:
    """``owner`` and the classes of the same file it inherits from (a
    ``tearDown`` is often inherited from a base class defined above)."""
    local = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}
    family: list[ast.ClassDef] = []
    pending = [owner]
    while pending:
        current = pending.pop()
        if any(current is known for known in family):
            continue
        family.append(current)
        pending.extend(local[name] for name in (dotted_name(b) for b in current.bases) if name in local)
    return family


class Pairing(NamedTuple):
    """Which teardowns run after a method, and the setups whose registered
    cleanups do: a module's, a class's or each test's."""

    group: Literal["module", "class", "instance"]
    teardowns: tuple[str, ...]
    setups: tuple[str, ...]


MODULE_PAIRING = Pairing("module", MODULE_TEARDOWNS, MODULE_SETUPS)
CLASS_PAIRING = Pairing("class", CLASS_TEARDOWNS, CLASS_SETUPS)
INSTANCE_PAIRING = Pairing("instance", INSTANCE_TEARDOWNS, INSTANCE_SETUPS)


def pairing_of(owner: ast.ClassDef | None, method: FunctionNode) -> Pairing | None:
    """The teardowns that undo what ``method`` (of class ``owner``, or a
    module-level function when it is None) does: None for a module-level
    function other than ``setUpModule``/``setup_module``."""
    if owner is None:
        return MODULE_PAIRING if method.name in MODULE_SETUPS else None
    return CLASS_PAIRING if method.name in CLASS_SETUPS else INSTANCE_PAIRING


def paired_body(ctx: Context, owner: ast.ClassDef | None) -> list[ast.stmt]:
    """Where the teardowns paired with a method are defined: the module
    body, or the bodies of the method's class and its bases in the file."""
    if owner is None:
        return ctx.tree.body
    return [s for c in class_family(ctx, owner) for s in c.body]


#: methods that put the value into a container named by the receiver
_PUTS = frozenset({"append", "appendleft", "add", "extend", "insert"})


def containers_holding(function: ast.AST, names: set[str]) -> set[str]:
    """The local containers ``function`` puts one of ``names`` in:
    ``threads.append(t)``, ``threads = [t1, t2]``."""
    found: set[str] = set()
    for sub in ast.walk(function):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _PUTS:
            receiver = dotted_name(sub.func.value)
            if receiver is not None and set().union(*(mentions(a) for a in sub.args)) & names:
                found.add(receiver)
        elif isinstance(sub, ast.Assign) and isinstance(sub.value, (ast.List, ast.Tuple, ast.Set)):
            if mentions(sub.value) & names:
                found.update(t for t in (dotted_name(target) for target in sub.targets) if t is not None)
    return found


def local_callee(ctx: Context, call: ast.Call) -> tuple[FunctionNode, bool] | None:
    """The def a call of the node being visited's function reaches, when it
    is the module's or the enclosing function's (``helper(x)``) or a method
    of the class or its bases in the file (``self.helper(x)``), and whether
    it is a method (its first parameter is the instance)."""
    func = call.func
    if isinstance(func, ast.Name):
        function = ctx.function
        nodes = [*(ast.walk(function) if function is not None else ()), *ctx.tree.body]
        found = next((n for n in nodes if isinstance(n, DEF_TYPES) and n.name == func.id), None)
        return (found, False) if found is not None else None
    owner, _ = method_of(ctx)
    if not isinstance(func, ast.Attribute) or dotted_name(func.value) not in ("self", "cls") or owner is None:
        return None
    for cls in class_family(ctx, owner):
        for stmt in cls.body:
            if isinstance(stmt, DEF_TYPES) and stmt.name == func.attr:
                static = any(dotted_name(d) == "staticmethod" for d in stmt.decorator_list)
                return stmt, not static
    return None


def parameters_given(callee: FunctionNode, method: bool, call: ast.Call) -> list[tuple[str, ast.expr]]:
    """(parameter name, argument) for the arguments of ``call`` bound by name or position."""
    positional = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)][1 if method else 0:]
    bound = [(name, arg) for name, arg in zip(positional, call.args) if not isinstance(arg, ast.Starred)]
    bound.extend((k.arg, k.value) for k in call.keywords if k.arg is not None)
    return bound


def joins_argument(callee: FunctionNode, parameter: str, joins: frozenset[str] = frozenset({"join"})) -> bool:
    """``callee`` calls one of ``joins`` on ``parameter``, or on the variable
    of a loop over it (``for t in threads: t.join(5)``)."""
    joined = {parameter}
    for sub in ast.walk(callee):
        if isinstance(sub, (ast.For, ast.AsyncFor, ast.comprehension)) and mentions(sub.iter) & joined:
            joined.update(target_names(sub.target))
    return any(
        isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in joins
        and dotted_name(sub.func.value) in joined
        for sub in ast.walk(callee)
    )
