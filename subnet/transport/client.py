"""The validator's HTTP client: signed chat-completion queries to miners, classified, never raising.

Each query to a miner (`MinerTarget`) is signed for its hotkey (`bt.http_auth.sign`, receiver
bound, fresh nonce), sent by aiohttp's client on a connection of its own (`force_close`: a
miner's tasks of a round go out at once and rounds are further apart than any keep-alive, so
pooling would not save a connect), bounded by a connect and a total deadline, read incrementally
up to a byte cap, and parsed with the protocol models. What a hostile miner can make the client
read is bounded: the heads (`MAX_HEADER_FIELDS` fields of `MAX_HEADER_FIELD_BYTES`), the interim
(1xx) answers before the final one (`MAX_INTERIM_HEADS`; aiohttp alone skips any number), and
the body (`max_response_bytes`, declared or streamed); bodies are never inflated.
Whatever the miner does (hang, reset, 500, 10 MB, garbage), `query()` returns a `QueryResult`
whose `status` says what happened; only the validator's own mistakes (using the client outside
`async with`, a wallet without a hotkey) raise.

An `EngineTarget` is the unsigned kind: a full chat-completions URL (http or https, any path) of
an OpenAI-compatible engine and the headers it wants (an API key), for `python -m
subnet.evaluate` run against an engine. Nothing is signed for it (a client built without a
wallet can query only these), and every bound above holds for it as for a miner.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeAlias

import aiohttp
import bittensor as bt
import pydantic_core
from prometheus_client import CollectorRegistry, Counter, Histogram
from pydantic import ValidationError

from subnet.metrics import LATENCY_BUCKETS, new_registry
from subnet.protocol import (
    MAX_RESPONSE_BODY_BYTES,
    ChatCompletionRequest,
    ChatCompletionResponse,
    ErrorBody,
)
from subnet.transport.server import CHAT_PATH

_MAX_ERROR_CHARS = 500
_READ_CHUNK = 64 * 1024
# Interim (1xx) answers skipped before the final one: a server sends one or two (100 Continue,
# 103 Early Hints); an endless stream of them is a way to keep the validator's loop busy.
MAX_INTERIM_HEADS = 4
# Header fields per answer head, and the bytes of one field (or the status line): together they
# bound a head at 64 KiB.
MAX_HEADER_FIELDS = 32
MAX_HEADER_FIELD_BYTES = 2048


class QueryStatus(enum.StrEnum):
    """How a query ended. Only `ok` carries a completion."""

    OK = "ok"
    TIMEOUT = "timeout"
    REFUSED = "refused"  # no HTTP answer: connection refused, reset or closed early
    HTTP_ERROR = "http_error"  # an HTTP answer other than 200
    TOO_LARGE = "too_large"
    BAD_JSON = "bad_json"
    BAD_SCHEMA = "bad_schema"


@dataclass(frozen=True)
class ClientTimeouts:
    """Per-query deadlines in seconds: TCP connect, and the whole exchange including the body."""

    connect_s: float = 3.0
    total_s: float = 30.0


@dataclass(frozen=True)
class MinerTarget:
    """Where a miner serves and which hotkey it must answer as."""

    hotkey: str
    ip: str
    port: int
    uid: int | None = None

    @property
    def url(self) -> str:
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        return f"http://{host}:{self.port}{CHAT_PATH}"


@dataclass(frozen=True)
class EngineTarget:
    """An OpenAI-compatible engine, queried unsigned: its full chat-completions URL and the
    headers sent with every request (e.g. `Authorization: Bearer KEY`)."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()


# Where a query goes: a miner (signed for its hotkey) or an engine (unsigned).
QueryTarget: TypeAlias = MinerTarget | EngineTarget


@dataclass(frozen=True)
class QueryResult:
    """The outcome of one query. `raw_text` is the miner's body (capped; bytes that are not
    UTF-8 written as `\\xNN` escapes)."""

    status: QueryStatus
    latency_s: float
    completion: ChatCompletionResponse | None = None
    http_status: int | None = None
    error: str | None = None
    raw_bytes_len: int = 0
    raw_text: str = ""

    @property
    def ok(self) -> bool:
        return self.status is QueryStatus.OK


