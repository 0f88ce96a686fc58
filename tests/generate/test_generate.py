"""The seeded case-table generators: reproducibility, table conventions, expected statuses, runtime budget."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.model import abi
from harness import generate
from harness.model.abi import Status
from harness.cli import main
import harness.ops.csymm.generate as csymm
import harness.ops.sgemm_strided_batched.generate as sgemm_strided_batched
from harness.generate import cells
from harness.generate.cells import DEFAULT_SEED, MERE_THRESHOLD
from tables import committed_rows

ROOT = Path(__file__).resolve().parents[2]
OPS = ("csymm", "sgemm_strided_batched")
NAME = re.compile(r"TC_(L0|L1|ED|EX|PF)_\d{4}")
#: How many tests share a table's regeneration: csymm's is minutes of CPU, so its parts run on both xdist workers.
PARTS = {"csymm": 4, "sgemm_strided_batched": 1}


@pytest.fixture(scope="module", params=OPS)
def table(request):
    """The committed rows (tables.committed_rows: proven to be the generator's by the check below)."""
    op = request.param
    return op, committed_rows(op)


@pytest.mark.slow  # the generator itself: minutes of CPU per table
@pytest.mark.parametrize("op, part", [(op, i) for op, n in PARTS.items() for i in range(n)])
def test_committed_table_is_the_seeded_regeneration(op, part):
    """The one byte-for-byte check: the generator itself runs (never the cache), each part of the test on every
    n-th row (rows are conditioned one by one), so the parts together regenerate the table once and compare every
    byte of it: the lines above the rows, each row's line, the count, LF endings."""
    count = PARTS[op]
    lines = (ROOT / "cases" / f"{op}_test.csv").read_bytes().decode("ascii").split("\n")
    header = generate.header_lines(op)
    assert lines[:len(header)] == header and lines[-1] == ""
    body = lines[len(header):-1]
    rows = generate.module(op).generate(DEFAULT_SEED, part=(part, count))
    assert [generate.row_line(op, row) for row in rows] == body[part::count]
    assert len(body) == cells.PRECISION_ROWS + cells.PERF_ROWS


def test_the_parts_of_a_table_are_its_rows_dealt_out():
    """The split the check above relies on: the parts of a (cheap, unconditioned) table are its rows dealt out."""
    whole = cells.table("x", 5, ("case_name", "random_seed"), *[lambda rng: [{}]] * 3,
                        lambda rng, count: [{}] * count, lambda rng: [{}] * cells.PERF_ROWS)
    parts = [cells.table("x", 5, ("case_name", "random_seed"), *[lambda rng: [{}]] * 3,
                         lambda rng, count: [{}] * count, lambda rng: [{}] * cells.PERF_ROWS, part=(i, 3))
             for i in range(3)]
    assert sorted(sum(parts, []), key=lambda r: whole.index(r)) == whole
    assert parts[1] == whole[1::3] and parts[1] != whole[0::3]


def test_cli_generate_writes_the_same_bytes_and_the_seed_matters(tmp_path):
    """The command writes what the generator makes (ssymm: a small table, so another seed costs a second)."""
    assert main(["cases", "generate", "ssymm", "--out", str(tmp_path / "a.csv")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (ROOT / "cases" / "ssymm_test.csv").read_bytes()
    assert main(["cases", "generate", "ssymm", "--seed", "7", "--out", str(tmp_path / "b.csv")]) == 0
    assert (tmp_path / "b.csv").read_bytes() != (tmp_path / "a.csv").read_bytes()
    assert main(["cases", "generate", "no_such_op", "--out", str(tmp_path / "c.csv")]) == 3


def test_header_counts_names_and_seeds(table):
    op, rows = table
    lines = (ROOT / "cases" / f"{op}_test.csv").read_text().splitlines()
    assert lines[1] == "# harness-extensions: NORMAL"  # declared once, so lint does not warn per cell
    assert tuple(lines[2].split(",")) == generate.module(op).HEADER
    names = [r["case_name"] for r in rows]
    assert len(rows) == 1200 and len(set(names)) == 1200
    assert all(NAME.fullmatch(n) for n in names)
    assert sum(n.startswith("TC_PF_") for n in names) == 200
    assert all(n.startswith("TC_PF_") for n in names[1000:])
    for family in ("TC_L0", "TC_L1", "TC_ED", "TC_EX"):
        assert any(n.startswith(family) for n in names[:1000])
    seeds = [int(r["random_seed"]) for r in rows]
    assert len(set(seeds)) == 1200 and all(0 < s < 2 ** 32 for s in seeds)
    assert all(r["description"] and re.fullmatch(r"[A-Za-z0-9_.-]+", r["description"]) for r in rows)


def test_cell_conventions(table):
    op, rows = table
    enum_cols = {"side": cells.SIDES, "uplo": cells.UPLOS, "transA": cells.TRANS, "transB": cells.TRANS}
    for r in rows:
        assert "INVALID" not in r.values() and not any(v.lower().startswith("0x") for v in r.values())
        for col, names in enum_cols.items():
            if col in r:
                assert r[col] in names and r[col].startswith("ACLBLAS_") or re.fullmatch(r"-?\d+", r[col])
        assert r["expect_result"].startswith("ACLBLAS_STATUS_")
        dims = [int(r[d]) for d in ("m", "n", "k") if d in r]
        if r["expect_result"] == "ACLBLAS_STATUS_SUCCESS":
            assert r["mere_threshold"] == MERE_THRESHOLD
            assert r["mare_multiplier"] == ("50" if max(dims) >= 2048 else "10")
        else:
            assert (r["mere_threshold"], r["mare_multiplier"]) == ("0", "0")


def test_normal_fills_in_range_and_half_of_ordinary_inputs(table):
    _, rows = table
    # perf rows are left out: the generator gives them sign-coherent inputs, for the official gate (conditioning)
    fills = [r[c] for r in rows if not r["case_name"].startswith("TC_PF_") for c in ("a_fill", "b_fill", "c_fill")]
    normal = [f for f in fills if f.startswith("NORMAL_")]
    for f in normal:
        mean, sigma = (float(x.replace("N", "-")) for x in f.split("_")[1:])
        assert -5 <= mean <= 5 and 0.1 <= sigma <= 2
    uniform = [f for f in fills if re.fullmatch(r"RANDOM_[0-9.]+_[0-9.]+", f)]
    assert fills.count(cells.UNIFORM) > 0.2 * len(uniform)  # the signed [-5, 5) inputs stay the common uniform
    assert 0.3 < len(normal) / (len(normal) + len(uniform)) < 0.7


def test_special_inputs_are_not_crossed_with_ordinary_rows(table):
    _, rows = table
    special = set(cells.SPECIAL_FILLS)
    for r in rows:
        if {r["a_fill"], r["b_fill"], r["c_fill"]} & special:
            assert r["case_name"].startswith("TC_EX_"), r["case_name"]


def test_null_handle_and_invalid_enum_statuses(table):
    op, rows = table
    mod = generate.module(op)
    for r in rows:
        p = mod.parse_row(r)
        if "handle_null" in r["description"]:
            assert r["expect_result"] == "ACLBLAS_STATUS_HANDLE_IS_NULLPTR"
        elif op == "csymm" and (p["side"] not in (abi.SIDE_LEFT, abi.SIDE_RIGHT)
                                or p["uplo"] not in (abi.UPPER, abi.LOWER)):
            assert r["expect_result"] == "ACLBLAS_STATUS_INVALID_ENUM"
        elif op != "csymm" and not {p["transA"], p["transB"]} <= {abi.OP_N, abi.OP_T, abi.OP_C}:
            assert r["expect_result"] == "ACLBLAS_STATUS_INVALID_VALUE"


def _csymm_row(**cells_: str) -> dict[str, str]:
    row = dict.fromkeys(csymm.HEADER, "")
    row.update(description="x", side="ACLBLAS_SIDE_LEFT", uplo="ACLBLAS_UPPER", m="8", n="6", alpha_real="1.0",
               alpha_imag="0.0", beta_real="0.5", beta_imag="0.0", a_fill="RANDOM_5_5", b_fill="RANDOM_5_5",
               c_fill="RANDOM_5_5", expect_result="ACLBLAS_STATUS_SUCCESS")
    row.update(cells_)
    return row


def _first(mod, row) -> Status:
    found = mod.faults(mod.parse_row(row))
    return found[0][1] if found else Status.SUCCESS


@pytest.mark.parametrize("cells_, status", [
    ({}, Status.SUCCESS),
    ({"description": "handle_null", "side": "999"}, Status.HANDLE_IS_NULLPTR),
    ({"side": "999", "m": "-1"}, Status.INVALID_ENUM),
    ({"side": "ACLBLAS_UPPER"}, Status.SUCCESS),  # unknown text in side reads as LEFT, as parseSideMode does
    ({"side": "121"}, Status.INVALID_ENUM),       # ...but the integer 121 is passed through and rejected
    ({"m": "-1", "lda": "0"}, Status.INVALID_VALUE),
    ({"side": "ACLBLAS_SIDE_RIGHT", "lda": "6"}, Status.SUCCESS),        # RIGHT: lda >= n suffices
    ({"side": "ACLBLAS_SIDE_LEFT", "lda": "6"}, Status.INVALID_VALUE),   # LEFT: lda >= m
    ({"m": "0", "a_fill": "NULLPTR", "c_fill": "NULLPTR"}, Status.SUCCESS),
    ({"c_fill": "NULLPTR", "beta_real": "0.0"}, Status.SUCCESS),         # beta == 0: C is not needed
    ({"c_fill": "NULLPTR", "beta_real": "0.0", "beta_imag": "2.0"}, Status.INVALID_VALUE),
    ({"m": "0", "ldb": "0"}, Status.SUCCESS),           # csymm_param.h: an ld cell <= 0 is the compact minimum
    ({"ldb": "-3"}, Status.SUCCESS),
    ({"ldb": "3"}, Status.INVALID_VALUE),                # a positive ld below the minimum is rejected
])
def test_csymm_check_order(cells_, status):
    assert _first(csymm, _csymm_row(**cells_)) == status


def _sgemm_row(**cells_: str) -> dict[str, str]:
    row = dict.fromkeys(sgemm_strided_batched.HEADER, "")
    row.update(description="x", transA="ACLBLAS_OP_N", transB="ACLBLAS_OP_N", m="8", n="6", k="4", alpha="1.0",
               beta="0.5", batchCount="2", a_fill="RANDOM_5_5", b_fill="RANDOM_5_5", c_fill="RANDOM_5_5",
               expect_result="ACLBLAS_STATUS_SUCCESS")
    row.update(cells_)
    return row


@pytest.mark.parametrize("cells_, status", [
    ({}, Status.SUCCESS),
    ({"description": "a_handle_null_row", "transA": "999"}, Status.HANDLE_IS_NULLPTR),
    ({"transB": "110", "k": "-1"}, Status.INVALID_VALUE),
    ({"transA": "ACLBLAS_OP_T", "lda": "4"}, Status.SUCCESS),             # A stored k x m under T
    ({"transA": "ACLBLAS_OP_T", "lda": "3"}, Status.INVALID_VALUE),
    ({"transB": "ACLBLAS_OP_C", "ldb": "4"}, Status.INVALID_VALUE),       # B stored n x k under C: ldb >= n
    ({"batchCount": "0", "a_fill": "NULLPTR", "c_fill": "NULLPTR"}, Status.SUCCESS),
    ({"k": "0", "a_fill": "NULLPTR"}, Status.SUCCESS),
    ({"c_fill": "NULLPTR"}, Status.INVALID_VALUE),
])
def test_sgemm_check_order(cells_, status):
    assert _first(sgemm_strided_batched, _sgemm_row(**cells_)) == status


def test_multi_fault_rows_pin_the_order(table):
    """Two-fault rows exist whose faults map to different statuses, so only the right order passes them."""
    op, rows = table
    mod = generate.module(op)
    pinning = 0
    for r in rows:
        found = mod.faults(mod.parse_row(r))
        if len(found) >= 2:
            assert r["expect_result"] == cells.status_cell(found[0][1])
            pinning += len({s for _, s in found}) > 1
    assert pinning >= 10


def test_render_rejects_a_row_without_its_intended_fault():
    spec = csymm._spec(abi.SIDE_LEFT, abi.UPPER, 8, 8, tag="claims_fault")
    with pytest.raises(AssertionError, match="intended"):
        csymm._render(spec, ("invalid_lda",))


def test_taskbook_and_required_perf_rows():
    rows = {r["case_name"]: r for r in committed_rows("csymm")}
    for i, (m, n, side, uplo) in enumerate(csymm.TASKBOOK, start=1):
        r = rows[f"TC_PF_{i:04d}"]
        p = csymm.parse_row(r)
        assert (p["m"], p["n"], p["side"], p["uplo"]) == (m, n, side, uplo)
        assert p["alpha"] == 1 and p["beta"] == 0 and r["lda"] == r["ldb"] == r["ldc"] == ""
    perf = [sgemm_strided_batched.parse_row(r) for r in committed_rows("sgemm_strided_batched")
            if r["case_name"].startswith("TC_PF_")]
    shapes = {(p["m"], p["n"], p["k"], p["batchCount"]) for p in perf}
    assert set(sgemm_strided_batched.REQUIRED_PERF) <= shapes


def test_runtime_budget(table):
    op, rows = table
    mod = generate.module(op)
    params = [(r["case_name"].startswith("TC_PF_"), mod.parse_row(r)) for r in rows]
    precision = [p for perf, p in params if not perf]
    perf = [mod.flops(p) for is_perf, p in params if is_perf]
    assert sum(map(mod.flops, precision)) <= 400e9
    big = [p for p in precision if max(p.get(d, 0) for d in ("m", "n", "k")) >= 2048]
    assert 1 <= len(big) <= 3
    small = [p for p in precision if max(p.get(d, 0) for d in ("m", "n", "k")) <= 257]
    assert len(small) >= 0.95 * len(precision)
    assert sum(perf) <= 2.5e12 and sum(f > 256e9 for f in perf) <= 4
    assert max(max(p.get(d, 0) for d in ("m", "n", "k")) for _, p in params) == 4096


@pytest.mark.parametrize("op", OPS)
def test_committed_tables_load_without_errors(op):
    from harness.tables.reader import ERROR, read_table

    t = read_table(str(ROOT / "cases" / f"{op}_test.csv"))
    assert len(t.rows) == 1200
    assert [d for d in t.diagnostics if d.severity == ERROR] == []
    assert [str(d) for d in t.diagnostics if "NORMAL" not in d.message] == []
