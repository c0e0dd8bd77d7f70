"""Evaluate any OpenAI-compatible endpoint on a fresh, rotating tool-calling task set.

    python -m subnet.evaluate --endpoint http://127.0.0.1:8000/v1 [--n 200] [--seed S]

Miners run it against their own model (a vLLM or SGLang server, llama.cpp, their miner's
`/v1/chat/completions`) before they register; the answer is the table a validator would
build: BFCL accuracy per category, overall, the error types, latency. It speaks plain HTTP
with aiohttp (optionally `Authorization: Bearer` with `--api-key`; with `--wallet.name`, each
request signed with `bt.http_auth` as a validator's, which a running miner requires),
generates tasks with `tasks.generate`, gives them a fresh surface with `tasks.variant` and
scores the endpoint's answer (structured `tool_calls` or text content) with `scoring.check`,
exactly as the validator does. Nothing the endpoint returns is executed.

The seed defaults to a random one and is printed, so any run can be repeated exactly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import secrets
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import aiohttp
from pydantic import ValidationError

from subnet.config import float_arg, int_arg, name_arg
from subnet.phrasing import PhrasingSetupError, add_phrasing_arguments, phrasing_settings
from subnet.protocol import MAX_RESPONSE_BODY_BYTES, ChatCompletionResponse

PROG = "python -m subnet.evaluate"
CHAT_PATH = "/v1/chat/completions"
PROBE_TIMEOUT_S = 10.0

# Outcomes of one request that are not a model answer; they score 0, as in the validator.
STATUS_OK = "ok"
TRANSPORT_ERROR_PREFIX = "transport:"


class EvaluateError(Exception):
    """A mistake the user can fix (bad URL, endpoint down): one line, exit code 2."""


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class EvaluateSettings:
    """Everything one evaluation run needs, built from the command line."""

    endpoint: str  # the chat-completions URL, normalised
    n: int = 200
    seed: int = 0
    categories: tuple[str, ...] = ()  # empty: the generator's default mix
    sources: str | None = None  # --tasks.sources, as the validator's (builtin=0.8,bfcl=0.2); None: builtin
    bfcl: tuple[str, ...] = ()  # --tasks.bfcl: BFCL question files or data folders (default: bfcl-eval's)
    xlam: tuple[str, ...] = ()  # --tasks.xlam: xLAM-style JSON files
    concurrency: int = 8
    rate: float | None = None  # requests started per second at most; None: no pacing
    timeout_s: float = 60.0
    api_key: str | None = None
    model: str | None = None  # None: ask the endpoint's /v1/models, else send ""
    max_tokens: int = 512
    temperature: float = 0.0
    output_format: str = "table"
    # Signing, for a running miner (which serves registered validators only): the wallet whose
    # hotkey signs each request with bt.http_auth, and the miner's hotkey the signature is
    # bound to (None: asked from the miner's open /health).
    wallet_name: str | None = None
    wallet_hotkey: str = "default"
    wallet_path: Path | None = None
    receiver_hotkey: str | None = None
    # --phrasing.*: the requests rewritten as a validator's phrasing engine would (None: template text).
    phrasing: Any = None
    # --episodes N: play N multi-turn episodes instead of single-turn tasks (subnet.evaluate_episodes).
    episodes: int | None = None


def chat_completions_url(endpoint: str) -> str:
    """The chat-completions URL for what a user typed: a server root, `.../v1`, or the full URL.

    Raises EvaluateError for anything that is not an http(s) URL with a host.
    """
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EvaluateError(
            f"--endpoint {endpoint!r} is not an http(s) URL; "
            "give e.g. http://127.0.0.1:8000/v1 or http://host:port/v1/chat/completions"
        )
    try:
        parts.port  # noqa: B018 - parsing the port is the validation
    except ValueError as exc:
        raise EvaluateError(f"--endpoint {endpoint!r} has a bad port: {exc}") from None
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        pass
    elif path.endswith("/v1"):
        path += "/chat/completions"
    else:
        path += CHAT_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def models_url(chat_url: str) -> str:
    """`/v1/models` next to the chat-completions URL (where OpenAI-compatible engines list models)."""
    parts = urlsplit(chat_url)
    base = parts.path[: -len("/chat/completions")]
    return urlunsplit((parts.scheme, parts.netloc, base + "/models", "", ""))


def health_url(chat_url: str) -> str:
    """The miner's open `/health` (it names the miner's hotkey) on the same server."""
    parts = urlsplit(chat_url)
    return urlunsplit((parts.scheme, parts.netloc, "/health", "", ""))


class _OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line (and exit code 2), not usage plus error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


# Flag values: a whole number of at least 1, seconds or a rate above 0, a temperature in 0..2.
_positive_int = int_arg(1)
_positive_float = float_arg(0.0, low_open=True)
_temperature = float_arg(0.0, 2.0)


def build_parser(categories: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The command line; `categories` (when known) are the choices of --category."""
    parser = _OneLineParser(
        prog=PROG,
        description=(
            "Run a fresh, rotating tool-calling task set against an OpenAI-compatible endpoint "
            "and print BFCL-style accuracy per category, error types and latency."
        ),
    )
    parser.add_argument(
        "--endpoint",
        required=True,
        metavar="URL",
        help="server root, .../v1, or the full .../v1/chat/completions URL "
        "(plain HTTP; signed with --wallet.name)",
    )
    parser.add_argument(
        "--n", type=_positive_int, default=200, metavar="N", help="number of tasks (default 200)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="task-set seed (default: a random one, printed so the run can be repeated)",
    )
    parser.add_argument(
        "--category",
        action="append",
        default=[],
        metavar="C",
        choices=list(categories) or None,
        help="only this task category (repeatable"
        + (f"; one of {', '.join(categories)}" if categories else "")
        + "); default: the validator's mix",
    )
    parser.add_argument(
        "--tasks.sources",
        dest="sources",
        default=None,
        metavar="SPEC",
        help="task sources and shares, as the validator's flag (e.g. builtin=0.8,bfcl=0.2); default builtin",
    )
    parser.add_argument(
        "--tasks.bfcl",
        dest="bfcl",
        action="append",
        default=[],
        metavar="PATH",
        help="a BFCL question file or data folder (repeatable; default: the installed bfcl-eval)",
    )
    parser.add_argument(
        "--tasks.xlam",
        dest="xlam",
        action="append",
        default=[],
        metavar="FILE",
        help="an xLAM-style JSON file (repeatable; needed when xlam has a share)",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=8,
        metavar="K",
        help="requests in flight at once (default 8)",
    )
    parser.add_argument(
        "--rate",
        type=_positive_float,
        default=None,
        metavar="R",
        help="start at most this many requests per second (a miner limits each caller; default: no limit)",
    )
    parser.add_argument(
        "--timeout", type=_positive_float, default=60.0, metavar="T", help="seconds per request (default 60)"
    )
    parser.add_argument("--api-key", default=None, metavar="KEY", help="sent as 'Authorization: Bearer KEY'")
    parser.add_argument(
        "--model",
        default=None,
        metavar="NAME",
        help="model name to request (default: the first one the endpoint lists at /v1/models)",
    )
    parser.add_argument(
        "--max-tokens", type=_positive_int, default=512, metavar="N", help="per answer (default 512)"
    )
    parser.add_argument(
        "--temperature",
        type=_temperature,
        default=0.0,
        metavar="X",
        help="sampling temperature (default 0: greedy)",
    )
    parser.add_argument(
        "--format",
        dest="output_format",
        choices=sorted(RENDERERS),
        default="table",
        help="report format on stdout (default table)",
    )
    parser.add_argument("--json", action="store_true", help="same as --format json")
    parser.add_argument(
        "--episodes",
        type=_positive_int,
        default=None,
        metavar="N",
        help="play N multi-turn episodes on simulated tools instead of single-turn tasks",
    )
    add_phrasing_arguments(parser)
    signing = parser.add_argument_group(
        "signing (for a running miner, which only serves registered validators)",
        "With --wallet.name, every request is signed with that wallet's hotkey (bt.http_auth) "
        "for the miner's hotkey, read from the miner's /health unless --miner-hotkey is given.",
    )
    signing.add_argument(
        "--wallet.name",
        dest="wallet_name",
        type=name_arg,
        default=None,
        metavar="NAME",
        help="wallet that signs",
    )
    signing.add_argument(
        "--wallet.hotkey",
        dest="wallet_hotkey",
        type=name_arg,
        default="default",
        metavar="NAME",
        help="its hotkey",
    )
    signing.add_argument(
        "--wallet.path",
        dest="wallet_path",
        type=Path,
        default=None,
        metavar="DIR",
        help="wallets directory (default: $BT_WALLET_PATH, as for the neurons, else ~/.bittensor/wallets)",
    )
    signing.add_argument("--miner-hotkey", default=None, metavar="SS58", help="the miner's hotkey (ss58)")
    return parser


