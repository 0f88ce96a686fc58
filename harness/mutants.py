"""Mutation testing of the harness itself: build the CPU twin with one injected kernel bug at a time, run the
tables against it, and report which rows caught it (Netlib's testers check their checker first; so do we).

A mutant is caught by a row when that row PASSes on the clean twin and does not PASS on the mutant (FAIL, CRASH or
TIMEOUT, or DISPUTED). A mutant no row catches has survived: the tables or the checks have a hole.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.engine import Case
from harness.record import Record
from harness.runner import Settings, run

#: DISPUTED counts: the official gate failed, which is what acceptance sees.
CAUGHT_BY = {"FAIL", "DISPUTED", "CRASH", "TIMEOUT"}


@dataclass
class MutantResult:
    """One mutant's outcome: the ids of the rows that caught it."""

    name: str
    description: str
    caught_by: list[str] = field(default_factory=list)
    build_error: str = ""

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)


def sample(cases: list[Case], every: int) -> list[Case]:
    """The precision rows a mutant run uses: every TC_L0 row plus every `every`-th other row (deterministic)."""
    precision = [c for c in cases if not c.is_perf]
    return [c for i, c in enumerate(precision) if c.name.startswith("TC_L0_") or i % every == 0]


def verdicts(cases: list[Case], operator_lib: str, workers: int, timeout_s: float) -> dict[str, str]:
    """case id -> verdict for one library over the given cases (isolated workers, so a crashing mutant is fine)."""
    out: dict[str, str] = {}
    by_key = {(c.table, c.name): c.id for c in cases}

    def keep(rec: Record) -> None:
        out[by_key[(rec["table"], rec["case_name"])]] = rec["verdict"]

    run(cases, Settings(backend_options={"operator_lib": operator_lib}, workers=workers, timeout_s=timeout_s),
        keep)
    return out


def caught_by(clean: dict[str, str], mutant: dict[str, str]) -> list[str]:
    return [cid for cid, verdict in clean.items() if verdict == "PASS" and mutant.get(cid) in CAUGHT_BY]
