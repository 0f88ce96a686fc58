"""`harness cases generate OP [--seed S] [--out PATH]` and `harness cases describe CSV ...`.

generate: write a project case table from its seeded generator (default `cases/<op>_test.csv`); exit 0, or 3 for an
unknown operator. describe: the coverage summary (rows per category, crossed with side x uplo or transA x transB)
and the FLOP sums of both phases; exit 0 when every required category is covered and the runtime budgets hold,
1 when not, 3 when a file is missing or is not a project table.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import generate
from harness.model.exitcodes import Exit


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cases", help="generate or describe the project case tables", description=__doc__)
    actions = p.add_subparsers(dest="action", required=True, parser_class=type(p))
    gen = actions.add_parser("generate", help="write a case table from its seeded generator")
    gen.add_argument("op", help=f"operator ({', '.join(generate.MODULES)})")
    gen.add_argument("--seed", type=int, default=generate.DEFAULT_SEED,
                     help="generator seed: the same seed writes the same table")
    gen.add_argument("--out", help="output path (default: cases/<op>_test.csv)")
    gen.set_defaults(func=run)
    desc = actions.add_parser("describe", help="coverage summary and FLOP sums of case tables")
    desc.add_argument("csv", nargs="+", help="case tables (*_test.csv)")
    desc.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return _generate(args) if args.action == "generate" else _describe(args)


def _generate(args: argparse.Namespace) -> int:
    if args.op not in generate.MODULES:
        print(f"harness cases generate: unknown operator {args.op!r} (known: {', '.join(generate.MODULES)})",
              file=sys.stderr)
        return Exit.ENV
    out = Path(args.out) if args.out else generate.default_path(args.op)
    generate.write_table(args.op, out, args.seed)
    print(f"wrote {out} ({args.op}, seed {args.seed})")
    return Exit.OK


def _describe(args: argparse.Namespace) -> int:
    from harness.generate import coverage

    code = Exit.OK
    for path in args.csv:
        try:
            text, ok = coverage.describe(path)
        except (OSError, ValueError) as exc:
            print(f"harness cases describe: {exc}", file=sys.stderr)
            return Exit.ENV
        print(text)
        code = code if ok else Exit.FAIL
    return code
