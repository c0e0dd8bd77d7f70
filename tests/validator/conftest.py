"""Validator test fixtures: SQLite and throwaway PostgreSQL databases, a simulated devchain subnet."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import create_engine, sqlite_url, upgrade
from tests.support.postgres import PostgresCluster, PostgresUnavailable, create_database, start_cluster
from tests.support.simulation import SimulatedSubnet, start_simulated_subnet, stop_simulated_miners

_database_names = itertools.count()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    try:
        cluster = start_cluster()
    except PostgresUnavailable as exc:
        pytest.skip(f"no throwaway PostgreSQL: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PostgresCluster) -> str:
    """An empty PostgreSQL database of its own for one test."""
    return create_database(pg_cluster, f"test_{next(_database_names)}")


@pytest.fixture
def sqlite_db_url(tmp_path: Path) -> str:
    return sqlite_url(tmp_path / "validator.sqlite3")


@pytest.fixture
async def migrated_sqlite(sqlite_db_url: str) -> AsyncIterator[str]:
    await upgrade(sqlite_db_url)
    yield sqlite_db_url


@pytest.fixture
async def sqlite_engine(migrated_sqlite: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(migrated_sqlite)
    yield engine
    await engine.dispose()


# --- a devchain subnet with simulated miners ---------------------------------------------------


@pytest.fixture
async def simulated_subnet(tmp_path: Path) -> AsyncIterator[SimulatedSubnet]:
    subnet = await start_simulated_subnet(tmp_path)
    try:
        yield subnet
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()


@pytest.fixture
async def quick_subnet(tmp_path: Path) -> AsyncIterator[SimulatedSubnet]:
    """Three well-behaved miners: rounds end as soon as they answer (no miner hangs to the timeout)."""
    subnet = await start_simulated_subnet(tmp_path, ("right", "right40", "garbage"))
    try:
        yield subnet
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()
