"""The tests mirror the source (issue 40): a unit test sits in `tests/<room>/`, named after a room of `harness/` (or a
source folder beside it: `golden/`, `operators/`), and the suites that cross rooms sit in folders of their own, so a
reader finds a module's tests where the module is and the end-to-end, isolation and scale suites apart from them.
Helpers are in `tests/helpers/` (on the path through tests/conftest.py), the native sources in `tests/native/`; a test
file imports helpers, never another test file (whose helpers would then be found only where its folder is on the
path, and whose tests a reader would not look for there)."""
from __future__ import annotations

import ast
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


def imported_test_modules(source: str, filename: str) -> list[str]:
    """`file:line: module` for each import of a test module (`test_*`, as a module or a name imported from a
    package), at any depth of the source: inside functions too."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [module] if is_test(module) else [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [(node.lineno, name) for name in names if is_test(name)]
    return [f"{filename}:{line}: {name}" for line, name in sorted(found)]


def is_test(module: str) -> bool:
    return any(part.startswith("test_") for part in module.split("."))


def test_no_test_file_imports_another():
    tests = ROOT / "tests"
    assert [hit for path in sorted(tests.rglob("*.py"))
            for hit in imported_test_modules(path.read_text(), str(path.relative_to(tests)))] == []


def test_an_import_of_a_test_module_is_named_wherever_it_sits():
    """Negative control: each way of importing a test module is named; helpers, harness modules and names that only
    contain test_ are not."""
    source = ("import json\nfrom processes import harness\nfrom harness.run import worker\nimport pytest_timeout\n"
              "from test_hostile import gone\nimport test_compare as compare\nfrom isolation import test_reach\n"
              "def helper():\n    from tests.store.test_history import meta\n")
    assert imported_test_modules(source, "x.py") == ["x.py:5: test_hostile", "x.py:6: test_compare",
                                            "x.py:7: isolation.test_reach", "x.py:9: tests.store.test_history"]
