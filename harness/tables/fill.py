"""The ops-blas fill grammar (`test/frame/fill.h`), reproduced bit for bit.

A case table names its inputs with strings such as `RANDOM_NORM_1` or `VALUE_NORM_N999`; the C++ frame turns them
into float arrays with a fresh `std::mt19937` per array. The harness must hand the operator the very same bytes, so
that a row gives the same verdict here as in the upstream gtest binary. Everything below follows libstdc++ and glibc
(x86-64, no FMA contraction), which the tests check against a compiled C++ program.

Grammar: `METHOD[_PATTERN][_kl_ku for BANDED][_VAL1[_VAL2]]`, split on `_` (empty tokens dropped), case-sensitive.
Numbers: `INF`, `NAN` (and `ALTER`/`EXTREME`/`ILLCOND` read as 0), else an optional `N` (negative) or `P` prefix,
then a `std::stof` float or `mantissaE[N]exponent` = mantissa * powf(10, exponent).
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

METHODS = ("NULLPTR", "INDEX", "RANDOM", "VALUE")
#: Not known to the C++ frame: normal draws, which the task book asks for (mean in [-5,5], sigma in [0.1,2]).
EXTENSION_METHODS = ("NORMAL",)
PATTERNS = ("NORM", "UPPER", "LOWER", "DIAG", "ALTER", "EXTREME", "ILLCOND", "BANDED")
#: Patterns whose matrices draw U(-2,2) only on the structure and leave everything else 0.
STRUCTURED = ("UPPER", "LOWER", "DIAG", "ILLCOND")

_METHOD_DEFAULTS = {"INDEX": (1.0, 1.0), "RANDOM": (1.0, 1.0), "VALUE": (0.0, 0.0), "NORMAL": (0.0, 1.0)}
_SPECIAL_NUMBERS = {"INF": np.inf, "NAN": np.nan, "ALTER": 0.0, "EXTREME": 0.0, "ILLCOND": 0.0}
_NUMBER_HELP = "a fill number such as 1, 0.5, N2 (negative), 1E6, 1EN3 (1e-3), INF, NINF or NAN"

F32 = np.float32
FLT_MAX = float(np.finfo(np.float32).max)
_FLT_MIN = float(np.finfo(np.float32).tiny)
_OVERFLOW_AT = Fraction(2) ** 128 - Fraction(2) ** 103  # halfway between FLT_MAX and 2^128: rounds to inf
_OVERFLOW_AT_DOUBLE = float(_OVERFLOW_AT)  # a double exactly
#: glibc's strtof reports underflow (ERANGE) for an inexact result that is tiny after rounding to 24 bits with an
#: unbounded exponent (x86's rule): below the midpoint of FLT_MIN and the 24-bit number under it.
_TINY_BELOW = Fraction(2) ** -126 - Fraction(2) ** -151
_TINY_BELOW_DOUBLE = Fraction(2) ** -1022 - Fraction(2) ** -1076  # strtod's, likewise (53 bits)
_EXTREME = np.array([1.0, 0.0, -1.0, FLT_MAX, _FLT_MIN, -FLT_MAX, 1.401298464324817e-45], dtype=np.float32)
_COMPLEX_IMAG_SEED_OFFSET = 7919


class FillError(ValueError):
    """A fill string the C++ frame cannot parse (`std::stof` throws and the test binary aborts)."""


@dataclass(frozen=True)
class FillSpec:
    """A parsed fill string; fields hold the values the C++ `BlasFillMode` ends up with.

    `recognised` is False when the first token is no method at all (the C++ keeps its INDEX defaults: 1, 2, 3, ...);
    `cpp_known` is False for that and for our NORMAL extension. `notes` lists silent C++ readings a table author
    probably did not mean (a number read only up to a stray character, tokens past VAL2 ignored).
    """
    text: str
    method: str = "INDEX"
    pattern: str = "NORM"
    val1: float = 1.0
    val2: float = 1.0
    kl: int = 0
    ku: int = 0
    recognised: bool = False
    cpp_known: bool = False
    notes: tuple[str, ...] = field(default=(), compare=False)


# --- std::stof -----------------------------------------------------------------------------------------------------

_STRTOF = re.compile(
    r"[ \t\n\v\f\r]*(?P<sign>[+-]?)(?:"
    r"(?P<inf>inf(?:inity)?)|(?P<nan>nan(?:\([0-9a-z_]*\))?)|"
    r"(?P<hex>0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?)|"
    r"(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:e(?P<exp>[+-]?[0-9]+))?)",
    re.IGNORECASE)


def _nearest_f32(exact: Fraction) -> float:
    """Round an exact non-negative rational to float32, ties to even (what glibc strtof does)."""
    best = None
    with np.errstate(over="ignore"):  # a decimal just under the overflow midpoint can have it as its double: inf
        guess = F32(float(exact))  # double rounding can be off by one float32 step near a midpoint; fixed below
        neighbours = (np.nextafter(guess, F32(0)), guess, np.nextafter(guess, F32(np.inf)))
    for cand in neighbours:
        if not np.isfinite(cand):
            continue
        dist = abs(Fraction(float(cand)) - exact)
        even = (int(cand.view(np.uint32)) & 1) == 0
        if best is None or dist < best[0] or (dist == best[0] and even):
            best = (dist, cand)
    return float(best[1])


def _exact_value(m: re.Match, max_magnitude: int) -> Fraction:
    """The unsigned rational a strtof/strtod match denotes; decimal exponents far outside the target type's range
    are cut short (to a value that overflows, or to one that underflows to zero)."""
    if m.group("hex") is not None:
        try:
            return Fraction(float.fromhex(m.group("hex")))
        except OverflowError:
            return Fraction(10) ** max_magnitude
    digits = (m.group("int") or "") + (m.group("frac") or "")
    mant = int(digits or "0")
    exp = int(m.group("exp") or 0) - len(m.group("frac") or "")
    if mant == 0:
        return Fraction(0)
    magnitude = exp + len(str(mant))  # value lies in [10^(magnitude-1), 10^magnitude)
    if magnitude > max_magnitude:
        return Fraction(10) ** max_magnitude
    if magnitude < -max_magnitude - 30:
        return Fraction(1, 10 ** (max_magnitude + 30))
    return Fraction(mant) * Fraction(10) ** exp


def _match_number(text: str) -> re.Match:
    m = _STRTOF.match(text)
    if m is None or (m.group("inf") is None and m.group("nan") is None and m.group("hex") is None
                     and not m.group("int") and not m.group("frac")):
        raise ValueError(f"no number at the start of {text!r}")
    return m


def _special(m: re.Match) -> float | None:
    neg = m.group("sign") == "-"
    if m.group("inf") is not None:
        return -np.inf if neg else np.inf
    if m.group("nan") is not None:
        return -np.nan if neg else np.nan
    return None


def _through_double(m: re.Match) -> float | None:
    """The float32 nearest the unsigned decimal `m` denotes, rounded through its correctly rounded double (Python's
    float), or None where that could differ: where the double is a float32 midpoint (the decimals that round to it
    lie on both sides of that midpoint) or outside float32's normal range (overflow and underflow are decided
    exactly). Rounding is monotone and keeps doubles, so any other decimal lies strictly between the same two
    midpoints as its double. 2 us a number against the exact path's 33: a table's first reading in every harness
    process paid 0.07 s for the csymm table."""
    d = float(f"{m.group('int') or '0'}.{m.group('frac') or '0'}e{m.group('exp') or '0'}")
    if not _FLT_MIN < d < _OVERFLOW_AT_DOUBLE:
        return None
    nearest = F32(d)
    value = float(nearest)  # compared as doubles: numpy 2 compares a Python float with a float32 in float32
    if value != d:
        with np.errstate(over="ignore"):  # above FLT_MAX the next one is inf, and no midpoint
            other = float(np.nextafter(nearest, F32(np.inf) if d > value else F32(0)))
        if (value + other) / 2 == d:
            return None
    return value


@functools.lru_cache(maxsize=4096)  # a table repeats its few distinct numbers in thousands of cells
def stof_prefix(text: str) -> tuple[float, int]:
    """`std::stof(text, &pos)`: the float32 value and how many characters were read.

    Raises ValueError where std::stof throws: nothing numeric at the start (invalid_argument) or a value outside
    float32 (out_of_range: overflow, or an inexact result below FLT_MIN, as glibc strtof reports it).
    """
    m = _match_number(text)
    special = _special(m)
    if special is not None:
        return special, m.end()
    value = _through_double(m) if m.group("hex") is None else None
    if value is not None:
        return (-value if m.group("sign") == "-" else value), m.end()
    exact = _exact_value(m, 40)
    if exact >= _OVERFLOW_AT:
        raise ValueError(f"{text!r} is out of float32 range")
    value = _nearest_f32(exact)
    if exact and exact < _TINY_BELOW and Fraction(value) != exact:
        raise ValueError(f"{text!r} underflows float32")
    return (-value if m.group("sign") == "-" else value), m.end()


@functools.lru_cache(maxsize=4096)
def stod_prefix(text: str) -> tuple[float, int]:
    """`std::stod(text, &pos)`: as stof_prefix, in double precision."""
    m = _match_number(text)
    special = _special(m)
    if special is not None:
        return special, m.end()
    exact = _exact_value(m, 310)
    try:
        value = float(exact)  # correctly rounded
    except OverflowError:
        raise ValueError(f"{text!r} is out of double range") from None
    if np.isinf(value) or (exact and exact < _TINY_BELOW_DOUBLE and Fraction(value) != exact):
        raise ValueError(f"{text!r} is out of double range")
    return (-value if m.group("sign") == "-" else value), m.end()


# --- parsing -------------------------------------------------------------------------------------------------------

def _load_powf():
    """`std::pow(float, float)` is libm's powf; call that very function so non-integer exponents round alike."""
    try:  # glibc's soname: find_library would run `ldconfig -p` in every process that reads a table
        libm = ctypes.CDLL("libm.so.6")
    except OSError:
        name = ctypes.util.find_library("m")
        libm = ctypes.CDLL(name) if name else None
    powf = getattr(libm, "powf", None)
    if powf is None:
        return lambda x, y: float(np.power(F32(x), F32(y)))
    powf.restype, powf.argtypes = ctypes.c_float, [ctypes.c_float, ctypes.c_float]
    return powf


