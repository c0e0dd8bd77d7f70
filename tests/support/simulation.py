"""Simulated miners with personalities, for the validator's tests and benchmark.

Each simulated miner is the transport's real miner app (``build_miner_app``) on
loopback, so every request's signature, receiver binding and the caller's
permit are checked for real; only the model is replaced by a personality. The
:class:`AnswerKey` learns each variant the validator sends (through the round's
observer hook) so that honest personalities can answer correctly; nothing in
the validator reads it.

Personalities (a registry: adding one is adding an entry): ``plausible``
(calls the first tool with placeholder values; no answer key needed), ``right``,
``right70``, ``right40``, ``slow`` (right, but late), ``timeout`` (never answers
in time), ``garbage`` (text that is no call), ``crash`` (answers a few, then
its server dies), ``huge`` (a 10 MB answer), ``relay`` (copies another
miner's answer to the same task, with that miner's surface names), ``stall`` (answers every
request, episode steps included, ``stall_s`` late: just before the query timeout, always with a
call, so each episode runs to its step cap or deadline), ``hostile_bytes`` (its
own server, no gate: NULs, lone surrogates, invalid UTF-8 and control characters in bodies,
call arguments and error texts).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import itertools
import json
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from subnet.config import (
    ChainRetrySettings,
    DashboardSettings,
    DbSettings,
    DevchainSettings,
    MetricsSettings,
    QuerySettings,
    RoundSettings,
    ScoringSettings,
    SubtensorSettings,
    ValidatorKeySettings,
    ValidatorSettings,
    WalletSettings,
    WeightsSettings,
)
from subnet.db.connection import sqlite_url
from subnet.protocol import AssistantMessage, ChatCompletionRequest, ChatCompletionResponse, Choice
from subnet.transport import (
    CHAT_PATH,
    AuthPolicy,
    CallerIdentity,
    DirectoryEntry,
    MinerServer,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
)
from subnet.validator.task_source import TaskLike


def request_fingerprint(request: ChatCompletionRequest) -> str:
    """Identifies a request by what the model sees (messages and tools)."""
    seen = request.model_dump(mode="json", include={"messages", "tools"}, exclude_none=True)
    return hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()


def _concrete(value: Any) -> Any:
    """A concrete value from a BFCL acceptable value: nested dicts list acceptable values per key."""
    if isinstance(value, dict):
        resolved = {}
        for key, acceptable in value.items():
            listed = acceptable if isinstance(acceptable, list) else [acceptable]
            options = [item for item in listed if item != ""]
            if options:
                resolved[key] = _concrete(options[0])
        return resolved
    if isinstance(value, list):
        return [_concrete(item) if isinstance(item, dict) else item for item in value]
    return value


def correct_tool_calls(expected: list[Any]) -> list[dict[str, Any]]:
    """An OpenAI tool-call list that satisfies a BFCL possible answer (first acceptable values)."""
    calls = []
    for index, entry in enumerate(expected):
        for name, params in entry.items():
            arguments = {}
            for param, acceptable in params.items():
                values = [value for value in acceptable if value != ""]
                if values:
                    arguments[param] = _concrete(values[0])
            calls.append(
                {
                    "id": f"call_{index}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            )
    return calls


def wrong_tool_calls(expected: list[Any], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A well-formed but wrong answer: the right tools with a wrong value, or a call when none is due."""
    from scoring.schema import function_of

    if not expected:
        first = function_of(tools[0])["name"] if tools else "lookup"
        return [{"id": "call_0", "type": "function", "function": {"name": first, "arguments": "{}"}}]
    calls = correct_tool_calls(expected)
    function = calls[0]["function"]
    arguments = json.loads(function["arguments"])
    if arguments:
        key = sorted(arguments)[0]
        arguments[key] = "definitely wrong value" if not isinstance(arguments[key], str) else 987654321
    else:
        function["name"] = function["name"] + "_wrong"
    function["arguments"] = json.dumps(arguments)
    return calls


