"""The one reader of stored runs: `harness report`, `compare` and `merge` read a run through here, whatever holds
it: a run directory (results.jsonl, with the meta from its run.json, else its report.json), a results.jsonl or a
report.json path, a run id in the history, or a shard's report directory.

Everything read is checked against the record and meta model (harness.model.record, harness.model.meta) before a command
computes with it, so a hand-edited or damaged file (a wrong type, a bogus verdict, a missing key, a "NaN" where a
time belongs, nesting no record has) is one line, `file:line: where: what is wrong` (BadRun, exit 3), never a
traceback. The non-finite strings of harness.model.codec become floats again in a record's measured parts only
(precision, timing, baseline, memory, flops, duration_s). The one damage a crash leaves, a torn last line of
results.jsonl (no newline after it), is dropped with every whole line before it kept.
"""
from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

from harness.model import codec
from harness.model.record import PERF_VERDICTS, VERDICTS, Record, new_record
from harness.model.meta import META, RESULTS, RunMeta, RunSettings, new_settings
from harness.store import operator_identity

REPORT = "report.json"
#: Deeper than any record or meta the harness writes (params hold at most a list in a dict in a dict).
MAX_DEPTH = 16
#: The record's measured parts: where codec's "NaN" / "Infinity" / "-Infinity" strings stand for floats.
MEASURED = ("precision", "timing", "baseline", "memory", "flops", "duration_s")
_METRICS = ("matched_ratio", "max_abs_error", "mere", "mare")
_TIMING_NUMBERS = ("mean_us", "median_us", "min_us", "p90_us", "stdev_us")
#: What every timed row has, and what the reports and compare read without asking.
_TIMING_REQUIRED = ("n", "mean_us", "samples_us")


class BadRun(LookupError):
    """A stored run that cannot be read, or is not one; the message is the one line a command prints (exit 3)."""


# ------------------------------------------------------------------------------------------------- entry points

def load_meta(raw: dict[str, Any]) -> RunMeta:
    """A meta read back from disk or the history, every key present: runs recorded before a key existed (or by
    an older shell) get its neutral value here, once, instead of `.get` guesses in every reader."""
    settings = dict(raw.get("settings") or {})
    if (raw.get("summary") or {}).get("interrupted"):  # the history's meta is the start's; the end's is here
        raw = {**raw, "interrupted": True}
    if "criteria" in raw and "gates" not in settings:  # the first runs kept the gates beside the settings
        settings["gates"] = raw["criteria"]
    if "timing_mode" in settings and not settings.get("timing"):  # ... and the timing mode as a setting of its own
        settings["timing"] = {"mode": settings["timing_mode"]}
    blank_settings = new_settings(gates={}, timing={})
    library = raw.get("operator_lib") if isinstance(raw.get("operator_lib"), dict) else {}
    blank = RunMeta(kind="run", run_id="", commit="", dirty=False, branch="", backend="", device="", host={},
                    inputs=[], operator_lib={"path": None, "sha256": None},
                    operator=operator_identity.blank(library.get("path"), library.get("sha256")),
                    harness={"version": "", "commit": raw.get("commit") or "", "dirty": bool(raw.get("dirty"))},
                    settings=blank_settings, started="",
                    finished="", backend_info={}, golden_blas={}, hardware={"name": "", "detected": "",
                                                                            "override": None},
                    interrupted=False, job=None)
    meta = {**blank, **{k: v for k, v in raw.items() if k in blank and v is not None}}
    meta["settings"] = RunSettings(**{**blank_settings, **{k: v for k, v in settings.items()
                                                           if k in blank_settings}})
    meta["operator"] = {**blank["operator"], **meta["operator"]}
    meta["operator"]["label"] = meta["operator"].get("label") or operator_identity.label(meta["operator"])
    if isinstance(meta["hardware"], str):  # recorded as a bare name by early device runs
        meta["hardware"] = {"name": meta["hardware"], "detected": meta["hardware"], "override": None}
    if not isinstance(meta["host"], dict):
        meta["host"] = {"hostname": str(meta["host"])}
    return RunMeta(**meta)  # type: ignore[typeddict-item]

