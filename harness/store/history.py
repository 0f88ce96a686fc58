"""Run history: every run's provenance, every row's result record and the raw timing samples, so `compare` and
`history` work long after the report files are gone. SQLite (`reports/history.sqlite`) is the embedded default; a
`postgresql://` URL stores the same schema in a PostgreSQL server, so every host and CI job shares one history.

Only the harness's own process writes (workers run untrusted operators and hold no handle of it). Several runs and
readers may share one history: SQLite runs in WAL mode with a busy timeout and each write is its own `BEGIN
IMMEDIATE` transaction retried on contention; PostgreSQL gives each write its own transaction. Each record commits
on its own, so a run killed halfway keeps every row it finished. Rows are keyed by run, table and line (plus name):
a duplicated case name adds a row, never overwrites one. The schema is versioned in a `schema_migrations` table on
both backends; a history opened by an older harness is migrated on open. Every JSON column holds harness.model.codec's
strict JSON (older histories' bare NaN tokens are still read).
"""
from __future__ import annotations

import math
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from harness.store import operator_identity
from harness.model import codec
from harness.model.record import DISPUTED, FAILING

if TYPE_CHECKING:  # the frames' readers import pandas (~0.25 s of CPU) when they run: `harness runs` needs none
    import pandas as pd

DEFAULT_PATH = Path("reports") / "history.sqlite"
_POSTGRES = ("postgresql://", "postgres://")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    {rowid}run_id TEXT PRIMARY KEY, commit_sha TEXT, dirty INTEGER, branch TEXT, backend TEXT, device TEXT,
    host TEXT, started TEXT, finished TEXT, meta TEXT NOT NULL, summary TEXT);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL, table_name TEXT NOT NULL, case_name TEXT NOT NULL, op TEXT, line INTEGER,
    verdict TEXT, is_perf INTEGER, n INTEGER, mean_us {real}, median_us {real}, min_us {real}, converged INTEGER,
    record TEXT NOT NULL, PRIMARY KEY (run_id, table_name, line, case_name));
CREATE TABLE IF NOT EXISTS samples (
    run_id TEXT NOT NULL, table_name TEXT NOT NULL, case_name TEXT NOT NULL, samples_us TEXT NOT NULL,
    line INTEGER, PRIMARY KEY (run_id, table_name, line, case_name));
