"""`harness run --junitxml PATH`: the run as JUnit XML, the format CI systems (Jenkins, GitLab, GitHub annotations)
read: one testsuite per case table, one testcase per row, named as pytest names the same row
(`classname` = the table's file stem, `name` = the case name), with `file` and `line` pointing at the CSV row.

A FAIL or an unaccepted DISPUTED row is a <failure>, ERROR / CRASH / TIMEOUT an <error> (the harness or the
process broke, not the operator's numbers), SKIP a <skipped>, each with the reason as its message. A perf verdict
FAIL against a baseline fails the testcase too (it fails the run); INCONCLUSIVE and NO_REF stay properties, so a
row that was only timed never reads as a performance pass or a failure. Text that XML 1.0 cannot carry (control
characters an operator's message may hold) is written as \\xNN.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from harness.model.record import DISPUTED, Record
from harness.reports.json_csv import write_atomic
from harness.reports.overview import perf_verdict, precision_verdict

_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_ERRORS = ("ERROR", "CRASH", "TIMEOUT")


def _text(value: Any) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def testcase(record: Record, hardware: str) -> ET.Element:
    """One row as a <testcase>, its outcome as the child element CI systems count."""
    table = Path(str(record.get("table") or ""))
    case = ET.Element("testcase", {"classname": _text(table.stem), "name": _text(record["case_name"]),
                                   "time": f"{float(record.get('duration_s') or 0.0):.3f}",
                                   "file": _text(table), "line": str(record.get("line") or 0)})
    verdict, reason = record["verdict"], _text(record.get("reason") or "")
    perf = perf_verdict(record, hardware)
    properties = ET.SubElement(case, "properties")
    for name, value in (("verdict", verdict), ("op", record.get("op", "")),
                        ("precision", precision_verdict(record)), ("perf", perf)):
        if value:
            ET.SubElement(properties, "property", {"name": name, "value": _text(value)})
    if verdict in _ERRORS:
        ET.SubElement(case, "error", {"type": verdict, "message": reason}).text = reason
    elif verdict == "FAIL" or (verdict == DISPUTED and not record.get("disputed_accepted")):
        ET.SubElement(case, "failure", {"type": verdict, "message": reason}).text = reason
    elif verdict == "SKIP":
        ET.SubElement(case, "skipped", {"message": reason})
    elif perf == "FAIL":
        why = "; ".join(_text(b.get("reason") or f"{b.get('kind')} limit {b.get('value_us')} us")
                        for b in record.get("baseline") or [] if b.get("verdict") == "FAIL")
        ET.SubElement(case, "failure", {"type": "PERF_FAIL", "message": why}).text = why
    return case


def junit_document(meta: dict[str, Any], records: list[Record]) -> ET.ElementTree:
    hardware = str((meta.get("hardware") or {}).get("name", ""))
    host = meta["host"] if isinstance(meta.get("host"), dict) else {}
    root = ET.Element("testsuites", {"name": f"harness run {_text(meta.get('run_id', ''))}"})
    tables: dict[str, list[Record]] = {}
    for r in records:
        tables.setdefault(str(r.get("table") or ""), []).append(r)
    for table, rows in tables.items():
        cases = [testcase(r, hardware) for r in rows]
        suite = ET.SubElement(root, "testsuite", {
            "name": _text(Path(table).name), "tests": str(len(cases)),
            "failures": str(sum(c.find("failure") is not None for c in cases)),
            "errors": str(sum(c.find("error") is not None for c in cases)),
            "skipped": str(sum(c.find("skipped") is not None for c in cases)),
            "time": f"{sum(float(r.get('duration_s') or 0.0) for r in rows):.3f}",
            "timestamp": _text(meta.get("started", "")), "hostname": _text(host.get("hostname", ""))})
        suite.extend(cases)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, 0)) for s in root)))
    return ET.ElementTree(root)


def write_junit(path: Path, meta: dict[str, Any], records: list[Record]) -> Path:
    """Write the JUnit XML atomically (a CI step reading it never sees half a file)."""
    tree = junit_document(meta, records)
    ET.indent(tree)
    write_atomic(Path(path), '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(tree.getroot(), "unicode"))
    return Path(path)
