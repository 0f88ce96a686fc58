"""pytest plugin: every row of an ops-blas case table is one test item (`cases/csymm_test.csv::TC_L0_0001`).

`pytest cases/csymm_test.csv -n 2 -k TC_L0` works like `harness run` on the same rows, through the same isolated
worker processes (harness.runner, harness.worker): the operator library is never loaded into pytest's process, so
a crashing, hanging or hostile operator is that item's CRASH or TIMEOUT failure and the session goes on. What pytest
adds is its own selection, reporting and xdist distribution. Perf rows are checked like precision rows here; their
timing belongs to `harness run`, which times them alone.

The ids pytest prints are node ids that can be pasted back (`pytest 'cases/csymm_test.csv::TC_L0_0001'`), and
skips, failures and errors point at the row's line in the CSV, so pytest's own habits (`--lf`, `--ff`, `-x`,
`--maxfail`, `--junitxml`, `-k`, xdist) work on tables as on Python tests.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.engine import Case, load_table


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "ops-blas case tables")
    group.addoption("--harness-backend", default="cpu", help="backend for case-table items (cpu, npu, cuda)")
    group.addoption("--harness-operator-lib", default=None, help="library exporting the ops-blas C ABI")
    group.addoption("--harness-no-poison", action="store_true", help="do not poison never-read regions")
    group.addoption("--harness-timeout", type=float, default=600.0,
                    help="per-row limit in seconds; past it the row's worker is killed (TIMEOUT) (default: 600)")


def pytest_collect_file(parent: pytest.Collector, file_path: Path):
    if file_path.name.endswith("_test.csv"):
        return CaseTable.from_parent(parent, path=file_path)
    return None


class CaseTable(pytest.File):
    def collect(self):
        for case in load_table(self.path):
            yield CaseItem.from_parent(self, name=case.name, case=case)


class CaseFailed(Exception):
    """A row whose verdict is FAIL or ERROR; carries the record for the report line."""


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, **kwargs):
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        from harness import runner

        settings = _settings(self.config)
        records: list[dict] = []
        runner.run_in_order([self.case], settings, records.append)
        (record,) = records
        self.user_properties.append(("verdict", record["verdict"]))
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


def _settings(config: pytest.Config):
    """The run settings of this pytest process, its backend checked once in a probe worker (harness.runner). A
    backend whose runtime this machine lacks skips every item with the reason; an operator library given with
    --harness-operator-lib that cannot be loaded, created or destroyed fails every item: it is the thing under
    test, and a broken one must not read as a green session."""
    cached = getattr(config, "_harness_settings", None)
    if cached is None:
        from harness import runner
        from harness.backends import BackendUnavailable

        options = {}
        if config.getoption("harness_operator_lib"):
            options["operator_lib"] = config.getoption("harness_operator_lib")
        cached = runner.Settings(backend=config.getoption("harness_backend"), backend_options=options,
                                 poison=not config.getoption("harness_no_poison"),
                                 timeout_s=config.getoption("harness_timeout"))
        try:
            runner.check_backend(cached)
        except BackendUnavailable as exc:
            cached = str(exc)
        config._harness_settings = cached
    if isinstance(cached, str):
        if config.getoption("harness_operator_lib"):
            raise CaseFailed(cached)
        pytest.skip(cached)
    return cached
