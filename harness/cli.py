"""`harness` command line: a thin shell that hands each subcommand to its module in harness/commands/.

Exit codes (contract): 0 all passed; 1 any FAIL/ERROR/CRASH/TIMEOUT (or a regression); 2 nothing failed but the
evidence is insufficient; 3 environment or usage error; 128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM) after
writing the reports of what finished, marked interrupted.
"""
from __future__ import annotations

import argparse
import importlib
import math
import pkgutil
import signal
import sqlite3
import sys
from typing import Callable

import harness.commands

EXIT_OK, EXIT_FAIL, EXIT_INSUFFICIENT, EXIT_ENV = 0, 1, 2, 3


def exit_interrupted(signum: int) -> int:
    """128 + the signal number, as shells report a process a signal ended: 130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + signum


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors are exit 3 with one line, not argparse's 2 and usage
        self.exit(EXIT_ENV, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def number(kind: type, low: float, *, inclusive: bool = True) -> Callable[[str], float]:
    """An argparse type: a finite `kind` (int or float) at or above `low` (above it when not inclusive)."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}")
        if not math.isfinite(value) or value < low or (value == low and not inclusive):
            raise argparse.ArgumentTypeError(f"{text!r} must be a finite number {'>=' if inclusive else '>'} "
                                             f"{low:g}")
        return value
    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


positive_float = number(float, 0, inclusive=False)


def probability(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (a false-discovery rate)."""
    value = positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be below 1")
    return value



positive_int = number(int, 1)
non_negative_int = number(int, 0)


def keyword_expression(text: str) -> str:
    """An argparse type for -k: a pytest keyword expression that compiles (and nothing else: it is not Python)."""
    from harness.cases import SelectError, check_select

    try:
        check_select(text)
    except SelectError as exc:
        raise argparse.ArgumentTypeError(str(exc))
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="harness", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(harness.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"harness.commands.{info.name}")
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from harness.cases import TableError

    try:
        return int(args.func(args))
    except TableError as exc:  # a file that cannot be a case table, named with its line, for every command
        print(str(exc), file=sys.stderr)
        return EXIT_ENV
    except sqlite3.Error as exc:  # --history naming a directory, a file that is no database, a locked one
        print(f"harness {args.command}: history database {getattr(args, 'history', '')}: {exc}", file=sys.stderr)
        return EXIT_ENV
    except KeyboardInterrupt as exc:  # Ctrl-C outside a run's own handling (loading tables, mutants)
        signum = getattr(exc, "signum", signal.SIGINT)
        print(f"harness {args.command}: interrupted by {signal.Signals(signum).name}", file=sys.stderr)
        return exit_interrupted(signum)


if __name__ == "__main__":
    sys.exit(main())
