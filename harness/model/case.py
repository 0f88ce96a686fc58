"""The case model: one parsed table row, what every stage of a row reads (and what the sandbox receives)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.model.record import Record, new_record


@dataclass
class Case:
    """A parsed row. `errors` means the harness cannot run it as written (verdict ERROR); `skip` a reason not to."""

    table: str
    line: int
    name: str
    op: str | None
    description: str
    args: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    expected_status: int = 0
    seed: int = 0
    thresholds: tuple[float, float] = (0.0, 0.0)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skip: str = ""

    @property
    def is_perf(self) -> bool:
        return self.name.startswith("TC_PF_")

    @property
    def id(self) -> str:
        return f"{Path(self.table).name}::{self.name}"

    def new_record(self) -> Record:
        """An empty result record for this row (verdict ERROR until something better is known)."""
        return new_record(self.name, self.op or "?", self.table, self.line, self.expected_status, self.is_perf,
                          self.params)
