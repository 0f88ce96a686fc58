"""Figures for report.html, rendered with matplotlib's Agg canvas into base64 PNG data URIs so the page needs no
other file and no network.

Built on `matplotlib.figure.Figure` rather than pyplot: no global figure registry to leak or lock, and it works in
worker processes without a display. The number of figures is capped (`MAX_FIGURES`) so a 2400-row run still renders
in seconds and the page stays a few MB.
"""
from __future__ import annotations

import base64
import io
import math
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from harness.record import VERDICTS, Record
from harness.reports.json_csv import baseline_entry

MAX_FIGURES = 40
#: Default GPU ratio rule (gpu_us / npu_us >= 0.4) when a baseline entry does not carry its own `ratio_rule`.
GPU_RATIO_RULE = 0.4
#: Columns `figures` reads from the compare frame (harness.compare.compare_runs): relative change of the head
#: against the base (fraction, +0.05 = 5% slower) and its confidence interval.
COMPARE_COLUMNS = ("case_name", "verdict", "change", "ci_lo", "ci_hi")
MAX_COMPARE_ROWS = 60

COLOURS = {"PASS": "#2e7d32", "DISPUTED": "#f57f17", "FAIL": "#c62828", "ERROR": "#6a1b9a", "CRASH": "#000000", "TIMEOUT": "#ef6c00",
           "SKIP": "#9e9e9e", "INCONCLUSIVE": "#f9a825", "NO_REF": "#90a4ae", "REGRESSION": "#c62828",
           "IMPROVEMENT": "#2e7d32", "SAME": "#1565c0"}
_DPI = 72
_VERDICT_RANK = {"FAIL": 0, "INCONCLUSIVE": 1, "PASS": 2, "NO_REF": 3}


def figures(records: list[Record], frame: pd.DataFrame, compare: pd.DataFrame | None = None,
            max_figures: int = MAX_FIGURES) -> dict[str, list[dict[str, str]]]:
    """Figures keyed by the report section they belong to; each is {"title", "uri"}."""
    out: dict[str, list[dict[str, str]]] = {"验证摘要": [verdict_bar(frame)]}
    out["精度说明"] = [fig for fig in (error_histogram(frame, "max_abs_error"), error_histogram(frame, "mere")) if fig]
    perf: list[dict[str, str]] = []
    if compare is not None and not compare.empty and set(COMPARE_COLUMNS) <= set(compare.columns):
        perf.append(compare_chart(compare))
    budget = max_figures - len(out["验证摘要"]) - len(out["精度说明"]) - len(perf)
    perf += [timing_distribution(r) for r in timing_rows(records, max(budget, 0))]
    out["性能数据"] = perf
    return out


def timing_rows(records: list[Record], limit: int) -> list[Record]:
    """Perf rows worth a distribution plot, at most `limit`: those with a baseline value, the ones failing or
    nearest to failing first (verdict, then implied factor); without any baseline, the slowest rows."""
    timed = [r for r in records if r.get("timing") and r["timing"].get("samples_us")]
    with_ref = [r for r in timed if any(b.get("value_us") is not None for b in r["baseline"])]
    if not with_ref:
        return sorted(timed, key=lambda r: r["timing"].get("mean_us") or 0.0, reverse=True)[:limit]
    return sorted(with_ref, key=_urgency)[:limit]


def _urgency(record: Record) -> tuple[int, float]:
    judged = [b for b in record["baseline"] if b.get("value_us") is not None]
    rank = min(_VERDICT_RANK.get(b.get("verdict"), len(_VERDICT_RANK)) for b in judged)
    return rank, -max(b.get("implied_factor") or 0.0 for b in judged)


def verdict_bar(frame: pd.DataFrame) -> dict[str, str]:
    counts = frame["verdict"].value_counts().reindex(list(VERDICTS), fill_value=0)
    fig, ax = _figure(6.0, 2.4)
    bars = ax.bar(counts.index, counts.values, color=[COLOURS[v] for v in counts.index])
    ax.bar_label(bars, fontsize=8)
    ax.set_ylabel("cases")
    ax.set_title("Verdicts", fontsize=10)
    return _encode(fig, "用例判定统计")


def error_histogram(frame: pd.DataFrame, metric: str) -> dict[str, str] | None:
    """Histogram of a precision metric across rows (per component for complex outputs), log scale. Exact zeros
    and non-finite values cannot sit on a log axis, so they are counted in the legend instead."""
    real_part = frame[f"{metric}_real"].map(lambda v: v is None)
    series = {"value": frame.loc[real_part, metric], "real": frame[f"{metric}_real"],
              "imag": frame[f"{metric}_imag"]}
    fig, ax = _figure(6.0, 2.6)
    plotted = False
    for name, column in series.items():
        values = np.array([float(v) for v in column if v is not None and v is not pd.NA], dtype=float)
        if not values.size:
            continue
        positive = values[np.isfinite(values) & (values > 0)]
        zeros, nonfinite = int((values == 0).sum()), int((~np.isfinite(values)).sum())
        label = f"{name} (n={values.size}, zero={zeros}, non-finite={nonfinite})"
        if positive.size:
            lo, hi = math.log10(positive.min()), math.log10(positive.max())
            ax.hist(positive, bins=np.logspace(lo - 0.1, hi + 0.1, 40), alpha=0.6, label=label, histtype="stepfilled")
        else:
            ax.plot([], [], label=label)
        plotted = True
    if not plotted:
        return None
    ax.set_xscale("log")
    ax.set_xlabel(metric)
    ax.set_ylabel("rows")
    ax.legend(fontsize=7)
    ax.set_title(f"{metric} across precision rows", fontsize=10)
    return _encode(fig, f"{metric} 分布（对数坐标）")


