"""The miner's gate over loopback: honest requests are served, every kind of bad one is refused
before it reaches the handler, with the documented status and error type."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp
import pytest

from subnet.protocol import MAX_MESSAGES, ChatCompletionResponse, ErrorBody
from subnet.transport import CHAT_PATH, AuthPolicy, Refusal, ServerPolicy

NS = 1_000_000_000


@dataclass(frozen=True)
class Forgery:
    """How a refused request is built from an honest one, and what the miner must answer."""

    status: int
    error_type: str
    build: Callable[..., tuple[dict[str, str], bytes]]
    policy: ServerPolicy | None = None


def _honest(ctx, role: str = "validator", **sign_options):
    body = ctx.kit.sample_request().to_body()
    return ctx.kit.signed_headers(ctx.wallets[role], body, ctx.miner_hotkey, **sign_options), body


def _missing_headers(ctx):
    return {"Content-Type": "application/json"}, ctx.kit.sample_request().to_body()


def _missing_signature(ctx):
    headers, body = _honest(ctx)
    del headers["X-Bittensor-Signature"]
    return headers, body


def _forged_signature(ctx):
    # The forger signs with its own key but claims the validator's hotkey.
    headers, body = _honest(ctx, role="forger")
    headers["X-Bittensor-Hotkey"] = ctx.wallets.hotkey("validator")
    return headers, body


def _garbage_signature(ctx):
    headers, body = _honest(ctx)
    headers["X-Bittensor-Signature"] = "0x" + "ab" * 64
    return headers, body


def _tampered_body(ctx):
    headers, body = _honest(ctx)
    return headers, body.replace(b"Paris", b"Tokyo")


def _for_another_miner(ctx):
    body = ctx.kit.sample_request().to_body()
    return ctx.kit.signed_headers(ctx.wallets["validator"], body, ctx.wallets.hotkey("other_miner")), body


def _stale(ctx):
    return _honest(ctx, nonce_ns=ctx.now_ns() - 60 * NS)


def _future(ctx):
    return _honest(ctx, nonce_ns=ctx.now_ns() + 30 * NS)


def _unsupported_version(ctx):
    headers, body = _honest(ctx)
    headers["X-Bittensor-Version"] = "2"
    return headers, body


def _signed_for_another_path(ctx):
    return _honest(ctx, path="/v1/other")


def _malformed_json(ctx):
    body = b'{"messages": [{"role": "user", "content": "hi"}'
    return ctx.kit.signed_headers(ctx.wallets["validator"], body, ctx.miner_hotkey), body


def _signed_body(payload: object) -> Callable[..., tuple[dict[str, str], bytes]]:
    def build(ctx):
        body = json.dumps(payload).encode()
        return ctx.kit.signed_headers(ctx.wallets["validator"], body, ctx.miner_hotkey), body

    return build


def _as(role: str) -> Callable[..., tuple[dict[str, str], bytes]]:
    def build(ctx):
        return _honest(ctx, role=role)

    return build


_USER = [{"role": "user", "content": "hi"}]

FORGERIES: dict[str, Forgery] = {
    "missing headers": Forgery(401, "missing_auth", _missing_headers),
    "missing signature": Forgery(401, "missing_auth", _missing_signature),
    "forged signature": Forgery(401, "bad_signature", _forged_signature),
    "garbage signature": Forgery(401, "bad_signature", _garbage_signature),
    "tampered body": Forgery(401, "bad_signature", _tampered_body),
    "signed for another path": Forgery(401, "bad_signature", _signed_for_another_path),
    "signed for another miner": Forgery(401, "wrong_receiver", _for_another_miner),
    "stale timestamp": Forgery(401, "stale_request", _stale),
    "future timestamp": Forgery(401, "stale_request", _future),
    "unsupported version": Forgery(401, "malformed_auth", _unsupported_version),
    "unregistered hotkey": Forgery(403, "not_registered", _as("forger")),
    "no validator permit": Forgery(403, "no_validator_permit", _as("no_permit")),
    "stake below minimum": Forgery(
        403, "insufficient_stake", _as("poor"), ServerPolicy(auth=AuthPolicy(min_stake=100.0))
    ),
    "blacklisted hotkey": Forgery(403, "blacklisted", _as("banned"), None),
    "not on whitelist": Forgery(403, "not_whitelisted", _as("validator_b"), None),
    "malformed json": Forgery(400, "bad_json", _malformed_json),
    "json not an object": Forgery(400, "invalid_request", _signed_body([1, 2, 3])),
    "no messages": Forgery(400, "invalid_request", _signed_body({"model": "m", "messages": []})),
    "unknown role": Forgery(
        400, "invalid_request", _signed_body({"messages": [{"role": "wizard", "content": "x"}]})
    ),
    "too many messages": Forgery(
        400, "invalid_request", _signed_body({"messages": _USER * (MAX_MESSAGES + 1)})
    ),
    "too many tools": Forgery(
        400,
        "invalid_request",
        _signed_body({"messages": _USER, "tools": [{"type": "function", "function": {"name": "f"}}] * 129}),
    ),
    "overlong content": Forgery(
        400, "invalid_request", _signed_body({"messages": [{"role": "user", "content": "x" * 64_001}]})
    ),
    "temperature out of range": Forgery(
        400, "invalid_request", _signed_body({"messages": _USER, "temperature": 7})
    ),
    "wrong type": Forgery(400, "invalid_request", _signed_body({"messages": "hello"})),
}


@dataclass
class Ctx:
    kit: object
    wallets: object
    miner_hotkey: str
    now_ns: Callable[[], int]


@pytest.fixture
def ctx(kit, wallets):
    import time

    return Ctx(kit=kit, wallets=wallets, miner_hotkey=wallets.hotkey("miner"), now_ns=time.time_ns)


def _policy_for(name: str, forgery: Forgery, wallets) -> ServerPolicy:
    if name == "blacklisted hotkey":
        return ServerPolicy(auth=AuthPolicy(blacklist=frozenset({wallets.hotkey("banned")})))
    if name == "not on whitelist":
        return ServerPolicy(auth=AuthPolicy(whitelist=frozenset({wallets.hotkey("validator")})))
    return forgery.policy or ServerPolicy()


async def _until(condition: Callable[[], bool], within_s: float = 5.0) -> None:
    """Wait until `condition()` holds (polling), rather than guess a sleep on a loaded machine."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not condition():
        assert loop.time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


