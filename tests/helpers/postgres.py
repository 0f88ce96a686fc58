"""A real PostgreSQL server for tests: initdb + pg_ctl in a temporary directory, listening on loopback only, trust
authentication, stopped and removed afterwards. The server refuses to run as root, so as root (CI) it runs as the
`postgres` user of Debian's package."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


def binaries() -> str | None:
    """The directory holding initdb and pg_ctl (Debian: /usr/lib/postgresql/<version>/bin), or None."""
    for directory in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True) + os.get_exec_path():
        if os.path.exists(os.path.join(directory, "initdb")) and os.path.exists(os.path.join(directory, "pg_ctl")):
            return directory
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server() -> Iterator[str]:
    """Start a throw-away server; yields the URL of its `postgres` database."""
    bindir = binaries()
    assert bindir, "no PostgreSQL binaries (apt-get install postgresql)"
    run_as: list[str] = []
    owner = None
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    root = tempfile.mkdtemp(prefix="harness-pg-")
    data = os.path.join(root, "data")
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    port = _free_port()

    def call(*argv: str) -> None:
        subprocess.run([*run_as, *argv], check=True, capture_output=True, timeout=120)
    try:
        call(f"{bindir}/initdb", "-D", data, "-U", "harness", "--auth=trust", "-E", "UTF8", "--no-sync")
        call(f"{bindir}/pg_ctl", "-D", data, "-w", "-t", "60", "-l", os.path.join(root, "log"), "-o",
             f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} -c fsync=on", "start")
        try:
            yield f"postgresql://harness@127.0.0.1:{port}/postgres"
        finally:
            call(f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def reset(url: str) -> None:
    """Drop the harness's tables, so each test starts from an empty history on the shared server."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for table in ("samples", "results", "runs", "schema_migrations"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
