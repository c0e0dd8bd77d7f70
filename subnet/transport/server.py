"""The miner's HTTP server: an authenticated OpenAI-compatible chat-completions endpoint.

Every request to `POST /v1/chat/completions` passes a gate of stages, cheapest first, before
the miner's handler (its model) sees it; the first stage that objects answers with a JSON
error `{"error": {"type", "message"}}`. The order is chosen for a flood of forged requests:
everything that needs only the headers (size declaration, header shape, receiver binding,
freshness, the peer's failure budget, the caller's registration and permit, replay) runs
before the body is read, and the sr25519 verification, the one expensive step, runs last of
the authentication. Rate and concurrency limits after it key on the verified hotkey, which a
forger cannot produce, so forged traffic never spends an honest validator's budget. See
docs/transport.md for the reasoning and the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import bittensor as bt
from aiohttp import hdrs, web
from aiohttp.http_exceptions import HttpProcessingError
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from pydantic import ValidationError

from subnet.metrics import LATENCY_BUCKETS, Reading, add_metrics_route, new_registry, register_readings
from subnet.protocol import ChatCompletionRequest, ChatCompletionResponse, ErrorBody
from subnet.transport.addresses import peer_key
from subnet.transport.connections import (
    AdmittingSite,
    ConnectionAdmission,
    accept_backlog,
    connection_capacity,
    warn_if_file_limit_is_low,
)
from subnet.transport.limits import (
    KeyedSlots,
    KeyedTokenBuckets,
    ReplayCapacityExceeded,
    ReplayStore,
    Slots,
)
from subnet.transport.policy import CallerDirectory, CallerInfo, ServerPolicy
from subnet.transport.refusals import PERMISSION_RULES, CallerIdentity, Refusal, RefusalLog

logger = logging.getLogger(__name__)

CHAT_PATH = "/v1/chat/completions"
HEALTH_PATH = "/health"

# bt.http_auth's exceptions, by what they mean to the caller.
_AUTH_ERROR_TYPES: tuple[tuple[type[bt.http_auth.AuthError], str], ...] = (
    (bt.http_auth.MalformedAuth, "malformed_auth"),
    (bt.http_auth.WrongReceiver, "wrong_receiver"),
    (bt.http_auth.StaleRequest, "stale_request"),
    (bt.http_auth.ReplayedRequest, "replayed_request"),
    (bt.http_auth.BadSignature, "bad_signature"),
)

# Every header bt.http_auth.verify reads. The gate hands verify exactly the values it checked,
# under these names, so the two can never read different copies of a header.
_AUTH_HEADERS: tuple[str, ...] = (
    bt.http_auth.HEADER_VERSION,
    bt.http_auth.HEADER_HOTKEY,
    bt.http_auth.HEADER_RECEIVER,
    bt.http_auth.HEADER_NONCE,
    bt.http_auth.HEADER_CRYPTO,
    bt.http_auth.HEADER_SIGNATURE,
)
_AUTH_PREFIX = "x-bittensor-"

# Cheap shape limits on the auth headers, checked before anything is looked up or hashed.
_MAX_HOTKEY_CHARS = 64
_MAX_NONCE_DIGITS = 20
_SIGNATURE_HEX_CHARS = 128  # sr25519 and ed25519 signatures are 64 bytes


ChatHandler = Callable[[ChatCompletionRequest, CallerIdentity], Awaitable[ChatCompletionResponse]]


@dataclass(frozen=True)
class ServerMetrics:
    """Prometheus series of one miner app."""

    requests: Counter
    latency: Histogram
    in_flight: Gauge

    @classmethod
    def register(cls, registry: CollectorRegistry) -> ServerMetrics:
        return cls(
            requests=Counter(
                "subnet_miner_requests", "Chat requests by outcome", ["outcome"], registry=registry
            ),
            latency=Histogram(
                "subnet_miner_request_seconds",
                "Time from request start to response, by outcome",
                ["outcome"],
                buckets=LATENCY_BUCKETS,
                registry=registry,
            ),
            in_flight=Gauge(
                "subnet_miner_in_flight", "Requests being handled by the model", registry=registry
            ),
        )


@dataclass
class _Exchange:
    """What the gate has learned about one request so far."""

    request: web.Request
    stack: AsyncExitStack
    peer: str = ""
    hotkey: str = ""
    nonce_ns: int = 0
    auth_headers: dict[str, str] = field(default_factory=dict)
    caller: CallerInfo | None = None
    body: bytes = b""
    chat: ChatCompletionRequest | None = None


Stage = Callable[[_Exchange], Awaitable[None]]


class MinerGate:
    """The checks and limits in front of the miner's handler, and the chat route itself."""

    def __init__(
        self,
        *,
        hotkey_ss58: str,
        directory: CallerDirectory,
        policy: ServerPolicy,
        handler: ChatHandler,
        metrics: ServerMetrics,
    ) -> None:
        self.hotkey_ss58 = hotkey_ss58
        self.directory = directory
        self.policy = policy
        self.handler = handler
        self.metrics = metrics
        auth = policy.auth
        self._max_age_ns = int(auth.max_age_s * 1e9)
        self._skew_ns = int(auth.allowed_skew_s * 1e9)
        # Retention must cover the whole freshness window (bt.http_auth.verify checks it).
        self.replay_store = ReplayStore(
            retention=auth.max_age_s + auth.allowed_skew_s + 1.0,
            max_per_caller=policy.replay_max_per_caller,
        )
        self._peer_failures = (
            None
            if policy.per_ip_failed_auth_rate is None
            else KeyedTokenBuckets(
                policy.per_ip_failed_auth_rate, policy.per_ip_failed_auth_burst, policy.max_tracked_peers
            )
        )
        self._caller_rates = KeyedTokenBuckets(
            policy.per_caller_rate, policy.per_caller_burst, policy.max_tracked_peers
        )
        self._caller_slots = KeyedSlots(policy.per_caller_max_in_flight, policy.max_tracked_peers)
        self._peer_bodies = KeyedSlots(policy.per_ip_max_pending_bodies, policy.max_tracked_peers)
        self._pending_bodies = Slots(policy.max_pending_bodies)
        self._handler_slots = Slots(policy.max_in_flight)
        capacity = connection_capacity(policy.max_connections)
        self.connections = ConnectionAdmission(
            capacity=capacity,
            per_peer=policy.per_ip_max_connections,
            reserved=int(capacity * policy.validator_reserved_share),
            declared_validators=_declared(directory, policy.validator_addresses),
        )
        self._refusals = RefusalLog(logger)
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.draining = False
        self._stages: tuple[Stage, ...] = (
            self._refuse_repeated_auth_headers,
            self._refuse_when_draining,
            self._check_declared_size,
            self._check_auth_headers,
            self._check_peer_failure_budget,
            self._check_permission,
            self._check_not_replayed,
            self._read_body,
            self._verify_signature,
            self._check_caller_rate,
            self._hold_caller_slot,
            self._hold_handler_slot,
            self._parse_request,
        )

    # --- the route -------------------------------------------------------------------------

    async def serve_chat(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        outcome = "cancelled"  # stays so only if the request task is cancelled mid-way
        self._active += 1
        self._idle.clear()
        try:
            async with AsyncExitStack() as stack:
                exchange = _Exchange(request=request, stack=stack, peer=peer_key(request.remote))
                for stage in self._stages:
                    await stage(exchange)
                body = await self._run_handler(exchange)
                outcome = "served"
                return web.Response(body=body, content_type="application/json")
        except Refusal as refusal:
            outcome = refusal.error_type
            self._refusals.note(refusal, request.remote or "?", time.perf_counter() - started)
            return _error_response(refusal)
        except Exception:
            # A bug in the gate itself: answer like any other failure, never with a traceback.
            logger.exception("miner gate failed")
            outcome = "internal_error"
            return _error_response(Refusal("internal_error", "the miner failed to handle the request"))
        finally:
            self._active -= 1
            if self._active == 0:
                self._idle.set()
            self.metrics.requests.labels(outcome).inc()
            self.metrics.latency.labels(outcome).observe(time.perf_counter() - started)

    async def _run_handler(self, exchange: _Exchange) -> bytes:
        """Run the handler under its deadline; returns the response body to send."""
        assert exchange.chat is not None and exchange.caller is not None
        identity = CallerIdentity(
            hotkey=exchange.hotkey,
            uid=exchange.caller.uid,
            stake=exchange.caller.stake,
            validator_permit=exchange.caller.validator_permit,
            nonce_ns=exchange.nonce_ns,
            peer=exchange.peer,
        )
        try:
            async with asyncio.timeout(self.policy.handler_timeout_s):
                response = await self.handler(exchange.chat, identity)
            if not isinstance(response, ChatCompletionResponse):
                raise TypeError(f"handler returned {type(response).__name__}, not a ChatCompletionResponse")
            return response.to_body()
        except TimeoutError:
            raise Refusal(
                "handler_timeout", f"the model did not answer within {self.policy.handler_timeout_s:g} s"
            ) from None
        except Refusal:
            raise  # the handler's own verdict (e.g. its engine is down): passed on as it chose
        except Exception:
            logger.exception("chat handler failed for caller uid %s", identity.uid)
            raise Refusal("internal_error", "the miner failed to produce a completion") from None

    # --- draining --------------------------------------------------------------------------

    @property
    def active(self) -> int:
        """Requests currently inside the chat route (any stage)."""
        return self._active

    async def drain(self, wait_s: float) -> bool:
        """Refuse new requests and wait for the active ones; True when all finished in time."""
        self.draining = True
        try:
            async with asyncio.timeout(wait_s):
                await self._idle.wait()
        except TimeoutError:
            return False
        return True

    # --- stages, cheapest first --------------------------------------------------------------

    async def _refuse_repeated_auth_headers(self, exchange: _Exchange) -> None:
        """A repeated auth header is the one way a request can show one value to a reader that
        takes the first copy and another to one that takes the last (a forger's own key to the
        signature check, a validator's to the permission and rate checks). No signer repeats
        one, so such a request is refused before anything reads a header."""
        # The raw header lines as received: a multidict's keys() shows a repeated name once.
        names = (name.decode("latin-1") for name, _ in exchange.request.raw_headers)
        repeated = _first_repeated_auth_header(names)
        if repeated is not None:
            raise Refusal("duplicate_auth_header", f"the {repeated} header is repeated")

    async def _refuse_when_draining(self, exchange: _Exchange) -> None:
        if self.draining:
            raise Refusal("shutting_down", "the miner is shutting down")

    async def _check_declared_size(self, exchange: _Exchange) -> None:
        declared = exchange.request.content_length
        if declared is not None and declared > self.policy.max_body_bytes:
            raise Refusal("body_too_large", f"body exceeds {self.policy.max_body_bytes} bytes")

    async def _check_auth_headers(self, exchange: _Exchange) -> None:
        """Header shape, receiver binding and freshness: string work only, nothing looked up."""
        headers = exchange.request.headers
        version = headers.get(bt.http_auth.HEADER_VERSION)
        hotkey = headers.get(bt.http_auth.HEADER_HOTKEY)
        raw_nonce = headers.get(bt.http_auth.HEADER_NONCE)
        signature = headers.get(bt.http_auth.HEADER_SIGNATURE)
        receiver = headers.get(bt.http_auth.HEADER_RECEIVER)
        if not (version and hotkey and raw_nonce and signature and receiver):
            raise Refusal("missing_auth", "request is not signed: X-Bittensor-* headers are missing")
        if version != bt.http_auth.VERSION:
            raise Refusal("malformed_auth", f"X-Bittensor-Version must be {bt.http_auth.VERSION}")
        if (
            len(hotkey) > _MAX_HOTKEY_CHARS
            or len(raw_nonce) > _MAX_NONCE_DIGITS
            or not (raw_nonce.isascii() and raw_nonce.isdigit())
            or len(signature.removeprefix("0x")) != _SIGNATURE_HEX_CHARS
        ):
            raise Refusal("malformed_auth", "malformed X-Bittensor-* headers")
        if receiver != self.hotkey_ss58:
            raise Refusal("wrong_receiver", "request was signed for a different receiving hotkey")
        nonce = int(raw_nonce)
        now = time.time_ns()
        if now - nonce > self._max_age_ns:
            raise Refusal("stale_request", "request is older than the freshness window")
        if nonce - now > self._skew_ns:
            raise Refusal("stale_request", "request is timestamped in the future")
        exchange.hotkey = hotkey
        exchange.nonce_ns = nonce
        exchange.auth_headers = {name: headers[name] for name in _AUTH_HEADERS if name in headers}

    async def _check_peer_failure_budget(self, exchange: _Exchange) -> None:
        if self._peer_failures is not None and not self._peer_failures.has_token(exchange.peer):
            raise Refusal("peer_auth_failures", "too many failed authentications from this address")

    async def _check_permission(self, exchange: _Exchange) -> None:
        caller = self.directory.lookup(exchange.hotkey)
        if caller is None:
            raise Refusal("not_registered", "caller hotkey is not registered on this subnet")
        for rule in PERMISSION_RULES:
            refusal = rule(self.policy.auth, exchange.hotkey, caller)
            if refusal is not None:
                raise refusal
        exchange.caller = caller

    async def _check_not_replayed(self, exchange: _Exchange) -> None:
        if self.replay_store.seen(exchange.hotkey, exchange.nonce_ns):
            raise Refusal("replayed_request", "this nonce was already accepted from this hotkey")

    async def _read_body(self, exchange: _Exchange) -> None:
        """Read the body with a size cap and a deadline, holding a pending-body slot meanwhile."""
        if not self._pending_bodies.try_acquire():
            raise Refusal("overloaded", "too many requests are being received")
        try:
            if not self._peer_bodies.try_acquire(exchange.peer):
                raise Refusal("peer_busy", "too many requests are being received from this address")
            try:
                exchange.body = await self._read_capped(exchange.request)
            finally:
                self._peer_bodies.release(exchange.peer)
        finally:
            self._pending_bodies.release()

    async def _read_capped(self, request: web.Request) -> bytes:
        cap = self.policy.max_body_bytes
        received = bytearray()
        try:
            async with asyncio.timeout(self.policy.body_read_timeout_s):
                while chunk := await request.content.readany():
                    received += chunk
                    if len(received) > cap:
                        raise Refusal("body_too_large", f"body exceeds {cap} bytes")
        except TimeoutError:
            raise Refusal("body_timeout", "the body was not received in time") from None
        except (ConnectionError, OSError, ValueError, HttpProcessingError, aiohttp.ClientError) as exc:
            # The peer went away mid-body or sent a broken chunked encoding.
            raise Refusal("incomplete_body", "the body was not received completely") from exc
        return bytes(received)

    async def _verify_signature(self, exchange: _Exchange) -> None:
        request = exchange.request
        try:
            verified = bt.http_auth.verify(
                exchange.auth_headers,
                exchange.body,
                method=request.method,
                path=request.raw_path,
                self_hotkey_ss58=self.hotkey_ss58,
                max_age=self.policy.auth.max_age_s,
                allowed_skew=self.policy.auth.allowed_skew_s,
                nonce_store=self.replay_store,
            )
        except ReplayCapacityExceeded:
            raise Refusal("rate_limited", "too many requests from this hotkey") from None
        except bt.http_auth.AuthError as exc:
            error_type = next(
                (name for kind, name in _AUTH_ERROR_TYPES if isinstance(exc, kind)), "bad_signature"
            )
            if error_type in ("bad_signature", "malformed_auth") and self._peer_failures is not None:
                self._peer_failures.try_take(exchange.peer)
            raise Refusal(error_type, str(exc)) from None
        if verified.hotkey_ss58 != exchange.hotkey or verified.nonce_ns != exchange.nonce_ns:
            # Cannot happen while verify reads only the values handed to it; kept so that a
            # change on either side fails closed rather than serving one key as another.
            logger.error(
                "signature verified for %s but the gate checked %s", verified.hotkey_ss58, exchange.hotkey
            )
            raise Refusal("bad_signature", "the signed identity is not the one the gate checked")
        # A permitted caller signed from this address: its connections may use the reserved share,
        # and this one is the validator's from now on (kept open, never displaced by strangers).
        self.connections.learn_validator(exchange.peer)
        exchange.request[AUTHENTICATED] = True
        ticket = self.connections.ticket(exchange.request.transport)
        if ticket is not None:
            self.connections.authenticated(ticket)

    async def _check_caller_rate(self, exchange: _Exchange) -> None:
        """The per-second bucket is for callers without a validator permit (served only where
        permits are not required). A permit holder's requests are bounded by its rounds (a
        round sends at most `round_requests` of them, as fast as the miner answers) and by its
        concurrency slots, so an honest miner never answers it 429 however fast its engine."""
        assert exchange.caller is not None
        if exchange.caller.validator_permit:
            return
        if not self._caller_rates.try_take(exchange.hotkey):
            raise Refusal("rate_limited", "request rate limit exceeded for this hotkey")

    async def _hold_caller_slot(self, exchange: _Exchange) -> None:
        if not self._caller_slots.try_acquire(exchange.hotkey):
            raise Refusal("caller_busy", "too many concurrent requests from this hotkey")
        exchange.stack.callback(self._caller_slots.release, exchange.hotkey)

    async def _hold_handler_slot(self, exchange: _Exchange) -> None:
        if not self._handler_slots.try_acquire():
            raise Refusal("overloaded", "the miner is at capacity")
        self.metrics.in_flight.inc()
        exchange.stack.callback(self._release_handler_slot)

    def _release_handler_slot(self) -> None:
        self._handler_slots.release()
        self.metrics.in_flight.dec()

    async def _parse_request(self, exchange: _Exchange) -> None:
        try:
            exchange.chat = ChatCompletionRequest.model_validate_json(exchange.body)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False, include_context=False)
            if any(error["type"] == "json_invalid" for error in errors):
                raise Refusal("bad_json", "request body is not valid JSON") from None
            raise Refusal("invalid_request", _summarise_validation(errors)) from None


