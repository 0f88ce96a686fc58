"""The exit codes every `harness` command and CI script reads (contract, docs/architecture.md "Exit codes").

A low module on purpose: commands, the session and the reports all name these values, and none of them should
import the command line to do so.
"""
from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0  #: every selected row passed (or the command did what it was asked)
    FAIL = 1  #: any FAIL/ERROR/CRASH/TIMEOUT, an unaccepted DISPUTED row, a regression, a surviving mutant
    INSUFFICIENT = 2  #: nothing failed but the evidence is insufficient (nothing selected, perf unjudged, ...)
    ENV = 3  #: environment or usage error: bad option, missing table or backend, unwritable output


def interrupted(signum: int) -> int:
    """128 + the signal number, as shells report a process a signal ended: 130 for Ctrl-C, 143 for SIGTERM."""
    return 128 + signum