CREATE INDEX IF NOT EXISTS results_case ON results (case_name);
"""
_MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, description TEXT," \
                    " applied TEXT)"

_RETRIES = 20


def is_url(location: str | Path) -> bool:
    """Whether a --history value names a PostgreSQL server rather than an SQLite file."""
    return str(location).startswith(_POSTGRES)


def redacted(url: str) -> str:
    """A PostgreSQL URL fit for messages: the password replaced by ***."""
    return re.sub(r"^(\w+://[^:/@]+):[^@]*@", r"\1:***@", url)


class HistoryError(sqlite3.DatabaseError):
    """A PostgreSQL failure, as the sqlite3.Error every caller already handles for a history it cannot use."""


def _create_tables(db: Any) -> None:
    dialect = {"rowid": "seq BIGSERIAL, ", "real": "DOUBLE PRECISION"} if isinstance(db, _Postgres) \
        else {"rowid": "", "real": "REAL"}
    for statement in _SCHEMA.format(**dialect).split(";"):  # executescript would commit the surrounding transaction
        if statement.strip():
            db.execute(statement)


def _rekey_v0(db: Any) -> None:
    """SQLite histories before version 1 keyed rows by (run, table, case name), so a duplicated name overwrote a
    row: re-key them by line."""
    if isinstance(db, _Postgres) or db.execute("PRAGMA user_version").fetchone()[0] >= 1:
        return
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "results" not in tables:
        return
    db.execute("DROP INDEX IF EXISTS results_case")
    for name in ("results", "samples"):
        db.execute(f"ALTER TABLE {name} RENAME TO {name}_v0")
    _create_tables(db)
    db.execute("INSERT INTO results SELECT * FROM results_v0")
    db.execute("INSERT INTO samples SELECT s.run_id, s.table_name, s.case_name, s.samples_us, r.line FROM samples_v0 s"
               " JOIN results_v0 r USING (run_id, table_name, case_name)")
    db.execute("DROP TABLE results_v0")
    db.execute("DROP TABLE samples_v0")


def _v1(db: Any) -> None:
    _rekey_v0(db)
    _create_tables(db)


def _v2(db: Any) -> None:
    db.execute("ALTER TABLE results ADD COLUMN device TEXT")


def operator_columns(meta: dict) -> tuple[str, str, str]:
    """(operator revision label, its commit, the library's sha256) of a run's meta: the runs table's operator
    columns. A meta from before operator identities gives what its operator_lib said (harness.store.operator_identity
    .blank)."""
    identity = meta.get("operator")
    if not isinstance(identity, dict):
        library = meta.get("operator_lib") if isinstance(meta.get("operator_lib"), dict) else {}
        identity = operator_identity.blank(library.get("path"), library.get("sha256"))
    revision = identity.get("revision") if isinstance(identity.get("revision"), dict) else {}
    return (str(identity.get("label") or operator_identity.label(identity)), str(revision.get("commit") or ""),
            str(identity.get("sha256") or ""))


def _v3(db: Any) -> None:
    for column in ("operator_rev", "operator_commit", "operator_sha256"):
        db.execute(f"ALTER TABLE runs ADD COLUMN {column} TEXT")
    for run_id, meta in db.execute("SELECT run_id, meta FROM runs").fetchall():
        db.execute("UPDATE runs SET operator_rev = ?, operator_commit = ?, operator_sha256 = ? WHERE run_id = ?",
                   (*operator_columns(codec.loads(meta) if meta else {}), run_id))


#: (version, what it does, how): applied in order, each once, recorded in schema_migrations.
MIGRATIONS: list[tuple[int, str, Callable[[Any], None]]] = [
    (1, "runs, results (keyed by table and line) and samples", _v1),
    (2, "results.device: the device (and host) a row ran on", _v2),
    (3, "runs.operator_rev, operator_commit, operator_sha256: the operator under test, apart from the harness", _v3),
]


def _migrate(db: Any) -> None:
    """Apply the migrations this history lacks (inside the caller's write transaction)."""
    db.execute(_MIGRATIONS_TABLE)
    applied = {r[0] for r in db.execute("SELECT version FROM schema_migrations").fetchall()}
    for version, description, body in MIGRATIONS:
        if version not in applied:
            body(db)
            db.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)",
                       (version, description, time.strftime("%Y-%m-%dT%H:%M:%S%z")))
    if not isinstance(db, _Postgres):
        db.execute(f"PRAGMA user_version = {MIGRATIONS[-1][0]}")  # what harnesses before schema_migrations read


def _open_schema(db: Any) -> None:
    """Migrate on open; on PostgreSQL under a transaction-scoped lock, so two runs opening a fresh database at once
    do not both create it (SQLite's BEGIN IMMEDIATE already serialises them)."""
    if isinstance(db, _Postgres):
        db.execute("SELECT pg_advisory_xact_lock(16016)")
    _migrate(db)