_powf = _load_powf()


def _float_to_int(value: float) -> int:
    """`static_cast<int>(float)` as x86 does it: truncation, and INT_MIN for NaN or out-of-range values."""
    return int(value) if np.isfinite(value) and -2.0 ** 31 <= value < 2.0 ** 31 else -2 ** 31


def _parse_number(token: str, spec: str, notes: list[str]) -> float:
    """fill.h `parseNum`: special words, N/P prefix, plain stof or mantissa E [N] exponent."""
    if token in _SPECIAL_NUMBERS:
        return float(_SPECIAL_NUMBERS[token])
    neg = token[0] == "N"
    body = token[1:] if token[0] in "NP" else token
    value = 0.0
    try:
        if "E" in body:
            mant_text, exp_text = body.split("E", 1)
            exp_neg = exp_text.startswith("N")
            exp_text = exp_text[1:] if exp_neg else exp_text
            mant = _stof_checked(mant_text, token, notes) if mant_text else 1.0
            exp = _stof_checked(exp_text, token, notes) if exp_text else 0.0
            with np.errstate(over="ignore", invalid="ignore"):
                value = float(F32(mant) * F32(_powf(10.0, -exp if exp_neg else exp)))
        elif body:
            value = _stof_checked(body, token, notes)
    except ValueError as exc:
        raise FillError(f"fill {spec!r}: token {token!r} is not {_NUMBER_HELP} ({exc})") from None
    return -value if neg else value


