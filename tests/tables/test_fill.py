"""harness.tables.fill against an independent derivation: a small C++ program, compiled here with g++, that implements the
fill grammar with the real `std::mt19937`, `std::uniform_real_distribution<float>`, `std::stof` and `std::pow`.
Every grammar branch is compared bit for bit."""
from __future__ import annotations

import ctypes
import errno
import shutil
import subprocess
from decimal import Decimal, localcontext

import numpy as np
import pytest

from harness.tables import fill
from harness.tables.fill import (FLT_MAX, FillError, effective_seed, make_array, make_complex_matrix, make_matrix,
                          mt19937_uint32, parse_fill, stod_prefix, stof_prefix, uniform_float)

CPP_FILL = r"""
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

enum { NULLPTR, INDEX, RANDOM, VALUE };
enum { NORM, UPPER, LOWER, DIAG, ALTER, EXTREME, ILLCOND, BANDED };
struct Spec { int method = INDEX; int pattern = NORM; float v1 = 1.0f, v2 = 1.0f; int kl = 0, ku = 0; };

static float number(std::string t) {
    if (t == "INF") return INFINITY;
    if (t == "NAN") return NAN;
    if (t == "ALTER" || t == "EXTREME" || t == "ILLCOND") return 0.0f;
    bool neg = !t.empty() && t[0] == 'N';
    if (!t.empty() && (t[0] == 'N' || t[0] == 'P')) t = t.substr(1);
    float v = 0.0f;
    size_t e = t.find('E');
    if (t.empty()) {
        v = 0.0f;
    } else if (e == std::string::npos) {
        v = std::stof(t);
    } else {
        std::string mant = t.substr(0, e), ex = t.substr(e + 1);
        bool exNeg = !ex.empty() && ex[0] == 'N';
        if (exNeg) ex = ex.substr(1);
        float mv = mant.empty() ? 1.0f : std::stof(mant);
        float ev = ex.empty() ? 0.0f : std::stof(ex);
        v = mv * std::pow(10.0f, exNeg ? -ev : ev);
    }
    return neg ? -v : v;
}

static Spec parse(const std::string& s) {
    Spec f;
    std::vector<std::string> tok;
    std::stringstream in(s);
    std::string t;
    while (std::getline(in, t, '_')) if (!t.empty()) tok.push_back(t);
    const char* methods[] = {"NULLPTR", "INDEX", "RANDOM", "VALUE"};
    const char* patterns[] = {"NORM", "UPPER", "LOWER", "DIAG", "ALTER", "EXTREME", "ILLCOND", "BANDED"};
    if (tok.empty()) return f;
    int m = -1;
    for (int i = 0; i < 4; i++) if (tok[0] == methods[i]) m = i;
    if (m < 0) return f;
    f.method = m;
    if (m == NULLPTR) return f;
    f.v1 = f.v2 = (m == VALUE) ? 0.0f : 1.0f;
    size_t i = 1;
    for (int p = 0; i < tok.size() && p < 8; p++)
        if (tok[i] == patterns[p]) { f.pattern = p; i++; break; }
    if (f.pattern == BANDED && i < tok.size()) f.kl = (int)number(tok[i++]);
    if (f.pattern == BANDED && i < tok.size()) f.ku = (int)number(tok[i++]);
    if (i < tok.size()) { f.v1 = number(tok[i++]); f.v2 = f.v1; }
    if (i < tok.size()) f.v2 = number(tok[i++]);
    return f;
}

static std::vector<float> values(const Spec& f, size_t count, std::mt19937& rng) {
    static const float extreme[7] = {1.0f, 0.0f, -1.0f, FLT_MAX, FLT_MIN, -FLT_MAX, FLT_TRUE_MIN};
    std::vector<float> out(count);
    if (f.pattern == ALTER) {
        for (size_t i = 0; i < count; i++) out[i] = (i % 2 == 0) ? float(i + 1) : -float(i + 1);
    } else if (f.pattern == EXTREME) {
        for (size_t i = 0; i < count; i++) out[i] = extreme[i % 7];
    } else if (f.method == VALUE) {
        std::fill(out.begin(), out.end(), f.v1);
    } else if (f.method == RANDOM) {
        std::uniform_real_distribution<float> u(f.v1 < 0.0f ? -FLT_MAX : -f.v1, f.v2 < 0.0f ? FLT_MAX : f.v2);
        for (size_t i = 0; i < count; i++) out[i] = u(rng);
    } else {
        for (size_t i = 0; i < count; i++) out[i] = (f.v1 < 0.0f ? -1.0f : 1.0f) * (std::fabs(f.v1) + float(i));
    }
    return out;
}

static std::vector<float> array(const Spec& f, long count, uint32_t seed) {
    if (f.method == NULLPTR || count <= 0) return {};
    std::mt19937 rng(seed ? seed : 42);
    return values(f, size_t(count), rng);
}

static std::vector<float> matrix(const Spec& f, int m, int n, int ld, uint32_t seed) {
    if (f.method == NULLPTR || m <= 0 || n <= 0 || ld <= 0) return {};
    size_t storage = size_t(ld) * n, reach = size_t(m - 1) + size_t(n - 1) * ld + 1;
    std::vector<float> d(std::max(storage, reach), 0.0f);
    if (f.method == VALUE && f.pattern == DIAG) {
        for (int j = 0; j < std::min(m, n); j++) d[j + size_t(j) * ld] = f.v1;
        return d;
    }
    if (f.method == VALUE) { std::fill(d.begin(), d.end(), f.v1); return d; }
    std::mt19937 rng(seed ? seed : 42);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    if (f.pattern == UPPER) {
        for (int j = 0; j < n; j++) for (int i = 0; i <= std::min(j, m - 1); i++) d[i + size_t(j) * ld] = u(rng);
    } else if (f.pattern == LOWER) {
        for (int j = 0; j < std::min(m, n); j++) for (int i = j; i < m; i++) d[i + size_t(j) * ld] = u(rng);
    } else if (f.pattern == DIAG) {
        for (int j = 0; j < std::min(m, n); j++) d[j + size_t(j) * ld] = u(rng);
    } else if (f.pattern == ILLCOND) {
        for (int j = 0; j < n; j++) {
            float scale = (j % 2 == 0) ? 1e6f : 1e-6f;
            for (int i = 0; i < m; i++) d[i + size_t(j) * ld] = u(rng) * scale;
        }
    } else {
        std::vector<float> v = values(f, storage, rng);
        std::copy(v.begin(), v.end(), d.begin());
    }
    return d;
}

// stdin lines: "array<TAB>spec<TAB>count<TAB>seed", "matrix<TAB>spec<TAB>m<TAB>n<TAB>ld<TAB>seed" or "parse<TAB>spec"
// stdout: "THROW", the parsed fields, or the element count followed by each float's bits in hex.
int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::vector<std::string> f;
        std::stringstream in(line);
        std::string t;
        while (std::getline(in, t, '\t')) f.push_back(t);
        f.resize(6);
        std::vector<float> out;
        try {
            Spec s = parse(f[1]);
            if (f[0] == "parse") {
                uint32_t b1, b2;
                std::memcpy(&b1, &s.v1, 4);
                std::memcpy(&b2, &s.v2, 4);
                std::printf("%d %d %08x %08x %d %d\n", s.method, s.pattern, b1, b2, s.kl, s.ku);
                continue;
            }
            if (f[0] == "array") out = array(s, std::stol(f[2]), uint32_t(std::stoul(f[3])));
            else out = matrix(s, std::stoi(f[2]), std::stoi(f[3]), std::stoi(f[4]), uint32_t(std::stoul(f[5])));
        } catch (const std::exception&) {
            std::printf("THROW\n");
            continue;
        }
        std::printf("%zu", out.size());
        for (float v : out) { uint32_t b; std::memcpy(&b, &v, 4); std::printf(" %08x", b); }
        std::printf("\n");
    }
    return 0;
}
"""

