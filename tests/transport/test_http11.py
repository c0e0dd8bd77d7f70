"""The validator's HTTP/1.1 exchange against raw loopback servers that write exact bytes:
framing (length, chunked, until close), interim answers, caps and malformed answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from subnet.transport.http11 import (
    MAX_HEAD_BYTES,
    MAX_INTERIM_HEADS,
    BodyTooLarge,
    HttpExchange,
    HttpProtocolError,
    build_request,
)

RawServer = Callable[[list[bytes]], Awaitable[tuple[int, list[bytes]]]]


@pytest.fixture
async def raw_server() -> AsyncIterator[RawServer]:
    """Start a server that reads one request, writes the given pieces, then closes."""
    servers: list[asyncio.Server] = []
    handlers: list[asyncio.Task[None] | None] = []

    async def start(pieces: list[bytes]) -> tuple[int, list[bytes]]:
        requests: list[bytes] = []

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            handlers.append(asyncio.current_task())
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            requests.append(head + await reader.readexactly(length))
            try:
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.01)  # separate TCP segments, so the parser sees them apart
            except ConnectionError:
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


async def _exchange(port: int, max_body: int = 1 << 20) -> HttpExchange:
    request = build_request("POST", "/v1/chat/completions", "127.0.0.1", port, {"X-Test": "1"}, b'{"a":1}')
    exchange = HttpExchange(request, max_body)
    try:
        async with asyncio.timeout(5):
            await exchange.run("127.0.0.1", port, connect_timeout=2.0)
    finally:
        exchange.close()
    return exchange


async def test_request_bytes_and_content_length_body(raw_server: RawServer) -> None:
    port, requests = await raw_server([b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello-trailing-junk"])
    exchange = await _exchange(port)
    assert (exchange.status, bytes(exchange.body)) == (200, b"hello")
    head, body = requests[0].split(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat/completions HTTP/1.1"
    assert f"Host: 127.0.0.1:{port}".encode() in lines
    assert {b"X-Test: 1", b"Connection: close", b"Accept-Encoding: identity", b"Content-Length: 7"} <= set(
        lines
    )
    assert body == b'{"a":1}'


async def test_chunked_body_split_across_segments(raw_server: RawServer) -> None:
    pieces = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
        b"lo\r\n6;ext=1\r\n world\r",
        b"\n0\r\nX-Trailer: yes\r\n\r\n",
    ]
    port, _ = await raw_server(pieces)
    exchange = await _exchange(port)
    assert (exchange.status, bytes(exchange.body)) == (200, b"hello world")


async def test_interim_answer_is_skipped_and_body_read_until_close(raw_server: RawServer) -> None:
    port, _ = await raw_server([b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", b"until ", b"close"])
    exchange = await _exchange(port)
    assert (exchange.status, bytes(exchange.body)) == (200, b"until close")


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
FINAL = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


async def test_a_few_interim_answers_are_skipped(raw_server: RawServer) -> None:
    early_hints = b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
    port, _ = await raw_server([CONTINUE * (MAX_INTERIM_HEADS - 1) + early_hints, FINAL])
    exchange = await _exchange(port)
    assert (exchange.status, bytes(exchange.body)) == (200, b"ok")


@pytest.mark.parametrize("in_one_piece", [True, False])
async def test_endless_interim_answers_are_refused(raw_server: RawServer, in_one_piece: bool) -> None:
    heads = [CONTINUE] * 1000
    port, _ = await raw_server([b"".join(heads) + FINAL] if in_one_piece else [*heads[:20], FINAL])
    with pytest.raises(HttpProtocolError, match="interim"):
        await _exchange(port)


async def test_interim_heads_count_towards_the_head_cap(raw_server: RawServer) -> None:
    bulky = b"HTTP/1.1 100 Continue\r\nX-Pad: " + b"p" * (MAX_HEAD_BYTES // 3) + b"\r\n\r\n"
    port, _ = await raw_server([bulky * 3 + FINAL])
    with pytest.raises(HttpProtocolError, match="head exceeds"):
        await _exchange(port)


@pytest.mark.parametrize("cut", range(1, 6))
async def test_a_head_end_split_across_segments_is_found(raw_server: RawServer, cut: int) -> None:
    """The search for a head's end resumes where the last one stopped, a few bytes back."""
    answer = CONTINUE + FINAL
    at = len(CONTINUE) - 5 + cut  # somewhere in or around the first head's CRLFCRLF
    second = len(CONTINUE) + FINAL.index(b"\r\n\r\n") + cut - 1
    port, _ = await raw_server([answer[:at], answer[at:second], answer[second:]])
    exchange = await _exchange(port)
    assert (exchange.status, bytes(exchange.body)) == (200, b"ok")


