"""HRM302: a child process started through the interpreter's name (``python``) instead of ``sys.executable``."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from flake8_hermetic.facts.argv import program_name, split_words
from flake8_hermetic.facts.processes import SPAWNER_CALLS, child_process, program_word
from flake8_hermetic.rule import Rule
from flake8_hermetic.violation import Violation


INTERPRETER = re.compile(r"^(?:python(?:3(?:\.\d+)?)?|py)$", re.IGNORECASE)


class InterpreterByNameRule(Rule):
    """
    Flags a child process whose command line names the interpreter: `python`, `python3`, `python3.N` or `py` as the program.

    ## Why is this bad?
    Which program answers to `python` depends on the host's `PATH`: a
    system Python without the project installed, a different minor version,
    nothing at all (a fresh Windows machine, many Linux images ship only
    `python3`, `py` exists only on Windows). The test then runs the code
    under another interpreter than the one running the test, or fails with
    `FileNotFoundError`, depending on whose machine it is.

    Read: argv[0] of a list literal, the first word of a command string
    (also an f-string's literal head), the varargs of
    `asyncio.create_subprocess_exec`, the path argument of `os.spawn*`, and
    `executable=` when it is given.

    ## Example
    ```python
    def test_cli_version(tmp_path):
        out = subprocess.run(["python", "-m", "tool", "--version"], cwd=tmp_path, capture_output=True)
        assert out.returncode == 0
    ```

    ## Use instead
    ```python
    def test_cli_version(tmp_path):
        out = subprocess.run([sys.executable, "-m", "tool", "--version"], cwd=tmp_path, capture_output=True)
        assert out.returncode == 0
    ```

    ## Options
    None.

    ## Known problems
    Only the command as written in the call is read (a literal argv, a command
    string, `executable=`): a command built earlier in a variable, by a helper
    or from `shutil.which("python")` is not followed. A test about the `PATH`
    lookup itself (a launcher, a `py` shim) is flagged: silence the line.
    """

    code = "HRM302"
    message = "'{word}' runs whichever interpreter the host's PATH finds (or none); start the child with sys.executable"
    calls = SPAWNER_CALLS

    def visit_Call(self, node: ast.Call) -> Iterator[Violation]:
        child = child_process(node, self.ctx.call_name(node))
        if child is None:
            return
        word = program_word(child)
        if word is None:
            return
        shell = child.keyword("shell")
        if isinstance(shell, ast.Constant) and shell.value and not word.startswith(("'", '"')) and " " in word:
            first = next(iter(split_words(word, shell=False)), None)
            word = first if isinstance(first, str) else word
        if INTERPRETER.match(program_name(word)):
            yield self.report(node, word=word)
