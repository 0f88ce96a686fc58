"""`-k` keyword expressions, read as pytest reads them (its grammar, written here: pytest has no public API for it).

    expression: expr? EOF          expr: and_expr ('or' and_expr)*       and_expr: not_expr ('and' not_expr)*
    not_expr:   'not' not_expr | '(' expr ')' | ident                    ident: (\\w | : | + | - | . | [ | ] | \\ | /)+

An identifier matches a name that contains it, case-insensitively; the empty expression matches nothing (a bare
`-k ''` selects every row before it is compiled: matches()). pytest's `ident(key=value)` form is for `-m` markers
and is refused here, as pytest's `-k` refuses it. tests/tables/test_keywords.py holds this reading against pytest's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

#: How deep -k's parentheses and `not`s may nest (the parser recurses once per level).
MAX_SELECT_DEPTH = 100
_TOKEN = re.compile(r"[ \t]*(?:(?P<paren>[()])|(?P<ident>(?:\w|[:+\-.\[\]\\/])+)|(?P<end>\Z)|(?P<bad>.))", re.DOTALL)
_WORDS = frozenset({"and", "or", "not"})


class SelectError(ValueError):
    """A `-k` expression that does not compile."""


@dataclass(frozen=True)
class Select:
    """A compiled expression: a tree of ("or" | "and", [nodes]), ("not", node), ("ident", text), ("false",)."""

    tree: tuple

    def __call__(self, name: str) -> bool:
        return _evaluate(self.tree, name.lower())


def _evaluate(node: tuple, lowered: str) -> bool:
    kind = node[0]
    if kind == "ident":
        return node[1] in lowered
    if kind == "not":
        return not _evaluate(node[1], lowered)
    if kind == "and":
        return all(_evaluate(n, lowered) for n in node[1])
    if kind == "or":
        return any(_evaluate(n, lowered) for n in node[1])
    return False


def _tokens(expr: str) -> list[tuple[str, str, int]]:
    """(kind, text, 1-based column) of each token, ending with ("end", "", column)."""
    out, pos = [], 0
    while True:
        match = _TOKEN.match(expr, pos)
        kind = match.lastgroup
        text = match.group(kind)
        column = match.start(kind) + 1
        if kind == "bad":
            raise SelectError(f"-k {expr!r}: at column {column}: unexpected character {text!r}")
        if kind == "ident" and text in _WORDS:
            kind = text
        out.append((kind if kind != "paren" else text, text, column))
        if kind == "end":
            return out
        pos = match.end()


@lru_cache(maxsize=64)
def compile_select(expr: str) -> Select:
    """The compiled `-k` expression (once per expression: the option's check and every row's match share it).
    Raises SelectError, naming the column, unless `expr` is such an expression."""
    tokens = _tokens(expr)
    at = 0

    def fail(expected: str) -> SelectError:
        kind, text, column = tokens[at]
        got = "end of input" if kind == "end" else repr(text)
        return SelectError(f"-k {expr!r}: at column {column}: expected {expected}; got {got}")

    def accept(kind: str) -> bool:
        nonlocal at
        if tokens[at][0] == kind:
            at += 1
            return True
        return False

    def any_of(word: str, part, depth: int) -> tuple:
        items = [part(depth)]
        while accept(word):
            items.append(part(depth))
        return items[0] if len(items) == 1 else (word, items)

    def or_expr(depth: int) -> tuple:
        return any_of("or", and_expr, depth)

    def and_expr(depth: int) -> tuple:
        return any_of("and", not_expr, depth)

    def not_expr(depth: int) -> tuple:
        if depth > MAX_SELECT_DEPTH:
            raise SelectError(f"-k: nested more than {MAX_SELECT_DEPTH} deep")
        if accept("not"):
            return ("not", not_expr(depth + 1))
        if accept("("):
            inner = or_expr(depth + 1)
            if not accept(")"):
                raise fail("')', 'and' or 'or'")
            return inner
        if accept("ident"):
            return ("ident", tokens[at - 1][1].lower())
        raise fail("'not', '(' or an identifier")

    if accept("end"):
        return Select(("false",))
    tree = or_expr(0)
    if not accept("end"):
        raise fail("'and', 'or' or the end")
    return Select(tree)


def matches(expr: str | None, name: str) -> bool:
    """pytest `-k` semantics: substring (case-insensitive) identifiers combined with and/or/not; no expression
    matches every name."""
    return not expr or compile_select(expr)(name)
