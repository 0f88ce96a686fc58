"""The run at a glance: the overall verdict word and the precision, performance and memory counts, computed once so
the report's first screen (report.md, report.html) and the terminal's last lines say the same thing.

A perf row that was only timed is not a performance pass: its case verdict (status, precision, memory checks) and
its perf verdict are counted apart, and a NO_REF verdict is given with its reason in words ("timed on cpu twin;
task-book limits hold on Ascend 950PR"), never folded into a pass count.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from harness.model.record import DISPUTED, Record, summarize

#: The overall verdict word per exit code (docs/architecture.md "Exit codes").
VERDICT_WORDS = {0: "PASS", 1: "FAIL", 2: "INCONCLUSIVE", 3: "ERROR"}
JUDGED = ("PASS", "FAIL", "INCONCLUSIVE")
_KIND_WORDS = {"taskbook": "task-book", "gpu": "GPU-ratio"}
NO_BASELINE_WORDS = "no baseline matches the row"


def verdict_word(code: int) -> str:
    return VERDICT_WORDS.get(code, "INTERRUPTED")


def outcome_line(summary: dict[str, int], accepted: bool) -> str:
    """The row counts of a run (record.summarize) in one line, as `harness run` and `harness report` end."""
    return (f"{summary['total']} rows: {summary['passed']} passed, {summary['failed']} failed, "
            f"{summary['errors']} errors, {summary['crashed']} crashed, {summary['timeouts']} timeouts, "
            f"{summary['skipped']} skipped, {summary['disputed']} disputed"
            + (" (accepted)" if accepted and summary["disputed"] else ""))


def timed(record: Record) -> bool:
    return bool((record.get("timing") or {}).get("n"))


def precision_verdict(record: Record) -> str:
    """The row's precision verdict apart from its case verdict: "" when no output was judged."""
    precision = record.get("precision")
    if not precision:
        return ""
    if record["verdict"] == DISPUTED:
        return DISPUTED
    return "PASS" if precision.get("passed", record["verdict"] == "PASS") else "FAIL"


def no_ref_words(entry: dict[str, Any], hardware: str) -> str:
    """Why a baseline verdict is NO_REF, in words a reviewer reads without the code."""
    from harness.perf.verdict import GPU_RULE_TARGET, same_hardware

    kind = entry.get("kind", "")
    if kind not in _KIND_WORDS:
        return NO_BASELINE_WORDS
    target = entry.get("hardware") if kind == "taskbook" else GPU_RULE_TARGET
    if entry.get("measured_mean_us") is not None and not same_hardware(target, hardware):
        return (f"timed on {hardware or 'unknown hardware'}; {_KIND_WORDS[kind]} limits hold on "
                f"{target or 'unnamed hardware'}")
    return str(entry.get("reason") or NO_BASELINE_WORDS)


NO_BASELINE_ZH = "无匹配的基线行"


def no_ref_reason_zh(entry: dict[str, Any], hardware: str) -> str:
    """no_ref_words in Chinese, for the report's Chinese lines: the harness's own reasons translated, never left in
    English inside a Chinese sentence."""
    from harness.perf.verdict import GPU_RULE_TARGET, same_hardware

    kind = entry.get("kind", "")
    if kind not in _KIND_WORDS:
        return NO_BASELINE_ZH
    target = entry.get("hardware") if kind == "taskbook" else GPU_RULE_TARGET
    rule = "任务书限值" if kind == "taskbook" else "GPU 比值规则"
    if entry.get("measured_mean_us") is not None and not same_hardware(target, hardware):
        return (f"非 {target or '未命名硬件'}，本次在 {hardware or '未知硬件'} 上计时（{rule}只适用于 "
                f"{target or '其标注的硬件'}）")
    if entry.get("measured_mean_us") is None and entry.get("scope"):
        return f"计时口径不符，本次未按 {entry['scope']} 口径计时（--timing-scope {entry['scope']}）"
    return f"{rule}未判定" + (f"（{entry['reason']}）" if entry.get("reason") else "")


def perf_verdict(record: Record, hardware: str) -> str:
    """One perf word for a row: the worst judged verdict of its baselines, else `NO_REF (why)`; "" if not timed."""
    if not timed(record):
        return ""
    entries = record.get("baseline") or []
    judged = [b["verdict"] for b in entries if b.get("verdict") in JUDGED]
    for verdict in ("FAIL", "INCONCLUSIVE", "PASS"):
        if verdict in judged:
            return verdict
    why = sorted({no_ref_words(b, hardware) for b in entries} or {NO_BASELINE_WORDS})
    return f"NO_REF ({'; '.join(why)})"


