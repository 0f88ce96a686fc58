"""`harness check-kernels` and harness/kernels/kernel_check.py: launch rewriting, stand-in generation on a fake header tree,
negative-control semantics and the skip path run everywhere; the real check needs asc-devkit headers (opt-in)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness import cli
from harness.kernels import kernel_check as kc

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="requires g++")


def test_rewrite_launch_keeps_config_and_arguments():
    src = "kern<<<numBlocks, nullptr, stream>>>(a, b, tiling);"
    assert kc.rewrite_launches(src) == "(asc_check_launch(numBlocks, nullptr, stream), kern)(a, b, tiling);"


def test_rewrite_launch_templated_and_multiline():
    src = "k<float, 2><<<\n  n,\n  nullptr, s>>>(x);\nint y = a << 3;"
    out = kc.rewrite_launches(src)
    assert "(asc_check_launch(n,\n  nullptr, s), k<float, 2>)(x);" in out
    assert "a << 3" in out and "<<<" not in out


def test_rewrite_leaves_code_without_launches_alone():
    src = "x = a << b >> c; if (p < q && r > s) {}"
    assert kc.rewrite_launches(src) == src


def test_skip_without_header_variables(monkeypatch, capsys):
    monkeypatch.delenv(kc.ENV_DEVKIT, raising=False)
    monkeypatch.delenv(kc.ENV_CPUDEBUG, raising=False)
    assert cli.main(["check-kernels"]) == 3
    assert kc.SKIP_MESSAGE in capsys.readouterr().out


def test_skip_when_variables_name_no_headers(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(kc.ENV_DEVKIT, str(tmp_path / "nope"))
    monkeypatch.setenv(kc.ENV_CPUDEBUG, str(tmp_path))
    assert cli.main(["check-kernels"]) == 3
    assert kc.SKIP_MESSAGE in capsys.readouterr().out


def test_every_operator_source_and_negative_control_is_listed():
    found = {s.path.name: s for s in kc.sources()}
    for name in ("csymm_kernel.cpp", "csymm_host.cpp", "sgemm_strided_batched_kernel.cpp",
                 "sgemm_strided_batched_host.cpp", "aclblas_handle.cpp"):
        assert name in found and not found[name].expect_fail
    assert found["csymm_host.cpp"].kind == "host" and found["csymm_kernel.cpp"].kind == "kernel"
    negatives = [s for s in found.values() if s.expect_fail]
    assert len(negatives) >= 3
    assert all(kc.expected_errors(s.path) for s in negatives), "every control names the error it must provoke"


def _fake_tree(root: Path, body: str) -> kc.HeaderRoots:
    """A miniature asc-devkit + cpudebug: one entry header that leans on undeclared CCE-style builtins."""
    (root / "devkit/include").mkdir(parents=True)
    (root / "cpudebug/include").mkdir(parents=True)
    (root / "cpudebug/include/stub_def.h").write_text("#pragma once\n#define __aicore__\n#define __gm__\n"
                                                       "#define __global__\n")
    (root / "devkit/include/kernel_operator.h").write_text(
        f'#pragma once\n#include <cstdint>\n#include "stub_def.h"\n#include "stub_fun.h"\n{body}\n')
    return kc.HeaderRoots(root / "devkit", root / "cpudebug")


FAKE_API = """
__aicore__ inline void Barrier(pipe_t p) { pipe_barrier(p); }
__aicore__ inline int64_t Quant() { return static_cast<int64_t>(QuantMode_t::F322F16); }
__aicore__ inline void Move(__gm__ float* dst, __gm__ float* src) {
    copy_gm_to_ubuf(dst, src, 0, NORM);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    int64_t id = get_block_idx() + 1;
    (void)id;
    Barrier(PIPE_ALL);
}
template <typename T> struct IsFloat { static constexpr bool value = false; };
template <> struct IsFloat<float> { static constexpr bool value = true; };
template <typename T> __aicore__ inline void OnlyFloat(T) { static_assert(IsFloat<T>::value, "only float here"); }
"""


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    root = tmp_path_factory.mktemp("fake")
    roots = _fake_tree(root, FAKE_API)
    probe = root / "probe.cpp"
    probe.write_text('#include "kernel_operator.h"\n')
    standin = kc.generate_standin(roots, root / "work", probe=probe, log=lambda *_: None)
    return root, roots, standin


def test_standin_grows_until_the_probe_compiles(fake):
    _, _, standin = fake
    assert standin.residual_errors == 0 and standin.rounds >= 2
    text = (standin.path / "stub_fun.h").read_text()
    assert "enum pipe_t : int64_t {" in text and "PIPE_MTE2" in text  # unscoped: enumerators named like the type
    assert "enum class QuantMode_t : int64_t { F322F16" in text  # scoped, member mined from X::Y uses
    assert "copy_gm_to_ubuf(As&&...)" in text and "constexpr int64_t NORM" in text
    assert "inline void set_flag(" in text and "inline int64_t get_block_idx(" in text


def test_standin_is_cached_per_header_tree(fake):
    root, roots, standin = fake
    again = kc.generate_standin(roots, root / "work", probe=root / "probe.cpp", log=lambda *_: None)
    assert again.path == standin.path and again.rounds == 0


def test_standin_reports_what_it_cannot_fix(tmp_path):
    roots = _fake_tree(tmp_path, "static_assert(sizeof(int) == 3, \"real header error\");")
    probe = tmp_path / "probe.cpp"
    probe.write_text('#include "kernel_operator.h"\n')
    standin = kc.generate_standin(roots, tmp_path / "work", probe=probe, log=lambda *_: None)
    assert standin.residual_errors > 0


def _check(fake, name: str, code: str, expect_fail: bool, expected: str = "") -> kc.FileResult:
    root, roots, standin = fake
    src = root / name
    src.write_text(f"// expect-error: {expected}\n" * bool(expected) + '#include "kernel_operator.h"\n' + code)
    return kc.check_source(kc.Source(src, "kernel", expect_fail), roots, standin.path, root / "work")


def test_clean_kernel_with_launch_passes(fake):
    code = ("extern \"C\" __global__ __aicore__ void k(__gm__ float* x) { Move(x, x); OnlyFloat(1.0f); }\n"
            "void k_do(uint32_t n, void* s, float* x) { k<<<n, nullptr, s>>>(x); }\n")
    result = _check(fake, "clean.cpp", code, expect_fail=False)
    assert result.errors == [] and result.ok


def test_wrong_launch_arguments_are_findings(fake):
    code = ("extern \"C\" __global__ __aicore__ void k(__gm__ float* x) { Move(x, x); }\n"
            "void k_do(uint32_t n, void* s, float* x) { k<<<n, nullptr, s>>>(x, x); }\n")
    result = _check(fake, "badlaunch.cpp", code, expect_fail=False)
    assert result.errors and not result.ok


def test_negative_control_counts_only_with_its_expected_error(fake):
    bites = _check(fake, "neg_ok.cpp", "void f() { OnlyFloat(1); }\n", True, "only float here")
    assert bites.errors and bites.ok
    wrong_reason = _check(fake, "neg_other.cpp", "void f() { undeclared_thing_xyz(1); }\n", True, "only float here")
    assert wrong_reason.errors and not wrong_reason.ok and wrong_reason.missing_expected == ["only float here"]
    not_caught = _check(fake, "neg_clean.cpp", "void f() { OnlyFloat(1.0f); }\n", True, "only float here")
    assert not not_caught.errors and not not_caught.ok


def test_real_headers_check_is_clean_and_every_control_fails(capsys):
    """The opt-in check itself (minutes): needs ASC_DEVKIT_ROOT and ASC_CPUDEBUG_ROOT."""
    if kc.header_roots() is None:
        pytest.skip("requires asc-devkit headers")
    assert cli.main(["check-kernels"]) == 0, capsys.readouterr().out


VERSION_CHECK = Path(__file__).resolve().parents[2] / "operators" / "ascend" / "cmake" / "asc_devkit_version.cmake"


def _version_check(tmp_path, text: str | None, script: Path = VERSION_CHECK) -> subprocess.CompletedProcess:
    header = tmp_path / "asc_devkit_version.h"
    if text is not None:
        header.write_text(text)
    return subprocess.run(["cmake", f"-DASC_VERSION_HEADER={header}", "-P", str(script)], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
@pytest.mark.parametrize("major, minor, accepted", [(9, 0, False), (9, 1, True), (9, 12, True), (10, 0, True),
                                                    (10, 3, True), (8, 5, False)])
def test_the_asc_devkit_version_check_compares_versions(tmp_path, major, minor, accepted):
    done = _version_check(tmp_path, f"#define ASC_DEVKIT_MAJOR {major}\n#define ASC_DEVKIT_MINOR {minor}\n")
    assert (done.returncode == 0) == accepted, done.stderr
    if not accepted:
        assert f"asc-devkit {major}.{minor}" in done.stderr and "need 9.1 or later" in done.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
def test_the_version_check_rejects_a_missing_header_and_the_old_test_rejected_10_0(tmp_path):
    assert "asc-devkit 0.0" in _version_check(tmp_path, None).stderr
    # negative control: the test before (MAJOR >= 9 AND MINOR > 0) turns a 10.0 release away
    old = tmp_path / "old.cmake"
    old.write_text(VERSION_CHECK.read_text().replace('if("${ASC_DEVKIT_MAJOR}.${ASC_DEVKIT_MINOR}" VERSION_LESS "9.1")',
                                                     "if(NOT (ASC_DEVKIT_MAJOR GREATER_EQUAL 9 AND "
                                                     "ASC_DEVKIT_MINOR GREATER 0))"))
    assert old.read_text() != VERSION_CHECK.read_text()
    assert _version_check(tmp_path, "#define ASC_DEVKIT_MAJOR 10\n#define ASC_DEVKIT_MINOR 0\n", old).returncode != 0
