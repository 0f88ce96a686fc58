"""`harness` command line: a thin shell that hands each subcommand to its module in harness/commands/.

Exit codes (contract): 0 all passed; 1 any FAIL/ERROR/CRASH/TIMEOUT (or a regression); 2 nothing failed but the
evidence is insufficient; 3 environment or usage error.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import harness.commands

EXIT_OK, EXIT_FAIL, EXIT_INSUFFICIENT, EXIT_ENV = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors are exit 3, not argparse's 2
        self.print_usage(sys.stderr)
        self.exit(EXIT_ENV, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="harness", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(harness.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"harness.commands.{info.name}")
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
