"""What a row's output is judged against: its golden (a sample of C for a large perf row, through the judge's
golden cache where the process may trust it), and the written region judged against it."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

import numpy as np

from golden import sample
from harness.judge import diagnosis, golden_cache
from harness.model import operators as ops
from harness.model.case import Case
from harness.run.buffers import written_mask
from harness.tables.layout import Buffer

#: The goldens a run keeps between a perf row's rounds hold at most this many bytes together (a row's golden is
#: kept until its round decides it is the last): a larger one is computed again. The main job's 406 perf rows
#: hold 602 MiB at most, sampled ones included; at 256 MiB an idle main job computed 241 of them again.
KEPT_GOLDENS_BYTES = 1 << 30


def judge_output(case: Case, bufs: dict[str, Buffer], out_c: np.ndarray, expected: np.ndarray,
                 truth: np.ndarray, inputs: Callable[[], dict[str, Buffer]] | None = None) -> diagnosis.Judgement:
    """The written region judged as one, or, for an operator whose package names `verify_parts` (the parts of its
    output ops-blas verifies one by one), each part on its own, the worst deciding. `inputs`: the buffers with
    their inputs' host data, where `bufs` holds the outputs alone (only the error scale of a failed gate reads
    them)."""
    spec = ops.get(case.op)
    gate, options = spec.gate(case.args, case.thresholds)
    parts = spec.verify_parts(case.args, bufs) if hasattr(spec, "verify_parts") else []
    if not parts:
        parts = [("", np.flatnonzero(written_mask(bufs)))]

    @lru_cache(maxsize=1)
    def scale_all() -> np.ndarray:  # G for the forward-error test, computed only if a judgement needs it
        with np.errstate(all="ignore"):
            return spec.error_scale(case.args, bufs if inputs is None else inputs())

    judged = [(label, diagnosis.judge(out_c[index], expected[index], truth[index], gate,
                                     scale=lambda index=index: scale_all()[index], **options))
              for label, index in parts]
    return judged[0][1] if len(judged) == 1 and not judged[0][0] else diagnosis.worst_part(judged)


@dataclass
class Golden:
    """What a row's output is judged against: the case and buffers the golden was computed for (for a large perf
    row, a smaller problem on a sample of C: golden.sample), expected and truth over that problem's C, and the
    storage index in the full C of each of its elements (None: the whole C). A sampled golden planned with
    `replan` keeps its outputs alone in `bufs` (its inputs are views of the row's host data, as large as the row's
    A): `inputs` plans them again for the error scale of a failed gate."""

    case: Case
    bufs: dict[str, Buffer]
    expected: np.ndarray
    truth: np.ndarray
    index: np.ndarray | None = None
    cached: bool = False  # read from the judge's golden cache (harness.judge.golden_cache), not computed
    inputs: Callable[[], dict[str, Buffer]] | None = None

    def judge(self, out_c: np.ndarray) -> diagnosis.Judgement:
        """The operator's full C judged with the ordinary criteria (judge_output) on this golden's elements."""
        return self.judge_elements(out_c if self.index is None else out_c[self.index])

    def judge_elements(self, out: np.ndarray) -> diagnosis.Judgement:
        """`judge` of the elements of C this golden covers (a sampled golden's `index` of it), gathered already."""
        return judge_output(self.case, self.bufs, out, self.expected, self.truth, self.inputs)


def golden_of(case: Case, bufs: dict[str, Buffer], cache: bool = False,
              replan: Callable[[], dict[str, Buffer]] | None = None) -> Golden:
    """What the row's output is judged against (a perf row over the sampling budget: a sample of its C); `cache`:
    through the judge's golden cache (only a process that never loads operator code may say so). `replan`: the
    row's buffers planned again from its seed; given, a sampled golden lets its inputs go once computed."""
    spec = ops.get(case.op)
    sampled = spec.sample_problem(case.args, bufs, sample.BUDGET_FLOPS, case.seed) if case.is_perf else None
    args, problem = (case.args, bufs) if sampled is None else sampled[:2]
    if cache:
        expected, truth, cached = golden_cache.result(case.op, args, problem, spec.golden_result)
    else:
        (expected, truth), cached = spec.golden_result(args, problem), False
    if sampled is None:
        return Golden(case, bufs, expected, truth, cached=cached)
    sub = replace(case, args=args)
    if replan is None:
        return Golden(sub, problem, expected, truth, sampled[2], cached)
    return Golden(sub, {n: b for n, b in problem.items() if b.output}, expected, truth, sampled[2], cached,
                  lambda: spec.sample_problem(case.args, replan(), sample.BUDGET_FLOPS, case.seed)[1])


def golden_bytes(golden: Golden) -> int:
    """What a kept golden holds: its expected and truth arrays, and a sampled one's own small buffers."""
    sub = sum(b.host.nbytes for b in golden.bufs.values()) if golden.index is not None else 0
    return golden.expected.nbytes + golden.truth.nbytes + sub
