"""The devchain's persistence: one SQLite file (WAL) shared by every local process.

All chain state lives in this file. Each state change runs inside one
``BEGIN IMMEDIATE`` transaction, so concurrent writers from separate OS
processes serialise on SQLite's write lock and a process killed mid-write
leaves the previous committed state intact (the journal rolls the partial
transaction back on the next open).

The block number is not stored: it is derived from wall time,
``floor((now - genesis_time) / block_time)``, so no background process has to
"produce" blocks. ``skip_blocks`` moves the genesis time back, which every
process sharing the file observes at once. A new chain opens at block 1:
block 0 is the genesis block, which holds no extrinsics on a Substrate chain.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "1"

# Seconds a writer waits for another process's write transaction to finish.
BUSY_TIMEOUT_S = 30.0

# Block 0 is the genesis block: the head, and so every write after genesis, is at this block or later.
FIRST_BLOCK = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (
    address TEXT PRIMARY KEY,
    free INTEGER NOT NULL DEFAULT 0,
    nonce INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS subnets (
    netuid INTEGER PRIMARY KEY,
    owner_coldkey TEXT NOT NULL,
    owner_hotkey TEXT NOT NULL,
    registered_at INTEGER NOT NULL,
    name TEXT NOT NULL,
    symbol TEXT NOT NULL,
    locked INTEGER NOT NULL,
    tempo INTEGER NOT NULL,
    max_uids INTEGER NOT NULL,
    max_validators INTEGER NOT NULL,
    weights_rate_limit INTEGER NOT NULL,
    commit_reveal INTEGER NOT NULL,
    reveal_period INTEGER NOT NULL,
    max_weight_limit INTEGER NOT NULL,
    min_allowed_weights INTEGER NOT NULL,
    immunity_period INTEGER NOT NULL,
    burn INTEGER NOT NULL,
    registration_allowed INTEGER NOT NULL,
    serving_rate_limit INTEGER NOT NULL,
    weights_version INTEGER NOT NULL,
    activity_cutoff INTEGER NOT NULL,
    emission_per_block INTEGER NOT NULL,
    last_epoch_block INTEGER NOT NULL,
    epoch_index INTEGER NOT NULL DEFAULT 0,
    first_emission_block INTEGER
);
CREATE TABLE IF NOT EXISTS hotkeys (
    hotkey TEXT PRIMARY KEY,
    coldkey TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS neurons (
    netuid INTEGER NOT NULL,
    uid INTEGER NOT NULL,
    hotkey TEXT NOT NULL,
    coldkey TEXT NOT NULL,
    registered_at INTEGER NOT NULL,
    last_update INTEGER NOT NULL,
    validator_permit INTEGER NOT NULL DEFAULT 0,
    rank INTEGER NOT NULL DEFAULT 0,
    trust INTEGER NOT NULL DEFAULT 0,
    consensus INTEGER NOT NULL DEFAULT 0,
    incentive INTEGER NOT NULL DEFAULT 0,
    dividends INTEGER NOT NULL DEFAULT 0,
    emission INTEGER NOT NULL DEFAULT 0,
    -- u128 for IPv6 does not fit SQLite's 64-bit integers, so the ip is text.
    axon_ip TEXT NOT NULL DEFAULT '0',
    axon_port INTEGER NOT NULL DEFAULT 0,
    axon_ip_type INTEGER NOT NULL DEFAULT 4,
    axon_protocol INTEGER NOT NULL DEFAULT 0,
    axon_version INTEGER NOT NULL DEFAULT 0,
    axon_block INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (netuid, uid),
    UNIQUE (netuid, hotkey)
);
CREATE TABLE IF NOT EXISTS stakes (
    hotkey TEXT NOT NULL,
    coldkey TEXT NOT NULL,
    netuid INTEGER NOT NULL,
    alpha INTEGER NOT NULL,
    PRIMARY KEY (hotkey, coldkey, netuid)
);
CREATE TABLE IF NOT EXISTS weights (
    netuid INTEGER NOT NULL,
    uid INTEGER NOT NULL,
    dest INTEGER NOT NULL,
    value INTEGER NOT NULL,
    PRIMARY KEY (netuid, uid, dest)
);
CREATE TABLE IF NOT EXISTS weight_commits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    netuid INTEGER NOT NULL,
    hotkey TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    commit_block INTEGER NOT NULL,
    ciphertext TEXT NOT NULL,
    reveal_round INTEGER NOT NULL,
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS extrinsics (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    block INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    hash TEXT NOT NULL,
    signer TEXT NOT NULL,
    module TEXT NOT NULL,
    function TEXT NOT NULL,
    args TEXT NOT NULL,
    success INTEGER NOT NULL,
    error TEXT,
    events TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS extrinsics_by_block ON extrinsics (block);
CREATE INDEX IF NOT EXISTS extrinsics_by_hash ON extrinsics (hash);
"""


