"""`harness check-kernels`: the opt-in type check of the Ascend C sources (harness/kernels/kernel_check.py).

Exit 0 when every kernel and host source is clean and every negative control fails as it should; 1 on any finding;
3 (skipped) when ASC_DEVKIT_ROOT / ASC_CPUDEBUG_ROOT do not name asc-devkit and asc-tools checkouts.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from harness.model.exitcodes import Exit

if TYPE_CHECKING:
    from harness.kernels import kernel_check


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("check-kernels", help="type-check the Ascend C kernels against asc-devkit headers",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("--work-dir", type=Path,
                        help="where the generated stand-in and preprocessed files go (default: .asc-check/)")
    parser.add_argument("files", nargs="*", type=Path, help="check only these sources (default: all, and controls)")
    parser.set_defaults(func=run)


def _selected(files: list[Path]) -> list[kernel_check.Source]:
    from harness.kernels import kernel_check

    every = kernel_check.sources()
    if not files:
        return every
    wanted = {f.resolve() for f in files}
    return [s for s in every if s.path.resolve() in wanted]


def run(args: argparse.Namespace) -> int:
    from harness.kernels import kernel_check

    roots = kernel_check.header_roots()
    if roots is None:
        print(f"{kernel_check.SKIP_MESSAGE} (set {kernel_check.ENV_DEVKIT} and {kernel_check.ENV_CPUDEBUG} to "
              "asc-devkit and asc-tools checkouts)")
        return Exit.ENV
    sources = _selected(args.files)
    if not sources:
        print("check-kernels: no such Ascend C source")
        return Exit.ENV
    t0 = time.monotonic()
    print(f"asc-devkit {roots.devkit} @ {kernel_check.devkit_commit(roots)}; cpudebug {roots.cpudebug}")
    work_dir = args.work_dir or kernel_check.DEFAULT_WORK_DIR
    standin = kernel_check.generate_standin(roots, work_dir, log=print)
    print(f"stand-in {standin.path} ({standin.symbols} symbols, {standin.rounds} rounds, "
          f"{standin.residual_errors} probe errors, {standin.seconds:.1f} s)")
    if standin.residual_errors:
        print("check-kernels: the stand-in does not cover the asc-devkit headers; results would be meaningless")
        return Exit.FAIL
    findings = 0
    for source in sources:
        result = kernel_check.check_source(source, roots, standin.path, work_dir)
        rel = source.path.relative_to(kernel_check.REPO) if source.path.is_relative_to(kernel_check.REPO) else source.path
        if source.expect_fail:
            verdict = "FAILS as expected" if result.ok else "NOT CAUGHT"
        else:
            verdict = "clean" if result.ok else f"{len(result.errors)} errors"
        print(f"{verdict:>18}  {result.seconds:6.1f} s  {rel}")
        if not result.ok:
            findings += 1
            for line in (result.missing_expected and [f"missing expected error: {e}" for e in result.missing_expected]
                         or result.errors[:20]):
                print(f"      {line}")
    print(f"check-kernels: {len(sources)} files, {findings} findings, {time.monotonic() - t0:.1f} s")
    return Exit.FAIL if findings else Exit.OK
