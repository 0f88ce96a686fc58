"""`harness check-acl`: the npu backend's ctypes bindings against the ACL headers (harness/backends/acl_signatures.py).

Exit 0 when every bound `acl*` function has its declaration's argument and return types; 1 on any difference;
3 (skipped) when ACL_INCLUDE_DIR does not name a folder holding acl/acl.h, or the probe cannot be built.
"""
from __future__ import annotations

import argparse

from harness.model.exitcodes import Exit


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("check-acl", help="check the npu backend's ACL bindings against the ACL headers",
                                   description=__doc__.splitlines()[0])
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.backends import acl_signatures, npu

    headers = acl_signatures.include_dir()
    if headers is None:
        print(acl_signatures.SKIP_MESSAGE)
        return Exit.ENV
    bound = npu.bindings()
    try:
        problems = acl_signatures.check(headers, bound)
    except acl_signatures.CheckError as exc:
        print(str(exc))
        return Exit.ENV
    for line in problems:
        print(line)
    print(f"check-acl: {len(bound)} bound functions against {headers}: "
          + (f"{len(problems)} differences" if problems else "every one as declared"))
    return Exit.FAIL if problems else Exit.OK
