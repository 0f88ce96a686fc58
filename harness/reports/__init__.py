"""A run's report: report.json and results.csv (machine-readable), report.md (the 自测报告 reviewers read) and
report.html (the same with plots), all written from the same records so they cannot disagree.

The engine calls `write_all` once at the end; while results arrive it rewrites `json_csv.write_json` /
`write_results_csv`. `junit.write_junit` writes the same records as JUnit XML for CI systems (`harness run
--junitxml PATH`). The writers (pandas, matplotlib: ~0.6 s of CPU to import) are imported by `write_all`, not with
the package, so that a process that only shows progress (harness.reports.progress) or stops before its reports
does not pay for them.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.model.meta import RunMeta
from harness.model.record import Record

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["write_all"]


def write_all(report_dir: Path, meta: RunMeta, records: list[Record],
              compare: pd.DataFrame | None = None) -> dict[str, Path]:
    """Write the four report files into report_dir; returns {"json", "csv", "md", "html"} -> path. The flat
    table and the sections are built once and shared by every file."""
    from harness.reports.html import row_table, to_html
    from harness.reports.json_csv import exit_code, results_frame, write_atomic, write_json, write_results_csv
    from harness.reports.markdown import sections, to_markdown
    from harness.reports.plots import figures

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
