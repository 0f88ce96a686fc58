"""The npu backend's ctypes bindings against the ACL runtime's public declarations (opt-in: `harness check-acl`).

Every `acl*` function harness/backends/npu.py binds (`npu.bindings()`: argtypes and restype) is compared with its
declaration in the ACL headers (`acl/acl.h`, which includes `acl_rt.h` and `acl_base.h`: a CANN install's
`include/`, or `include/external/` of a hicann/runtime checkout), at the level ctypes calls at: the number of
arguments, and per argument and return value its kind (signed or unsigned integer, float, pointer) and size, and
for a pointer what it points to (an opaque handle or void, another pointer, a number of that kind and size). The
headers are found through ACL_INCLUDE_DIR (the folder holding `acl/acl.h`); they are never copied into the project.
Without it the check is skipped, saying so, never passed.

How: a generated C++ probe includes the headers and prints each function's parameter types through type traits on
`decltype(&function)` (unevaluated: nothing is linked), compiled and run with the host g++.
"""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ENV = "ACL_INCLUDE_DIR"
SKIP_MESSAGE = f"skipped: no ACL headers (set {ENV} to the folder holding acl/acl.h)"

_PROBE = r"""#include <cstdio>
#include <type_traits>
#include "acl/acl.h"

template <class P> void Pointee()
{
    if constexpr (std::is_void_v<P>) std::printf("void");
    else if constexpr (std::is_same_v<P, char>) std::printf("char");
    else if constexpr (std::is_pointer_v<P>) std::printf("ptr");
    else if constexpr (std::is_floating_point_v<P>) std::printf("float%zu", sizeof(P));
    else if constexpr (std::is_enum_v<P>) std::printf("%s%zu", std::is_signed_v<std::underlying_type_t<P>> ? "int" : "uint", sizeof(P));
    else if constexpr (std::is_integral_v<P>) std::printf("%s%zu", std::is_signed_v<P> ? "int" : "uint", sizeof(P));
    else std::printf("opaque");
}

template <class T> void Describe()
{
    std::printf(" ");
    if constexpr (std::is_void_v<T>) std::printf("void");
    else if constexpr (std::is_pointer_v<T>) { std::printf("ptr:"); Pointee<std::remove_cv_t<std::remove_pointer_t<T>>>(); }
    else if constexpr (std::is_floating_point_v<T>) std::printf("float%zu", sizeof(T));
    else if constexpr (std::is_enum_v<T>) std::printf("%s%zu", std::is_signed_v<std::underlying_type_t<T>> ? "int" : "uint", sizeof(T));
    else if constexpr (std::is_integral_v<T>) std::printf("%s%zu", std::is_signed_v<T> ? "int" : "uint", sizeof(T));
    else std::printf("other");
}

template <class R, class... A> void Signature(const char* name, R (*)(A...))
{
    std::printf("%s", name);
    Describe<R>();
    (Describe<A>(), ...);
    std::printf("\n");
}

int main()
{
@CALLS@    return 0;
}
"""


class CheckError(Exception):
    """The probe could not be built or run for another reason than a missing declaration (one line)."""


def include_dir(env: dict[str, str] | None = None) -> Path | None:
    """The folder holding acl/acl.h named by ACL_INCLUDE_DIR, or None (the check is then skipped)."""
    value = (os.environ if env is None else env).get(ENV)
    return Path(value) if value and (Path(value) / "acl" / "acl.h").is_file() else None


def _int(t: Any) -> str:
    signed = t(-1).value < 0
    return f"{'int' if signed else 'uint'}{ctypes.sizeof(t)}"


def _pointee(t: Any) -> str:
    if t in (ctypes.c_void_p, ctypes.c_char_p) or (isinstance(t, type) and issubclass(t, ctypes._Pointer)):
        return "ptr"
    if t is ctypes.c_char:
        return "char"
    if t in (ctypes.c_float, ctypes.c_double):
        return f"float{ctypes.sizeof(t)}"
    if isinstance(t, type) and issubclass(t, ctypes._SimpleCData):
        return _int(t)
    return "opaque"


def describe(t: Any) -> str:
    """A ctypes type as the probe describes a C type; c_void_p is 'ptr:void' (it also stands for opaque handles)."""
    if t is None:
        return "void"
    if t is ctypes.c_void_p:
        return "ptr:void"
    if t is ctypes.c_char_p:
        return "ptr:char"
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return f"ptr:{_pointee(t._type_)}"
    if t in (ctypes.c_float, ctypes.c_double):
        return f"float{ctypes.sizeof(t)}"
    return _int(t)


def _same(declared: str, bound: str) -> bool:
    """c_void_p passes a handle (void* or a pointer to an opaque struct) as well as void*."""
    return declared == bound or (bound == "ptr:void" and declared == "ptr:opaque")


def declarations(headers: Path, names: list[str], work: Path) -> tuple[dict[str, list[str]], list[str]]:
    """({name: [return, arg...]} as the headers declare them, names the headers do not declare)."""
    compiler = shutil.which("g++")
    if compiler is None:
        raise CheckError("check-acl: g++ not found")
    missing: list[str] = []
    while True:
        present = [n for n in names if n not in missing]
        calls = "".join(f'    Signature("{n}", static_cast<decltype(&{n})>(nullptr));\n' for n in present)
        source, binary = work / "acl_probe.cpp", work / "acl_probe"
        source.write_text(_PROBE.replace("@CALLS@", calls))
        built = subprocess.run([compiler, "-std=c++17", "-I", str(headers), "-o", str(binary), str(source)],
                               capture_output=True, text=True, timeout=300, env={**os.environ, "LC_ALL": "C"})
        if built.returncode == 0:
            break
        undeclared = set(re.findall(r"[‘'](\w+)[’'] was not declared", built.stderr)) & set(present)
        if not undeclared:
            first = next((line for line in built.stderr.splitlines() if "error" in line), built.stderr.strip())
            raise CheckError(f"check-acl: the probe does not compile against {headers}: {first}")
        missing += sorted(undeclared)
    ran = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60, check=True)
    found = {line.split()[0]: line.split()[1:] for line in ran.stdout.splitlines() if line.strip()}
    return found, missing


def check(headers: Path, bound: dict[str, tuple[list, Any]]) -> list[str]:
    """One line per difference between the bindings ({name: (argtypes, restype)}) and the headers; [] when every
    binding has its declaration's argument and return types."""
    with tempfile.TemporaryDirectory(prefix="acl-check-") as tmp:
        found, missing = declarations(headers, sorted(bound), Path(tmp))
    problems = [f"{name}: not declared in {headers}" for name in missing]
    for name, (argtypes, restype) in sorted(bound.items()):
        if name in missing:
            continue
        declared_ret, *declared_args = found[name]
        bound_args = [describe(t) for t in argtypes]
        if not _same(declared_ret, describe(restype)):
            problems.append(f"{name}: returns {declared_ret}, bound as {describe(restype)}")
        if len(declared_args) != len(bound_args):
            problems.append(f"{name}: {len(declared_args)} arguments declared, {len(bound_args)} bound")
            continue
        for i, (declared, have) in enumerate(zip(declared_args, bound_args), start=1):
            if not _same(declared, have):
                problems.append(f"{name}: argument {i} is {declared}, bound as {have}")
    return problems
