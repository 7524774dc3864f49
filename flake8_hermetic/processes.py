"""Recognising calls that start a child process, and reading their argv.

Shared by the rules about children: HRM106 (no ``cwd=``), HRM113 (never
waited on), HRM115 (git writes with the user's config) and HRM302 (an
interpreter named by name).
"""

from __future__ import annotations

import ast
import shlex
from dataclasses import dataclass

#: canonical name -> whether the command is a shell string (vs an argv list)
SPAWNERS = {
    "subprocess.run": None,
    "subprocess.call": None,
    "subprocess.check_call": None,
    "subprocess.check_output": None,
    "subprocess.Popen": None,
    "asyncio.create_subprocess_exec": "varargs",
    "asyncio.create_subprocess_shell": "shell",
    "os.system": "shell",
    "os.popen": "shell",
    "pexpect.spawn": "shell",
    "pexpect.run": "shell",
}
SPAWN_FAMILY_PREFIX = "os.spawn"  # os.spawnl, os.spawnv, os.spawnlp ...


@dataclass(frozen=True)
class ChildProcess:
    """A recognised child-process call."""

    name: str
    call: ast.Call
    #: the literal words of the command line, when they can be read
    #: (a list/tuple literal, a shell string, or varargs); None otherwise.
    #: Non-literal words are None in the tuple.
    argv: tuple[str | None, ...] | None

    def keyword(self, name: str) -> ast.expr | None:
        for keyword in self.call.keywords:
            if keyword.arg == name:
                return keyword.value
        return None

    @property
    def has_unpacked_kwargs(self) -> bool:
        return any(keyword.arg is None for keyword in self.call.keywords)


def _word(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _argv_of(node: ast.expr, shell: bool) -> tuple[str | None, ...] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        words: list[str | None] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                words.append(None)
            else:
                words.append(_word(element))
        return tuple(words)
    text = _word(node)
    if text is None:
        if isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                parts = head.value.split()
                if parts:
                    return (*parts[:-1], None) if not head.value[-1:].isspace() else (*parts, None)
        return None
    try:
        return tuple(shlex.split(text))
    except ValueError:
        return tuple(text.split())


def child_process(call: ast.Call, name: str | None) -> ChildProcess | None:
    """The child process ``call`` starts, if ``name`` (its resolved callee) is a spawner."""
    if name is None:
        return None
    if name in SPAWNERS:
        kind = SPAWNERS[name]
    elif name.startswith(SPAWN_FAMILY_PREFIX):
        kind = "spawn"
    else:
        return None
    argv: tuple[str | None, ...] | None = None
    if kind == "varargs":
        argv = tuple(_word(a) for a in call.args) if call.args else None
    elif kind == "spawn":
        # os.spawnl(mode, path, arg0, arg1, ...), os.spawnv(mode, path, args)
        rest = call.args[2:]
        if len(rest) == 1 and isinstance(rest[0], (ast.List, ast.Tuple)):
            argv = _argv_of(rest[0], shell=False)
        elif rest:
            argv = tuple(_word(a) for a in rest)
    else:
        command = call.args[0] if call.args else None
        if command is None:
            for keyword in call.keywords:
                if keyword.arg in ("args", "command", "cmd"):
                    command = keyword.value
        if command is not None:
            argv = _argv_of(command, shell=kind == "shell")
    return ChildProcess(name, call, argv)


def program_name(word: str) -> str:
    """``/usr/bin/git`` -> ``git``; ``C:\\Git\\git.exe`` -> ``git``."""
    base = word.replace("\\", "/").rsplit("/", 1)[-1]
    return base[:-4] if base.lower().endswith(".exe") else base
