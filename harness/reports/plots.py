"""Figures for report.html, rendered with matplotlib's Agg canvas into base64 PNG data URIs so the page needs no
other file and no network.

Built on `matplotlib.figure.Figure` rather than pyplot: no global figure registry to leak or lock, and it works in
worker processes without a display. Plots only where they carry a signal, each at most PAGE_WIDTH_PX wide (the
page's 1400-px column): the rows a limit applies to get a panel each (operator, case and shape in its title, limit,
mean and CI, in table order); every timed row is one point of the time-vs-FLOPs chart; only rows whose distribution
needs a second look (several modes, drift, or not converged where most rows did converge) get a timing
distribution, grouped ROWS_PER_GROUP rows of one operator per figure. Rendered at 100 DPI: a 400-perf-row run's
page stays well under 1 MB (8-bit palette PNGs).
"""
from __future__ import annotations

import base64
import io
import math
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from harness.model.record import DISPUTED, FAILING, VERDICTS, Record
from harness.reports.json_csv import baseline_entry, shape

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_FIGURES = 40
#: Timing distributions: rows per figure, and the most figures they may take (more rows: more rows per figure).
ROWS_PER_GROUP, MAX_GROUPS = 25, 8
#: Rows shown in the baseline panel (the task-book rows: three for csymm), PANEL_COLUMNS panels a line.
MAX_PANEL_ROWS, PANEL_COLUMNS = 6, 3
#: The widest figure, in pixels at _DPI: the report's column is 1400 px.
PAGE_WIDTH_PX = 1300
#: Default GPU ratio rule (gpu_us / npu_us >= 0.4) when a baseline entry does not carry its own `ratio_rule`.
GPU_RATIO_RULE = 0.4
#: Columns `figures` reads from the compare frame (harness.perf.compare.compare_runs): relative change of the head
#: against the base (fraction, +0.05 = 5% slower) and its confidence interval.
COMPARE_COLUMNS = ("case_name", "verdict", "change", "ci_lo", "ci_hi")
MAX_COMPARE_ROWS = 60

COLOURS = {"PASS": "#2e7d32", "DISPUTED": "#f57f17", "FAIL": "#c62828", "ERROR": "#6a1b9a", "CRASH": "#000000", "TIMEOUT": "#ef6c00",
           "SKIP": "#9e9e9e", "INCONCLUSIVE": "#f9a825", "NO_REF": "#90a4ae", "REGRESSION": "#c62828",
           "IMPROVEMENT": "#2e7d32", "SAME": "#1565c0"}
_DPI = 100
_VERDICT_RANK = {"FAIL": 0, "INCONCLUSIVE": 1, "PASS": 2, "NO_REF": 3}


def figures(records: list[Record], frame: pd.DataFrame, compare: pd.DataFrame | None = None,
            max_figures: int = MAX_FIGURES) -> dict[str, list[dict[str, str]]]:
    """Figures keyed by the report section they belong to; each is {"title", "uri"}. The timing distributions
    cover every timed perf row whatever `max_figures` says (it caps the per-row baseline panel only)."""
    out: dict[str, list[dict[str, str]]] = {"失败用例": [fig for fig in (failures_chart(frame),) if fig]}
    out["精度说明"] = [fig for fig in (error_histogram(frame, "max_abs_error"), error_histogram(frame, "mere")) if fig]
    perf: list[dict[str, str]] = []
    if compare is not None and not compare.empty and set(COMPARE_COLUMNS) <= set(compare.columns):
        perf.append(compare_chart(compare))
    judged = baseline_rows(records, min(MAX_PANEL_ROWS, max(max_figures - len(perf) - 3, 0)))
    if judged:
        perf.append(baseline_panel(judged))
    perf += [fig for fig in (time_vs_flops(records),) if fig]
    mark_unconverged = unconverged_is_a_signal(records)
    perf += [timing_group(group, mark_unconverged) for group in timing_groups(records, mark_unconverged)]
    out["性能数据"] = perf
    return out


