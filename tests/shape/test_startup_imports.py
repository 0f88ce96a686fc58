"""What a `harness` process imports before it does any work: the suite starts the command line hundreds of times and
every user call pays its start. Building a command's parser imports none of numpy, pandas, matplotlib or scipy
(each command imports what it runs on inside its handler; `harness --help` only numpy and scipy's top, for
`cases generate`'s operators and seed), the modules a run holds from its start (the session, the progress
display) leave the report writers' pandas and matplotlib to the end, matplotlib waits for the first figure, and
`harness runs` lists the history without pandas. Each check runs in a fresh interpreter."""
from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import harness.commands

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pandas", "matplotlib", "scipy", "scipy.stats", "scipy.linalg", "tabulate")
#: Every command but `cases`, whose parser lists the generators' operators and seed (harness.generate: numpy).
COMMANDS = sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(harness.commands.__path__)
                  if m.name != "cases")


def heavy_after(code: str) -> list[str]:
    """The HEAVY modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          check=True)
    return done.stdout.split()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_commands_parser_imports_nothing_heavy(command):
    assert heavy_after(f"from harness.cli import build_parser\nbuild_parser({command!r})") == []


def test_every_commands_parser_imports_only_numpy_and_scipys_top():
    assert heavy_after("from harness.cli import build_parser\nbuild_parser()") == ["numpy", "scipy"]


def test_a_run_holds_no_report_writer_until_it_writes():
    assert not {"pandas", "matplotlib"} & set(heavy_after("import harness.flows.session, harness.reports.progress"))


def test_matplotlib_waits_for_the_first_figure():
    """The report writers import matplotlib only to draw (a compare without perf rows draws nothing)."""
    assert "matplotlib" not in heavy_after("import harness.reports.html, harness.reports.compare_report")
    assert "matplotlib" in heavy_after("from harness.reports import plots\nplots._figure(1.0, 1.0)")


def test_harness_runs_lists_the_history_without_pandas(tmp_path):
    history = str(tmp_path / "h.sqlite")
    code = (f"from harness.store.history import History\nHistory({history!r}).start_run({{'run_id': 'r1'}})\n"
            f"from harness.cli import main\nassert main(['runs', '--history', {history!r}]) == 0")
    assert "pandas" not in heavy_after(code)


def test_a_heavy_import_is_caught():
    """Negative control: a module that imports the comparison at its top is seen holding pandas and scipy.stats
    (what the compare and ab commands' modules did to every parser)."""
    assert {"pandas", "scipy.stats"} <= set(heavy_after("import harness.perf.compare"))


def test_the_zygote_and_a_timed_workers_code_import_no_scipy():
    """Every run's zygote, and a perf phase's judge, import the timing statistics: scipy.special alone cost each
    ~0.28 s of CPU (the t quantile and the normal distribution are harness.perf.stats' own now)."""
    assert "scipy" not in heavy_after("import harness.run.zygote, harness.perf.stats, harness.perf.timing")
    assert "scipy" in heavy_after("import harness.run.zygote\nfrom scipy import special")  # the probe sees it