GRAMMAR_SPECS = [
    # methods and their defaults
    "INDEX", "INDEX_NORM_N1", "INDEX_0_5", "INDEX_NORM_2.5", "INDEX_N0",
    "RANDOM", "RANDOM_1", "RANDOM_NORM_1", "RANDOM_1_1", "RANDOM_10", "RANDOM_2_2", "RANDOM_1_3", "RANDOM_10_0",
    "RANDOM_0_1", "RANDOM_NORM_1E6", "RANDOM_NORM_1EN6", "RANDOM_NORM_5_5",
    "VALUE", "VALUE_NORM_N999", "VALUE_NORM_1", "VALUE_NORM_1E10", "VALUE_0.0009765625", "VALUE_P0", "VALUE_N",
    "VALUE_NORM_-2.5", "VALUE_NORM_0xFF", "VALUE_E", "VALUE_2E3", "VALUE_N1EN3", "VALUE_EN2", "VALUE_1E1E1",
    "VALUE_1E0.5", "VALUE_NE50",
    # special numbers
    "VALUE_NORM_INF", "VALUE_NORM_NAN", "VALUE_NORM_NINF", "VALUE_NORM_NNAN", "RANDOM_INF", "RANDOM_NAN",
    "VALUE_ALTER_ALTER", "VALUE_NORM_EXTREME",
    # negative bounds -> FLT_MAX
    "RANDOM_N5_5", "RANDOM_5_N5", "RANDOM_N1_N1", "RANDOM_BANDED_2_3_N5_5",
    # patterns
    "RANDOM_UPPER_1", "RANDOM_LOWER_1", "RANDOM_DIAG", "RANDOM_ILLCOND", "INDEX_UPPER", "INDEX_ILLCOND",
    "VALUE_DIAG_1", "VALUE_UPPER_3", "VALUE_ALTER_2", "VALUE_ALTER", "INDEX_ALTER", "RANDOM_ALTER_5",
    "RANDOM_EXTREME", "VALUE_EXTREME", "RANDOM_BANDED_1_1", "RANDOM_BANDED_1_1_3_4", "RANDOM_BANDED",
    # unrecognised / degenerate strings
    "RANDOM:-10:10", "FOO_1", "random_1", "", "___", "RANDOM__2", "RANDOM_1.5x_2", "RANDOM_1_2_3",
]
THROWING_SPECS = ["RANDOM_abc", "VALUE_1e-50", "VALUE_1e39", "RANDOM_1_UPPER", "VALUE_NORM_-", "VALUE_1E1e99",
                  "RANDOM_BANDED_x_1"]
