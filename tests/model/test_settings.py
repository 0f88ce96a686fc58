"""harness.model.settings: one settings object from the command line to the worker. Every shell (`harness run`, `ab`,
`baseline`, `mutants`, the pytest plugin) builds its settings through `from_options`, so the per-backend defaults
(a row's timeout: 3600 s on ascend-cpu, 600 s elsewhere) are the same whichever shell ran the rows, and the meta
a session records is a view of the object the workers were given."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import harness.commands.ab
import harness.commands.baseline
import harness.commands.mutants
import harness.commands.run
from harness import plugin
from harness.model import operators as ops
from harness.model import settings
from harness.cli import build_parser, main
from harness.run import runner
from harness.model.settings import DEFAULTS, Settings, default_timeout_s, from_options
from harness.model.meta import new_settings
from tables import csymm_row, write_csymm_table

ROOT = Path(__file__).resolve().parents[2]


class Built(Exception):
    """Raised by the spy once a command has built its settings: the test needs no further than that."""


@pytest.fixture
def table(tmp_path: Path) -> Path:
    return write_csymm_table(tmp_path / "csymm_test.csv", [csymm_row("TC_L0_0001", 4, 3),
                                                          csymm_row("TC_PF_0001", 4, 3)])


@pytest.fixture
def built(monkeypatch) -> list[Settings]:
    """What the commands' from_options built; the command stops right after (Built)."""
    seen: list[Settings] = []

    def spy(options, **kwargs) -> Settings:
        seen.append(from_options(options, **kwargs))
        raise Built
    for command in (harness.commands.run, harness.commands.ab, harness.commands.baseline, harness.commands.mutants):
        monkeypatch.setattr(command, "from_options", spy)
    return seen


@pytest.mark.parametrize("argv, backend, timeout", [
    (["run", "--backend", "ascend-cpu"], "ascend-cpu", 3600.0),
    (["run", "--timeout", "5", "-n", "3"], "cpu", 5.0),
    (["baseline", "--backend", "ascend-cpu"], "ascend-cpu", 3600.0),
    (["baseline"], "cuda", 600.0),
    (["ab", "HEAD", "HEAD"], "cpu", 600.0),
    (["mutants", "-n", "3"], "cpu", 60.0),  # mutants' own --timeout default: a hanging mutant costs each row this
])
def test_every_command_builds_its_settings_through_from_options(argv, backend, timeout, table, built, tmp_path,
                                                                monkeypatch):
    monkeypatch.chdir(ROOT)  # ab needs a git checkout
    with pytest.raises(Built):
        main([*argv, str(table), "--history", str(tmp_path / "h.sqlite"), "--report-dir", str(tmp_path / "r")])
    (got,) = built
    assert (got.backend, got.timeout_s) == (backend, timeout)
    assert got.workers == (3 if "-n" in argv else 1 if argv[0] in ("ab", "baseline") else 2)
    assert (got.timing is not None) == (argv[0] in ("run", "baseline"))  # ab's worker service times its own way


def test_per_backend_defaults_live_in_one_place():
    assert default_timeout_s("ascend-cpu") == 3600.0 and default_timeout_s("cpu") == default_timeout_s("npu") == 600
    cpu, npu = from_options({}, timed=True), from_options({"backend": "npu"}, timed=True)
    assert (cpu.timing.max_time_s, npu.timing.max_time_s) == (0.4, 10.0)
    assert from_options({"backend": "ascend-cpu", "timeout": 9.0}, timed=False).timeout_s == 9.0


def test_one_set_of_option_defaults():
    """A command's parsed defaults and a shell without the options (the plugin) build the same settings."""
    parser = build_parser()
    for command in ("run", "baseline"):
        args = parser.parse_args([command, "t.csv"])
        for key in ("device", "timing_mode", "warmup", "min_samples", "max_time", "rounds", "timeout"):
            assert getattr(args, key) == DEFAULTS[key], (command, key)
    args = parser.parse_args(["run", "--backend", "ascend-cpu"])
    parsed, bare = from_options(args, timed=True), from_options({"backend": "ascend-cpu"}, timed=True)
    different = {f.name for f in dataclasses.fields(Settings) if getattr(parsed, f.name) != getattr(bare, f.name)}
    assert different == {"workers", "devices"}  # run's -n 2, and --device 0 named as the run's device list


def test_the_meta_records_what_the_workers_were_given():
    built = from_options({"backend": "ascend-cpu", "select": "TC_L0", "workers": 3, "accept_disputed": True,
                          "shard": (1, 4), "device": "0,2"}, timed=True)
    recorded = new_settings(built, gates=ops.gates())
    assert recorded["timeout_s"] == 3600.0 and recorded["timing"] == built.timing.as_dict()
    assert (recorded["select"], recorded["workers"], recorded["shard"], recorded["devices"]) == ("TC_L0", 3, "1/4",
                                                                                                 [0, 2])
    assert recorded["accept_disputed"] and built.backend_options == {"device": 0}
    assert set(recorded) == set(new_settings(gates={}))  # the meta's keys are the contract's, set or not
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.timeout_s = 1.0  # type: ignore[misc]


class _Spy:
    """Inside an in-process pytest run: the stashed settings, and the settings each item ran with."""

    def __init__(self):
        self.stashed: Settings | None = None
        self.ran: list[Settings] = []

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.stashed = session.config.stash[plugin.SETTINGS]
        assert not hasattr(session.config, "_harness_settings")


@pytest.mark.parametrize("options, timeout", [
    (["--harness-backend", "ascend-cpu"], 3600.0),  # a plugin with a fixed 600 s default fails here
    ([], 600.0),
    (["--harness-backend", "ascend-cpu", "--harness-timeout", "7"], 7.0),
])
def test_the_plugins_settings_are_stashed_with_the_backends_defaults(options, timeout, table, monkeypatch):
    spy = _Spy()

    def run_in_order(cases, given, on_record):
        spy.ran.append(given)
        on_record({**cases[0].new_record(), "verdict": "PASS", "reason": ""})
    monkeypatch.setattr(runner, "check_backend", lambda given: {})
    monkeypatch.setattr(runner, "run_in_order", run_in_order)
    code = pytest.main([str(table), "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--rootdir", str(table.parent),
                        "--harness-timing", *options], plugins=[spy])
    assert code == 0
    assert spy.stashed is not None and spy.stashed.timeout_s == timeout
    assert len(spy.ran) == 2 and all(given is spy.stashed for given in spy.ran)  # the stashed object itself
    run = from_options({"backend": spy.stashed.backend}, timed=True)
    assert spy.stashed.timing == dataclasses.replace(run.timing, rounds=1)  # `harness run`'s timing, one round


def test_settings_module_is_the_runners():
    assert runner.Settings is settings.Settings
