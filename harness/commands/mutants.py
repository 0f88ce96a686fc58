"""`harness mutants [CSV ...]`: prove the harness catches realistic kernel bugs. Builds the CPU twin once clean and
once per injected bug (`operators/cpu_twin/twin_mutants.h`), runs the same rows on each, and prints which rows
caught which mutant. Each library's rows are recorded as a run of kind "mutants" (history, results.jsonl, reports
under REPORT_DIR/<run_id>/, the run id ending in the mutant's name); `harness compare latest` never picks one.
Exit 0 only if every mutant was caught; 1 if any survived; 3 if a build failed or the history or reports cannot be
written.
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from harness.model.exitcodes import Exit
from harness.options import add_history_option, add_select_option, add_timeout_option, default_tables, positive_int
from harness.model.settings import from_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mutants", help="run the tables against deliberately broken twins", description=__doc__)
    p.add_argument("csv", nargs="*", help="case tables (default: every *_test.csv in cases/)")
    p.add_argument("--mutant", action="append", help="only this mutant (repeatable; default: all)")
    add_select_option(p)
    p.add_argument("--every", type=positive_int, default=10,
                   help="rows used: every TC_L0 row plus every EVERY-th other precision row (1 = all)")
    p.add_argument("-n", "--workers", type=positive_int, default=2, help="parallel workers for the rows")
    add_timeout_option(p, default=60.0)  # short: a mutant that hangs costs each row this long
    add_history_option(p)
    p.add_argument("--report-dir", default="reports", help="each library's reports land in REPORT_DIR/<run_id>/")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.flows.session import why

    try:
        return _run(args)
    except (OSError, sqlite3.Error) as exc:
        print(f"harness mutants: cannot record the runs: {why(exc)}", file=sys.stderr)
        return Exit.ENV


def _run(args: argparse.Namespace) -> int:
    from harness.backends.build import MUTANT_DESCRIPTIONS, MUTANTS, BuildError, build_twin
    from harness.tables.load import load_cases
    from harness.store.history import History
    from tabulate import tabulate

    from harness.flows.mutants import MutantResult, Recording, caught_by, recorded_verdicts, sample

    names = args.mutant or sorted(MUTANTS, key=MUTANTS.get)
    unknown = [n for n in names if n not in MUTANTS]
    tables = args.csv or default_tables()
    if unknown or not tables or not all(Path(t).is_file() for t in tables):
        print(f"harness mutants: unknown mutant {', '.join(unknown)}" if unknown
              else "harness mutants: no case tables", file=sys.stderr)
        return Exit.ENV
    cases = sample(load_cases(tables, args.select), args.every)
    where = Recording(History(args.history), Path(args.report_dir), tables, from_options(args, timed=False))
    try:
        clean = recorded_verdicts(cases, str(build_twin()), {"name": "clean", "description": "the twin as written"},
                                  where)
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
            mutant = {"name": name, "description": MUTANT_DESCRIPTIONS[name]}
            result.caught_by = caught_by(clean, recorded_verdicts(cases, str(lib), mutant, where))
        results.append(result)
        print(f"  {name}: {'caught by ' + str(len(result.caught_by)) + ' row(s)' if result.caught else 'SURVIVED'}",
              flush=True)
    print(tabulate([[r.name, "yes" if r.caught else ("BUILD FAILED" if r.build_error else "NO"), len(r.caught_by),
                     ", ".join(r.caught_by[:4]) + (" …" if len(r.caught_by) > 4 else ""), r.description]
                    for r in results], headers=["mutant", "caught", "rows", "first rows", "injected bug"],
                   tablefmt="github"))
    caught = sum(r.caught for r in results)
    print(f"\nmutants caught: {caught}/{len(results)}")
    print(f"runs (kind mutants) recorded in {where.history.path}; reports under {where.report_dir}")
    if any(r.build_error for r in results):
        return Exit.ENV
    return Exit.OK if caught == len(results) else Exit.FAIL