async def test_no_content_answer_has_no_body(raw_server: RawServer) -> None:
    port, _ = await raw_server([b"HTTP/1.1 204 No Content\r\n\r\n"])
    exchange = await _exchange(port)
    assert (exchange.status, bytes(exchange.body)) == (204, b"")


@pytest.mark.parametrize(
    ("pieces", "kept"),
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
async def test_body_over_the_cap(raw_server: RawServer, pieces: list[bytes], kept: bytes) -> None:
    port, _ = await raw_server(pieces)
    request = build_request("POST", "/", "127.0.0.1", port, {}, b"{}")
    exchange = HttpExchange(request, max_body=99)
    try:
        with pytest.raises(BodyTooLarge):
            async with asyncio.timeout(5):
                await exchange.run("127.0.0.1", port, connect_timeout=2.0)
    finally:
        exchange.close()
    assert exchange.status == 200
    assert bytes(exchange.body) == kept  # what arrived before the cap, for the caller to report


@pytest.mark.parametrize(
    "answer",
    [
        b"",  # closed before any answer
        b"HTTP/1.1 200 OK\r\nContent-Le",  # closed inside the head
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",  # closed mid-body
        b"SMTP ready\r\n\r\n",  # not HTTP
        b"HTTP/1.1 2000 OK\r\n\r\n",  # bad status code
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n folded: header\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # bad chunk size
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n",  # no CRLF after data
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n",  # closed before the last chunk
    ],
)
async def test_malformed_or_cut_answers(raw_server: RawServer, answer: bytes) -> None:
    port, _ = await raw_server([answer] if answer else [])
    with pytest.raises(HttpProtocolError):
        await _exchange(port)


async def test_oversized_head(raw_server: RawServer) -> None:
    port, _ = await raw_server([b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (MAX_HEAD_BYTES + 10) + b"\r\n\r\n"])
    with pytest.raises(HttpProtocolError, match="head exceeds"):
        await _exchange(port)


async def test_endless_chunk_size_line(raw_server: RawServer) -> None:
    port, _ = await raw_server([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"0" * 5000])
    with pytest.raises(HttpProtocolError, match="line too long"):
        await _exchange(port)


@pytest.mark.parametrize("value", ["evil\r\nX-Injected: 1", "line\nbreak"])
def test_header_values_cannot_inject_lines(value: str) -> None:
    with pytest.raises(ValueError, match="line break"):
        build_request("POST", "/", "127.0.0.1", 1, {"X-Bittensor-Receiver": value}, b"")


def test_ipv6_host_header_is_bracketed() -> None:
    request = build_request("POST", "/p", "::1", 8091, {}, b"")
    assert b"\r\nHost: [::1]:8091\r\n" in request


async def test_silent_server_runs_into_the_callers_deadline(raw_server: RawServer) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(3600)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = int(server.sockets[0].getsockname()[1])
    exchange = HttpExchange(build_request("POST", "/", "127.0.0.1", port, {}, b"{}"), 1024)
    try:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await exchange.run("127.0.0.1", port, connect_timeout=1.0)
        assert exchange.status is None
    finally:
        exchange.close()
        server.close()
        await server.wait_closed()
