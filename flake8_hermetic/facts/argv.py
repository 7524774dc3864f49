"""The words of a command line: a literal argv, a command string split as a
shell would, git's global options and subcommand, and the words a child is
given through the names of the enclosing function and module
(:class:`ArgvReader`).

Which expression of a spawner call holds its command line is
:func:`flake8_hermetic.facts.processes.command_expression`; this module reads it.
"""

from __future__ import annotations

import ast
import shlex
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flake8_hermetic.nodes import own_nodes

if TYPE_CHECKING:
    from flake8_hermetic.facts.view import FileView

#: the literal words of a command line; a word that is not literal is None
Argv = tuple[str | None, ...]
#: a word of a command line: the literal text, or the expression that gives it
Word = str | ast.expr
#: an unknown number of further words (``*extra``, ``+ extra``, ``args.append(x)``)
MORE = None
Words = tuple[Word | None, ...]

#: git's own options that come before the subcommand and take a value as
#: the next word (``git -C dir status``); ``--opt=value`` spellings are one word
GIT_OPTIONS_WITH_VALUE = frozenset({
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--exec-path",
})
#: options that choose the repository, as ``cwd=`` would
GIT_DIRECTORY_OPTIONS = frozenset({"-C", "--git-dir", "--work-tree"})


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


def program_name(word: str) -> str:
    """``/usr/bin/git`` -> ``git``; ``C:\\Git\\git.exe`` -> ``git``."""
    base = word.replace("\\", "/").rsplit("/", 1)[-1]
    return base[:-4] if base.lower().endswith(".exe") else base


def literal_word(node: ast.expr) -> str | None:
    """The text of a str literal, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def literal_argv(node: ast.expr) -> Argv | None:
    """The literal words of a command line written as ``node`` (an argv list
    or tuple, a command string, ``[...] + extra``, an f-string's literal
    head), without following names; None when not even its first word is
    written there."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        # ["git", "status"] + extra: the leading words are still literal
        leading = literal_argv(node.left)
        return None if leading is None else (*leading, None)
    if isinstance(node, (ast.List, ast.Tuple)):
        return tuple(None if isinstance(element, ast.Starred) else literal_word(element) for element in node.elts)
    if isinstance(node, ast.JoinedStr):
        return _template_head(node)
    text = literal_word(node)
    if text is None:
        return None
    return tuple(word for word in split_words(text, shell=False) if isinstance(word, str))  # all str: literal text


def _template_head(node: ast.JoinedStr) -> Argv | None:
    """``f"git {sub} -q"`` -> ("git", None): the words before the first
    interpolation, the last one unfinished unless a space ends it."""
    head = node.values[0] if node.values else None
    if not (isinstance(head, ast.Constant) and isinstance(head.value, str)):
        return None
    parts = head.value.split()
    if not parts:
        return None
    return (*parts[:-1], None) if not head.value[-1:].isspace() else (*parts, None)


