"""The endpoint a run talks to, opened as the validator's transport would talk to it.

A signed run (a running miner) sends every request through the validator's own
:class:`MinerClient`, bound to the miner's hotkey. An unsigned run (an engine: vLLM, SGLang,
llama.cpp, at any http(s) URL, optionally behind an API key) goes through :class:`EngineClient`,
which answers with the transport's own :class:`QueryResult` and :class:`QueryStatus`, so
everything after the request is one path. Either way the run sees an :class:`Endpoint`.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import pydantic_core
from pydantic import ValidationError

from subnet.evaluate.settings import EvaluateError, EvaluateSettings, health_url, miner_address, models_url
from subnet.protocol import MAX_RESPONSE_BODY_BYTES, ChatCompletionRequest, ChatCompletionResponse
from subnet.transport import ClientTimeouts, MinerClient, MinerTarget, QueryResult, QueryStatus

PROBE_TIMEOUT_S = 10.0
_MAX_ERROR_CHARS = 200


class Querier(Protocol):
    """What answers a request: the validator's `MinerClient`, or `EngineClient`."""

    async def query(self, target: MinerTarget, request: ChatCompletionRequest) -> QueryResult: ...


class EngineClient:
    """Unsigned chat completions to an OpenAI-compatible engine at any http(s) URL.

    The validator's `MinerClient` signs every request for a miner's hotkey at a miner's address;
    an engine needs neither, and may sit behind https, a path prefix or an API key. What it
    returns is the transport's own `QueryResult`, classified by the transport's `QueryStatus`.
    """

    def __init__(
        self,
        url: str,
        timeouts: ClientTimeouts,
        concurrency: int,
        api_key: str | None = None,
        max_response_bytes: int = MAX_RESPONSE_BODY_BYTES,
    ) -> None:
        self.url = url
        self.timeouts = timeouts
        self.max_response_bytes = max_response_bytes
        self._concurrency = concurrency
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> EngineClient:
        self._session = aiohttp.ClientSession(
            headers=self._headers,
            timeout=aiohttp.ClientTimeout(total=self.timeouts.total_s, connect=self.timeouts.connect_s),
            connector=aiohttp.TCPConnector(limit=self._concurrency),
        )
        return self

    async def __aexit__(self, *_exc: object) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def query(self, target: MinerTarget, request: ChatCompletionRequest) -> QueryResult:
        """POST one chat completion; never raises for the engine's faults (`target` is unused)."""
        if self._session is None:
            raise RuntimeError("EngineClient is not open: use `async with EngineClient(...)`")
        started = time.perf_counter()
        http_status: int | None = None
        raw = b""

        def result(status: QueryStatus, error: str | None = None, **extra: Any) -> QueryResult:
            return QueryResult(
                status,
                time.perf_counter() - started,
                http_status=http_status,
                error=error,
                raw_bytes_len=len(raw),
                raw_text=raw[:4096].decode("utf-8", errors="backslashreplace"),
                **extra,
            )

        try:
            async with self._session.post(self.url, data=request.to_body()) as response:
                http_status = response.status
                raw = await _read_capped(response, self.max_response_bytes)
        except TimeoutError:
            return result(QueryStatus.TIMEOUT, f"no answer within {self.timeouts.total_s:g} s")
        except (aiohttp.ClientError, OSError) as exc:
            return result(QueryStatus.REFUSED, _describe(exc))
        if len(raw) > self.max_response_bytes:
            return result(QueryStatus.TOO_LARGE, f"answer over {self.max_response_bytes} bytes")
        if http_status != 200:
            return result(QueryStatus.HTTP_ERROR, raw[:_MAX_ERROR_CHARS].decode("utf-8", "replace"))
        try:
            document = pydantic_core.from_json(raw)
        except ValueError as exc:
            return result(QueryStatus.BAD_JSON, _describe(exc))
        try:
            completion = ChatCompletionResponse.model_validate(document)
        except ValidationError as exc:
            return result(QueryStatus.BAD_SCHEMA, str(exc.errors()[0]["msg"])[:_MAX_ERROR_CHARS])
        return result(QueryStatus.OK, completion=completion)


