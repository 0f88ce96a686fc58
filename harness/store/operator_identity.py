"""What was judged: the operator library under test as an identity of its own, apart from the harness that judged it.

A run's number belongs to a build of the user's operator, not to this repository's commit: the library's path,
sha256 and ELF build-id (read here from the file's `.note.gnu.build-id`, never by loading the library: the parent
does not run operator code), the aclblas symbols it exports and the ones the run calls, and the source revision
it was built from (`--operator-rev REV`, `--operator-src DIR`: commit, `git describe --always --dirty` and dirty
flag of the operator's own checkout; found by itself when the library sits inside a git checkout). On a device the
runtime's identity (CANN, driver, SoC, cores) comes from the backend's describe(). `label()` is the one short name
of a revision that runs, history, compare, publish and the report show first.
"""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path
from typing import Any, BinaryIO

#: The handle functions of the ABI (ARCHITECTURE.md "Operators"); every run calls them.
ABI_SYMBOLS = ("aclblasCreate", "aclblasDestroy", "aclblasSetStream", "aclblasSetWorkspace")
#: The prefix of the operator symbols an identity lists (a library exports much else: the C++ runtime's).
SYMBOL_PREFIX = b"aclblas"
#: Bounds on what is read of a library: headers, one note section, the dynamic symbol and string tables.
_MAX_SECTIONS = 4096
_MAX_NOTE_BYTES = 1 << 16
_MAX_TABLE_BYTES = 64 << 20
#: What describe() may say of a device runtime; kept as the `runtime` of the identity.
RUNTIME_KEYS = ("cann_version", "driver_version", "runtime_version", "soc_name", "ai_cores", "vector_cores")

SHT_NOTE, SHT_DYNSYM, NT_GNU_BUILD_ID = 7, 11, 3


class _NotElf(ValueError):
    """The file is not an ELF shared object this reader understands (its facts are then left empty)."""


def _read(f: BinaryIO, offset: int, size: int, limit: int) -> bytes:
    if size < 0 or size > limit:
        raise _NotElf(f"a section of {size} bytes (at most {limit} are read)")
    f.seek(offset)
    data = f.read(size)
    if len(data) != size:
        raise _NotElf("truncated")
    return data


def _sections(f: BinaryIO) -> tuple[str, list[tuple[int, int, int, int, int]]]:
    """(struct byte order, [(type, offset, size, link, entsize)] of every section) of an ELF file."""
    ident = f.read(64)
    if len(ident) < 52 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
        raise _NotElf("no ELF header")
    wide, order = ident[4] == 2, "<" if ident[5] == 1 else ">"
    if wide:
        shoff, = struct.unpack_from(order + "Q", ident, 0x28)
        shentsize, shnum = struct.unpack_from(order + "HH", ident, 0x3A)
        layout, size = order + "IIQQQQIIQQ", 64
    else:
        shoff, = struct.unpack_from(order + "I", ident, 0x20)
        shentsize, shnum = struct.unpack_from(order + "HH", ident, 0x2E)
        layout, size = order + "IIIIIIIIII", 40
    if shentsize != size or not 0 < shnum <= _MAX_SECTIONS:
        raise _NotElf("no section headers")
    table = _read(f, shoff, shnum * size, _MAX_SECTIONS * 64)
    out = []
    for i in range(shnum):
        _, kind, _, _, offset, length, link, _, _, entsize = struct.unpack_from(layout, table, i * size)
        out.append((kind, offset, length, link, entsize))
    return order + ("Q" if wide else "I"), out


def _build_id(f: BinaryIO, order: str, sections: list) -> str:
    for kind, offset, length, _, _ in sections:
        if kind != SHT_NOTE:
            continue
        notes, at = _read(f, offset, length, _MAX_NOTE_BYTES), 0
        while at + 12 <= len(notes):
            namesz, descsz, note_type = struct.unpack_from(order[0] + "III", notes, at)
            name_at = at + 12
            desc_at = name_at + (namesz + 3) // 4 * 4
            if note_type == NT_GNU_BUILD_ID and notes[name_at:name_at + namesz].rstrip(b"\0") == b"GNU":
                return notes[desc_at:desc_at + descsz].hex()
            at = desc_at + (descsz + 3) // 4 * 4
    return ""


def _exported(f: BinaryIO, order: str, sections: list) -> list[str]:
    """The defined global or weak functions of the dynamic symbol table whose names start with SYMBOL_PREFIX."""
    wide = order[1] == "Q"
    entry = 24 if wide else 16
    names = set()
    for kind, offset, length, link, _ in sections:
        if kind != SHT_DYNSYM or not 0 <= link < len(sections):
            continue
        table = _read(f, offset, length, _MAX_TABLE_BYTES)
        _, str_offset, str_length, _, _ = sections[link]
        strings = _read(f, str_offset, str_length, _MAX_TABLE_BYTES)
        for at in range(0, len(table) - entry + 1, entry):
            if wide:
                name, info, _, shndx = struct.unpack_from(order[0] + "IBBH", table, at)
            else:
                name, = struct.unpack_from(order[0] + "I", table, at)
                info, _, shndx = struct.unpack_from(order[0] + "BBH", table, at + 12)
            if shndx == 0 or info >> 4 not in (1, 2) or info & 0xF != 2:
                continue
            end = strings.find(b"\0", name)
            text = strings[name:end if end >= 0 else len(strings)]
            if text.startswith(SYMBOL_PREFIX):
                names.add(text.decode("ascii", "replace"))
    return sorted(names)


