"""Opt-in host-compiler type check of the Ascend C sources (shared/reference/ascendc-typecheck.md, path (c)).

The kernels cannot be built here (no CANN). What can be done is `g++ -fsyntax-only` in ASCENDC_CPU_DEBUG mode for
`__NPU_ARCH__=3510` against checkouts of the public asc-devkit and asc-tools repositories named by environment
variables. Their CPU-debug build needs a closed `stub_fun.h` (the CCE builtins); this module grows a permissive
replacement at check time from the identifiers g++ reports as undeclared, into the git-ignored `.asc-check/`.
Nothing derived from those headers enters the project. Negative controls (kernels with a known misuse) must fail,
which proves the check bites; without the headers the check is skipped, never passed.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.build import LAUNCH_PATTERN

ENV_DEVKIT = "ASC_DEVKIT_ROOT"
ENV_CPUDEBUG = "ASC_CPUDEBUG_ROOT"
SKIP_MESSAGE = "skipped: no asc-devkit headers"

REPO = Path(__file__).resolve().parents[2]
ASCEND_DIR = REPO / "operators" / "ascend"
TYPECHECK_DIR = ASCEND_DIR / "typecheck"
HOST_DIRS = (REPO / "operators" / "host", REPO / "operators" / "include")
DEFAULT_WORK_DIR = REPO / ".asc-check"

#: The macros asc-tools' CPU-debug build sets for ascend950pr_9599 (dav-3510).
DEFINES = ("__CCE_KT_TEST__=1", "ASCENDC_CPU_DEBUG=1", "__CCE_AICORE__=310", "__DAV_C310__",
           "__NPU_ARCH__=3510", "ASCENDC_DUMP=0", "__disable_kernel_type_autoinfer__=",
           "ENABLE_CV_COMM_VIA_SSBUF=true")
STD = "-std=c++17"
#: Bumped whenever the stand-in format changes, so cached stand-ins are regenerated.
STANDIN_VERSION = "2"


@dataclass(frozen=True)
class HeaderRoots:
    devkit: Path
    cpudebug: Path


def header_roots(env: dict[str, str] | None = None) -> HeaderRoots | None:
    """The asc-devkit / asc-tools cpudebug roots from the environment, or None when either is missing."""
    env = os.environ if env is None else env
    devkit, cpudebug = env.get(ENV_DEVKIT), env.get(ENV_CPUDEBUG)
    if not devkit or not cpudebug:
        return None
    devkit_path, cpudebug_path = Path(devkit), Path(cpudebug)
    if (cpudebug_path / "cpudebug" / "include").is_dir():  # accept the asc-tools root as well as cpudebug/
        cpudebug_path = cpudebug_path / "cpudebug"
    if not (devkit_path / "include").is_dir() or not (cpudebug_path / "include" / "stub_def.h").is_file():
        return None
    return HeaderRoots(devkit_path, cpudebug_path)


def include_dirs(roots: HeaderRoots, standin: Path) -> list[Path]:
    d, c = roots.devkit, roots.cpudebug
    return [d, d / "include", d / "include/basic_api", d / "include/c_api", d / "include/utils",
            d / "include/adv_api", d / "impl", d / "impl/basic_api", d / "impl/c_api", d / "impl/utils",
            c / "include", c / "utils", standin]


def project_include_dirs() -> list[Path]:
    """The project's own headers: ABI, shared host logic, the Ascend additions and every op's arch35 folder."""
    dirs = [*HOST_DIRS, ASCEND_DIR / "include", ASCEND_DIR / "blas", ASCEND_DIR / "blas" / "common"]
    dirs += sorted(p for p in (ASCEND_DIR / "blas").glob("*/arch35") if p.is_dir())
    return dirs


# ---------------------------------------------------------------------------------------------------------------
# <<<>>> launch rewriting
# ---------------------------------------------------------------------------------------------------------------

def rewrite_launches(text: str) -> str:
    """`kernel<<<blocks, l2, stream>>>(args)` -> `(asc_check_launch(blocks, l2, stream), kernel)(args)`, so a host
    compiler checks both the launch configuration and the kernel arguments."""
    return LAUNCH_PATTERN.sub(lambda m: f"(asc_check_launch({m.group(2).strip()}), {m.group(1)})", text)


# ---------------------------------------------------------------------------------------------------------------
# stand-in generation
# ---------------------------------------------------------------------------------------------------------------

_Q = "[‘'`]"
_E = "[’'`]"
_UNDECLARED = re.compile(rf"error: {_Q}(::)?([A-Za-z_]\w*){_E} (was not declared|has not been declared"
                         rf"|does not name a type|is not a member of)")
_NO_ARGS = re.compile(rf"error: there are no arguments to {_Q}([A-Za-z_]\w*){_E}")
_TYPE_MSG = re.compile(rf"error: {_Q}(?:::)?([A-Za-z_]\w*){_E} (has not been declared|does not name a type)")
_NOT_IN_GLOBAL = re.compile(rf"error: {_Q}([A-Za-z_]\w*){_E} has not been declared in {_Q}::{_E}")
_ERROR = re.compile(r": (?:fatal )?error: ")
#: Names the prelude defines; never generated.
_PRELUDE_NAMES = {"dim3", "asc_check_launch"}


@dataclass
class Symbols:
    """What the stand-in declares: enum types (with enumerators), callable intrinsics, constants, variables."""
    types: dict[str, set[str]] = field(default_factory=dict)
    functions: set[str] = field(default_factory=set)
    constants: set[str] = field(default_factory=set)
    variables: set[str] = field(default_factory=set)

    def names(self) -> set[str]:
        return set(self.types) | self.functions | self.constants | self.variables | {
            e for members in self.types.values() for e in members}


@dataclass(frozen=True)
class Usage:
    """How names are used in the header trees: called, used like a type, and `X::Y` members per X."""
    calls: frozenset[str]
    type_like: frozenset[str]
    members: dict[str, frozenset[str]]


def header_usage(roots: HeaderRoots) -> Usage:
    """One pass over both header trees, so classifying hundreds of undeclared names costs nothing per name."""
    calls: set[str] = set()
    type_like: set[str] = set()
    members: dict[str, set[str]] = {}
    for base in (roots.devkit / "include", roots.devkit / "impl", roots.cpudebug / "include", roots.cpudebug / "utils"):
        for path in sorted(base.rglob("*")):
            if path.suffix not in (".h", ".hpp", ".inc", ".inl") or not path.is_file():
                continue
            text = path.read_text(errors="replace")
            calls.update(re.findall(r"\b([A-Za-z_]\w*)\s*(?:\(|<[^;()<>]*>\s*\()", text))
            type_like.update(re.findall(r"(?:static_cast|reinterpret_cast|integral_constant)\s*<\s*(?:::)?(\w+)", text))
            type_like.update(re.findall(r"\(\s*([A-Za-z_]\w*_t)\s*\)\s*[\w(]", text))
            for owner, member in re.findall(r"\b([A-Za-z_]\w*)::([A-Za-z_]\w*)", text):
                members.setdefault(owner, set()).add(member)
    type_like.update(members)
    return Usage(frozenset(calls), frozenset(type_like), {k: frozenset(v) for k, v in members.items()})


def _type_prefix(type_name: str) -> str:
    """`pipe_t` -> `PIPE_`, `ROUND` -> `ROUND_`: unscoped builtin enumerators carry their type's name."""
    return re.sub(r"_[tT]$", "", type_name).upper() + "_"


