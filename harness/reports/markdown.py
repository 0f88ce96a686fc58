"""report.md: the self-test report (自测报告) with the section headings of the ops-blas report templates.

The content is built once as `sections()` — headings with paragraphs, bullet lists and tables — and rendered here
as Markdown (tabulate, pipe format; wcwidth measures the Chinese cells so columns line up in a terminal) and by
html.py as HTML, so both files always say the same thing. The first section fits on one screen (status, counts,
failures, the task-book rows); the per-row detail lives in results.csv / report.json (and report.html's table),
not in thousands of Markdown lines.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tabulate import tabulate

from harness.store import job
from harness.model.record import DISPUTED, FAILING, VERDICTS, Record, summarize
from harness.reports import headline, overview, plots
from harness.reports.content import Section, Table, fmt, human_text, short_status
from harness.reports.json_csv import COLUMNS, METRICS, exit_code, results_frame, shape, write_atomic
from harness.model.meta import RunMeta

#: The status marks: U+2714 / U+2718, which DejaVu Sans draws (the emoji ✅ / ❌ have no glyph in Debian's fonts
#: short of a colour-emoji font, and rendered as empty boxes).
PASS_MARK, FAIL_MARK = "✔", "✘"
HEADINGS = ("状态", "验证摘要", "失败用例", "精度说明", "性能数据", "内存占用", "测试环境", "测试明细", "结论")
#: Failing rows the one-screen summary lists; the rest are in 失败用例.
SUMMARY_FAILURES = 10
SUMMARY_REASON_CHARS = 90
#: Per-row tables (perf, memory, failures) longer than this keep only the rows that need a look, at most this many;
#: results.csv has all.
FULL_TABLE_ROWS = 50
#: The perf table's rows at most: the rows with a limit first, then those with a flagged distribution.
PERF_TABLE_ROWS = 15

EXIT_MEANING = {
    0: "退出码 0：没有失败的用例",
    1: "退出码 1：存在 FAIL / ERROR / CRASH / TIMEOUT 用例、未经 --accept-disputed 接受的 DISPUTED 用例，或基线判定 FAIL",
    2: "退出码 2：无失败，但证据不足（无用例运行，或基线判定 INCONCLUSIVE）",
    3: "退出码 3：环境或用法错误",
}

GATE_TEXT = {
    "mixed_tolerance": "MIXED_TOLERANCE（opbase v2 / 任务书 §3.2）：逐元素 |o-g| <= atol + rtol·|g|，FP32 "
                       "rtol=2^-10、atol=2^-16；matched_ratio >= 0.99；逐元素误差上限 max(1e-2, 32·ULP(|g|))；"
                       "复数输出实部、虚部分别判定",
    "mere_mare": "MERE/MARE（opbase v1 / CSV 阈值列）：MERE < T 且 MARE < multiplier·T（T = mere_threshold，"
                 "FP32 默认 2^-13；multiplier 默认 10）；复数输出实部、虚部分别判定",
    "exact": "EXACT：逐位相等（±0 视为相等，NaN 与 NaN 相等），用于 alpha == 0 且 beta ∈ {0, 1} 的快速返回用例",
}
NONFINITE_RULE = ("非有限值规则：同一位置的 NaN 视为匹配，同号 Inf 视为匹配；NaN 对有限值、异号 Inf、"
                  "Inf 对有限值均为不匹配。")
TRUST_RULE = ("官方判定：每个精度用例只按种子门限对 CBLAS 标杆判定（与 ops-blas verify.h 相同），通过即 PASS，"
              "否则 FAIL。诊断（不改变通过与否）：FP32 标杆与 float64 真值（舍入到算子精度）比较本身不满足门限时"
              "（溢出、灾难性抵消）标记 golden_trusted = false 并附证据；官方判定失败时，若输出满足「相对舍入后真值」"
              "或「Netlib 前向误差检验」（G = |alpha|·|A|·|B| + |beta|·|C|，max |out - truth| / (2^-24·G + 2^-149) < 16；"
              "标杆可信时仅当超门限元素全部为 FP32 病态元素，即 16·2^-24·G 大于该元素门限），该行判为 DISPUTED"
              "（有争议）而非 PASS：验收按官方判定会判失败，需复核；默认退出码 1，--accept-disputed 可显式接受。")
PERF_RULE = ("判定口径：任务书基线 —— 均值 <= 限值为 PASS，95% 置信区间整体高于限值为 FAIL，跨越限值为 INCONCLUSIVE；"
             "GPU 基线 —— 比值 gpu_us / 实测 us >= 0.4 为 PASS；无匹配基线或硬件不同为 NO_REF（比值照常显示）；"
             "倍数 = 实测均值 / 可通过的最大均值（> 1 表示需加速的倍数）。")
TIMING_MODES = {"sync": "sync = 每次调用后同步（任务书 Avg time 口径）",
                "steady": "steady = 连续发射、一次同步，按单次调用折算"}
#: Threshold keys a criterion records in `precision` (harness.judge.diagnosis.Judgement.criteria).
THRESHOLD_KEYS = ("rtol", "atol", "required_ratio", "max_abs_error_limit", "mere_threshold", "mare_multiplier",
                  "eps", "atol_floor")


def write_markdown(path: Path, meta: RunMeta, records: list[Record], compare: pd.DataFrame | None = None,
                   frame: pd.DataFrame | None = None) -> Path:
    write_atomic(Path(path), render_markdown(meta, records, compare, frame))
    return Path(path)


def render_markdown(meta: RunMeta, records: list[Record], compare: pd.DataFrame | None = None,
                    frame: pd.DataFrame | None = None) -> str:
    return to_markdown(str(meta.get("run_id", "")), sections(meta, records, compare, frame))


def to_markdown(run_id: str, content: list[Section]) -> str:
    """Markdown text of already-built sections (write_all builds them once for both md and html)."""
    out = [f"# 自测报告 {run_id}".rstrip(), ""]
    for section in content:
        out += [f"## {section.heading}", ""]
        for block in section.blocks:
            if isinstance(block, Table):
                if block.title:
                    out += [f"**{block.title}**", ""]
                rows = [[_md_cell(c) for c in row] for row in block.rows]
                out += [tabulate(rows, block.headers, tablefmt="pipe", disable_numparse=True), ""]
            elif isinstance(block, list):
                out += [f"- {_md_text(item)}" for item in block] + [""]
            else:
                out += [_escape(block), ""]
    return "\n".join(out)


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?\w+;)")


def _escape(text: str) -> str:
    """What a Markdown viewer would render as HTML, escaped: a `<` opening a tag, comment or directive, and a `&`
    opening an entity. A `<` before a space or digit ("ratio < 0.99") cannot, and stays readable."""
    return _TAG_START.sub("&lt;", _ENTITY.sub("&amp;", text))


def _md_text(text: Any) -> Any:
    """Text from table cells or records: HTML escaped (a Markdown viewer renders raw HTML), line breaks flattened."""
    if not isinstance(text, str):
        return text
    return _escape(text).replace("\n", " ")


def _md_cell(cell: Any) -> Any:
    """A literal `|` (e.g. in "|o-g|") would end a pipe-table cell."""
    return _md_text(cell).replace("|", "\\|") if isinstance(cell, str) else cell


def sections(run: RunMeta, records: list[Record], compare: pd.DataFrame | None = None,
             frame: pd.DataFrame | None = None) -> list[Section]:
    """The report's nine sections, in the order of HEADINGS; `run` as the session holds it or the one reader of
    stored runs returns it (every key present: harness.store.stored.load_meta)."""
    frame = results_frame(records) if frame is None else frame
    content = [
        _status(run, records, frame), _summary(frame), _failures(frame), _precision(run, records, frame),
        _performance(run, records, frame, compare), _memory(frame), _environment(run), _details(frame),
        _conclusion(run, records),
    ]
    for section in content:
        for i, block in enumerate(section.blocks):
            if isinstance(block, Table):
                block.rows = [[human_text(c) for c in row] for row in block.rows]
            elif isinstance(block, list):
                section.blocks[i] = [human_text(item) for item in block]
    return content


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Row dicts: much faster than iterrows on a 2400-row run."""
    return frame.to_dict("records")


