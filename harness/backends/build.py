"""Builds the CPU twin (`operators/cpu_twin/`) and the Ascend C kernels on the CPU emulator (`operators/ascend/` over
`operators/ascend_cpu/`) with the system C++ compiler into cached shared libraries.

The cache key is the sha256 of everything that decides the library's bytes: the sources and headers, the build-time
defines (`TWIN_MUTANT`, `TWIN_SLOWDOWN_PCT`), the compiler version and flags, and the host CPU (the twin is built
with -march=native for the machine that runs it). Two processes that need the same library or object at once (xdist
workers, the harness runs of one test, Ray hosts sharing the checkout) do not both compile it: the first takes a lock
file beside it and the others wait, then take what it published. Each build compiles into its own temporary directory
and renames the result into place atomically, so a reader never sees a half-written library.

The ascend-cpu library compiles the real kernel and host sources unchanged except for two mechanical steps that the
Ascend compiler does itself: `kernel<<<blocks, l2, stream>>>(args)` becomes a call of the emulator's launcher, and
the host's two operator symbols get an `ascend_device_` prefix so the emulator's ABI entry points can synchronise
after them. Variants (negative controls) are textual patches applied to a copy of the tree; a patch whose text is
not found is an error, so a control cannot silently stop testing anything.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from harness.model import filelock

REPO_ROOT = Path(__file__).resolve().parents[2]
OPERATORS_DIR = REPO_ROOT / "operators"
DEFAULT_CACHE_DIR = REPO_ROOT / "build" / "twin"
LIB_NAME = "libaclblas_twin.so"
CXX = "g++"
FLAGS = ("-std=c++17", "-O3", "-march=native", "-fPIC", "-shared", "-pthread")

_MUTANT_LINE = re.compile(r"^#define TWIN_MUTANT_(\w+)\s+(\d+)\s*//\s*(.+)$", re.MULTILINE)
_DEFINE_NAME = re.compile(r"^[A-Za-z_]\w*$")


class BuildError(RuntimeError):
    """The twin cannot be built here (no compiler, or the sources do not compile); the message is one clear line
    plus the compiler's first error lines."""


def _mutant_table(header: Path) -> dict[str, tuple[int, str]]:
    """name -> (id, description) from the `#define TWIN_MUTANT_<NAME> <id>  // description` lines; empty when the
    operators/ tree is not beside the package (a non-editable install has no twin sources)."""
    if not header.exists():
        return {}
    return {m[1].lower(): (int(m[2]), m[3].strip()) for m in _MUTANT_LINE.finditer(header.read_text())}


_TABLE = _mutant_table(OPERATORS_DIR / "cpu_twin" / "twin_mutants.h")
#: Injectable kernel bugs: name -> TWIN_MUTANT id (build with build_twin({"TWIN_MUTANT": MUTANTS[name]})).
MUTANTS: dict[str, int] = {name: ident for name, (ident, _) in _TABLE.items()}
#: name -> one-line description of the bug.
MUTANT_DESCRIPTIONS: dict[str, str] = {name: text for name, (_, text) in _TABLE.items()}


def twin_sources(source_dir: Path) -> list[Path]:
    """Every file that goes into the build: twin sources and headers, shared host headers, the ABI header."""
    patterns = ("cpu_twin/*.cpp", "cpu_twin/*.h", "host/*.h", "include/*.h")
    return sorted(p for pattern in patterns for p in source_dir.glob(pattern))


def compiler_version(cxx: str | None = None) -> str:
    """The compiler's first `--version` line (part of every build key); asked once per process and compiler."""
    return _compiler_version(cxx or CXX)


@functools.lru_cache(maxsize=None)
def _compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (FileNotFoundError, PermissionError):
        raise BuildError(f"no C++ compiler: '{cxx}' is not on PATH; install g++ to build the CPU twin") from None
    except subprocess.CalledProcessError as exc:
        raise BuildError(f"C++ compiler '{cxx}' does not run: {exc.stderr.strip()[:200]}") from None
    return out.splitlines()[0] if out else cxx


