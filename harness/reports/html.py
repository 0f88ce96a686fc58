"""report.html: the same sections as report.md plus plots, in one self-contained page (inline CSS and JS, figures
as base64 PNG data URIs, no network), so it can be mailed or attached to a review without its folder.

The verdict line is the first thing on the page, the rest of the one-screen summary follows; the per-row table ("测试明细") is data in the page (one JSON array) that a small inline
script renders a page at a time, sorts, filters by verdict and searches: a 2400-row run opens fast and stays a few
hundred KB.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from harness.model.record import PERF_VERDICTS, VERDICTS, Record
from harness.reports import headline
from harness.reports.json_csv import exit_code, results_frame, write_atomic
from harness.reports.content import Section, Table, fmt, human_text, metric_cell, short_status
from harness.reports.json_csv import METRICS
from harness.reports.markdown import sections
from harness.reports.plots import figures
from harness.model.meta import RunMeta

_VERDICT_WORDS = frozenset({*VERDICTS, *PERF_VERDICTS, *headline.WORDS.values()})
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
                          autoescape=True, trim_blocks=True, lstrip_blocks=True)
#: The section the interactive per-row table belongs to.
DETAIL_HEADING = "测试明细"
#: Rows the table shows at once (pages through the rest): laying out thousands of rows is what slows a page.
PAGE_ROWS = 200
ROW_HEADERS = ("用例", "描述", "算子", "结果", "期望状态", "实际状态", "形状", "门限", *METRICS, "mean(us)", "任务书",
               "原因", "位置")


def write_html(path: Path, meta: RunMeta, records: list[Record], compare: pd.DataFrame | None = None,
               frame: pd.DataFrame | None = None) -> Path:
    write_atomic(Path(path), render_html(meta, records, compare, frame))
    return Path(path)


def render_html(meta: RunMeta, records: list[Record], compare: pd.DataFrame | None = None,
                frame: pd.DataFrame | None = None) -> str:
    frame = results_frame(records) if frame is None else frame
    return to_html(str(meta.get("run_id", "")), exit_code(records, meta) == 0, sections(meta, records, compare, frame),
                   figures(records, frame, compare), row_table(frame))


def row_table(frame: pd.DataFrame) -> list[list[str]]:
    """One list of display strings per row, in ROW_HEADERS order (complex metrics as `re/im`)."""
    return [[str(human_text(v)) for v in (
        r["case_name"], r["description"], r["op"], r["verdict"], short_status(r["expected_status"]), short_status(r["status"]),
        r["shape"], fmt(r["gate"]), *[metric_cell(r, m) for m in METRICS], fmt(r["mean_us"]),
        fmt(r["taskbook_verdict"]), r["reason"], f"{Path(str(r['table'])).name}:{r['line']}")]
        for r in frame.to_dict("records")]


def to_html(run_id: str, passed: bool, content: list[Section], plots: dict[str, list[dict[str, str]]],
            rows: list[list[str]] | None = None) -> str:
    """The page for already-built sections, each followed by its figures (keyed by section heading); `rows` is
    the per-row table shown, sortable and searchable, in the detail section."""
    blocks = [{"heading": s.heading, "blocks": [_block(b) for b in s.blocks], "figures": plots.get(s.heading, [])}
              for s in content]
    # the verdict line (the status section's first block) is the first thing on the page, above the title
    status_line = blocks[0]["blocks"].pop(0)["text"] if blocks and blocks[0]["blocks"] else ""
    # "</script>" or "<!--" in a cell would end the data block early: every "<" is written as a JSON escape
    data = json.dumps(rows or [], ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    # green only where every phase passed; amber where nothing failed but a phase was not judged
    tone = "fail" if not passed else "open" if headline.WORDS["NOT_JUDGED"] in status_line else "pass"
    return _ENV.get_template("report.html.j2").render(
        run_id=run_id, tone=tone, status_line=status_line, sections=blocks, verdicts=_VERDICT_WORDS,
        detail_heading=DETAIL_HEADING,
        row_headers=ROW_HEADERS, row_count=len(rows or []), row_data=data, page_rows=PAGE_ROWS,
        verdict_options=sorted({r[3] for r in rows or []}))


def _block(block: str | list[str] | Table) -> dict[str, Any]:
    """A section block tagged with its kind for the template."""
    if isinstance(block, Table):
        return {"kind": "table", "title": block.title, "headers": block.headers, "rows": block.rows}
    if isinstance(block, list):
        return {"kind": "list", "items": block}
    return {"kind": "text", "text": block.replace("**", "")}