def learn(symbols: Symbols, stderr: str, usage: Usage, allow_variables: bool) -> bool:
    """Add what g++'s errors show to be missing; True when anything new was learnt."""
    before = (len(symbols.names()), sum(len(v) for v in symbols.types.values()))
    known = symbols.names() | _PRELUDE_NAMES
    undeclared = {m.group(2) for m in _UNDECLARED.finditer(stderr)} | {m.group(1) for m in _NO_ARGS.finditer(stderr)}
    types = {m.group(1) for m in _TYPE_MSG.finditer(stderr)} | {m.group(1) for m in _NOT_IN_GLOBAL.finditer(stderr)}
    types |= {n for n in undeclared if (n in usage.type_like or n.endswith("_t")) and n not in usage.calls}
    for t in sorted(types - known):
        symbols.types[t] = set(usage.members.get(t, ()))
    known = symbols.names() | _PRELUDE_NAMES
    prefixes = {t: _type_prefix(t) for t in symbols.types}
    for name in sorted(undeclared - known):
        owner = next((t for t, p in prefixes.items() if name.startswith(p) and name.upper() == name), None)
        if owner is not None:
            symbols.types[owner].add(name)
        elif name.upper() == name:
            symbols.constants.add(name)
        elif name in usage.calls:
            symbols.functions.add(name)
        elif allow_variables:
            symbols.variables.add(name)
    return (len(symbols.names()), sum(len(v) for v in symbols.types.values())) != before