MATRIX_SHAPES = [(5, 4, 7), (4, 3, 2), (6, 3, 6), (3, 6, 3), (1, 1, 1)]
SEEDS = [0, 1, 123456, 4294967295]


@pytest.fixture(scope="module")
def cpp(tmp_path_factory):
    """Compile the reference program once; a function that runs a batch of requests through it."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed: cannot build the C++ reference for the fill grammar")
    work = tmp_path_factory.mktemp("cppfill")
    (work / "fill_ref.cpp").write_text(CPP_FILL)
    subprocess.run([gxx, "-std=c++17", "-O2", "-o", str(work / "fill_ref"), str(work / "fill_ref.cpp")],
                   check=True, capture_output=True)

    def run(requests: list[tuple]) -> list:
        text = "".join("\t".join(str(x) for x in r) + "\n" for r in requests)
        out = subprocess.run([str(work / "fill_ref")], input=text, capture_output=True, text=True, check=True)
        results = []
        for req, line in zip(requests, out.stdout.splitlines()):
            if line == "THROW" or req[0] == "parse":
                results.append(None if line == "THROW" else line)
                continue
            words = line.split()
            assert int(words[0]) == len(words) - 1
            results.append(np.array([int(w, 16) for w in words[1:]], dtype=np.uint32))
        assert len(results) == len(requests)
        return results

    return run


def bits(a: np.ndarray) -> np.ndarray:
    assert a.dtype == np.float32
    return a.view(np.uint32)


def test_known_mt19937_42_draws():
    assert mt19937_uint32(42, 3).tolist() == [1608637542, 3421126067, 4083286876]
    assert mt19937_uint32(0, 3).tolist() == [1608637542, 3421126067, 4083286876]  # 0 -> 42
    assert mt19937_uint32(1, 1).tolist() != [1608637542]
    assert effective_seed(2 ** 32) == 42 and effective_seed(2 ** 32 + 5) == 5


def test_uniform_clamps_below_one():
    top = uniform_float(np.array([0xFFFFFFFF, 0], dtype=np.uint32), -1.0, 1.0)
    assert top[0] < 1.0 and top[0] == np.nextafter(np.float32(1), np.float32(0)) * 2 - 1
    assert top[1] == -1.0


def test_parsed_fields_match_cpp(cpp):
    methods, patterns = ("NULLPTR", "INDEX", "RANDOM", "VALUE"), ("NORM", "UPPER", "LOWER", "DIAG", "ALTER",
                                                                  "EXTREME", "ILLCOND", "BANDED")
    specs = GRAMMAR_SPECS + ["RANDOM_BANDED_INF_2.7_3", "RANDOM_BANDED_N2", "NULLPTR_UPPER_3"]
    for spec, line in zip(specs, cpp([("parse", s) for s in specs])):
        method, pattern, v1, v2, kl, ku = line.split()
        got = parse_fill(spec)
        assert (got.method, got.pattern, got.kl, got.ku) == \
            (methods[int(method)], patterns[int(pattern)], int(kl), int(ku)), spec
        assert bits(np.array([got.val1, got.val2], dtype=np.float32)).tolist() == [int(v1, 16), int(v2, 16)], spec


def test_arrays_match_cpp_bit_for_bit(cpp):
    requests = [("array", s, 23, seed) for s in GRAMMAR_SPECS for seed in (0, 7)]
    for req, ref in zip(requests, cpp(requests)):
        assert ref is not None, req
        np.testing.assert_array_equal(bits(make_array(req[1], req[2], req[3])), ref, err_msg=str(req))


def test_matrices_match_cpp_bit_for_bit(cpp):
    requests = [("matrix", s, m, n, ld, seed) for s in GRAMMAR_SPECS for (m, n, ld) in MATRIX_SHAPES
                for seed in SEEDS[:2]]
    requests += [("matrix", s, 6, 5, 8, seed) for s in ("RANDOM_NORM_1", "RANDOM_UPPER", "RANDOM_ILLCOND")
                 for seed in SEEDS]
    requests.append(("matrix", "RANDOM_NORM_1", 64, 64, 70, 7))
    for req, ref in zip(requests, cpp(requests)):
        assert ref is not None, req
        np.testing.assert_array_equal(bits(make_matrix(*req[1:])), ref, err_msg=str(req))


def test_empty_results_match_cpp(cpp):
    requests = [("matrix", "NULLPTR", 4, 4, 4, 0), ("matrix", "RANDOM", 0, 4, 4, 0),
                ("matrix", "RANDOM", 4, -1, 4, 0), ("matrix", "VALUE_NORM_1", 4, 4, 0, 0),
                ("array", "NULLPTR_1", 5, 0), ("array", "RANDOM", 0, 0), ("array", "INDEX", -3, 0)]
    for req, ref in zip(requests, cpp(requests)):
        assert ref is not None and ref.size == 0
        made = make_matrix(*req[1:]) if req[0] == "matrix" else make_array(*req[1:])
        assert made.size == 0 and made.dtype == np.float32


def test_malformed_numbers_throw_in_cpp_and_raise_here(cpp):
    for spec, ref in zip(THROWING_SPECS, cpp([("array", s, 3, 0) for s in THROWING_SPECS])):
        assert ref is None, spec
        with pytest.raises(FillError, match="expected|not a|must be"):
            parse_fill(spec)


def test_complex_matrix_uses_seed_plus_7919_for_imag(cpp):
    seed = 2 ** 32 - 7919  # the imaginary seed wraps to 0, which becomes 42
    re_ref, im_ref, im42 = cpp([("matrix", "RANDOM_NORM_1", 3, 2, 4, seed), ("matrix", "RANDOM_NORM_1", 3, 2, 4, 0),
                                ("matrix", "RANDOM_NORM_1", 3, 2, 4, 42)])
    c = make_complex_matrix("RANDOM_NORM_1", 3, 2, 4, seed)
    assert c.dtype == np.complex64 and c.size == 8
    np.testing.assert_array_equal(bits(np.ascontiguousarray(c.real)), re_ref)
    np.testing.assert_array_equal(bits(np.ascontiguousarray(c.imag)), im_ref)
    np.testing.assert_array_equal(im_ref, im42)
    plain = make_complex_matrix("RANDOM_NORM_1", 3, 2, 4, 5)
    np.testing.assert_array_equal(plain.imag, make_matrix("RANDOM_NORM_1", 3, 2, 4, 5 + 7919))
    assert not np.array_equal(plain.real, plain.imag)


def test_parse_fields():
    banded = parse_fill("RANDOM_BANDED_2_3_N5_5")
    assert (banded.method, banded.pattern, banded.kl, banded.ku, banded.val1, banded.val2) == \
        ("RANDOM", "BANDED", 2, 3, -5.0, 5.0)
    assert banded.recognised and banded.cpp_known
    unknown = parse_fill("RANDOM:-10:10")
    assert (unknown.method, unknown.val1, unknown.recognised, unknown.cpp_known) == ("INDEX", 1.0, False, False)
    assert parse_fill("NULLPTR").method == "NULLPTR"
    assert parse_fill("VALUE").val1 == 0.0 and parse_fill("RANDOM").val1 == 1.0
    assert parse_fill("RANDOM_1.5x_2").notes and not parse_fill("RANDOM_1_2").notes
    assert "ignored" in parse_fill("RANDOM_1_2_3").notes[0]


def test_semantics_spot_checks():
    assert make_array("RANDOM:-10:10", 4, 9).tolist() == [1, 2, 3, 4]
    assert make_array("INDEX_NORM_N1", 3, 0).tolist() == [-1, -2, -3]
    assert make_array("INDEX_ALTER", 4, 0).tolist() == [1, -2, 3, -4]
    lo_max = make_array("RANDOM_N5_5", 200, 3)
    assert lo_max.min() < -1e30 and lo_max.max() < 5  # -FLT_MAX lower bound, not -5
    r = make_array("RANDOM_10", 1000, 3)
    assert r.min() >= -10 and r.max() < 10 and r.min() < -9
    padded = make_matrix("VALUE_NORM_N999", 3, 2, 5, 0)
    assert padded.size == 10 and (padded == -999).all()  # VALUE fills the ld padding
    upper = make_matrix("RANDOM_UPPER_1", 3, 3, 4, 0).reshape(3, 4).T  # rows x cols view of column-major
    assert (upper[np.tril_indices(3, -1)] == 0).all() and (upper[3] == 0).all()  # below diagonal, padding row
    assert (upper[np.triu_indices(3)] != 0).all()
    assert make_matrix("INDEX", 3, 2, 2, 0).tolist() == [1, 2, 3, 4, 0]  # ld < m: storage reaches past ld*n


def test_stof_prefix_rules():
    assert stof_prefix("1.5x") == (1.5, 3)
    assert stof_prefix("0xFF") == (255.0, 4)
    assert stof_prefix("1e") == (1.0, 1)
    assert stof_prefix("0x1p-149")[0] > 0  # exact subnormal: no range error
    assert stof_prefix("3.4028235e38")[0] == FLT_MAX
    for bad in ("abc", "", "1e-40", "3.40282357e38", "-"):
        with pytest.raises(ValueError):
            stof_prefix(bad)


def _strtof(text: str) -> float | None:
    """glibc's strtof over the whole text (what std::stof calls): its value, or None where it sets ERANGE."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.strtof.restype, libc.strtof.argtypes = ctypes.c_float, [ctypes.c_char_p, ctypes.c_void_p]
    ctypes.set_errno(0)
    value = libc.strtof(text.encode(), None)
    return None if ctypes.get_errno() == errno.ERANGE else value


