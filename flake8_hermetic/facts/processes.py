"""Recognising calls that start a child process, and reading their argv.

Shared by the rules about children: HRM106 (no ``cwd=``), HRM113 (never
waited on), HRM115 (git writes with the user's config) and HRM302 (an
interpreter named by name).
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from flake8_hermetic.nodes import own_nodes

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
    return tuple(word for word in split_words(text, shell=False) if isinstance(word, str))  # all str: literal text


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


# -- whether a child's behaviour depends on its working directory (HRM106) ------------

#: a word of a command line: the literal text, or the expression that gives it
Word = str | ast.expr
#: an unknown number of further words (``*extra``, ``+ extra``, ``args.append(x)``)
MORE = None
Words = tuple[Word | None, ...]


class AssignedValues:
    """What the plain names of one scope were assigned, and where.

    Built from a function's own statements (not entering nested defs), or
    from a module's top-level statements; ``value(name, line)`` is the last
    value bound before ``line``, with ``+=`` read as ``name = name + value``.
    """

    __slots__ = ("_bindings", "_growth")

    def __init__(self, owner: ast.AST) -> None:
        #: name -> [(line, value)] in source order
        self._bindings: dict[str, list[tuple[int, ast.expr]]] = {}
        #: name -> lines where it grows in place (``append``, ``extend``, ``insert``)
        self._growth: dict[str, list[int]] = {}
        if isinstance(owner, ast.Module):
            nodes = self._module_statements(owner)
        else:
            nodes = own_nodes(owner)
        for node in nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                self._bind_pairs(node.targets[0], node.value, node.lineno)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._bind_pairs(node.target, node.value, node.lineno)
            elif isinstance(node, ast.NamedExpr):
                self._bind_pairs(node.target, node.value, node.lineno)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                if isinstance(node.op, ast.Add):
                    grown = ast.copy_location(
                        ast.BinOp(left=ast.Name(node.target.id, ast.Load()), op=ast.Add(), right=node.value), node,
                    )
                    self._bindings.setdefault(node.target.id, []).append((node.lineno, grown))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.attr in ("append", "extend", "insert")
            ):
                self._growth.setdefault(node.func.value.id, []).append(node.lineno)

    @staticmethod
    def _module_statements(module: ast.Module) -> Iterator[ast.AST]:
        stack: list[ast.stmt] = list(reversed(module.body))
        while stack:
            statement = stack.pop()
            yield statement
            if isinstance(statement, ast.Expr):
                yield statement.value
            if isinstance(statement, (ast.If, ast.Try)):
                nested = [*statement.body, *statement.orelse]
                if isinstance(statement, ast.Try):
                    nested += [s for handler in statement.handlers for s in handler.body] + statement.finalbody
                stack.extend(reversed(nested))

    def _bind_pairs(self, target: ast.expr, value: ast.expr, line: int) -> None:
        if isinstance(target, ast.Name):
            self._bindings.setdefault(target.id, []).append((line, value))
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            if len(target.elts) == len(value.elts):
                for sub_target, sub_value in zip(target.elts, value.elts):
                    self._bind_pairs(sub_target, sub_value, line)

    def value(self, name: str, line: int) -> tuple[ast.expr, bool] | None:
        """The value ``name`` last had before ``line`` and whether it grew
        in place since, or None if this scope binds nothing to it before."""
        bound = None
        for bound_line, value in self._bindings.get(name, ()):
            if bound_line < line:
                bound = (bound_line, value)
        if bound is None:
            return None
        grew = any(bound[0] < grown < line for grown in self._growth.get(name, ()))
        return bound[1], grew


class ArgvReader:
    """Reads a child's command line through the names of the enclosing
    function and module, and tells whether what it runs depends on the
    working directory.

    ``scopes`` are innermost first (the function, then the module);
    ``resolve`` is the import resolver's canonical dotted name of a node.
    """

    MAX_DEPTH = 8

    def __init__(self, scopes: Sequence[AssignedValues], resolve: Callable[[ast.AST], str | None]) -> None:
        self._scopes = scopes
        self._resolve = resolve

    # -- names -------------------------------------------------------------------
    def _lookup(self, name: ast.Name, line: int) -> tuple[ast.expr, bool] | None:
        for scope in self._scopes:
            found = scope.value(name.id, line)
            if found is not None:
                return found
        return None

    def value_of(self, node: ast.expr, line: int) -> tuple[ast.expr, int]:
        """``node``, or the value the name ``node`` was assigned
        (transitively), with the line names in it are read at."""
        for _ in range(self.MAX_DEPTH):
            if not isinstance(node, ast.Name):
                break
            found = self._lookup(node, line)
            if found is None or found[1]:
                break
            node, line = found[0], getattr(found[0], "lineno", line)
        return node, line

    # -- words -------------------------------------------------------------------
    def words(self, command: ast.expr, line: int, shell: bool, depth: int = 0) -> Words | None:
        """The words of ``command`` (an argv or a command string), or None
        when not even its first word can be read."""
        if depth > self.MAX_DEPTH:
            return None
        if isinstance(command, ast.Name):
            found = self._lookup(command, line)
            if found is None:
                return None
            value, grew = found
            words = self.words(value, getattr(value, "lineno", line), shell, depth + 1)
            return None if words is None else (*words, MORE) if grew else words
        if isinstance(command, (ast.List, ast.Tuple)):
            collected: list[Word | None] = []
            for element in command.elts:
                if isinstance(element, ast.Starred):
                    inner = self.words(element.value, line, False, depth + 1)
                    collected.extend(inner if inner is not None else (MORE,))
                else:
                    collected.append(word_of(element))
            return tuple(collected)
        if isinstance(command, ast.BinOp) and isinstance(command.op, ast.Add):
            left = self.words(command.left, line, shell, depth + 1)
            if left is None:
                return None
            right = self.words(command.right, line, shell, depth + 1)
            return (*left, *(right if right is not None else (MORE,)))
        if isinstance(command, ast.Call):
            name = self._resolve(command.func)
            if name in ("list", "tuple") and len(command.args) == 1:
                return self.words(command.args[0], line, shell, depth + 1)
            if name == "shlex.split" and command.args:
                text = self.text(command.args[0], line)
                return None if text is None else split_words(text, shell=False)
            func = command.func
            if (  # " ".join(argv), shlex.join(argv)
                (name == "shlex.join" or (isinstance(func, ast.Attribute) and func.attr == "join"
                                          and isinstance(func.value, ast.Constant) and func.value.value == " "))
                and len(command.args) == 1
            ):
                return self.words(command.args[0], line, False, depth + 1)
        text = self.text(command, line)
        if text is None:
            return None
        return split_words(text, shell=True)

    def text(self, node: ast.expr, line: int, depth: int = 0) -> str | None:
        """The literal text of a string expression, with ``{}`` standing in
        for each interpolated part; None when it is not built from literals."""
        if depth > self.MAX_DEPTH:
            return None
        node, line = self.value_of(node, line)
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            return node.value if isinstance(node.value, str) else node.value.decode("latin-1")
        if isinstance(node, ast.JoinedStr):
            return "".join(
                part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else "{}"
                for part in node.values
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.text(node.left, line, depth + 1), self.text(node.right, line, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            return self.text(node.left, line, depth + 1)
        if isinstance(node, ast.Call):
            name = self._resolve(node.func)
            if name == "textwrap.dedent" and node.args:
                inner = self.text(node.args[0], line, depth + 1)
                return None if inner is None else textwrap.dedent(inner)
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "format":
                return self.text(func.value, line, depth + 1)
        return None

    def is_interpreter(self, node: ast.expr, line: int) -> bool:
        """``sys.executable``, also wrapped (``os.fsencode(sys.executable)``)
        or through a name assigned from it."""
        node, _ = self.value_of(node, line)
        return any(
            isinstance(sub, (ast.Attribute, ast.Name)) and self._resolve(sub) == "sys.executable"
            for sub in ast.walk(node)
        )


def word_of(node: ast.expr) -> Word:
    """A literal str/bytes word as text; anything else stays an expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        return node.value.decode("latin-1")
    return node