def parse_settings(argv: Sequence[str] | None, categories: Sequence[str] = ()) -> EvaluateSettings:
    """Flags -> settings. Exits with code 2 and one line on a bad flag or URL."""
    parser = build_parser(categories)
    args = parser.parse_args(argv)
    try:
        endpoint = chat_completions_url(args.endpoint)
    except EvaluateError as exc:
        parser.error(str(exc))
    if args.miner_hotkey is not None and args.wallet_name is None:
        parser.error("--miner-hotkey only matters with --wallet.name (the wallet that signs)")
    try:
        phrasing = phrasing_settings(args)
    except PhrasingSetupError as exc:
        parser.error(str(exc))
    return EvaluateSettings(
        endpoint=endpoint,
        n=args.n,
        seed=args.seed if args.seed is not None else secrets.randbelow(2**31),
        categories=tuple(dict.fromkeys(args.category)),
        sources=args.sources,
        bfcl=tuple(args.bfcl),
        xlam=tuple(args.xlam),
        concurrency=args.concurrency,
        rate=args.rate,
        timeout_s=args.timeout,
        api_key=args.api_key,
        model=args.model,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        output_format="json" if args.json else args.output_format,
        wallet_name=args.wallet_name,
        wallet_hotkey=args.wallet_hotkey,
        wallet_path=args.wallet_path,
        receiver_hotkey=args.miner_hotkey,
        phrasing=phrasing,
        episodes=args.episodes,
    )


