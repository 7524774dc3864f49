"""HRM112: a thread started in a function that never joins it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.names import last_name
from flake8_hermetic.imports import dotted_name
from flake8_hermetic.nodes import DEF_TYPES, FunctionNode
from flake8_hermetic.rules.leaks.function_facts import (
    CONTAINER_METHODS, FunctionRule, KnownClassesRule, ends_kept, holder_of, kept_on_instance,
)
from flake8_hermetic.rules.leaks.lifecycle import (
    class_family, containers_holding, joins_argument, local_callee, method_of, parameters_given,
)
from flake8_hermetic.rules.leaks.syntax import mentions, target_names
from flake8_hermetic.violation import Violation


THREAD_CLASSES = frozenset({"threading.Thread", "threading.Timer"})
JOIN_METHODS = frozenset({"join"})
START_METHODS = frozenset({"start"})


class UnjoinedThreadRule(KnownClassesRule, FunctionRule):
    """
    Flags a `threading.Thread` (or `Timer`) started in a function that never joins it.

    ## Why is this bad?
    A thread that is not joined outlives the test that started it. It keeps
    reading state the next test is changing, writes into directories that
    were already removed (and so re-creates them), and makes the worker
    process multi-threaded, which changes what `fork()` may do. When it
    fails, the traceback lands in whichever test is running at the time.

    The thread counts as joined when the same function calls `.join(` on
    it (or on the loop variable of a loop over a list of threads, also a
    list it was put in: `threads.append(t)`, `pair = [a, b]`), passes
    it to a cleanup registration (`addCleanup(t.join)`) or to a helper
    whose name contains `join` or whose body joins it (see "nothing
    running" below), manages it with a `with` block, or is a
    fixture that joins it after `yield`, or waits it out in a loop
    (`while t.is_alive(): await sleep(0.01)`, also with `and` a deadline:
    the loop ends when the thread does). A thread that is never started
    is not flagged, and neither is one a plain helper function returns to
    its caller.

    ## Example
    ```python
    def test_consumer():
        worker = threading.Thread(target=consume, args=(queue,), daemon=True)
        worker.start()
        queue.put(1)
        assert results.get(timeout=5) == 1
    ```

    ## Use instead
    ```python
    def test_consumer():
        worker = threading.Thread(target=consume, args=(queue,))
        worker.start()
        queue.put(1)
        assert results.get(timeout=5) == 1
        queue.put(STOP)
        worker.join(timeout=5)
        assert not worker.is_alive()
    ```

    ## Off by default
    Turn it on with `--extend-select=HRM112` (or `extend-select` in the
    config). On the held-out half of the suites it was measured on and never
    tuned against (docs/precision.md), 3 of 17 of its findings were hazards
    a maintainer would fix (18%), under the 80% a default-on rule must
    reach: most threads were visibly finished inside the test: a blocking
    read or wait returns only after the thread's last action, or a short
    accept thread hands over to a thread the library owns and ends. It would
    need to follow what the test waits on to the thread's last statement.

    ## Options
    None.

    ## Known problems
    A thread kept on `self` (or put in a list kept on `self`) that another
    method of the class joins is taken as joined: `tearDown`, a method
    registered with `self.addCleanup(self.stop_server)`, a `stop()` the
    test calls. That holds for a thread started in `setUp` too: a failure
    later in `setUp` skips `tearDown`, but the pair is the idiom unittest
    is built around. The join may be `t.join()`, a helper whose name
    contains `join` (`join_thread(self.thread)`), a loop over the list, or
    a method of a `Thread` subclass defined in the same file that calls
    `self.join()` (`self.server.stop()`). Subclasses of `Thread` are
    recognised when they are defined in the same file. A helper is
    followed one call deep, in the same file: a helper imported from
    another module, or one that hands the thread on to another helper,
    is not read.
    """

    code = "HRM112"
    default_on = False
    principles = ("nothing-running",)
    message = "thread started here is never joined in this function and outlives the test; join it with a timeout (or addCleanup(t.join))"
    calls = THREAD_CLASSES

    known_classes = THREAD_CLASSES

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: local Thread subclass -> its methods that join the thread (``stop``)
        self.joining_methods: dict[str, set[str]] = {}

    def visit_ClassDef(self, node: ast.ClassDef) -> Iterator[Violation]:
        yield from super().visit_ClassDef(node)
        if node.name in self.local_subclasses:
            inherited = set().union(*(self.joining_methods.get(dotted_name(b) or "", set()) for b in node.bases))
            own = {
                method.name for method in node.body
                if isinstance(method, DEF_TYPES) and any(
                    isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in JOIN_METHODS and dotted_name(sub.func.value) == "self"
                    for sub in ast.walk(method)
                )
            }
            self.joining_methods[node.name] = inherited | own

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        name = self.ctx.call_name(node)
        if not self.is_known_class(name):
            return
        function = self.ctx.function
        if function is None:
            return
        holder = holder_of(self.ctx, node)
        if holder.chained == "start":
            if not self._inside_thread_waiter(node) and not self._in_child_process():
                yield self.report(node)
            return
        if holder.how != "assigned" or not holder.names or self.handed_back(holder):
            return
        facts = self.facts(function)
        if not any(facts.called(n, START_METHODS) for n in holder.names):
            return
        names = set(holder.names) | containers_holding(function, set(holder.names))
        for n in names:
            if facts.called(n, JOIN_METHODS, handed_over=True) or n in facts.registered or n in facts.managed:
                return
            if facts.passed_to(n, lambda callee: "join" in callee):
                return
        if self._joined_by_helper(function, names) or _waited_out_in_loop(function, holder.names):
            return
        if self.joined_elsewhere_in_class(holder.names, function, name) or self._inside_thread_waiter(node):
            return
        if not self._in_child_process():
            yield self.report(node)

    def _joined_by_helper(self, function: FunctionNode, names: set[str]) -> bool:
        """The thread (or a list holding it) is handed to a helper of the
        module, of the function or of the class (``self._reap(t)``) whose
        body joins that argument."""
        facts = self.facts(function)
        wanted = set().union(*(facts.aliases(n) for n in names))
        for sub in ast.walk(function):
            if not isinstance(sub, ast.Call):
                continue
            found = local_callee(self.ctx, sub)
            if found is None or found[0] is function:
                continue
            callee, method = found
            for parameter, argument in parameters_given(callee, method, sub):
                if mentions(argument) & wanted and joins_argument(callee, parameter, JOIN_METHODS):
                    return True
        return False

    def _in_child_process(self) -> bool:
        """A method handed to ``Process(target=self.method)``: its threads
        live and die in the child process."""
        owner, method = method_of(self.ctx)
        if owner is None or method is None:
            return False
        wanted = {f"self.{method.name}", f"cls.{method.name}", f"{owner.name}.{method.name}"}
        for sub in (node for family in class_family(self.ctx, owner) for node in ast.walk(family)):
            if isinstance(sub, ast.Call) and (dotted_name(sub.func) or "").endswith("Process"):
                if any(k.arg == "target" and dotted_name(k.value) in wanted for k in sub.keywords):
                    return True
        return False

    def _inside_thread_waiter(self, node: ast.Call) -> bool:
        """``with threading_helper.wait_threads_exit():`` waits for every
        thread started in its block."""
        for ancestor, on_path in self.ctx.ancestors_in_function(node):
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and on_path not in ancestor.items:
                for item in ancestor.items:
                    call = item.context_expr
                    name = (dotted_name(call.func) or "").lower() if isinstance(call, ast.Call) else ""
                    if "thread" in name and any(word in name for word in ("wait", "join", "reap")):
                        return True
        return False

    def joined_elsewhere_in_class(self, names: tuple[str, ...], function: FunctionNode, cls: str | None) -> bool:
        """A thread kept on ``self`` (or in a list kept on ``self``) may be
        joined by another method of the class: ``tearDown``, a cleanup
        ``setUp`` registered, a ``stop()`` the test calls."""
        kept = _kept_with_containers(names, function)
        owner, _ = method_of(self.ctx)
        if not kept or owner is None:
            return False
        joins = JOIN_METHODS | self.joining_methods.get(cls or "", set())
        searched: list[ast.AST] = list(class_family(self.ctx, owner))
        outer = [s.node for s in self.ctx.scopes if s.kind == "function" and getattr(s.node, "lineno", 0) < owner.lineno]
        attributes: frozenset[str] = frozenset()
        if outer:
            # a class defined inside the test: the test joins what its instance keeps (``target.threads``)
            searched.append(outer[-1])
            attributes = frozenset(name.rpartition(".")[2] for name in kept)
        calls = _calls_following_loops(searched, kept, attributes)
        return any(
            ends_kept(call, kept, joins, attributes)
            or ("join" in last_name(call).lower() and any(dotted_name(a) in kept for a in call.args))
            for call in calls
        )


def _kept_with_containers(names: tuple[str, ...], function: FunctionNode) -> set[str]:
    """Those of ``names`` kept on ``self`` or ``cls``, and the containers on
    ``self`` that ``function`` puts them in (``self.threads.append(t)``)."""
    kept = kept_on_instance(names)
    for sub in ast.walk(function):
        if not isinstance(sub, ast.Call) or not isinstance(sub.func, ast.Attribute):
            continue
        if sub.func.attr in CONTAINER_METHODS:
            receiver = dotted_name(sub.func.value)
            if receiver is not None and receiver.startswith(("self.", "cls.")):
                if set().union(*(mentions(a) for a in sub.args)) & set(names):
                    kept.add(receiver)
    return kept


def _calls_following_loops(searched: list[ast.AST], kept: set[str], attributes: frozenset[str]) -> list[ast.Call]:
    """The calls under ``searched``; on the way, the variables of the loops
    over one of ``kept`` join ``kept`` (``for t in self.threads: t.join()``)."""
    calls: list[ast.Call] = []
    for sub in (node for root in searched for node in ast.walk(root)):
        if isinstance(sub, (ast.For, ast.AsyncFor, ast.comprehension)):
            source = dotted_name(sub.iter) or ""
            if source in kept or (attributes and source.rpartition(".")[2] in attributes and "." in source):
                kept.update(target_names(sub.target))
        elif isinstance(sub, ast.Call):
            calls.append(sub)
    return calls


def _waited_out_in_loop(function: FunctionNode, names: tuple[str, ...]) -> bool:
    """``while t.is_alive(): ...`` (or ``while t.is_alive() and ...``): the
    function waits until the thread has ended, which is what a join does."""
    wanted = set(names)
    for loop in ast.walk(function):
        if isinstance(loop, ast.While):
            test = loop.test
            tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
            for part in tests:
                if (
                    isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute)
                    and part.func.attr == "is_alive" and dotted_name(part.func.value) in wanted
                ):
                    return True
    return False