def _stof(text: str) -> float | None:
    try:
        return stof_prefix(text)[0]
    except ValueError:
        return None


def test_stof_agrees_with_glibc_strtof_next_to_float32_midpoints():
    """Each decimal on, just above and just below a float32 midpoint (where a double in between could round the
    other way: the midpoint check of fill._through_double), across normal, subnormal and overflowing magnitudes,
    and random decimals, read to the bit as glibc's strtof reads them, range errors included."""
    rng = np.random.default_rng(7)
    bits = np.concatenate([rng.integers(0x00800000, 0x7F7FFFFF, 300), rng.integers(1, 0x00800000, 30),
                           [0x7F7FFFFF, 0x7F7FFFFE, 0x00800000, 0x00800001, 0x007FFFFF, 0x3F800000]]).astype(np.uint32)
    texts = []
    with localcontext() as exact:
        exact.prec = 400  # every midpoint and its neighbours below written out in full
        for low in bits.view(np.float32):
            high = 2.0 ** 128 if low == FLT_MAX else float(np.nextafter(low, np.float32(np.inf)))
            mid = (Decimal(float(low)) + Decimal(high)) / 2  # 25 significant bits: exact
            tiny = Decimal(10) ** (mid.adjusted() - 40)
            texts += [str(mid), str(mid + tiny), str(mid - tiny), repr(float(low))]
    texts += [f"{rng.integers(1, 10 ** 12)}e{rng.integers(-50, 40)}" for _ in range(300)]
    texts += ["0", "0.000", "1e-46", "1.4e-45", "3.4028235677973366e38", "3.4028235677973367e38", "1e39"]
    wrong = [(t, _stof(t), _strtof(t)) for t in texts
             if (None if _stof(t) is None else np.float32(_stof(t)).tobytes())
             != (None if _strtof(t) is None else np.float32(_strtof(t)).tobytes())]
    assert not wrong, wrong[:5]