# --------------------------------------------------------------------------- one request


@dataclass(frozen=True)
class EndpointAnswer:
    """What came back for one request: the assistant message, or why there is none."""

    status: str  # "ok" or a transport failure ("timeout", "http_503", "bad_json", ...)
    latency_s: float
    message: dict[str, Any] | None = None
    detail: str = ""


async def _read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """The body up to `cap` + 1 bytes (one more than allowed tells the caller it was too big)."""
    received = bytearray()
    while len(received) <= cap:
        chunk = await response.content.read(cap + 1 - len(received))
        if not chunk:
            break
        received.extend(chunk)
    return bytes(received)


class EndpointClient:
    """OpenAI chat-completions client over one pooled aiohttp session.

    Plain HTTP by default (an engine: vLLM, SGLang, llama.cpp); with a `signer` (a hotkey
    keypair) each request carries `bt.http_auth` headers bound to the miner's hotkey, as a
    validator's would, so a running miner serves it.
    """

    def __init__(self, settings: EvaluateSettings, signer: Any = None) -> None:
        self._settings = settings
        self._signer = signer
        self._receiver = settings.receiver_hotkey
        self._path = urlsplit(settings.endpoint).path or "/"
        if urlsplit(settings.endpoint).query:
            self._path += "?" + urlsplit(settings.endpoint).query
        self._session: aiohttp.ClientSession | None = None
        self._pace_lock = asyncio.Lock()
        self._next_start = 0.0

    async def _paced(self) -> None:
        """Wait for this request's start slot when --rate is set (slots 1/rate seconds apart)."""
        if self._settings.rate is None:
            return
        async with self._pace_lock:
            now = time.monotonic()
            start = max(now, self._next_start)
            self._next_start = start + 1.0 / self._settings.rate
        await asyncio.sleep(start - now)

    async def __aenter__(self) -> EndpointClient:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._settings.api_key:
            headers["Authorization"] = f"Bearer {self._settings.api_key}"
        timeout = aiohttp.ClientTimeout(
            total=self._settings.timeout_s, connect=min(self._settings.timeout_s, 10.0)
        )
        self._session = aiohttp.ClientSession(
            headers=headers,
            timeout=timeout,
            connector=aiohttp.TCPConnector(limit=self._settings.concurrency),
        )
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("EndpointClient used outside 'async with'")
        return self._session

    async def _get_json(self, url: str) -> Any:
        """GET `url` as JSON; None for any answer that is not a 200 with JSON.

        Raises EvaluateError when nothing answers at all: the endpoint is down or the URL wrong.
        """
        # A short limit of its own: these are checks before the real run.
        timeout = aiohttp.ClientTimeout(total=min(self._settings.timeout_s, PROBE_TIMEOUT_S))
        try:
            async with self.session.get(url, timeout=timeout) as response:
                if response.status != 200:
                    return None
                return json.loads(await _read_capped(response, MAX_RESPONSE_BODY_BYTES))
        except (aiohttp.ClientConnectionError, TimeoutError, OSError) as exc:
            raise EvaluateError(
                f"cannot reach {self._settings.endpoint}: {_describe(exc)}; "
                "is the server running and the URL right?"
            ) from None
        except (ValueError, aiohttp.ClientError):
            return None

    async def probe(self) -> str | None:
        """Check the endpoint answers; return its first listed model (None: it lists none).

        When signing without a known receiver, the miner's hotkey is read from its `/health`.
        """
        payload = await self._get_json(models_url(self._settings.endpoint))
        models = payload.get("data") if isinstance(payload, dict) else None
        listed = None
        if isinstance(models, list) and models and isinstance(models[0], dict):
            name = models[0].get("id")
            listed = name if isinstance(name, str) else None
        if self._signer is not None and self._receiver is None:
            health = await self._get_json(health_url(self._settings.endpoint))
            hotkey = health.get("hotkey") if isinstance(health, dict) else None
            if not isinstance(hotkey, str) or not hotkey:
                raise EvaluateError(
                    f"{health_url(self._settings.endpoint)} does not name the miner's hotkey; "
                    "pass it with --miner-hotkey"
                )
            self._receiver = hotkey
        return listed

    def _headers(self, body: bytes) -> dict[str, str]:
        if self._signer is None:
            return {}
        from bittensor import http_auth

        # Signed per request at send time: the nonce's freshness window is seconds long.
        return dict(
            http_auth.sign(
                self._signer, method="POST", path=self._path, body=body, receiver_ss58=self._receiver
            )
        )

    async def complete(self, body: dict[str, Any]) -> EndpointAnswer:
        """POST one chat completion; never raises for the endpoint's faults."""
        payload = json.dumps(body).encode()
        await self._paced()
        started = time.perf_counter()

        def answer(status: str, detail: str = "", message: dict[str, Any] | None = None) -> EndpointAnswer:
            return EndpointAnswer(status, time.perf_counter() - started, message, detail)

        try:
            async with self.session.post(
                self._settings.endpoint, data=payload, headers=self._headers(payload)
            ) as response:
                raw = await _read_capped(response, MAX_RESPONSE_BODY_BYTES)
                if response.status != 200:
                    return answer(f"http_{response.status}", raw[:200].decode("utf-8", "replace"))
        except TimeoutError:
            return answer("timeout", f"no answer within {self._settings.timeout_s:g} s")
        except (aiohttp.ClientError, OSError) as exc:
            return answer("connection_error", _describe(exc))
        if len(raw) > MAX_RESPONSE_BODY_BYTES:
            return answer("too_large", f"answer over {MAX_RESPONSE_BODY_BYTES} bytes")
        try:
            parsed = ChatCompletionResponse.model_validate_json(raw)
        except ValidationError as exc:
            kind = "bad_json" if any(e["type"] == "json_invalid" for e in exc.errors()) else "bad_schema"
            return answer(kind, str(exc.errors()[0]["msg"])[:200])
        return answer(STATUS_OK, message=parsed.message.model_dump(mode="json", exclude_none=True))


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


