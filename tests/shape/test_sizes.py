"""No module of `harness/` over 600 lines and no function over 80: past that a module holds several concepts and a
function several steps, and both are read in pieces (issue 40). Lines are counted as the file has them, docstrings
and comments included; a function from its `def` (or first decorator) to its last line, nested functions inside it.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def oversized(root: Path, package: str = "harness") -> list[str]:
    """`path: N lines` for each module of `package` over MAX_MODULE_LINES, `path:line: name N lines` for each
    function over MAX_FUNCTION_LINES."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            found.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text, rel)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if node.end_lineno - start + 1 > MAX_FUNCTION_LINES:
                    found.append(f"{rel}:{start}: {node.name} {node.end_lineno - start + 1} lines")
    return found


def test_no_module_or_function_is_over_its_limit():
    found = oversized(ROOT)
    assert not found, "over the limits:\n" + "\n".join(found)


def _function(name: str, body_lines: int, decorated: bool = False) -> str:
    return ("@staticmethod\n" if decorated else "") + f"def {name}():\n" + "    x = 1\n" * body_lines


def test_a_module_or_function_one_line_over_is_named(tmp_path):
    """Negative control: at the limits nothing is found; one line more (a module's, a function's, a decorated
    method's counted from its decorator) is named with its place."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    fits = _function("fits", MAX_FUNCTION_LINES - 1)
    (pkg / "at.py").write_text(fits + "#\n" * (MAX_MODULE_LINES - MAX_FUNCTION_LINES))
    assert oversized(tmp_path, "pkg") == []
    (pkg / "long.py").write_text("#\n" * (MAX_MODULE_LINES + 1))
    (pkg / "big.py").write_text(_function("big", MAX_FUNCTION_LINES))
    (pkg / "method.py").write_text("class C:\n" + "".join("    " + line + "\n" for line in
                                                         _function("m", MAX_FUNCTION_LINES - 1, True).splitlines()))
    assert oversized(tmp_path, "pkg") == [
        f"pkg/big.py:1: big {MAX_FUNCTION_LINES + 1} lines", f"pkg/long.py: {MAX_MODULE_LINES + 1} lines",
        f"pkg/method.py:2: m {MAX_FUNCTION_LINES + 1} lines"]
