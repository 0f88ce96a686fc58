"""The files a run leaves, read as strictly as their readers elsewhere would: results.jsonl line by line without
NaN/Infinity tokens, the history database whole and holding the runs made."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def strict_lines(path: Path) -> list[dict]:
    """results.jsonl as a strict reader sees it: whole lines, no NaN/Infinity tokens."""
    def reject(token: str):
        raise ValueError(f"non-strict JSON token {token}")
    text = path.read_text()
    assert text == "" or text.endswith("\n")
    return [json.loads(line, parse_constant=reject) for line in text.splitlines()]


def check_history(path: Path, runs: int) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (runs,)
    return db
