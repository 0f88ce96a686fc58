"""The headline a reviewer signs (harness/reports/headline.py): 精度, 性能 and 内存 side by side, each 通过 / 失败 /
未判定 with its reason in Chinese, an overall line that never says a bare 通过 over a phase it did not judge, a 结论
section, the operator and harness in the environment, memory in MiB, and the job's time at the report's end."""
from __future__ import annotations

import json
import re
from pathlib import Path

from harness.cli import main
from harness.reports import write_all
from harness.reports.headline import headline, overall
from harness.reports.markdown import render_markdown
from harness.store import job
from report_records import MAIN_META, META, TWIN, main_job, perf_row, precision_row, skip_row

ROOT = Path(__file__).resolve().parents[2]
#: English the harness writes into its reasons; none of it may sit inside the report's Chinese status lines.
ENGLISH_REASONS = ("timed on", "task-book limits hold", "no baseline matches", "expected size unknown", "job: wall")


def signable(first_line: str) -> bool:
    """The cpu run's headline as issue 36 asks: precision passed, performance not judged with its reason, and no
    bare 通过 standing over the whole run."""
    return ("精度通过" in first_line and re.search(r"性能未判定：\S", first_line) is not None
            and "通过（PASS）" not in first_line)


def status_of(md: str) -> str:
    return md.split("## 状态")[1].split("## 验证摘要")[0]


def test_a_cpu_runs_headline_reads_precision_passed_and_perf_not_judged_with_why(tmp_path, capsys):
    """End to end on the cpu backend: two precision rows and the task-book 256^2 row."""
    code = main(["run", str(ROOT / "cases" / "csymm_test.csv"), "-k", "TC_L0_0001 or TC_L0_0002 or TC_PF_0001",
                 "--min-samples", "4", "--max-time", "0.05", "--warmup", "1", "--rounds", "1",
                 "--report-dir", str(tmp_path / "r"), "--history", str(tmp_path / "h.sqlite")])
    out = capsys.readouterr().out
    assert code == 0
    run_dir = next((tmp_path / "r").iterdir())
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    first = status_of(md).strip().splitlines()[0]
    assert signable(first), first
    assert "性能未判定：非 Ascend 950PR" in first and "✔" in first
    table = [line for line in status_of(md).splitlines() if line.startswith("|")]
    assert [c.strip() for c in table[0].split("|")[1:-1]] == ["精度", "性能", "内存"]  # side by side
    assert [c.strip() for c in table[2].split("|")[1:-1]][:2] == ["通过", "未判定"]
    doc = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert doc["headline"]["precision"]["verdict"] == "PASS" and doc["headline"]["perf"]["verdict"] == "NOT_JUDGED"
    assert doc["headline"]["perf"]["reason"] == "非 Ascend 950PR" and doc["headline_line"] in first
    assert {"run_id", "commit", "summary", "cases", "exit_code"} <= set(doc)  # the contract keys stay
    assert not any(word in status_of(md) for word in ENGLISH_REASONS)
    conclusion = md.split("## 结论")[1]
    assert "性能未判定" in conclusion and conclusion.strip().splitlines()[-1].startswith("作业用时：墙钟")
    environment = md.split("## 测试环境")[1].split("## 测试明细")[0]
    assert "算子库 sha256" in environment and "测试框架版本" in environment
    assert "job:" not in out  # a few seconds' run: no job line on the console
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert re.search(r'<p id="status-line">✔ 精度通过；性能未判定：非 Ascend 950PR', html)


def test_the_old_headline_is_not_signable():
    """Negative control of the check above: the headline before issue 36 passes the run over an unjudged phase."""
    assert not signable("✔ 通过（PASS） — 退出码 0：全部通过")