def _declared(directory: CallerDirectory, configured: frozenset[str]) -> Callable[[], frozenset[str]]:
    """The validators' addresses: the axons the metagraph names, and the operator's list."""
    if not configured:
        return directory.validator_addresses

    # Admission asks on every new connection: the union is rebuilt only when the snapshot changes.
    cache: list[frozenset[str]] = [frozenset(), configured]

    def addresses() -> frozenset[str]:
        published = directory.validator_addresses()
        if published is not cache[0]:
            cache[:] = [published, configured | published]
        return cache[1]

    return addresses


def _first_repeated_auth_header(names: Iterable[str]) -> str | None:
    """The first X-Bittensor-* header name that occurs twice (in any letter case), or None."""
    seen: set[str] = set()
    for name in names:
        lowered = name.lower()
        if lowered.startswith(_AUTH_PREFIX):
            if lowered in seen:
                return name
            seen.add(lowered)
    return None


def _summarise_validation(errors: list[Any]) -> str:
    shown = "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'body'}: {error['msg']}" for error in errors[:3]
    )
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"request does not match the schema: {shown}{more}"


def _error_response(refusal: Refusal) -> web.Response:
    headers = {"Retry-After": "1"} if refusal.status in (429, 503) else None
    return web.Response(
        status=refusal.status,
        body=ErrorBody.of(refusal.error_type, refusal.message).to_body(),
        content_type="application/json",
        headers=headers,
    )


