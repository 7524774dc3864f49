"""Recognising calls that start a child process, and reading their argv.

Shared by the rules about children: HRM106 (no ``cwd=``), HRM113 (never
waited on), HRM115 (git writes with the user's config) and HRM302 (an
interpreter named by name).
"""

from __future__ import annotations

import ast
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

#: canonical name -> how the command is given: None (an argv list or a
#: string, ``args=``), "varargs" (one word per positional argument) or
#: "shell" (one command string)
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
#: the callees child_process() recognises, as a rule declares its ``calls``
SPAWNER_CALLS = frozenset({*SPAWNERS, SPAWN_FAMILY_PREFIX + "*"})

Argv = tuple[str | None, ...]

#: git's own options that come before the subcommand and take a value as
#: the next word (``git -C dir status``); ``--opt=value`` spellings are one word
GIT_OPTIONS_WITH_VALUE = frozenset({
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--exec-path",
})
#: options that choose the repository, as ``cwd=`` would
GIT_DIRECTORY_OPTIONS = frozenset({"-C", "--git-dir", "--work-tree"})


@dataclass(frozen=True)
class ChildProcess:
    """A recognised child-process call."""

    name: str
    call: ast.Call
    #: the literal words of the command line, when they can be read
    #: (a list/tuple literal, a shell string, or varargs); None otherwise.
    #: Non-literal words are None in the tuple.
    argv: Argv | None

    def keyword(self, name: str) -> ast.expr | None:
        for keyword in self.call.keywords:
            if keyword.arg == name:
                return keyword.value
        return None

    @property
    def has_unpacked_kwargs(self) -> bool:
        return any(keyword.arg is None for keyword in self.call.keywords)

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


@dataclass(frozen=True)
class GitCommand:
    """``git [global options] subcommand [arguments]``."""

    #: the words between ``git`` and the subcommand, e.g. ("-c", "user.name=x")
    global_options: Argv
    #: None when the subcommand is not a literal word (or is missing)
    subcommand: str | None
    arguments: Argv

    @property
    def sets_config(self) -> bool:
        """``-c key=value`` / ``--config-env`` before the subcommand."""
        return any(
            word is not None and (word == "-c" or word.startswith(("-c", "--config-env")))
            for word in self.global_options
        )

    @property
    def chooses_directory(self) -> bool:
        """``-C dir``, ``--git-dir``, ``--work-tree``: the repository is explicit."""
        return any(
            word is not None and (word in GIT_DIRECTORY_OPTIONS or word.startswith(("--git-dir=", "--work-tree=")))
            for word in self.global_options
        )


def parse_git(argv: Argv) -> GitCommand:
    """Split a git argv (``argv[0]`` is git) at its subcommand."""
    index = 1
    while index < len(argv):
        word = argv[index]
        if word is None or not word.startswith("-"):
            break
        index += 2 if word in GIT_OPTIONS_WITH_VALUE else 1
    index = min(index, len(argv))
    subcommand = argv[index] if index < len(argv) else None
    return GitCommand(tuple(argv[1:index]), subcommand, tuple(argv[index + 1:]))


def command_words(argv: Argv) -> Argv:
    """The words that say what a command does: the program's base name and
    its arguments, with git's global options (``-C dir``, ``-c k=v``,
    ``--no-pager``) dropped so ``git -C repo status`` reads as ``git status``."""
    if not argv or argv[0] is None:
        return argv
    program = program_name(argv[0])
    if program == "git":
        git = parse_git(argv)
        head: Argv = ("git",) if git.subcommand is None else ("git", git.subcommand)
        return head + git.arguments
    return (program, *argv[1:])


def starts_with(argv: Argv, prefixes: Sequence[Sequence[str]]) -> bool:
    """Whether the command's leading words are one of ``prefixes``
    (each a sequence of words, e.g. ``("git", "status")``)."""
    words = command_words(argv)
    for prefix in prefixes:
        if prefix and len(words) >= len(prefix) and all(w == p for w, p in zip(words, prefix)):
            return True
    return False


def _word(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _argv_of(node: ast.expr, shell: bool) -> Argv | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        # ["git", "status"] + extra: the leading words are still literal
        leading = _argv_of(node.left, shell)
        return None if leading is None else (*leading, None)
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
    argv: Argv | None = None
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


def program_word(child: ChildProcess) -> str | None:
    """The literal word naming the program the child runs, or None.

    That is argv[0], except where the call names the program apart from
    the argv: ``executable=`` (argv[0] is then only a display name) and the
    path argument of ``os.spawn*`` (``os.spawnv(mode, path, args)``).
    """
    executable = child.keyword("executable")
    if executable is not None:
        return _word(executable)
    if child.name.startswith(SPAWN_FAMILY_PREFIX):
        return _word(child.call.args[1]) if len(child.call.args) > 1 else None
    if not child.argv:
        return None
    return child.argv[0]