def _stof_checked(text: str, token: str, notes: list[str]) -> float:
    value, used = stof_prefix(text)
    if used < len(text):
        notes.append(f"token {token!r} is read as {value:g} (std::stof stops at {text[used:]!r})")
    return value


@functools.lru_cache(maxsize=4096)
def parse_fill(spec: str) -> FillSpec:
    """Parse a fill string exactly as `BlasFillMode(s)` does; raise FillError where the C++ would throw."""
    parts = [t for t in spec.split("_") if t]
    if not parts or parts[0] not in METHODS + EXTENSION_METHODS:
        return FillSpec(text=spec)
    method = parts[0]
    cpp_known = method in METHODS
    if method == "NULLPTR":
        return FillSpec(text=spec, method=method, recognised=True, cpp_known=True)
    notes: list[str] = []
    val1, val2 = _METHOD_DEFAULTS[method]
    pattern, kl, ku, idx = "NORM", 0, 0, 1
    if idx < len(parts) and parts[idx] in PATTERNS:
        pattern, idx = parts[idx], idx + 1
    if method == "NORMAL" and pattern != "NORM":
        raise FillError(f"fill {spec!r}: NORMAL takes no pattern (expected NORMAL_<mean>_<sigma>)")
    if pattern == "BANDED":
        for name in ("kl", "ku"):
            if idx < len(parts):
                band = _float_to_int(_parse_number(parts[idx], spec, notes))
                kl, ku = (band, ku) if name == "kl" else (kl, band)
                idx += 1
    if idx < len(parts):
        val1 = val2 = _parse_number(parts[idx], spec, notes)
        idx += 1
    if idx < len(parts):
        val2 = _parse_number(parts[idx], spec, notes)
        idx += 1
    if idx < len(parts):
        notes.append(f"tokens after VAL2 are ignored: {'_'.join(parts[idx:])!r}")
    if method == "NORMAL" and not val2 >= 0:
        raise FillError(f"fill {spec!r}: NORMAL sigma must be >= 0 (expected NORMAL_<mean>_<sigma>)")
    return FillSpec(text=spec, method=method, pattern=pattern, val1=float(F32(val1)), val2=float(F32(val2)),
                    kl=kl, ku=ku, recognised=True, cpp_known=cpp_known, notes=tuple(notes))