# --------------------------------------------------------------------------- one run


@dataclass(frozen=True)
class TaskResult:
    """One scored task."""

    task_id: str
    category: str
    status: str
    valid: bool
    score: float
    error_type: str | None
    latency_s: float


def _request_body(task: Any, settings: EvaluateSettings, model: str) -> dict[str, Any]:
    return {
        "model": model,
        "messages": list(task.messages),
        "tools": list(task.tools),
        "tool_choice": "auto",
        "max_tokens": settings.max_tokens,
        "temperature": settings.temperature,
    }


def _functions_of(tools: Sequence[Any]) -> list[Any]:
    """BFCL-form function schemas from OpenAI tools (`{"type": "function", "function": {...}}`)."""
    return [
        tool["function"] if isinstance(tool, dict) and isinstance(tool.get("function"), dict) else tool
        for tool in tools
    ]


def score_answer(task: Any, answer: EndpointAnswer) -> TaskResult:
    """The verdict on one answer; a transport failure is invalid with score 0, as in the validator."""
    category = str(getattr(task, "scoring_category", task.category))
    if answer.status != STATUS_OK or answer.message is None:
        return TaskResult(
            task_id=str(task.id),
            category=str(task.category),
            status=answer.status,
            valid=False,
            score=0.0,
            error_type=TRANSPORT_ERROR_PREFIX + answer.status,
            latency_s=answer.latency_s,
        )
    import scoring  # deferred: keeps `--help` fast and the module import side-effect free

    verdict = scoring.check(answer.message, _functions_of(task.tools), task.expected, category)
    return TaskResult(
        task_id=str(task.id),
        category=str(task.category),
        status=STATUS_OK,
        valid=bool(verdict.valid),
        score=float(verdict.score),
        error_type=None if verdict.valid else (verdict.error_type or "unknown"),
        latency_s=answer.latency_s,
    )


