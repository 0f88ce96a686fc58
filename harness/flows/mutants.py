"""Mutation testing of the harness itself: build the CPU twin with one injected kernel bug at a time, run the
tables against it, and report which rows caught it (Netlib's testers check their checker first; so do we).

A mutant is caught by a row when that row PASSes on the clean twin and does not PASS on the mutant (FAIL, CRASH or
TIMEOUT, or DISPUTED). A mutant no row catches has survived: the tables or the checks have a hole.

Each library's rows (the clean twin's and every mutant's) are one session of kind "mutants", with the mutant in
its settings: in the history and reports like any run, so a surprising catch can be looked at row by row, and
never what `harness compare latest` picks (a mutant is broken on purpose).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.model import operators as ops
from harness.perf import verdict as perf
from harness.backends import BackendUnavailable
from harness.model.case import Case
from harness.model.record import Record
from harness.run.runner import check_backend, run
from harness.model.settings import Settings
from harness.flows.session import Session, new_meta
from harness.model.meta import new_settings

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


@dataclass(frozen=True)
class Recording:
    """What every library's session shares: where it is recorded, and the settings each library runs under."""

    history: Any
    report_dir: Path
    tables: list[str]
    settings: Settings


def session_for(cases: list[Case], operator_lib: str, mutant: dict[str, str], where: Recording) -> Session:
    """The session of one library's rows; its run id ends with the mutant's name ("clean" for the twin as written).
    A library the probe refuses still runs (its rows say why), as it did before runs were recorded."""
    settings = where.settings.with_library(operator_lib)
    try:
        info = check_backend(settings)
    except BackendUnavailable:
        info = {"library": operator_lib}
    meta = new_meta("mutants", settings.backend, where.tables, new_settings(settings, gates=ops.gates(), mutant=mutant),
                    info, perf.hardware_identity(info, None))
    meta["run_id"] = f"{meta['run_id']}-{mutant['name']}"
    return Session(where.history, where.report_dir / meta["run_id"], meta, cases)


def verdicts(cases: list[Case], settings: Settings,
             on_record: Callable[[Record], None] = lambda rec: None) -> dict[str, str]:
    """case id -> verdict for the library of `settings` over the given cases (isolated workers, so a crashing
    mutant is fine); each record also goes to `on_record` (the library's session)."""
    out: dict[str, str] = {}
    by_key = {(c.table, c.name): c.id for c in cases}

    def keep(rec: Record) -> None:
        on_record(rec)
        out[by_key[(rec["table"], rec["case_name"])]] = rec["verdict"]

    run(cases, settings, keep)
    return out


def caught_by(clean: dict[str, str], mutant: dict[str, str]) -> list[str]:
    return [cid for cid, verdict in clean.items() if verdict == "PASS" and mutant.get(cid) in CAUGHT_BY]


def recorded_verdicts(cases: list[Case], operator_lib: str, mutant: dict[str, str], where: Recording) -> dict[str, str]:
    """verdicts() of one library, recorded as its own session."""
    session = session_for(cases, operator_lib, mutant, where)
    with session.recording():
        return verdicts(cases, where.settings.with_library(operator_lib), session.record)