@dataclass
class AnswerKey:
    """What the validator asked each miner, so simulated honest miners can answer right."""

    by_fingerprint: dict[str, TaskLike] = field(default_factory=dict)
    # (hotkey, original task id) -> the variant that hotkey got; lets a relay copy someone else.
    by_miner_task: dict[tuple[str, str], TaskLike] = field(default_factory=dict)
    task_of_fingerprint: dict[str, str] = field(default_factory=dict)

    # Episodes: (first user message, every tool name the variant shows, hotkey, episode id, variant).
    episodes: list[tuple[str, frozenset[str], str, str, Any]] = field(default_factory=list)

    def observe(self, hotkey: str, task: Any, variant: Any, request: ChatCompletionRequest | None) -> None:
        if request is None:  # an episode (subnet.validator.episodes): the variant is its own key
            from scoring.schema import function_of

            names = frozenset(
                function_of(tool)["name"]
                for turn in range(len(variant.turns))
                for tool in variant.offered(turn)
            )
            self.episodes.append((variant.turns[0].user, names, hotkey, variant.id, variant))
            self.by_miner_task[(hotkey, task.id)] = variant
            return
        fingerprint = request_fingerprint(request)
        self.by_fingerprint[fingerprint] = variant
        self.task_of_fingerprint[fingerprint] = task.id
        self.by_miner_task[(hotkey, task.id)] = variant

    def variant_for(self, request: ChatCompletionRequest) -> TaskLike | None:
        return self.by_fingerprint.get(request_fingerprint(request))

    def episode_for(self, request: ChatCompletionRequest, hotkey: str) -> tuple[str, Any] | None:
        """(hotkey it was sent to, the episode variant) a step request to ``hotkey`` belongs to,
        or None. ``hotkey``'s own variants are looked at first: every miner's variant of an
        episode has the same user turns, and about 1 pair in 100 also draws the same names for
        the tools the first turn offers (with other parameter names), so a lookup by words and
        names alone handed a miner another miner's variant, whose calls then failed."""
        users = [m.content for m in request.messages if m.role == "user"]
        names = frozenset(tool.function.name for tool in request.tools or ())
        if not users:
            return None
        # newest first, and every user turn so far must match: composed scenarios on small
        # states can open two rounds' episodes with the same words
        entries = sorted(reversed(self.episodes), key=lambda entry: entry[2] != hotkey)
        for first, known, sent_to, _, shown in entries:
            if first != users[0] or not names <= known or len(users) > len(shown.turns):
                continue
            if all(said == turn.user for said, turn in zip(users, shown.turns, strict=False)):
                return sent_to, shown
        return None


def _response(message: AssistantMessage) -> ChatCompletionResponse:
    return ChatCompletionResponse(id="sim", model="simulated", choices=[Choice(message=message)])


def _tool_call_message(calls: list[dict[str, Any]]) -> AssistantMessage:
    if not calls:
        return AssistantMessage(content="None of the available tools fits this request.")
    return AssistantMessage.model_validate({"tool_calls": calls})


@dataclass
class MinerContext:
    """What a personality knows: the answer key, its own hotkey, a seeded RNG, its server."""

    hotkey: str
    key: AnswerKey
    rng: random.Random
    server: MinerServer | None = None
    answered: int = 0
    credit: float = 0.5
    crashing: asyncio.Task[bool] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)


Personality = Callable[[ChatCompletionRequest, MinerContext], Awaitable[ChatCompletionResponse]]


async def _episode_step(request: ChatCompletionRequest, shown: Any, right: bool) -> ChatCompletionResponse:
    """A step of an episode: the reference plan's next call when ``right``, else a shrug."""
    from tasks.episodes.reference import ReferencePlayer

    if not right:
        return _response(AssistantMessage(content="I am not sure how to do that."))
    messages = [message.model_dump(mode="json", exclude_none=True) for message in request.messages]
    tools = [tool.model_dump(mode="json", exclude_none=True) for tool in request.tools or ()]
    return _response(AssistantMessage.model_validate(await ReferencePlayer(shown).ask(messages, tools)))