def elf_facts(path: str | Path) -> dict[str, Any]:
    """{"build_id": hex or "", "exported": [aclblas symbols], "problem": why they are empty or ""} of a library
    file, read with bounded reads."""
    try:
        with open(path, "rb") as f:
            order, sections = _sections(f)
            return {"build_id": _build_id(f, order, sections), "exported": _exported(f, order, sections),
                    "problem": ""}
    except (OSError, _NotElf, struct.error) as exc:
        return {"build_id": "", "exported": [], "problem": f"not read as ELF: {exc}"}


def _git(cwd: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=20,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def checkout_of(path: str | Path) -> Path | None:
    """The top of the git checkout a file or directory sits in, or None."""
    where = Path(path)
    top = _git(where if where.is_dir() else where.parent, "rev-parse", "--show-toplevel")
    return Path(top) if top else None


def source_revision(rev: str | None = None, src: str | Path | None = None,
                    library: str | Path | None = None, clean: bool = False) -> dict[str, Any]:
    """The operator's source revision: `rev` as the user named it, and from the checkout `src` (else the one the
    library sits in: "detected") its commit, `git describe --always --dirty` and dirty flag. With both, `rev` is
    resolved in `src` (the commit is the revision's, and dirty only says the checkout's state). `clean`: the
    library was built from the commit's own tree (harness ab's exports and worktrees), never dirty."""
    detected = src is None and library is not None
    top = checkout_of(src if src is not None else library) if (src is not None or library) else None
    out: dict[str, Any] = {"rev": rev or "", "src": str(top or src or ""), "commit": "", "describe": "",
                           "dirty": None, "detected": bool(detected and top)}
    if top is None:
        return out
    head = _git(top, "rev-parse", "HEAD")
    commit = _git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}") if rev else head
    dirty = not clean and bool(_git(top, "status", "--porcelain", "--untracked-files=no"))
    # --dirty describes the work tree, so it takes no revision: only for the checked-out one
    describe = _git(top, "describe", "--tags", "--always",
                    *(["--dirty"] if commit == head and not clean else [commit])) if commit else ""
    out.update(commit=commit, dirty=dirty, describe=describe)
    return out


def label(identity: dict[str, Any] | None) -> str:
    """The operator revision a person reads: the --operator-rev given, else `git describe` of its checkout, else
    its commit, else its sha256; "" when nothing is known."""
    identity = identity or {}
    revision = identity.get("revision") or {}
    if revision.get("rev"):
        return str(revision["rev"])
    if revision.get("describe"):
        return str(revision["describe"])
    if revision.get("commit"):
        return str(revision["commit"])[:12] + ("-dirty" if revision.get("dirty") else "")
    sha = identity.get("sha256") or ""
    return f"sha256:{sha[:12]}" if sha else ""


def identify(library: str | None, sha256: str | None = None, *, rev: str | None = None, src: str | None = None,
             symbols: list[str] | None = None, runtime: dict[str, Any] | None = None,
             clean: bool = False) -> dict[str, Any]:
    """report.json `operator`: the library's identity and revision. `symbols`: the operator symbols the run
    calls (besides ABI_SYMBOLS); `runtime`: a backend's describe() (its RUNTIME_KEYS are kept); `clean`: see
    source_revision."""
    from harness.store.provenance import sha256 as file_sha256

    facts = elf_facts(library) if library else {"build_id": "", "exported": [], "problem": ""}
    if library and not sha256:
        try:
            sha256 = file_sha256(library)
        except OSError:
            sha256 = ""
    used = [*ABI_SYMBOLS, *(symbols or [])]
    found = set(facts["exported"])
    identity = {
        "path": library or "", "sha256": sha256 or "", "build_id": facts["build_id"],
        "symbols": {"exported": facts["exported"], "used": [s for s in used if s in found],
                    "missing": [s for s in used if s not in found] if found else []},
        "revision": source_revision(rev, src, library if library and not library.startswith("/proc/") else None,
                                    clean),
        "runtime": {k: (runtime or {})[k] for k in RUNTIME_KEYS if (runtime or {}).get(k) not in (None, "")},
    }
    if facts["problem"] and library:
        identity["problem"] = facts["problem"]
    identity["label"] = label(identity)
    return identity


def blank(path: Any = None, sha256: Any = None) -> dict[str, Any]:
    """The identity of a run recorded before identities existed: what its operator_lib said, nothing more."""
    identity = {"path": path or "", "sha256": sha256 or "", "build_id": "",
                "symbols": {"exported": [], "used": [], "missing": []},
                "revision": {"rev": "", "src": "", "commit": "", "describe": "", "dirty": None, "detected": False},
                "runtime": {}}
    identity["label"] = label(identity)
    return identity


def options_problem(rev: str | None, src: str | None) -> str:
    """Why --operator-rev / --operator-src cannot be recorded ("" when they can): a source that is no git
    checkout, or a revision it does not hold."""
    if src is None:
        return ""
    top = checkout_of(src) if Path(src).is_dir() else None
    if top is None:
        return f"--operator-src {src}: not a directory inside a git checkout"
    if rev and not _git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"):
        return f"--operator-rev {rev}: not a revision of the checkout {top}"
    return ""


def of_run(options: Any, backend_info: dict[str, Any], ops_used: set[str] | list[str]) -> dict[str, Any]:
    """The identity of a run's operator from its parsed options (--operator-rev, --operator-src; absent in a
    shell without them) and the backend's describe(); `ops_used`: the operators of the rows it runs."""
    from harness.model import operators as ops

    symbols = [ops.get(op).SYMBOL for op in sorted(ops_used) if ops.get(op) is not None]
    return identify(backend_info.get("library"), backend_info.get("library_sha256"),
                    rev=getattr(options, "operator_rev", None), src=getattr(options, "operator_src", None),
                    symbols=symbols, runtime=backend_info)
