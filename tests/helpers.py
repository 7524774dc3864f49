"""Running the real programs on a temporary project, hermetically.

Every child gets ``cwd=`` (a directory of the test's own), ``sys.executable``
and a timeout, and an environment whose home and git config point into the
test's directory.
"""

from __future__ import annotations

import ast
import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

TIMEOUT = 120
REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def source_corpus() -> list[Path]:
    """Every rule's fixtures and the project's own tests: code of every kind,
    for tests that lint it two ways and expect the same findings."""
    return sorted([*(FIXTURES / "rules").rglob("*.py"), *(REPO / "tests").glob("test_*.py")])


def source_corpus_params() -> list[Any]:
    """:func:`source_corpus` as parameters named by their paths."""
    return [pytest.param(path, id=path.relative_to(REPO).as_posix()) for path in source_corpus()]


def child_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLAKE8", "PYTEST_", "GIT_"))}
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        PRE_COMMIT_HOME=str(home / ".cache" / "pre-commit"),
        XDG_CACHE_HOME=str(home / ".cache"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def run(args: list[str], cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None,
        timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    home = cwd / ".home" if env is None else None
    if home is not None:
        home.mkdir(exist_ok=True)
    return subprocess.run(
        args,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env if env is not None else child_env(home),  # type: ignore[arg-type]
        check=False,
    )


def flake8(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "flake8", *args], cwd=cwd, stdin=stdin)


def hermetic(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "flake8_hermetic", *args], cwd=cwd, stdin=stdin)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> dedented text) under ``root``."""
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def codes_by_line(output: str) -> list[tuple[str, int, str]]:
    """flake8 default output -> sorted (path, line, code) triples."""
    found = []
    for line in output.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[1].isdigit():
            found.append((parts[0], int(parts[1]), parts[3].split()[0]))
    return sorted(found)


def parses(source: str) -> bool:
    """Whether this Python can build a tree from ``source`` (generated sources often cannot)."""
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def call_of(source: str) -> ast.Call:
    """The call a one-expression source is."""
    node = ast.parse(source, mode="eval").body
    assert isinstance(node, ast.Call)
    return node


def on_a_terminal(args: list[str], cwd: Path, **environment: str) -> str:
    """Run the CLI with its stdout on a pseudo-terminal; what it printed there."""
    home = cwd / ".home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in child_env(home).items() if k != "NO_COLOR"}
    env.update(environment)
    controller, terminal = os.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "flake8_hermetic", *args], cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.DEVNULL,
        )
    finally:
        os.close(terminal)
    output = bytearray()
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
        child.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(controller)
        if child.poll() is None:
            child.kill()
            child.wait(timeout=TIMEOUT)
    return output.decode("utf-8").replace("\r\n", "\n")


needs_pty = pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals on this OS")