def timing_distribution(record: Record) -> dict[str, str]:
    """Sample histogram of one perf row with its mean, CI and the baseline limits it is judged against."""
    timing = record["timing"]
    samples = np.asarray(timing["samples_us"], dtype=float)
    fig, ax = _figure(5.0, 2.2)
    ax.hist(samples, bins=min(40, max(5, samples.size // 5)), color="#90caf9", histtype="stepfilled")
    ax.axvline(timing["mean_us"], color="#0d47a1", label=f"mean {timing['mean_us']:.4g} us")
    ci = timing.get("ci95_us")
    if ci and None not in ci:
        ax.axvspan(ci[0], ci[1], color="#0d47a1", alpha=0.15, label="95% CI")
    taskbook = baseline_entry(record, "taskbook")
    if taskbook and taskbook.get("value_us") is not None:
        ax.axvline(taskbook["value_us"], color=COLOURS.get(taskbook.get("verdict"), "k"), linestyle="--",
                   label=f"task book {taskbook['value_us']:.4g} us ({taskbook.get('verdict')})")
    gpu = baseline_entry(record, "gpu")
    if gpu and gpu.get("value_us") is not None:
        limit = gpu["value_us"] / gpu.get("ratio_rule", GPU_RATIO_RULE)
        ax.axvline(limit, color=COLOURS.get(gpu.get("verdict"), "k"), linestyle=":",
                   label=f"GPU limit {limit:.4g} us ({gpu.get('verdict')})")
    ax.set_xlabel("us per call")
    ax.legend(fontsize=6, loc="upper right")
    ax.set_title(f"{record['case_name']} ({timing.get('mode', '')}, n={timing.get('n')})", fontsize=9)
    return _encode(fig, f"{record['case_name']} 耗时分布")


def compare_chart(compare: pd.DataFrame) -> dict[str, str]:
    """Relative change per row with its CI, coloured by verdict. With many rows it shows those not judged SAME
    first, then the largest |change|, so a regression is never cut off by the row cap."""
    data = compare.assign(_same=compare["verdict"] == "SAME",
                          _abs=pd.to_numeric(compare["change"], errors="coerce").abs())
    data = data.sort_values(["_same", "_abs"], ascending=[True, False]).head(MAX_COMPARE_ROWS).iloc[::-1]
    change = pd.to_numeric(data["change"], errors="coerce").to_numpy(dtype=float) * 100
    lo = pd.to_numeric(data["ci_lo"], errors="coerce").to_numpy(dtype=float) * 100
    hi = pd.to_numeric(data["ci_hi"], errors="coerce").to_numpy(dtype=float) * 100
    y = np.arange(len(data))
    fig, ax = _figure(6.5, 1.0 + 0.18 * len(data), left=0.9)
    for verdict in pd.unique(data["verdict"]):
        mask = (data["verdict"] == verdict).to_numpy()
        ax.errorbar(change[mask], y[mask], xerr=[change[mask] - lo[mask], hi[mask] - change[mask]], fmt="o",
                    markersize=3, color=COLOURS.get(verdict, "#455a64"), label=str(verdict))
    ax.axvline(0, color="k", linewidth=0.8)
    ax.set_yticks(y, [str(c) for c in data["case_name"]], fontsize=6)
    ax.set_xlabel("change of head vs base (%)")
    ax.legend(fontsize=7)
    shown = f"{len(data)} of {len(compare)} rows" if len(data) < len(compare) else f"{len(data)} rows"
    ax.set_title(f"Compare head vs base ({shown})", fontsize=10)
    return _encode(fig, "与基准运行对比：相对变化及置信区间")


def _figure(width: float, height: float, left: float = 0.1, bottom: float = 0.5) -> tuple[Figure, Any]:
    """A figure with fixed margins in inches (constrained layout would double the draw time per figure)."""
    fig = Figure(figsize=(width, height), dpi=_DPI)
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=min(0.6, (left + 0.5) / width), right=1 - 0.15 / width, bottom=bottom / height,
                        top=1 - 0.3 / height)
    return fig, fig.add_subplot()


def _encode(fig: Figure, title: str) -> dict[str, str]:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI)
    return {"title": title, "uri": "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")}
