"""Playing a task set against one endpoint, on the validator's own parts.

The tasks come from the validator's task source (:class:`LibraryTasks`), each answer is judged by
the validator's judge (:class:`BfclJudge`), and a signed run (a running miner) sends every request
through the validator's :class:`MinerClient`. An unsigned run (an engine: vLLM, SGLang, llama.cpp)
goes through :class:`EngineClient`, which answers with the same :class:`QueryResult` and
:class:`QueryStatus`, so everything after the request is one path. Nothing the endpoint returns
is executed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import pydantic_core
from pydantic import ValidationError

from subnet.evaluate.settings import (
    EvaluateError,
    EvaluateSettings,
    health_url,
    miner_address,
    models_url,
)
from subnet.phrasing import PhrasingSetupError
from subnet.protocol import MAX_RESPONSE_BODY_BYTES, ChatCompletionRequest, ChatCompletionResponse
from subnet.transport import ClientTimeouts, MinerClient, MinerTarget, QueryResult, QueryStatus
from subnet.validator.judge import BfclJudge, Judge
from subnet.validator.task_source import LibraryTasks

PROBE_TIMEOUT_S = 10.0
_MAX_ERROR_CHARS = 200


# --------------------------------------------------------------------------- the tasks


def task_source(settings: EvaluateSettings) -> LibraryTasks:
    """The validator's task source for the run's flags (--tasks.*, and --category as a mix)."""
    import tasks

    mix = {category: 1.0 / len(settings.categories) for category in settings.categories} or None
    if settings.sources is None:
        return LibraryTasks(None, mix)
    try:
        return LibraryTasks.from_flag(settings.sources, settings.bfcl, settings.xlam, mix)
    except (tasks.TaskConfigError, tasks.SourceFileError) as exc:
        raise EvaluateError(f"--tasks.sources {settings.sources!r}: {exc}") from None


def build_tasks(settings: EvaluateSettings) -> list[Any]:
    """The run's tasks: the validator's task source drawn with the run's seed, each given a fresh
    surface (tool_shuffle) as a validator gives each miner; phrased first with --phrasing.*."""
    import tasks

    source = task_source(settings)
    try:
        generated = list(source.generate(settings.seed, settings.n))
    except (tasks.TaskConfigError, tasks.SourceFileError) as exc:
        raise EvaluateError(f"--tasks.sources {settings.sources!r}: {exc}") from None
    if settings.phrasing is not None:
        generated = _phrased(settings, generated, source)
    # A variant seed derived from the run seed: reproducible, but not the generator's own seed.
    variant_seed = (settings.seed * 1_000_003 + 7) % 2**63
    return [source.variant(task, variant_seed) for task in generated]


def _phrased(settings: EvaluateSettings, generated: list[Any], source: LibraryTasks) -> list[Any]:
    """The tasks with their requests rewritten by the phrasing engine, as a validator's round has them."""
    import tasks
    from subnet.validator.phrasing import PhrasingSession

    try:
        with PhrasingSession(settings.phrasing, source.redraw) as session:
            result = session.phrase(generated, tasks.derive_round_seed(b"evaluate", 0, "0x00", settings.seed))
    except PhrasingSetupError as exc:
        raise EvaluateError(str(exc)) from None
    if generated and not result.tasks:
        raise EvaluateError(f"no request could be phrased: {result.stats.summary()}")
    print(result.stats.summary(), file=sys.stderr)
    return list(result.tasks)


# --------------------------------------------------------------------------- the endpoint


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
    _next_start: float = 0.0

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
    if signer is not None and address is not None:
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
    from subnet.config import UserError, WalletSettings, default_wallet_path, load_wallet

    wallet_settings = WalletSettings(
        name=settings.wallet_name,
        hotkey=settings.wallet_hotkey,
        path=settings.wallet_path or _environment_wallet_path() or default_wallet_path(),
    )
    try:
        return load_wallet(wallet_settings).hotkey
    except UserError as exc:
        raise EvaluateError(str(exc)) from None


def _environment_wallet_path() -> Path | None:
    """BT_WALLET_PATH, which the neurons read for --wallet.path too (None: unset or empty)."""
    value = os.environ.get("BT_WALLET_PATH", "").strip()
    return Path(value).expanduser() if value else None


# --------------------------------------------------------------------------- one run


@dataclass(frozen=True)
class TaskResult:
    """One scored task. `status` is the transport's word for how the request ended."""

    task_id: str
    category: str
    status: QueryStatus
    valid: bool
    score: float
    error_type: str | None
    latency_s: float
    http_status: int | None = None


def request_for(task: Any, max_new_tokens: int) -> ChatCompletionRequest:
    """The request a validator sends for a task (the endpoint's model and temperature are added
    when it is sent)."""
    return ChatCompletionRequest.model_validate(
        {
            "messages": task.messages,
            "tools": task.tools or None,
            "tool_choice": "auto" if task.tools else None,
            "max_tokens": max_new_tokens,
        }
    )


def score_result(task: Any, result: QueryResult, judge: Judge) -> TaskResult:
    """The validator's verdict on one answer; a request that got none is invalid with score 0 and
    error type `transport:<status>`, as the validator records it."""

    def scored(valid: bool, score: float, error_type: str | None) -> TaskResult:
        return TaskResult(
            task_id=str(task.id),
            category=str(task.category),
            status=result.status,
            valid=valid,
            score=score,
            error_type=error_type,
            latency_s=result.latency_s,
            http_status=result.http_status,
        )

    if not result.ok or result.completion is None:
        return scored(False, 0.0, f"transport:{result.status.value}")
    judgement = judge.judge(result.completion.message, task)
    error_type = None if judgement.valid else (judgement.error_type or "unknown")
    return scored(judgement.valid, judgement.score, error_type)


ProgressCallback = Callable[[int, int, TaskResult], None]


async def run_evaluation(
    settings: EvaluateSettings,
    task_list: Sequence[Any],
    progress: ProgressCallback | None = None,
    on_start: Callable[[str], None] | None = None,
    finished: list[TaskResult] | None = None,
    judge: Judge | None = None,
) -> tuple[str, list[TaskResult], float]:
    """Query the endpoint with every task (at most `concurrency` at once) and judge each answer.

    `on_start(model)` runs once the endpoint has answered the reachability probe; `finished`
    (when given) receives each result as it completes, so an interrupted run can still report
    what it has. Returns the model name used, the results in task order and the wall time in
    seconds. Raises EvaluateError when the endpoint cannot be reached at all.
    """
    judge = judge if judge is not None else BfclJudge()
    started = time.perf_counter()
    async with open_endpoint(settings) as endpoint:
        if on_start is not None:
            on_start(endpoint.model)
        gate = asyncio.Semaphore(settings.concurrency)
        done = 0
        results: list[TaskResult | None] = [None] * len(task_list)

        async def one(index: int, task: Any) -> None:
            nonlocal done
            async with gate:
                answer = await endpoint.query(endpoint.target, request_for(task, settings.max_new_tokens))
            result = score_result(task, answer, judge)
            results[index] = result
            if finished is not None:
                finished.append(result)
            done += 1
            if progress is not None:
                progress(done, len(task_list), result)

        await asyncio.gather(*(one(i, task) for i, task in enumerate(task_list)))
    scored = [result for result in results if result is not None]
    if scored and all(result.status is QueryStatus.REFUSED for result in scored):
        raise EvaluateError(f"{settings.endpoint} stopped answering: every request failed to connect")
    return endpoint.model, scored, time.perf_counter() - started
