"""``DevChain``: the bittensor SDK's ``Substrate`` protocol, implemented over one SQLite file.

Hand it to the real SDK and everything above the transport (reads, intents,
``bt.SetWeights``, ``bt.BurnedRegister``, the metagraph) runs unchanged::

    chain = DevChain("/tmp/dev.sqlite", block_time=0.25)
    async with bt.Subtensor("local", substrate=chain) as client:
        await client.execute(bt.BurnedRegister(netuid=1), wallet)

Separate processes opening the same file share one chain. A small admin API
(``fund``, ``create_subnet``, ``set_hyperparameter``, ``add_stake``,
``register``, ``skip_blocks``) serves set-up code and tests.

Signatures: the SDK hands ``submit`` the signer itself, so each extrinsic's
canonical payload is signed with it and the signature verified against the
claimed ss58 address before dispatch (a wrong or public-only key is refused
as ``BadProof``). This proves key possession inside the submitting process
only; anyone who can write the SQLite file can change the chain.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import bittensor_core
import platformdirs
from bittensor import Balance, ChainError, ErrorCode, ExtrinsicResult
from bittensor._generated.errors import ERRORS

from subnet.devchain import rules
from subnet.devchain.rules import RAO_PER_TAO, Ctx, DispatchError
from subnet.devchain.runtime import CALLS, CONSTANTS, RUNTIME_APIS, STORAGE
from subnet.devchain.store import Clock, Store, to_json

T = TypeVar("T")

DEFAULT_BLOCK_TIME = 1.0
SPEC_VERSION = 1
# ML-KEM-768 encapsulation keys are 1184 bytes; all-zero coefficients are a valid encoding.
_MEV_KEY = bytes(1184)
_CARRIER = ("MevShield", "submit_encrypted")
# Polling more often than a block gains nothing; a big jump (skip_blocks) yields only the head.
_MAX_HEADERS_PER_POLL = 64
_ERROR_DOCS = {info.name: info.docs for info in ERRORS.values()}
# Error names the devchain raises that no runtime has, with the code the SDK should see.
_DEVCHAIN_ONLY_ERRORS = {"InvalidArguments": ErrorCode.INVALID_ARGUMENT}


def default_path() -> Path:
    """Where the devchain lives unless told otherwise (the user's data directory)."""

    # Same place as subnet.config's default, so the CLI finds the chain the neurons use.
    return Path(platformdirs.user_data_dir("toolcall-subnet", appauthor=False)) / "devchain.sqlite"


@dataclass(frozen=True)
class ComposedCall:
    """A chain-ready call: what ``compose`` returns and ``submit`` accepts."""

    module: str
    function: str
    params: dict[str, Any]

    @property
    def call_module(self) -> str:
        return self.module

    @property
    def call_function(self) -> str:
        return self.function

    @property
    def call_args(self) -> dict[str, Any]:
        return self.params

    @property
    def value(self) -> dict[str, Any]:
        return {
            "call_module": self.module,
            "call_function": self.function,
            "call_args": [{"name": k, "value": v} for k, v in self.params.items()],
        }

    @property
    def data(self) -> bytes:
        """Canonical bytes of the call (what gets signed); the SDK treats ``.data`` as 'already composed'."""
        return to_json([self.module, self.function, self.params]).encode()


def _extrinsic_hash(payload: bytes) -> str:
    return "0x" + hashlib.blake2b(payload, digest_size=32).hexdigest()


def _chain_error(error: DispatchError) -> ChainError:
    docs = _ERROR_DOCS.get(error.name, error.name)
    message = f"{docs} ({error.detail})" if error.detail else docs
    return ChainError(message, error.name, code=_DEVCHAIN_ONLY_ERRORS.get(error.name))


def _as_composed(call: Any) -> ComposedCall:
    """A call the devchain can dispatch; anything else is refused before signing."""
    if not isinstance(call, ComposedCall):
        module, function, params = call
        call = ComposedCall(str(module), str(function), dict(params))
    key = (call.module, call.function)
    if key not in CALLS and key != _CARRIER:
        raise ChainError(f"the devchain does not implement {call.module}.{call.function}")
    return call


class DevChain:
    """A development chain that satisfies ``bittensor.Substrate``; see the module docstring."""

    def __init__(self, path: str | Path | None = None, *, block_time: float | None = None) -> None:
        if block_time is not None and not 0 < block_time <= 600:
            raise ValueError(f"block_time must be in (0, 600] seconds, got {block_time}")
        self.path = Path(path) if path is not None else default_path()
        self._requested_block_time = block_time
        self._store: Store | None = None
        self._open_lock = threading.Lock()
        self._chain_id = ""
        # (signer, nonce) -> (hash, call) of inner extrinsics signed for a MEV-shield carrier.
        self._shielded: dict[tuple[str, int], tuple[str, ComposedCall]] = {}
        # netuid -> token symbol, installed by bittensor.Client.connect (display only).
        self.token_symbols: dict[int, str] = {}

    # --- Lifecycle -----------------------------------------------------------------------

    def _opened(self) -> Store:
        with self._open_lock:
            if self._store is None:
                store = Store(
                    self.path,
                    block_time=self._requested_block_time or DEFAULT_BLOCK_TIME,
                    genesis_hook=_fund_dev_accounts,
                )
                with store.read() as conn:
                    self._chain_id = store.chain_id(conn)
                self._store = store
            return self._store

    async def connect(self) -> None:
        await asyncio.to_thread(self._opened)

    async def close(self) -> None:
        with self._open_lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def balance(self, rao: int, netuid: int = 0) -> Balance:
        symbol = self.token_symbols.get(netuid) if netuid else None
        return Balance(int(rao), netuid, symbol)

    # --- Transactions --------------------------------------------------------------------

    def _ctx(self, store: Store, conn: sqlite3.Connection) -> Ctx:
        clock = store.clock(conn)
        block = clock.block_at(time.time())
        return Ctx(conn, block, clock.timestamp_ms(block))

    def read_sync(self, fn: Callable[[Ctx], T]) -> T:
        """Run ``fn`` on a consistent snapshot, first catching up any epoch that is due."""
        store = self._opened()
        with store.read() as conn:
            ctx = self._ctx(store, conn)
            if not rules.epochs_due(ctx):
                return fn(ctx)
        return self.write_sync(fn)

    def write_sync(self, fn: Callable[[Ctx], T]) -> T:
        """Run ``fn`` in one write transaction (after due epochs): all of it commits, or none."""
        store = self._opened()
        with store.write() as conn:
            ctx = self._ctx(store, conn)
            rules.run_due_epochs(Ctx(conn, ctx.block, ctx.timestamp_ms))
            return fn(ctx)

    async def _read(self, fn: Callable[[Ctx], T]) -> T:
        return await asyncio.to_thread(self.read_sync, fn)

    def clock(self) -> Clock:
        """Genesis and block time as currently stored (skip_blocks moves genesis)."""
        store = self._opened()
        with store.read() as conn:
            return store.clock(conn)

    # --- Blocks --------------------------------------------------------------------------

    def _hash_of(self, block: int) -> str:
        self._opened()  # the chain id seeds every hash
        digest = hashlib.blake2b(f"{self._chain_id}:{block}".encode(), digest_size=24).hexdigest()
        return f"0x{digest}{block:016x}"

    def _block_of(self, block_hash: str | None) -> int | None:
        if block_hash is None:
            return None
        text = str(block_hash).removeprefix("0x")
        if len(text) != 64 or self._hash_of(int(text[48:], 16)) != "0x" + text:
            raise ChainError(f"unknown block hash {block_hash} on this devchain")
        return int(text[48:], 16)

    def current_block(self) -> int:
        return self.clock().block_at(time.time())

    async def block_hash(self, block: int | None = None) -> str:
        head = await asyncio.to_thread(self.current_block)
        if block is None:
            block = head
        if block < 0 or block > head:
            raise ChainError(f"block {block} has not been produced yet (head is {head})")
        return self._hash_of(block)

    async def block_number(self) -> int:
        return await asyncio.to_thread(self.current_block)

    async def finalized_block_number(self) -> int:
        # Instant finality: every produced block is final.
        return await self.block_number()

    async def block_time(self) -> float:
        return (await asyncio.to_thread(self.clock)).block_time

    async def spec_version(self) -> int:
        return SPEC_VERSION

    def _header(self, block: int) -> dict[str, Any]:
        return {"number": block, "hash": self._hash_of(block), "parentHash": self._hash_of(max(0, block - 1))}

    async def get_block(self, block_number: int | None = None, block_hash: str | None = None) -> dict | None:
        head = await self.block_number()
        block = self._block_of(block_hash) if block_hash is not None else block_number
        block = head if block is None else block
        if block > head:
            return None

        def load(ctx: Ctx) -> list[sqlite3.Row]:
            return ctx.all("SELECT * FROM extrinsics WHERE block = ? ORDER BY idx", block)

        rows = await self._read(load)
        timestamp = (await asyncio.to_thread(self.clock)).timestamp_ms(block)
        inherent = {
            "call": {
                "call_module": "Timestamp",
                "call_function": "set",
                "call_args": [{"name": "now", "value": timestamp}],
            }
        }
        extrinsics = [inherent] + [
            {
                "extrinsic_hash": r["hash"],
                "address": r["signer"],
                "call": {
                    "call_module": r["module"],
                    "call_function": r["function"],
                    "call_args": [{"name": k, "value": v} for k, v in json.loads(r["args"]).items()],
                },
            }
            for r in rows
        ]
        return {"header": self._header(block), "extrinsics": extrinsics}

    async def blocks(self, *, finalized: bool = False) -> AsyncIterator[dict]:
        """Block headers as wall time produces them (polled: nothing pushes blocks here)."""
        block_time = await self.block_time()
        last = await self.block_number()
        while True:
            await asyncio.sleep(block_time / 2)
            head = await self.block_number()
            first = max(last + 1, head - _MAX_HEADERS_PER_POLL + 1)
            for number in range(first, head + 1):
                yield {"header": self._header(number)}
            last = max(last, head)

    async def events(self, block_hash: str | None = None) -> list[dict]:
        block = self._block_of(block_hash)

        def load(ctx: Ctx) -> list[dict]:
            number = ctx.block if block is None else block
            rows = ctx.all("SELECT idx, events FROM extrinsics WHERE block = ? ORDER BY idx", number)
            return [record for r in rows for record in json.loads(r["events"])]

        return await self._read(load)

    # --- Reads ---------------------------------------------------------------------------

    async def query(
        self, module: str, storage_function: str, params: list | None = None, block_hash: str | None = None
    ) -> Any:
        item = _storage_item(module, storage_function)
        self._block_of(block_hash)
        return await self._read(lambda ctx: item.get(ctx, list(params or [])))

    async def map_has_entries(
        self, module: str, storage_function: str, params: list, block_hash: str | None = None
    ) -> bool:
        return bool(await self.query_map(module, storage_function, params, block_hash))

    async def query_map(
        self, module: str, storage_function: str, params: list | None = None, block_hash: str | None = None
    ) -> list[tuple[Any, Any]]:
        entries = _storage_item(module, storage_function).entries
        if entries is None:
            raise ChainError(f"the devchain cannot iterate {module}.{storage_function} as a map")
        self._block_of(block_hash)
        return await self._read(lambda ctx: entries(ctx, list(params or [])))

    async def query_batch(
        self, module: str, storage_function: str, param_sets: list[list], block_hash: str | None = None
    ) -> list[Any]:
        item = _storage_item(module, storage_function)
        self._block_of(block_hash)
        return await self._read(lambda ctx: [item.get(ctx, list(p)) for p in param_sets])

    async def runtime_call(self, api: str, method: str, params: list, block_hash: str | None = None) -> Any:
        handler = RUNTIME_APIS.get((api, method))
        if handler is None:
            raise ChainError(f"the devchain does not implement runtime API {api}.{method}")
        self._block_of(block_hash)
        return await self._read(lambda ctx: handler(ctx, params))

    async def constant(self, module: str, name: str) -> Any:
        value = CONSTANTS.get((module, name))
        if value is None:
            raise ChainError(f"the devchain does not define constant {module}.{name}")
        return value(await self.block_time())

    async def decode_scale(self, type_string: str, data: Any) -> Any:
        raise ChainError("the devchain stores decoded values; it has no SCALE codec")

    # --- Calls and fees ------------------------------------------------------------------

    async def compose(self, call: Any) -> ComposedCall:
        return _as_composed(call)

    async def estimate_fee(self, call: Any, keypair: Any) -> Balance:
        return Balance.from_rao(0)  # the devchain charges no transaction fees

    async def estimate_weight(self, call: Any, keypair: Any) -> dict:
        return {"ref_time": 0, "proof_size": 0}

    async def account_next_index(self, address: str) -> int:
        def load(ctx: Ctx) -> int:
            row = ctx.one("SELECT nonce FROM accounts WHERE address = ?", address)
            return int(row["nonce"]) if row else 0

        return await self._read(load)

    # --- Writes --------------------------------------------------------------------------

    async def mev_next_key(self) -> bytes | None:
        return _MEV_KEY

    async def _signed_payload(self, call: ComposedCall, keypair: Any, nonce: int | None) -> bytes | None:
        """The canonical payload, or None when the signer cannot sign for its address."""
        payload = to_json([call.module, call.function, call.params, keypair.ss58_address, nonce]).encode()
        try:
            signature = keypair.sign(payload)
            if inspect.isawaitable(signature):
                signature = await signature
            verifier = bittensor_core.Keypair(ss58_address=keypair.ss58_address)
            return payload if verifier.verify(payload, bytes(signature)) else None
        except Exception:
            return None

    async def sign_extrinsic(self, call: Any, keypair: Any, *, nonce: int, period: int) -> tuple[bytes, str]:
        """Sign an inner (MEV-shielded) extrinsic and remember it for its carrier.

        The devchain cannot decrypt ML-KEM ciphertexts without the secret key
        a real block author holds, so the carrier is matched to the inner
        extrinsic remembered here, in this process (same signer, carrier
        nonce + 1). Kept in memory on purpose: two processes that race on
        one account's nonce each open their own inner extrinsic.
        """
        composed = _as_composed(call)
        payload = await self._signed_payload(composed, keypair, nonce)
        if payload is None:
            raise ChainError("the signer could not produce a valid signature", "BadProof")
        extrinsic_hash = _extrinsic_hash(payload)
        with self._open_lock:
            self._shielded[(keypair.ss58_address, nonce)] = (extrinsic_hash, composed)
        return payload, extrinsic_hash

    async def find_extrinsic(self, extrinsic_hash: str, block_hash: str) -> ExtrinsicResult | None:
        block = self._block_of(block_hash)

        def load(ctx: Ctx) -> sqlite3.Row | None:
            return ctx.one("SELECT * FROM extrinsics WHERE hash = ? AND block = ?", extrinsic_hash, block)

        row = await self._read(load)
        return None if row is None else self._result(row)

    async def submit(
        self,
        call: Any,
        keypair: Any,
        *,
        nonce: int | None = None,
        period: int | None = None,
        wait_for_inclusion: bool = True,
        wait_for_finalization: bool = True,
    ) -> ExtrinsicResult:
        composed = _as_composed(call)
        payload = await self._signed_payload(composed, keypair, nonce)
        if payload is None:
            error = ChainError("Transaction has a bad signature", "BadProof")
            return ExtrinsicResult(success=False, message=error.message, error=error)
        row = await asyncio.to_thread(
            self.write_sync, lambda ctx: self._apply(ctx, composed, keypair.ss58_address, nonce, payload)
        )
        if not (wait_for_inclusion or wait_for_finalization):
            return ExtrinsicResult(success=True, message="Submitted (not waiting).")
        return self._result(row)

    async def submit_signed(
        self,
        extrinsic: Any,
        keypair: Any,
        *,
        wait_for_inclusion: bool = True,
        wait_for_finalization: bool = True,
    ) -> ExtrinsicResult:
        raise ChainError(
            "the devchain accepts calls through submit(); pre-signed extrinsics are not supported"
        )

    async def prepare(self, call: Any, *, address: str, **kwargs: Any) -> Any:
        raise ChainError("the devchain does not support out-of-process signing")

    async def submit_signature(self, unsigned: Any, signature: bytes | str, **kwargs: Any) -> ExtrinsicResult:
        raise ChainError("the devchain does not support out-of-process signing")

    def multisig_account(self, signatories: list[str], threshold: int) -> Any:
        raise ChainError("the devchain does not support multisig accounts")

    async def submit_multisig(
        self, call: Any, keypair: Any, multisig_account: Any, **kwargs: Any
    ) -> ExtrinsicResult:
        raise ChainError("the devchain does not support multisig accounts")

    # --- Dispatch ------------------------------------------------------------------------

    def _apply(
        self, ctx: Ctx, call: ComposedCall, signer: str, nonce: int | None, payload: bytes
    ) -> sqlite3.Row:
        """Include one extrinsic in the current block; for a carrier, its inner extrinsic too."""
        row = ctx.one("SELECT nonce FROM accounts WHERE address = ?", signer)
        used_nonce = nonce if nonce is not None else (int(row["nonce"]) if row else 0)
        inner: tuple[str, ComposedCall] | None = None
        if (call.module, call.function) == _CARRIER:
            with self._open_lock:
                inner = self._shielded.get((signer, used_nonce + 1))
            handler: Callable[[Ctx, str, dict[str, Any]], None] = _carrier_check(inner is not None)
        else:
            handler = CALLS[(call.module, call.function)]
        outer = self._include(ctx, _extrinsic_hash(payload), signer, used_nonce, call, handler)
        if inner is not None and outer["success"]:
            inner_hash, inner_call = inner
            inner_handler = CALLS[(inner_call.module, inner_call.function)]
            self._include(ctx, inner_hash, signer, used_nonce + 1, inner_call, inner_handler)
            with self._open_lock:
                self._shielded.pop((signer, used_nonce + 1), None)
        return outer

    def _include(
        self,
        ctx: Ctx,
        extrinsic_hash: str,
        signer: str,
        nonce: int,
        call: ComposedCall,
        handler: Callable[[Ctx, str, dict[str, Any]], None],
    ) -> sqlite3.Row:
        ctx.run(
            "INSERT INTO accounts (address, nonce) VALUES (?, ?) "
            "ON CONFLICT (address) DO UPDATE SET nonce = MAX(nonce, excluded.nonce)",
            signer,
            nonce + 1,
        )
        index_row = ctx.one("SELECT COUNT(*) AS n FROM extrinsics WHERE block = ?", ctx.block)
        index = (int(index_row["n"]) if index_row else 0) + 1  # index 0 is the timestamp inherent
        ctx.events = []
        error: DispatchError | None = None
        # A failed dispatch is still included (nonce used) but its state changes roll back.
        ctx.run("SAVEPOINT dispatch")
        try:
            handler(ctx, signer, call.params)
        except DispatchError as refused:
            error = refused
            ctx.run("ROLLBACK TO dispatch")
            ctx.events = []
        except (KeyError, TypeError, ValueError) as bad_args:
            error = DispatchError("InvalidArguments", f"{call.module}.{call.function}: {bad_args}")
            ctx.run("ROLLBACK TO dispatch")
            ctx.events = []
        ctx.run("RELEASE dispatch")
        if error is None:
            ctx.emit("System", "ExtrinsicSuccess", dispatch_info={})
        else:
            ctx.emit("System", "ExtrinsicFailed", dispatch_error={"name": error.name, "detail": error.detail})
        records = [
            {"phase": {"ApplyExtrinsic": index}, "extrinsic_idx": index, "event": e} for e in ctx.events
        ]
        ctx.run(
            "INSERT INTO extrinsics "
            "(block, idx, hash, signer, module, function, args, success, error, events) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ctx.block,
            index,
            extrinsic_hash,
            signer,
            call.module,
            call.function,
            to_json(call.params),
            int(error is None),
            None if error is None else to_json([error.name, error.detail]),
            to_json(records),
        )
        row = ctx.one("SELECT * FROM extrinsics WHERE id = last_insert_rowid()")
        assert row is not None
        return row

    def _result(self, row: sqlite3.Row) -> ExtrinsicResult:
        block, index = int(row["block"]), int(row["idx"])
        common: dict[str, Any] = {
            "block_hash": self._hash_of(block),
            "extrinsic_id": f"{block}-{index:04d}",
            "fee": Balance.from_rao(0),
            "events": json.loads(row["events"]),
        }
        if row["success"]:
            return ExtrinsicResult(success=True, message="Success", **common)
        name, detail = json.loads(row["error"])
        error = _chain_error(DispatchError(name, detail))
        return ExtrinsicResult(success=False, message=error.message, error=error, **common)

    # --- Admin API (set-up code and tests) -------------------------------------------------

    def fund(self, address: str, tao: float) -> int:
        """Credit ``tao`` to an account out of thin air; returns its new free balance in rao."""
        rao = round(tao * RAO_PER_TAO)

        def run(ctx: Ctx) -> int:
            rules.credit(ctx, address, rao)
            return rules.balance(ctx, address)

        return self.write_sync(run)

    def create_subnet(
        self,
        owner_coldkey: str,
        owner_hotkey: str,
        *,
        netuid: int | None = None,
        name: str = "",
        **hyperparameters: Any,
    ) -> int:
        """Create a subnet (no lock cost); the owner hotkey takes uid 0, as on subtensor."""
        return self.write_sync(
            lambda ctx: rules.create_subnet(
                ctx, owner_coldkey, owner_hotkey, netuid=netuid, name=name, hyperparameters=hyperparameters
            )
        )

    def set_hyperparameter(self, netuid: int, name: str, value: Any) -> None:
        self.write_sync(lambda ctx: rules.set_hyperparameter(ctx, netuid, name, value))

    def add_stake(self, coldkey: str, hotkey: str, netuid: int, tao: float) -> None:
        """Stake from ``coldkey``'s free balance (fund it first)."""
        rao = round(tao * RAO_PER_TAO)
        self.write_sync(lambda ctx: rules.add_stake(ctx, coldkey, hotkey, netuid, rao))

    def register(self, netuid: int, hotkey: str, coldkey: str) -> int:
        """Burned registration paid by ``coldkey``; returns the uid."""
        return self.write_sync(lambda ctx: rules.burned_register(ctx, coldkey, netuid, hotkey))

    def skip_blocks(self, count: int) -> int:
        """Jump the chain ``count`` blocks ahead (for every process sharing the file); returns the head."""
        if count < 0:
            raise ValueError("the devchain cannot go back in time")

        def run(ctx: Ctx) -> None:
            ctx.run(
                "UPDATE meta SET value = CAST(CAST(value AS REAL) - ? * "
                "(SELECT CAST(value AS REAL) FROM meta WHERE key = 'block_time') AS TEXT) "
                "WHERE key = 'genesis_time'",
                count,
            )

        self.write_sync(run)
        return self.current_block()

    def metagraph(self, netuid: int) -> dict[str, Any] | None:
        """The metagraph runtime record (what ``status`` prints)."""
        return self.read_sync(
            lambda ctx: RUNTIME_APIS[("SubnetInfoRuntimeApi", "get_metagraph")](ctx, [netuid])
        )

    def netuids(self) -> list[int]:
        return self.read_sync(
            lambda ctx: [int(r["netuid"]) for r in ctx.all("SELECT netuid FROM subnets ORDER BY netuid")]
        )


def _storage_item(module: str, name: str) -> Any:
    item = STORAGE.get((module, name))
    if item is None:
        raise ChainError(f"the devchain does not model storage item {module}.{name}")
    return item


def _carrier_check(matched: bool) -> Callable[[Ctx, str, dict[str, Any]], None]:
    def handler(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
        if not matched:
            raise DispatchError(
                "DecryptionFailed",
                "the devchain only opens shielded extrinsics signed through its own sign_extrinsic",
            )
        ctx.emit("MevShield", "EncryptedSubmitted", who=signer)

    return handler


def dev_keypair(uri: str) -> Any:
    """The well-known development keypair for a URI such as ``//Alice``."""
    return bittensor_core.Keypair.create_from_uri(uri)


def _fund_dev_accounts(conn: sqlite3.Connection) -> None:
    """Genesis: the well-known development accounts start rich, as on a localnet."""
    for uri in rules.DEV_ACCOUNT_URIS:
        conn.execute(
            "INSERT INTO accounts (address, free) VALUES (?, ?)",
            (dev_keypair(uri).ss58_address, rules.DEV_ACCOUNT_BALANCE_RAO),
        )
