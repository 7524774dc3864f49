"""Recognising calls that start a child process, and reading their argv.

Shared by the rules about children: HRM106 (no ``cwd=``), HRM113 (never
waited on), HRM115 (git writes with the user's config) and HRM302 (an
interpreter named by name).

Which expression of a spawner call holds its command line is decided in one
place, :func:`command_expression`; it is read literally for
:attr:`ChildProcess.argv` (:func:`~flake8_hermetic.facts.argv.literal_argv`)
and through the enclosing names for :func:`child_words`
(:class:`~flake8_hermetic.facts.argv.ArgvReader`). Reading words lives in
:mod:`flake8_hermetic.facts.argv`, judging the working directory in
:mod:`flake8_hermetic.facts.cwd_dependence`; a rule imports each
name from its home.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from flake8_hermetic.facts.argv import (
    MORE, Argv, ArgvReader, GitCommand, Words, literal_argv, literal_word, parse_git, program_name, word_of,
)

#: how a spawner is given its command: "argv" (an argv list or a command
#: string, first positional or ``args=``/``command=``/``cmd=``), "varargs"
#: (one word per positional argument), "shell" (one command string) or
#: "spawn" (``os.spawn*(mode, path, ...)``)
SpawnKind = Literal["argv", "varargs", "shell", "spawn"]

#: canonical name -> how the command is given
SPAWNERS: dict[str, SpawnKind] = {
    "subprocess.run": "argv",
    "subprocess.call": "argv",
    "subprocess.check_call": "argv",
    "subprocess.check_output": "argv",
    "subprocess.Popen": "argv",
    "asyncio.create_subprocess_exec": "varargs",
    "asyncio.create_subprocess_shell": "shell",
    "os.system": "shell",
    "os.popen": "shell",
    "pexpect.spawn": "shell",
    "pexpect.run": "shell",
}
SPAWN_FAMILY_PREFIX = "os.spawn"  # os.spawnl, os.spawnv, os.spawnlp ...
#: the callees child_process() recognises, as a rule declares its ``calls``
SPAWNER_CALLS = frozenset({*SPAWNERS, SPAWN_FAMILY_PREFIX + "*"})
#: the keywords that name the command, in the order they win when a call
#: passes several (``subprocess.*`` call it ``args``, ``os.system`` and
#: ``pexpect`` ``command``, ``os.popen`` and asyncio ``cmd``)
COMMAND_KEYWORDS = ("args", "command", "cmd")


@dataclass(frozen=True)
class ChildProcess:
    """A recognised child-process call."""

    name: str
    call: ast.Call
    kind: SpawnKind

    def keyword(self, name: str) -> ast.expr | None:
        for keyword in self.call.keywords:
            if keyword.arg == name:
                return keyword.value
        return None

    @property
    def has_unpacked_kwargs(self) -> bool:
        return any(keyword.arg is None for keyword in self.call.keywords)

    @cached_property
    def command(self) -> ast.expr | None:
        """The expression holding the command line (see :func:`command_expression`)."""
        return command_expression(self.call, self.kind)

    @cached_property
    def argv(self) -> Argv | None:
        """The literal words of the command line, when they can be read
        (a list/tuple literal, a command string, or varargs); None otherwise.
        Non-literal words are None in the tuple."""
        return None if self.command is None else literal_argv(self.command)

    @property
    def program(self) -> str | None:
        """The program's base name (``/usr/bin/git`` -> ``git``), if literal."""
        if not self.argv or self.argv[0] is None:
            return None
        return program_name(self.argv[0])

    @property
    def git(self) -> GitCommand | None:
        """The git command line this child runs, if it runs git."""
        if self.program != "git" or self.argv is None:
            return None
        return parse_git(self.argv)


def spawn_kind(name: str | None) -> SpawnKind | None:
    """How the spawner ``name`` (a resolved callee) is given its command; None if it is no spawner."""
    if name is None:
        return None
    if name in SPAWNERS:
        return SPAWNERS[name]
    return "spawn" if name.startswith(SPAWN_FAMILY_PREFIX) else None


def child_process(call: ast.Call, name: str | None) -> ChildProcess | None:
    """The child process ``call`` starts, if ``name`` (its resolved callee) is a spawner."""
    kind = spawn_kind(name)
    if kind is None or name is None:
        return None
    return ChildProcess(name, call, kind)


def command_expression(call: ast.Call, kind: SpawnKind) -> ast.expr | None:
    """The one expression that holds a spawner call's command line, or None.

    - "argv" and "shell": the first positional argument, else the first of
      ``args=``, ``command=``, ``cmd=`` (in that order) the call passes;
    - "varargs" (``create_subprocess_exec("git", *rest)``): its positional
      arguments, as one list;
    - "spawn" (``os.spawnv(mode, path, args)``, ``os.spawnl(mode, path, a0, a1)``):
      the one argument after the path, else the arguments after it as one list.

    A lone ``*args`` in the command's place says nothing: None.
    """
    if kind == "varargs":
        return _word_list(call.args) if call.args else None
    if kind == "spawn":
        rest = call.args[2:]
        if len(rest) == 1 and not isinstance(rest[0], ast.Starred):
            return rest[0]
        return _word_list(rest) if rest else None
    command = call.args[0] if call.args else _command_keyword(call)
    return None if command is None or isinstance(command, ast.Starred) else command


def _command_keyword(call: ast.Call) -> ast.expr | None:
    given = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg in COMMAND_KEYWORDS}
    return next((given[name] for name in COMMAND_KEYWORDS if name in given), None)


def _word_list(words: list[ast.expr]) -> ast.List:
    """Words passed one per argument, as the argv list they make."""
    return ast.List(elts=list(words), ctx=ast.Load())


def program_word(child: ChildProcess) -> str | None:
    """The literal word naming the program the child runs, or None.

    That is argv[0], except where the call names the program apart from
    the argv: ``executable=`` (argv[0] is then only a display name) and the
    path argument of ``os.spawn*`` (``os.spawnv(mode, path, args)``).
    """
    executable = child.keyword("executable")
    if executable is not None:
        return literal_word(executable)
    if child.kind == "spawn":
        return literal_word(child.call.args[1]) if len(child.call.args) > 1 else None
    if not child.argv:
        return None
    return child.argv[0]


def child_words(child: ChildProcess, reader: ArgvReader, line: int) -> Words | None:
    """The command line ``child`` runs, read through ``reader``: the program
    first (``executable=`` and the path of ``os.spawn*`` take its place)."""
    call = child.call
    if child.kind == "spawn" and len(call.args) < 2:
        return None
    command = child.command
    words = None if command is None else reader.words(command, line)
    if child.kind == "spawn":
        words = (word_of(call.args[1]), *(words[1:] if words else (MORE,)))
    executable = child.keyword("executable")
    if executable is not None and words:
        words = (word_of(executable), *words[1:])
    return words