def _status(meta: RunMeta, records: list[Record], frame: pd.DataFrame) -> Section:
    """The one-screen summary: the headline (精度 / 性能 / 内存 side by side, each with its reason), the counts,
    the task-book rows (judged or not) and the first failures."""
    code = exit_code(records, meta)
    hardware = meta["hardware"]["name"]
    head = headline.headline(records, hardware)
    icon = f"{PASS_MARK if code == 0 else FAIL_MARK} {headline.overall(head)}"
    if meta["interrupted"]:  # Ctrl-C / SIGTERM: the report covers only the rows that finished
        icon = f"⚠️ 运行被中断，只含已完成的用例；{icon}"
    dirty = "（工作区有未提交修改）" if meta["dirty"] else ""
    s = summarize(records)
    blocks: list[str | list[str] | Table] = [
        f"**{icon}** — {EXIT_MEANING[code]}",
        Table("", list(headline.PHASES.values()), [
            [head[key]["word"] for key in headline.PHASES],
            [head[key]["reason"] for key in headline.PHASES]]),  # the detail is in 结论: the table stays narrow
        [f"用例：{s['total']} 行 —— {s['passed']} 通过，{s['failed']} 失败，{s['errors']} 错误，{s['crashed']} 崩溃，"
         f"{s['timeouts']} 超时，{s['skipped']} 跳过，{s['disputed']} 争议（通过率 "
         f"{_rate(s['passed'], s['total'] - s['skipped'])}）",
         *overview.count_lines(overview.counts(records, hardware), "zh"),
         f"被测算子：{operator_text(meta)}；运行 ID：{meta['run_id']}；后端：{meta['backend']}，设备：{meta['device']}；"
         f"测试框架提交：{meta['commit'][:12]}{dirty}；开始：{meta['started']}，结束：{meta['finished']}"]]
    taskbook = overview.taskbook_rows(records, hardware, "zh")
    if taskbook:
        blocks.append(Table(f"任务书性能用例（{len(taskbook)}）", [
            "用例", "算子", "形状", "限值(us)", "mean(us)", "口径", "CI95(us)", "n", "用例判定", "精度判定", "性能判定"], [
            [t["record"]["case_name"], t["record"]["op"], shape(t["record"].get("params") or {}),
             fmt(t["limit_us"]), fmt(t["mean_us"]), t["scope"], ci_text(t["timing"]), fmt(t["timing"].get("n")),
             t["case"], t["precision"], t["perf"]] for t in taskbook]))
    failed = frame[frame["verdict"].isin((*FAILING, DISPUTED))]
    if len(failed):
        shown = failed.head(SUMMARY_FAILURES)
        more = f"，其余 {len(failed) - len(shown)} 条见「失败用例」" if len(failed) > len(shown) else ""
        blocks.append(Table(f"未通过用例（{len(failed)}{more}）", ["用例", "结果", "原因"], [
            [r["case_name"], r["verdict"], _clip(r["reason"])] for r in _rows(shown)]))
    return Section("状态", blocks)