def build_tasks(settings: EvaluateSettings) -> list[Any]:
    """The run's tasks: `tasks.generate(seed, n)`, each given a fresh surface by `tasks.variant`.

    With --category, the builtin generator's mix is narrowed to those categories in equal
    parts; --tasks.sources mixes in external pools (BFCL, xLAM) as the validator does.
    """
    import tasks

    mix = {category: 1.0 / len(settings.categories) for category in settings.categories} or None
    sources = None
    try:
        if settings.sources is not None:
            sources = tasks.load_sources(
                tasks.parse_source_shares(settings.sources),
                bfcl=list(settings.bfcl) or None,
                xlam=list(settings.xlam) or None,
            )
        generated = tasks.generate(settings.seed, settings.n, mix=mix, sources=sources)
    except (tasks.TaskConfigError, tasks.SourceFileError) as exc:
        raise EvaluateError(f"--tasks.sources {settings.sources!r}: {exc}") from None
    if settings.phrasing is not None:
        generated = _phrased(settings, generated, sources)
    # A variant seed derived from the run seed: reproducible, but not the generator's own seed.
    variant_seed = (settings.seed * 1_000_003 + 7) % 2**63
    return [tasks.variant(task, variant_seed) for task in generated]


def _phrased(settings: EvaluateSettings, generated: list[Any], sources: Any) -> list[Any]:
    """The tasks with their requests rewritten by the phrasing engine, as a validator's round has them."""
    import tasks
    from subnet.validator.phrasing import PhrasingSession

    try:
        with PhrasingSession(
            settings.phrasing, lambda task, seed: tasks.redraw(task, seed, sources)
        ) as session:
            result = session.phrase(generated, tasks.derive_round_seed(b"evaluate", 0, "0x00", settings.seed))
    except PhrasingSetupError as exc:
        raise EvaluateError(str(exc)) from None
    if generated and not result.tasks:
        raise EvaluateError(f"no request could be phrased: {result.stats.summary()}")
    print(result.stats.summary(), file=sys.stderr)
    return result.tasks


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


