"""The cpu walkthrough of docs/comparing.md ("Try it on the cpu backend") runs as written: two external
builds of the twin judged under two operator revisions, listed, compared by revision and by library path, timed
interleaved by `harness ab --lib-a --lib-b` (REGRESSION, exit 1), and the history's trend."""
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "comparing.md"


def walkthrough() -> list[str]:
    """The command lines of the first bash block after the walkthrough's heading."""
    text = DOC.read_text(encoding="utf-8").split("## Try it on the cpu backend", 1)[1]
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_cpu_walkthrough_runs_as_written(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    harness = f"{shlex.quote(sys.executable)} -c 'from harness.cli import main; import sys; sys.exit(main())'"
    done = {}
    for line in walkthrough():
        command = line.replace("/tmp/ops", str(tmp_path / "ops"))
        if command.startswith("harness "):
            command = harness + command[len("harness"):]
        elif command.startswith("python3 "):
            command = shlex.quote(sys.executable) + command[len("python3"):]
        proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
        done[" ".join(line.split()[:2])] = done.get(" ".join(line.split()[:2]), []) + [proc]
        assert proc.returncode != 3 and "Traceback" not in proc.stderr, (line, proc.stdout, proc.stderr)
    runs = done["harness runs"][0]
    assert runs.returncode == 0 and runs.stdout.splitlines()[2].split("|")[1].strip() == "v1.1"
    assert all(p.returncode in (0, 1, 2) for p in done["harness compare"])
    assert "base: operator v1.0" in done["harness compare"][0].stdout
    assert "base: operator v1.0" in done["harness compare"][1].stdout  # the library path names the same run
    ab = done["harness ab"][0]
    assert ab.returncode == 1 and "REGRESSION: 2" in ab.stdout
    assert done["harness history"][0].returncode == 0
