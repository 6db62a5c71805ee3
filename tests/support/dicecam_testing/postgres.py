"""A throwaway PostgreSQL server for the tracker's tests and benchmarks, started from Debian's
binaries in a temporary folder on a port this process holds until the server listens on it."""

from __future__ import annotations

import getpass
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from dicecam_testing.servers import bound_socket

__all__ = ["ThrowawayPostgres"]


class ThrowawayPostgres:
    """initdb + pg_ctl from ``/usr/lib/postgresql/*/bin`` in a temp dir, on a free port.

    As root the binaries run as the ``postgres`` user (``runuser``). Trust auth on 127.0.0.1.
    """

    def __init__(self) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins:
            raise FileNotFoundError(
                "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); "
                "install Debian's postgresql package to run these tests"
            )
        self.bin = Path(bins[-1]).parent
        self.dir = Path(tempfile.mkdtemp(prefix="dicecam-pg-"))
        self.user = "postgres"
        self._as: list[str] = []
        if os.geteuid() == 0:
            if shutil.which("runuser") is None:
                raise FileNotFoundError("running as root and `runuser` is missing")
            shutil.chown(self.dir, user="postgres")
            self._as = ["runuser", "-u", "postgres", "--"]
        else:
            self.user = getpass.getuser()
        self._port = bound_socket()  # held until the server listens on it (start)
        self.port: int = self._port.getsockname()[1]

    def _run(self, *cmd: str) -> None:
        proc = subprocess.run([*self._as, *cmd], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {proc.stderr.strip() or proc.stdout.strip()}")

    def start(self) -> ThrowawayPostgres:
        """initdb, then start the server on :attr:`port` (it binds beside the held socket, as
        both set ``SO_REUSEADDR``); the port is the server's once it answers."""
        data = self.dir / "data"
        opts = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=200 -c synchronous_commit=off"
        )
        initdb = ["-D", str(data), "-U", self.user, "-A", "trust", "-E", "UTF8", "--no-sync"]
        pg_ctl = ["-D", str(data), "-l", str(self.dir / "log"), "-o", opts, "-w", "-t", "60"]
        try:
            self._run(str(self.bin / "initdb"), *initdb)
            self._run(str(self.bin / "pg_ctl"), *pg_ctl, "start")
        finally:
            self._port.close()
        return self

    def stop(self) -> None:
        self._port.close()
        try:
            self._run(
                str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "stop"
            )
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)