def read(where: str, history: Any) -> tuple[RunMeta, list[Record], Path]:
    """(meta, records, the run's report directory) of a run named by a path (read_path) or by its id in the
    history (whose reports belong in REPORT_DIR/<run_id>/ beside an SQLite history, reports/<run_id>/ else)."""
    if Path(where).exists():
        return read_path(Path(where))
    try:
        if not history.exists():
            raise BadRun(f"{where}: no such run directory or file, and no history database {history.path}")
        meta, records = read_history(history, where)
    except sqlite3.Error as exc:
        raise BadRun(f"{history.path}: {exc}") from None
    except KeyError:
        raise BadRun(f"{where}: not a run directory (with {RESULTS}), a file, nor a run id in {history.path}") \
            from None
    return meta, records, (Path("reports") if history.url else history.path.parent) / where


def read_path(path: Path) -> tuple[RunMeta, list[Record], Path]:
    """(meta, records, run directory) of a run directory, a results.jsonl path or a report.json path. A directory
    with results.jsonl is read from it (every finished row, even of a crashed or interrupted run); one with only a
    report.json from that."""
    path = Path(path)
    if path.is_file() and path.name == RESULTS:
        path = path.parent
    if path.is_dir() and (path / RESULTS).is_file():
        return _meta_beside(path), _read_results(path / RESULTS), path
    if path.is_dir() and (path / REPORT).is_file():
        path = path / REPORT
    if path.is_file():
        meta, records = _read_report(path)
        return meta, records, path.parent
    raise BadRun(f"{path}: neither a run directory (with {RESULTS} or {REPORT}) nor a {RESULTS} or {REPORT}")


def read_history(history: Any, run_id: str) -> tuple[RunMeta, list[Record]]:
    """(meta, records in table/line order) of a run in the history; KeyError when it holds no such run."""
    try:
        raw_meta, raw_records = history.load_run(run_id)
    except (ValueError, RecursionError) as exc:
        raise BadRun(f"{history.path}: run {run_id}: {_json_problem(exc)}") from None
    except sqlite3.Error as exc:
        raise BadRun(f"{history.path}: {exc}") from None
    where = f"{history.path}: run {run_id}"
    records = [record(raw, f"{where}, record {i}") for i, raw in enumerate(raw_records, 1)]
    return meta(raw_meta, where), records


def ordered(meta: RunMeta, records: list[Record]) -> list[Record]:
    """The records in the order a finished run's report lists them: by table (as the meta's inputs), then line."""
    tables = {item["path"]: i for i, item in enumerate(meta["inputs"])}
    return sorted(records, key=lambda r: (tables.get(r["table"], len(tables)), r["table"], r["line"]))


# ------------------------------------------------------------------------------------------------ files
def _meta_beside(run_dir: Path) -> RunMeta:
    for name in (META, REPORT):  # report.json: the meta keys at its top level
        path = run_dir / name
        if path.is_file():
            text = _text(path)
            return meta(_parse(text, path), str(path), text)
    raise BadRun(f"{run_dir}: {RESULTS} without {META} or {REPORT}: the run's meta is lost")


def _read_report(path: Path) -> tuple[RunMeta, list[Record]]:
    text = _text(path)
    doc = _parse(text, path)
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list) or "run_id" not in doc:
        raise BadRun(f"{path} is not a harness {REPORT} (no run_id and cases list)")
    records = [record(raw, f"{path}:1: cases[{i}]") for i, raw in enumerate(doc["cases"])]
    return meta({k: v for k, v in doc.items() if k != "cases"}, str(path), text), records


