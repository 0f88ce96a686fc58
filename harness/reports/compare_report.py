"""The files `harness compare --report-dir D` writes: compare.html (self-contained, chart inline), compare.md with
compare.png beside it, and compare.json (the same object as `--json`), all from one comparison frame."""
from __future__ import annotations

import base64
import math
from pathlib import Path
from typing import Any

import pandas as pd

from harness.perf.compare import harness_change, run_line, summary_line, to_json, warnings
from harness.reports.html import _ENV
from harness.reports.json_csv import write_atomic
from harness.reports.plots import compare_chart

HEADERS = ["case", "op", "evidence", "base median us", "head median us", "change", "95% CI", "q (BH)", "verdict"]


def _pct(x: float) -> str:
    return f"{x:+.2%}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def table_rows(df: pd.DataFrame) -> list[list[str]]:
    return [[str(r.case_name), str(r.op), f"{r.evidence} ({r.n_base}/{r.n_head})", f"{r.base_median_us:.4g}",
             f"{r.head_median_us:.4g}", _pct(r.change), f"[{_pct(r.ci_lo)}, {_pct(r.ci_hi)}]", f"{r.q_value:.3g}",
             str(r.verdict)] for r in df.itertuples()]


def write_compare(out_dir: Path, df: pd.DataFrame, base_meta: dict, head_meta: dict,
                  settings: dict[str, Any]) -> dict[str, Path]:
    """Write the four files; returns {"html", "md", "png", "json"} -> path ("png" only when there are rows)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"html": out_dir / "compare.html", "md": out_dir / "compare.md", "json": out_dir / "compare.json"}
    chart = compare_chart(df) if not df.empty else None
    runs = [run_line("base", base_meta), run_line("head", head_meta)]
    runs += [line for line in [harness_change(base_meta, head_meta)] if line]
    rule = (f"threshold ±{settings['threshold']:.1%}, BH alpha {settings['alpha']}, noise floor "
            f"{settings['min_effect']:.1%}" + (f", fail on >= {settings['fail_on']:.1%}" if settings.get("fail_on")
                                                else ""))
    summary = summary_line(df) if not df.empty else "no perf rows with samples on both sides"
    notes = warnings(df)
    rows = table_rows(df)
    md = ["# 性能对比 (compare)", "", *[f"* {line}" for line in runs], f"* {rule}", f"* {summary}",
          *[f"* warning: {w}" for w in notes], ""]
    if chart:
        paths["png"] = out_dir / "compare.png"
        paths["png"].write_bytes(base64.b64decode(chart["uri"].split(",", 1)[1]))
        md += [f"![{chart['title']}](compare.png)", ""]
    if rows:
        md += ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        md += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    write_atomic(paths["md"], "\n".join(md) + "\n")
    write_atomic(paths["html"], _ENV.get_template("compare.html.j2").render(
        runs=runs, rule=rule, summary=summary, warnings=notes, chart=chart, headers=HEADERS, rows=rows))
    write_atomic(paths["json"], to_json(df, base_meta, head_meta, settings))
    return paths
