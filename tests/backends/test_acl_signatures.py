"""`harness check-acl`: the npu backend's ctypes bindings against the ACL headers. A small header of our own with the
public declarations (the shapes of hicann/runtime include/external/acl/acl_rt.h) passes; the same header with wrong
types and a missing function is caught line by line (the negative control); the real headers are checked where
ACL_INCLUDE_DIR names them, else skipped with the reason."""
from __future__ import annotations

import ctypes
import shutil

import pytest

from harness import cli
from harness.backends import acl_signatures as sig, npu

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="requires g++")

#: name -> C declaration, as the public headers declare them (types only).
DECLARATIONS = {
    "aclInit": "aclError aclInit(const char *configPath)",
    "aclFinalize": "aclError aclFinalize()",
    "aclrtSetDevice": "aclError aclrtSetDevice(int32_t deviceId)",
    "aclrtResetDevice": "aclError aclrtResetDevice(int32_t deviceId)",
    "aclrtCreateStream": "aclError aclrtCreateStream(aclrtStream *stream)",
    "aclrtDestroyStream": "aclError aclrtDestroyStream(aclrtStream stream)",
    "aclrtSynchronizeStream": "aclError aclrtSynchronizeStream(aclrtStream stream)",
    "aclrtMalloc": "aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)",
    "aclrtFree": "aclError aclrtFree(void *devPtr)",
    "aclrtMemcpy": "aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, "
                   "aclrtMemcpyKind kind)",
    "aclrtCreateEvent": "aclError aclrtCreateEvent(aclrtEvent *event)",
    "aclrtDestroyEvent": "aclError aclrtDestroyEvent(aclrtEvent event)",
    "aclrtRecordEvent": "aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)",
    "aclrtSynchronizeEvent": "aclError aclrtSynchronizeEvent(aclrtEvent event)",
    "aclrtEventElapsedTime": "aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)",
    "aclrtGetMemInfo": "aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)",
    "aclrtCreateNotify": "aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag)",
    "aclrtDestroyNotify": "aclError aclrtDestroyNotify(aclrtNotify notify)",
    "aclrtWaitAndResetNotify": "aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, "
                               "uint32_t timeout)",
    "aclrtRecordNotify": "aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream)",
    "aclrtGetSocName": "const char *aclrtGetSocName()",
}
PRELUDE = """#include <stdint.h>
#include <stddef.h>
typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtNotify;
typedef enum { ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY } aclrtMemMallocPolicy;
typedef enum { ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE } aclrtMemcpyKind;
typedef enum { ACL_DDR_MEM, ACL_HBM_MEM } aclrtMemAttr;
"""


def _headers(tmp_path, declarations: dict[str, str]):
    (tmp_path / "acl").mkdir(parents=True)
    body = "".join(f"{d};\n" for d in declarations.values())
    (tmp_path / "acl" / "acl.h").write_text(f'{PRELUDE}#ifdef __cplusplus\nextern "C" {{\n#endif\n{body}'
                                            '#ifdef __cplusplus\n}\n#endif\n')
    return tmp_path


def test_every_binding_is_declared_here():
    assert set(npu.bindings()) == set(DECLARATIONS)


def test_bindings_with_their_declarations_types_pass(tmp_path):
    assert sig.check(_headers(tmp_path, DECLARATIONS), npu.bindings()) == []


def test_a_wrong_type_and_a_missing_declaration_are_each_one_line(tmp_path):
    wrong = {**DECLARATIONS,
             "aclrtMalloc": "aclError aclrtMalloc(void **devPtr, uint32_t size, aclrtMemMallocPolicy policy)",
             "aclrtGetMemInfo": "aclError aclrtGetMemInfo(aclrtMemAttr attr, uint32_t *free, size_t *total)",
             "aclrtSetDevice": "aclError aclrtSetDevice(int32_t deviceId, int32_t flags)",
             "aclrtGetSocName": "int aclrtGetSocName()"}
    del wrong["aclrtRecordNotify"]
    problems = sig.check(_headers(tmp_path, wrong), npu.bindings())
    assert sorted(problems) == sorted([
        "aclrtMalloc: argument 2 is uint4, bound as uint8",
        "aclrtGetMemInfo: argument 2 is ptr:uint4, bound as ptr:uint8",
        "aclrtSetDevice: 2 arguments declared, 1 bound",
        "aclrtGetSocName: returns int4, bound as ptr:char",
        f"aclrtRecordNotify: not declared in {tmp_path}"]), problems


def test_ctypes_types_are_described_as_the_probe_describes_c_types():
    assert sig.describe(ctypes.c_int32) == "int4" and sig.describe(ctypes.c_uint64) == "uint8"
    assert sig.describe(ctypes.POINTER(ctypes.c_void_p)) == "ptr:ptr"
    assert sig.describe(ctypes.POINTER(ctypes.c_size_t)) == f"ptr:uint{ctypes.sizeof(ctypes.c_size_t)}"
    assert sig.describe(None) == "void" and sig.describe(ctypes.c_char_p) == "ptr:char"


def test_the_command_is_skipped_without_headers_and_judges_with_them(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(sig.ENV, raising=False)
    assert cli.main(["check-acl"]) == 3
    assert capsys.readouterr().out.strip() == sig.SKIP_MESSAGE
    monkeypatch.setenv(sig.ENV, str(_headers(tmp_path / "good", DECLARATIONS)))
    assert cli.main(["check-acl"]) == 0
    assert "every one as declared" in capsys.readouterr().out
    monkeypatch.setenv(sig.ENV, str(_headers(tmp_path / "bad", {**DECLARATIONS, "aclrtFree": "aclError aclrtFree("
                                                                "int64_t devPtr)"})))
    assert cli.main(["check-acl"]) == 1
    assert "aclrtFree: argument 1 is int8, bound as ptr:void" in capsys.readouterr().out


def test_against_the_real_acl_headers():
    headers = sig.include_dir()
    if headers is None:
        pytest.skip(sig.SKIP_MESSAGE)
    assert sig.check(headers, npu.bindings()) == []
