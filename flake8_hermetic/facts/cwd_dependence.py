"""Whether what a child runs depends on the working directory it inherits
(HRM106): a relative path given to it, a tool that reads its project from
the current directory, ``python -m`` importing from it, git finding the
checkout's repository, a shell redirecting into a relative file.

:class:`CwdJudge` reads the words :class:`~flake8_hermetic.facts.argv.ArgvReader`
found, including a shell's pipelines and a ``python -c`` snippet.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from flake8_hermetic.facts.argv import (
    MORE, SHELL_OPERATORS, ArgvReader, Word, Words, parse_git, program_name, split_words, starts_with,
)

#: tools that find their project, configuration or cache in the current
#: directory whatever paths they are given (a Makefile, tox.ini,
#: package.json, .mypy_cache, .coverage, the flake8 and pyright config)
CWD_TOOLS = frozenset({
    "make", "gmake", "cmake", "ninja", "meson", "scons", "tox", "nox", "coverage", "flake8", "mypy", "dmypy",
    "pylint", "pyright", "pyre", "pre-commit", "hatch", "poetry", "pdm", "pipenv", "uv", "npm", "npx", "yarn",
    "pnpm", "cargo", "go", "mvn", "gradle", "bazel", "configure", "pyinstaller", "unittest", "compileall",
})
#: the tools of CWD_TOOLS and DEFAULT_TO_CWD_TOOLS that write there (a build, a cache, a report, a
#: reformatted file); the others only read their configuration or their input there
WRITING_TOOLS = frozenset({
    "make", "gmake", "cmake", "ninja", "meson", "scons", "tox", "nox", "coverage", "mypy", "dmypy",
    "pre-commit", "hatch", "poetry", "pdm", "pipenv", "uv", "npm", "npx", "yarn", "pnpm", "cargo", "go", "mvn",
    "gradle", "bazel", "configure", "pyinstaller", "compileall", "pytest", "py.test", "black", "isort", "ruff",
    "build",
})
#: tools of WRITING_TOOLS whose only write where they run is a cache or data file the guard expects
#: in a checkout (its default ignores: .mypy_cache, .ruff_cache, .pytest_cache, .coverage*), with the
#: subcommands and options that make them write more (a report, a reformatted file)
CACHE_ONLY_TOOLS = {
    "mypy": frozenset(), "dmypy": frozenset(), "pytest": frozenset(), "py.test": frozenset(),
    "ruff": frozenset({"format", "--fix", "--fix-only", "--add-noqa"}),
    "coverage": frozenset({"html", "xml", "json", "lcov", "annotate"}),
}


def writes_beyond_its_cache(name: str, arguments: Words) -> bool:
    """Whether the tool ``name`` run with ``arguments`` writes where it runs more than a cache the
    guard expects there (principle ``reads-only``)."""
    if name not in WRITING_TOOLS:
        return False
    more = CACHE_ONLY_TOOLS.get(name)
    if more is None:
        return True
    return any(isinstance(word, str) and word.split("=")[0] in more for word in arguments)


#: file utilities that write to (or remove) their operands or create files beside them
WRITING_FILE_COMMANDS = frozenset({
    "touch", "mkdir", "rmdir", "rm", "cp", "mv", "ln", "chmod", "chown", "tar", "zip", "unzip", "gzip",
    "gunzip", "bzip2", "bunzip2", "xz", "unxz", "tee", "truncate", "install", "rsync", "patch",
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
#: options that give a tool its root, project or configuration explicitly,
#: as git's ``-C`` does: given a directory or file of the test's own, the
#: tool no longer looks for them in the working directory
ROOT_OPTIONS = frozenset({
    "-c", "--config", "--config-file", "--rcfile", "--root", "--rootdir", "--settings", "--settings-path",
    "--project", "-p", "-C", "--directory", "--prefix", "--manifest-path", "--cwd", "--workdir",
})
#: the directory names a test tree goes by, as parts of a module name
TEST_TREE_PARTS = frozenset({"tests", "testing", "_tests", "unittests"})
#: git subcommands whose last operand is the directory they create
GIT_DESTINATION_SUBCOMMANDS = {"init": 0, "clone": 1}
#: their options that take the next word as a value
GIT_DESTINATION_OPTIONS_WITH_VALUE = frozenset({
    "-b", "--branch", "--initial-branch", "--depth", "-o", "--origin", "--reference", "-u", "--upload-pack",
    "-c", "--config", "--template", "--separate-git-dir", "--filter", "-j", "--jobs", "--shallow-since",
    "--shallow-exclude", "--object-format", "--reference-if-able", "--server-option", "--bundle-uri",
})


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

    def __init__(
        self, reader: ArgvReader, line: int, readonly: Sequence[Sequence[str]] = (),
        own_package: Callable[[str], bool] | None = None,
    ) -> None:
        self._reader = reader
        self._line = line
        self._readonly = readonly
        #: whether a top-level package is the project's own or an installed one
        self._own_package = own_package
        #: set when the reason is a write into the working directory (a redirection, git, a build or
        #: cache tool, pip wheel/download, setup.py, a writing file utility), not only a read of it
        self.writes = False

    def command(self, words: Words) -> str | None:
        """The reason ``words`` (a whole command line, possibly a shell
        pipeline) depends on the working directory, or None."""
        first = None
        for simple in _simple_commands(words):
            writes, self.writes = self.writes, False
            reason = self._simple(simple)
            if reason is not None and self.writes:
                return reason  # a write outweighs a read earlier in the pipeline
            self.writes = writes
            first = first or reason
        return first

    def _simple(self, words: Words) -> str | None:
        """The reason one simple command (no pipeline) depends on the working directory."""
        words, redirected = _redirections(words)
        if redirected is not None:
            self.writes = True
            return f"redirects to the relative path {redirected!r}"
        if not words or words[0] is MORE:
            return None
        literal = tuple(word if isinstance(word, str) else None for word in words)
        if literal[-1] in ("--version", "--help") or starts_with(literal, self._readonly):
            return None
        program = words[0]
        if isinstance(program, str):
            return self._program(program, words[1:])
        return self._computed_program(program, words[1:])

    def _computed_program(self, program: ast.expr, arguments: Words) -> str | None:
        """A program given by an expression: the interpreter, or a text read through names."""
        if self._reader.is_interpreter(program, self._line):
            return self._python(arguments)
        text = self._reader.text(program, self._line)
        if text is None or _PLACEHOLDER.search(text):
            return self._arguments(arguments)
        return self._program(text, arguments)

    def _program(self, program: str, arguments: Words) -> str | None:
        """The reason running ``program`` with ``arguments`` depends on the working directory."""
        name = program_name(program)
        if "/" in program.replace("\\", "/") and not is_absolute(program):
            self.writes = self.writes or name in WRITING_TOOLS or name == "setup.py"
            return f"runs {program!r}, a path relative to the working directory"
        if _PYTHON_NAME.match(name):
            return self._python(arguments)
        if name == "git":
            reason = _git(program, arguments)
            self.writes = self.writes or reason is not None
            return reason
        if name in SHELLS:
            return self._shell(arguments)
        if name == "setup.py":
            self.writes = True
            return "runs setup.py"
        tool = self._tool(name, arguments)
        if tool is not None:
            return tool
        if name in ("pip", "pip3"):
            return self._pip(arguments)
        if name in FILE_COMMANDS:
            reason = _file_command(name, arguments)
            self.writes = self.writes or (reason is not None and name in WRITING_FILE_COMMANDS)
            return reason
        return self._arguments(arguments)

    def _arguments(self, words: Words) -> str | None:
        for word in words:
            if isinstance(word, str) and (looks_like_relative_path(word) or word in CHECKOUT_DIRECTORIES):
                return f"is given the relative path {word!r}"
        return None

    def _tool(self, name: str, arguments: Words) -> str | None:
        """Why a known tool works on the current directory, None if it is not one."""
        if name in CWD_TOOLS:
            relative = self._arguments(arguments)
            if relative is None and _given_root(arguments):
                return None
            self.writes = self.writes or writes_beyond_its_cache(name, arguments)
            return f"runs {name}, which works on the current directory"
        if name in DEFAULT_TO_CWD_TOOLS:
            relative = self._arguments(arguments)
            if relative is not None:  # black ., ruff format src/: it works on (and writes) that path
                self.writes = self.writes or writes_beyond_its_cache(name, arguments)
                return relative
            if any(word is MORE or isinstance(word, ast.expr) or is_absolute(word) for word in arguments):
                return None  # it is (or may be) given a path to work on
            self.writes = self.writes or writes_beyond_its_cache(name, arguments)
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
            self.writes = True
            return f"runs pip {subcommand}, which writes into the current directory"
        reason = self._arguments(words)
        # pip install of a relative project builds there (its egg-info, build/)
        self.writes = self.writes or (reason is not None and subcommand == "install")
        return reason

    def _python(self, words: Words) -> str | None:
        """The reason ``python <words>`` depends on the working directory:
        its ``-c`` snippet, its ``-m`` module, or its script."""
        index = 0
        isolated = False
        while index < len(words):
            word = words[index]
            if word is MORE:
                return None
            if isinstance(word, str) and word.startswith("--"):
                index += 1
                continue
            if not isinstance(word, str) or word == "-" or not word.startswith("-"):
                break
            option = _short_options(word, words, index)
            isolated = isolated or option.isolated
            rest = words[index + option.consumed:]
            if option.flag == "c":
                return self._snippet(option.value, rest)
            if option.flag == "m":
                return self._module(option.value, rest, isolated)
            index += option.consumed
        return self._script(words[index:])

    def _script(self, words: Words) -> str | None:
        """``python script args``: a relative script, or a relative path among its arguments."""
        if not words:
            return None
        script = words[0]
        if isinstance(script, str):
            if script == "-":
                return None
            if not is_absolute(script) and not _PLACEHOLDER.search(script):
                self.writes = self.writes or program_name(script) == "setup.py"  # it builds beside itself
                return f"runs the script {script!r}, a path relative to the working directory"
        return self._arguments(words[1:])

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
        if TEST_TREE_PARTS.intersection(module.split(".")):
            return f"runs python -m {module}, a module of the test tree, found only from the checkout's root"
        if self._own_package is not None and self._own_package(top):
            # the package under test (or an installed one): the same package from the checkout or site-packages
            return self._arguments(rest)
        return f"runs python -m {module}, which imports from the working directory first"

    def _snippet(self, code: Word | None, rest: Words) -> str | None:
        if isinstance(code, ast.expr):
            code = self._reader.text(code, self._line)
        if isinstance(code, str):
            reason = snippet_dependence(code)
            if reason is not None:
                self.writes = self.writes or snippet_writes(code)
                return reason
        return self._arguments(rest)


def _literal_text(node: ast.Constant) -> str:
    return node.value if isinstance(node.value, str) else node.value.decode("latin-1")


def _relative_literal(node: ast.AST) -> bool:
    """A literal relative path: not empty, not sqlite's ``:memory:``, not absolute, and not a
    ``str.format`` template filled in later (``"{}/out"``)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
        return False
    path = _literal_text(node)
    return path not in ("", ":memory:") and not is_absolute(path) and not path.startswith("{}")


