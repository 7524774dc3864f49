"""What every watch builds on: the ``Watch`` protocol, ``SetWatch``, and the
``Roots`` that make the paths in a finding stable.

A watch takes a snapshot of its state (``take``), names what differs from
the expected state (``leaks``), and, for process state, puts the expected
state back (``restore``), so a leak is reported once, at its source. A
broader-scoped fixture (class, module, session) may hold state across the
tests it serves: the change its setup makes is applied to the expected
state (``apply``) until it is finalized (``revert``). The watches
themselves are in :mod:`~flake8_hermetic.guard.residue`,
:mod:`~flake8_hermetic.guard.procstate` and
:mod:`~flake8_hermetic.guard.running`; :mod:`~flake8_hermetic.guard.watches`
names them all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from flake8_hermetic.guard.stable import stable

State = Any


class Watch:
    kind = ""
    restorable = True  # process state is put back; residue, threads and children are adopted
    shared = False  # state other xdist workers can change too (the checkout, the home directory)

    def take(self) -> State:
        raise NotImplementedError

    def leaks(self, expected: State, current: State) -> list[str]:
        raise NotImplementedError

    def restore(self, expected: State, current: State) -> None:
        pass

    def apply(self, expected: State, before: State, after: State) -> State:
        return after

    def revert(self, expected: State, before: State, after: State) -> State:
        return before

    def reapply(self, expected: State, before: State, after: State, current: State) -> State:
        """``expected`` with the change of a fixture that is still alive put
        back, where the current state still shows it (see ``Monitor.release``)."""
        return after if current == after and before != after else expected


class SetWatch(Watch):
    """State as a set of atoms: a fixture's setup adds and removes some."""

    def apply(self, expected: State, before: State, after: State) -> State:
        return (expected - (before - after)) | (after - before)

    def revert(self, expected: State, before: State, after: State) -> State:
        return (expected - (after - before)) | (before - after)

    def reapply(self, expected: State, before: State, after: State, current: State) -> State:
        return (expected | ((after - before) & current)) - ((before - after) - current)


class Roots:
    """The placeholders of stable names, longest path first. A ``later`` root
    is asked for its path only when a name is first needed (pytest's basetemp
    is made on first use: the guard does not make it for a suite that never
    asks for ``tmp_path``)."""

    def __init__(self, pairs: Iterable[tuple[str, str]], later: Iterable[tuple[Callable[[], str], str]] = ()) -> None:
        self.given = list(pairs)
        self.later = list(later)
        self.pairs: list[tuple[str, str]] | None = None

    def __call__(self, text: str) -> str:
        if self.pairs is None:
            given = self.given + [(path(), name) for path, name in self.later]
            both = {(form(path), name) for path, name in given if path for form in (os.path.realpath, os.path.abspath)}
            self.pairs = sorted(both, key=lambda pair: (-len(pair[0]), pair))
        return stable(text, self.pairs)
