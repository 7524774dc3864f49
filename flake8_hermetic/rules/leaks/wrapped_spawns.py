"""Judging a project's spawner wrappers as the children they start (HRM106, HRM115).

A rule about child processes mixes :class:`WrappedSpawns` in: it judges
each spawner call with ``_judge(node, child)``; a spawner call that passes
and turns out to sit in a wrapper of the file (``def run_cmd(*args):
return subprocess.run(args)``) teaches the rule that wrapper, and so do the
wrappers imported from other modules of the test tree (read by the project
model), so that each later ``run_cmd("git", "init", ...)`` is judged as the
child it starts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from flake8_hermetic.context import Context
from flake8_hermetic.facts.processes import ChildProcess, child_process
from flake8_hermetic.facts.wrappers import SpawnWrapper, same_file_wrapper
from flake8_hermetic.violation import Violation


class WrappedSpawns:
    """A mixin of rules about children: the rule class holds ``_wrappers``
    in its slots and implements ``_judge``."""

    __slots__ = ()

    ctx: Context
    _wrappers: dict[str, SpawnWrapper]

    def _judge(self, node: ast.Call, child: ChildProcess) -> Iterator[Violation]:
        raise NotImplementedError

    def wants_wrapper(self, wrapper: SpawnWrapper) -> bool:
        """Whether a wrapper's callers are judged (a wrapper that isolates the
        child itself is not, for a rule that asks)."""
        return True

    def learn_imported_wrappers(self) -> None:
        self._wrappers = {}
        for wrapper in self.ctx.project.spawn_wrappers().values():  # imported from the test tree
            if self.wants_wrapper(wrapper):
                self.learn_wrapper(wrapper)

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        child = child_process(node, self.ctx.call_name(node))
        if child is None:
            return
        found = list(self._judge(node, child))
        if not found:
            wrapper = same_file_wrapper(self.ctx, child)
            if wrapper is not None and self.wants_wrapper(wrapper):
                self.learn_wrapper(wrapper)
        yield from found

    def learn_wrapper(self, wrapper: SpawnWrapper) -> None:
        """Judge the calls of ``wrapper`` from here on as the children they start."""
        self._wrappers[wrapper.callee] = wrapper
        self.ctx.dispatch_calls_to(wrapper.callee, self.visit_wrapper_call)

    def visit_wrapper_call(self, node: ast.Call) -> Iterator[Violation]:
        wrapper = self._wrappers.get(self.ctx.call_name(node) or "")
        if wrapper is None or self.ctx.function is wrapper.function:
            return
        child = wrapper.child_for(node)
        if child is not None:
            yield from self._judge(node, child)