def _read_results(path: Path) -> list[Record]:
    """Every record of a results.jsonl; a torn last line (no newline after it: the write a crash cut short) is
    dropped, any other bad line is BadRun."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadRun(f"{path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = codec.loads(line.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            if number == len(lines):
                break
            column = f":{exc.colno}" if hasattr(exc, "colno") else ""  # a JSONDecodeError says where
            raise BadRun(f"{where}{column}: not a JSON record ({_json_problem(exc)})") from None
        records.append(record(raw, where))
    return records


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadRun(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise BadRun(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _parse(text: str, path: Path) -> Any:
    try:
        return codec.loads(text)
    except (ValueError, RecursionError) as exc:
        line = f":{exc.lineno}" if hasattr(exc, "lineno") else ""  # a JSONDecodeError says where
        raise BadRun(f"{path}{line}: not JSON ({_json_problem(exc)})") from None


def _json_problem(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return f"nested deeper than any run's data (at most {MAX_DEPTH} levels)"
    return getattr(exc, "msg", None) or str(exc).splitlines()[0]


# ------------------------------------------------------------------------------------------------ the models
def meta(raw: Any, where: str, text: str = "") -> RunMeta:
    """A checked meta (every key of RunMeta present, see load_meta); `text` is the file it came from, so a
    problem can name the line of its key."""
    def bad(key: str, problem: str) -> BadRun:
        line = next((f":{n}" for n, ln in enumerate(text.splitlines(), 1) if f'"{key}":' in ln), "") if text else ""
        return BadRun(f"{where}{line}: {key}: {problem}")
    if not isinstance(raw, dict):
        raise BadRun(f"{where}: a run's meta is a JSON object, not {_kind(raw)}")
    _depth(raw, where)
    if not isinstance(raw.get("run_id"), str) or not raw["run_id"]:
        raise bad("run_id", "missing or not a non-empty string")
    for key, kinds in _META_TYPES.items():
        if raw.get(key) is not None and not _is(raw[key], kinds):
            raise bad(key, f"expected {_names(kinds)}, got {_kind(raw[key])}")
    for i, item in enumerate(raw.get("inputs") or []):
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise bad("inputs", f"item {i} is not an object with a path")
    settings = raw.get("settings") or {}
    for key, kinds in _SETTINGS_TYPES.items():
        if settings.get(key) is not None and not _is(settings[key], kinds):
            raise bad("settings", f"{key}: expected {_names(kinds)}, got {_kind(settings[key])}")
    return load_meta(raw)


def record(raw: Any, where: str) -> Record:
    """A checked record: the identity keys present and typed, every other contract key filled when absent (see
    record.new_record), measured non-finite strings turned back into floats."""
    if not isinstance(raw, dict):
        raise BadRun(f"{where}: a record is a JSON object, not {_kind(raw)}")
    _depth(raw, where)
    name = raw.get("case_name")
    at = f"{where} ({name})" if isinstance(name, str) else where
    for key in ("case_name", "op", "table", "line", "verdict"):
        if key not in raw:
            raise BadRun(f"{at}: {key}: missing")
    rec = {**raw, **{k: codec.finite_or_not(raw[k]) for k in MEASURED if k in raw}}
    for key, kinds in _RECORD_TYPES.items():
        if key in rec and not _is(rec[key], kinds):
            raise BadRun(f"{at}: {key}: expected {_names(kinds)}, got {_kind(rec[key])}")
    if rec["verdict"] not in VERDICTS:
        raise BadRun(f"{at}: verdict: {rec['verdict']!r} is none of {', '.join(VERDICTS)}")
    problem = _precision(rec.get("precision")) or _timing(rec.get("timing")) or _baseline(rec.get("baseline"))
    memory = rec.get("memory") or {}
    if not problem and memory.get("verdict") is not None and memory["verdict"] not in PERF_VERDICTS:
        problem = f"memory.verdict: {memory['verdict']!r} is none of {', '.join(PERF_VERDICTS)}"
    if problem:
        raise BadRun(f"{at}: {problem}")
    return {**new_record(rec["case_name"], rec["op"], rec["table"], rec["line"], None), **rec}


def _precision(precision: dict | None) -> str:
    for key in _METRICS:
        value = (precision or {}).get(key)
        parts = value.values() if isinstance(value, dict) else [value]
        if not all(v is None or _is(v, ("number",)) for v in parts):
            return f"precision.{key}: expected a number or {{real, imag}} numbers, got {value!r:.60}"
    return ""


def _timing(timing: dict | None) -> str:
    if timing is None:
        return ""
    for key in _TIMING_REQUIRED:
        if key not in timing:
            return f"timing.{key}: missing"
    for key in ("n", "warmup"):
        if timing.get(key) is not None and not _is(timing[key], ("int",)):
            return f"timing.{key}: expected a count, got {_kind(timing[key])}"
    for key in _TIMING_NUMBERS:
        if timing.get(key) is not None and not _is(timing[key], ("number",)):
            return f"timing.{key}: expected a number, got {_kind(timing[key])}"
    samples = timing["samples_us"]
    if not isinstance(samples, list):
        return f"timing.samples_us: expected a list of times, got {_kind(samples)}"
    for i, s in enumerate(samples):
        if not _is(s, ("number",)) or not math.isfinite(s) or s < 0:
            return f"timing.samples_us[{i}]: {s!r:.40} is not a time (a finite number of us >= 0)"
    ci = timing.get("ci95_us")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2 and all(_is(x, ("number",)) for x in ci)):
        return f"timing.ci95_us: expected [lo, hi] numbers, got {ci!r:.60}"
    rounds = timing.get("rounds")
    if rounds is not None and not isinstance(rounds, list):
        return f"timing.rounds: expected a list, got {_kind(rounds)}"
    for i, r in enumerate(rounds or []):
        if not isinstance(r, dict) or (r.get("p10_us") is not None and not _is(r["p10_us"], ("number",))):
            return f"timing.rounds[{i}]: expected an object with a number p10_us, got {r!r:.60}"
    return ""


def _baseline(baseline: list | None) -> str:
    for i, b in enumerate(baseline or []):
        if not isinstance(b, dict) or b.get("verdict") not in PERF_VERDICTS:
            verdict = b.get("verdict") if isinstance(b, dict) else b
            return f"baseline[{i}].verdict: {verdict!r:.40} is none of {', '.join(PERF_VERDICTS)}"
    return ""


def _depth(value: Any, where: str) -> None:
    """BadRun when value nests deeper than MAX_DEPTH (iteratively: a deep value must not blow the stack here)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadRun(f"{where}: nested deeper than any run's data (at most {MAX_DEPTH} levels)")
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