def test_each_phase_fails_or_stays_unjudged_on_its_own_evidence():
    passing = [precision_row("TC_L0_0001"), perf_row("TC_PF_0001")]
    head = headline(passing, "Ascend 950PR")
    assert head["perf"]["verdict"] == "NOT_JUDGED" and "baseline hardware" in head["perf"]["detail"]
    judged = perf_row("TC_PF_0001")
    judged["baseline"][0].update(verdict="FAIL", measured_mean_us=95.0, hardware="Ascend 950PR")
    head = headline([precision_row("TC_L0_0001"), judged], "Ascend 950PR")
    assert (head["precision"]["verdict"], head["perf"]["verdict"], head["memory"]["verdict"]) == \
        ("PASS", "FAIL", "PASS")
    assert overall(head) == "精度通过；性能失败：1 行未达到基线；内存通过"
    judged["baseline"][0]["verdict"] = "PASS"
    assert headline([judged], "Ascend 950PR")["perf"]["verdict"] == "PASS"
    judged["memory"].update(verdict="FAIL", workspace_bytes=8192)
    assert headline([judged], "Ascend 950PR")["memory"]["verdict"] == "FAIL"
    failing = headline([precision_row("TC_L0_0001", verdict="FAIL"), skip_row("TC_L0_0002")], "")
    assert failing["precision"]["verdict"] == "FAIL" and "首例 TC_L0_0001" in failing["precision"]["detail"]
    assert failing["perf"] == {"verdict": "NOT_JUDGED", "word": "未判定", "reason": "没有计时的性能用例", "detail": ""}
    assert headline([skip_row("TC_L0_0002")], "")["precision"]["verdict"] == "NOT_JUDGED"


def test_the_main_jobs_report_names_why_in_chinese_and_memory_in_mib():
    md = render_markdown(MAIN_META, main_job())
    first = status_of(md).strip().splitlines()[0]
    assert first.startswith("**✔ 精度通过；性能未判定：非 Ascend 950PR；内存通过**")
    assert not any(word in status_of(md) for word in ENGLISH_REASONS)
    memory = md.split("## 内存占用")[1].split("## 测试环境")[0]
    assert "24 MiB" in memory and "25165824" not in memory  # the 3 * 2^23-byte peaks
    assert f"非 Ascend 950PR，本次在 {TWIN} 上计时" in md.split("## 结论")[1]


def test_the_operator_identity_is_shown_first_when_the_run_recorded_one():
    """meta `operator` (issue 36's identity, written by the session where it exists) read defensively: present,
    its revision, build-id and runtime lead the environment; absent, operator_lib still names the library."""
    identity = {"path": "/x/libops_blas.so", "sha256": "cd" * 32, "build_id": "beef", "label": "v1.2-3-gabc",
                "revision": {"rev": "", "src": "/x", "commit": "abc" * 13 + "a", "describe": "v1.2-3-gabc",
                             "dirty": False, "detected": True},
                "symbols": {"exported": ["aclblasCsymm"], "used": ["aclblasCsymm"], "missing": []},
                "runtime": {"cann_version": "8.5.0", "soc_name": "Ascend950PR_9591", "ai_cores": 32}}
    md = render_markdown({**META, "operator": identity, "harness": {"version": "0.2.0", "commit": "f00d",
                                                                    "dirty": False}}, [precision_row("TC_L0_0001")])
    environment = md.split("## 测试环境")[1].split("## 测试明细")[0]
    rows = [line.split("|")[1].strip() for line in environment.splitlines() if line.startswith("| ")][1:]
    assert rows[:4] == ["算子修订", "算子库路径", "算子库 sha256", "算子库 build-id"]
    for text in ("v1.2-3-gabc", "cd" * 32, "CANN 版本", "8.5.0", "Ascend950PR_9591", "AI Core 数", "0.2.0（提交 f00d）"):
        assert text in environment, text
    assert "被测算子：v1.2-3-gabc，libops_blas.so" in status_of(md)
    plain = render_markdown(META, [precision_row("TC_L0_0001")]).split("## 测试环境")[1]
    assert "libtwin.so" in plain and "未记录（--operator-rev / --operator-src）" in plain


def test_the_job_line_has_no_ratio_for_a_tiny_floor_and_reaches_the_console_only_for_long_runs():
    tiny = {"wall_s": 6.0, "floor_s": 0.0006, "ratio": 9035.26, "overhead_s": 6.0, "cores": 2,
            "precision_work_s": 0.0, "perf_check_s": 0.0, "timed_s": 0.0,
            "phases": {"precision": 0.0, "both": 0.0, "perf": 5.0, "other": 1.0}, "worker_starts": 2,
            "worker_start_s": 2.0, "goldens": 3, "golden_s": 0.1, "cpu_s": 3.0, "idle_core_s": 9.0}
    assert "9035" not in job.line(tiny) and "floor < 1 s" in job.line(tiny)
    assert "9035" not in job.line(tiny, "zh") and "计算下限不足 1 s" in job.line(tiny, "zh")
    assert job.console_line(tiny) == ""
    long = {**tiny, "wall_s": 227.0, "floor_s": 80.0, "ratio": 2.84}
    assert "2.84x" in job.console_line(long) and "墙钟为其 2.84x" in job.line(long, "zh")

