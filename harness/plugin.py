"""pytest plugin: every row of an ops-blas case table is one test item (`cases/csymm_test.csv::TC_L0_0001`).

`pytest cases/csymm_test.csv -n 2 -k TC_L0` works like `harness run` on the same rows, through the same isolated
worker processes (harness.run.runner, harness.run.worker): the operator library is never loaded into pytest's process, so
a crashing, hanging or hostile operator is that item's CRASH or TIMEOUT failure and the session goes on. What pytest
adds is its own selection, reporting and xdist distribution. Perf rows are checked like precision rows here; with
`--harness-timing` they are also timed (one round, `harness run`'s timing defaults for the backend) and the session
ends with a perf table like pytest-benchmark's (min, max, mean, stddev, median, CI, GFLOP/s per row); judging
them against baselines belongs to `harness run`, which times rows alone and in rounds.

The ids pytest prints are node ids that can be pasted back (`pytest 'cases/csymm_test.csv::TC_L0_0001'`), and
skips, failures and errors point at the row's line in the CSV, so pytest's own habits (`--lf`, `--ff`, `-x`,
`--maxfail`, `--junitxml`, `-k`, xdist) work on tables as on Python tests.

With `--harness-report-dir DIR` the run is also a harness session (harness.flows.session): every row's record goes to
DIR/<run_id>/results.jsonl and the history as it finishes, and the reports are written at the end, exactly as
`harness run` writes them. Under xdist the records travel to the controller in the test reports' user
properties, and only the controller writes.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness.model.settings import Settings, default_timeout_s, from_options

if TYPE_CHECKING:  # the engine (numpy, scipy, the reports) loads only in a session that collects a table
    from harness.model.case import Case

#: The user-property names a row's record and a perf row's timing summary travel under (worker -> controller).
RECORD_PROPERTY = "harness_record"
TIMING_PROPERTY = "harness_timing"
#: This pytest process's run settings (harness.model.settings), built from its options at configure time, and what the
#: backend check said: None when the backend is usable, else why not.
SETTINGS = pytest.StashKey[Settings]()
UNAVAILABLE = pytest.StashKey["str | None"]()
#: The perf table's timing columns (the timing record's keys, in us).
TIMING_COLUMNS = (("min", "min_us"), ("max", "max_us"), ("mean", "mean_us"), ("stddev", "stdev_us"),
                  ("median", "median_us"))


def pytest_addoption(parser: pytest.Parser) -> None:
    from harness.model import operators as ops

    group = parser.getgroup("harness", "ops-blas case tables")
    group.addoption("--harness-backend", default="cpu", help="backend for case-table items (cpu, npu, cuda)")
    group.addoption("--harness-operator-lib", default=None, help="library exporting the ops-blas C ABI")
    group.addoption("--harness-no-poison", action="store_true", help="do not poison never-read regions")
    group.addoption("--harness-timeout", type=float, default=None,
                    help="per-row limit in seconds; past it the row's worker is killed (TIMEOUT) (default: "
                         f"`harness run`'s, {default_timeout_s('cpu'):g} on cpu, "
                         f"{default_timeout_s('ascend-cpu'):g} on ascend-cpu)")
    group.addoption("--harness-report-dir", default=None, metavar="DIR",
                    help="record the rows as a harness run: results.jsonl, history and reports in DIR/<run_id>/")
    group.addoption("--harness-history", default="reports/history.sqlite", help="SQLite run history (with "
                    "--harness-report-dir)")
    group.addoption("--harness-timing", action="store_true",
                    help="also time perf rows (one round each) and end with a perf table, like pytest-benchmark")
    group.addoption("--harness-operator", default=None, metavar="NAME", choices=ops.names(),
                    help="read every case table as this operator's (`harness run --operator`)")
    group.addoption("--harness-lenient", action="store_true",
                    help="run cells the harness reads otherwise than the ops-blas frame (`harness run --lenient`)")


def pytest_collect_file(parent: pytest.Collector, file_path: Path):
    """Every `*_test.csv` found, and any `.csv` named on the command line (`pytest my_csymm.csv`)."""
    if file_path.name.endswith("_test.csv") or (file_path.suffix == ".csv" and parent.session.isinitpath(file_path)):
        return CaseTable.from_parent(parent, path=file_path)
    return None


class CaseTable(pytest.File):
    def collect(self):
        """The table's rows, once `harness run`'s checks pass (harness.tables.preflight); a refused table is this
        file's collection error, its lines `file:line:column: error: ...`."""
        from harness.tables.load import table_cases
        from harness.tables import preflight
        from harness.tables.cases import TableError

        option = self.config.getoption
        try:
            table, op, refusals, _ = preflight.check(str(self.path), option("harness_operator"),
                                                     option("harness_lenient"))
        except TableError as exc:
            raise self.CollectError(str(exc)) from None
        if refusals:
            raise self.CollectError("\n".join(map(str, refusals)))
        for case in table_cases(table, op):
            yield CaseItem.from_parent(self, name=case.name, case=case)


