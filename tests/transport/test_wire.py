"""The validator's client against raw loopback servers that write exact bytes: what goes on the
wire, HTTP framing (length, chunked, until close), interim answers, the head and body caps, and
malformed or cut answers. Each ends in a `QueryStatus`, never an exception."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import bittensor as bt
import pytest

from subnet.transport import (
    CHAT_PATH,
    ClientTimeouts,
    EngineTarget,
    MinerClient,
    MinerTarget,
    QueryResult,
    QueryStatus,
)
from subnet.transport.client import MAX_HEADER_FIELD_BYTES, MAX_HEADER_FIELDS, MAX_INTERIM_HEADS

RawServer = Callable[[list[bytes]], Awaitable[tuple[int, list[bytes]]]]
VALID = (
    b'{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
    b'"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}'
)
OK_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(VALID), VALID)
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


@pytest.fixture
async def raw_server() -> AsyncIterator[RawServer]:
    """Start a server that reads one request, writes the given pieces, then closes."""
    servers: list[asyncio.Server] = []
    handlers: list[asyncio.Task[None] | None] = []

    async def start(pieces: list[bytes]) -> tuple[int, list[bytes]]:
        requests: list[bytes] = []

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            handlers.append(asyncio.current_task())
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                requests.append(head + await reader.readexactly(length))
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.01)  # separate TCP segments, so the parser sees them apart
            except (ConnectionError, asyncio.IncompleteReadError):
                pass  # the client hung up early (a cap was reached)
            writer.close()

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        servers.append(server)
        return int(server.sockets[0].getsockname()[1]), requests

    yield start
    await asyncio.gather(*(task for task in handlers if task is not None), return_exceptions=True)
    for server in servers:
        server.close()
        await server.wait_closed()


async def _query(wallets, kit, port: int, *, cap: int = 1 << 20, hotkey: str | None = None) -> QueryResult:
    target = MinerTarget(hotkey=hotkey or wallets.hotkey("miner"), ip="127.0.0.1", port=port)
    timeouts = ClientTimeouts(connect_s=1.0, total_s=3.0)
    async with MinerClient(wallets["validator"], timeouts=timeouts, max_response_bytes=cap) as client:
        return await client.query(target, kit.sample_request())


async def test_request_bytes_signed_for_the_miner(raw_server: RawServer, wallets, kit) -> None:
    port, requests = await raw_server([OK_ANSWER])
    result = await _query(wallets, kit, port)
    assert result.ok, result
    head, body = requests[0].split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    assert lines[0] == f"POST {CHAT_PATH} HTTP/1.1".encode()
    fields = {
        name.decode().lower(): value.strip().decode()
        for name, _, value in (line.partition(b":") for line in lines[1:])
    }
    assert fields["host"] == f"127.0.0.1:{port}"
    assert fields["accept-encoding"] == "identity"
    assert fields["connection"] == "close"
    assert fields["content-length"] == str(len(body))
    assert body == kit.sample_request().to_body()
    # The SDK's verify (what every miner runs) accepts the request for this miner, once.
    store = bt.http_auth.InMemoryNonceStore()
    caller = bt.http_auth.verify(
        fields,
        body,
        method="POST",
        path=CHAT_PATH,
        self_hotkey_ss58=wallets.hotkey("miner"),
        nonce_store=store,
    )
    assert caller.hotkey_ss58 == wallets.hotkey("validator")
    with pytest.raises(bt.http_auth.ReplayedRequest):
        bt.http_auth.verify(
            fields,
            body,
            method="POST",
            path=CHAT_PATH,
            self_hotkey_ss58=wallets.hotkey("miner"),
            nonce_store=store,
        )


async def test_chunked_body_split_across_segments(raw_server: RawServer, wallets, kit) -> None:
    half = len(VALID) // 2
    pieces = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s" % (half, VALID[: half - 3]),
        VALID[half - 3 : half] + b"\r\n%x;ext=1\r\n%s\r" % (len(VALID) - half, VALID[half:]),
        b"\n0\r\nX-Trailer: yes\r\n\r\n",
    ]
    port, _ = await raw_server(pieces)
    result = await _query(wallets, kit, port)
    assert result.ok and result.raw_text.encode() == VALID, result


async def test_interim_answer_skipped_and_body_read_until_close(raw_server: RawServer, wallets, kit) -> None:
    port, _ = await raw_server([CONTINUE + b"HTTP/1.1 200 OK\r\n\r\n", VALID[:10], VALID[10:]])
    result = await _query(wallets, kit, port)
    assert result.ok and result.raw_text.encode() == VALID, result


async def test_a_few_interim_answers_are_skipped(raw_server: RawServer, wallets, kit) -> None:
    early_hints = b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
    port, _ = await raw_server([CONTINUE * (MAX_INTERIM_HEADS - 1) + early_hints, OK_ANSWER])
    result = await _query(wallets, kit, port)
    assert result.ok, result


@pytest.mark.parametrize("in_one_piece", [True, False])
async def test_endless_interim_answers_are_refused(
    raw_server: RawServer, in_one_piece: bool, wallets, kit
) -> None:
    heads = [CONTINUE] * 1000
    port, _ = await raw_server([b"".join(heads) + OK_ANSWER] if in_one_piece else [*heads[:20], OK_ANSWER])
    result = await _query(wallets, kit, port)
    assert result.status is QueryStatus.REFUSED and "interim" in (result.error or ""), result


async def test_no_content_answer_has_no_body(raw_server: RawServer, wallets, kit) -> None:
    port, _ = await raw_server([b"HTTP/1.1 204 No Content\r\n\r\n"])
    result = await _query(wallets, kit, port)
    assert (result.status, result.http_status, result.raw_bytes_len) == (QueryStatus.HTTP_ERROR, 204, 0)


@pytest.mark.parametrize(
    ("pieces", "sent"),
    [
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 100], b""),  # declared
        ([b"HTTP/1.1 200 OK\r\n\r\n", b"y" * 60, b"y" * 60], b"y" * 120),  # until close
        (
            [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"]
            + [b"3c\r\n" + b"z" * 60 + b"\r\n"] * 2,
            b"z" * 120,
        ),
    ],
    ids=["declared", "until-close", "chunked"],
)
async def test_body_over_the_cap(
    raw_server: RawServer, pieces: list[bytes], sent: bytes, wallets, kit
) -> None:
    port, _ = await raw_server(pieces)
    result = await _query(wallets, kit, port, cap=99)
    assert (result.status, result.http_status) == (QueryStatus.TOO_LARGE, 200), result
    assert sent.startswith(result.raw_text.encode())  # what arrived before the cap, to report
    assert not sent or result.raw_bytes_len > 99


@pytest.mark.parametrize(
    "answer",
    [
        b"",  # closed before any answer
        b"HTTP/1.1 200 OK\r\nContent-Le",  # closed inside the head
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",  # closed mid-body
        b"SMTP ready\r\n\r\n",  # not HTTP
        b"HTTP/1.1 2000 OK\r\n\r\n",  # bad status code
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # bad chunk size
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n",  # no CRLF after data
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n",  # closed before the last chunk
    ],
)
async def test_malformed_or_cut_answers(raw_server: RawServer, answer: bytes, wallets, kit) -> None:
    port, _ = await raw_server([answer] if answer else [])
    result = await _query(wallets, kit, port)
    assert result.status is QueryStatus.REFUSED, result


async def test_a_folded_first_line_is_no_answer(raw_server: RawServer, wallets, kit) -> None:
    """RFC 9112 lets a client read an obsolete line folding as a space (aiohttp does): the
    answer has no body then, and is no completion."""
    port, _ = await raw_server([b"HTTP/1.1 200 OK\r\n folded: header\r\n\r\n"])
    result = await _query(wallets, kit, port)
    assert result.status in (QueryStatus.REFUSED, QueryStatus.BAD_JSON), result
    assert result.raw_bytes_len == 0


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (MAX_HEADER_FIELD_BYTES + 10) + b"\r\n",
        b"HTTP/1.1 200 OK\r\n" + b"X-Pad: p\r\n" * (MAX_HEADER_FIELDS + 1),
        b"HTTP/1.1 100 Continue\r\nX-Big: " + b"a" * (MAX_HEADER_FIELD_BYTES + 10) + b"\r\n",
    ],
    ids=["long-field", "many-fields", "long-interim-field"],
)
async def test_oversized_heads_are_refused(raw_server: RawServer, head: bytes, wallets, kit) -> None:
    port, _ = await raw_server([head + b"\r\n", OK_ANSWER])
    result = await _query(wallets, kit, port)
    assert result.status is QueryStatus.REFUSED, result


async def test_endless_chunk_size_line(raw_server: RawServer, wallets, kit) -> None:
    port, _ = await raw_server([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"0" * 50_000])
    result = await _query(wallets, kit, port)
    assert result.status is QueryStatus.REFUSED, result


@pytest.mark.parametrize("hotkey", ["evil\r\nX-Injected: 1", "line\nbreak"])
async def test_a_hotkey_cannot_inject_header_lines(raw_server: RawServer, hotkey: str, wallets, kit) -> None:
    port, requests = await raw_server([OK_ANSWER])
    result = await _query(wallets, kit, port, hotkey=hotkey)
    assert result.status is QueryStatus.REFUSED, result
    assert not any(b"X-Injected" in request for request in requests)


async def test_silent_server_runs_into_the_deadline(wallets, kit) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(3600)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = int(server.sockets[0].getsockname()[1])
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=port)
    try:
        async with MinerClient(wallets["validator"], timeouts=ClientTimeouts(total_s=0.2)) as client:
            result = await client.query(target, kit.sample_request())
    finally:
        server.close()
        await server.wait_closed()
    assert (result.status, result.http_status) == (QueryStatus.TIMEOUT, None), result


async def _query_engine(
    kit, port: int, *, path: str = "/v1/chat/completions", cap: int = 1 << 20
) -> QueryResult:
    target = EngineTarget(f"http://127.0.0.1:{port}{path}", (("Authorization", "Bearer sk-test"),))
    timeouts = ClientTimeouts(connect_s=1.0, total_s=3.0)
    async with MinerClient(None, timeouts=timeouts, max_response_bytes=cap) as client:
        return await client.query(target, kit.sample_request())


async def test_an_engine_target_is_sent_unsigned_to_its_url_with_its_headers(
    raw_server: RawServer, kit
) -> None:
    port, requests = await raw_server([OK_ANSWER])
    result = await _query_engine(kit, port, path="/prefix/v1/chat/completions")
    assert result.ok, result
    head, body = requests[0].split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /prefix/v1/chat/completions HTTP/1.1"
    fields = {
        name.decode().lower(): value.strip().decode()
        for name, _, value in (line.partition(b":") for line in lines[1:])
    }
    assert fields["authorization"] == "Bearer sk-test"
    assert fields["content-type"] == "application/json"
    assert fields["accept-encoding"] == "identity"
    assert not [name for name in fields if name.startswith("x-bittensor")], fields
    assert body == kit.sample_request().to_body()


@pytest.mark.parametrize(
    ("pieces", "status"),
    [
        ([CONTINUE * 1000 + OK_ANSWER], QueryStatus.REFUSED),
        ([b"HTTP/1.1 200 OK\r\n" + b"X-Pad: p\r\n" * (MAX_HEADER_FIELDS + 1) + b"\r\n"], QueryStatus.REFUSED),
        ([b"HTTP/1.1 200 OK\r\n\r\n", b"y" * 60, b"y" * 60], QueryStatus.TOO_LARGE),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nnope!"], QueryStatus.BAD_JSON),
        ([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"], QueryStatus.BAD_SCHEMA),
        ([b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n"], QueryStatus.HTTP_ERROR),
    ],
    ids=["interim-flood", "many-fields", "over-cap", "bad-json", "bad-schema", "http-error"],
)
async def test_an_engine_target_has_a_miners_bounds_and_statuses(
    raw_server: RawServer, pieces: list[bytes], status: QueryStatus, kit
) -> None:
    port, _ = await raw_server(pieces)
    result = await _query_engine(kit, port, cap=99)
    assert result.status is status, result


async def test_a_client_without_a_wallet_signs_nothing(wallets, kit) -> None:
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=9)
    async with MinerClient(None) as client:
        with pytest.raises(RuntimeError, match="no wallet"):
            await client.query(target, kit.sample_request())
    with pytest.raises(RuntimeError, match="no wallet"):
        _ = MinerClient(None).hotkey
