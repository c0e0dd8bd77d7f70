"""The validator's client against real loopback servers that misbehave in every way we expect:
each case ends in the right `QueryStatus`, within the client's deadline, without raising."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
from aiohttp import web

from subnet.transport import (
    CHAT_PATH,
    ClientTimeouts,
    MinerClient,
    MinerTarget,
    QueryStatus,
    ServerPolicy,
)

TOTAL_S = 0.6
TEN_MB = 10 * 1024 * 1024
CAP = 1 << 20
_VALID = {
    "id": "x",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
}

Personality = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _hangs(request: web.Request) -> web.StreamResponse:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


async def _fails(request: web.Request) -> web.StreamResponse:
    return web.Response(status=500, text="Internal Server Error")


async def _declares_ten_mb(request: web.Request) -> web.StreamResponse:
    return web.Response(body=b"x" * TEN_MB, content_type="application/json")


async def _streams_ten_mb(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()
    response.enable_chunked_encoding()
    await response.prepare(request)
    chunk = b"[" * (256 * 1024)
    try:
        for _ in range(TEN_MB // len(chunk)):
            await response.write(chunk)
    except ConnectionError:
        pass
    return response


async def _not_json(request: web.Request) -> web.StreamResponse:
    return web.Response(text="<html>I am a teapot, not a model</html>", content_type="text/html")


async def _deeply_nested(request: web.Request) -> web.StreamResponse:
    return web.Response(body=b"[" * 100_000 + b"]" * 100_000, content_type="application/json")


async def _wrong_shape(request: web.Request) -> web.StreamResponse:
    return web.json_response({"choices": [{"message": {"role": "assistant", "tool_calls": "nope"}}]})


async def _no_choices(request: web.Request) -> web.StreamResponse:
    return web.json_response({**_VALID, "choices": []})


async def _drips(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Length": "1000"})
    await response.prepare(request)
    try:
        for _ in range(1000):
            await response.write(b" ")
            await asyncio.sleep(0.1)
    except ConnectionError:
        pass
    return response


async def _cuts_body_short(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Length": "1000"})
    await response.prepare(request)
    await response.write(b'{"choices": [')
    assert request.transport is not None
    request.transport.close()
    return response


async def _valid(request: web.Request) -> web.StreamResponse:
    return web.json_response(_VALID)


async def _arguments_as_object(request: web.Request) -> web.StreamResponse:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return web.json_response({**_VALID, "choices": [{"message": message}], "extra": {"ignored": True}})


@dataclass(frozen=True)
class Case:
    personality: Personality
    status: QueryStatus
    http_status: int | None = None
    keeps_partial_body: bool = False


CASES: dict[str, Case] = {
    "hangs": Case(_hangs, QueryStatus.TIMEOUT),
    "drips its body": Case(_drips, QueryStatus.TIMEOUT, 200, keeps_partial_body=True),
    "returns 500": Case(_fails, QueryStatus.HTTP_ERROR, 500),
    "declares 10 MB": Case(_declares_ten_mb, QueryStatus.TOO_LARGE, 200),
    "streams 10 MB": Case(_streams_ten_mb, QueryStatus.TOO_LARGE, 200),
    "returns non-JSON": Case(_not_json, QueryStatus.BAD_JSON, 200),
    "returns deeply nested JSON": Case(_deeply_nested, QueryStatus.BAD_JSON, 200),
    "returns the wrong shape": Case(_wrong_shape, QueryStatus.BAD_SCHEMA, 200),
    "returns no choices": Case(_no_choices, QueryStatus.BAD_SCHEMA, 200),
    "closes mid-body": Case(_cuts_body_short, QueryStatus.REFUSED, 200, keeps_partial_body=True),
    "answers well": Case(_valid, QueryStatus.OK, 200),
}


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Personality], Awaitable[int]]]:
    runners: list[web.AppRunner] = []

    async def start(personality: Personality) -> int:
        app = web.Application()
        app.router.add_post(CHAT_PATH, personality)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        return int(runner.addresses[0][1])

    yield start
    for runner in runners:
        await runner.cleanup()


def _client(wallets, **options) -> MinerClient:
    return MinerClient(
        wallets["validator"],
        timeouts=ClientTimeouts(connect_s=0.5, total_s=TOTAL_S),
        max_response_bytes=CAP,
        **options,
    )


@pytest.mark.parametrize("name", list(CASES))
async def test_misbehaving_miner_is_classified(name, serve, wallets, kit) -> None:
    case = CASES[name]
    port = await serve(case.personality)
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=port, uid=0)
    async with _client(wallets) as client:
        started = time.perf_counter()
        result = await client.query(target, kit.sample_request())
        elapsed = time.perf_counter() - started
    assert result.status is case.status, result
    assert result.http_status == case.http_status
    assert elapsed < TOTAL_S + 2.0  # the deadline plus slack for a loaded machine
    assert result.latency_s <= elapsed
    assert (result.completion is not None) == (case.status is QueryStatus.OK)
    assert len(result.raw_text) <= 64 * 1024
    if case.status is not QueryStatus.OK:
        assert result.error
    if case.keeps_partial_body:
        assert result.raw_bytes_len > 0


async def test_streamed_oversize_keeps_a_capped_prefix(serve, wallets, kit) -> None:
    port = await serve(_streams_ten_mb)
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=port)
    async with _client(wallets, max_raw_text_bytes=1000) as client:
        result = await client.query(target, kit.sample_request())
        read = client.registry.get_sample_value("subnet_validator_response_bytes_total")
    assert result.status is QueryStatus.TOO_LARGE
    assert CAP < result.raw_bytes_len < TEN_MB
    assert read == result.raw_bytes_len  # the operator sees what the miner made the client read
    assert result.raw_text == "[" * 1000


async def test_arguments_object_becomes_json_string(serve, wallets, kit) -> None:
    port = await serve(_arguments_as_object)
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=port)
    async with _client(wallets) as client:
        result = await client.query(target, kit.sample_request())
    assert result.status is QueryStatus.OK, result
    assert result.completion is not None
    calls = result.completion.message.tool_calls
    assert calls is not None and json.loads(calls[0].function.arguments) == {"x": 1}
    assert '"ignored"' in result.raw_text


async def _closing_server(greeting: bytes) -> tuple[asyncio.Server, int]:
    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(greeting)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    return server, int(server.sockets[0].getsockname()[1])


@pytest.mark.parametrize("greeting", [b"", b"HTTP/1.1 200 OK\r\nContent-Le"])
async def test_miner_that_closes_the_connection(greeting, wallets, kit) -> None:
    server, port = await _closing_server(greeting)
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=port)
    try:
        async with _client(wallets) as client:
            result = await client.query(target, kit.sample_request())
    finally:
        server.close()
        await server.wait_closed()
    assert result.status is QueryStatus.REFUSED, result
    assert result.latency_s < TOTAL_S + 2.0


async def test_connection_refused(wallets, kit) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=port)
    async with _client(wallets) as client:
        result = await client.query(target, kit.sample_request())
    assert result.status is QueryStatus.REFUSED
    assert result.http_status is None


async def test_signed_query_to_a_real_miner(start_miner, wallets, kit) -> None:
    miner = await start_miner()
    target = MinerTarget(hotkey=miner.hotkey, ip="127.0.0.1", port=miner.port, uid=0)
    async with _client(wallets) as client:
        results = [await client.query(target, kit.sample_request()) for _ in range(3)]
        text = client.registry.get_sample_value("subnet_validator_queries_total", {"status": "ok"})
        read = client.registry.get_sample_value("subnet_validator_response_bytes_total")
    assert [result.status for result in results] == [QueryStatus.OK] * 3
    assert results[0].completion == kit.sample_response()
    assert results[0].raw_bytes_len == len(results[0].raw_text.encode())
    assert text == 3.0
    assert read == sum(result.raw_bytes_len for result in results)  # what /metrics shows
    assert len(miner.handler.calls) == 3


async def test_refusal_by_a_real_miner_is_an_http_error(start_miner, wallets, kit) -> None:
    miner = await start_miner()
    target = MinerTarget(hotkey=miner.hotkey, ip="127.0.0.1", port=miner.port)
    async with MinerClient(wallets["forger"], timeouts=ClientTimeouts(total_s=TOTAL_S)) as client:
        result = await client.query(target, kit.sample_request())
    assert result.status is QueryStatus.HTTP_ERROR
    assert result.http_status == 403
    assert result.error is not None and result.error.startswith("not_registered")


async def test_per_miner_and_global_concurrency(start_miner, wallets, kit) -> None:
    active = 0
    peak = 0

    class Counting(kit.recording_handler):
        async def __call__(self, request, caller):
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            try:
                await asyncio.sleep(0.05)
                return kit.sample_response()
            finally:
                active -= 1

    miner = await start_miner(
        handler=Counting(), policy=ServerPolicy(per_caller_rate=1000, per_caller_burst=1000)
    )
    target = MinerTarget(hotkey=miner.hotkey, ip="127.0.0.1", port=miner.port)
    async with _client(wallets, per_miner_concurrency=2, global_concurrency=8) as client:
        results = await asyncio.gather(*(client.query(target, kit.sample_request()) for _ in range(8)))
    assert all(result.ok for result in results)
    assert peak == 2


async def test_parsing_held_until_the_callers_event_frees_slots_and_keeps_latency(
    serve, wallets, kit
) -> None:
    port = await serve(_valid)
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=port)
    parse_after = asyncio.Event()
    async with _client(wallets, per_miner_concurrency=1, global_concurrency=1) as client:
        held = [
            asyncio.create_task(client.query(target, kit.sample_request(), parse_after=parse_after))
            for _ in range(2)
        ]
        # Both exchanges finish (one slot, so one after the other) while parsing is held.
        unheld = await client.query(target, kit.sample_request())
        await asyncio.sleep(1.0)
        assert not any(task.done() for task in held)
        parse_after.set()
        results = await asyncio.gather(*held)
    assert unheld.ok and all(result.ok for result in results), results
    assert all(result.latency_s < 1.0 for result in results)  # taken when the answer was in
    assert results[0].completion == unheld.completion


async def _streams_interim_heads(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A hostile miner: `100 Continue` heads as fast as the socket takes them, never an answer."""
    await reader.readuntil(b"\r\n\r\n")
    try:
        while True:
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" * 256)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def test_interim_head_streams_are_refused_not_waited_out(start_miner, wallets, kit) -> None:
    """Sixteen miners streaming interim heads and four honest ones: every hostile query is refused
    for its interim heads (not timed out: the deadline is far away, so the refusal is the client's
    head count, never the clock), and the honest answers arrive. What the hostile streams cost a
    round in seconds is measured by `bench/transport.py --scenario interim-heads`."""
    hostile = [await asyncio.start_server(_streams_interim_heads, "127.0.0.1", 0) for _ in range(16)]
    honest = [await start_miner(handler=kit.recording_handler(delay_s=0.05)) for _ in range(4)]
    targets = [
        MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=server.sockets[0].getsockname()[1])
        for server in hostile
    ] + [MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=miner.port) for miner in honest]
    try:
        timeouts = ClientTimeouts(connect_s=60.0, total_s=120.0)
        async with MinerClient(wallets["validator"], timeouts=timeouts) as client:
            results = await asyncio.gather(
                *(client.query(target, kit.sample_request()) for target in targets)
            )
    finally:
        for server in hostile:
            server.close()
    assert all(r.status is QueryStatus.REFUSED and "interim" in r.error for r in results[:16]), results[:16]
    assert all(r.status is QueryStatus.OK for r in results[16:]), results[16:]
