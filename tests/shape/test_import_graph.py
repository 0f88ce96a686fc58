"""The module graph of `harness` has no import cycle: a cycle makes the import order decide which module sees the
other half-initialised, and hides which of two concepts is the lower one. Above the modules, the rooms (the
top-level packages and modules of `harness/`) only look down: no loop between rooms, no import of a room above
one's own in the order docs/architecture.md gives (its room block is the one list of that order).

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
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The page whose room block is the one list of the rooms' order (top first, one level a line).
ARCHITECTURE = ROOT / "docs" / "architecture.md"


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
    assert len(edges) > 50 and "harness.model.record" in edges["harness.flows.session"]  # the parse sees the real graph
    assert "harness.reports.json_csv" in edges["harness.flows.session"]  # ... function-level imports included
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


# --- rooms: the top-level modules and packages of harness/, in the order docs/architecture.md gives them ---------

def documented_order(text: str) -> list[tuple[str, ...]]:
    """The rooms' levels, top first, from the architecture page's room block: a line `  a/, b.py  ...` is one level
    holding rooms a and b (the block is the one place the order is written down)."""
    block = text.split("\n## Rooms\n", 1)[1].split("```", 2)[1]
    levels = []
    for line in block.splitlines():
        names = re.match(r"  ((?:[a-z_]+(?:/|\.py)(?:, )?)+)(?:\s|$)", line)
        if names:
            levels.append(tuple(n.removesuffix("/").removesuffix(".py") for n in names.group(1).split(", ")))
    return levels


def room_of(module: str) -> str | None:
    """`pkg.store.history` -> "store"; the package's own __init__ is in no room."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def room_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """Room -> the other rooms its modules import (every import `graph` counts)."""
    rooms: dict[str, set[str]] = {}
    for module, targets in edges.items():
        if room_of(module) is None:
            continue
        rooms.setdefault(room_of(module), set()).update(
            r for r in map(room_of, targets) if r is not None and r != room_of(module))
    return rooms


def components(rooms: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of the room graph (rooms that reach each other), each once."""
    def reach(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for nxt in rooms.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen
    reached = {room: reach(room) for room in rooms}
    found: list[set[str]] = []
    for room in sorted(rooms):
        component = {other for other in reached[room] if room in reached.get(other, ())}
        if component not in found:
            found.append(component)
    return found


def upward(edges: dict[str, set[str]], order: list[tuple[str, ...]]) -> list[str]:
    """Each import of a module into a room above its own (an importing module and the room, once)."""
    level = {room: i for i, names in enumerate(order) for room in names}
    return sorted({f"{module} -> {room_of(target)}" for module, targets in edges.items() for target in targets
                   if room_of(module) and room_of(target) and level[room_of(target)] < level[room_of(module)]})


def test_the_architecture_page_orders_every_room_once():
    order = documented_order(ARCHITECTURE.read_text(encoding="utf-8"))
    listed = [room for names in order for room in names]
    assert len(order) >= 10 and order[-1] == ("model",) and "commands" in order[0]  # the parse sees the real block
    assert len(listed) == len(set(listed)), "a room listed twice"
    rooms = {room_of(m) for m in graph(ROOT, "harness")} - {None}
    assert rooms == set(listed), f"not placed on the page: {sorted(rooms - set(listed))}; " \
                                 f"listed but absent: {sorted(set(listed) - rooms)}"


def test_every_loop_between_rooms_is_one_room():
    rooms = room_graph(graph(ROOT, "harness"))
    assert "flows" in rooms["commands"] and "model" in rooms["tables"]  # the room graph is the real one
    loops = [sorted(c) for c in components(rooms) if len(c) > 1]
    assert not loops, f"rooms that import each other in a loop: {loops}"


def test_no_room_imports_a_room_above_it():
    found = upward(graph(ROOT, "harness"), documented_order(ARCHITECTURE.read_text(encoding="utf-8")))
    assert not found, "upward imports (docs/architecture.md, Rooms):\n" + "\n".join(found)


ROOMS = {"pkg/__init__.py": "", "pkg/low/__init__.py": "", "pkg/low/base.py": "", "pkg/high/__init__.py": "",
         "pkg/high/top.py": "from pkg.low import base\n", "pkg/mid.py": "import pkg.low.base\n"}
ORDER = [("high",), ("mid",), ("low",)]


def test_the_synthetic_rooms_pass_as_written(tmp_path):
    """The control the two below change one import of: downward imports only, no finding."""
    edges = graph(_package(tmp_path, ROOMS), "pkg")
    assert upward(edges, ORDER) == [] and all(len(c) == 1 for c in components(room_graph(edges)))


@pytest.mark.parametrize("importer, line", [
    ("pkg/low/base.py", "from pkg.high import top\n"),              # top level
    ("pkg/mid.py", "import pkg.low.base\ndef f():\n    from pkg import high\n"),  # inside a function
])
def test_an_added_upward_import_fails(tmp_path, importer, line):
    """Negative control: one import pointing up is named, with its module and the room it reaches."""
    edges = graph(_package(tmp_path, {**ROOMS, importer: line}), "pkg")
    found = upward(edges, ORDER)
    assert found == [f"{importer.removesuffix('.py').replace('/', '.')} -> high"]


def test_a_two_room_loop_is_one_component(tmp_path):
    """Negative control: low imports mid (inside a function) while mid imports low: one component of two rooms,
    though no module imports itself back (the module graph has no cycle)."""
    edges = graph(_package(tmp_path, {**ROOMS, "pkg/low/other.py": "def f():\n    import pkg.mid\n"}), "pkg")
    assert cycle(edges) is None
    assert {"low", "mid"} in components(room_graph(edges))