ProgressCallback = Callable[[int, int, TaskResult], None]


async def run_evaluation(
    settings: EvaluateSettings,
    task_list: Sequence[Any],
    progress: ProgressCallback | None = None,
    on_start: Callable[[str], None] | None = None,
    finished: list[TaskResult] | None = None,
) -> tuple[str, list[TaskResult], float]:
    """Query the endpoint with every task (at most `concurrency` at once) and score each answer.

    `on_start(model)` runs once the endpoint has answered the reachability probe; `finished`
    (when given) receives each result as it completes, so an interrupted run can still report
    what it has. Returns the
    model name used, the results in task order and the wall time in seconds. Raises
    EvaluateError when the endpoint cannot be reached at all.
    """
    started = time.perf_counter()
    async with EndpointClient(settings, load_signer(settings)) as client:
        listed = await client.probe()
        model = settings.model if settings.model is not None else (listed or "")
        if on_start is not None:
            on_start(model)
        gate = asyncio.Semaphore(settings.concurrency)
        done = 0
        results: list[TaskResult | None] = [None] * len(task_list)

        async def one(index: int, task: Any) -> None:
            nonlocal done
            async with gate:
                answer = await client.complete(_request_body(task, settings, model))
            result = score_answer(task, answer)
            results[index] = result
            if finished is not None:
                finished.append(result)
            done += 1
            if progress is not None:
                progress(done, len(task_list), result)

        await asyncio.gather(*(one(i, task) for i, task in enumerate(task_list)))
    finished = [result for result in results if result is not None]
    if finished and all(result.status == "connection_error" for result in finished):
        raise EvaluateError(f"{settings.endpoint} stopped answering: every request failed to connect")
    return model, finished, time.perf_counter() - started


# --------------------------------------------------------------------------- summary


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class CategorySummary:
    """Accuracy, mean score and latency of one category (or of the whole run)."""

    n: int
    valid: int
    accuracy: float
    mean_score: float
    latency_p50_ms: float | None
    latency_p95_ms: float | None


def summarise_group(results: Sequence[TaskResult]) -> CategorySummary:
    answered = [r.latency_s * 1000 for r in results if r.status == STATUS_OK]
    valid = sum(r.valid for r in results)
    n = len(results)
    p50, p95 = percentile(answered, 0.50), percentile(answered, 0.95)
    return CategorySummary(
        n=n,
        valid=valid,
        accuracy=valid / n if n else 0.0,
        mean_score=sum(r.score for r in results) / n if n else 0.0,
        latency_p50_ms=round(p50, 1) if p50 is not None else None,
        latency_p95_ms=round(p95, 1) if p95 is not None else None,
    )


