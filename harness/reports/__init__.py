"""A run's report: report.json and results.csv (machine-readable), report.md (the 自测报告 reviewers read) and
report.html (the same with plots), all written from the same records so they cannot disagree.

The engine calls `write_all` once at the end; while results arrive it rewrites `write_json` / `write_results_csv`.
`write_junit` writes the same records as JUnit XML for CI systems (`harness run --junitxml PATH`).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.model.record import Record
from harness.reports.html import row_table, to_html, write_html
from harness.reports.json_csv import exit_code, results_frame, write_atomic, write_json, write_results_csv
from harness.reports.junit import write_junit
from harness.reports.markdown import sections, to_markdown, write_markdown
from harness.reports.plots import figures
from harness.model.meta import RunMeta

__all__ = ["write_all", "write_json", "write_results_csv", "write_markdown", "write_html", "write_junit", "exit_code"]


def write_all(report_dir: Path, meta: RunMeta, records: list[Record],
              compare: pd.DataFrame | None = None) -> dict[str, Path]:
    """Write the four report files into report_dir; returns {"json", "csv", "md", "html"} -> path. The flat
    table and the sections are built once and shared by every file."""
    report_dir = Path(report_dir)
    frame = results_frame(records)
    content = sections(meta, records, compare, frame)
    run_id = meta.get("run_id", "")
    paths = {"json": write_json(report_dir / "report.json", meta, records),
             "csv": write_results_csv(report_dir / "results.csv", records, frame),
             "md": report_dir / "report.md", "html": report_dir / "report.html"}
    write_atomic(paths["md"], to_markdown(run_id, content))
    write_atomic(paths["html"], to_html(run_id, exit_code(records, meta) == 0, content, figures(records, frame, compare),
                                        row_table(frame)))
    return paths