async def _read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The body up to `cap` + 1 bytes (one more than allowed tells the caller it was too big)."""
    received = bytearray()
    while len(received) <= cap:
        chunk = await response.content.read(cap + 1 - len(received))
        if not chunk:
            break
        received.extend(chunk)
    return bytes(received)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:_MAX_ERROR_CHARS]


@dataclass
class Endpoint:
    """An opened endpoint: send requests as `query(target, request)`, as the validator's
    round and episode player do. Each request gets the run's model and temperature, and its
    start waits for its slot under --rate."""

    client: Querier
    target: MinerTarget
    model: str
    temperature: float
    rate: float | None = None
    _next_start: float = field(default=0.0, init=False)

    async def query(
        self, target: MinerTarget, request: ChatCompletionRequest, **_options: Any
    ) -> QueryResult:
        await self._paced()
        shown = request.model_copy(update={"model": self.model, "temperature": self.temperature})
        return await self.client.query(target, shown)

    async def _paced(self) -> None:
        """Wait for this request's start slot when --rate is set (slots 1/rate seconds apart)."""
        if self.rate is None:
            return
        now = time.monotonic()
        start = max(now, self._next_start)
        self._next_start = start + 1.0 / self.rate
        await asyncio.sleep(start - now)


@asynccontextmanager
async def open_endpoint(settings: EvaluateSettings) -> AsyncIterator[Endpoint]:
    """Probe the endpoint (one line when nothing answers) and open its client: the validator's
    `MinerClient` for a signed run, `EngineClient` otherwise."""
    signer = load_signer(settings)
    address = miner_address(settings.endpoint) if signer is not None else None
    listed, receiver = await probe(settings, signed=signer is not None)
    model = settings.model if settings.model is not None else (listed or "")
    timeouts = ClientTimeouts(connect_s=min(settings.timeout_s, 10.0), total_s=settings.timeout_s)
    client: Any
    if address is not None:
        host, port = address
        target = MinerTarget(hotkey=receiver or "", ip=host, port=port)
        client = MinerClient(
            signer,
            timeouts=timeouts,
            global_concurrency=settings.concurrency,
            per_miner_concurrency=settings.concurrency,
        )
    else:
        target = MinerTarget(hotkey="", ip="", port=0)
        client = EngineClient(settings.endpoint, timeouts, settings.concurrency, settings.api_key)
    async with client:
        yield Endpoint(client, target, model, settings.temperature, settings.rate)


async def probe(settings: EvaluateSettings, signed: bool) -> tuple[str | None, str | None]:
    """Check the endpoint answers: (its first listed model or None, the miner's hotkey when signing).

    The hotkey is --miner-hotkey, else read from the miner's open `/health`. Raises
    EvaluateError when nothing answers: the endpoint is down or the URL wrong.
    """
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    # A short limit of its own: these are checks before the real run.
    timeout = aiohttp.ClientTimeout(total=min(settings.timeout_s, PROBE_TIMEOUT_S))
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:
        payload = await _get_json(session, models_url(settings.endpoint), settings.endpoint)
        models = payload.get("data") if isinstance(payload, dict) else None
        listed = None
        if isinstance(models, list) and models and isinstance(models[0], dict):
            name = models[0].get("id")
            listed = name if isinstance(name, str) else None
        receiver = settings.receiver_hotkey
        if signed and receiver is None:
            health = await _get_json(session, health_url(settings.endpoint), settings.endpoint)
            hotkey = health.get("hotkey") if isinstance(health, dict) else None
            if not isinstance(hotkey, str) or not hotkey:
                raise EvaluateError(
                    f"{health_url(settings.endpoint)} does not name the miner's hotkey; "
                    "pass it with --miner-hotkey"
                )
            receiver = hotkey
    return listed, receiver


async def _get_json(session: aiohttp.ClientSession, url: str, endpoint: str) -> Any:
    """GET `url` as JSON; None for any answer that is not a 200 with JSON."""
    try:
        async with session.get(url) as response:
            if response.status != 200:
                return None
            return json.loads(await _read_capped(response, MAX_RESPONSE_BODY_BYTES))
    except (aiohttp.ClientConnectionError, TimeoutError, OSError) as exc:
        raise EvaluateError(
            f"cannot reach {endpoint}: {_describe(exc)}; is the server running and the URL right?"
        ) from None
    except (ValueError, aiohttp.ClientError):
        return None


def load_signer(settings: EvaluateSettings) -> Any:
    """The hotkey that signs requests (None: plain HTTP). EvaluateError when the wallet is unusable."""
    if settings.wallet_name is None:
        return None
    from subnet.cli import UsageError
    from subnet.config import WalletSettings, default_wallet_path
    from subnet.wallets import load_wallet

    wallet_settings = WalletSettings(
        name=settings.wallet_name,
        hotkey=settings.wallet_hotkey,
        path=settings.wallet_path or _environment_wallet_path() or default_wallet_path(),
    )
    try:
        return load_wallet(wallet_settings).hotkey
    except UsageError as exc:
        raise EvaluateError(str(exc)) from None


def _environment_wallet_path() -> Path | None:
    """BT_WALLET_PATH, which the neurons read for --wallet.path too (None: unset or empty)."""
    value = os.environ.get("BT_WALLET_PATH", "").strip()
    return Path(value).expanduser() if value else None