GATE_KEY = web.AppKey("miner_gate", MinerGate)
# Set on a request that passed authentication as a permitted caller.
AUTHENTICATED = web.RequestKey("authenticated", bool)


ResponseHook = Callable[[web.Request, web.StreamResponse], Awaitable[None]]


def _close_unless_authenticated(gate: MinerGate) -> ResponseHook:
    """An `on_response_prepare` hook: every answer on a connection where no request has
    authenticated (refusals, /health, /metrics, unknown paths) closes it, so a stranger's
    connection holds its place for one exchange only, never idle between requests."""

    async def close(request: web.Request, response: web.StreamResponse) -> None:
        if request.get(AUTHENTICATED):
            return
        ticket = gate.connections.ticket(request.transport)
        if ticket is None or not ticket.authenticated:
            response.force_close()
            # aiohttp wrote its Connection header before this hook: say it, or the client would
            # send its next request on a connection the miner closes.
            response.headers[hdrs.CONNECTION] = "close"

    return close


def build_miner_app(
    *,
    hotkey_ss58: str,
    directory: CallerDirectory,
    policy: ServerPolicy,
    handler: ChatHandler,
    registry: CollectorRegistry | None = None,
) -> web.Application:
    """The miner's aiohttp application: signed `POST /v1/chat/completions`, open `GET /health`
    and `GET /metrics` (Prometheus, from `registry`, a fresh one when None)."""
    bt.sp_core.ss58_decode(hotkey_ss58)  # refuse a malformed own hotkey at build time
    registry = registry if registry is not None else new_registry()
    gate = MinerGate(
        hotkey_ss58=hotkey_ss58,
        directory=directory,
        policy=policy,
        handler=handler,
        metrics=ServerMetrics.register(registry),
    )
    register_readings(
        registry,
        [
            # Connections closed to make room for others (a crowd from one address, a flood):
            # rising while honest validators see refusals means the limits need a look.
            Reading(
                "subnet_miner_connections_evicted",
                "Idle connections closed to admit others",
                lambda: gate.connections.evicted,
                counter=True,
            )
        ],
    )
    # aiohttp's own cap only applies to request.read(); the gate reads the stream itself.
    app = web.Application(client_max_size=policy.max_body_bytes)
    app[GATE_KEY] = gate

    async def health(_: web.Request) -> web.Response:
        status = "draining" if gate.draining else "ok"
        return web.json_response(
            {"status": status, "hotkey": hotkey_ss58, "active": gate.active},
            status=503 if gate.draining else 200,
        )

    app.on_response_prepare.append(_close_unless_authenticated(gate))
    app.router.add_post(CHAT_PATH, gate.serve_chat)
    app.router.add_get(HEALTH_PATH, health)
    add_metrics_route(app, registry)
    return app


