"""A real PostgreSQL server for the tests: Debian's binaries, a temporary cluster on a free loopback port.

``initdb`` refuses to run as root, so under root the cluster belongs to ``nobody`` (run through
``runuser``); otherwise it runs as the current user. Authentication is ``trust`` on 127.0.0.1 only,
and the server's Unix socket stays inside its temporary directory.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SUPERUSER = "postgres"


def find_bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<major>/bin`` with initdb and pg_ctl (or the ones on PATH)."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    for directory in [*candidates, *(str(Path(found).parent) for found in filter(None, [shutil.which("initdb")]))]:
        if (Path(directory) / "initdb").exists() and (Path(directory) / "pg_ctl").exists():
            return Path(directory)
    return None


def unavailable_reason() -> str | None:
    """Why no server can start here (None when it can)."""
    if find_bin_dir() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root and runuser is missing: initdb refuses root"
    return None


def free_port() -> int:
    """A local TCP port no process holds now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """``start()`` a throwaway cluster, ``create_database()`` per test, ``stop()`` removes everything."""

    def __init__(self) -> None:
        bin_dir = find_bin_dir()
        assert bin_dir is not None, unavailable_reason()
        self.bin_dir = bin_dir
        self.home = Path(tempfile.mkdtemp(prefix="worldagent-pg-"))
        self.data = self.home / "data"
        self.port = free_port()
        self._count = 0
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.home, "nobody", "nogroup")
            self._as_user = ["runuser", "-u", "nobody", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self._as_user, *args], capture_output=True, text=True, timeout=120, cwd=self.home)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> PostgresServer:
        initdb, pg_ctl = str(self.bin_dir / "initdb"), str(self.bin_dir / "pg_ctl")
        self._run(initdb, "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-sync")
        # -F: no fsync (a throwaway cluster); the socket in our directory, TCP on loopback only.
        options = f"-h 127.0.0.1 -p {self.port} -k {self.home} -F -c max_connections=200"
        self._run(
            pg_ctl, "-D", str(self.data), "-l", str(self.home / "server.log"), "-w", "-t", "120", "-o", options, "start"
        )
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A fresh, empty database; its URL (a plain ``postgresql://`` one, as a user would write it)."""
        import psycopg

        self._count += 1
        name = f"test_{os.getpid()}_{self._count}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.home, ignore_errors=True)