_SHELL_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")"})


def split_words(text: str, shell: bool) -> Words:
    """The words of a command string; with ``shell``, the operators
    ``; && || | > >> <`` are words of their own."""
    try:
        if shell:
            lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            return tuple(lexer)
        return tuple(shlex.split(text))
    except ValueError:
        return tuple(text.split())


#: tools that find their project, configuration or cache in the current
#: directory whatever paths they are given (a Makefile, tox.ini,
#: package.json, .mypy_cache, .coverage, the flake8 and pyright config)
CWD_TOOLS = frozenset({
    "make", "gmake", "cmake", "ninja", "meson", "scons", "tox", "nox", "coverage", "flake8", "mypy", "dmypy",
    "pylint", "pyright", "pyre", "pre-commit", "hatch", "poetry", "pdm", "pipenv", "uv", "npm", "npx", "yarn",
    "pnpm", "cargo", "go", "mvn", "gradle", "bazel", "configure", "pyinstaller", "unittest", "compileall",
})
#: tools that work on the current directory only when given no path
DEFAULT_TO_CWD_TOOLS = frozenset({"pytest", "py.test", "black", "isort", "ruff", "find", "build", "twine"})
#: conventional directory names of a checkout: as a bare argument, a relative path
CHECKOUT_DIRECTORIES = frozenset({"tests", "testing", "src", "docs", "dist"})
#: python options that keep the working directory off the child's sys.path
ISOLATING_OPTIONS = frozenset("IP")
#: file utilities: every operand is a path
FILE_COMMANDS = frozenset({
    "touch", "mkdir", "rmdir", "rm", "cp", "mv", "ln", "chmod", "chown", "tar", "zip", "unzip", "gzip",
    "gunzip", "bzip2", "bunzip2", "xz", "unxz", "cat", "ls", "du", "tee", "truncate", "install", "rsync", "patch",
})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "csh", "tcsh"})
#: file name endings that make a word a path
PATH_SUFFIXES = frozenset({
    "py", "pyc", "pyi", "pth", "txt", "cfg", "toml", "ini", "json", "yaml", "yml", "tar", "gz", "tgz", "bz2",
    "xz", "zip", "whl", "egg", "c", "h", "cpp", "so", "o", "a", "log", "out", "lock", "md", "rst", "html",
    "xml", "csv", "sh", "dat", "db", "sqlite", "sqlite3", "plist", "conf", "exe", "bin", "js", "lst", "patch",
    "diff", "pem", "key", "crt",
})
_PYTHON_NAME = re.compile(r"^(python|pypy)[0-9.]*[dmu]?$|^py$", re.IGNORECASE)
_ABSOLUTE = re.compile(r"^(/|~|\\\\|[A-Za-z]:[\\/])")
_PLACEHOLDER = re.compile(r"[{}%$]")
#: calls that take a path first; a relative literal there reads or writes
#: under the working directory
PATH_TAKING_CALLS = frozenset({
    "open", "Path", "PurePath", "PosixPath", "WindowsPath", "mkdir", "makedirs", "remove", "unlink", "rmdir",
    "removedirs", "rename", "renames", "replace", "listdir", "scandir", "walk", "stat", "lstat", "exists",
    "isfile", "isdir", "lexists", "getsize", "chmod", "utime", "symlink", "link", "rmtree", "copy", "copy2",
    "copyfile", "copytree", "move", "mkfifo", "chdir", "glob", "iglob", "ZipFile", "TarFile", "connect",
    "FileHandler", "touch",
})
CWD_READS = frozenset({"getcwd", "getcwdb", "cwd"})