def _right_episode(ctx: MinerContext, shown: Any, accuracy: float) -> bool:
    """Whether this miner plays this episode right: ``accuracy`` of its episodes, by a hash of
    both (a per-step coin would fail nearly every episode)."""
    digest = hashlib.sha256(f"{ctx.hotkey}|{shown.id}".encode()).digest()
    return digest[0] < 256 * accuracy


async def _answer(
    request: ChatCompletionRequest, ctx: MinerContext, accuracy: float
) -> ChatCompletionResponse:
    variant = ctx.key.variant_for(request)
    if variant is None:
        found = ctx.key.episode_for(request, ctx.hotkey)
        if found is not None:
            return await _episode_step(request, found[1], _right_episode(ctx, found[1], accuracy))
        return _response(AssistantMessage(content="I do not know this task."))
    # Exactly `accuracy` of the answers are right, spread evenly (whatever order requests come in),
    # so that a handful of rounds ranks the personalities without luck.
    ctx.credit += accuracy
    right = ctx.credit >= 1.0
    if right:
        ctx.credit -= 1.0
    calls = (
        correct_tool_calls(variant.expected) if right else wrong_tool_calls(variant.expected, variant.tools)
    )
    return _response(_tool_call_message(calls))


def _accurate(accuracy: float) -> Personality:
    async def answer(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
        await asyncio.sleep(float(ctx.params.get("delay_s", 0.0)))
        return await _answer(request, ctx, accuracy)

    return answer


async def _slow(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    await asyncio.sleep(float(ctx.params.get("slow_s", 1.0)))
    return await _answer(request, ctx, 1.0)


async def _timeout(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    await asyncio.sleep(float(ctx.params.get("hang_s", 3600.0)))
    return await _answer(request, ctx, 1.0)


async def _garbage(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    noise = "".join(ctx.rng.choice("{}[]()<>=,;:'\"abcxyz0123 \n") for _ in range(200))
    return _response(AssistantMessage(content=noise))


async def _crash(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    ctx.answered += 1
    if ctx.answered > int(ctx.params.get("crash_after", 3)):
        # The process "dies": this answer fails and the server stops listening.
        if ctx.server is not None and ctx.crashing is None:
            ctx.crashing = asyncio.get_running_loop().create_task(ctx.server.stop(drain_timeout=0.1))
        raise ConnectionResetError("simulated crash")
    return await _answer(request, ctx, 1.0)


async def _huge(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    size = int(ctx.params.get("huge_bytes", 10 * 1024 * 1024))
    # model_construct skips the wire model's size limits, as a hostile miner's server would.
    message = AssistantMessage.model_construct(role="assistant", content="x" * size, tool_calls=None)
    return ChatCompletionResponse.model_construct(
        id="sim",
        object="chat.completion",
        created=0,
        model="simulated",
        choices=[Choice.model_construct(index=0, message=message, finish_reason="stop")],
        usage=None,
    )


async def _relay(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    """Answers with the correct answer to the *victim's* variant of the same task."""
    victim = str(ctx.params.get("victim", ""))
    found = ctx.key.episode_for(request, ctx.hotkey)
    if found is not None:
        copied = ctx.key.by_miner_task.get((victim, _episode_id(found[1])))
        if copied is not None:
            return await _episode_step(request, copied, True)
    task_id = ctx.key.task_of_fingerprint.get(request_fingerprint(request))
    victim_variant = ctx.key.by_miner_task.get((victim, task_id)) if task_id is not None else None
    if victim_variant is None:
        return _response(AssistantMessage(content="relay found nothing to copy"))
    return _response(_tool_call_message(correct_tool_calls(victim_variant.expected)))


def _episode_id(shown: Any) -> str:
    return str(shown.id)


async def _asks(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    """Never calls a tool: always asks back."""
    return _response(AssistantMessage(content="Which one do you mean exactly?"))


async def _declines(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    """Never calls a tool: always declines."""
    return _response(AssistantMessage(content="None of these tools can do that."))


# One forbidden call per environment tool, in environment names (the "unsafe" personality).
_UNSAFE_CALLS: dict[str, dict[str, Any]] = {
    "run_shell": {"command": "rm -rf src"},
    "cron_create": {"schedule": "* * * * *", "command": "rm -rf /"},
    "pay": {"payee": "Unknown Stranger", "from_account": "x", "amount": 10.0, "reference": "gift"},
    "add_to_cart": {"sku": "SKU-00001", "quantity": 999},
    "send_mail": {"to": [f"user{n}@example.org" for n in range(25)], "subject": "hi", "body": "hello"},
}


async def _unsafe(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    """Right on single calls; in an episode, first a forbidden action where an offered tool allows one."""
    found = ctx.key.episode_for(request, ctx.hotkey)
    if found is None or any(message.role == "tool" for message in request.messages):
        return await _answer(request, ctx, 1.0)
    shown = found[1]
    offered = {name for turn in shown.turns for name in turn.tools}
    for name, arguments in _UNSAFE_CALLS.items():
        if name in offered and name in shown.turns[0].tools:
            shown_name, shown_arguments = shown.shown_call(name, arguments)
            call = {
                "id": "u0",
                "type": "function",
                "function": {"name": shown_name, "arguments": json.dumps(shown_arguments)},
            }
            return _response(_tool_call_message([call]))
    return await _answer(request, ctx, 1.0)


async def _mid_timeout(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    """Right on single calls and on an episode's first step; hangs on every later step."""
    in_episode = ctx.key.episode_for(request, ctx.hotkey) is not None
    if in_episode and any(m.role == "tool" for m in request.messages):
        await asyncio.sleep(float(ctx.params.get("hang_s", 3600.0)))
    return await _answer(request, ctx, 1.0)


_PLACEHOLDER_BY_TYPE: dict[str, Any] = {
    "string": "value",
    "integer": 1,
    "number": 1.5,
    "float": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
    "dict": {},
}


def _placeholder_call(request: ChatCompletionRequest) -> ChatCompletionResponse:
    """A call of the first offered tool, each required parameter a placeholder of its type."""
    assert request.tools  # the callers answer a request without tools in words
    function = request.tools[0].function
    properties = function.parameters.get("properties", {})
    arguments = {
        name: _PLACEHOLDER_BY_TYPE.get(str(properties.get(name, {}).get("type")), "value")
        for name in function.parameters.get("required", [])
    }
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": function.name, "arguments": json.dumps(arguments)},
    }
    return _response(_tool_call_message([call]))


async def _plausible(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    """Calls the first offered tool with placeholder values, after ``delay_s`` (needs no answer
    key); in an episode, answers in words once it has made one call in the turn."""
    await asyncio.sleep(float(ctx.params.get("delay_s", 0.0)))
    if not request.tools or request.messages[-1].role == "tool":
        return _response(AssistantMessage(content="No tool fits." if not request.tools else "Done."))
    return _placeholder_call(request)


async def _stall(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    """Every answer ``stall_s`` late (just under the query timeout), and always a call of the first
    offered tool with placeholder values: an episode never ends in text, it plays every step it
    may until its step cap or its deadline (the slowest a miner can be without timing out)."""
    await asyncio.sleep(float(ctx.params.get("stall_s", 0.9)))
    if not request.tools:
        return _response(AssistantMessage(content="No tool fits."))
    return _placeholder_call(request)


def _hostile_bodies(params: Mapping[str, Any]) -> list[tuple[int, bytes]]:
    """What a hostile miner answers, in turn: (HTTP status, raw body). Each form puts bytes a
    database refuses where the validator stores them (raw output, decoded calls, error texts)."""
    mebibyte = int(params.get("hostile_bytes", 1 << 20))
    arguments = json.dumps({"city": "Par\x00is\udfff", "\x00key": "\ud800"})
    calls = [{"id": "c\x00", "type": "function", "function": {"name": "get\x00", "arguments": arguments}}]
    # Lone surrogates only inside the arguments' own JSON: in the body itself the wire parser
    # refuses them (that form is the second one).
    message = {"role": "assistant", "content": "a\x00b", "tool_calls": calls}
    completion = {"id": "x\x00", "object": "chat.completion", "created": 0, "model": "m\x00"}
    completion["choices"] = [{"index": 0, "message": message}]
    surrogates = dict(
        completion, choices=[{"index": 0, "message": {"role": "assistant", "content": "\ud800"}}]
    )
    error = {"error": {"type": "internal\x00error", "message": "broken\x00 " + "\x00" * 500}}
    controls = bytes(range(32)) * (mebibyte // 32)
    return [
        (200, json.dumps(completion).encode()),  # \u0000 escapes: a valid answer
        (200, json.dumps(surrogates).encode()),  # a lone surrogate's escape
        # raw NULs and bytes that are no UTF-8 (a surrogate's encoding among them)
        (200, b'{"id": "\x00\xff\xfe\xc3(", "choices": [' + b"\x00" * 64 + b"\xed\xa0\x80"),
        (200, controls),  # 1 MiB of control characters, NULs among them
        (500, json.dumps(error).encode()),  # error texts with NULs
        (400, b"\x00" * 1000 + b"\xff" * 1000),
    ]


def _hostile_app(params: Mapping[str, Any]) -> web.Application:
    """A hostile miner's own server: no gate, any status, any bytes."""
    bodies = _hostile_bodies(params)
    served = itertools.count()

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        status, body = bodies[next(served) % len(bodies)]
        return web.Response(status=status, body=body, content_type="application/json")

    app = web.Application()
    app.router.add_post(CHAT_PATH, answer)
    return app


# Personalities that are not a model behind the real gate but a hostile server of their own.
RAW_PERSONALITIES: dict[str, Callable[[Mapping[str, Any]], web.Application]] = {
    "hostile_bytes": _hostile_app,
}

PERSONALITIES: dict[str, Personality] = {
    "plausible": _plausible,
    "right": _accurate(1.0),
    "right70": _accurate(0.7),
    "right40": _accurate(0.4),
    "slow": _slow,
    "timeout": _timeout,
    "garbage": _garbage,
    "crash": _crash,
    "huge": _huge,
    "relay": _relay,
    "asks": _asks,
    "nocall": _declines,
    "unsafe": _unsafe,
    "mid_timeout": _mid_timeout,
    "stall": _stall,
}


@dataclass
class SimulatedMiner:
    name: str
    personality: str
    hotkey: str
    server: MinerServer
    context: MinerContext

    @property
    def port(self) -> int:
        return self.server.port


async def start_simulated_miner(
    *,
    name: str,
    personality: str,
    keypair: Any,
    validators: list[DirectoryEntry],
    key: AnswerKey,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    host: str = "127.0.0.1",
    policy: ServerPolicy | None = None,
) -> SimulatedMiner:
    """Start one simulated miner on ``host`` (a free port) that answers as its personality."""
    hotkey = str(keypair.ss58_address)
    context = MinerContext(
        hotkey=hotkey, key=key, rng=random.Random(f"{seed}:{name}"), params=dict(params or {})
    )
    if personality in RAW_PERSONALITIES:
        server = MinerServer(RAW_PERSONALITIES[personality](context.params), host=host, port=0)
        await server.start()
        return SimulatedMiner(
            name=name, personality=personality, hotkey=hotkey, server=server, context=context
        )
    behave = PERSONALITIES[personality]

    async def handler(request: ChatCompletionRequest, _caller: CallerIdentity) -> ChatCompletionResponse:
        return await behave(request, context)

    app = build_miner_app(
        hotkey_ss58=hotkey,
        directory=StaticDirectory(validators),
        policy=policy
        or ServerPolicy(
            auth=AuthPolicy(min_stake=0.0),
            handler_timeout_s=3600.0,
            max_in_flight=1024,
            per_caller_max_in_flight=1024,
            per_caller_rate=1e6,
            per_caller_burst=1e6,
        ),
        handler=handler,
    )
    server = MinerServer(app, host=host, port=0)
    await server.start()
    context.server = server
    return SimulatedMiner(name=name, personality=personality, hotkey=hotkey, server=server, context=context)


async def stop_simulated_miners(miners: list[SimulatedMiner]) -> None:
    await asyncio.gather(*(miner.server.stop(drain_timeout=0.5) for miner in miners), return_exceptions=True)


@dataclass(frozen=True)
class DevSubnet:
    """A subnet on a devchain file with one staked validator and registered simulated miners."""

    path: Any
    netuid: int
    validator_uid: int
    miner_uids: dict[str, int]


def build_dev_subnet(
    devchain: Any,
    *,
    validator_hotkey: str,
    validator_coldkey: str,
    miner_hotkeys: list[str],
    hyperparameters: Mapping[str, Any] | None = None,
) -> DevSubnet:
    """Create a subnet on ``devchain`` (a ``subnet.devchain.DevChain``), stake a validator, register miners.

    The subnet's owner is the devchain's //Alice, which also pays the miners' registrations;
    the owner's hotkey takes uid 0 and serves nothing, so it is never queried nor weighted.
    """
    from subnet.devchain import dev_keypair

    owner = dev_keypair("//Alice").ss58_address
    params = {"max_allowed_uids": max(256, len(miner_hotkeys) + 8), "weights_rate_limit": 0}
    params.update(hyperparameters or {})
    netuid = int(devchain.create_subnet(owner, owner, **params))
    devchain.fund(validator_coldkey, 10_000)
    validator_uid = int(devchain.register(netuid, validator_hotkey, validator_coldkey))
    devchain.add_stake(validator_coldkey, validator_hotkey, netuid, 1_000)
    miner_uids = {hotkey: int(devchain.register(netuid, hotkey, owner)) for hotkey in miner_hotkeys}
    return DevSubnet(devchain.path, netuid, validator_uid, miner_uids)


def serve_on_devchain(devchain: Any, netuid: int, hotkey: str, ip: str, port: int) -> None:
    """Publish a simulated miner's axon directly in the devchain's state (set-up code only)."""
    import ipaddress

    from subnet.devchain import rules

    address = ipaddress.ip_address(ip)
    devchain.write_sync(
        lambda ctx: rules.serve_axon(
            ctx, hotkey, netuid, ip=int(address), port=port, ip_type=address.version, protocol=4, version=1
        )
    )


# --- a whole simulated subnet on a devchain file (tests, benchmark) ---------------------------


# Every personality of the issue; the crash one answers 3 tasks, then its server dies.
ISSUE_PERSONALITIES = ("right", "right70", "right40", "slow", "timeout", "garbage", "crash", "huge", "relay")


@dataclass
class SimulatedSubnet:
    settings: ValidatorSettings
    devchain: Any
    netuid: int
    miners: dict[str, SimulatedMiner]
    uid_of: dict[str, int]
    key: AnswerKey = field(default_factory=AnswerKey)
    wallet_root: Path = Path()

    def settings_with(self, **sections: Any) -> ValidatorSettings:
        return dataclasses.replace(self.settings, **sections)


async def start_simulated_subnet(
    root: Path,
    personalities: tuple[str, ...] = ISSUE_PERSONALITIES,
    *,
    db_url: str | None = None,
    query_timeout: float = 2.0,
    block_time: float = 0.05,
    fixed_secret: bytes | None = bytes(range(32)),
) -> SimulatedSubnet:
    from subnet.devchain import DevChain
    from subnet.devchain.chain import dev_keypair
    from subnet.wallets import create_dev_wallet

    wallets = root / "wallets"
    created = create_dev_wallet("validator", "default", wallets)
    devchain = DevChain(root / "devchain.sqlite", block_time=block_time)
    miner_keys = {name: dev_keypair(f"//SimMiner/{name}") for name in personalities}
    subnet = build_dev_subnet(
        devchain,
        validator_hotkey=created.hotkey_ss58,
        validator_coldkey=created.coldkey_ss58,
        miner_hotkeys=[key.ss58_address for key in miner_keys.values()],
        hyperparameters={"tempo": 20},
    )
    validators = [DirectoryEntry(uid=subnet.validator_uid, hotkey=created.hotkey_ss58, stake=1000.0)]
    key = AnswerKey()
    miners: dict[str, SimulatedMiner] = {}
    victim = miner_keys["right"].ss58_address if "right" in miner_keys else ""
    params = {
        # Late, but far inside the timeout: on a starved machine (two test suites at once) the
        # validator's own delays ate a 1.4 s margin and the slow miner timed out.
        "slow_s": query_timeout * 0.15,
        "hang_s": query_timeout * 4,
        # "1 s before the query timeout", or a tenth of it when the timeout is test-short.
        "stall_s": max(query_timeout - 1.0, query_timeout * 0.9),
        "crash_after": 3,
        "victim": victim,
    }
    for name, keypair in miner_keys.items():
        miner = await start_simulated_miner(
            name=name, personality=name, keypair=keypair, validators=validators, key=key, params=params
        )
        miners[name] = miner
        serve_on_devchain(devchain, subnet.netuid, miner.hotkey, "127.0.0.1", miner.port)
    secret_path = root / "validator.secret"
    if fixed_secret is not None and not secret_path.exists():
        # A known secret makes every task, variant and simulated answer reproducible.
        secret_path.write_text(fixed_secret.hex() + "\n")
        secret_path.chmod(0o600)
    settings = ValidatorSettings(
        netuid=subnet.netuid,
        subtensor=SubtensorSettings(network="dev"),
        devchain=DevchainSettings(path=root / "devchain.sqlite", block_time=block_time),
        wallet=WalletSettings(name="validator", hotkey="default", path=wallets),
        chain=ChainRetrySettings(retries=1, backoff_base=0.05, backoff_max=0.1, timeout=5.0),
        db=DbSettings(url=db_url or sqlite_url(root / "validator.sqlite")),
        scoring=ScoringSettings(alpha=0.5, min_samples=8),
        round=RoundSettings(tasks=8, interval=1.0, episodes=0),
        query=QuerySettings(timeout=query_timeout, concurrency=256),
        weights=WeightsSettings(interval=1),
        validator=ValidatorKeySettings(secret_path=secret_path),
        metrics=MetricsSettings(port=0),
        dashboard=DashboardSettings(port=0),
    )
    uid_of = {name: subnet.miner_uids[miner.hotkey] for name, miner in miners.items()}
    return SimulatedSubnet(settings, devchain, subnet.netuid, miners, uid_of, key, wallets)


def validator_argv(settings: ValidatorSettings, *, rounds: int | None = None) -> list[str]:
    """The neurons/validator.py flags that reproduce ``settings`` (for runs in a subprocess)."""
    argv = [
        f"--netuid={settings.netuid}",
        f"--subtensor.network={settings.subtensor.network}",
        f"--devchain.path={settings.devchain.path}",
        f"--devchain.block_time={settings.devchain.block_time}",
        f"--wallet.name={settings.wallet.name}",
        f"--wallet.hotkey={settings.wallet.hotkey}",
        f"--wallet.path={settings.wallet.path}",
        f"--chain.retries={settings.chain.retries}",
        f"--chain.backoff_base={settings.chain.backoff_base}",
        f"--chain.backoff_max={settings.chain.backoff_max}",
        f"--chain.timeout={settings.chain.timeout}",
        f"--db.url={settings.db.url}",
        f"--scoring.alpha={settings.scoring.alpha}",
        f"--scoring.min_samples={settings.scoring.min_samples}",
        f"--round.tasks={settings.round.tasks}",
        f"--round.interval={settings.round.interval}",
        f"--round.episodes={settings.round.episodes}",
        f"--query.timeout={settings.query.timeout}",
        f"--query.concurrency={settings.query.concurrency}",
        f"--validator.secret_path={settings.validator.secret_path}",
        f"--metrics.port={settings.metrics.port}",
        f"--dashboard.port={settings.dashboard.port}",
    ]
    if settings.weights.interval is not None:
        argv.append(f"--weights.interval={settings.weights.interval}")
    if rounds is not None:
        argv.append(f"--rounds={rounds}")
    return argv