def operator_text(meta: RunMeta) -> str:
    """The operator under test in a few words: its revision label (meta `operator`, where the run recorded one),
    else its library file and the first digits of its sha256."""
    identity = meta.get("operator") if isinstance(meta.get("operator"), dict) else {}  # type: ignore[misc]
    library = meta.get("operator_lib") or {}
    path = identity.get("path") or library.get("path") or (meta.get("backend_info") or {}).get("library") or ""
    sha = identity.get("sha256") or library.get("sha256") or ""
    name = Path(str(path)).name if path else "未知算子库"
    parts = [str(identity["label"])] if identity.get("label") else []
    parts.append(name + (f"（sha256 {str(sha)[:12]}）" if sha else ""))
    return "，".join(parts)


def _conclusion(meta: RunMeta, records: list[Record]) -> Section:
    """结论: the three verdicts as sentences, what remains to be judged and where, and the job's time (the report's
    last line)."""
    head = headline.headline(records, meta["hardware"]["name"])
    code = exit_code(records, meta)
    items = [f"{name}{head[key]['word']}：{head[key]['reason']}"
             + (f" —— {head[key]['detail']}" if head[key]["detail"] else "") for key, name in headline.PHASES.items()]
    unjudged = [name for key, name in headline.PHASES.items() if head[key]["verdict"] == "NOT_JUDGED"]
    failed = [name for key, name in headline.PHASES.items() if head[key]["verdict"] == "FAIL"]
    if failed:
        verdict = f"验收不通过：{'、'.join(failed)}失败，见「失败用例」与对应章节。"
    elif unjudged:
        verdict = (f"本次运行没有发现失败，但{'、'.join(unjudged)}未判定，不能据此签署这{'两' if len(unjudged) == 2 else ''}"
                   f"项；需在满足上述条件的环境中复测（如在 Ascend 950PR 上以 --operator-lib 指定被测算子库运行）。")
    else:
        verdict = "精度、性能、内存均已判定并通过。"
    blocks: list[str | list[str] | Table] = [items, verdict, f"{EXIT_MEANING[code]}。"]
    line = job.line(meta.get("job"), "zh")
    if line:
        blocks.append(f"作业用时：{line}")
    return Section("结论", blocks)