async def _post(http: aiohttp.ClientSession, url: str, headers: dict[str, str], body: bytes):
    async with http.post(url + CHAT_PATH, data=body, headers=headers) as response:
        return response.status, await response.read()


async def test_honest_signed_request_is_served(start_miner, http, ctx, wallets) -> None:
    miner = await start_miner()
    headers, body = _honest(ctx)
    status, raw = await _post(http, miner.url, headers, body)
    assert status == 200, raw
    completion = ChatCompletionResponse.model_validate_json(raw)
    assert completion.message.tool_calls is not None
    assert completion.message.tool_calls[0].function.name == "get_weather"
    assert len(miner.handler.calls) == 1
    request, caller = miner.handler.calls[0]
    assert caller.hotkey == wallets.hotkey("validator")
    assert caller.uid == 1
    assert caller.stake == 5_000.0
    assert request.messages[0].text() == "What is the weather in Paris?"


async def test_unknown_fields_are_ignored(start_miner, http, ctx) -> None:
    miner = await start_miner()
    payload = {"messages": _USER, "stream": False, "seed": 7, "logprobs": None, "user": "x"}
    headers, body = _signed_body(payload)(ctx)
    status, raw = await _post(http, miner.url, headers, body)
    assert status == 200, raw
    assert len(miner.handler.calls) == 1


@pytest.mark.parametrize("name", list(FORGERIES))
async def test_refused_before_the_handler(name, start_miner, http, ctx, wallets) -> None:
    forgery = FORGERIES[name]
    miner = await start_miner(policy=_policy_for(name, forgery, wallets))
    headers, body = forgery.build(ctx)
    status, raw = await _post(http, miner.url, headers, body)
    assert status == forgery.status, raw
    assert ErrorBody.model_validate_json(raw).error.type == forgery.error_type
    assert miner.handler.calls == []


async def test_replayed_request_is_refused(start_miner, http, ctx) -> None:
    miner = await start_miner()
    headers, body = _honest(ctx)
    first, _ = await _post(http, miner.url, headers, body)
    second, raw = await _post(http, miner.url, headers, body)
    assert first == 200
    assert second == 401
    assert ErrorBody.model_validate_json(raw).error.type == "replayed_request"
    assert len(miner.handler.calls) == 1


