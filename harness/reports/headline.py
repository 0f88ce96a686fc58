"""The headline a reviewer signs: three verdicts side by side — 精度, 性能, 内存 — each 通过 / 失败 / 未判定 with its
reason in Chinese, and one overall line that says what was and was not judged ("精度通过；性能未判定：非 Ascend 950PR").

A run that passed every row it ran can still leave a phase unjudged (perf rows timed on the CPU twin, whose
task-book limits hold on an Ascend 950PR; workspace with no expected size): the exit code says nothing failed, the
headline says what that covers. report.json carries the same three as `headline` (PASS / FAIL / NOT_JUDGED, the
reason and its detail), so a script reads what the page says.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from harness.model.record import DISPUTED, FAILING, Record, fails_run
from harness.reports import overview

#: The verdict tokens of report.json `headline` and their words in the report.
WORDS = {"PASS": "通过", "FAIL": "失败", "NOT_JUDGED": "未判定"}
PHASES = {"precision": "精度", "perf": "性能", "memory": "内存"}
#: Examples named in a reason ("首例 TC_L0_0002 等").
EXAMPLES = 3
MIB = float(1 << 20)


def phase(verdict: str, reason: str, detail: str = "") -> dict[str, str]:
    """One phase of the headline: the verdict token, the short reason (the overall line's) and the detail."""
    return {"verdict": verdict, "word": WORDS[verdict], "reason": reason, "detail": detail}


def headline(records: list[Record], hardware: str) -> dict[str, dict[str, str]]:
    """report.json `headline`: {precision, perf, memory: {verdict, word, reason, detail}}."""
    return {"precision": precision(records), "perf": perf(records, hardware), "memory": memory(records)}


def overall(head: dict[str, dict[str, str]]) -> str:
    """`精度通过；性能未判定：非 Ascend 950PR；内存未判定：无期望 workspace`: a phase that passed needs no reason, one
    that did not says why."""
    parts = []
    for key, name in PHASES.items():
        p = head[key]
        parts.append(f"{name}{p['word']}" + (f"：{p['reason']}" if p["verdict"] != "PASS" and p["reason"] else ""))
    return "；".join(parts)


def _named(rows: list[Record]) -> str:
    names = [str(r["case_name"]) for r in rows[:EXAMPLES]]
    return "、".join(names) + (" 等" if len(rows) > EXAMPLES else "")


def precision(records: list[Record]) -> dict[str, str]:
    """Every row that ran, judged on status, output and untouched memory: failed rows fail it, a run with no row
    that ran leaves it unjudged."""
    ran = [r for r in records if r["verdict"] != "SKIP"]
    skipped = len(records) - len(ran)
    skip_note = f"；{skipped} 行跳过" if skipped else ""
    if not ran:
        return phase("NOT_JUDGED", f"全部 {skipped} 行跳过" if skipped else "没有运行的用例")
    bad = [r for r in ran if fails_run(r)]
    if bad:
        kinds = Counter(r["verdict"] for r in bad)
        listing = "，".join(f"{v} {kinds[v]}" for v in (*FAILING, DISPUTED) if kinds.get(v))
        return phase("FAIL", f"{len(bad)} / {len(ran)} 行未通过",
                     f"{listing}；首例 {_named(bad)}{skip_note}")
    accepted = sum(1 for r in ran if r["verdict"] == DISPUTED)
    judged = sum(1 for r in ran if r.get("precision"))
    detail = f"{len(ran)} 行状态与输出检查全部通过，其中 {judged} 行有精度判定"
    detail += f"（{accepted} 行 DISPUTED 经 --accept-disputed 接受）" if accepted else ""
    return phase("PASS", f"{len(ran)} 行全部通过", detail + skip_note)


def perf(records: list[Record], hardware: str) -> dict[str, str]:
    """The timed rows against their baselines: any FAIL fails it; none judged (wrong hardware, no baseline) or an
    interval straddling a limit leaves it unjudged, with the reasons counted; judged rows all passing pass it,
    and rows left unjudged beside them are said."""
    timed = [r for r in records if overview.timed(r)]
    if not timed:
        return phase("NOT_JUDGED", "没有计时的性能用例")
    verdicts = {id(r): overview.perf_verdict(r, hardware) for r in timed}
    failed = [r for r in timed if verdicts[id(r)] == "FAIL"]
    unsure = [r for r in timed if verdicts[id(r)] == "INCONCLUSIVE"]
    passed = [r for r in timed if verdicts[id(r)] == "PASS"]
    unjudged = Counter(overview.no_ref_reason_zh(b, hardware) for r in timed if verdicts[id(r)] not in overview.JUDGED
                       for b in (r.get("baseline") or [{"kind": "none"}])[:1])
    why = "；".join(f"{reason}（{n} 行）" for reason, n in
                   sorted(unjudged.items(), key=lambda item: (item[0] == overview.NO_BASELINE_ZH, -item[1], item[0])))
    tail = f"；未判定 {sum(unjudged.values())} 行 —— {why}" if unjudged else ""
    if failed:
        return phase("FAIL", f"{len(failed)} 行未达到基线", f"首例 {_named(failed)}；{len(timed)} 行已计时{tail}")
    if unsure:
        return phase("NOT_JUDGED", f"{len(unsure)} 行置信区间跨越限值（INCONCLUSIVE）",
                     f"首例 {_named(unsure)}；{len(passed)} 行通过{tail}")
    if not passed:
        short = min(unjudged, key=lambda reason: (reason == overview.NO_BASELINE_ZH, -unjudged[reason]))
        return phase("NOT_JUDGED", short.split("，")[0], f"{len(timed)} 行已计时，0 行按基线判定 —— {why}")
    return phase("PASS", f"{len(passed)} 行按基线判定通过", f"{len(timed)} 行已计时{tail}")


def memory(records: list[Record]) -> dict[str, str]:
    """Workspace high-water against the operator's expected size: any mismatch fails it; no expected size leaves
    it unjudged; the largest peak in MiB beside."""
    rows = [r for r in records if r.get("memory")]
    if not rows:
        return phase("NOT_JUDGED", "没有内存数据")
    peaks = [r["memory"].get("peak_bytes") for r in rows if isinstance(r["memory"].get("peak_bytes"), (int, float))]
    peak = f"；最大峰值 {mib(max(peaks))}" if peaks else ""
    counts = Counter(r["memory"].get("verdict") for r in rows)
    failed = [r for r in rows if r["memory"].get("verdict") == "FAIL"]
    no_ref = counts.get("NO_REF", 0)
    if failed:
        return phase("FAIL", f"{len(failed)} 行 workspace 高水位不等于期望值", f"首例 {_named(failed)}{peak}")
    if not counts.get("PASS"):
        return phase("NOT_JUDGED", _memory_unknown(rows), f"{no_ref} 行 NO_REF{peak}")
    note = f"；{no_ref} 行 NO_REF（无期望值或未测得）" if no_ref else ""
    return phase("PASS", f"{counts['PASS']} 行 workspace 高水位等于期望值", f"{counts['PASS']} 行通过{note}{peak}")


def _memory_unknown(rows: list[Record]) -> str:
    """Why no row's workspace was judged: the operator's expected size unknown, the workspace unmeasured, or both."""
    no_expected = any(r["memory"].get("expected_workspace_bytes") is None for r in rows)
    unmeasured = any(r["memory"].get("workspace_bytes") is None for r in rows)
    if no_expected and unmeasured:
        return "无期望 workspace 值，且未测得 workspace"
    return "无期望 workspace 值" if no_expected else "未测得 workspace"


def mib(value: Any) -> str:
    """Bytes as MiB for people (`12.5 MiB`); '' when unknown."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return ""
    mebibytes = value / MIB
    return f"{mebibytes:.0f} MiB" if mebibytes >= 1000 else f"{mebibytes:.4g} MiB"
