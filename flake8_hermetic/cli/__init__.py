"""The ``flake8-hermetic`` command line.

    flake8-hermetic check [PATH ...] [--format default|pylint|github|sarif|json] [-o FILE] [-q]
    flake8-hermetic check --stdin-display-name PATH -     (a buffer on stdin, as that file)
    flake8-hermetic baseline regenerate [PATH ...] [--allow-growth]
    flake8-hermetic baseline prune [PATH ...] [--check | --exit-nonzero-on-fix]
    flake8-hermetic baseline check [PATH ...]
    flake8-hermetic baseline stats [--by code|file|test|directory] [--top N]
    flake8-hermetic baseline stats --history [--limit N] [--svg FILE] [--chart auto|always|never]
    flake8-hermetic prove [PATH ...] [--format text|json|github|sarif] [-o FILE] [-- PYTEST_ARGS ...]
    flake8-hermetic rules
    flake8-hermetic explain HRMnnn

Every command that lints runs flake8's own engine in-process (see
:mod:`flake8_hermetic.collect`), so it sees the files, config,
``per-file-ignores`` and ``# noqa`` comments ``flake8`` sees. Exit status:
0 clean, 1 findings (or a refused growth, ``--check``, a fixing prune), 2 a usage,
config or baseline error (one line, never a traceback), 130 interrupted.
"""

from __future__ import annotations

import argparse
import configparser
import os
import sys
from collections.abc import Sequence

from flake8.exceptions import ExecutionError

from flake8_hermetic import __version__
from flake8_hermetic.baseline.format import BaselineError
from flake8_hermetic.cli import baseline, check, docs, prove
from flake8_hermetic.cli.common import CommandError, Parser, shown
from flake8_hermetic.collect import Interrupted, ScanError
from flake8_hermetic.settings import ConfigError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="flake8-hermetic",
        description="Test-suite hazards through flake8, and the ratchet baseline that lets a legacy suite adopt them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)
    check.add_parser(commands)
    prove.add_parser(commands)
    baseline.add_parser(commands)
    docs.add_parser(commands)
    return parser


def startup_error(exc: Exception) -> str:
    """flake8's own start-up errors (a missing ``--config`` file, a config
    it cannot parse) as one line: ``FILE:LINE: reason`` where it says where."""
    if isinstance(exc, (configparser.DuplicateOptionError, configparser.DuplicateSectionError)):
        what = f"option {exc.option!r} in section [{exc.section}]" if isinstance(
            exc, configparser.DuplicateOptionError) else f"section [{exc.section}]"
        return f"{shown(str(exc.source))}:{exc.lineno}: duplicate {what}"
    if isinstance(exc, configparser.ParsingError) and exc.errors:
        line, text = exc.errors[0]
        return f"{shown(str(exc.source))}:{line}: cannot parse {text}"
    message = " ".join(str(exc).split()) or type(exc).__name__
    return f"flake8-hermetic: {message[:1].lower()}{message[1:]}"


def main(argv: Sequence[str] | None = None) -> int:
    argv, pytest_args = prove.split_pytest_args(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.pytest_args = pytest_args
    try:
        return int(args.handler(args))
    except (BaselineError, ScanError, CommandError) as exc:
        print(exc, file=sys.stderr)
    except ConfigError as exc:
        print(f"flake8-hermetic: {exc}", file=sys.stderr)
    except (ExecutionError, configparser.Error) as exc:
        print(startup_error(exc), file=sys.stderr)
    except (RecursionError, MemoryError) as exc:
        # flake8's own ast.parse of a file nested too deep (its workers re-raise it here)
        print(f"flake8-hermetic: flake8 failed with {type(exc).__name__}: a file is nested too deep to parse",
              file=sys.stderr)
    except (KeyboardInterrupt, Interrupted):
        print("flake8-hermetic: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (| head) went away. Point stdout at nothing so the
        # interpreter's final flush does not complain about it too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