def counts(records: list[Record], hardware: str) -> dict[str, Any]:
    """Everything the first screen and the closing lines count: cases, precision, perf, memory."""
    precision = Counter(v for v in map(precision_verdict, records) if v)
    perf_rows = [r for r in records if timed(r)]
    judged = Counter(v for v in (perf_verdict(r, hardware) for r in perf_rows) if v in JUDGED)
    unjudged = [b for r in perf_rows if not any(b.get("verdict") in JUDGED for b in r.get("baseline") or [])
                for b in (r.get("baseline") or [{"kind": "none"}])[:1]]
    no_ref = Counter(no_ref_words(b, hardware) for b in unjudged)
    no_ref_zh = Counter(no_ref_reason_zh(b, hardware) for b in unjudged)
    memory = Counter((r.get("memory") or {}).get("verdict") for r in records if r.get("memory"))
    return {"cases": summarize(records), "precision": precision, "timed": len(perf_rows), "perf": judged,
            "no_ref": no_ref, "no_ref_zh": no_ref_zh, "memory": memory}


#: The words of the count lines: English for the terminal, Chinese for the report (its headings are).
WORDS = {
    "en": {"sep": ", ", "why": "; ", "rows": "{} rows", "precision": "precision: {} rows judged: ",
           "judged": "judged", "unjudged": "NOT JUDGED",
           "perf": "perf: {}: {} rows timed, {} judged against a baseline",
           "open": " (", "close": ")", "no_ref": "; NO_REF: ", "untimed": "perf: no row was timed",
           "memory": "memory: ", "memory_note": ""},
    "zh": {"sep": "，", "why": "；", "rows": "{} 行", "precision": "精度：{} 行有精度判定 —— ", "judged": "已判定",
           "unjudged": "未判定", "perf": "性能：{} —— {} 行已计时，{} 行按基线判定", "open": "（", "close": "）",
           "no_ref": "；NO_REF：", "untimed": "性能：本次运行没有计时的用例", "memory": "内存：",
           "memory_note": "（PASS/FAIL：workspace 高水位对期望值；NO_REF：无期望值）"},
}


def count_lines(c: dict[str, Any], language: str = "en") -> list[str]:
    """Precision, perf and memory counts, one line each: the closing lines of a run ("en") and the report's first
    screen ("zh"). The perf line says whether any row was judged and, for the rest, why not."""
    w = WORDS[language]

    def listing(counter: Counter, keys: tuple[str, ...]) -> str:
        return w["sep"].join(f"{counter.get(k, 0)} {k}" for k in keys)

    lines = [w["precision"].format(sum(c["precision"].values())) + listing(c["precision"], ("PASS", "FAIL", DISPUTED))]
    if c["timed"]:
        line = w["perf"].format(w["judged"] if perf_judged(c) else w["unjudged"], c["timed"], sum(c["perf"].values()))
        if perf_judged(c):
            line += w["open"] + listing(c["perf"], JUDGED) + w["close"]
        reasons = c["no_ref_zh"] if language == "zh" else c["no_ref"]
        if reasons:
            line += w["no_ref"] + w["why"].join(f"{why}{w['open']}{w['rows'].format(n)}{w['close']}"
                                                for why, n in _reasons_first(reasons))
        lines.append(line)
    else:
        lines.append(w["untimed"])
    if c["memory"]:
        lines.append(w["memory"] + listing(c["memory"], ("PASS", "FAIL", "NO_REF")) + w["memory_note"])
    return lines


def _reasons_first(no_ref: Counter) -> list[tuple[str, int]]:
    """NO_REF reasons with a limit that would have applied (wrong hardware) before rows with no baseline at all."""
    return sorted(no_ref.items(), key=lambda item: (item[0] in (NO_BASELINE_WORDS, NO_BASELINE_ZH), item[0]))


def perf_judged(c: dict[str, Any]) -> bool:
    return sum(c["perf"].values()) > 0


def taskbook_rows(records: list[Record], hardware: str, language: str = "en") -> list[dict[str, Any]]:
    """The rows a task-book limit applies to, judged or not, in table order: limit, figure, scope, CI and the
    three verdicts apart (a NO_REF's reason in `language`)."""
    words = no_ref_reason_zh if language == "zh" else no_ref_words
    rows = []
    for r in records:
        entry = next((b for b in r.get("baseline") or [] if b.get("kind") == "taskbook"
                      and b.get("value_us") is not None), None)
        if entry is None:
            continue
        timing = r.get("timing") or {}
        rows.append({"record": r, "limit_us": entry["value_us"], "mean_us": timing.get("mean_us"),
                     "scope": timing.get("scope") or "—", "timing": timing,
                     "case": r["verdict"], "precision": precision_verdict(r) or "—",
                     "perf": entry["verdict"] if entry.get("verdict") in JUDGED
                     else (f"NO_REF（{words(entry, hardware)}）" if language == "zh"
                           else f"NO_REF ({words(entry, hardware)})")})
    return rows