async def test_oversized_body_refused_by_content_length(start_miner, http, ctx) -> None:
    miner = await start_miner(policy=ServerPolicy(max_body_bytes=4096))
    body = json.dumps({"messages": [{"role": "user", "content": "x" * 10_000}]}).encode()
    headers = ctx.kit.signed_headers(ctx.wallets["validator"], body, ctx.miner_hotkey)
    status, raw = await _post(http, miner.url, headers, body)
    assert status == 413
    assert ErrorBody.model_validate_json(raw).error.type == "body_too_large"
    assert miner.handler.calls == []


async def test_oversized_chunked_body_refused_while_reading(start_miner, http, ctx) -> None:
    miner = await start_miner(policy=ServerPolicy(max_body_bytes=4096))
    body = json.dumps({"messages": [{"role": "user", "content": "x" * 10_000}]}).encode()
    headers = ctx.kit.signed_headers(ctx.wallets["validator"], body, ctx.miner_hotkey)

    async def chunks():
        for start in range(0, len(body), 1024):
            yield body[start : start + 1024]

    async with http.post(miner.url + CHAT_PATH, data=chunks(), headers=headers) as response:
        assert response.status == 413
        assert ErrorBody.model_validate_json(await response.read()).error.type == "body_too_large"
    assert miner.handler.calls == []


async def test_slow_body_past_the_timeout_is_refused(start_miner, ctx) -> None:
    miner = await start_miner(policy=ServerPolicy(body_read_timeout_s=0.3))
    headers, body = _honest(ctx)
    reader, writer = await asyncio.open_connection("127.0.0.1", miner.port)
    head = f"POST {CHAT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    writer.write(head.encode() + body[:10])
    await writer.drain()
    loop = asyncio.get_running_loop()
    started = loop.time()
    status_line = await asyncio.wait_for(reader.readline(), timeout=5)
    elapsed = loop.time() - started
    writer.close()
    assert status_line.split()[1] == b"408"
    assert 0.2 < elapsed < 5.0
    assert miner.handler.calls == []


async def test_caller_rate_limit_binds_callers_without_a_permit(start_miner, http, ctx) -> None:
    # Where permits are not required (a development chain), a registered caller without one is
    # served, within the per-second bucket; a permit holder is not rate-limited per second.
    policy = ServerPolicy(
        auth=AuthPolicy(require_validator_permit=False), per_caller_rate=0.01, per_caller_burst=3
    )
    miner = await start_miner(policy=policy)
    statuses = {"no_permit": [], "validator": []}
    for _ in range(5):
        for role, seen in statuses.items():
            headers, body = _honest(ctx, role=role)
            seen.append((await _post(http, miner.url, headers, body))[0])
    assert statuses == {"no_permit": [200, 200, 200, 429, 429], "validator": [200] * 5}


async def test_per_caller_concurrency_and_global_cap(start_miner, http, ctx, kit) -> None:
    handler = kit.recording_handler(delay_s=1.0)
    miner = await start_miner(
        policy=ServerPolicy(per_caller_max_in_flight=1, max_in_flight=2), handler=handler
    )

    async def send(role: str):
        headers, body = _honest(ctx, role=role)
        status, raw = await _post(http, miner.url, headers, body)
        return status, ErrorBody.model_validate_json(raw).error.type if status != 200 else "served"

    first = asyncio.create_task(send("validator"))
    await _until(lambda: len(handler.calls) == 1)
    assert await send("validator") == (429, "caller_busy")
    second = asyncio.create_task(send("validator_b"))
    await _until(lambda: len(handler.calls) == 2)
    # Both handler slots are taken: a third permitted caller is told the miner is full.
    assert await send("poor") == (503, "overloaded")
    assert await first == (200, "served")
    assert await second == (200, "served")
    assert len(handler.calls) == 2


async def test_failed_verifications_exhaust_the_peer_budget(start_miner, http, ctx) -> None:
    miner = await start_miner(policy=ServerPolicy(per_ip_failed_auth_rate=0.01, per_ip_failed_auth_burst=3))
    types = []
    for _ in range(5):
        headers, body = _forged_signature(ctx)
        _status, raw = await _post(http, miner.url, headers, body)
        types.append(ErrorBody.model_validate_json(raw).error.type)
    assert types == ["bad_signature"] * 3 + ["peer_auth_failures"] * 2
    assert miner.handler.calls == []