_RECORD_TYPES = {
    "case_name": ("str",), "op": ("str",), "table": ("str",), "line": ("int",), "verdict": ("str",),
    "description": ("str",), "expected_status": ("int", "none"), "status": ("int", "none"), "reason": ("str",),
    "is_perf": ("bool",), "params": ("dict",), "flops": ("number",), "duration_s": ("number",),
    "precision": ("dict", "none"), "timing": ("dict", "none"), "baseline": ("list",), "memory": ("dict", "none"),
    "disputed_accepted": ("bool",),
}
_META_TYPES = {
    "kind": ("str",), "commit": ("str",), "dirty": ("bool",), "branch": ("str",), "backend": ("str",),
    "device": ("str",), "host": ("dict", "str"), "inputs": ("list",), "operator_lib": ("dict",),
    "operator": ("dict",), "harness": ("dict",), "settings": ("dict",), "started": ("str",), "finished": ("str",),
    "backend_info": ("dict",),
    "golden_blas": ("dict",), "hardware": ("dict", "str"), "interrupted": ("bool",), "summary": ("dict",),
}
_SETTINGS_TYPES = {
    "select": ("str",), "workers": ("int",), "timeout_s": ("number",), "poison": ("bool",), "timing": ("dict",),
    "accept_disputed": ("bool",), "gates": ("dict",), "ab": ("dict",), "devices": ("list",), "cluster": ("str",),
    "shard": ("str",), "mutant": ("dict",),
}
_PYTHON = {"str": str, "dict": dict, "list": list, "bool": bool}
_NAMES = {"str": "a string", "int": "an integer", "number": "a number", "bool": "true/false", "dict": "an object",
          "list": "a list", "none": "null"}


def _is(value: Any, kinds: tuple[str, ...]) -> bool:
    for kind in kinds:
        if kind == "none" and value is None:
            return True
        if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if kind in _PYTHON and isinstance(value, _PYTHON[kind]):
            return True
    return False


def _names(kinds: tuple[str, ...]) -> str:
    return " or ".join(_NAMES[k] for k in kinds)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: f"the string {value!r:.40}", bool: f"{value}".lower(),
            type(None): "null"}.get(type(value), f"the number {value!r:.40}")
