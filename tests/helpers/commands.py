"""A `harness` subcommand run in this process, parsed as the command line parses it: the tests call its function and
read its exit code and captured output without starting a child."""
from __future__ import annotations

from harness.cli import Parser


def run_command(module, argv):
    parser = Parser(prog="harness")
    module.add_parser(parser.add_subparsers(dest="command", required=True, parser_class=Parser))
    args = parser.parse_args(argv)
    return args.func(args)
