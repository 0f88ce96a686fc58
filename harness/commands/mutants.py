"""`harness mutants [CSV ...]`: prove the harness catches realistic kernel bugs. Builds the CPU twin once clean and
once per injected bug (`operators/cpu_twin/twin_mutants.h`), runs the same rows on each, and prints which rows
caught which mutant. Exit 0 only if every mutant was caught; 1 if any survived; 3 if a build failed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tabulate import tabulate

from harness.exitcodes import Exit
from harness.options import add_select_option, default_tables, positive_float, positive_int


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mutants", help="run the tables against deliberately broken twins", description=__doc__)
    p.add_argument("csv", nargs="*", help="case tables (default: every *_test.csv in cases/)")
    p.add_argument("--mutant", action="append", help="only this mutant (repeatable; default: all)")
    add_select_option(p)
    p.add_argument("--every", type=positive_int, default=10,
                   help="rows used: every TC_L0 row plus every EVERY-th other precision row (1 = all)")
    p.add_argument("-n", "--workers", type=positive_int, default=2, help="parallel workers for the rows")
    p.add_argument("--timeout", type=positive_float, default=60.0, help="per-row limit in seconds")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.backends.build import MUTANT_DESCRIPTIONS, MUTANTS, BuildError, build_twin
    from harness.engine import load_cases
    from harness.mutants import MutantResult, caught_by, sample, verdicts

    names = args.mutant or sorted(MUTANTS, key=MUTANTS.get)
    unknown = [n for n in names if n not in MUTANTS]
    tables = args.csv or default_tables()
    if unknown or not tables or not all(Path(t).is_file() for t in tables):
        print(f"harness mutants: unknown mutant {', '.join(unknown)}" if unknown
              else "harness mutants: no case tables", file=sys.stderr)
        return Exit.ENV
    cases = sample(load_cases(tables, args.select), args.every)
    try:
        clean = verdicts(cases, str(build_twin()), args.workers, args.timeout)
    except BuildError as exc:
        print(f"harness mutants: the clean twin does not build: {exc}", file=sys.stderr)
        return Exit.ENV
    print(f"{len(cases)} rows, {sum(v == 'PASS' for v in clean.values())} pass on the clean twin")
    results = []
    for name in names:
        result = MutantResult(name, MUTANT_DESCRIPTIONS[name])
        try:
            lib = build_twin({"TWIN_MUTANT": MUTANTS[name]})
        except BuildError as exc:
            result.build_error = str(exc)
        else:
            result.caught_by = caught_by(clean, verdicts(cases, str(lib), args.workers, args.timeout))
        results.append(result)
        print(f"  {name}: {'caught by ' + str(len(result.caught_by)) + ' row(s)' if result.caught else 'SURVIVED'}",
              flush=True)
    print(tabulate([[r.name, "yes" if r.caught else ("BUILD FAILED" if r.build_error else "NO"), len(r.caught_by),
                     ", ".join(r.caught_by[:4]) + (" …" if len(r.caught_by) > 4 else ""), r.description]
                    for r in results], headers=["mutant", "caught", "rows", "first rows", "injected bug"],
                   tablefmt="github"))
    caught = sum(r.caught for r in results)
    print(f"\nmutants caught: {caught}/{len(results)}")
    if any(r.build_error for r in results):
        return Exit.ENV
    return Exit.OK if caught == len(results) else Exit.FAIL