def test_stod_reports_underflow_where_glibc_strtod_does():
    """Just under DBL_MIN: a result rounded up to DBL_MIN is still an underflow (ERANGE) where it is tiny after
    rounding to 53 bits with an unbounded exponent, as for float32 above."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.strtod.restype, libc.strtod.argtypes = ctypes.c_double, [ctypes.c_char_p, ctypes.c_void_p]
    with localcontext() as exact:
        exact.prec = 1200
        texts = [str(Decimal(2) ** -1022 - Decimal(k) / 8 * Decimal(2) ** -1075) for k in range(12)]
    for text in texts + ["4.9e-324", "1e-400", "2.2250738585072014e-308", "1.7976931348623158e308", "1.8e308"]:
        ctypes.set_errno(0)
        value = libc.strtod(text.encode(), None)
        if ctypes.get_errno() == errno.ERANGE:
            with pytest.raises(ValueError):
                stod_prefix(text)
        else:
            assert stod_prefix(text)[0] == value, text


def test_normal_extension_recipe_and_moments():
    spec = parse_fill("NORMAL_N2.5_0.7")
    assert (spec.method, spec.val1, spec.recognised, spec.cpp_known) == ("NORMAL", -2.5, True, False)
    values = make_array("NORMAL_N2.5_0.7", 50_000, 11)
    z = np.random.RandomState(11).standard_normal(50_000)
    np.testing.assert_array_equal(values, (-2.5 + float(np.float32(0.7)) * z).astype(np.float32))
    assert abs(values.mean() + 2.5) < 0.02 and abs(values.std() - 0.7) < 0.02
    assert np.array_equal(make_array("NORMAL_3_1.5", 10, 0), make_array("NORMAL_3_1.5", 10, 42))
    matrix = make_matrix("NORMAL_3_1.5", 2, 3, 4, 1)
    assert matrix.size == 12 and (matrix != 0).all()  # padding filled like NORM
    for bad in ("NORMAL_0_N1", "NORMAL_UPPER_1", "NORMAL_x"):
        with pytest.raises(FillError):
            parse_fill(bad)


def test_bit_comparison_catches_a_rounding_slip(cpp):
    """Negative control: computing c*(hi-lo)+lo in double and rounding once differs from the C++ somewhere."""
    (ref,) = cpp([("array", "RANDOM_10", 4000, 3)])
    raw = mt19937_uint32(3, 4000).astype(np.float64)
    naive = (raw / 2.0 ** 32 * 20.0 - 10.0).astype(np.float32)
    assert not np.array_equal(bits(naive), ref)
    np.testing.assert_array_equal(bits(make_array("RANDOM_10", 4000, 3)), ref)


# --- reused_draws: the table generator's per-row stream cache ------------------------------------------------------

REUSED_FILLS = [("NORMAL_4.0_0.1", 6, 5, 7), ("NORMAL_N0.3_2", 6, 5, 7), ("RANDOM_1_1", 6, 5, 7),
                ("RANDOM_0.05_0.05", 6, 5, 6), ("RANDOM_UPPER_3", 6, 6, 6), ("NORMAL_1_0.5", 9, 9, 9),
                ("NORMAL_1_0.5", 3, 2, 3), ("RANDOM_2_2", 2, 2, 2), ("RANDOM_2_2", 9, 9, 10)]


def _fills(seeds: tuple[int, ...]) -> list[np.ndarray]:
    """Real and complex fills of several specs, shorter and longer ones of one seed, in the order a generator's
    variants ask for them."""
    out = []
    for seed in seeds:
        for spec, m, n, ld in REUSED_FILLS:
            out += [make_matrix(spec, m, n, ld, seed), make_complex_matrix(spec, m, n, ld, seed),
                    make_array(spec, m * n, seed)]
    return out


def test_reused_draws_give_the_uncached_fills_bit_for_bit(monkeypatch):
    """Under `reused_draws` every fill is the one made without it, whether its stream was drawn for it, served as a
    prefix of a longer one or drawn again longer; and the streams are really reused (fewer draws)."""
    plain = _fills((5, 0, 42, 7))  # 0 and 42 are one effective seed
    calls = []
    for name in ("_standard_normal", "_raw_uint32"):
        real = getattr(fill, name)
        monkeypatch.setattr(fill, name, lambda seed, count, real=real: calls.append(count) or real(seed, count))
    with fill.reused_draws():
        reused = _fills((5, 0, 42, 7))
    assert len(calls) < len(plain) / 3  # reused: most fills drew nothing
    assert len(reused) == len(plain)
    for got, want in zip(reused, plain):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_reused_draws_keep_seeds_and_kinds_apart():
    """Negative control for the check above: a stream served to another seed, or a uniform fill served the normal
    stream of its seed, would give equal arrays here; the cache keeps each (kind, seed) apart."""
    with fill.reused_draws():
        normal = [make_array("NORMAL_0_1", 50, seed) for seed in (5, 6, 5)]
        uniform = make_array("RANDOM_1_1", 50, 5)
    assert normal[0].tobytes() == normal[2].tobytes() and normal[0].tobytes() != normal[1].tobytes()
    assert not np.array_equal(uniform, normal[0]) and np.array_equal(uniform, make_array("RANDOM_1_1", 50, 5))


def test_kept_streams_are_read_only_and_bounded(monkeypatch):
    """A kept stream cannot be written by a caller (that would change every later fill of its seed), a stream
    over the byte bound is not kept at all (drawn again on each fill), and a stream drawn again longer gives back
    the bytes of the shorter one."""
    with fill.reused_draws():
        raw = mt19937_uint32(3, 10)
        with pytest.raises(ValueError, match="read-only"):
            raw[0] = 1
    draws = []
    monkeypatch.setattr(fill, "_standard_normal", lambda seed, count: draws.append(count) or np.zeros(count))
    with fill.reused_draws(max_bytes=8 * 100):
        make_array("NORMAL_0_1", 60, 1), make_array("NORMAL_0_1", 60, 1)  # fits: drawn once
        make_array("NORMAL_0_1", 41, 2), make_array("NORMAL_0_1", 41, 2)  # over what is left: drawn twice
        make_array("NORMAL_0_1", 100, 1), make_array("NORMAL_0_1", 100, 1)  # replaces the 60: fits, drawn once
    assert draws == [60, 41, 41, 100]


def test_fills_outside_reused_draws_keep_nothing():
    """The runner's fills (no `reused_draws` around them) are fresh writable arrays, and the cache ends with its
    block, on an exception too, and belongs to the thread that entered it."""
    import threading

    assert not fill.draws_reused()
    with pytest.raises(RuntimeError), fill.reused_draws():
        assert fill.draws_reused()
        seen = []
        worker = threading.Thread(target=lambda: seen.append(fill.draws_reused()))
        worker.start(), worker.join()
        assert seen == [False]
        raise RuntimeError
    assert not fill.draws_reused()
    first, second = mt19937_uint32(3, 10), mt19937_uint32(3, 10)
    assert first.flags.writeable and not np.shares_memory(first, second)