def ci_text(timing: dict[str, Any]) -> str:
    """`[lo, hi]`, or why there is none: one sample has no interval (a 1024^2 row on the CPU twin)."""
    ci = timing.get("ci95_us") or [None, None]
    if ci[0] is None or ci[1] is None:
        n = timing.get("n")
        return f"—（n={n}，无区间）" if n is not None and n < 2 else "—"
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]"


def _clip(text: Any) -> str:
    text = fmt(text)
    return text if len(text) <= SUMMARY_REASON_CHARS else text[:SUMMARY_REASON_CHARS - 1] + "…"


def _summary(frame: pd.DataFrame) -> Section:
    blocks: list[str | list[str] | Table] = [
        _breakdown("按算子", "算子", frame, "op"), _breakdown("按用例族", "用例族", frame, "family")]
    perf = frame[frame["taskbook_verdict"].notna() | frame["memory_verdict"].notna()]
    if len(perf):
        kinds = {"任务书基线": "taskbook_verdict", "GPU 基线": "gpu_verdict", "内存": "memory_verdict"}
        rows = [[label, *[int((perf[col] == v).sum()) for v in ("PASS", "FAIL", "INCONCLUSIVE", "NO_REF")]]
                for label, col in kinds.items()]
        blocks.append(Table("性能 / 内存判定", ["判定", "PASS", "FAIL", "INCONCLUSIVE", "NO_REF"], rows))
    blocks.append("通过率 = 通过 / (总用例 - 跳过)；争议（DISPUTED）不计为通过，见「精度说明」。")
    return Section("验证摘要", blocks)


