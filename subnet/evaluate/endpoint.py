"""The endpoint a run talks to, through the validator's own transport client.

Every request goes through the validator's :class:`MinerClient`, with its bounds (deadlines,
byte cap, header and interim-answer limits) and its :class:`QueryStatus` words. A signed run (a
running miner) sends to a :class:`MinerTarget`, signed for the miner's hotkey; an unsigned run
(an engine: vLLM, SGLang, llama.cpp, at any http(s) URL, optionally behind an API key) sends to
an :class:`EngineTarget`, unsigned. Either way the run sees an :class:`Endpoint`.
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
from typing import Any

import aiohttp

from subnet.cli import UsageError
from subnet.config.settings import WalletSettings, default_wallet_path
from subnet.evaluate.settings import EvaluateError, EvaluateSettings, health_url, miner_address, models_url
from subnet.protocol import MAX_RESPONSE_BODY_BYTES, ChatCompletionRequest
from subnet.transport import ClientTimeouts, EngineTarget, MinerClient, MinerTarget, QueryResult, QueryTarget
from subnet.wallets import load_wallet

PROBE_TIMEOUT_S = 10.0
_MAX_ERROR_CHARS = 200


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

    client: MinerClient
    target: QueryTarget
    model: str
    temperature: float
    rate: float | None = None
    _next_start: float = field(default=0.0, init=False)

    async def query(
        self, target: QueryTarget, request: ChatCompletionRequest, **_options: Any
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
    """Probe the endpoint (one line when nothing answers) and open the validator's `MinerClient`
    on it: signed for the miner's hotkey in a signed run, unsigned to an engine's URL otherwise."""
    signer = load_signer(settings)
    address = miner_address(settings.endpoint) if signer is not None else None
    listed, receiver = await probe(settings, signed=signer is not None)
    model = settings.model if settings.model is not None else (listed or "")
    target: QueryTarget
    if address is not None:
        host, port = address
        target = MinerTarget(hotkey=receiver or "", ip=host, port=port)
    else:
        headers = [("Accept", "application/json")]
        if settings.api_key:
            headers.append(("Authorization", f"Bearer {settings.api_key}"))
        target = EngineTarget(settings.endpoint, tuple(headers))
    client = MinerClient(
        signer,
        timeouts=ClientTimeouts(connect_s=min(settings.timeout_s, 10.0), total_s=settings.timeout_s),
        global_concurrency=settings.concurrency,
        per_miner_concurrency=settings.concurrency,
    )
    async with client:
        yield Endpoint(client, target, model, settings.temperature, settings.rate)


async def probe(settings: EvaluateSettings, signed: bool) -> tuple[str | None, str | None]:
    """Check the endpoint answers: (its first listed model or None, the miner's hotkey when signing).

    The hotkey is --miner.hotkey, else read from the miner's open `/health`. Raises
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
                    "pass it with --miner.hotkey"
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
