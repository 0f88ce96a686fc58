"""Every script in benchmarks/ still imports: they run by hand, not in CI, so an API they use can vanish unseen
(three of them called a removed `engine.prepare_call` until this test existed)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("*.py"))


def test_there_are_benchmarks():
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_the_benchmark_imports(script, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"benchmark_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # main() is behind `if __name__ == "__main__"`
    assert callable(getattr(module, "main", None)), f"{script.name} has no main()"
    sys.modules.pop(f"benchmark_{script.stem}", None)


def test_a_broken_import_is_caught(tmp_path):
    """Negative control: a script importing a name the harness does not have fails to load."""
    broken = tmp_path / "broken.py"
    broken.write_text("from harness.run.row_judge import no_such_function\n\ndef main():\n    return 0\n")
    spec = importlib.util.spec_from_file_location("benchmark_broken", broken)
    with pytest.raises(ImportError):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
