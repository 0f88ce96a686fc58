"""Command-line option types and the option groups several commands share (backend, timing, case selection).

Apart from cli.py so that the commands, which define their options, never import the command line that imports
them; every option carries a help text and argparse shows its default (cli.HelpFormatter).
"""
from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import Callable

from harness.model import devices
from harness.model.settings import (BACKENDS, DEFAULT_MAX_TIME_S, DEFAULT_ROUNDS, DEFAULT_TIMEOUT_S, DEFAULTS,
                                    MAX_TIME_S, ROUNDS, TIMEOUT_S)


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
positive_int = number(int, 1)
non_negative_int = number(int, 0)


def probability(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (a false-discovery rate)."""
    value = positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be below 1")
    return value


def shard_spec(text: str) -> tuple[int, int]:
    """An argparse type for `--shard` (harness.run.shard): `i/N` with 1 <= i <= N."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise argparse.ArgumentTypeError(f"shard {text!r}: expected i/N with 1 <= i <= N (e.g. 2/4)")
    return int(m[1]), int(m[2])


def keyword_expression(text: str) -> str:
    """An argparse type for -k: a pytest keyword expression that compiles (and nothing else: it is not Python)."""
    from harness.tables.keywords import SelectError, compile_select

    try:
        compile_select(text)
    except SelectError as exc:
        raise argparse.ArgumentTypeError(str(exc))
    return text


class Grouped:
    """A parser whose add_argument puts each option into the argument group its name is listed under, so
    `--help` and the generated reference show options by purpose while the add_argument calls (and the shared
    add_*_option helpers) stay as they are. An option no group lists lands in argparse's plain "options" group
    (tests/docs/test_docs.py fails on that: list it). Everything else is the parser's own."""

    def __init__(self, parser: argparse.ArgumentParser, groups: dict[str, tuple[str, ...]]):
        self._parser = parser
        made = {title: parser.add_argument_group(title) for title in groups}
        self._group_of = {name: made[title] for title, names in groups.items() for name in names}

    def add_argument(self, *names: str, **kwargs) -> argparse.Action:
        target = next((self._group_of[n] for n in names if n in self._group_of), self._parser)
        return target.add_argument(*names, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._parser, name)


def add_select_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("-k", dest="select", type=keyword_expression, metavar="EXPR",
                   help="pytest-style keyword expression over case names, e.g. 'TC_L0 and not 0003' "
                        "(default: every row)")


def add_history_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--history", default="reports/history.sqlite",
                   help="run history: an SQLite file, or a postgresql://user@host/db URL shared by every host")


def add_baselines_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baselines", action="append", default=[], metavar="DIR",
                   help="a directory of <op>_taskbook.csv / <op>_gpu_baseline.csv tables, before the table's own "
                        "baselines/ and the project's cases/baselines/ (repeatable; default: those two)")


def add_backend_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", default=DEFAULTS["backend"], choices=BACKENDS,
                   help="where the operator runs: cpu (the C++ twin), ascend-cpu (the Ascend C kernels emulated), "
                        "npu (CANN + Ascend NPU), cuda (the cuBLAS peer)")
    p.add_argument("--device", type=devices.parse, default=DEFAULTS["device"],
                   help="device ids: 3, a list 0,2,5, a range 0-7 or all; one worker per device (cpu: emulated "
                        "devices, `all` = HARNESS_CPU_DEVICES, default 4)")
    p.add_argument("--operator-lib", metavar="PATH",
                   help="the operator library under test, a shared library exporting the ops-blas C ABI. Default "
                        "per backend: cpu: the CPU twin built from operators/ on first use; npu: "
                        "$ASCEND_OPS_BLAS_LIB, else operators/ascend/build/libaclblas_ascend.so (docs/ascend.md); "
                        "ascend-cpu: the Ascend C kernels of operators/ascend built for the emulator (not "
                        "settable); cuda: cuBLAS through CuPy (not settable)")
    p.add_argument("--operator-rev", metavar="REV",
                   help="the source revision the operator library was built from, as you name it (a tag, a "
                        "commit); resolved in --operator-src when given. Recorded as the run's operator revision, "
                        "which runs, history and compare show first")
    p.add_argument("--operator-src", metavar="DIR",
                   help="the operator's own git checkout: its commit, `git describe --always --dirty` and dirty "
                        "flag are recorded (default: the checkout the library file sits in, if any)")
    p.add_argument("--hardware", metavar="NAME",
                   help="hardware name perf baselines are judged on (default: what the runtime reports, e.g. the "
                        "Ascend SoC or the CUDA device name)")