@dataclass(frozen=True)
class EvaluationReport:
    """The whole run, ready to render as a table or JSON."""

    endpoint: str
    model: str
    seed: int
    n: int
    wall_s: float
    categories: dict[str, CategorySummary]
    overall: CategorySummary
    category_mean_accuracy: float  # BFCL-style: the unweighted mean of the category accuracies
    error_types: dict[str, int]
    statuses: dict[str, int]
    rerun: str = ""  # the command that repeats this run (same tasks, same surfaces)
    tasks: list[TaskResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def rerun_command(settings: EvaluateSettings) -> str:
    """The command line that repeats a run: same endpoint, tasks and signing (never the API key)."""
    parts = ["--endpoint", settings.endpoint, "--n", str(settings.n), "--seed", str(settings.seed)]
    for category in settings.categories:
        parts += ["--category", category]
    if settings.sources is not None:
        parts += ["--tasks.sources", settings.sources]
    for path in settings.bfcl:
        parts += ["--tasks.bfcl", path]
    for path in settings.xlam:
        parts += ["--tasks.xlam", path]
    optional = {
        "--model": settings.model,
        "--rate": None if settings.rate is None else f"{settings.rate:g}",
        "--wallet.name": settings.wallet_name,
        "--wallet.hotkey": settings.wallet_hotkey if settings.wallet_name else None,
        "--wallet.path": str(settings.wallet_path) if settings.wallet_path else None,
        "--miner-hotkey": settings.receiver_hotkey,
    }
    phrasing = settings.phrasing
    if phrasing is not None:
        optional.update(
            {
                "--phrasing.engine": phrasing.engine,
                "--phrasing.url": phrasing.url,
                "--phrasing.model": phrasing.model,
                "--phrasing.api_key_env": phrasing.api_key_env,
                "--phrasing.path": phrasing.path,
            }
        )
    for flag, value in optional.items():
        if value is not None:
            parts += [flag, value]
    if settings.api_key:
        parts += ["--api-key", "..."]
    return " ".join([PROG, *(shlex.quote(part) for part in parts)])


def summarise(
    settings: EvaluateSettings, model: str, results: Sequence[TaskResult], wall_s: float
) -> EvaluationReport:
    by_category: dict[str, list[TaskResult]] = {}
    for result in results:
        by_category.setdefault(result.category, []).append(result)
    categories = {name: summarise_group(group) for name, group in sorted(by_category.items())}
    errors = Counter(r.error_type for r in results if r.error_type)
    return EvaluationReport(
        endpoint=settings.endpoint,
        model=model,
        seed=settings.seed,
        n=len(results),
        wall_s=round(wall_s, 3),
        categories=categories,
        overall=summarise_group(results),
        category_mean_accuracy=(
            sum(c.accuracy for c in categories.values()) / len(categories) if categories else 0.0
        ),
        error_types=dict(errors.most_common()),
        statuses=dict(Counter(r.status for r in results).most_common()),
        rerun=rerun_command(settings),
        tasks=list(results),
    )


# --------------------------------------------------------------------------- rendering


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _row(name: str, c: CategorySummary) -> list[str]:
    return [
        name,
        str(c.n),
        f"{c.accuracy:.1%}",
        f"{c.mean_score:.3f}",
        _ms(c.latency_p50_ms),
        _ms(c.latency_p95_ms),
    ]


def _rows(report: EvaluationReport) -> list[list[str]]:
    """One row per category, then the overall row."""
    return [*(_row(name, c) for name, c in report.categories.items()), _row("overall", report.overall)]


_HEADER = ["category", "n", "accuracy", "score", "p50 ms", "p95 ms"]


def render_table(report: EvaluationReport) -> str:
    """A fixed-width table for a terminal."""
    rows = _rows(report)
    widths = [max(len(r[i]) for r in [_HEADER, *rows]) for i in range(len(_HEADER))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest])

    rule = "-" * len(line(_HEADER))
    out = [
        f"endpoint: {report.endpoint}",
        f"model: {report.model or '(endpoint default)'}   seed: {report.seed}   tasks: {report.n}"
        f"   wall: {report.wall_s:.1f} s",
        "",
        line(_HEADER),
        rule,
        *(line(row) for row in rows[:-1]),
        rule,
        line(rows[-1]),
        f"category mean accuracy (BFCL-style): {report.category_mean_accuracy:.1%}",
        "",
    ]
    if report.error_types:
        width = max(len(name) for name in report.error_types)
        out.append("error types:")
        out.extend(f"  {name.ljust(width)}  {count}" for name, count in report.error_types.items())
    else:
        out.append("error types: none")
    out.append(f"rerun: {report.rerun}")
    return "\n".join(out)