def word_of(node: ast.expr) -> Word:
    """A literal str/bytes word as text; anything else stays an expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        return node.value.decode("latin-1")
    return node


#: the shell's control operators: each ends a simple command
SHELL_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")"})


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


#: the node types :meth:`AssignedValues._record` reads
_RECORDED = frozenset({ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.AugAssign, ast.Call})


class AssignedValues:
    """What the plain names of one scope were assigned, and where.

    Built from a function's own statements (not entering nested defs), or
    from a module's top-level statements; ``value(name, line)`` is the last
    value bound before ``line``, with ``+=`` read as ``name = name + value``.
    """

    __slots__ = ("_bindings", "_growth")

    def __init__(self, owner: ast.AST, nodes: Iterable[ast.AST] | None = None) -> None:
        """``nodes``: the function's own nodes when the caller has them
        listed already (:meth:`FileView.function_nodes`); by default they
        are walked here."""
        #: name -> [(line, value)] in source order
        self._bindings: dict[str, list[tuple[int, ast.expr]]] = {}
        #: name -> lines where it grows in place (``append``, ``extend``, ``insert``)
        self._growth: dict[str, list[int]] = {}
        if isinstance(owner, ast.Module):
            nodes = self._module_statements(owner)
        elif nodes is None:
            nodes = own_nodes(owner)
        recorded = _RECORDED
        for node in nodes:
            if type(node) in recorded:  # most nodes are none of these: no call for them
                self._record(node)

    def _record(self, node: ast.AST) -> None:
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
    def words(self, command: ast.expr, line: int, depth: int = 0) -> Words | None:
        """The words of ``command`` (an argv or a command string), or None
        when not even its first word can be read."""
        if depth > self.MAX_DEPTH:
            return None
        if isinstance(command, ast.Name):
            return self._name_words(command, line, depth)
        if isinstance(command, (ast.List, ast.Tuple)):
            return self._element_words(command.elts, line, depth)
        if isinstance(command, ast.BinOp) and isinstance(command.op, ast.Add):
            return self._sum_words(command, line, depth)
        if isinstance(command, ast.Call):
            name = self._resolve(command.func)
            argv = _argv_argument(command, name)
            if argv is not None:
                return self.words(argv, line, depth + 1)
            if name == "shlex.split" and command.args:
                text = self.text(command.args[0], line)
                return None if text is None else split_words(text, shell=False)
        text = self.text(command, line)
        if text is None:
            return None
        return split_words(text, shell=True)

    def _name_words(self, name: ast.Name, line: int, depth: int) -> Words | None:
        """The words of the value ``name`` was assigned, and MORE if it grew since."""
        found = self._lookup(name, line)
        if found is None:
            return None
        value, grew = found
        words = self.words(value, getattr(value, "lineno", line), depth + 1)
        return None if words is None else (*words, MORE) if grew else words

    def _element_words(self, elements: Iterable[ast.expr], line: int, depth: int) -> Words:
        """One word per element of an argv list; a ``*starred`` one's words in its place."""
        collected: list[Word | None] = []
        for element in elements:
            if isinstance(element, ast.Starred):
                inner = self.words(element.value, line, depth + 1)
                collected.extend(inner if inner is not None else (MORE,))
            else:
                collected.append(word_of(element))
        return tuple(collected)

    def _sum_words(self, command: ast.BinOp, line: int, depth: int) -> Words | None:
        """``argv + extra``: the left side's words, then the right side's (or MORE)."""
        left = self.words(command.left, line, depth + 1)
        if left is None:
            return None
        right = self.words(command.right, line, depth + 1)
        return (*left, *(right if right is not None else (MORE,)))

    # -- text --------------------------------------------------------------------
    def text(self, node: ast.expr, line: int, depth: int = 0) -> str | None:
        """The literal text of a string expression, with ``{}`` standing in
        for each interpolated part; None when it is not built from literals."""
        if depth > self.MAX_DEPTH:
            return None
        node, line = self.value_of(node, line)
        if isinstance(node, ast.Constant):
            return _constant_text(node)
        if isinstance(node, ast.JoinedStr):
            return _template_text(node)
        if isinstance(node, ast.BinOp):
            return self._operation_text(node, line, depth)
        if isinstance(node, ast.Call):
            return self._call_text(node, line, depth)
        return None

    def _operation_text(self, node: ast.BinOp, line: int, depth: int) -> str | None:
        """``a + b``: both texts joined; ``template % values``: the template."""
        if isinstance(node.op, ast.Add):
            left, right = self.text(node.left, line, depth + 1), self.text(node.right, line, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(node.op, ast.Mod):
            return self.text(node.left, line, depth + 1)
        return None

    def _call_text(self, node: ast.Call, line: int, depth: int) -> str | None:
        """``textwrap.dedent(text)`` dedented; ``template.format(...)``: the template."""
        if self._resolve(node.func) == "textwrap.dedent" and node.args:
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


def _argv_argument(call: ast.Call, name: str | None) -> ast.expr | None:
    """``x`` of ``list(x)``, ``tuple(x)``, ``" ".join(x)``, ``shlex.join(x)``:
    calls whose command line has the words of ``x``."""
    if len(call.args) != 1:
        return None
    func = call.func
    if name in ("list", "tuple", "shlex.join") or (
        isinstance(func, ast.Attribute) and func.attr == "join"
        and isinstance(func.value, ast.Constant) and func.value.value == " "
    ):
        return call.args[0]
    return None


def _constant_text(node: ast.Constant) -> str | None:
    if isinstance(node.value, str):
        return node.value
    return node.value.decode("latin-1") if isinstance(node.value, bytes) else None


def _template_text(node: ast.JoinedStr) -> str:
    """An f-string's text, ``{}`` standing in for each interpolated part."""
    return "".join(
        part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else "{}"
        for part in node.values
    )


def assigned_values(owner: ast.AST, ctx: FileView) -> AssignedValues:
    """A function's (or the module's) :class:`AssignedValues`, as a
    :meth:`FileView.per_function` factory: ``ctx.per_function(node, assigned_values)``."""
    if isinstance(owner, ast.Module):
        return AssignedValues(owner)
    return AssignedValues(owner, ctx.function_nodes(owner))


def enclosing_values(ctx: FileView) -> list[AssignedValues]:
    """The assigned values of the scopes around the node ``ctx`` is at,
    innermost first (functions, then the module; classes do not count):
    the ``scopes`` of an :class:`ArgvReader`, computed once per function."""
    return [
        ctx.per_function(scope.node, assigned_values)
        for scope in reversed(ctx.scopes)
        if scope.kind in ("function", "module")
    ]