class _Postgres:
    """A psycopg connection that speaks the SQLite dialect History is written in: `?` parameters, `rowid` (the
    `seq` column here), sqlite3-style execute/fetch, and failures as HistoryError. State: the connection."""

    def __init__(self, url: str):
        try:
            import psycopg
        except ImportError:
            raise HistoryError("a postgresql:// history needs psycopg (pip install 'ops-blas-harness[cluster]')") \
                from None
        self.psycopg = psycopg
        self.url = url
        try:
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise HistoryError(_first_line(exc)) from None
        self.in_transaction = False

    def execute(self, sql: str, params: tuple = ()) -> Any:
        if sql.strip().upper().startswith("PRAGMA"):
            raise AssertionError(f"SQLite-only statement on PostgreSQL: {sql}")
        if sql in ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"):
            self.in_transaction = sql == "BEGIN IMMEDIATE"
            sql = "BEGIN" if self.in_transaction else sql
        text = re.sub(r"\browid\b", "seq", sql.replace("%", "%%")).replace("?", "%s")
        try:
            return self.conn.execute(text, params)
        except self.psycopg.Error as exc:
            raise HistoryError(_first_line(exc)) from exc

    def close(self) -> None:
        self.conn.close()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class History:
    """One history (an SQLite file or a PostgreSQL URL); cheap to open, reconnects in a forked process."""

    def __init__(self, location: str | Path = DEFAULT_PATH, timeout_s: float = 30.0):
        self.url = str(location) if is_url(location) else ""
        #: What messages name: the SQLite file, or the server URL without its password.
        self.path: Any = redacted(self.url) if self.url else Path(location)
        self.timeout_s = timeout_s
        self._db: Any = None
        self._pid = -1

    @property
    def db(self) -> Any:
        """The open connection: sqlite3's, or one that speaks its dialect to PostgreSQL (_Postgres)."""
        if self._db is None or self._pid != os.getpid():
            if self.url:
                db = _Postgres(self.url)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=self.timeout_s, isolation_level=None)
                db.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
                self._retry(lambda: db.execute("PRAGMA journal_mode = WAL"))
                db.execute("PRAGMA synchronous = NORMAL")
            self._db, self._pid = db, os.getpid()
            self._write(_open_schema)
        return self._db

    def exists(self) -> bool:
        """Whether there is a history to read: the SQLite file exists, or the server answers."""
        if not self.url:
            return self.path.is_file()
        self.db
        return True

    def close(self) -> None:
        if self._db is not None and self._pid == os.getpid():
            self._db.close()
        self._db = None

    @staticmethod
    def _retry(action: Callable[[], Any]) -> Any:
        for attempt in range(_RETRIES):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == _RETRIES - 1:
                    raise
                time.sleep(min(0.01 * 2 ** attempt, 1.0))
        raise AssertionError("unreachable")

    def _write(self, body: Callable[[Any], Any]) -> None:
        """Run `body` in one BEGIN IMMEDIATE transaction (write lock up front: no deadlocked upgrades)."""
        db = self.db

        def attempt() -> None:
            try:
                db.execute("BEGIN IMMEDIATE")
                body(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        self._retry(attempt)

    # -- writing ---------------------------------------------------------------------------------------------

    def start_run(self, meta: dict) -> None:
        """Register a run (meta: run_id, commit, dirty, branch, backend, device, host, inputs, settings, started)."""
        host = meta.get("host")
        row = (meta["run_id"], meta.get("commit"), int(bool(meta.get("dirty"))), meta.get("branch"),
               meta.get("backend"), str(meta.get("device", "")),
               host if isinstance(host, str) else codec.dumps(host), meta.get("started"), codec.dumps(meta),
               *operator_columns(meta))
        self._write(lambda c: c.execute(
            "INSERT INTO runs (run_id, commit_sha, dirty, branch, backend, device, host, started, meta, operator_rev,"
            " operator_commit, operator_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row))

    def record(self, run_id: str, record: dict) -> None:
        """Store one case result record; its timing samples go to their own table. Commits at once."""
        timing = record.get("timing") or {}
        samples = timing.get("samples_us")
        slim = dict(record)
        if timing:
            slim["timing"] = {k: v for k, v in timing.items() if k != "samples_us"}
        key = (run_id, str(record.get("table", "")), record["case_name"])
        row = key + (record.get("op"), record.get("line"), record.get("verdict"), int(bool(record.get("is_perf"))),
                     timing.get("n"), timing.get("mean_us"), timing.get("median_us"), timing.get("min_us"),
                     None if not timing else int(bool(timing.get("converged"))), codec.dumps(slim),
                     None if record.get("device") is None else str(record["device"]))

        def body(c: Any) -> None:
            c.execute("INSERT INTO results (run_id, table_name, case_name, op, line, verdict, is_perf, n, mean_us,"
                      " median_us, min_us, converged, record, device)"
                      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            if samples is not None:
                c.execute("INSERT INTO samples VALUES (?, ?, ?, ?, ?)",
                          key + (codec.dumps(samples), record.get("line")))
        self._write(body)

    def finish_run(self, run_id: str, summary: dict) -> None:
        finished = summary.get("finished") or time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self._write(lambda c: c.execute("UPDATE runs SET finished = ?, summary = ? WHERE run_id = ?",
                                        (finished, codec.dumps(summary), run_id)))

    # -- reading ---------------------------------------------------------------------------------------------

    def _query(self, sql: str, params: tuple = ()) -> pd.DataFrame:
        import pandas as pd

        def query() -> pd.DataFrame:
            cursor = self.db.execute(sql, params)
            return pd.DataFrame(cursor.fetchall(), columns=[d[0] for d in cursor.description])
        return self._retry(query)

    def runs(self) -> pd.DataFrame:
        """One row per run, oldest first, with its summary counts as columns and how many rows it recorded."""
        import pandas as pd

        df = self._query(
            "SELECT r.run_id, r.commit_sha AS \"commit\", r.dirty, r.branch, r.backend, r.device, r.host, r.started,"
            " r.finished, r.summary, (SELECT COUNT(*) FROM results s WHERE s.run_id = r.run_id) AS records"
            " FROM runs r ORDER BY r.started, r.rowid")
        summaries = pd.DataFrame([codec.loads(s) if isinstance(s, str) else {} for s in df.pop("summary")],
                                 index=df.index)
        summaries = summaries.drop(columns=[c for c in summaries.columns if c in df.columns])
        df["dirty"] = df["dirty"].astype(bool)
        return pd.concat([df, summaries], axis=1)

    def recent_run_ids(self, count: int, kinds: tuple[str, ...] | None = None) -> list[str]:
        """The newest `count` run ids, newest first (started time, then insertion order), of the given kinds
        only when `kinds` is given (a run recorded before kinds existed is a "run")."""
        return self._newest("SELECT run_id, meta FROM runs ORDER BY started DESC, rowid DESC", (), count, kinds)

    def run_list(self, limit: int | None = None) -> list[dict]:
        """Newest first: id, operator revision and library sha256, kind, time, the harness's commit, dirty,
        backend, hardware (the name perf was judged on, else the device) and summary counts of each run, for
        `harness runs`."""
        rows = self._retry(lambda: self.db.execute(
            "SELECT run_id, started, commit_sha, dirty, backend, device, meta, summary, operator_rev,"
            " operator_sha256 FROM runs ORDER BY started DESC, rowid DESC" + (" LIMIT ?" if limit else ""),
            (limit,) if limit else ()).fetchall())
        out = []
        for run_id, started, commit, dirty, backend, device, meta_json, summary_json, rev, sha in rows:
            meta = codec.loads(meta_json) if meta_json else {}
            hardware = meta.get("hardware")
            out.append({"run_id": run_id, "operator_rev": rev or "", "operator_sha256": sha or "",
                        "kind": run_kind(meta), "started": started, "commit": commit,
                        "dirty": bool(dirty), "backend": backend, "device": device,
                        "hardware": hardware.get("name") if isinstance(hardware, dict) else device,
                        "summary": codec.loads(summary_json) if summary_json else None})
        return out

    def has_run(self, run_id: str) -> bool:
        return bool(self._retry(lambda: self.db.execute(
            "SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone()))

    def latest_run_of_commit(self, commit: str, kinds: tuple[str, ...] | None = None) -> str | None:
        """The newest run (of the given kinds, when given) whose commit matches `commit` (either may be
        abbreviated)."""
        ids = self._newest("SELECT run_id, meta FROM runs WHERE commit_sha != '' AND (commit_sha LIKE ? || '%'"
                           " OR ? LIKE commit_sha || '%') ORDER BY started DESC, rowid DESC", (commit, commit), 1,
                           kinds)
        return ids[0] if ids else None

    def runs_of_operator(self, ref: str = "", sha256: str = "", kinds: tuple[str, ...] | None = None) -> list[dict]:
        """Newest first, the runs (of the given kinds) whose operator is `ref` as recorded (its revision label,
        the start of its commit or of its library's sha256) or whose library's sha256 is `sha256`: each
        {"run_id", "operator_rev", "operator_commit", "operator_sha256", "exact": its label is `ref`}."""
        rows = self._retry(lambda: self.db.execute(
            "SELECT run_id, meta, operator_rev, operator_commit, operator_sha256 FROM runs"
            " ORDER BY started DESC, rowid DESC").fetchall())
        out = []
        for run_id, meta, rev, commit, sha in rows:
            rev, commit, sha = rev or "", commit or "", sha or ""
            if sha256:
                hit = sha == sha256
            else:
                prefix = len(ref) >= 7 and all(c in "0123456789abcdef" for c in ref.lower())
                hit = rev == ref or prefix and (commit.startswith(ref.lower()) or sha.startswith(ref.lower()))
            if hit and (kinds is None or run_kind(codec.loads(meta) if meta else {}) in kinds):
                out.append({"run_id": run_id, "operator_rev": rev, "operator_commit": commit,
                            "operator_sha256": sha, "exact": bool(ref) and rev == ref})
        return out

    def _newest(self, sql: str, params: tuple, count: int, kinds: tuple[str, ...] | None) -> list[str]:
        """The first `count` run ids `sql` (selecting run_id, meta) yields whose kind is in `kinds` (any kind when
        None). Filtered here, not in SQL: the meta is JSON text, read alike by SQLite and PostgreSQL."""
        def query() -> list[str]:
            out: list[str] = []
            for run_id, meta in self.db.execute(sql, params).fetchall():
                if kinds is None or run_kind(codec.loads(meta) if meta else {}) in kinds:
                    out.append(run_id)
                    if len(out) == count:
                        break
            return out
        return self._retry(query)

    def load_run(self, run_id: str) -> tuple[dict, list[dict]]:
        """(meta with summary/finished, records in table/line order with their samples put back)."""
        row = self._retry(lambda: self.db.execute(
            "SELECT meta, summary, finished FROM runs WHERE run_id = ?", (run_id,)).fetchone())
        if row is None:
            raise KeyError(f"no run {run_id!r} in {self.path}")
        meta = codec.loads(row[0])
        meta.update(summary=codec.loads(row[1]) if row[1] else None, finished=row[2])
        rows = self._retry(lambda: self.db.execute(
            "SELECT r.record, s.samples_us FROM results r LEFT JOIN samples s USING (run_id, table_name, line, case_name)"
            " WHERE r.run_id = ? ORDER BY r.table_name, r.line, r.case_name", (run_id,)).fetchall())
        records = []
        for rec_json, samples_json in rows:
            rec = codec.loads(rec_json)
            if samples_json is not None and rec.get("timing"):
                rec["timing"]["samples_us"] = codec.loads(samples_json)
            records.append(rec)
        return meta, records

    def trend(self, case_name: str | None = None, op: str | None = None) -> pd.DataFrame:
        """Per operator revision and harness commit (in order of first run) and operator: one case's figures, or
        without a case the totals.

        A commit's figures are each row's newest result over all its runs (`runs` says how many there were), so
        a small `-k` run after a full one updates its rows and hides none of the others; operators (and tables)
        are never pooled: the same case name is another row in each operator's table.
        """
        where = [(c, v) for c, v in (("r.case_name = ?", case_name), ("r.op = ?", op)) if v]
        df = self._query(
            "SELECT u.operator_rev, u.commit_sha AS \"commit\", u.dirty, u.started, u.run_id, r.table_name, r.op,"
            " r.case_name,"
            " r.verdict, r.is_perf, r.n, r.mean_us, r.median_us, r.min_us, r.converged, r.record FROM results r"
            " JOIN runs u USING (run_id)" + (" WHERE " + " AND ".join(c for c, _ in where) if where else "") +
            " ORDER BY u.started, u.rowid", tuple(v for _, v in where))
        if df.empty:
            return df.drop(columns=["record"])
        df["commit"] = df["commit"].fillna("?").astype(str).str[:12] + df["dirty"].map({1: "+dirty", 0: ""})
        df["operator_rev"] = df["operator_rev"].fillna("").astype(str).replace("", "?")
        point = ["operator_rev", "commit"]  # the operator's revision first; a new harness commit is a point too
        first = df.groupby(point, sort=False)["started"].transform("min")
        runs = df.groupby(point, sort=False)["run_id"].transform("nunique")
        df = df.assign(first_started=first, runs=runs)
        latest = df.drop_duplicates([*point, "table_name", "case_name"], keep="last")
        if case_name:
            return _case_trend(latest)
        return _commit_totals(latest)


def run_kind(meta: dict) -> str:
    """Which shell recorded a run, from its stored meta ("run" for runs recorded before kinds existed)."""
    return str(meta.get("kind") or "run")


def _precision_figure(value: Any) -> float | None:
    """Precision figures of complex outputs are {"real", "imag"}: the trend shows the worse part."""
    if isinstance(value, dict):
        parts = [v for v in value.values() if isinstance(v, (int, float))]
        return max(parts) if parts else None
    return value if isinstance(value, (int, float)) else None


def _case_trend(latest: pd.DataFrame) -> pd.DataFrame:
    """One case per operator and table, each over the commits in order, its change against its own previous."""
    import pandas as pd

    rows = []
    prev: dict[tuple[str, str], float] = {}
    for _, r in latest.sort_values(["op", "table_name"], kind="stable").iterrows():
        rec = codec.loads(r["record"])
        timing = codec.finite_or_not(rec.get("timing") or {})
        precision = codec.finite_or_not(rec.get("precision") or {})
        ci = timing.get("ci95_us") or [None, None]
        median = r["median_us"] if not pd.isna(r["median_us"]) else None
        before = prev.get((r["op"], r["table_name"]))
        change = (median / before - 1.0) if median is not None and before else None
        if median is not None:
            prev[(r["op"], r["table_name"])] = median
        rows.append({
            "op": r["op"], "table": r["table_name"], "operator_rev": r["operator_rev"], "commit": r["commit"],
            "first_started": r["first_started"],
            "runs": r["runs"],
            "case_name": r["case_name"], "verdict": r["verdict"], "n": timing.get("n"),
            "mean_us": timing.get("mean_us"), "median_us": median, "ci95_lo_us": ci[0], "ci95_hi_us": ci[1],
            "converged": timing.get("converged"), "change_vs_prev": change,
            "max_abs_error": _precision_figure(precision.get("max_abs_error")),
            "mere": _precision_figure(precision.get("mere")),
            "mare": _precision_figure(precision.get("mare")),
        })
    return pd.DataFrame(rows)


def _commit_totals(latest: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    def totals(g: pd.DataFrame) -> pd.Series:
        perf = g["median_us"][(g["is_perf"] == 1) & (g["median_us"] > 0)]
        return pd.Series({
            "first_started": g["first_started"].iloc[0], "runs": g["runs"].iloc[0], "rows": len(g),
            "passed": int((g["verdict"] == "PASS").sum()),
            "failed": int(g["verdict"].isin(FAILING).sum()),
            "disputed": int((g["verdict"] == DISPUTED).sum()),
            "perf_rows": len(perf),
            "perf_geomean_us": math.exp(perf.map(math.log).mean()) if len(perf) else None,
        })
    return latest.groupby(["operator_rev", "commit", "op"], sort=False).apply(totals, include_groups=False) \
        .reset_index()