# Columns added after schema 1 shipped: added in place on open, so existing chains keep working.
_ADDED_COLUMNS = {"first_emission_block": "INTEGER"}


class StoreError(Exception):
    """The devchain file is missing, unreadable or not a devchain."""


def foreign_tables(conn: sqlite3.Connection) -> list[str]:
    """The tables of an open SQLite file when it holds tables and is no devchain; [] otherwise.

    A devchain file always has its ``meta`` table with a ``schema`` row; an empty file (or a
    new one) has no tables at all.
    """
    tables = sorted(
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        if not str(row[0]).startswith("sqlite_")
    )
    if not tables:
        return []
    if "meta" in tables and conn.execute("SELECT 1 FROM meta WHERE key = 'schema'").fetchone() is not None:
        return []
    return tables


def _refuse_foreign_tables(conn: sqlite3.Connection, path: Path) -> None:
    # Creating the chain's tables beside someone else's would change a file that is not ours
    # (a validator database named by mistake, say): refuse before writing anything.
    tables = foreign_tables(conn)
    if tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(
            f"{path} is an SQLite file but not a devchain (it holds the tables {shown}); "
            "it was left as it is: point --devchain.path at a devchain file or a new path"
        )


@dataclass(frozen=True)
class Clock:
    """Genesis time and block time: everything needed to turn wall time into blocks."""

    genesis_time: float
    block_time: float

    def block_at(self, now: float) -> int:
        # A new chain's genesis is dated one block back; the lower bound also absorbs float rounding there.
        return max(FIRST_BLOCK, int((now - self.genesis_time) / self.block_time))

    def timestamp_ms(self, block: int) -> int:
        return int((self.genesis_time + block * self.block_time) * 1000)


class Store:
    """A thread-safe handle on the devchain file.

    One connection per ``Store``; a lock serialises its use across threads
    (the SDK's blocking facade runs the client on its own loop thread).
    Cross-process safety comes from SQLite itself.
    """

    def __init__(self, path: Path, *, block_time: float, genesis_hook: Any = None) -> None:
        self.path = path
        self._lock = threading.RLock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self._conn.row_factory = sqlite3.Row
            self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            _refuse_foreign_tables(self._conn, path)  # before WAL mode, which would rewrite its header
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._initialise(block_time, genesis_hook)
        except (sqlite3.DatabaseError, OSError) as error:
            self._close_quietly()
            raise StoreError(f"cannot open devchain file {path}: {error}") from error
        except StoreError:
            self._close_quietly()
            raise

    def _close_quietly(self) -> None:
        connection: sqlite3.Connection | None = getattr(self, "_conn", None)
        if connection is not None:
            connection.close()

    def _initialise(self, block_time: float, genesis_hook: Any) -> None:
        with self.write() as conn:
            # executescript would commit the open transaction, so run statement by statement.
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            columns = {r["name"] for r in conn.execute("PRAGMA table_info(subnets)").fetchall()}
            for column, declaration in _ADDED_COLUMNS.items():
                if column not in columns:  # files created before the column existed
                    conn.execute(f"ALTER TABLE subnets ADD COLUMN {column} {declaration}")
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None:
                # Genesis is dated one block back so that nothing is ever recorded at block 0: the
                # chain's storage uses block 0 for "never" (an axon's block, LastUpdate), so a
                # serve or weights in a chain's first block would otherwise read back as not done.
                meta = {
                    "schema": SCHEMA_VERSION,
                    "genesis_time": repr(time.time() - FIRST_BLOCK * float(block_time)),
                    "block_time": repr(float(block_time)),
                    "chain_id": secrets.token_hex(8),
                }
                conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
                if genesis_hook is not None:
                    genesis_hook(conn)
            elif row["value"] != SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has devchain schema {row['value']}, expected {SCHEMA_VERSION}; "
                    "start over with `python -m subnet.devchain reset`"
                )

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: everything inside commits together or not at all."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: a consistent snapshot across several statements."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    def clock(self, conn: sqlite3.Connection) -> Clock:
        rows = dict(
            conn.execute("SELECT key, value FROM meta WHERE key IN ('genesis_time', 'block_time')").fetchall()
        )
        return Clock(float(rows["genesis_time"]), float(rows["block_time"]))

    def chain_id(self, conn: sqlite3.Connection) -> str:
        return str(conn.execute("SELECT value FROM meta WHERE key = 'chain_id'").fetchone()[0])


def to_json(value: Any) -> str:
    """JSON for call arguments and events; bytes become 0x-hex (commit ciphertexts)."""
    return json.dumps(value, default=_json_default, sort_keys=True)


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "rao"):
        return int(value.rao)
    raise TypeError(f"cannot store {type(value).__name__} in the devchain")