def _host_cpu() -> str:
    """What -march=native depends on: the CPU model and feature flags."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.machine() + platform.processor()
    wanted = [line for line in info.splitlines() if line.startswith(("model name", "flags"))]
    return "\n".join(sorted(set(wanted)))


def _define_flags(defines: Mapping[str, str | int]) -> list[str]:
    flags = []
    for name, value in sorted(defines.items()):
        if not _DEFINE_NAME.match(name):
            raise BuildError(f"invalid preprocessor define name {name!r}")
        flags.append(f"-D{name}={value}")
    return flags


def build_key(defines: Mapping[str, str | int], source_dir: Path) -> str:
    """sha256 over sources (relative path + bytes), defines, compiler version, flags and host CPU."""
    h = hashlib.sha256()
    for path in twin_sources(source_dir):
        h.update(str(path.relative_to(source_dir)).encode() + b"\0" + path.read_bytes() + b"\0")
    for part in (*_define_flags(defines), compiler_version(), *FLAGS, _host_cpu()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def _first_errors(stderr: str, limit: int = 8) -> str:
    lines = stderr.splitlines()
    errors = [line for line in lines if "error" in line.lower()] or lines
    return "\n".join(errors[:limit])


def _finish(cache_dir: Path, target: Path, compile_into) -> Path:
    """Run `compile_into(tmp_dir) -> built library path` in a private temporary directory under `cache_dir` and
    rename the result to `target` atomically; under `target`'s lock, so a process that needs it meanwhile waits for
    it instead of compiling it again."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    with filelock.locked(target.with_name(".lock")):
        if target.exists():  # built by the process this one waited for
            return target
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=cache_dir))
        try:
            out = compile_into(tmp)
            os.replace(out, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


#: Compiled translation units, by the sha256 of what the compiler sees (object_key): a variant that patches one
#: kernel recompiles that kernel only, wherever its copy of the tree lies.
OBJECT_CACHE_DIR = REPO_ROOT / "build" / "objects"
#: The files a unit can include from its tree; a new one can change which header an #include finds.
_SOURCE_SUFFIXES = (".h", ".hpp", ".hh", ".inc", ".c", ".cc", ".cpp")


def object_key(cmd: list[str]) -> tuple[str, list[str]] | None:
    """The key of the object `cmd` (a compile command without `-o`, its source last) makes, and the headers it
    read. The key is the sha256 of its preprocessed source without line markers (every header, define and __FILE__
    resolved, the tree's location left out), its flags other than the preprocessor's (-I, -D: what they change is
    in that text), the compiler version and the host CPU (-march=native). None when it does not preprocess:
    compiling it then reports the error."""
    try:
        proc = subprocess.run([*cmd, "-E", "-P", "-H"], capture_output=True)
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    h = hashlib.sha256(proc.stdout)
    for part in (*(a for a in cmd[1:-1] if not a.startswith(("-I", "-D"))), compiler_version(cmd[0]), _host_cpu()):
        h.update(b"\0" + part.encode())
    headers = [m[1] for m in re.finditer(r"^\.+ (.+)$", proc.stderr.decode(errors="surrogateescape"), re.MULTILINE)]
    return h.hexdigest(), headers


def _file_digest(path: str, in_tree: bool = True) -> str | None:
    """A header's sha256; size and modification time for one outside the unit's tree (the system's headers, which
    a tree's copy does not touch: hashing them would cost 7 ms a unit)."""
    try:
        if not in_tree:
            st = os.stat(path)
            return f"{st.st_size}:{st.st_mtime_ns}"
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


class _Manifests:
    """object_key without running the preprocessor, as ccache's direct mode does: a unit's command (its tree's
    location left out), its source and the names of the files in its tree lead to manifests of the headers an
    earlier preprocessing read, with their sha256, and the object key it found. When every header is as recorded,
    that key holds; else the preprocessor runs (about 0.07 s of CPU a unit here, for every unit of every variant
    build: 18 of the 97 s a fresh clone's ascend-cpu tests spent compiling) and its manifest is added. The ccache
    program is not used: the object cache above holds the objects, and variants build in throw-away trees."""

    def __init__(self, cache_dir: Path, root: Path | None):
        self.dir = cache_dir / "manifests"
        self.root = str(root) if root is not None else None
        names = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                       if p.suffix in _SOURCE_SUFFIXES and p.is_file()) if root is not None else []
        self.names = "\0".join(names).encode()

    def _local(self, path: str) -> str:
        return path.replace(self.root, "<root>") if self.root else path

    def _digest(self, local: str) -> str | None:
        if local.startswith("<root>"):
            return _file_digest(local.replace("<root>", self.root, 1))
        return _file_digest(local, in_tree=False)

    def _direct(self, cmd: list[str]) -> str | None:
        if self.root is None:
            return None
        digest = _file_digest(cmd[-1])
        if digest is None:
            return None
        h = hashlib.sha256(digest.encode() + b"\0" + self.names)
        for part in (*(self._local(a) for a in cmd), compiler_version(cmd[0]), _host_cpu()):
            h.update(b"\0" + part.encode())
        return h.hexdigest()

    def key(self, cmd: list[str]) -> str | None:
        """The object key of `cmd`: from a manifest whose headers are unchanged, else by preprocessing."""
        direct = self._direct(cmd)
        if direct is not None:
            for manifest in self.dir.glob(f"{direct}.*"):
                try:
                    headers = json.loads(manifest.read_text())
                except (OSError, ValueError):
                    continue
                if all(self._digest(path) == digest for path, digest in headers):
                    return manifest.name.split(".", 1)[1]
        found = object_key(cmd)
        if found is None:
            return None
        key, headers = found
        if direct is None:
            return key
        record = [[local, self._digest(local)] for local in dict.fromkeys(map(self._local, headers))]
        if all(digest is not None for _, digest in record):  # none gone since it was read
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.dir / f".{direct}.{os.getpid()}.{id(cmd)}"
            tmp.write_text(json.dumps(record))
            os.replace(tmp, self.dir / f"{direct}.{key}")
        return key


