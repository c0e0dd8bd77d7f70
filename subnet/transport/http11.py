"""One HTTP/1.1 request on its own connection, read with hard limits: the validator's wire client.

A validator round sends thousands of small POSTs to different miners at once and never
reuses a connection (a miner's tasks run concurrently, and rounds are further apart than
any keep-alive), so a general client's pooling, redirects, cookies and tracing are pure
cost: aiohttp's client spent 0.55-0.62 ms of CPU per request against 0.14-0.26 ms for
a bare asyncio connection on the same loopback benchmark. This module does only what
the validator needs, on an `asyncio.Protocol`:

- write the request (method line, headers, body) in one go, asking for `Connection: close`
  and an uncompressed answer;
- parse the status line and headers (at most `MAX_INTERIM_HEADS` 1xx interim answers,
  skipped; `MAX_HEAD_BYTES` for all heads together; each byte scanned once), then a body
  framed by `Content-Length`, by chunked transfer coding, or by the connection closing;
- stop as soon as the (decoded) body exceeds `max_body` bytes, whatever framing the
  server chose, and keep what arrived so far for the caller to report.

Nothing received is interpreted beyond HTTP framing: bodies are returned as bytes and
never inflated, so a compressed answer stays compressed (and fails JSON parsing).
"""

from __future__ import annotations

import asyncio
import enum
from typing import Any

MAX_HEAD_BYTES = 64 * 1024  # all heads of one answer together, interim ones included
# Interim (1xx) answers before the final one: a server sends one or two (100 Continue, 103 Early
# Hints); an endless stream of them is a way to pin the validator's loop.
MAX_INTERIM_HEADS = 4
MAX_CHUNK_LINE_BYTES = 1024
# Status codes whose answers never carry a body (RFC 9112, section 6.3).
_BODYLESS = frozenset({204, 304})
_HEX_DIGITS = b"0123456789abcdefABCDEF"


class HttpProtocolError(Exception):
    """The server's answer is not well-formed HTTP/1.1 (or the connection ended inside it)."""


class BodyTooLarge(Exception):
    """The body exceeds the caller's cap (declared up front, or while arriving)."""


class _Framing(enum.Enum):
    LENGTH = "length"
    CHUNKED = "chunked"
    UNTIL_CLOSE = "until_close"


class _Stage(enum.Enum):
    HEAD = "head"
    BODY = "body"
    DONE = "done"


class _ChunkStage(enum.Enum):
    SIZE = "size"
    DATA = "data"
    DATA_END = "data_end"
    TRAILER = "trailer"


def build_request(
    method: str, path: str, host: str, port: int, headers: dict[str, str], body: bytes
) -> bytes:
    """The request bytes: request line, Host, the caller's headers, framing, then the body."""
    authority = f"[{host}]" if ":" in host else host
    raw_fields = "".join(headers) + "".join(headers.values()) + authority + path
    if "\r" in raw_fields or "\n" in raw_fields:
        # Values come from our own signer and the chain's records; a line break would let
        # one of them forge headers.
        raise ValueError("a header holds a line break")
    fields = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: {authority}:{port}\r\n{fields}"
        f"Accept-Encoding: identity\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def _parse_head(head: bytes) -> tuple[int, dict[str, list[str]]]:
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3 or not parts[1].isdigit():
        raise HttpProtocolError("malformed HTTP status line")
    headers: dict[str, list[str]] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise HttpProtocolError("malformed HTTP header line")
        key = name.decode("latin-1").lower()
        headers.setdefault(key, []).append(value.strip().decode("latin-1"))
    return int(parts[1]), headers


def _framing(status: int, headers: dict[str, list[str]]) -> tuple[_Framing, int]:
    if status in _BODYLESS:
        return _Framing.LENGTH, 0
    codings = [
        coding.strip().lower()
        for value in headers.get("transfer-encoding", ())
        for coding in value.split(",")
        if coding.strip()
    ]
    if codings:
        # Chunked must be the last coding; otherwise the body ends when the connection does.
        return (_Framing.CHUNKED, 0) if codings[-1] == "chunked" else (_Framing.UNTIL_CLOSE, 0)
    lengths = {value.strip() for value in headers.get("content-length", ())}
    if not lengths:
        return _Framing.UNTIL_CLOSE, 0
    if len(lengths) != 1:
        raise HttpProtocolError("conflicting Content-Length headers")
    (length,) = lengths
    if not length.isdigit() or len(length) > 18:
        raise HttpProtocolError("malformed Content-Length header")
    return _Framing.LENGTH, int(length)