class MinerServer:
    """Runs a miner app on host:port; `stop()` drains in-flight requests before closing.

    For a miner app (`build_miner_app`), connections pass the gate's admission (caps per
    address and in total, a share kept for validators) and a request head must arrive within
    the policy's `head_timeout_s`; other apps get aiohttp's plain site with that 5 s deadline.
    """

    def __init__(
        self,
        app: web.Application,
        *,
        host: str = "0.0.0.0",
        port: int = 8091,
        lingering_time: float = 1.0,
        backlog: int = 1024,
    ) -> None:
        self.app = app
        self.host = host
        self.requested_port = port
        gate = app.get(GATE_KEY)
        head_timeout_s = gate.policy.head_timeout_s if gate is not None else ServerPolicy().head_timeout_s
        self._runner_options: dict[str, Any] = {
            "access_log": None,
            # aiohttp closes a connection that waits longer than this for a complete request
            # head, from its opening or from the previous answer: the head deadline. A head
            # trickled byte by byte would otherwise hold its connection (and a file) for as long.
            "keepalive_timeout": head_timeout_s,
            # How long to keep reading an unread body after a refusal: short, it is a
            # slow-sender's lever.
            "lingering_time": lingering_time,
            # Handlers still running after our own drain get this long before cancellation.
            "shutdown_timeout": 1.0,
            # A caller that hangs up (a validator past its own timeout) cancels its handler, so
            # the model stops working on an answer nobody will read (aiohttp's default is to
            # let the handler run on).
            "handler_cancellation": True,
        }
        self._backlog = backlog
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None

    async def start(self) -> None:
        runner = web.AppRunner(self.app, **self._runner_options)
        await runner.setup()
        gate = self.app.get(GATE_KEY)
        site: web.TCPSite
        if gate is None:
            site = web.TCPSite(runner, self.host, self.requested_port, backlog=self._backlog)
        else:
            warn_if_file_limit_is_low(gate.connections.capacity)
            backlog = accept_backlog(wanted=self._backlog)
            site = AdmittingSite(
                runner, gate.connections, host=self.host, port=self.requested_port, backlog=backlog
            )
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner, self._site = runner, site

    @property
    def port(self) -> int:
        """The bound port (useful when started on port 0)."""
        if self._runner is None:
            raise RuntimeError("server is not started")
        address = self._runner.addresses[0]
        return int(address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def stop(self, drain_timeout: float = 10.0) -> bool:
        """Stop accepting, let in-flight requests finish (up to `drain_timeout` s), close.

        Returns True when every in-flight request finished within the drain time.
        """
        runner, site = self._runner, self._site
        if runner is None:
            return True
        self._runner = self._site = None
        gate = self.app.get(GATE_KEY)
        if gate is not None:
            gate.draining = True
        if site is not None:
            with contextlib.suppress(RuntimeError):
                await site.stop()
        drained = True if gate is None else await gate.drain(drain_timeout)
        await runner.cleanup()
        return drained

    async def __aenter__(self) -> MinerServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