def timed(records: list[Record]) -> list[Record]:
    return [r for r in records if r.get("timing") and r["timing"].get("samples_us")]


def unconverged_is_a_signal(records: list[Record]) -> bool:
    """"not converged" marks a row only where most timed rows did converge: on the CPU twin, whose time cap stops
    every row short of its CI target, a red mark on every row would say nothing about any of them."""
    rows = timed(records)
    return sum(r["timing"].get("converged") is False for r in rows) * 2 < len(rows)


def timing_groups(records: list[Record], mark_unconverged: bool = True) -> list[list[Record]]:
    """The timed rows whose distribution needs a look (_flags), by operator in table order, cut into figures of
    ROWS_PER_GROUP rows (more per figure when that would exceed MAX_GROUPS figures)."""
    rows = [r for r in timed(records) if flags(r["timing"], mark_unconverged)]
    per = max(ROWS_PER_GROUP, math.ceil(len(rows) / MAX_GROUPS))
    by_op: dict[str, list[Record]] = {}
    for r in rows:
        by_op.setdefault(str(r.get("op")), []).append(r)
    return [chunk[i:i + per] for chunk in by_op.values() for i in range(0, len(chunk), per)]


def baseline_rows(records: list[Record], limit: int) -> list[Record]:
    """Rows with a baseline value (the task-book rows): the `limit` most urgent (failing first, then nearest to
    failing), shown in table order."""
    with_ref = [r for r in timed(records) if any(b.get("value_us") is not None for b in r.get("baseline") or [])]
    chosen = {id(r) for r in sorted(with_ref, key=_urgency)[:limit]}
    return [r for r in with_ref if id(r) in chosen]


def _urgency(record: Record) -> tuple[int, float]:
    judged = [b for b in record["baseline"] if b.get("value_us") is not None]
    rank = min(_VERDICT_RANK.get(b.get("verdict"), len(_VERDICT_RANK)) for b in judged)
    return rank, -max(b.get("implied_factor") or 0.0 for b in judged)


def flags(timing: dict, mark_unconverged: bool = True) -> str:
    """Short marks for a row whose distribution needs a second look."""
    marks = []
    if len(timing.get("modes_us") or []) > 1:
        marks.append(f"{len(timing['modes_us'])} modes")
    if timing.get("drift") is not None:
        marks.append(f"drift {timing['drift']:+.0%}")
    if timing.get("converged") is False and mark_unconverged:
        marks.append("not converged")
    return ", ".join(marks)


def timing_group(rows: list[Record], mark_unconverged: bool = True) -> dict[str, str]:
    """One figure for a group of perf rows: per row a box of its samples (quartiles, whiskers at p1/p99), the
    median, the mean with its 95 % CI, on a log time axis; the marks that earned each row its place in red beside
    its name."""
    fig, ax = _figure(10.0, 0.9 + 0.26 * len(rows), left=2.6)
    y = np.arange(len(rows))[::-1]
    data = [np.asarray(r["timing"]["samples_us"], dtype=float) for r in rows]
    ax.boxplot(data, positions=y, orientation="horizontal", whis=(1, 99), showfliers=False, widths=0.6,
               patch_artist=True, boxprops={"facecolor": "#bbdefb", "edgecolor": "#1565c0", "linewidth": 0.7},
               medianprops={"color": "#0d47a1", "linewidth": 1.2}, whiskerprops={"linewidth": 0.7},
               capprops={"linewidth": 0.7})
    means = np.array([r["timing"]["mean_us"] for r in rows])
    cis = [r["timing"].get("ci95_us") or [m, m] for r, m in zip(rows, means)]
    lo = np.array([max(c[0], 1e-9) if c[0] is not None else m for c, m in zip(cis, means)])
    hi = np.array([c[1] if c[1] is not None else m for c, m in zip(cis, means)])
    ax.errorbar(means, y, xerr=[means - np.minimum(lo, means), np.maximum(hi, means) - means], fmt="D",
                markersize=3, color="#e65100", elinewidth=1, capsize=2, label="mean, 95% CI")
    labels = []
    for r in rows:
        marks = flags(r["timing"], mark_unconverged)
        labels.append(f"{r['case_name']} (n={r['timing'].get('n')})" + (f"  [{marks}]" if marks else ""))
    ax.set_yticks(y, labels, fontsize=7)
    for tick, r in zip(ax.get_yticklabels(), rows):
        if flags(r["timing"], mark_unconverged):
            tick.set_color(COLOURS["FAIL"])
    ax.set_xscale("log")
    ax.set_xlabel("us per call (log scale); box: quartiles and median, whiskers: p1-p99", fontsize=7)
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(fontsize=6, loc="lower right")
    first, last = rows[0]["case_name"], rows[-1]["case_name"]
    ax.set_title(f"{rows[0].get('op')} timing, {first} .. {last} ({len(rows)} rows)", fontsize=8)
    return _encode(fig, f"耗时分布 {rows[0].get('op')}: " + " ".join(r["case_name"] for r in rows))


