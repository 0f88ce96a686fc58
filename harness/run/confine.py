"""What keeps a worker (the process running the operator) away from the harness's files and processes.

Applied by the worker to itself before it loads the operator library, each layer where the kernel has it:
* no_new_privs: nothing it executes gains privileges (and Landlock requires it);
* Landlock (Linux >= 5.13): no file may be written, created, removed or renamed anywhere but the worker's own
  fault-note directory and /dev/null; from ABI 6 (Linux 6.12) no signal reaches a process
  outside the worker's own domain and no abstract unix socket outside it can be reached. Landlock also denies ptrace
  (hence /proc/<pid>/mem) of processes outside the domain. Descriptors the worker already holds (its pipe, the
  row's shared memory, the library) stay usable;
* capabilities: a worker of a root harness drops every capability, so root's CAP_DAC_OVERRIDE, CAP_SYS_PTRACE,
  CAP_KILL and CAP_SYS_ADMIN are gone (it keeps uid 0: the interpreter under /root must stay readable).
The harness itself turns PR_SET_DUMPABLE off while it runs rows (harness.run.runner), so a worker of its own uid cannot
open its /proc/<pid>/fd or /proc/<pid>/mem either. `layers()` names what was applied, for the report.
"""
from __future__ import annotations

import ctypes
import os
import platform

_libc = ctypes.CDLL(None, use_errno=True)
#: Set to 1 to run workers unconfined (debugging an operator with tools that need ptrace, say).
OFF_VARIABLE = "HARNESS_NO_CONFINE"
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
_CAPSET = {"x86_64": 126, "aarch64": 91}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR, _MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
_MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK, _MAKE_SYM, _REFER, _TRUNCATE = 1 << 9, 1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
#: What a worker may not do outside the allowed places (reading and executing stay allowed everywhere).
_WRITES_V1 = (_WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_CHAR | _MAKE_DIR | _MAKE_REG | _MAKE_SOCK
              | _MAKE_FIFO | _MAKE_BLOCK | _MAKE_SYM)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _syscall(number: int, *args: object) -> int:
    _libc.syscall.restype = ctypes.c_long
    return _libc.syscall(ctypes.c_long(number), *args)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is disabled)."""
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        return 0
    abi = _syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(abi))


def _landlock(writable: list[str]) -> str:
    """Restrict this process's writes to `writable` paths; a phrase saying what was applied ("" if nothing)."""
    abi = landlock_abi()
    if abi < 1:
        return ""
    create, add_rule, restrict = _SYSCALLS[platform.machine()]
    handled = _WRITES_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    scoped = (_SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET) if abi >= 6 else 0
    attr = _RulesetAttr(handled, 0, scoped)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 8 if abi < 4 else 16
    ruleset = _syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return ""
    try:
        for path in writable:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                is_dir = os.path.isdir(path)
                rights = handled if is_dir else handled & (_WRITE_FILE | _TRUNCATE)
                rule = _PathBeneath(rights, fd)
                _syscall(add_rule, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                         ctypes.c_uint32(0))
            finally:
                os.close(fd)
        if _syscall(restrict, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return ""
    finally:
        os.close(ruleset)
    scope = ", signals and abstract sockets scoped to the worker" if scoped else ""
    return f"Landlock ABI {abi}: writes only under {', '.join(writable)}{scope}"


def _drop_capabilities() -> str:
    """Every capability of a root worker dropped (bounding set first, then effective/permitted/inheritable)."""
    if os.geteuid() != 0 or platform.machine() not in _CAPSET:
        return ""
    for cap in range(64):
        _libc.prctl(ctypes.c_int(_PR_CAPBSET_DROP), ctypes.c_ulong(cap), ctypes.c_ulong(0), ctypes.c_ulong(0),
                    ctypes.c_ulong(0))
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    if _syscall(_CAPSET[platform.machine()], ctypes.byref(header), ctypes.byref(data)) != 0:
        return ""
    return "all capabilities dropped (uid 0 kept)"


def apply(writable: list[str]) -> list[str]:
    """Confine this process (the worker, before it loads the operator): writes only under `writable` (its fault
    note directory) and to /dev/null; the layers applied, in words."""
    layers = []
    if _libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0)) == 0:
        layers.append("no_new_privs")
    if note := _landlock([*writable, "/dev/null"]):
        layers.append(note)
    if note := _drop_capabilities():
        layers.append(note)
    return layers
