"""One package per operator: no other harness module names an operator, every package has the whole interface,
and a library lacking an operator's symbol skips that operator's rows while the others run."""
from __future__ import annotations

import ast
from pathlib import Path

import foreign
import pytest

from harness.tables.load import load_cases
from harness.run import row_judge
from harness.model import operators as ops
from harness.backends import open_backend

ROOT = Path(__file__).resolve().parents[2]
#: What may name an operator: the packages, their registry, the goldens. The Ascend kernel modules (build of the
#: emulator library, its backend, and harness/kernels/: the kernels' cost model, precision probes and the 3M
#: composition) are about the Ascend C sources of two operators, not the harness's operator model.
ALLOWED = ("harness/ops/", "harness/model/operators.py", "golden/", "harness/backends/build.py",
           "harness/backends/ascend_cpu.py", "harness/kernels/")
INTERFACE = ("NAME", "COLUMNS", "REQUIRED", "DEFAULTS", "GATE", "Args", "SYMBOL", "ARGTYPES", "CALLS", "parse",
             "buffers", "golden_result",
             "scalars", "sample_problem", "output_overlap", "accumulates", "error_scale", "gate", "flops",
             "buffer_bytes", "bytes_needed", "expected_workspace_bytes", "baseline_params", "invoke")


def _words(op: str) -> set[str]:
    """The spellings of an operator a module could use: its name and its C symbol (any case)."""
    return {op.lower(), ops.get(op).SYMBOL.lower()}


def naming(source: str) -> set[str]:
    """Operator names used by the code of a module: identifiers, attribute and import names, and string constants
    that are not docstrings (docs may give an operator as an example)."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            texts.append(node.id)
        elif isinstance(node, ast.Attribute):
            texts.append(node.attr)
        elif isinstance(node, ast.alias):
            texts.append(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.arg)):
            texts.append(getattr(node, "name", None) or node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            texts.append(node.value)
    lowered = " ".join(texts).lower()
    return {op for op in ops.names() if any(w in lowered for w in _words(op))}


def test_no_module_outside_the_packages_names_an_operator():
    offenders = {}
    for path in sorted((ROOT / "harness").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(ALLOWED):
            continue
        found = naming(path.read_text())
        if found:
            offenders[rel] = sorted(found)
    assert offenders == {}


def test_family_modules_name_no_operator():
    """What a family shares is the family's: a family module that named one of its operators would be that
    operator's code in the wrong room."""
    families = sorted((ROOT / "harness" / "ops").glob("*_family.py"))
    assert [p.name for p in families] == ["gemm_family.py", "symm_family.py"]
    assert {p.name: naming(p.read_text()) for p in families} == {p.name: set() for p in families}


def test_the_scan_finds_names_in_code_but_not_in_docstrings():
    assert naming('"""An example: cases/ssymm_test.csv."""\nx = 1\n') == set()
    assert naming("from harness.ops import ssymm\n") == {"ssymm"}
    assert naming('LIB = "aclblasSgemmBatched"\n') == {"sgemm_batched"}
    assert naming("def f(sgemm_strided_batched_args):\n    return csymm.flops\n") == {
        "sgemm_strided_batched", "csymm"}


@pytest.mark.parametrize("op", ops.names())
def test_every_package_has_the_interface_and_its_parts(op):
    spec = ops.get(op)
    assert [name for name in INTERFACE if not hasattr(spec, name)] == []
    assert spec.NAME == op and set(spec.CALLS) <= {"aclblas", "cublas"}
    assert ops.part(op, "generate").OP == op
    assert ops.part(op, "coverage").REQUIRED
    assert ops.part(op, "no_such_part") is None


#: aclblasSsymm only: C = beta * C when alpha == 0 (all the rows below need), row-major, validation skipped.
SSYMM_ONLY = foreign.HANDLE + """
extern "C" aclblasStatus_t aclblasSsymm(aclblasHandle_t, aclblasSideMode_t, aclblasFillMode_t, int64_t m,
    int64_t n, const float*, const float*, int64_t, const float*, int64_t, const float* beta, float* C, int64_t ldc)
{
    for (int64_t i = 0; i < m; ++i) for (int64_t j = 0; j < n; ++j) C[i * ldc + j] *= *beta;
    return ACLBLAS_STATUS_SUCCESS;
}
"""


def _tables(tmp_path: Path) -> list[Path]:
    ssymm = tmp_path / "ssymm_test.csv"
    ssymm.write_text("case_name,description,side,uplo,m,n,alpha,lda,ldb,beta,ldc,a_fill,b_fill,c_fill\n"
                     "S1,scale,LEFT,UPPER,4,3,0,4,3,0.5,3,RANDOM_0_1,RANDOM_0_1,RANDOM_0_1\n")
    sgemm = tmp_path / "sgemm_batched_test.csv"
    sgemm.write_text("case_name,description,transA,transB,m,n,k,alpha,beta,batchCount\n"
                     "G1,basic,N,N,4,3,2,1.0,0.0,2\n")
    return [ssymm, sgemm]


def _verdicts(library: str | None, tables: list[Path]) -> dict[str, tuple[str, str]]:
    backend = open_backend("cpu", operator_lib=library)
    try:
        return {c.name: (r["verdict"], r["reason"]) for c in load_cases(tables)
                for r in [row_judge.run_case(c, backend)]}
    finally:
        backend.close()


def test_a_library_without_an_operator_skips_only_that_operators_rows(tmp_path):
    library = foreign.build_library(tmp_path, SSYMM_ONLY)
    got = _verdicts(str(library), _tables(tmp_path))
    assert got["S1"][0] == "PASS"
    assert got["G1"][0] == "SKIP" and got["G1"][1] == f"{library} does not export aclblasSgemmBatched"


def test_the_same_rows_run_where_the_library_has_both(tmp_path):
    """Negative control: the twin exports both operators, so nothing is skipped."""
    assert {v for v, _ in _verdicts(None, _tables(tmp_path)).values()} == {"PASS"}
