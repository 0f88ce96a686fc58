"""report.html: the same sections as report.md plus plots, in one self-contained page (inline CSS, figures as
base64 PNG data URIs), so it can be mailed or attached to a review without its folder."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from harness.record import PERF_VERDICTS, VERDICTS, Record
from harness.reports.json_csv import exit_code, results_frame, write_atomic
from harness.reports.markdown import Section, Table, sections
from harness.reports.plots import figures

_VERDICT_WORDS = frozenset({*VERDICTS, *PERF_VERDICTS})
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
                          autoescape=True, trim_blocks=True, lstrip_blocks=True)


def write_html(path: Path, meta: dict[str, Any], records: list[Record], compare: pd.DataFrame | None = None,
               frame: pd.DataFrame | None = None) -> Path:
    write_atomic(Path(path), render_html(meta, records, compare, frame))
    return Path(path)


def render_html(meta: dict[str, Any], records: list[Record], compare: pd.DataFrame | None = None,
                frame: pd.DataFrame | None = None) -> str:
    frame = results_frame(records) if frame is None else frame
    return to_html(meta.get("run_id", ""), exit_code(records) == 0, sections(meta, records, compare, frame),
                   figures(records, frame, compare))


def to_html(run_id: str, passed: bool, content: list[Section], plots: dict[str, list[dict[str, str]]]) -> str:
    """The page for already-built sections, each followed by its figures (keyed by section heading)."""
    blocks = [{"heading": s.heading, "blocks": [_block(b) for b in s.blocks], "figures": plots.get(s.heading, [])}
              for s in content]
    return _ENV.get_template("report.html.j2").render(run_id=run_id, passed=passed, sections=blocks,
                                                       verdicts=_VERDICT_WORDS)


def _block(block: str | list[str] | Table) -> dict[str, Any]:
    """A section block tagged with its kind for the template."""
    if isinstance(block, Table):
        return {"kind": "table", "title": block.title, "headers": block.headers, "rows": block.rows}
    if isinstance(block, list):
        return {"kind": "list", "items": block}
    return {"kind": "text", "text": block.replace("**", "")}
