"""The tests mirror the source (issue 40): a unit test sits in `tests/<room>/`, named after a room of `harness/` (or a
source folder beside it: `golden/`, `operators/`), and the suites that cross rooms sit in folders of their own, so a
reader finds a module's tests where the module is and the end-to-end, isolation and scale suites apart from them.
Helpers are in `tests/helpers/` (on the path through tests/conftest.py), the native sources in `tests/native/`."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Source folders of the project outside `harness/` that have unit tests of their own.
SOURCES = ("golden", "operators")
#: The suites that cross rooms (tests/README.md says what each holds).
SUITES = ("e2e", "isolation", "scale", "docs", "fuzz", "shape")


def rooms(root: Path) -> set[str]:
    """The rooms of `harness/`: its packages."""
    return {p.name for p in (root / "harness").iterdir() if (p / "__init__.py").is_file()}


def misplaced(root: Path) -> list[str]:
    """Test files (relative to tests/) that are not one folder deep in a room, a source folder or a suite."""
    allowed = rooms(root) | set(SOURCES) | set(SUITES)
    tests = root / "tests"
    return sorted(str(path.relative_to(tests)) for path in tests.rglob("test_*.py")
                  if len(path.relative_to(tests).parts) != 2 or path.parent.name not in allowed)


def test_every_test_file_sits_in_a_room_or_a_suite():
    assert misplaced(ROOT) == []


def test_a_flat_file_an_unknown_folder_and_a_nested_one_are_named(tmp_path):
    """Negative control: the layout check on a small tree with one file of each kind that must be refused."""
    for package in ("harness/run", "harness/store"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "harness" / "notes").mkdir()  # a folder without __init__.py is no room
    for test in ("run/test_worker.py", "store/test_history.py", "e2e/test_cli.py", "golden/test_golden.py",
                 "test_flat.py", "notes/test_notes.py", "helpers/test_helper.py", "run/deep/test_nested.py"):
        (tmp_path / "tests" / test).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tests" / test).write_text("")
    assert misplaced(tmp_path) == ["helpers/test_helper.py", "notes/test_notes.py", "run/deep/test_nested.py",
                                   "test_flat.py"]
