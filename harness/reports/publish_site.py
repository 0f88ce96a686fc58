"""The site `harness publish` writes: one folder, no network. index.html lists every step (the commit that made it,
its change, CI and confidence), every series and every run; series/<slug>.html holds a series' trend (a PNG data
URI: commit figures, each run's figure, the segments between steps, the task-book limit where the row has one) and
its commits with links to their runs; runs/<slug>.html lists a run's perf rows, linking the series and the runs
before and after it on the same backend and hardware."""
from __future__ import annotations

import math
import shutil
import time
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd

from harness.model.settings import MIN_EFFECT, STEP_ALPHA, STEP_THRESHOLD
from harness.reports.publish import commit_label, points, run_slug, series_table
from harness.reports.json_csv import write_atomic
from harness.reports.plots import _encode, _figure

_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                          autoescape=True, trim_blocks=True, lstrip_blocks=True)


#: The file that marks a folder as a site of harness publish, which a later publish may replace.
MARKER = ".harness-publish"
#: Commit labels under the trend plot at most (every n-th commit past this).
MAX_TICKS = 40


class NotASite(ValueError):
    """--out names a folder with other files in it: publish never deletes what it did not write."""


def _us(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.4g}"


def _pct(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:+.1%}"


def confidence_text(confidence: float) -> str:
    return f"{confidence:.1%}" if confidence < 0.999 else ">99.9%"


def _step_view(series: dict, step: dict) -> dict:
    return {**{k: series[k] for k in ("case_name", "op", "backend", "hardware", "slug")}, "label": step["label"],
            "before": step["before"], "change": _pct(step["change"]),
            "ci": f"[{_pct(step['ci_lo'])}, {_pct(step['ci_hi'])}]", "confidence": confidence_text(step["confidence"]),
            "direction": "up" if step["change"] > 0 else "down"}