def _breakdown(title: str, label: str, frame: pd.DataFrame, by: str) -> Table:
    """Case verdicts per group, and apart from them how many rows were timed and how many of those judged against
    a baseline: a timed row's 通过 is its case verdict (status, precision, memory), not a performance pass."""
    counts = pd.crosstab(frame[by], frame["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    timed = frame["mean_us"].notna()
    judged = timed & (frame["taskbook_verdict"].isin(overview.JUDGED) | frame["gpu_verdict"].isin(overview.JUDGED))
    rows = []
    for key, c in counts.iterrows():
        total, mine = int(c.sum()), frame[by] == key
        perf = f"{int((timed & mine).sum())} 计时，{int((judged & mine).sum())} 判定" if (timed & mine).any() else "—"
        rows.append([key, total, *[int(c[v]) for v in VERDICTS], _rate(int(c["PASS"]), total - int(c["SKIP"])),
                     perf])
    return Table(title, [label, "总数", "通过", "争议", "失败", "错误", "崩溃", "超时", "跳过", "通过率", "性能"], rows)


def _rate(passed: int, judged: int) -> str:
    return f"{100.0 * passed / judged:.2f}%" if judged else "—"


def _details(frame: pd.DataFrame) -> Section:
    """Where the per-row detail is: a pointer, not thousands of Markdown lines."""
    if frame.empty:
        return Section("测试明细", ["本次运行没有用例。"])
    return Section("测试明细", [
        f"逐行明细（{len(frame)} 行）：results.csv（每个用例一行，{len(COLUMNS)} 列：描述、期望/实际状态、形状、"
        "门限与精度指标（复数输出分实部/虚部）、计时与离群值、任务书/GPU 基线、内存）与 report.json 的 cases（完整记录）；"
        "report.html 中同一张表可排序、筛选、搜索。"])


def _captured(captured: object) -> str:
    """What the operator printed on the row (the worker's stdout/stderr, kept in the record): size and first line."""
    if not isinstance(captured, dict) or not captured.get("bytes"):
        return ""
    first = str(captured.get("text", "")).strip().splitlines()[:1]
    return f"{captured['bytes']} B" + (f": {_clip(first[0])}" if first else "")


def _failures(frame: pd.DataFrame) -> Section:
    failed = frame[frame["verdict"].isin(FAILING)]
    blocks: list[str | list[str] | Table] = []
    if len(failed):
        shown, note = _needing_a_look(failed, failed["verdict"].notna(), "未通过用例", "未通过用例")
        blocks.append(Table(f"未通过用例（{len(failed)}）", ["用例", "算子", "结果", "期望状态", "实际状态", "原因",
                                                         "算子输出"], [
            [r["case_name"], r["op"], r["verdict"], short_status(r["expected_status"]), short_status(r["status"]), r["reason"],
             _captured(r.get("captured"))] for r in _rows(shown)]))
        blocks += [note] if note else []
    else:
        blocks.append("无失败用例。")
    skipped = frame[frame["verdict"] == "SKIP"]
    if len(skipped):
        groups = skipped.groupby(skipped["reason"].fillna(""), sort=True)["case_name"]
        blocks.append(Table(f"跳过用例（{len(skipped)}，按原因归并）", ["原因", "数量", "示例"], [
            [reason or "（未说明）", len(names), ", ".join(names.iloc[:5]) + (" …" if len(names) > 5 else "")]
            for reason, names in groups]))
    return Section("失败用例", blocks)


def _precision(meta: RunMeta, records: list[Record], frame: pd.DataFrame) -> Section:
    criteria = meta["settings"]["gates"]
    gates_seen = {op: sorted(set(rows["gate"].dropna())) for op, rows in frame.groupby("op")}
    rows, named = [], {}
    for op in sorted(set(criteria) | set(gates_seen)):
        configured = criteria.get(op)
        used = [g for g in gates_seen.get(op, []) if g != configured]  # e.g. EXACT on quick-return rows
        named.update(dict.fromkeys(([configured] if configured else []) + used))
        rows.append([op, fmt(configured) or "—", ", ".join(used), _thresholds(records, op)])
    blocks: list[str | list[str] | Table] = [
        Table("各算子判定门限", ["算子", "门限（配置）", "另有行使用", "用例阈值"], rows),
        # each gate explained once, not in every row's cell
        [*[GATE_TEXT.get(name, name) for name in named], NONFINITE_RULE, TRUST_RULE]]
    judged = frame[frame["gate"].notna()]
    if len(judged):
        blocks.append(Table("精度对比（实部 / 虚部分别）", [
            "算子", "分量", "行数", "最小 matched_ratio", "最大 max_abs_error", "最大 MERE", "最大 MARE"],
            _precision_extremes(judged)))
    blocks.append(_disputed(records, frame))
    untrusted = frame[frame["golden_trusted"].eq(False)]
    if len(untrusted):
        blocks.append(Table(f"标杆不可信的用例（{len(untrusted)}）", ["用例", "算子", "结果", "证据"], [
            [r["case_name"], r["op"], r["verdict"], fmt(r["golden_evidence"])] for r in _rows(untrusted)]))
    else:
        blocks.append("本次运行没有标杆不可信的用例。")
    return Section("精度说明", blocks)


def _disputed(records: list[Record], frame: pd.DataFrame) -> str | Table:
    """Every DISPUTED row with the official failure and the diagnosis that clears it."""
    disputed = frame[frame["verdict"] == DISPUTED]
    if not len(disputed):
        return "本次运行没有争议（DISPUTED）用例：每个精度用例都由官方门限直接判定。"
    accepted = sum(1 for r in records if r["verdict"] == DISPUTED and r.get("disputed_accepted"))
    title = f"争议用例（DISPUTED，{len(disputed)}，其中 {accepted} 条经 --accept-disputed 接受）"
    return Table(title, ["用例", "算子", "官方判定失败原因", "标杆可信", "病态元素", "前向误差比", "诊断结论"], [
        [r["case_name"], r["op"], fmt(r.get("official_reason")), fmt(r.get("golden_trusted")),
         fmt(r.get("ill_conditioned")), fmt(r.get("forward_error_ratio")), fmt(r["reason"])] for r in _rows(disputed)])


def _precision_extremes(judged: pd.DataFrame) -> list[list[Any]]:
    rows = []
    for op, group in judged.groupby("op", sort=True):
        for part in ("", "_real", "_imag"):
            cols = {m: f"{m}{part}" for m in METRICS}
            # complex rows also carry the worse component in the plain column; count them once, per component
            rows_of_part = group if part else group[group["matched_ratio_real"].map(lambda v: v is None)]
            if rows_of_part[cols["matched_ratio"]].isna().all():
                continue
            g = rows_of_part[list(cols.values())].apply(pd.to_numeric, errors="coerce")
            rows.append([op, part.lstrip("_") or "value", int(g[cols["matched_ratio"]].notna().sum()),
                         fmt(g[cols["matched_ratio"]].min()), *[fmt(g[cols[m]].max()) for m in METRICS[1:]]])
    return rows


def _thresholds(records: list[Record], op: str) -> str:
    seen: dict[str, set[str]] = {}
    for r in records:
        if r["op"] == op and r.get("precision"):
            for key in THRESHOLD_KEYS:
                if r["precision"].get(key) is not None:
                    seen.setdefault(key, set()).add(fmt(r["precision"][key]))
    return "; ".join(f"{k}={'/'.join(sorted(v))}" for k, v in seen.items())


def fmt_mapping(mapping: dict[str, Any]) -> str:
    return ", ".join(f"{k}={fmt(v)}" for k, v in mapping.items())


def _performance(meta: RunMeta, records: list[Record], frame: pd.DataFrame,
                 compare: pd.DataFrame | None) -> Section:
    timing = meta["settings"]["timing"]
    perf = frame[frame["mean_us"].notna()]
    limited = perf["taskbook_limit_us"].notna() | perf["gpu_us"].notna()
    signal = plots.unconverged_is_a_signal(records)
    flagged = {r["case_name"] for r in plots.timed(records) if plots.flags(r["timing"], signal)}
    keep = limited | perf["case_name"].isin(flagged)
    perf, perf_note = _needing_a_look(perf.assign(_first=~limited).sort_values("_first", kind="stable"), keep,
                                      "性能用例", "有基线限值或分布需复核（多峰、漂移、少数未收敛）的行", PERF_TABLE_ROWS)
    blocks: list[str | list[str] | Table] = [[
        f"计时：{TIMING_MODES.get(str(timing.get('mode')), '见每行模式')}；warm-up {fmt(timing.get('warmup'))}，"
        f"最少采样 {fmt(timing.get('min_samples'))} 次，最多 {fmt(timing.get('max_samples'))} 次，"
        f"置信区间目标 ±{fmt(timing.get('ci_rel_target'))}·mean，每行时限 {fmt(timing.get('max_time_s'))} s；"
        f"未达到最少采样或置信区间目标的行「收敛」为否。", PERF_RULE]]
    if len(perf) or perf_note:
        headers = ["用例", "算子", "形状", "模式", "n", "mean", "median", "CI95", "收敛", "GFLOP/s", "任务书限值",
                   "任务书判定", "GPU", "GPU 判定"]
        blocks.append(Table("性能（单位 us）", headers, [[
            r["case_name"], r["op"], r["shape"], fmt(r["timing_mode"]), fmt(r["n"]), fmt(r["mean_us"]),
            fmt(r["median_us"]), ci_text({"ci95_us": [r["ci95_lo_us"], r["ci95_hi_us"]], "n": r["n"]}),
            fmt(r["converged"]), *[fmt(r[k]) for k in ("gflops", "taskbook_limit_us", "taskbook_verdict", "gpu_us",
                                                        "gpu_verdict")]] for r in _rows(perf)]))
        if perf_note:
            blocks.append(perf_note)
        unsettled = Counter(why.split(":", 1)[0] for r in records
                            for why in ((r.get("timing") or {}).get("not_converged") or "").split("; ") if why)
        if unsettled:
            blocks.append(Table("未收敛的原因（上限 cap / 噪声 noise / 多峰 multimodal / 漂移 drift；逐行原因见 results.csv 与 "
                                "report.json）", ["原因", "行数"], [[why, n] for why, n in unsettled.most_common()]))
        no_ref = Counter((b.get("kind", ""), overview.no_ref_reason_zh(b, meta["hardware"]["name"]))
                         for r in records if overview.timed(r) for b in r["baseline"] if b.get("verdict") == "NO_REF")
        if no_ref:
            blocks.append(Table("NO_REF 原因", ["基线", "原因", "行数"],
                                [[kind, reason, n] for (kind, reason), n in sorted(no_ref.items())]))
    else:
        blocks.append("本次运行没有性能用例。")
    if compare is not None:
        blocks += _compare_blocks(compare)
    return Section("性能数据", blocks)


def _compare_blocks(compare: pd.DataFrame) -> list[str | list[str] | Table]:
    if compare.empty:
        return ["与基准运行对比：没有两侧都有采样的性能用例。"]
    counts = compare["verdict"].value_counts() if "verdict" in compare else pd.Series(dtype=int)
    rows = [[fmt(v.item() if hasattr(v, "item") else v) for v in row] for row in compare.itertuples(index=False)]
    return [Table("与基准运行对比", [str(c) for c in compare.columns], rows),
            "对比判定统计：" + ("，".join(f"{k} {v}" for k, v in counts.items()) or "—")]


def _memory(frame: pd.DataFrame) -> Section:
    mem = frame[frame["workspace_bytes"].notna() | frame["peak_bytes"].notna() | frame["memory_verdict"].notna()]
    if not len(mem):
        return Section("内存占用", ["本次运行没有内存数据。"])
    counts = mem["memory_verdict"].fillna("—").value_counts()
    failing = ~mem["memory_verdict"].isin(["PASS", "NO_REF"])
    shown, note = _needing_a_look(mem, failing, "有内存数据的用例", "判定不是 PASS 或 NO_REF 的行")
    blocks: list[str | list[str] | Table] = [
        Table("内存判定", ["判定", "行数", "最大峰值"], [
            [verdict, int(n), headline.mib(_number(mem.loc[mem["memory_verdict"].fillna("—") == verdict,
                                                          "peak_bytes"].max()))]
            for verdict, n in counts.items()])]
    if len(shown):
        blocks.append(Table("内存（MiB；字节数见 results.csv）", ["用例", "算子", "形状", "workspace", "峰值",
                                                                "期望 workspace", "判定"], [
            [r["case_name"], r["op"], r["shape"], *[headline.mib(_number(r[k])) for k in
                                                    ("workspace_bytes", "peak_bytes", "expected_workspace_bytes")],
             fmt(r["memory_verdict"])] for r in _rows(shown)]))
    return Section("内存占用", [*blocks, *([note] if note else []),
                                "判定：实测 workspace 高水位等于期望值为 PASS，不等为 FAIL，任一未知为 NO_REF。"])


def _number(value: Any) -> Any:
    """A frame cell as a plain number (numpy scalars unwrapped), None when missing or NaN."""
    value = value.item() if isinstance(value, np.generic) else value
    return value if isinstance(value, (int, float)) and value == value else None


def _needing_a_look(rows: pd.DataFrame, keep: pd.Series, what: str, kept: str,
                    most: int = FULL_TABLE_ROWS) -> tuple[pd.DataFrame, str]:
    """All rows when there are few; else those `keep` marks (the first `most` of them), and the sentence saying
    where the rest are."""
    if len(rows) <= most:
        return rows, ""
    shown = rows[keep.loc[rows.index]]  # in rows' order: the perf table sorts the rows, not `keep`
    first = f"，此处列前 {most} 行" if len(shown) > most else ""
    return shown.head(most), f"共 {len(rows)} 个{what}；此处只列{kept}（{len(shown)} 行{first}），全部数据见 results.csv。"


def hardware_text(hardware: Any) -> str:
    """The hardware perf baselines were judged on, and where the name came from (runtime or --hardware)."""
    if not isinstance(hardware, dict):
        return ""
    if hardware.get("override"):
        return f"{hardware['override']}（--hardware 指定；运行时报告：{hardware.get('detected') or '未知'}）"
    return f"{hardware.get('detected') or '未知'}（运行时报告）"


def host_text(host: dict[str, Any]) -> str:
    """`hostname（platform，Python x.y，N CPU）`: the host as a sentence, not a Python dict."""
    details = [str(host[k]) for k in ("platform",) if host.get(k)]
    details += [f"Python {host['python']}"] if host.get("python") else []
    details += [f"{host['cpus']} CPU"] if host.get("cpus") else []
    return f"{host.get('hostname') or '未知'}" + (f"（{'，'.join(details)}）" if details else "")


#: The operator identity's fields (meta `operator`) as the environment table names them; unknown keys keep their own.
OPERATOR_LABELS = {"label": "算子修订", "path": "算子库路径", "sha256": "算子库 sha256", "build_id": "算子库 build-id",
                   "problem": "算子库读取问题"}
REVISION_LABELS = {"rev": "算子修订（--operator-rev）", "src": "算子源码目录", "commit": "算子源码提交",
                   "describe": "算子 git describe", "dirty": "算子源码有未提交修改", "detected": "源码目录自动识别"}
RUNTIME_LABELS = {"cann_version": "CANN 版本", "driver_version": "驱动版本", "runtime_version": "运行时版本",
                  "soc_name": "SoC", "ai_cores": "AI Core 数", "vector_cores": "Vector Core 数"}


def operator_rows(meta: RunMeta) -> list[list[Any]]:
    """The operator under test first: its revision, library and sha256 (meta `operator` where the run recorded an
    identity, else `operator_lib`), then the device runtime (CANN, driver, SoC, cores) where known."""
    identity = meta.get("operator") if isinstance(meta.get("operator"), dict) else {}  # type: ignore[misc]
    library = meta.get("operator_lib") or {}
    rows = [[OPERATOR_LABELS["label"], identity.get("label") or "未记录（--operator-rev / --operator-src）"],
            [OPERATOR_LABELS["path"], identity.get("path") or library.get("path") or "未知"],
            [OPERATOR_LABELS["sha256"], identity.get("sha256") or library.get("sha256") or "未知"]]
    rows += [[OPERATOR_LABELS.get(k, f"算子.{k}"), v] for k, v in identity.items()
             if k not in ("label", "path", "sha256", "revision", "runtime", "symbols") and v not in (None, "", [], {})]
    revision = identity.get("revision") if isinstance(identity.get("revision"), dict) else {}
    rows += [[REVISION_LABELS.get(k, f"算子修订.{k}"), v] for k, v in revision.items() if v not in (None, "", [], {})]
    symbols = identity.get("symbols") if isinstance(identity.get("symbols"), dict) else {}
    rows += [[f"算子符号（{ {'exported': '导出', 'used': '使用', 'missing': '缺失'}.get(k, k) }）", ", ".join(map(str, v))]
             for k, v in symbols.items() if isinstance(v, list) and v]
    runtime = {**{k: v for k, v in (meta.get("backend_info") or {}).items() if k in RUNTIME_LABELS},
               **(identity.get("runtime") if isinstance(identity.get("runtime"), dict) else {})}
    rows += [[RUNTIME_LABELS[k], runtime[k]] for k in RUNTIME_LABELS if runtime.get(k) not in (None, "")]
    return rows


def harness_text(meta: RunMeta) -> str:
    """The judging harness: its version (meta `harness` where recorded, else the installed one) and commit."""
    recorded = meta.get("harness") if isinstance(meta.get("harness"), dict) else {}  # type: ignore[misc]
    version = recorded.get("version") or _installed_version()
    commit = recorded.get("commit") or meta["commit"]
    dirty = recorded.get("dirty") if recorded.get("dirty") is not None else meta["dirty"]
    return f"{version}（提交 {str(commit)[:12]}{'，有未提交修改' if dirty else ''}）"


def _installed_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("ops-blas-harness")
    except importlib.metadata.PackageNotFoundError:
        return "未安装"


def _environment(meta: RunMeta) -> Section:
    dirty = " (dirty)" if meta["dirty"] else ""
    rows = [*operator_rows(meta), ["测试框架版本", harness_text(meta)],
            ["运行 ID", meta["run_id"]], ["后端", meta["backend"]], ["设备", meta["device"]],
            ["硬件（性能判定）", hardware_text(meta["hardware"])], ["主机", host_text(meta["host"])],
            ["提交", f"{meta['commit']}{dirty}"], ["分支", meta["branch"]], ["开始", meta["started"]],
            ["结束", meta["finished"]]]
    for prefix, value in (("标杆 BLAS", meta["golden_blas"]), ("后端信息", meta["backend_info"]),
                          ("设置", meta["settings"])):
        rows += [[f"{prefix}.{k}", fmt_mapping(v) if isinstance(v, dict) else fmt(v)] for k, v in value.items()
                 if v not in (None, "", [], {})]  # an unset option says nothing
    return Section("测试环境", [Table("", ["项", "值"], [[k, fmt(v)] for k, v in rows]),
                                Table("输入用例表", ["路径", "sha256"], [[i["path"], i["sha256"]] for i in meta["inputs"]])])