def is_absolute(word: str) -> bool:
    return _ABSOLUTE.match(word) is not None or "://" in word


def looks_like_relative_path(word: str) -> bool:
    """Whether a literal argument reads as a path relative to the working
    directory: ``.``, ``build/``, ``src/x.py``, ``setup.py``, ``--out=dist/x.whl``."""
    if word.startswith("-"):
        if "=" not in word:
            return False
        word = word.split("=", 1)[1]
    if not word or is_absolute(word) or _PLACEHOLDER.search(word):
        return False
    if word in (".", "..") or "/" in word:
        return True
    stem, dot, suffix = word.rpartition(".")
    return bool(dot and stem and suffix.lower() in PATH_SUFFIXES)


def _operand(word: str) -> bool:
    """A file utility's operand that names a relative path (``stamp`` in ``touch stamp``)."""
    return not word.startswith("-") and not word.isdigit() and not is_absolute(word) and not _PLACEHOLDER.search(word)


class CwdJudge:
    """Why a command line depends on the working directory it runs in."""

    def __init__(self, reader: ArgvReader, line: int, readonly: Sequence[Sequence[str]] = ()) -> None:
        self._reader = reader
        self._line = line
        self._readonly = readonly

    def command(self, words: Words) -> str | None:
        """The reason ``words`` (a whole command line, possibly a shell
        pipeline) depends on the working directory, or None."""
        for simple in _simple_commands(words):
            reason = self._simple(simple)
            if reason is not None:
                return reason
        return None

    def _simple(self, words: Words) -> str | None:
        words, redirected = _redirections(words)
        if redirected is not None:
            return f"redirects to the relative path {redirected!r}"
        if not words or words[0] is MORE:
            return None
        literal = tuple(word if isinstance(word, str) else None for word in words)
        if literal[-1] in ("--version", "--help") or starts_with(literal, self._readonly):
            return None
        program = words[0]
        if not isinstance(program, str):
            if self._reader.is_interpreter(program, self._line):
                return self._python(words[1:])
            text = self._reader.text(program, self._line)
            if text is None or _PLACEHOLDER.search(text):
                return self._arguments(words[1:])
            program = text
        name = program_name(program)
        if "/" in program.replace("\\", "/") and not is_absolute(program):
            return f"runs {program!r}, a path relative to the working directory"
        if _PYTHON_NAME.match(name):
            return self._python(words[1:])
        if name == "git":
            if parse_git((program, *literal[1:])).chooses_directory:
                return None
            return "runs git in the working directory's repository"
        if name in SHELLS:
            return self._shell(words[1:])
        if name == "setup.py":
            return "runs setup.py"
        tool = self._tool(name, words[1:])
        if tool is not None:
            return tool
        if name in ("pip", "pip3"):
            return self._pip(words[1:])
        if name in FILE_COMMANDS:
            operands = [word for word in words[1:] if isinstance(word, str) and _operand(word)]
            pathlike = [word for word in operands if looks_like_relative_path(word)]
            if operands:
                return f"runs {name} on the relative path {(pathlike or operands)[0]!r}"
            return None
        return self._arguments(words[1:])

    def _arguments(self, words: Words) -> str | None:
        for word in words:
            if isinstance(word, str) and (looks_like_relative_path(word) or word in CHECKOUT_DIRECTORIES):
                return f"is given the relative path {word!r}"
        return None

    def _tool(self, name: str, arguments: Words) -> str | None:
        """Why a known tool works on the current directory, None if it is not one."""
        if name in CWD_TOOLS:
            return f"runs {name}, which works on the current directory"
        if name in DEFAULT_TO_CWD_TOOLS:
            relative = self._arguments(arguments)
            if relative is not None:
                return relative
            if any(word is MORE or isinstance(word, ast.expr) or is_absolute(word) for word in arguments):
                return None  # it is (or may be) given a path to work on
            return f"runs {name} with no path, so on the current directory"
        return None

    def _shell(self, words: Words) -> str | None:
        for index, word in enumerate(words):
            if word == "-c":
                script = words[index + 1] if index + 1 < len(words) else None
                if isinstance(script, ast.expr):
                    script = self._reader.text(script, self._line)
                if not isinstance(script, str):
                    return None
                return self.command(split_words(script, shell=True))
            if not isinstance(word, str) or not word.startswith("-"):
                return self._arguments(words[index:])
        return "is an interactive shell"

    def _pip(self, words: Words) -> str | None:
        subcommand = next((w for w in words if isinstance(w, str) and not w.startswith("-")), None)
        if subcommand in ("wheel", "download") and not any(
            isinstance(w, str) and w.split("=")[0] in ("-w", "--wheel-dir", "-d", "--dest") for w in words
        ):
            return f"runs pip {subcommand}, which writes into the current directory"
        return self._arguments(words)

    def _python(self, words: Words) -> str | None:
        index = 0
        isolated = False
        while index < len(words):
            word = words[index]
            if word is MORE:
                return None
            if not isinstance(word, str) or word == "-" or not word.startswith("-") or word.startswith("--"):
                if isinstance(word, str) and word.startswith("--"):
                    index += 1
                    continue
                break
            flags = word[1:]
            for position, flag in enumerate(flags):
                if flag in ISOLATING_OPTIONS:
                    isolated = True
                if flag not in "cmWX":
                    continue
                value: Word | None = flags[position + 1:] or None
                consumed = 1
                if value is None:
                    value = words[index + 1] if index + 1 < len(words) else MORE
                    consumed = 2
                rest = words[index + consumed:]
                if flag == "c":
                    return self._snippet(value, rest)
                if flag == "m":
                    return self._module(value, rest, isolated)
                index += consumed - 1
                break
            index += 1
        if index >= len(words):
            return None
        script = words[index]
        if isinstance(script, str):
            if script == "-":
                return None
            if not is_absolute(script) and not _PLACEHOLDER.search(script):
                return f"runs the script {script!r}, a path relative to the working directory"
        return self._arguments(words[index + 1:])

    def _module(self, module: Word | None, rest: Words, isolated: bool) -> str | None:
        if isinstance(module, ast.expr):
            module = self._reader.text(module, self._line)
        if not isinstance(module, str) or not module.strip():
            return None
        module = module.strip()
        top = module.split(".")[0]
        if top in ("pip", "pip3"):
            return self._pip(rest)
        tool = self._tool(top, rest)
        if tool is not None:
            return tool.replace(f"runs {top}", f"runs python -m {module}", 1)
        # the interpreter's own modules, and its test package
        if isolated or top in sys.stdlib_module_names or top == "test" or top in CWD_TOOLS | DEFAULT_TO_CWD_TOOLS:
            return self._arguments(rest)
        return f"runs python -m {module}, which imports from the working directory first"

    def _snippet(self, code: Word | None, rest: Words) -> str | None:
        if isinstance(code, ast.expr):
            code = self._reader.text(code, self._line)
        if isinstance(code, str):
            reason = snippet_dependence(code)
            if reason is not None:
                return reason
        return self._arguments(rest)