# --- generators ----------------------------------------------------------------------------------------------------

def effective_seed(seed: int) -> int:
    """The `uint32_t` seed the C++ passes to mt19937: wrapped to 32 bits, 0 replaced by 42."""
    seed &= 0xFFFFFFFF
    return seed if seed else 42


def mt19937_uint32(seed: int, count: int) -> np.ndarray:
    """The first `count` raw outputs of `std::mt19937(effective_seed(seed))` (read-only where `reused_draws` kept
    them).

    The legacy RandomState seeds with init_genrand like libstdc++, and a full-range uint32 randint is one draw each.
    """
    return _draws("uint32", seed, count, _raw_uint32)


def _raw_uint32(seed: int, count: int) -> np.ndarray:
    """mt19937_uint32's stream for an effective seed (as the C++ seeds it)."""
    rng = _generator()
    rng.seed(seed)
    return rng.randint(0, 2 ** 32, size=count, dtype=np.uint32)


def _standard_normal(seed: int, count: int) -> np.ndarray:
    """NORMAL's float64 stream for an effective seed."""
    return np.random.RandomState(seed).standard_normal(count)  # RandomState: a stream numpy freezes


_per_thread = threading.local()
#: What `reused_draws` may keep at once: the two normal streams of a 4096 x 4096 complex A (268 MB) and its two
#: uniform ones (134 MB), the largest matrix a generated row fills.
REUSED_DRAWS_BYTES = 512 << 20


@contextlib.contextmanager
def reused_draws(max_bytes: int = REUSED_DRAWS_BYTES) -> Iterator[None]:
    """Keep each seed's raw stream (mt19937 words, standard normal draws) in this thread while the block runs, up
    to `max_bytes`, and serve later fills of the same seed from it: a table generator tries a row's variants one
    after the other, and they differ in their fill's parameters, not in their seeds. A shorter fill is a prefix of
    the kept stream, as it is of the generator's. Only the generator enters this (harness.generate.conditioning):
    elsewhere a fill holds no memory after it returns."""
    previous = getattr(_per_thread, "draws", None)
    _per_thread.draws = {"free_bytes": max_bytes, "streams": {}}
    try:
        yield
    finally:
        _per_thread.draws = previous


def draws_reused() -> bool:
    """Whether this thread's fills are served from `reused_draws` right now."""
    return getattr(_per_thread, "draws", None) is not None