def _compile_objects(jobs: list[tuple[list[str], Path]], what: str, cache_dir: Path | None = None,
                     root: Path | None = None) -> None:
    """Compile each (command without `-o`, object path), two at a time (the CI machines have two cores), taking
    objects already in the object cache; first failure wins. An object another process is compiling right now (its
    lock is held) is waited for, then taken from the cache: this process first finishes its own compiles, so a
    process only ever waits holding no lock (no two can wait for each other). `root` is the tree the units and
    their headers lie in (_Manifests)."""
    cache_dir = Path(cache_dir) if cache_dir is not None else OBJECT_CACHE_DIR
    cache_dir.mkdir(parents=True, exist_ok=True)
    manifests = _Manifests(cache_dir, root)
    running: list[tuple[subprocess.Popen, Path, Path | None, int | None]] = []

    def finish_one() -> None:
        proc, obj, cached, lock = running.pop(0)
        try:
            _, err = proc.communicate()
            if proc.returncode != 0:
                for other, _, _, other_lock in running:
                    other.kill()
                    filelock.unlock(other_lock)
                raise BuildError(f"building {what} failed ({CXX} exit {proc.returncode}):\n"
                                 f"{_first_errors(err)}")
            if cached is not None:  # published whole or not at all
                tmp = cached.with_name(f".{cached.name}.{os.getpid()}.{id(proc)}")
                shutil.copyfile(obj, tmp)
                os.replace(tmp, cached)
        finally:
            filelock.unlock(lock)

    for cmd, obj in jobs:
        key = manifests.key(cmd)
        cached = cache_dir / f"{key}{obj.suffix}" if key else None
        lock = None
        if cached is not None and not cached.exists():
            lock = filelock.lock(cached.with_suffix(".lock"), wait=False)
            if lock is None:  # another process compiles it now: wait for it, holding none of ours
                while running:
                    finish_one()
                with filelock.locked(cached.with_suffix(".lock")):
                    pass
        if cached is not None and cached.exists():
            filelock.unlock(lock)
            try:  # a link: a precompiled header is 44 MB
                os.link(cached, obj)
            except OSError:
                shutil.copyfile(cached, obj)
            continue
        while len(running) >= 2:
            finish_one()
        running.append((subprocess.Popen([*cmd, "-o", str(obj)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         text=True), obj, cached, lock))
    while running:
        finish_one()


def build_twin(defines: Mapping[str, str | int] = {}, *, source_dir: Path | None = None,
               cache_dir: Path | None = None, object_cache_dir: Path | None = None) -> Path:
    """Path of the twin library for these defines, compiling it on a cache miss (one translation unit at a time,
    two at once; a define that changes only some units, such as one TWIN_MUTANT, recompiles only those).

    `source_dir` is an `operators/` directory (default: this checkout's), so `harness ab` can build another
    revision; `cache_dir` defaults to `<repo>/build/twin`. Raises BuildError with one clear message.
    """
    source_dir = Path(source_dir) if source_dir is not None else OPERATORS_DIR
    cache_dir = Path(cache_dir) if cache_dir is not None else DEFAULT_CACHE_DIR
    cpp = [p for p in twin_sources(source_dir) if p.suffix == ".cpp"]
    if not cpp:
        raise BuildError(f"no CPU twin sources in {source_dir / 'cpu_twin'}")
    target = cache_dir / build_key(defines, source_dir) / LIB_NAME
    if target.exists():
        return target

    def compile_into(tmp: Path) -> Path:
        out = tmp / LIB_NAME
        includes = [f"-I{source_dir / d}" for d in ("include", "host", "cpu_twin")]
        compile_flags = [f for f in FLAGS if f != "-shared"]
        jobs = [([CXX, *compile_flags, *includes, *_define_flags(defines), "-c", str(src)], tmp / f"{src.stem}.o")
                for src in cpp]
        _compile_objects(jobs, "the CPU twin", object_cache_dir, source_dir)
        proc = subprocess.run([CXX, *FLAGS, *(str(obj) for _, obj in jobs), "-o", str(out)], capture_output=True,
                              text=True)
        if proc.returncode != 0:
            raise BuildError(f"linking the CPU twin failed ({CXX} exit {proc.returncode}):\n"
                             f"{_first_errors(proc.stderr)}")
        return out

    return _finish(cache_dir, target, compile_into)


# ---------------------------------------------------------------------------------------------------------------
# ascend-cpu: the arch35 kernels and host code over the CPU emulator
# ---------------------------------------------------------------------------------------------------------------

ASCEND_CACHE_DIR = REPO_ROOT / "build" / "ascend-cpu"
ASCEND_LIB_NAME = "libaclblas_ascend_cpu.so"
#: -fno-gnu-unique and -Bsymbolic: a test process loads several variants (negative controls) side by side, and
#: each must run its own inline functions and variables, not the first loaded library's.
#: ENABLE_CV_COMM_VIA_SSBUF=true: UB -> L1 copies over the hardware channel (asc-devkit DataCopy（UBToL1连续数据搬运）.md),
#: as operators/ascend/CMakeLists.txt and the typecheck (harness/kernels/kernel_check.py) define it.
ASCEND_FLAGS = ("-std=c++17", "-O3", "-march=native", "-fPIC", "-fno-gnu-unique", "-DENABLE_CV_COMM_VIA_SSBUF=true")
ASCEND_LINK_FLAGS = ("-shared", "-fPIC", "-Wl,-Bsymbolic")
#: The Ascend host sources' operator symbols, renamed so the emulator's entry points wrap them (emu_runtime.cpp).
_RENAMES = ("aclblasCsymm", "aclblasSgemmStridedBatched")
#: The emulator's headers every kernel includes, precompiled once into the object cache and included first in each
#: kernel unit: parsing them is 0.35 s of a kernel unit's 1.8 s at -O3 here, and a fresh checkout's tests compile
#: about 40 kernel units (one per negative control). The objects are the same bytes with and without it.
PCH_NAME = "ascend_cpu_emu_pch.h"
_PCH_HEADERS = ("kernel_operator.h", "simt_api/asc_simt.h", "tensor_api/tensor.h")

#: A textual patch of the source tree: (path relative to operators/, exact old text, new text).
Patch = tuple[str, str, str]


def ascend_cpu_sources(source_dir: Path) -> list[Path]:
    """Every file of the ascend-cpu build: Ascend kernels and host code, the emulator, shared host headers, ABI."""
    patterns = ("ascend/blas/**/*.cpp", "ascend/blas/**/*.h", "ascend/typecheck/acl_standin.h", "ascend_cpu/**/*.cpp",
                "ascend_cpu/**/*.h", "host/*.h", "include/*.h")
    return sorted({p for pattern in patterns for p in source_dir.glob(pattern)})


#: `kernel<<<config>>>`: group 1 the kernel (with template arguments), group 2 the launch configuration (the
#: kernel check, harness/kernels/kernel_check.py, rewrites the same launches).
LAUNCH_PATTERN = re.compile(r"([A-Za-z_]\w*(?:\s*<[^<>;]*>)?)\s*<<<(.*?)>>>", re.DOTALL)


def rewrite_launches(text: str) -> str:
    """`kernel<<<blocks, l2, stream>>>(args)` -> `ascend_cpu::Launch("kernel", blocks, l2, stream, kernel)(args)`."""
    return LAUNCH_PATTERN.sub(
        lambda m: f'ascend_cpu::Launch("{m.group(1)}", {m.group(2).strip()}, {m.group(1)})', text)


def ascend_cpu_key(patches: tuple[Patch, ...], source_dir: Path) -> str:
    h = hashlib.sha256()
    for path in ascend_cpu_sources(source_dir):
        h.update(str(path.relative_to(source_dir)).encode() + b"\0" + path.read_bytes() + b"\0")
    for part in (*(x for patch in patches for x in patch), compiler_version(), *ASCEND_FLAGS, *ASCEND_LINK_FLAGS,
                 _host_cpu()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def _apply_patches(root: Path, patches: tuple[Patch, ...]) -> None:
    for rel, old, new in patches:
        path = root / rel
        text = path.read_text() if path.is_file() else ""
        if text.count(old) != 1:
            raise BuildError(f"patch for {rel} does not apply: its old text occurs {text.count(old)} times, "
                             f"not once: {old.strip()[:80]!r}")
        path.write_text(text.replace(old, new))


def build_ascend_cpu(patches: tuple[Patch, ...] = (), *, source_dir: Path | None = None,
                     cache_dir: Path | None = None, object_cache_dir: Path | None = None) -> Path:
    """Path of the ascend-cpu library (the Ascend kernels on the CPU emulator) with `patches` applied, compiling it
    on a cache miss (the translation units a patch leaves alone come from the object cache). Raises BuildError
    with one clear message."""
    source_dir = Path(source_dir) if source_dir is not None else OPERATORS_DIR
    cache_dir = Path(cache_dir) if cache_dir is not None else ASCEND_CACHE_DIR
    if not (source_dir / "ascend_cpu" / "emu").is_dir():
        raise BuildError(f"no CPU emulator sources in {source_dir / 'ascend_cpu'}")
    target = cache_dir / ascend_cpu_key(tuple(patches), source_dir) / ASCEND_LIB_NAME
    if target.exists():
        return target

    def compile_into(tmp: Path) -> Path:
        tree = tmp / "operators"
        for path in ascend_cpu_sources(source_dir):
            dest = tree / path.relative_to(source_dir)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        _apply_patches(tree, tuple(patches))
        blas = tree / "ascend" / "blas"
        includes = [tree / "ascend_cpu" / "include", tree / "ascend_cpu" / "emu", tree / "include", tree / "host",
                    blas / "common", *sorted(p for p in blas.glob("*/arch35") if p.is_dir())]
        include_flags = [f"-I{d}" for d in includes]
        renames = [f"-D{name}=ascend_device_{name}" for name in _RENAMES]
        pch = tree / "ascend_cpu" / "include" / PCH_NAME
        pch.write_text("".join(f'#include "{header}"\n' for header in _PCH_HEADERS))
        _compile_objects([([CXX, *ASCEND_FLAGS, *include_flags, "-x", "c++-header", "-c", str(pch)],
                           pch.with_name(f"{PCH_NAME}.gch"))], "the emulator's precompiled header", object_cache_dir,
                         tree)
        jobs, objects = [], []
        for cpp in sorted(blas.glob("**/*.cpp")) + sorted((tree / "ascend_cpu").glob("**/*.cpp")):
            kernel = cpp.name.endswith("_kernel.cpp")
            if kernel:
                cpp.write_text(rewrite_launches(cpp.read_text()))
            obj = cpp.with_suffix(".o")
            is_host = "ascend_cpu" not in cpp.parts
            jobs.append(([CXX, *ASCEND_FLAGS, *include_flags, *(renames if is_host else []),
                          *(["-include", PCH_NAME] if kernel else []), "-c", str(cpp)], obj))
            objects.append(str(obj))
        _compile_objects(jobs, "the ascend-cpu library", object_cache_dir, tree)
        out = tmp / ASCEND_LIB_NAME
        proc = subprocess.run([CXX, *ASCEND_LINK_FLAGS, *objects, "-o", str(out)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"linking the ascend-cpu library failed:\n{_first_errors(proc.stderr)}")
        return out

    return _finish(cache_dir, target, compile_into)