@dataclass(frozen=True)
class ClientMetrics:
    """Prometheus series of one validator's client."""

    queries: Counter
    latency: Histogram
    response_bytes: Counter

    @classmethod
    def register(cls, registry: CollectorRegistry) -> ClientMetrics:
        return cls(
            queries=Counter(
                "subnet_validator_queries", "Miner queries by status", ["status"], registry=registry
            ),
            # What miners made this validator read (capped per answer): a miner that streams
            # megabytes shows here before it shows anywhere else.
            response_bytes=Counter(
                "subnet_validator_response_bytes", "Answer body bytes read from miners", registry=registry
            ),
            latency=Histogram(
                "subnet_validator_query_seconds",
                "Miner query latency by status",
                ["status"],
                buckets=LATENCY_BUCKETS,
                registry=registry,
            ),
        )


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text[:_MAX_ERROR_CHARS]


def _resolve_signer(wallet: Any) -> Any:
    """The hotkey signer, resolved once (a `bt.Wallet` re-reads its keyfile per signature)."""
    if isinstance(wallet, bt.Wallet) or (
        hasattr(wallet, "hotkey") and hasattr(getattr(wallet, "hotkey", None), "sign")
    ):
        return wallet.hotkey
    return bt.signing.resolve_signer(wallet, role="hotkey")


@dataclass(frozen=True, slots=True)
class _Answer:
    """A complete HTTP answer, not yet parsed."""

    latency_s: float
    http_status: int | None
    raw: bytes


class InterimFlood(aiohttp.ClientError):
    """The miner sent more than `MAX_INTERIM_HEADS` interim (1xx) answers."""


class _BoundedInterimResponse(aiohttp.ClientResponse):
    """aiohttp's response, refusing an answer after `MAX_INTERIM_HEADS` interim heads.

    `ClientResponse.start` reads heads until a final one, skipping 1xx answers without a count;
    each head read here goes through a counting wrapper of the connection's `read`.
    """

    async def start(self, connection: Any) -> aiohttp.ClientResponse:
        protocol = connection.protocol
        read = protocol.read
        heads = 0

        async def read_bounded() -> Any:
            nonlocal heads
            heads += 1
            if heads > MAX_INTERIM_HEADS + 1:
                raise InterimFlood(f"more than {MAX_INTERIM_HEADS} interim (1xx) answers")
            return await read()

        protocol.read = read_bounded
        try:
            return await super().start(connection)
        finally:
            del protocol.read  # the class's own method again


class _TooLarge(Exception):
    """The body exceeds the byte cap (declared up front, or while arriving)."""