class HttpExchange(asyncio.Protocol):
    """One request and its answer on a fresh connection. Await :meth:`run`, then read the fields.

    After :meth:`run` returns or raises, ``status`` is the HTTP status if a status line
    arrived (else None) and ``body`` holds the decoded body bytes received so far (complete
    when :meth:`run` returned). Call :meth:`close` in every case.
    """

    def __init__(self, request: bytes, max_body: int) -> None:
        self.request = request
        self.max_body = max_body
        self.status: int | None = None
        self.body = bytearray()
        self._stage = _Stage.HEAD
        self._buffer = bytearray()
        # Head parsing: where the current head starts in the buffer, where the search for its
        # end resumes, and how many interim heads came before it.
        self._head_start = 0
        self._scanned = 0
        self._interim_heads = 0
        self._framing = _Framing.UNTIL_CLOSE
        self._remaining = 0
        self._chunk_stage = _ChunkStage.SIZE
        self._transport: asyncio.Transport | None = None
        self._done: asyncio.Future[None] | None = None

    async def run(
        self, host: str, port: int, *, connect_timeout: float, local_addr: tuple[str, int] | None = None
    ) -> None:
        """Connect (within ``connect_timeout``), send, and wait for the whole answer.

        Raises TimeoutError (connect), OSError (refused, reset), HttpProtocolError or
        BodyTooLarge. The caller bounds the whole exchange with its own deadline.
        """
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        async with asyncio.timeout(connect_timeout):
            await loop.create_connection(lambda: self, host, port, local_addr=local_addr)
        await self._done

    def close(self) -> None:
        """Drop the connection now (idempotent); an unfinished answer is abandoned."""
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.abort()

    # -- asyncio.Protocol -----------------------------------------------------------------------

    def connection_made(self, transport: Any) -> None:
        self._transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        if self._stage is _Stage.DONE:
            return
        try:
            if self._stage is _Stage.HEAD:
                self._buffer += data
                data = self._take_head()
                if self._stage is not _Stage.BODY:
                    return
            self._feed_body(data)
        except (HttpProtocolError, BodyTooLarge) as exc:
            self._finish(exc)

    def eof_received(self) -> bool | None:
        return None  # close our side too; connection_lost settles the exchange

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        if self._stage is _Stage.DONE:
            return
        if self._stage is _Stage.BODY and self._framing is _Framing.UNTIL_CLOSE and exc is None:
            self._finish(None)
        elif exc is not None:
            self._finish(exc)
        else:
            where = "before a full status line and headers" if self._stage is _Stage.HEAD else "mid-body"
            self._finish(HttpProtocolError(f"connection closed {where}"))

    # -- parsing --------------------------------------------------------------------------------

    def _take_head(self) -> bytes:
        """Parse the complete heads in the buffer; returns the bytes after the final one.

        Linear in the bytes received: the search for a head's end resumes where the last one
        stopped, and interim heads are skipped by moving an offset, not by copying the rest.
        """
        buffer = self._buffer
        while True:
            end = buffer.find(b"\r\n\r\n", max(self._head_start, self._scanned - 3))
            if end < 0:
                self._scanned = len(buffer)
                if len(buffer) > MAX_HEAD_BYTES:
                    raise HttpProtocolError(
                        f"response head exceeds {MAX_HEAD_BYTES} bytes (interim heads included)"
                    )
                return b""
            if end > MAX_HEAD_BYTES:
                raise HttpProtocolError(
                    f"response head exceeds {MAX_HEAD_BYTES} bytes (interim heads included)"
                )
            status, headers = _parse_head(bytes(buffer[self._head_start : end]))
            self._head_start = self._scanned = end + 4
            if 100 <= status < 200:  # interim answer (100 Continue, 103 Early Hints): the real one follows
                self._interim_heads += 1
                if self._interim_heads > MAX_INTERIM_HEADS:
                    raise HttpProtocolError(f"more than {MAX_INTERIM_HEADS} interim (1xx) answers")
                continue
            self.status = status
            self._framing, self._remaining = _framing(status, headers)
            if self._framing is _Framing.LENGTH and self._remaining > self.max_body:
                raise BodyTooLarge(f"declared body of {self._remaining} bytes exceeds {self.max_body}")
            rest = bytes(buffer[self._head_start :])
            self._buffer = bytearray()
            self._stage = _Stage.BODY
            if self._framing is _Framing.LENGTH and self._remaining == 0:
                self._finish(None)
            return rest

    def _feed_body(self, data: bytes) -> None:
        if self._framing is _Framing.CHUNKED:
            self._feed_chunked(data)
        elif self._framing is _Framing.LENGTH:
            piece = data[: self._remaining]
            self._append(piece)
            self._remaining -= len(piece)
            if self._remaining == 0:
                self._finish(None)
        elif data:
            self._append(data)

    def _append(self, data: bytes | bytearray) -> None:
        self.body += data
        if len(self.body) > self.max_body:
            raise BodyTooLarge(f"body exceeds {self.max_body} bytes")

    def _feed_chunked(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        position = 0
        while self._stage is _Stage.BODY:
            if self._chunk_stage is _ChunkStage.DATA:
                take = min(self._remaining, len(buffer) - position)
                if take == 0:
                    break
                self._append(buffer[position : position + take])
                position += take
                self._remaining -= take
                if self._remaining == 0:
                    self._chunk_stage = _ChunkStage.DATA_END
                continue
            end = buffer.find(b"\r\n", position)
            if end < 0:
                if len(buffer) - position > MAX_CHUNK_LINE_BYTES:
                    raise HttpProtocolError("malformed chunked body (line too long)")
                break
            line = bytes(buffer[position:end])
            position = end + 2
            if self._chunk_stage is _ChunkStage.SIZE:
                size_text = line.split(b";", 1)[0].strip()
                if not size_text or len(size_text) > 15 or size_text.strip(_HEX_DIGITS):
                    raise HttpProtocolError("malformed chunk size")
                self._remaining = int(size_text, 16)
                self._chunk_stage = _ChunkStage.DATA if self._remaining else _ChunkStage.TRAILER
            elif self._chunk_stage is _ChunkStage.DATA_END:
                if line:
                    raise HttpProtocolError("malformed chunked body (no CRLF after a chunk)")
                self._chunk_stage = _ChunkStage.SIZE
            elif not line:  # the empty line that ends the trailer section
                self._finish(None)
            elif len(line) > MAX_CHUNK_LINE_BYTES:
                raise HttpProtocolError("malformed chunked body (trailer too long)")
        del buffer[:position]

    def _finish(self, error: BaseException | None) -> None:
        self._stage = _Stage.DONE
        self.close()
        done = self._done
        if done is not None and not done.done():
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)