class CaseFailed(Exception):
    """A row whose verdict is FAIL or ERROR; carries the record for the report line."""


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, **kwargs):
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        from harness.run import runner
        from harness.model.codec import dumps

        settings = _settings(self.config)
        records: list[dict] = []
        runner.run_in_order([self.case], settings, records.append)
        (record,) = records
        record["description"] = self.case.description
        self.user_properties.append(("verdict", record["verdict"]))
        if record.get("timing"):
            self.user_properties.append((TIMING_PROPERTY, dumps(timing_summary(record))))
        if self.config.getoption("harness_report_dir"):
            self.user_properties.append((RECORD_PROPERTY, dumps(record)))
        if record["verdict"] == "SKIP":
            pytest.skip(record["reason"])
        if record["verdict"] != "PASS":
            raise CaseFailed(f"{record['verdict']}: {record['reason']}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailed):
            return f"{self.case.table}:{self.case.line}: {excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        # the domain is the bare case name: pytest prints `path::domain` (dots in a domain become `::`), so this
        # keeps the printed id equal to the node id
        return self.path, self.case.line - 1, self.case.name


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A row's skip is reported at its CSV line, not at the line of this plugin that called pytest.skip()."""
    outcome = yield
    report = outcome.get_result()
    if isinstance(item, CaseItem) and report.skipped and isinstance(report.longrepr, tuple):
        report.longrepr = (str(item.path), item.case.line, report.longrepr[2])


def _settings(config: pytest.Config) -> Settings:
    """The run settings of this pytest process, its backend checked once in a probe worker (harness.run.runner). A
    backend whose runtime this machine lacks skips every item with the reason; an operator library given with
    --harness-operator-lib that cannot be loaded, created or destroyed fails every item: it is the thing under
    test, and a broken one must not read as a green session."""
    settings = config.stash[SETTINGS]
    if UNAVAILABLE not in config.stash:
        from harness.run import runner
        from harness.backends import BackendUnavailable

        try:
            runner.check_backend(settings)
            config.stash[UNAVAILABLE] = None
        except BackendUnavailable as exc:
            config.stash[UNAVAILABLE] = str(exc)
    unavailable = config.stash[UNAVAILABLE]
    if unavailable is not None:
        if settings.operator_lib:
            raise CaseFailed(unavailable)
        pytest.skip(unavailable)
    return settings


def settings_of(config: pytest.Config) -> Settings:
    """`harness run`'s settings for the same options (harness.model.settings.from_options: the backend's timeout and
    timing defaults), timed rows in one round (an item is one process's row)."""
    option = config.getoption
    return from_options({"backend": option("harness_backend"), "operator_lib": option("harness_operator_lib"),
                         "no_poison": option("harness_no_poison"), "timeout": option("harness_timeout"),
                         "select": option("keyword") or None, "rounds": 1,
                         "workers": int(getattr(config.option, "numprocesses", 0) or 1)},
                        timed=bool(option("harness_timing")))


def timing_summary(record: dict) -> dict:
    """What the perf table shows of a timed row (small: it rides on the test report)."""
    from harness.model.codec import strict

    timing = record["timing"]
    samples = timing.get("samples_us") or []
    mean = timing.get("mean_us")
    return strict({**{key: timing.get(key) for _, key in TIMING_COLUMNS}, "max_us": max(samples, default=None),
                   "n": timing.get("n"), "ci95_us": timing.get("ci95_us"), "op": record["op"],
                   "gflops": record["flops"] / mean / 1e3 if record.get("flops") and mean else None})


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """The perf table of the rows this session timed (--harness-timing), on the controller under xdist."""
    timed = [(report.nodeid, json.loads(value))
             for report in [r for key in ("passed", "failed") for r in terminalreporter.stats.get(key, [])]
             for name, value in getattr(report, "user_properties", [])
             if name == TIMING_PROPERTY and report.when == "call"]
    if not timed:
        return  # and the reports (matplotlib, pandas: ~0.7 s) are never imported by a session that timed nothing
    from tabulate import tabulate

    from harness.reports.content import fmt

    rows = []
    for nodeid, t in timed:
        ci = t["ci95_us"] or [None, None]
        rows.append([nodeid, t["op"], fmt(t["n"]), *[fmt(t[key]) for _, key in TIMING_COLUMNS],
                     f"[{fmt(ci[0])}, {fmt(ci[1])}]" if None not in ci else "—", fmt(t["gflops"])])
    workers = int(getattr(config.option, "numprocesses", 0) or 0)
    shared = f"; {workers} xdist workers shared the CPU while timing" if workers > 1 else ""
    terminalreporter.write_sep("-", f"harness perf: {len(rows)} timed rows (us; one round, not judged against "
                                    f"baselines: `harness run` judges{shared})")
    headers = ["row", "op", "n", *[label for label, _ in TIMING_COLUMNS], "CI95", "GFLOP/s"]
    for line in tabulate(rows, headers, disable_numparse=True).splitlines():
        terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    config.stash[SETTINGS] = settings_of(config)
    if config.getoption("harness_report_dir") and not hasattr(config, "workerinput"):  # xdist workers only run
        config.pluginmanager.register(Recorder(config), "harness-recorder")


class Recorder:
    """The run as a harness session (state: the session, started with the first record, since the xdist
    controller never collects); its hooks run on the controller, or in the one process without xdist."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.session = None
        self.report = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":  # the item's properties ride on its teardown report too
            return
        for name, value in report.user_properties:
            if name == RECORD_PROPERTY:
                self._session().record(json.loads(value))

    def pytest_sessionfinish(self) -> None:
        if self.session is not None:
            self.report = self.session.finish().get("md")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.report is not None:
            terminalreporter.write_line(f"harness report: {self.report}")

    def _session(self):
        if self.session is None:
            from harness.model import operators as ops
            from harness.store.history import History
            from harness.flows.session import Session, new_meta
            from harness.model.meta import new_settings

            option = self.config.getoption
            settings = self.config.stash[SETTINGS]
            meta = new_meta("pytest", settings.backend, _tables(self.config), new_settings(settings, gates=ops.gates()),
                            {"library": option("harness_operator_lib")}, {"name": "", "detected": "", "override": None})
            self.session = Session(History(option("harness_history")),
                                   Path(option("harness_report_dir")) / meta["run_id"], meta)
            self.session.start()
        return self.session


def _tables(config: pytest.Config) -> list[str]:
    """The case tables named on the command line (directories: their *_test.csv), node-id suffixes dropped."""
    tables: list[str] = []
    for arg in config.args:
        path = Path(str(arg).split("::")[0])
        if path.is_dir():
            tables += [str(p) for p in sorted(path.rglob("*_test.csv"))]
        elif path.name.endswith("_test.csv") and path.is_file():
            tables.append(str(path))
    return list(dict.fromkeys(tables))