async def test_health_and_metrics_are_open(start_miner, http, ctx) -> None:
    miner = await start_miner()
    async with http.get(miner.url + "/health") as response:
        assert response.status == 200
        assert (await response.json())["status"] == "ok"
    headers, body = _honest(ctx)
    await _post(http, miner.url, headers, body)
    await _post(http, miner.url, *_missing_headers(ctx))
    async with http.get(miner.url + "/metrics") as response:
        text = await response.text()
    assert 'subnet_miner_requests_total{outcome="served"} 1.0' in text
    assert 'subnet_miner_requests_total{outcome="missing_auth"} 1.0' in text
    assert "subnet_miner_request_seconds_bucket" in text


async def test_handler_failure_is_a_json_500(start_miner, http, ctx) -> None:
    class Broken:
        async def __call__(self, request, caller):
            raise RuntimeError("model exploded with a secret path /home/x")

    miner = await start_miner(handler=Broken())
    status, raw = await _post(http, miner.url, *_honest(ctx))
    assert status == 500
    error = ErrorBody.model_validate_json(raw).error
    assert error.type == "internal_error"
    assert "secret" not in error.message


async def test_a_refusal_from_the_handler_keeps_its_status(start_miner, http, ctx, caplog) -> None:
    class EngineDown:
        async def __call__(self, request, caller):
            raise Refusal("overloaded", "the model engine is unavailable")

    miner = await start_miner(handler=EngineDown())
    with caplog.at_level(logging.ERROR):
        status, raw = await _post(http, miner.url, *_honest(ctx))
    assert status == 503
    error = ErrorBody.model_validate_json(raw).error
    assert (error.type, error.message) == ("overloaded", "the model engine is unavailable")
    assert not [r for r in caplog.records if r.exc_info], "a handler's refusal is not a crash"


async def test_stop_drains_in_flight_requests(start_miner, http, ctx, kit) -> None:
    handler = kit.recording_handler(delay_s=0.5)
    miner = await start_miner(handler=handler)
    url = miner.url
    in_flight = asyncio.create_task(_post(http, url, *_honest(ctx)))
    await _until(lambda: len(handler.calls) == 1)
    drained = await miner.server.stop(drain_timeout=5.0)
    status, raw = await in_flight
    assert drained
    assert status == 200, raw
    with pytest.raises(aiohttp.ClientConnectionError):
        await _post(http, url, *_honest(ctx))


async def test_handler_overrunning_its_deadline_is_a_504(start_miner, http, ctx, kit) -> None:
    miner = await start_miner(
        policy=ServerPolicy(handler_timeout_s=0.2), handler=kit.recording_handler(delay_s=5.0)
    )
    status, raw = await _post(http, miner.url, *_honest(ctx))
    assert status == 504
    assert ErrorBody.model_validate_json(raw).error.type == "handler_timeout"


async def test_a_caller_that_hangs_up_cancels_its_handler(start_miner, http, ctx) -> None:
    class Endless:
        def __init__(self) -> None:
            self.started = asyncio.Event()
            self.cancelled = asyncio.Event()

        async def __call__(self, request, caller):
            self.started.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise

    handler = Endless()
    miner = await start_miner(handler=handler)
    caller = asyncio.create_task(_post(http, miner.url, *_honest(ctx)))
    await asyncio.wait_for(handler.started.wait(), 10)
    caller.cancel()  # the client gives up and closes its connection
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.wait_for(handler.cancelled.wait(), 10)
    async with http.get(miner.url + "/metrics") as response:
        assert 'subnet_miner_requests_total{outcome="cancelled"} 1.0' in await response.text()


async def test_handler_returning_the_wrong_type_is_a_500(start_miner, http, ctx) -> None:
    class Sloppy:
        async def __call__(self, request, caller):
            return {"choices": []}

    miner = await start_miner(handler=Sloppy())
    status, raw = await _post(http, miner.url, *_honest(ctx))
    assert status == 500
    assert ErrorBody.model_validate_json(raw).error.type == "internal_error"