@functools.lru_cache(maxsize=256)
def snippet_calls(code: str) -> tuple[tuple[ast.Call, str], ...]:
    """The calls of a ``python -c`` snippet with their callee's last name, parsed once per text
    (none when it does not parse)."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return ()
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            calls.append((node, callee))
    return tuple(calls)


def snippet_dependence(code: str) -> str | None:
    """Why a ``python -c`` snippet depends on the working directory: it
    passes a relative literal path to a file call, or reads the cwd."""
    for node, callee in snippet_calls(code):
        if callee in CWD_READS:
            return f"runs a -c snippet that reads the working directory ({callee}())"
        if callee in ("listdir", "scandir") and not node.args:
            return f"runs a -c snippet that lists the working directory ({callee}())"
        if callee in PATH_TAKING_CALLS and node.args and _relative_literal(node.args[0]):
            return f"runs a -c snippet that opens the relative path {_literal_text(node.args[0])!r}"
    return None


#: snippet calls that create, change or remove the path they are given (or that their receiver names)
WRITING_CALLS = frozenset({
    "mkdir", "makedirs", "remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace", "chmod",
    "utime", "symlink", "link", "rmtree", "copy", "copy2", "copyfile", "copytree", "move", "mkfifo", "touch",
    "write_text", "write_bytes", "FileHandler", "connect", "symlink_to", "hardlink_to",
})


def snippet_writes(code: str) -> bool:
    """Whether a ``python -c`` snippet writes to a relative path: ``open(rel, "w")`` (any mode that
    writes), a writing call given one (``os.mkdir("build")``), or one on a ``Path`` of one
    (``Path("build").mkdir()``)."""
    for node, callee in snippet_calls(code):
        func = node.func
        if callee == "open" and node.args and _relative_literal(node.args[0]):
            keywords = {k.arg: k.value for k in node.keywords}
            mode = node.args[1] if len(node.args) > 1 else keywords.get("mode")
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax+"):
                return True
        elif callee in WRITING_CALLS:
            if node.args and _relative_literal(node.args[0]):
                return True
            receiver = func.value if isinstance(func, ast.Attribute) else None
            if isinstance(receiver, ast.Call) and receiver.args and _relative_literal(receiver.args[0]):
                return True
    return False


def _simple_commands(words: Words) -> Iterator[Words]:
    current: list[Word | None] = []
    for word in words:
        if isinstance(word, str) and word in SHELL_OPERATORS:
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


def _git(program: str, arguments: Words) -> str | None:
    """git works on the repository of the working directory unless told
    which: ``-C dir``, or the directory ``init``/``clone`` is given to create."""
    literal = tuple(word if isinstance(word, str) else None for word in arguments)
    git = parse_git((program, *literal))
    if git.chooses_directory or _git_destination_chosen(git.subcommand, arguments[len(git.global_options) + 1:]):
        return None
    return "runs git in the working directory's repository"


def _git_destination_chosen(subcommand: str | None, arguments: Words) -> bool:
    """``git init DIR`` / ``git clone URL DIR`` with DIR absolute or an
    expression (built from ``tmp_path``): the repository is where it says."""
    position = GIT_DESTINATION_SUBCOMMANDS.get(subcommand or "")
    if position is None:
        return False
    operands: list[Word] = []
    index = 0
    while index < len(arguments):
        word = arguments[index]
        if word is MORE:
            return False
        if isinstance(word, str) and word.startswith("-"):
            index += 2 if word in GIT_DESTINATION_OPTIONS_WITH_VALUE else 1
            continue
        operands.append(word)  # type: ignore[arg-type]
        index += 1
    if len(operands) != position + 1:
        return False
    destination = operands[position]
    return isinstance(destination, ast.expr) or is_absolute(destination)


def _given_root(arguments: Words) -> bool:
    """An option that names the tool's root, project or configuration
    (``--rootdir DIR``, ``-c /abs/tool.ini``, ``--config=...``) with an
    absolute path or an expression."""
    for index, word in enumerate(arguments):
        if not isinstance(word, str):
            continue
        option, equals, value = word.partition("=")
        if option not in ROOT_OPTIONS:
            continue
        given: Word | None = value if equals else (arguments[index + 1] if index + 1 < len(arguments) else MORE)
        if isinstance(given, ast.expr) or (isinstance(given, str) and is_absolute(given)):
            return True
    return False


def _file_command(name: str, arguments: Words) -> str | None:
    """A file utility given a relative operand (a path-like one preferred)."""
    operands = [word for word in arguments if isinstance(word, str) and _operand(word)]
    pathlike = [word for word in operands if looks_like_relative_path(word)]
    if operands:
        return f"runs {name} on the relative path {(pathlike or operands)[0]!r}"
    return None


@dataclass(frozen=True)
class _ShortOptions:
    """What one cluster of python's short options (``-Ic``, ``-W error``) says."""

    #: whether it has an option that keeps the working directory off sys.path
    isolated: bool
    #: the first option in it that takes a value (c, m, W, X), or None
    flag: str | None
    #: that option's value: the rest of the cluster, else the next word
    value: Word | None
    #: how many words the cluster and its value take
    consumed: int


def _short_options(word: str, words: Words, index: int) -> _ShortOptions:
    """Read the cluster ``word`` (``words[index]``) up to its first option
    that takes a value; the options after that one are its value."""
    isolated = False
    flags = word[1:]
    for position, flag in enumerate(flags):
        if flag in ISOLATING_OPTIONS:
            isolated = True
        if flag not in "cmWX":
            continue
        value = flags[position + 1:]
        if value:
            return _ShortOptions(isolated, flag, value, 1)
        return _ShortOptions(isolated, flag, words[index + 1] if index + 1 < len(words) else MORE, 2)
    return _ShortOptions(isolated, None, None, 1)
