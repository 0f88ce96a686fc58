"""harness/tables/keywords.py: `-k` means what it means to pytest (checked against pytest's own parser, used here as
the oracle only), is compiled once per expression, names the column of an error, and the harness imports nothing of
pytest's private modules for it."""
from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from harness.tables import keywords
from harness.tables.keywords import SelectError, compile_select, matches

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["TC_L0", "tc_pf", "0003", "and", "or", "not", "(", ")", "LEFT", "x-y", "a.b", "[1]", "p/q", "", "  "]
NAMES = ["TC_L0_0001", "TC_L0_0003", "tc_pf_0003", "TC_PF_0001_LEFT", "x-y.a.b[1]", "p/q", "other"]


def _pytest_verdicts(expr: str) -> list[bool] | None:
    """pytest's reading of `expr` on NAMES (None: it refuses the expression)."""
    from _pytest.mark.expression import Expression

    try:
        compiled = Expression.compile(expr)
    except (SyntaxError, ValueError):
        return None
    return [compiled.evaluate(lambda ident, **_: ident.lower() in name.lower()) for name in NAMES]


def test_every_expression_reads_as_pytest_reads_it():
    """2000 random expressions over identifiers, and/or/not and parentheses, well formed or not: each one that pytest
    compiles selects the same names here, and each one that pytest refuses is refused here."""
    rng = random.Random(20261205)
    exprs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))) for _ in range(2000)]
    refused = 0
    for expr in exprs:
        expected = _pytest_verdicts(expr)
        if expected is None:
            refused += 1
            with pytest.raises(SelectError):
                compile_select(expr)
        else:
            assert [compile_select(expr)(name) for name in NAMES] == expected, expr
    assert 200 < refused < 1800  # both kinds were drawn


def test_selection_examples_and_the_empty_expression():
    assert [matches("TC_L0 and not 0003", n) for n in ("TC_L0_0001", "TC_L0_0003", "tc_l0_0004", "TC_PF_0001")] == \
        [True, False, True, False]
    assert matches("", "anything") and matches(None, "anything")  # no -k: every row
    assert not compile_select("  ")("anything")  # pytest: an expression of blanks selects nothing


def test_errors_name_the_column_and_what_was_expected():
    with pytest.raises(SelectError, match=r"at column 9: expected 'not', '\(' or an identifier; got end of input"):
        compile_select("TC_L0 or")
    with pytest.raises(SelectError, match=r"at column 7: unexpected character '='"):
        compile_select("TC_L0 = 1")
    with pytest.raises(SelectError, match=r"at column 4: expected 'and', 'or' or the end; got '\('"):
        compile_select("TC_(x)")  # pytest's -m form, ident(key=value), is no -k
    with pytest.raises(SelectError, match="nested more than 100 deep"):
        compile_select("(" * 150 + "a" + ")" * 150)
    assert compile_select("(" * 50 + "a" + ")" * 50)("a")
    with pytest.raises(SelectError):
        compile_select("a\nb")  # pytest skips blanks and tabs only


def test_an_expression_is_compiled_once_for_the_option_and_every_row(monkeypatch):
    """The option's check and every row's match share one compilation (negative control: a cleared cache compiles
    again)."""
    from harness.options import keyword_expression

    compiled = []
    real = keywords._tokens
    monkeypatch.setattr(keywords, "_tokens", lambda expr: compiled.append(expr) or real(expr))
    compile_select.cache_clear()
    expr = "TC_L0 and not 0003"
    assert keyword_expression(expr) == expr
    assert [matches(expr, name) for name in NAMES] == [True, False, False, False, False, False, False]
    assert compiled == [expr]
    compile_select.cache_clear()
    matches(expr, "TC_L0_0001")
    assert compiled == [expr, expr]


def test_the_harness_imports_nothing_of_pytests_private_modules():
    """-k is read here, not by pytest's private `_pytest.mark.expression` (importing it cost every `harness run -k`
    ~45 ms of CPU for the _pytest package); the pytest plugin uses pytest's public API only."""
    importers = set()
    for path in (ROOT / "harness").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(name.startswith("_pytest") for name in names):
                importers.add(path.relative_to(ROOT).as_posix())
    assert importers == set()