def trend_plot(series: dict) -> dict[str, str]:
    commits = series["commits"]
    x = np.arange(len(commits))
    fig, ax = _figure(min(16.0, max(6.0, 0.35 * len(commits) + 3)), 3.6, left=0.5, bottom=1.1)
    for i, figures in enumerate(commits["run_figures_us"]):
        ax.plot([i] * len(figures), figures, "o", color="#90a4ae", markersize=3, zorder=1)
    ax.plot(x, commits["figure_us"], "-o", color="#1565c0", markersize=4, label="commit figure (median of runs)",
            zorder=2)
    bounds = [0] + [s["index"] for s in series["steps"]] + [len(commits)]
    for lo, hi in zip(bounds, bounds[1:]):
        level = float(np.median(commits["figure_us"].iloc[lo:hi]))
        ax.hlines(level, lo - 0.3, hi - 0.7, colors="#424242", linewidth=1.5, zorder=3)
    for step in series["steps"]:
        colour = "#c62828" if step["change"] > 0 else "#2e7d32"
        ax.axvline(step["index"] - 0.5, color=colour, linestyle=":", linewidth=1.2)
        ax.annotate(f"{_pct(step['change'])} at {step['label'][:8]} (confidence {confidence_text(step['confidence'])})",
                    (step["index"] - 0.45, 1.0), xycoords=("data", "axes fraction"), va="top", fontsize=7,
                    color=colour)
    if series["limit_us"]:
        ax.axhline(series["limit_us"], color="#c62828", linestyle="--", linewidth=1,
                   label=f"task-book limit {series['limit_us']:.4g} us")
    every = math.ceil(len(commits) / MAX_TICKS)
    ax.set_xticks(x[::every], [label[:8] for label in commits["label"]][::every], rotation=60, fontsize=7)
    ax.set_ylabel("us (p10 of rounds)", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title(f"{series['case_name']}: {series['backend']} on {series['hardware']}", fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    return _encode(fig, f"{series['case_name']} across {len(commits)} commits")


def _run_links(df: pd.DataFrame) -> dict[str, dict]:
    """run id -> its view, with the previous and next run on the same backend and hardware."""
    runs = df.drop_duplicates("run_id")[["run_id", "commit", "dirty", "started", "backend", "hardware", "kind"]]
    views = {r.run_id: {"run_id": r.run_id, "slug": run_slug(r.run_id), "label": commit_label(r.commit, r.dirty),
                        "started": r.started, "backend": r.backend, "hardware": r.hardware, "kind": r.kind}
             for r in runs.itertuples()}
    for _, g in runs.groupby(["backend", "hardware"], sort=False):
        ids = g["run_id"].tolist()
        for i, run_id in enumerate(ids):
            views[run_id]["previous"] = views[ids[i - 1]] if i else None
            views[run_id]["following"] = views[ids[i + 1]] if i + 1 < len(ids) else None
    return views


def build_site(history: Any, out: Path, select: str | None = None, threshold: float = STEP_THRESHOLD,
               alpha: float = STEP_ALPHA, min_effect: float = MIN_EFFECT) -> dict:
    """Write the site into `out` (replaced); returns counts: runs, series, steps, and the steps themselves."""
    df = points(history, select)
    rule = (f"A commit's figure is the median over its runs of each run's per-round p10. A step is a split that "
            f"binary segmentation finds, tested on the rounds either side (Hodges-Lehmann shift, Mann-Whitney): "
            f"change at least {threshold:.0%}, whole 95% CI beyond +-{min_effect:.0%}, Benjamini-Hochberg q < "
            f"{alpha:g} over every split tested; confidence = 1 - q.")
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise NotASite(f"--out {out}: a folder that harness publish did not make (no {MARKER}); it replaces only "
                           "its own sites: choose another --out or empty it")
        shutil.rmtree(out)
    (out / "series").mkdir(parents=True)
    (out / "runs").mkdir()
    (out / MARKER).write_text("made by harness publish; the next publish into this folder replaces it\n")
    if df.empty:
        write_atomic(out / "index.html", _ENV.get_template("publish_index.html.j2").render(
            root="", rule=rule, history=history.path, run_count=0, series=[], steps=[], step_count=0, up_count=0,
            runs=[], published=time.strftime("%Y-%m-%d %H:%M:%S %Z")))
        return {"runs": 0, "series": 0, "steps": []}
    df["kind"] = df["run_id"].map({r["run_id"]: r["kind"] for r in history.run_list()})
    table = series_table(df, threshold, alpha, min_effect)
    runs = _run_links(df)
    steps = [_step_view(s, st) for s in table for st in s["steps"]]
    index_rows = []
    slug_of = {}
    for s in table:
        commits = s["commits"]
        first, latest = commits["figure_us"].iloc[0], commits["figure_us"].iloc[-1]
        view = {**{k: s[k] for k in ("case_name", "op", "table", "backend", "hardware", "slug", "limit_hardware",
                                     "limit_us")},
                "commit_count": len(commits), "first": _us(first), "latest": _us(latest),
                "change": _pct(latest / first - 1) if first else "", "limit": _us(s["limit_us"]),
                "step_text": ", ".join(f"{_pct(st['change'])} at {st['label'][:8]}" for st in s["steps"])}
        index_rows.append(view)
        slug_of[tuple(s[k] for k in ("backend", "hardware", "table", "op", "case_name"))] = s["slug"]
        commit_rows = []
        for i, c in enumerate(commits.itertuples()):
            before = commits["figure_us"].iloc[i - 1] if i else None
            commit_rows.append({"label": c.label, "figure": _us(c.figure_us),
                                "change": _pct(c.figure_us / before - 1) if before else "",
                                "runs": [{**runs[r], "figure": _us(f)} for r, f in zip(c.runs, c.run_figures_us)]})
        write_atomic(out / "series" / f"{s['slug']}.html", _ENV.get_template("publish_series.html.j2").render(
            root="../", s=view, rule=rule, plot=trend_plot(s), commits=commit_rows,
            steps=[_step_view(s, st) for st in s["steps"]]))
    for run_id, run in runs.items():
        rows = [{"case_name": p.case_name, "op": p.op, "verdict": p.verdict, "figure": _us(p.figure_us),
                 "rounds": len(p.units), "slug": slug_of[(p.backend, p.hardware, p.table, p.op, p.case_name)]}
                for p in df[df["run_id"] == run_id].itertuples()]
        write_atomic(out / "runs" / f"{run['slug']}.html", _ENV.get_template("publish_run.html.j2").render(
            root="../", run=run, rows=rows, previous=run["previous"], following=run["following"]))
    write_atomic(out / "index.html", _ENV.get_template("publish_index.html.j2").render(
        root="", rule=rule, history=history.path, run_count=len(runs), series=index_rows, steps=steps,
        step_count=len(steps), up_count=sum(s["direction"] == "up" for s in steps), runs=list(runs.values()),
        published=time.strftime("%Y-%m-%d %H:%M:%S %Z")))
    return {"runs": len(runs), "series": len(table),
            "steps": [{**st, "series": s["case_name"], "backend": s["backend"], "hardware": s["hardware"]}
                      for s in table for st in s["steps"]]}