def render_markdown(report: EvaluationReport) -> str:
    """A GitHub-flavoured Markdown table, for a model card or an issue."""
    out = [
        f"Endpoint `{report.endpoint}`, model `{report.model or '-'}`, seed {report.seed}, {report.n} tasks.",
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(_HEADER) - 1)) + "|",
    ]
    for row in _rows(report):
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append(f"Category mean accuracy (BFCL-style): {report.category_mean_accuracy:.1%}")
    out.append(f"Rerun: `{report.rerun}`")
    if report.error_types:
        out.extend(["", "| error type | count |", "|---|---:|"])
        out.extend(f"| `{name}` | {count} |" for name, count in report.error_types.items())
    return "\n".join(out)


def render_json(report: EvaluationReport) -> str:
    """The whole report, per-task results included, as one JSON document."""
    return json.dumps(report.to_json(), indent=2, sort_keys=False)


RENDERERS: dict[str, Callable[[EvaluationReport], str]] = {
    "table": render_table,
    "json": render_json,
    "markdown": render_markdown,
}


class StderrProgress:
    """Progress on stderr: one rewritten line on a terminal, a line every 10% otherwise."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._tty = self._stream.isatty()
        self._valid = 0
        self._last_decile = -1

    def __call__(self, done: int, total: int, result: TaskResult) -> None:
        self._valid += result.valid
        text = f"[{done}/{total}] accuracy so far {self._valid / done:.1%}"
        if self._tty:
            self._stream.write("\r" + text + ("\n" if done == total else ""))
            self._stream.flush()
            return
        decile = done * 10 // total
        if decile != self._last_decile or done == total:
            self._last_decile = decile
            self._stream.write(text + "\n")


# --------------------------------------------------------------------------- entry point


def _known_categories() -> tuple[str, ...]:
    try:
        import tasks
    except ImportError:
        return ()
    return tuple(getattr(tasks, "CATEGORIES", ()))


def _main_episodes(settings: EvaluateSettings) -> int:
    from subnet.evaluate_episodes import render_episodes, run_episodes

    assert settings.episodes is not None
    print(
        f"evaluate: seed {settings.seed}, {settings.episodes} episodes at {settings.endpoint}",
        file=sys.stderr,
    )
    try:
        model, results = asyncio.run(run_episodes(settings, settings.episodes))
    except EvaluateError as exc:
        print(f"evaluate: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nevaluate: interrupted", file=sys.stderr)
        return 130
    print(render_episodes(model, results, as_json=settings.output_format == "json"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(argv, _known_categories())
    if settings.episodes is not None:
        return _main_episodes(settings)
    used_model: list[str] = []
    finished: list[TaskResult] = []
    started = time.perf_counter()

    def announce(model: str) -> None:
        used_model.append(model)
        print(
            f"evaluate: seed {settings.seed}, {settings.n} tasks, model {model or '(endpoint default)'} "
            f"at {settings.endpoint}",
            file=sys.stderr,
        )

    try:
        task_list = build_tasks(settings)
        model, results, wall_s = asyncio.run(
            run_evaluation(settings, task_list, StderrProgress(), on_start=announce, finished=finished)
        )
    except EvaluateError as exc:
        print(f"evaluate: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # A slow model can take many minutes: Ctrl-C still reports the tasks that finished.
        print(f"\nevaluate: interrupted after {len(finished)}/{settings.n} tasks", file=sys.stderr)
        if not finished:
            return 130
        partial = summarise(
            settings, used_model[0] if used_model else "", finished, time.perf_counter() - started
        )
        print(RENDERERS[settings.output_format](partial))
        return 130
    report = summarise(settings, model, results, wall_s)
    print(RENDERERS[settings.output_format](report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