def _draws(kind: str, seed: int, count: int, draw: Callable[[int, int], np.ndarray]) -> np.ndarray:
    """`draw(effective_seed(seed), count)`, through `reused_draws` where it is active (kept streams are
    read-only: a caller that wrote into one would change every later fill of that seed)."""
    seed = effective_seed(seed)
    cache = getattr(_per_thread, "draws", None)
    if cache is None:
        return draw(seed, count)
    streams = cache["streams"]
    kept = streams.get((kind, seed))
    if kept is not None and kept.size >= count:
        return kept[:count]
    if kept is not None:
        cache["free_bytes"] += streams.pop((kind, seed)).nbytes
    values = draw(seed, count)
    if values.nbytes <= cache["free_bytes"]:
        values.flags.writeable = False
        streams[(kind, seed)] = values
        cache["free_bytes"] -= values.nbytes
    return values


def _generator() -> np.random.RandomState:
    """This thread's legacy generator, reseeded for every array as the C++ constructs a fresh mt19937: building a
    RandomState costs ~0.3 ms, reseeding ~10 us, and a tiny case fills six arrays."""
    rng = getattr(_per_thread, "rng", None)
    if rng is None:
        rng = _per_thread.rng = np.random.RandomState()
    return rng


def uniform_float(raw: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """libstdc++ `uniform_real_distribution<float>(lo, hi)` applied to raw mt19937 draws: c = float(u) / 2^32
    (clamped below 1), then c * (hi - lo) + lo, each step rounded to float32 (in place, for speed)."""
    if np.isnan(hi) or np.isnan(lo):
        # x86 propagates the first NaN operand of hi - lo, and that NaN through the rest, bits and sign included
        return np.full(raw.size, F32(hi) if np.isnan(hi) else F32(lo), dtype=np.float32)
    out = raw.astype(np.float32)
    out *= F32(2.0 ** -32)  # exact: same as dividing by 2^32
    np.minimum(out, np.nextafter(F32(1), F32(0)), out=out)
    with np.errstate(over="ignore", invalid="ignore"):
        out *= F32(hi) - F32(lo)
        out += F32(lo)
    return out


def _random_bounds(spec: FillSpec) -> tuple[float, float]:
    """RANDOM_a_b is U[-a, b); a negative value means FLT_MAX on that side (the first number is a magnitude)."""
    lo = -FLT_MAX if spec.val1 < 0 else -spec.val1
    hi = FLT_MAX if spec.val2 < 0 else spec.val2
    return lo, hi


#: Elements of a NORMAL fill computed at a time: float64 temporaries of 256 KiB stay in the cache, where one of the
#: whole fill (134 MB for a 4096 x 4096 matrix) is fresh memory the kernel faults in: 16.7 M values 0.21-0.55 ->
#: 0.02 s of CPU here, the same bits.
_CHUNK = 1 << 15


def _normal(spec: FillSpec, count: int, seed: int) -> np.ndarray:
    """NORMAL_<mean>_<sigma> (extension): `RandomState(effective_seed).standard_normal(count)` in float64, then
    `mean + sigma * z` in float64 with mean and sigma as parsed (float32 values), rounded once to float32."""
    z = _draws("normal", seed, count, _standard_normal)
    out = np.empty(count, dtype=np.float32)
    scaled = np.empty(min(count, _CHUNK))
    for start in range(0, count, _CHUNK):  # through a buffer the cache holds: no float64 array of the whole fill
        part = scaled[:min(_CHUNK, count - start)]
        np.multiply(z[start:start + _CHUNK], spec.val2, out=part)
        part += spec.val1
        out[start:start + _CHUNK] = part
    return out


def _generate(spec: FillSpec, count: int, seed: int) -> np.ndarray:
    """`createGenerator(...)->at(i)` for i in [0, count): ALTER/EXTREME patterns win over the method."""
    if spec.pattern == "ALTER":
        v = np.arange(1, count + 1, dtype=np.float32)
        v[1::2] *= -1
        return v
    if spec.pattern == "EXTREME":
        return np.resize(_EXTREME, count)
    if spec.method == "VALUE":
        return np.full(count, spec.val1, dtype=np.float32)
    if spec.method == "RANDOM":
        return uniform_float(mt19937_uint32(seed, count), *_random_bounds(spec))
    if spec.method == "NORMAL":
        return _normal(spec, count, seed)
    start = F32(spec.val1)
    sign = F32(-1.0) if start < 0 else F32(1.0)
    return sign * (np.abs(start) + np.arange(count, dtype=np.float32))


def make_array(spec: str, count: int, seed: int) -> np.ndarray:
    """ops-blas `makeBlasArray(count, spec, seed)`: `count` values in generator order (empty for NULLPTR or
    count <= 0). Structured patterns have no effect on a flat array."""
    fill = parse_fill(spec)
    if fill.method == "NULLPTR" or count <= 0:
        return np.zeros(0, dtype=np.float32)
    return _generate(fill, count, seed)


def _structured_positions(pattern: str, m: int, n: int, ld: int) -> tuple[np.ndarray, np.ndarray]:
    """Storage indices a structured pattern draws into, in the C++ visiting order (column j outer, row inner),
    and the column of each (with ld < m, storage index // ld is not the column)."""
    cols = np.arange(n if pattern in ("UPPER", "ILLCOND") else min(m, n), dtype=np.int64)
    if pattern == "UPPER":
        first, length = np.zeros_like(cols), np.minimum(cols, m - 1) + 1
    elif pattern == "LOWER":
        first, length = cols, m - cols
    elif pattern == "DIAG":
        first, length = cols, np.ones_like(cols)
    else:  # ILLCOND: every row of every column
        first, length = np.zeros_like(cols), np.full_like(cols, m)
    starts = np.cumsum(length) - length
    base = np.repeat(cols * ld + first - starts, length)
    return base + np.arange(int(length.sum()), dtype=np.int64), np.repeat(cols, length)


def make_matrix(spec: str, m: int, n: int, ld: int, seed: int) -> np.ndarray:
    """ops-blas `makeBlasMatrix(m, n, ld, spec, seed)`: column-major storage of max(ld*n, (m-1)+(n-1)*ld+1)
    float32 values (empty for NULLPTR or m, n, ld <= 0).

    VALUE fills the whole storage, padding included (VALUE_DIAG only the diagonal); UPPER/LOWER/DIAG/ILLCOND draw
    U(-2,2) on the structure and leave the rest 0; anything else fills storage index i in [0, ld*n) with the
    generator's i-th value, so ld padding consumes draws too.
    """
    fill = parse_fill(spec)
    if fill.method == "NULLPTR" or m <= 0 or n <= 0 or ld <= 0:
        return np.zeros(0, dtype=np.float32)
    storage = ld * n
    size = max(storage, (m - 1) + (n - 1) * ld + 1)
    if fill.method == "VALUE" and fill.pattern != "DIAG":
        return np.full(size, fill.val1, dtype=np.float32)
    if fill.method != "VALUE" and fill.pattern not in STRUCTURED:
        values = _generate(fill, storage, seed)
        return values if size == storage else np.concatenate([values, np.zeros(size - storage, dtype=np.float32)])
    data = np.zeros(size, dtype=np.float32)
    if fill.method == "VALUE":
        diag = np.arange(min(m, n), dtype=np.int64)
        data[diag + diag * ld] = fill.val1
        return data
    pos, col = _structured_positions(fill.pattern, m, n, ld)
    values = uniform_float(mt19937_uint32(seed, pos.size), -2.0, 2.0)
    if fill.pattern == "ILLCOND":
        values *= np.where(col % 2 == 0, F32(1e6), F32(1e-6))
    data[pos] = values
    return data


def make_complex_matrix(spec: str, m: int, n: int, ld: int, seed: int) -> np.ndarray:
    """Complex64 column-major matrix as the cgemm_batched test builds it: two independent real fills, the real part
    with `seed`, the imaginary part with `seed + 7919` (wrapped to uint32; 0 -> 42 applies to each final seed)."""
    re_part = make_matrix(spec, m, n, ld, seed)
    im_part = make_matrix(spec, m, n, ld, (seed + _COMPLEX_IMAG_SEED_OFFSET) & 0xFFFFFFFF)
    out = np.empty(re_part.size, dtype=np.complex64)
    out.real, out.imag = re_part, im_part
    return out