class MinerClient:
    """Signed, bounded queries to miners. Use as `async with MinerClient(wallet) as client:`.

    Without a wallet (`MinerClient(None)`) it signs nothing and can query only `EngineTarget`s.
    """

    def __init__(
        self,
        wallet: Any,
        *,
        timeouts: ClientTimeouts | None = None,
        max_response_bytes: int = MAX_RESPONSE_BODY_BYTES,
        global_concurrency: int = 64,
        per_miner_concurrency: int = 2,
        max_raw_text_bytes: int = 64 * 1024,
        registry: CollectorRegistry | None = None,
        local_addr: tuple[str, int] | None = None,
    ) -> None:
        if global_concurrency < 1 or per_miner_concurrency < 1 or max_response_bytes < 1:
            raise ValueError("concurrency limits and max_response_bytes must be positive")
        self._wallet = wallet
        self.timeouts = timeouts or ClientTimeouts()
        self.max_response_bytes = max_response_bytes
        self.max_raw_text_bytes = max_raw_text_bytes
        self._per_miner_concurrency = per_miner_concurrency
        self._global = asyncio.Semaphore(global_concurrency)
        self._global_concurrency = global_concurrency
        # hotkey -> (semaphore, number of queries using it); entries go when unused.
        self._per_miner: dict[str, tuple[asyncio.Semaphore, int]] = {}
        self.registry = registry if registry is not None else new_registry()
        self.metrics = ClientMetrics.register(self.registry)
        self._local_addr = local_addr
        self._signer: Any = None
        self._session: aiohttp.ClientSession | None = None
        self._series_by_status: dict[QueryStatus, tuple[Any, Any]] = {}

    @property
    def hotkey(self) -> str:
        if self._wallet is None:
            raise RuntimeError("this MinerClient has no wallet, so no hotkey")
        if self._signer is None:
            self._signer = _resolve_signer(self._wallet)
        return str(self._signer.ss58_address)

    async def __aenter__(self) -> MinerClient:
        if self._signer is None and self._wallet is not None:
            self._signer = _resolve_signer(self._wallet)
        connector = aiohttp.TCPConnector(
            limit=self._global_concurrency, force_close=True, local_addr=self._local_addr
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            # The total deadline is ours (asyncio.timeout around the whole exchange).
            timeout=aiohttp.ClientTimeout(
                total=None, connect=self.timeouts.connect_s, sock_connect=self.timeouts.connect_s
            ),
            # A compressed body could inflate past the byte cap in one step: ask for none and
            # never inflate what arrives.
            auto_decompress=False,
            headers={"Accept-Encoding": "identity"},
            cookie_jar=aiohttp.DummyCookieJar(),  # nothing a miner sets is kept or sent on
            response_class=_BoundedInterimResponse,
            max_line_size=MAX_HEADER_FIELD_BYTES,
            max_field_size=MAX_HEADER_FIELD_BYTES,
            max_headers=MAX_HEADER_FIELDS,
            raise_for_status=False,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    @asynccontextmanager
    async def _miner_slot(self, hotkey: str) -> AsyncIterator[None]:
        semaphore, users = self._per_miner.get(hotkey, (None, 0))
        if semaphore is None:
            semaphore = asyncio.Semaphore(self._per_miner_concurrency)
        self._per_miner[hotkey] = (semaphore, users + 1)
        try:
            async with semaphore:
                yield
        finally:
            semaphore, users = self._per_miner[hotkey]
            if users <= 1:
                del self._per_miner[hotkey]
            else:
                self._per_miner[hotkey] = (semaphore, users - 1)

    async def query(
        self,
        target: QueryTarget,
        request: ChatCompletionRequest,
        *,
        parse_after: asyncio.Event | None = None,
    ) -> QueryResult:
        """Send `request` to `target`; waits for a free slot first (not counted in latency).

        With `parse_after`, a complete answer is parsed only once that event is set: the
        connection is closed and the latency taken when the answer is in, and the slots are
        free, so the caller can keep the loop for more urgent work (sending the rest of a
        round) without changing what is measured.
        """
        session = self._session
        if session is None:
            raise RuntimeError("MinerClient is not open: use `async with MinerClient(...)`")
        body = request.to_body()
        slot = target.hotkey if isinstance(target, MinerTarget) else target.url
        async with self._global, self._miner_slot(slot):
            outcome = await self._exchange(session, target, body)
        if isinstance(outcome, _Answer):
            if parse_after is not None and not parse_after.is_set():
                await parse_after.wait()
            result = self._classify(outcome)
        else:
            result = outcome
        queries, latency = self._series(result.status)
        queries.inc()
        latency.observe(result.latency_s)
        if result.raw_bytes_len:
            self.metrics.response_bytes.inc(result.raw_bytes_len)
        return result

    def _series(self, status: QueryStatus) -> tuple[Any, Any]:
        """The labelled metric children of a status, looked up once (labels() takes a lock)."""
        series = self._series_by_status.get(status)
        if series is None:
            series = (
                self.metrics.queries.labels(status.value),
                self.metrics.latency.labels(status.value),
            )
            self._series_by_status[status] = series
        return series

    async def _exchange(
        self, session: aiohttp.ClientSession, target: QueryTarget, body: bytes
    ) -> QueryResult | _Answer:
        if isinstance(target, EngineTarget):
            headers = dict(target.headers)
        elif self._signer is None:
            raise RuntimeError("this MinerClient has no wallet: it can query only EngineTargets")
        else:
            # Sign at send time, not when queued: the nonce's freshness window is seconds long.
            headers = bt.http_auth.sign(
                self._signer, method="POST", path=CHAT_PATH, body=body, receiver_ss58=target.hotkey
            )
        headers["Content-Type"] = "application/json"
        started = time.perf_counter()
        http_status: int | None = None
        # Filled as the body arrives, so a timeout or a cut connection still reports what came.
        received = bytearray()
        try:
            async with asyncio.timeout(self.timeouts.total_s):
                async with session.post(
                    target.url, data=body, headers=headers, allow_redirects=False
                ) as response:
                    http_status = response.status
                    await self._read_capped(response, received)
        except _TooLarge as exc:
            return self._result(
                QueryStatus.TOO_LARGE, time.perf_counter() - started, http_status, received, error=str(exc)
            )
        except TimeoutError as exc:
            # Covers our total deadline and aiohttp's connect deadline (both are TimeoutErrors).
            error = _describe(exc) if str(exc) else "no complete answer before the deadline"
            return self._result(
                QueryStatus.TIMEOUT, time.perf_counter() - started, http_status, received, error=error
            )
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            # ValueError: a line break in a chain-provided hotkey or address (no header forged).
            return self._result(
                QueryStatus.REFUSED,
                time.perf_counter() - started,
                http_status,
                received,
                error=_describe(exc),
            )
        return _Answer(time.perf_counter() - started, http_status, bytes(received))

    async def _read_capped(self, response: aiohttp.ClientResponse, received: bytearray) -> None:
        cap = self.max_response_bytes
        declared = response.content_length
        if declared is not None and declared > cap:
            raise _TooLarge(f"declared body of {declared} bytes exceeds {cap}")
        while chunk := await response.content.read(_READ_CHUNK):
            received += chunk
            if len(received) > cap:
                raise _TooLarge(f"body exceeds {cap} bytes")

    def _classify(self, answer: _Answer) -> QueryResult:
        # The latency is the exchange's, whenever the parsing happens.
        http_status, raw, latency_s = answer.http_status, answer.raw, answer.latency_s
        if http_status != 200:
            return self._result(
                QueryStatus.HTTP_ERROR, latency_s, http_status, raw, error=_error_message(raw)
            )
        try:
            document = pydantic_core.from_json(raw)
        except ValueError as exc:
            return self._result(QueryStatus.BAD_JSON, latency_s, http_status, raw, error=_describe(exc))
        try:
            completion = ChatCompletionResponse.model_validate(document)
        except ValidationError as exc:
            return self._result(QueryStatus.BAD_SCHEMA, latency_s, http_status, raw, error=_schema_error(exc))
        return self._result(QueryStatus.OK, latency_s, http_status, raw, completion=completion)

    def _result(
        self,
        status: QueryStatus,
        latency_s: float,
        http_status: int | None,
        raw: bytes | bytearray,
        *,
        error: str | None = None,
        completion: ChatCompletionResponse | None = None,
    ) -> QueryResult:
        return QueryResult(
            status=status,
            latency_s=latency_s,
            completion=completion,
            http_status=http_status,
            error=error,
            raw_bytes_len=len(raw),
            # Invalid UTF-8 is kept as escapes (\xff), not replaced: the stored raw output
            # shows exactly the bytes the miner sent.
            raw_text=bytes(raw[: self.max_raw_text_bytes]).decode("utf-8", errors="backslashreplace"),
        )


def _error_message(raw: bytes) -> str:
    """The miner's `{"error": ...}` message when it sent one, else a generic line."""
    try:
        error = ErrorBody.model_validate_json(raw).error
    except ValidationError:
        return "miner answered with an HTTP error"
    return f"{error.type}: {error.message}"[:_MAX_ERROR_CHARS]


def _schema_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "body"
    return f"{where}: {first['msg']} ({len(errors)} error(s))"[:_MAX_ERROR_CHARS]
