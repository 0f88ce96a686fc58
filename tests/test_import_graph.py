"""The module graph of `harness` has no import cycle: a cycle makes the import order decide which module sees the
other half-initialised, and hides which of two concepts is the lower one.

Every `import` / `from ... import` counts, at any depth of the code (an import inside a function still ties the
two modules together; putting it there only postpones the cycle to the first call). Two kinds are exempt, each
for a reason: imports under `if TYPE_CHECKING:` (never executed; annotations only), and `importlib.import_module`
with a computed name (the registries of commands, backends and operator packages load a module below them by
name, which is no edge of the source). Importing `a.b.c` also runs `a.b`'s `__init__`, so a package above the
imported module is an edge too, unless it is above the importer as well (it is initialised first, always).
"""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def modules(root: Path, package: str) -> dict[str, Path]:
    """Dotted name -> source file of every module of `package` under `root`."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, at any depth, except those under `if TYPE_CHECKING:`."""
    found = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and _is_type_checking(node):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return found


def _named(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> list[str]:
    """The dotted names an import statement may load: `from p import x` loads p, and p.x when x is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        here = importer.split(".") if is_package else importer.split(".")[:-1]
        base = ".".join([*here[:len(here) - node.level + 1], *([base] if base else [])])
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of `package` its imports run (see the module docstring for what counts)."""
    known = modules(root, package)
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        targets = edges.setdefault(name, set())
        for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for dotted in _named(node, name, path.name == "__init__.py"):
                parts = dotted.split(".")
                prefixes = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
                targets.update(p for p in prefixes if p in known and p != name and p not in ancestors)
    return edges


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (its modules, the first repeated at the end), or None."""
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def test_the_harness_package_has_no_import_cycle():
    edges = graph(ROOT, "harness")
    assert len(edges) > 50 and "harness.store.record" in edges["harness.store.session"]  # the parse sees the real graph
    assert "harness.reports" in edges["harness.store.session"]  # ... function-level imports included
    found = cycle(edges)
    assert found is None, "import cycle: " + " -> ".join(found)


def _package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("high, low, sub", [
    ("from pkg import low\n", "from pkg.high import thing\n", ""),             # top level, both ways
    ("import pkg.low\n", "def f():\n    from . import high\n", ""),           # relative, inside a function
    ("def f():\n    import pkg.sub.deep\n", "", "from .. import high\n"),     # a package's __init__ on the way
])
def test_a_synthetic_cycle_is_detected(tmp_path, high, low, sub):
    """Negative control: a cycle through high, in each of the forms the graph must follow."""
    root = _package(tmp_path, {"pkg/__init__.py": "", "pkg/high.py": high, "pkg/low.py": low,
                               "pkg/sub/__init__.py": sub, "pkg/sub/deep.py": ""})
    found = cycle(graph(root, "pkg"))
    assert found is not None and found[0] == found[-1] and "pkg.high" in found


def test_type_checking_imports_and_a_packages_own_init_are_no_edges(tmp_path):
    """What is exempt stays exempt: an annotation-only back edge, and a submodule's import of its own package."""
    root = _package(tmp_path, {
        "pkg/__init__.py": "from pkg.sub import deep\n",
        "pkg/sub/__init__.py": "", "pkg/sub/deep.py": "import pkg\nfrom pkg.sub import other\n",
        "pkg/sub/other.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import deep\n"
                            "else:\n    import pkg.free\n",
        "pkg/free.py": "",
    })
    edges = graph(root, "pkg")
    assert cycle(edges) is None
    assert edges["pkg.sub.other"] == {"pkg.free"}  # the else branch runs, so it counts
    assert edges["pkg.sub.deep"] == {"pkg.sub.other"}
