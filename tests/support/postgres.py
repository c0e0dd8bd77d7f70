"""A throwaway PostgreSQL cluster (tests, benchmarks): initdb + pg_ctl on a free loopback port in tmp.

Used by the ``postgres`` fixtures of the tests and by bench/validator.py; never by the node.
PostgreSQL refuses to run as root, so under root the cluster runs as the
``postgres`` system user when there is one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

REQUIRED_BINARIES = ("initdb", "pg_ctl")


class PostgresUnavailable(RuntimeError):
    """Why no throwaway cluster can be started here (the tests skip with this reason)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_as() -> list[str]:
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError as exc:
        raise PostgresUnavailable("running as root and there is no 'postgres' user to run initdb") from exc
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable("running as root and runuser is missing")
    return [runuser, "-u", "postgres", "--"]


@dataclass
class PostgresCluster:
    root: Path
    port: int
    prefix: list[str]

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def psql_dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        subprocess.run(
            [*self.prefix, "pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            check=False,
            timeout=60,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster() -> PostgresCluster:
    """Start a fresh cluster (trust auth, fsync off: it is thrown away) and return it."""
    missing = [name for name in REQUIRED_BINARIES if shutil.which(name) is None]
    if missing:
        raise PostgresUnavailable(f"PostgreSQL binaries not on PATH: {', '.join(missing)}")
    prefix = _run_as()
    root = Path(tempfile.mkdtemp(prefix="subnet-pg-"))
    if prefix:
        entry = pwd.getpwnam("postgres")
        os.chown(root, entry.pw_uid, entry.pw_gid)
    cluster = PostgresCluster(root=root, port=_free_port(), prefix=prefix)
    init = subprocess.run(
        [*prefix, "initdb", "-D", str(cluster.data_dir), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresUnavailable(f"initdb failed: {init.stderr.strip()[-300:]}")
    options = (
        f"-p {cluster.port} -k {root} -c listen_addresses=127.0.0.1 "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    log_path = root / "log"
    start = subprocess.run(
        [*prefix, "pg_ctl", "-D", str(cluster.data_dir), "-o", options, "-l", str(log_path), "-w", "start"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if start.returncode != 0:
        log = (root / "log").read_text(errors="replace")[-300:] if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise PostgresUnavailable(f"pg_ctl start failed: {start.stderr.strip()[-300:]} {log}")
    return cluster


def create_database(cluster: PostgresCluster, name: str) -> str:
    """Create an empty database in the cluster and return its async URL (callable inside a loop)."""
    import asyncpg

    async def create() -> None:
        connection = await asyncpg.connect(cluster.psql_dsn())
        try:
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()

    # A thread of its own, so that this works from sync code and from inside a running loop.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, create()).result(timeout=60)
    return cluster.url(name)