def baseline_panel(rows: list[Record]) -> dict[str, str]:
    """The rows a limit applies to, PANEL_COLUMNS a line within the page width: samples, mean and its 95 % CI,
    and each limit with its verdict, so a reader sees how far the CI sits from the line."""
    columns = min(PANEL_COLUMNS, len(rows))
    lines = math.ceil(len(rows) / columns)
    fig = _canvas(PAGE_WIDTH_PX / _DPI * columns / PANEL_COLUMNS, 3.2 * lines)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.17 / lines, top=1 - 0.2 / lines, wspace=0.3, hspace=0.6)
    for i, record in enumerate(rows):
        _distribution(fig.add_subplot(lines, columns, i + 1), record)
    return _encode(fig, "任务书标杆对比：耗时分布、均值 95% 置信区间与限值 " + " ".join(r["case_name"] for r in rows))


#: The mean-time-vs-FLOPs chart is drawn across at least this many timed rows.
CURVE_MIN_ROWS = 5


def time_vs_flops(records: list[Record]) -> dict[str, str] | None:
    """Every timed row as one point, mean time against its FLOP count (log-log), one colour per operator: where a
    row leaves its operator's curve is what a reader looks for; the numbers are in results.csv. None below
    CURVE_MIN_ROWS timed rows with both (an ab or baseline run's records may carry no FLOP count): a few points
    draw no curve, and the run would import and run matplotlib for them."""
    rows = [r for r in timed(records) if (r.get("flops") or 0) > 0 and (r["timing"].get("mean_us") or 0) > 0]
    if len(rows) < CURVE_MIN_ROWS:
        return None
    fig, ax = _figure(PAGE_WIDTH_PX / _DPI * 0.6, 3.6)
    palette = ("#1565c0", "#2e7d32", "#e65100", "#6a1b9a", "#00838f", "#ad1457")
    for i, op in enumerate(dict.fromkeys(str(r.get("op")) for r in rows)):
        mine = [r for r in rows if str(r.get("op")) == op]
        ax.scatter([r["flops"] for r in mine], [r["timing"]["mean_us"] for r in mine], s=8,
                   color=palette[i % len(palette)], label=f"{op} ({len(mine)} rows)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOPs per call (log)", fontsize=8)
    ax.set_ylabel("mean us per call (log)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"Mean time vs FLOPs, {len(rows)} timed rows", fontsize=9)
    return _encode(fig, f"耗时与计算量（{len(rows)} 个计时用例，每点一行）")


def failures_chart(frame: pd.DataFrame) -> dict[str, str] | None:
    """Where the failing rows are: per case family, stacked by verdict. None when nothing failed (a verdict count
    chart would only repeat the summary table's numbers)."""
    failing = frame[frame["verdict"].isin([*FAILING, DISPUTED])]
    if failing.empty:
        return None
    counts = pd.crosstab(failing["family"], failing["verdict"])
    fig, ax = _figure(6.0, 1.0 + 0.3 * len(counts), left=0.4, bottom=0.45)
    left = np.zeros(len(counts))
    for verdict in [v for v in VERDICTS if v in counts.columns]:
        bars = ax.barh(counts.index, counts[verdict].values, left=left, color=COLOURS[verdict], label=verdict)
        ax.bar_label(bars, labels=[str(v) if v else "" for v in counts[verdict].values], label_type="center",
                     color="white", fontsize=8)
        left += counts[verdict].values
    ax.set_xlabel("failing rows")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Failing rows by case family", fontsize=10)
    return _encode(fig, f"未通过用例按用例族（{len(failing)}）")


#: An error distribution is drawn across at least this many precision rows: over fewer it shows nothing the rows
#: table does not, and a run of a few rows (most of the suite's, and a user's `-k` of one case) would import and run
#: matplotlib for it (~0.6 s of CPU).
HISTOGRAM_MIN_ROWS = 10


def error_histogram(frame: pd.DataFrame, metric: str) -> dict[str, str] | None:
    """Histogram of a precision metric across rows (per component for complex outputs), log scale. Exact zeros
    and non-finite values cannot sit on a log axis, so they are counted in the legend instead. None below
    HISTOGRAM_MIN_ROWS rows with a value."""
    # the plain column holds a complex row's worse component (json_csv.worst): a value wherever the row has one
    if int(frame[metric].map(lambda v: v is not None and v is not pd.NA).sum()) < HISTOGRAM_MIN_ROWS:
        return None
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


def _distribution(ax: Any, record: Record) -> None:
    """Sample histogram of one perf row with its mean, CI and the baseline limits it is judged against."""
    timing = record["timing"]
    samples = np.asarray(timing["samples_us"], dtype=float)
    samples = samples[samples > 0]
    marks = [timing["mean_us"], *[b["value_us"] for b in record.get("baseline") or [] if b.get("value_us")]]
    lo, hi = math.log10(min(samples.min(), *marks)), math.log10(max(samples.max(), *marks))
    if samples.size > 1:
        ax.hist(samples, bins=np.logspace(lo - 0.05, hi + 0.05, min(50, max(8, samples.size // 5))),
                color="#90caf9", histtype="stepfilled")
    else:  # one sample (a call longer than the cap): a histogram of it would be one meaningless bar
        ax.plot(samples, [1] * samples.size, "o", color="#90caf9", label="the one sample")
        ax.set_yticks([])
    ax.set_xscale("log")
    ax.set_xlim(10 ** (lo - 0.1), 10 ** (hi + 0.1))
    ax.axvline(timing["mean_us"], color="#0d47a1", label=f"mean {timing['mean_us']:.4g} us")
    ci = timing.get("ci95_us")
    if ci and None not in ci:
        ax.axvspan(ci[0], ci[1], color="#0d47a1", alpha=0.15, label=f"95% CI [{ci[0]:.4g}, {ci[1]:.4g}]")
    else:
        ax.plot([], [], " ", label=f"no CI (n={timing.get('n')})")
    taskbook = baseline_entry(record, "taskbook")
    if taskbook and taskbook.get("value_us") is not None:
        ax.axvline(taskbook["value_us"], color=COLOURS.get(taskbook.get("verdict"), "k"), linestyle="--",
                   linewidth=1.5, label=f"task book {taskbook['value_us']:.4g} us: {taskbook.get('verdict')}")
    gpu = baseline_entry(record, "gpu")
    if gpu and gpu.get("value_us") is not None:
        limit = gpu["value_us"] / (gpu.get("ratio_rule") or GPU_RATIO_RULE)
        ax.axvline(limit, color=COLOURS.get(gpu.get("verdict"), "k"), linestyle=":", linewidth=1.5,
                   label=f"GPU limit {limit:.4g} us: {gpu.get('verdict')}")
    ax.set_xlabel("us per call (log scale)", fontsize=7)
    ax.set_ylabel("samples" if samples.size > 1 else "", fontsize=7)
    ax.tick_params(which="both", labelsize=7)
    ax.legend(fontsize=6, loc="best")
    scope = f", {timing['scope']}" if timing.get("scope") else ""
    ax.set_title(f"{record.get('op')} {record['case_name']} (n={timing.get('n')}{scope})\n"
                 f"{shape(record.get('params') or {})}", fontsize=8)


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


def _canvas(width: float, height: float) -> Figure:
    """An empty figure on its Agg canvas. matplotlib is imported here, by the first figure drawn (~0.45 s of CPU):
    the selection of what to plot (timed, flags, timing_groups), which the Markdown report uses too, needs none,
    and neither does a report without a figure (a compare without perf rows)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI)
    FigureCanvasAgg(fig)
    return fig


def _figure(width: float, height: float, left: float = 0.1, bottom: float = 0.5) -> tuple[Figure, Any]:
    """A figure with fixed margins in inches (constrained layout would double the draw time per figure)."""
    fig = _canvas(width, height)
    fig.subplots_adjust(left=min(0.6, (left + 0.5) / width), right=1 - 0.15 / width, bottom=bottom / height,
                        top=1 - 0.3 / height)
    return fig, fig.add_subplot()


#: Colours of the PNG palette: a plot has a handful of colours plus anti-aliasing; 8-bit palette PNGs are a third
#: the size of matplotlib's RGBA ones and look the same.
PALETTE_COLOURS = 128


#: A log axis's tick labels as matplotlib writes them ($\mathdefault{10^{-6}}$, $\mathdefault{2\times10^{-6}}$).
_MATHTEXT_LABEL = re.compile(r"\$\\mathdefault\{(.*)\}\$")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def plain_label(text: str) -> str:
    """A log tick's mathtext label as the same number in plain text: 10⁻⁶, 2×10⁻⁶, −10³ (other text unchanged)."""
    if not (match := _MATHTEXT_LABEL.fullmatch(text)):
        return text
    body = re.sub(r"\^\{(-?\d+)\}", lambda e: e[1].translate(_SUPERSCRIPT), match[1].replace("\\times", "×"))
    return "−" + body[1:] if body.startswith("-") else body


@lru_cache(maxsize=1)
def _plain_formatter() -> type:
    """A Formatter that labels the ticks its inner log formatter labels, with plain_label's text (a class made
    on first use: matplotlib is imported by the first figure)."""
    from matplotlib.ticker import Formatter

    class PlainLogLabels(Formatter):
        def __init__(self, inner: Formatter):
            self.inner = inner

        def set_axis(self, axis: Any) -> None:
            super().set_axis(axis)
            self.inner.set_axis(axis)

        def set_locs(self, locs: Any) -> None:
            super().set_locs(locs)
            self.inner.set_locs(locs)

        def __call__(self, x: float, pos: int | None = None) -> str:
            return plain_label(self.inner(x, pos))

    return PlainLogLabels


def _plain_log_labels(fig: Figure) -> None:
    """Log axes labelled in plain text instead of mathtext: the same ticks and numbers, without parsing each label
    as TeX (a quarter of a log-scale figure's drawing, more for the first figure of a process)."""
    from matplotlib.ticker import LogFormatterMathtext

    plain = _plain_formatter()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_major_formatter(), LogFormatterMathtext):
                axis.set_major_formatter(plain(axis.get_major_formatter()))
            if isinstance(axis.get_minor_formatter(), LogFormatterMathtext):
                axis.set_minor_formatter(plain(axis.get_minor_formatter()))


def _encode(fig: Figure, title: str) -> dict[str, str]:
    """The figure drawn once on its Agg canvas and its pixels quantised straight from the canvas (the pixels
    `savefig` would write, without its RGBA PNG being encoded and decoded again on the way)."""
    from PIL import Image

    _plain_log_labels(fig)
    canvas = fig.canvas
    canvas.draw()
    rgba = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    buffer = io.BytesIO()
    rgba.convert("RGB").quantize(colors=PALETTE_COLOURS).save(buffer, format="PNG", optimize=True)
    return {"title": title, "uri": "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")}