def timing_scopes(text: str) -> tuple[str, ...]:
    """An argparse type for --timing-scope: a comma-separated list of harness.model.settings.SCOPES, none twice."""
    from harness.model.settings import SCOPES

    scopes = tuple(s.strip() for s in text.split(","))
    bad = [s for s in scopes if s not in SCOPES]
    if bad or len(set(scopes)) != len(scopes):
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of {', '.join(SCOPES)}, none twice")
    return scopes


def add_timing_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timing-mode", default=DEFAULTS["timing_mode"], choices=("sync", "steady"),
                   help="sync: one synchronised call per sample (task-book Avg time); steady: back-to-back calls "
                        "(= --timing-scope steady)")
    p.add_argument("--timing-scope", type=timing_scopes, default=None, metavar="SCOPE[,SCOPE]",
                   help="what a sample measures: device (the call's device work, the stream held until it is "
                        "enqueued), call (host wall time through stream sync), steady (back-to-back calls, one "
                        "sync), msprof; several run one after the other, the first is the row's figure (default: "
                        "device, or steady with --timing-mode steady)")
    p.add_argument("--warmup", type=non_negative_int, default=DEFAULTS["warmup"],
                   help="untimed calls before a perf row's samples")
    p.add_argument("--min-samples", type=number(int, 2), default=DEFAULTS["min_samples"],
                   help="samples a perf row needs at least (2 or more: a spread needs two)")
    p.add_argument("--max-time", type=positive_float, default=None,
                   help="time cap in seconds for one perf row's samples (default "
                        f"{_on(MAX_TIME_S)}, {DEFAULT_MAX_TIME_S:g} on devices); warm-up gets a quarter of it")
    p.add_argument("--rounds", type=positive_int, default=None,
                   help="rounds per perf row, each in a fresh worker process; samples and time cap are shared "
                        f"out over them (default {_on(ROUNDS)}, {DEFAULT_ROUNDS} elsewhere)")


def add_timeout_option(p: argparse.ArgumentParser, default: float | None = None) -> None:
    """--timeout; left unset it is the backend's (harness.model.settings.default_timeout_s), as in every shell."""
    shown = f"{default:g}" if default is not None else f"{DEFAULT_TIMEOUT_S:g}, {_on(TIMEOUT_S)}"
    p.add_argument("--timeout", type=positive_float, default=default,
                   help=f"per-row limit in seconds; past it the row's worker is killed (TIMEOUT) (default {shown})")


def add_operator_option(p: argparse.ArgumentParser) -> None:
    """--operator NAME: which operator's table every given table is (harness.tables.header)."""
    from harness.model import operators as ops

    p.add_argument("--operator", choices=ops.names(), metavar="NAME",
                   help="read every table as this operator's: " + ", ".join(ops.names()) + " (default: the "
                        "operator its file name <op>_test.csv names, else the one whose columns its header fits)")


def add_table_options(p: argparse.ArgumentParser) -> None:
    """--operator and --lenient: how `harness run` reads its tables before the first row (harness.tables.preflight)."""
    add_operator_option(p)
    p.add_argument("--lenient", action="store_true",
                   help="run cells the harness reads otherwise than the ops-blas frame (a byte order mark, an "
                        "undeclared fill extension), with a warning each, instead of refusing the table (exit 3); "
                        "header errors are refused either way")


def _on(values: dict[str, float]) -> str:
    """Per-backend defaults in words: `0.4 on cpu and ascend-cpu`."""
    by_value: dict[float, list[str]] = {}
    for backend, value in values.items():
        by_value.setdefault(value, []).append(backend)
    return ", ".join(f"{value:g} on {' and '.join(names)}" for value, names in by_value.items())


def default_tables() -> list[str]:
    """Every cases/*_test.csv of the working directory, else of the checkout this harness runs from."""
    for root in (Path.cwd(), Path(__file__).resolve().parents[1]):
        found = sorted((root / "cases").glob("*_test.csv"))
        if found:
            return [str(p) for p in found]
    return []