def render_standin(symbols: Symbols) -> str:
    """The generated `stub_fun.h`: the prelude plus every learnt symbol, with the permissive signatures."""
    out = ["// Generated by harness/kernels/kernel_check.py at check time; never commit. Permissive CCE builtin stand-in.",
           "#pragma once", '#include "standin_prelude.h"', ""]
    # Enumerators of scoped types live in their type; those named like their type are unscoped builtins (PIPE_S).
    value = 0
    for t in sorted(symbols.types):
        members = sorted(symbols.types[t])
        scoped = not any(m.startswith(_type_prefix(t)) for m in members)
        body = ", ".join(f"{m} = {value + i}" for i, m in enumerate(members))
        value += len(members) + 1
        out.append(f"enum {'class ' if scoped else ''}{t} : int64_t {{ {body} }};")
    for c in sorted(symbols.constants):
        value += 1
        out.append(f"constexpr int64_t {c} = {value};")
    for v in sorted(symbols.variables):
        out.append(f"extern asc_check::Any {v};")
    for f in sorted(symbols.functions):
        # copy_* are the DMA intrinsics (copy_matrix_cc_to_ub for Fixpipe L0C -> UB, ...): void, and asc-devkit's
        # dav_3510 Fixpipe impl returns one from a void function
        if f.startswith(("set_", "copy_")) or f in ("pipe_barrier", "wait_flag", "set_flag", "dsb", "trap"):
            ret, body = "void", ""
        elif f.startswith("get_"):
            ret, body = "int64_t", "return 0;"
        else:
            ret, body = "asc_check::Any", "return {};"
        out.append(f"template <typename... Ts, typename... As> inline {ret} {f}(As&&...) {{ {body} }}")
        out.append(f"template <auto V0, auto... Vs, typename... As> inline {ret} {f}(As&&...) {{ {body} }}")
    return "\n".join(out) + "\n"


def _compile(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def base_flags(roots: HeaderRoots, standin: Path) -> list[str]:
    return [STD, *(f"-D{d}" for d in DEFINES), *(f"-I{p}" for p in include_dirs(roots, standin)),
            *(f"-I{p}" for p in project_include_dirs())]


def _kernel_tiling_header(roots: HeaderRoots, standin: Path) -> None:
    """adv_api headers include <kernel_tiling/kernel_tiling.h>, which CANN generates; use the repository's script."""
    target = standin / "kernel_tiling" / "kernel_tiling.h"
    target.parent.mkdir(parents=True, exist_ok=True)
    script = roots.devkit / "impl/adv_api/cmake/scripts/gen_kernel_tiling_data_def.py"
    if script.is_file():
        _compile([sys.executable, str(script), str(roots.devkit / "include/adv_api"), str(target)])
    if not target.is_file():
        target.write_text("#pragma once\n")


def _acl_header(standin: Path) -> None:
    """Host launch code includes <acl/acl.h>; the calls it makes are declared here with the public ACL prototypes."""
    target = standin / "acl" / "acl.h"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text((TYPECHECK_DIR / "acl_standin.h").read_text())


def standin_key(roots: HeaderRoots) -> str:
    h = hashlib.sha256(STANDIN_VERSION.encode())
    for base in (roots.devkit / "include", roots.devkit / "impl", roots.cpudebug / "include"):
        for path in sorted(base.rglob("*.h")):
            st = path.stat()
            h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}".encode())
    for path in (TYPECHECK_DIR / "standin_prelude.h", TYPECHECK_DIR / "standin_probe.cpp",
                 TYPECHECK_DIR / "acl_standin.h", Path(__file__)):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


@dataclass
class StandIn:
    path: Path
    rounds: int
    symbols: int
    residual_errors: int
    seconds: float