def snippet_dependence(code: str) -> str | None:
    """Why a ``python -c`` snippet depends on the working directory: it
    passes a relative literal path to a file call, or reads the cwd."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if callee in CWD_READS:
            return f"runs a -c snippet that reads the working directory ({callee}())"
        if callee in ("listdir", "scandir") and not node.args:
            return f"runs a -c snippet that lists the working directory ({callee}())"
        if callee in PATH_TAKING_CALLS and node.args:
            first = node.args[0]
            if (
                isinstance(first, ast.Constant)
                and isinstance(first.value, (str, bytes))
                and first.value not in ("", ":memory:", b"")
            ):
                path = first.value if isinstance(first.value, str) else first.value.decode("latin-1")
                if not is_absolute(path) and not path.startswith("{}"):
                    return f"runs a -c snippet that opens the relative path {path!r}"
    return None


def _simple_commands(words: Words) -> Iterator[Words]:
    current: list[Word | None] = []
    for word in words:
        if isinstance(word, str) and word in _SHELL_OPERATORS:
            if current:
                yield tuple(current)
            current = []
        else:
            current.append(word)
    if current:
        yield tuple(current)


def _redirections(words: Words) -> tuple[Words, str | None]:
    """The words without shell redirections, and the first relative file
    one of them reads or writes."""
    kept: list[Word | None] = []
    relative: str | None = None
    index = 0
    while index < len(words):
        word = words[index]
        if isinstance(word, str) and word and set(word) <= set("<>&") and ("<" in word or ">" in word):
            if kept and isinstance(kept[-1], str) and kept[-1].isdigit():
                kept.pop()  # the descriptor of ``2>``
            target = words[index + 1] if index + 1 < len(words) else None
            if (
                isinstance(target, str)
                and relative is None
                and "&" not in word
                and not target.startswith("&")
                and not is_absolute(target)
                and not _PLACEHOLDER.search(target)
            ):
                relative = target
            index += 2
            continue
        kept.append(word)
        index += 1
    return tuple(kept), relative


def child_words(child: ChildProcess, reader: ArgvReader, line: int) -> Words | None:
    """The command line ``child`` runs, read through ``reader``: the program
    first (``executable=`` and the path of ``os.spawn*`` take its place)."""
    call = child.call
    kind = SPAWNERS.get(child.name, "spawn")
    words: Words | None
    if kind == "varargs":
        words = reader.words(ast.List(elts=list(call.args), ctx=ast.Load()), line, shell=False) if call.args else None
    elif kind == "spawn":
        if len(call.args) < 2:
            return None
        rest = call.args[2:]
        if len(rest) == 1 and not isinstance(rest[0], ast.Starred):
            words = reader.words(rest[0], line, shell=False)
        else:
            words = reader.words(ast.List(elts=list(rest), ctx=ast.Load()), line, shell=False)
        words = (word_of(call.args[1]), *(words[1:] if words else (MORE,)))
    else:
        command = call.args[0] if call.args else (
            child.keyword("args") or child.keyword("command") or child.keyword("cmd")
        )
        if command is None or isinstance(command, ast.Starred):
            return None
        words = reader.words(command, line, shell=kind == "shell")
    executable = child.keyword("executable")
    if executable is not None and words:
        words = (word_of(executable), *words[1:])
    return words