def generate_standin(roots: HeaderRoots, work_dir: Path = DEFAULT_WORK_DIR, probe: Path | None = None,
                     max_rounds: int = 12, log=print) -> StandIn:
    """Grow `stub_fun.h` until the probe TU type-checks (or stops improving); cached per header tree."""
    t0 = time.monotonic()
    probe = probe or TYPECHECK_DIR / "standin_probe.cpp"
    standin = work_dir / f"standin-{standin_key(roots)}"
    done = standin / "stub_fun.h"
    if done.is_file():
        return StandIn(standin, 0, done.read_text().count("\n"), 0, time.monotonic() - t0)
    tmp = work_dir / "standin-tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy(TYPECHECK_DIR / "standin_prelude.h", tmp / "standin_prelude.h")
    _kernel_tiling_header(roots, tmp)
    _acl_header(tmp)
    usage = header_usage(roots)
    symbols = Symbols()
    errors, rounds = -1, 0
    for rounds in range(1, max_rounds + 1):
        (tmp / "stub_fun.h").write_text(render_standin(symbols))
        result = _compile(["g++", *base_flags(roots, tmp), "-fsyntax-only", "-fmax-errors=0", str(probe)])
        errors = len(_ERROR.findall(result.stderr))
        log(f"  stand-in round {rounds}: {errors} errors")
        if errors == 0:
            break
        if not learn(symbols, result.stderr, usage, allow_variables=False) and not learn(
                symbols, result.stderr, usage, allow_variables=True):
            break
    shutil.rmtree(standin, ignore_errors=True)
    tmp.rename(standin)
    return StandIn(standin, rounds, len(symbols.names()), errors, time.monotonic() - t0)


# ---------------------------------------------------------------------------------------------------------------
# checking sources
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    path: Path
    kind: str  # "kernel" (Ascend C, includes asc-devkit headers), "host" (plain C++ launch code)
    expect_fail: bool  # negative control


_EXPECT = re.compile(r"expect-error:\s*(.+?)\s*(?:\*/)?$", re.MULTILINE)


def expected_errors(path: Path) -> list[str]:
    """`expect-error: <text>` lines of a negative control: messages its failure must contain, so a control that
    fails for an unrelated reason (a stand-in gap) does not count as the check biting."""
    return _EXPECT.findall(path.read_text())


@dataclass
class FileResult:
    source: Source
    errors: list[str]
    seconds: float

    @property
    def missing_expected(self) -> list[str]:
        if not self.source.expect_fail:
            return []
        text = "\n".join(self.errors)
        return [e for e in expected_errors(self.source.path) if e not in text]

    @property
    def ok(self) -> bool:
        """Clean for a real source; failing, with every expected message, for a negative control."""
        if self.source.expect_fail:
            return bool(self.errors) and not self.missing_expected
        return not self.errors


def sources(ascend_dir: Path = ASCEND_DIR) -> list[Source]:
    """Every kernel and host source of the operators, then every negative control (typecheck/neg_*.cpp)."""
    found = []
    for path in sorted((ascend_dir / "blas").glob("*/arch35/*.cpp")):
        found.append(Source(path, "host" if path.name.endswith("_host.cpp") else "kernel", False))
    for path in sorted((ascend_dir / "blas").glob("common/*.cpp")):
        found.append(Source(path, "host", False))
    for path in sorted((ascend_dir / "typecheck").glob("neg_*.cpp")):
        found.append(Source(path, "kernel", True))
    return found


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if _ERROR.search(line)]


def check_source(source: Source, roots: HeaderRoots, standin: Path, work_dir: Path) -> FileResult:
    """Preprocess, rewrite launches, then `g++ -fsyntax-only` the result."""
    t0 = time.monotonic()
    flags = base_flags(roots, standin)
    if source.kind == "kernel":
        flags += ["-include", "stub_def.h", "-include", "stub_fun.h"]
    else:
        flags += ["-include", "standin_prelude.h"]
    pre = _compile(["g++", *flags, "-E", str(source.path)])
    if pre.returncode != 0:
        return FileResult(source, _error_lines(pre.stderr) or [pre.stderr.strip()[:500]], time.monotonic() - t0)
    out = work_dir / "pre" / (source.path.stem + ".ii")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(rewrite_launches(pre.stdout))
    res = _compile(["g++", STD, "-fsyntax-only", "-fpreprocessed", "-x", "c++", str(out)])
    return FileResult(source, _error_lines(res.stderr), time.monotonic() - t0)


def devkit_commit(roots: HeaderRoots) -> str:
    """The checked-out commit of asc-devkit (git, or a COMMIT file beside an export), else 'unknown'."""
    res = _compile(["git", "-C", str(roots.devkit), "rev-parse", "HEAD"])
    if res.returncode == 0:
        return res.stdout.strip()
    marker = roots.devkit / "COMMIT"
    return marker.read_text().strip() if marker.is_file() else "unknown"
