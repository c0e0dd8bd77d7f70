"""One validator round: seed, tasks, per-miner variants, concurrent queries, scoring, storage.

The round's life in the database (see subnet.validator.store): ``running``
while miners are queried and scored responses are written in batches;
``collected`` once every response is stored; ``scored`` when the moving
averages have been updated, in the same transaction. Timeouts and transport
failures are stored too, with score 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from subnet.chain.types import Neuron
from subnet.protocol import ChatCompletionRequest
from subnet.transport import MinerTarget, QueryResult, QueryStatus, QueryTarget
from subnet.validator.budget import RoundBudget
from subnet.validator.episodes import EpisodeLimits, EpisodePlayer
from subnet.validator.judge import Judge, Judgement
from subnet.validator.request import build_request
from subnet.validator.rows import Outcome, ResponseRow
from subnet.validator.sandbox import Sandbox
from subnet.validator.secret import seed_commitment
from subnet.validator.state import EPISODE_CATEGORIES, summarise_round
from subnet.validator.store import NewTask, Store
from subnet.validator.task_source import TaskLike, TaskSource
from subnet.validator.writer import ResponseWriter, StageClock
from tasks.episodes import Episode
from tasks.episodes import variant as episode_variant

if TYPE_CHECKING:
    from subnet.phrasing.session import RoundPhraser
    from tasks.phrasing import PhrasingStats

log = logging.getLogger(__name__)

UNSPECIFIED_IP = {"", "0.0.0.0", "::", "0"}
# How many failure causes the round's log line names (the most frequent first).
TOP_FAILURE_CAUSES = 3
_ERROR_KIND = re.compile(r"^[A-Za-z_][\w.]*$")


def failure_cause(category: str, status: str, http_status: int | None, error: str | None) -> str | None:
    """Why an answer failed, in a few words an operator can count: the HTTP status and the
    miner's own error type (``504 handler_timeout``), the transport's name for a query with no
    answer (``refused ClientConnectorError``, ``timeout``), ``episode timeout``; None for ``ok``."""
    if status == QueryStatus.OK.value:
        return None
    kind = (error or "").split(":", 1)[0].strip()
    kind = kind if _ERROR_KIND.match(kind) and kind != "deadline" else ""
    if status == QueryStatus.HTTP_ERROR.value:
        cause = " ".join(part for part in (str(http_status or ""), kind) if part)
    elif status == QueryStatus.REFUSED.value and kind:
        cause = f"{status} {kind}"
    else:
        cause = status
    return f"episode {cause}" if category in EPISODE_CATEGORIES else cause


def describe_failures(causes: Counter[str], top: int = TOP_FAILURE_CAUSES) -> str:
    """``504 handler_timeout x12, episode timeout x2`` (the most frequent first, then the rest counted)."""
    ranked = sorted(causes.items(), key=lambda item: (-item[1], item[0]))
    shown = [f"{cause} x{count}" for cause, count in ranked[:top]]
    rest = sum(count for _, count in ranked[top:])
    return ", ".join(shown + ([f"{rest} other"] if rest else []))


class Querier(Protocol):
    """Sends one request to one miner (subnet.transport.MinerClient is the real one).

    ``parse_after``: the round sets it once every request has gone out; a querier may hold
    the parsing of answers that came in before then (their latency already taken).
    """

    async def query(
        self,
        target: QueryTarget,
        request: ChatCompletionRequest,
        *,
        parse_after: asyncio.Event | None = None,
    ) -> QueryResult: ...


@dataclass(frozen=True)
class ChainView:
    """The metagraph a round runs against; kept from the last successful sync when the chain is away."""

    block: int
    block_hash: str
    neurons: tuple[Neuron, ...]
    own_hotkey: str
    fetched_at: float = field(default_factory=time.time)

    def uid_of_hotkey(self) -> dict[str, int]:
        return {neuron.hotkey: neuron.uid for neuron in self.neurons}

    def validator_hotkeys(self) -> frozenset[str]:
        return frozenset(n.hotkey for n in self.neurons if n.validator_permit) | {self.own_hotkey}


def is_public_address(ip: str) -> bool:
    """Whether `ip` is an address on the internet: not loopback, private, link-local, reserved,
    multicast or unspecified (an IPv4-mapped IPv6 address is judged as its IPv4 address)."""
    try:
        address = ipaddress.ip_address(ip.strip().split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def queryable_miners(view: ChainView, *, public_only: bool = False) -> list[Neuron]:
    """Miners with a serving axon; validators (permit holders) and this validator are left out.

    With `public_only` (finney and test, unless --query.allow_private_axons), an axon on a
    loopback, private or link-local address is left out too: a miner must not make the
    validator send requests into the validator's own machine or network.
    """
    miners = []
    for neuron in view.neurons:
        if neuron.hotkey == view.own_hotkey or neuron.validator_permit:
            continue
        serving = bool(getattr(neuron, "is_serving", True))
        if not serving or neuron.axon_port <= 0 or str(neuron.axon_ip) in UNSPECIFIED_IP:
            continue
        if public_only and not is_public_address(str(neuron.axon_ip)):
            continue
        miners.append(neuron)
    return sorted(miners, key=lambda neuron: neuron.uid)


class PhrasingFailed(RuntimeError):
    """No task of a round could be phrased (the engine is down or writes nothing usable)."""


@dataclass(frozen=True)
class RoundParams:
    netuid: int
    n_tasks: int
    alpha: float
    # Raw miner output kept per response; a 10 MB answer is stored as its first 16 KiB.
    raw_output_cap: int = 16 * 1024
    write_batch: int = 512
    max_tokens: int | None = 512
    # Query only axons on public addresses (see queryable_miners).
    public_axons_only: bool = False
    # Multi-turn episodes per miner (subnet.validator.episodes).
    n_episodes: int = 0
    # The episodes' deadline, the query timeout and what one miner's work may take in all.
    budget: RoundBudget = field(default_factory=RoundBudget)


# Variant requests and stored tasks carry what a miner may see; observers (simulations,
# audits) get every (hotkey, task, variant, request) the round sends.
VariantObserver = Callable[[str, TaskLike, TaskLike, ChatCompletionRequest | None], None]


@dataclass
class RoundReport:
    """What one round did, for its caller (the validator's metrics, the benchmarks): its size and
    timings. What each miner got is in the database: the round's ``responses`` rows (their status
    and score) and the standings folded from them; the round's log line counts the statuses."""

    number: int
    round_id: int
    block: int
    n_miners: int
    n_responses: int
    wall_s: float
    query_wall_s: float
    slowest_response_s: float
    # From the last miner answer arriving to the round being scored: the tail the validator adds.
    after_last_answer_s: float
    cpu_s: float
    clock: StageClock
    # From the round's start until the last request had been handed to the transport, in
    # seconds of wall time and of process CPU (the validator's share of the round's critical path).
    all_sent_s: float = 0.0
    all_sent_cpu_s: float = 0.0
    # What the phrasing step did for this round's tasks (None: no phrasing step configured).
    phrasing: PhrasingStats | None = None
    # The longest time one miner spent playing its episodes, one after the other.
    slowest_episodes_s: float = 0.0
    # Why answers failed (failure_cause) -> how many.
    failures: Counter[str] = field(default_factory=Counter)


_FAILED_QUERY = Judgement(valid=False, error_type=None, score=0.0)


@dataclass
class _MinerBudget:
    """One miner's time budget in a round: when it ends (the loop's clock), and whether it did."""

    seconds: float
    ends_at: float
    ran_out: bool = False

    @property
    def reason(self) -> str:
        return f"the miner's time budget for the round ({round(self.seconds, 1):g} s) ran out"

    def cut(self, uid: int) -> None:
        if not self.ran_out:  # one line per miner and round
            self.ran_out = True
            log.warning("miner uid %s: %s; what it had not answered is its timeout", uid, self.reason)


@contextlib.contextmanager
def long_lived_objects_frozen() -> Iterator[None]:
    """Keep the cyclic garbage collector off the objects that existed before the round.

    A running validator tracks some 200,000 long-lived objects (modules, ORM mappers, the
    SDK); every full collection a round triggered walked them all, which was a third of
    the round's CPU (0.7 s of 2.7 s for 2,048 responses). Frozen, collections during the
    round only walk what the round allocates. The collector stays on: a round lasts minutes
    while the dashboard and the metrics share its loop, and their garbage must not pile up
    until it ends. Unfreezing afterwards returns the frozen objects to the oldest generation,
    so garbage among them is still collected later, outside the round.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class RoundRunner:
    def __init__(
        self,
        *,
        store: Store,
        querier: Querier,
        task_source: TaskSource,
        judge: Judge,
        secret: bytes,
        params: RoundParams,
        observer: VariantObserver | None = None,
        on_response: Callable[[str], None] | None = None,
        phraser: RoundPhraser | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.store = store
        self.querier = querier
        self.task_source = task_source
        self.judge = judge
        self.secret = secret
        self.params = params
        self.observer = observer
        self.on_response = on_response
        self.phraser = phraser
        # Where episodes' tool calls run (subnet.validator.sandbox); None: in this process (tests).
        self.sandbox = sandbox
        self.scoring_errors = 0
        self.last_answer_at = 0.0
        self.failures: Counter[str] = Counter()

    async def run(self, view: ChainView) -> RoundReport:
        with long_lived_objects_frozen():
            return await self._run(view)

    async def _run(self, view: ChainView) -> RoundReport:
        started_wall = time.perf_counter()
        started_cpu = time.process_time()
        clock = StageClock()
        params = self.params
        self.scoring_errors = 0
        self.last_answer_at = 0.0
        number = await self.store.next_round_number()
        block, block_hash = view.block, view.block_hash
        prepared = await self.phraser.take(number) if self.phraser is not None else None
        phrasing: PhrasingStats | None = None
        if prepared is not None:
            ahead, ready = prepared
            block, block_hash, seed = ahead.block, ahead.block_hash, ahead.seed
            tasks: list[TaskLike] = list(ready.tasks)
            episodes: list[Episode] = list(ready.episodes)
            phrasing = ready.stats
        else:
            seed = self.task_source.round_seed(self.secret, params.netuid, block_hash, number)
            mark = time.perf_counter()
            tasks = list(self.task_source.generate(seed, params.n_tasks))
            episodes = self._episodes(seed)
            clock.add("generate", mark)
            if self.phraser is not None:
                ready = await self.phraser.phrase_round(tasks, episodes, seed)
                tasks, episodes, phrasing = list(ready.tasks), list(ready.episodes), ready.stats
        if self.phraser is not None:
            self._prepare_next(number + 1, view)
        round_id, task_ids = await self.store.create_round(
            number=number,
            netuid=params.netuid,
            block=block,
            block_hash=block_hash,
            seed_commitment=seed_commitment(seed),
            phrasing=phrasing.to_dict() if phrasing is not None else None,
            generator_version=tasks[0].generator_version if tasks else "",
            tasks=[
                NewTask(
                    task_key=task.id,
                    category=task.category,
                    scoring_category=task.scoring_category,
                    source=task.source,
                    payload=task.to_dict(),
                    expected=list(task.expected),
                )
                for task in tasks
            ]
            + [
                NewTask(
                    task_key=episode.id,
                    category=episode.category,
                    scoring_category=episode.category,
                    source=episode.source,
                    payload=episode.to_dict(),
                    expected=[],
                )
                for episode in episodes
            ],
        )
        if phrasing is not None and not tasks:
            # Recorded (for the dashboard and the audit), never scored: no miner saw anything.
            note = f"no request could be phrased: {phrasing.summary()}"
            await self.store.discard_round(round_id, note[:500])
            log.warning("round %d discarded: %s", number, note)
            raise PhrasingFailed(note)
        try:
            report = await self._query_and_score(
                view, number, round_id, seed, tasks, episodes, task_ids, clock, started_wall, started_cpu
            )
            report.phrasing = phrasing
            return report
        except BaseException as exc:
            # Settle it now rather than at the next start: its responses never count.
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    self.store.discard_round(round_id, f"failed: {type(exc).__name__}: {exc}"[:500])
                )
            log.warning(
                "round %d discarded: %s",
                number,
                f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
            )
            raise

    def _episodes(self, seed: bytes) -> list[Episode]:
        """The round's episodes (none when the task source has none, or --round.episodes is 0)."""
        if self.params.n_episodes <= 0:
            return []
        return list(self.task_source.episodes(seed, self.params.n_episodes))

    def _prepare_next(self, number: int, view: ChainView) -> None:
        """Phrase round ``number``'s tasks while this round runs (model engines only)."""
        assert self.phraser is not None
        seed = self.task_source.round_seed(self.secret, self.params.netuid, view.block_hash, number)
        n_tasks = self.params.n_tasks
        self.phraser.prefetch(
            number,
            view.block,
            view.block_hash,
            seed,
            lambda: (self.task_source.generate(seed, n_tasks), self._episodes(seed)),
        )

    async def close(self) -> None:
        """Stop phrasing ahead and close the phrasing engine."""
        if self.phraser is not None:
            await self.phraser.close()

    async def _query_and_score(
        self,
        view: ChainView,
        number: int,
        round_id: int,
        seed: bytes,
        tasks: list[TaskLike],
        episodes: list[Episode],
        task_ids: dict[str, int],
        clock: StageClock,
        started_wall: float,
        started_cpu: float,
    ) -> RoundReport:
        params = self.params
        miners = queryable_miners(view, public_only=params.public_axons_only)
        log.info(
            "round %d (block %d): %d tasks, %d episodes, %d miners",
            number,
            view.block,
            len(tasks),
            len(episodes),
            len(miners),
        )
        writer = ResponseWriter(self.store, params.write_batch, clock)
        writer.start()
        self.failures = Counter()
        # Every episode row a miner has handed in, by hotkey and task id: what its budget keeps.
        recorded: dict[str, dict[int, tuple[str, float]]] = {}
        player = EpisodePlayer(
            self.querier,
            EpisodeLimits(params.budget.episode_deadline_s, params.max_tokens),
            self._add_episode_row(writer, recorded),
            self.on_response,
            self.observer,
            self.sandbox,
        )
        # One miner's work in this round (its tasks, its episodes one after the other) ends by
        # this many seconds after its first request: past it, what it has not answered is its
        # timeout, and the round goes on for everyone else (subnet.validator.budget).
        miner_budget_s = params.budget.miner_s(episodes, n_tasks=len(tasks))
        loop = asyncio.get_running_loop()
        playing: list[asyncio.Task[list[tuple[str, float]]]] = []
        statuses: Counter[str] = Counter()
        latencies: list[float] = []
        query_started = time.perf_counter()
        in_flight: list[asyncio.Task[tuple[str, float]]] = []
        # Every request goes out before any answer is scored: scoring is CPU on the same loop,
        # and each answer scored while requests are still being built delays the miners that
        # have not been asked yet (the round lasts until the last-asked miner answers).
        all_sent = asyncio.Event()
        try:
            for miner in miners:
                mark = time.perf_counter()
                miner_seed = self.task_source.miner_seed(seed, miner.hotkey)
                variants = [(task, self.task_source.variant(task, miner_seed)) for task in tasks]
                clock.add("variant", mark)
                target = MinerTarget(
                    hotkey=miner.hotkey, ip=str(miner.axon_ip), port=int(miner.axon_port), uid=miner.uid
                )
                budget = _MinerBudget(miner_budget_s, loop.time() + miner_budget_s)
                for task, variant in variants:
                    request = build_request(variant.messages, variant.tools, params.max_tokens)
                    if self.observer is not None:
                        self.observer(miner.hotkey, task, variant, request)
                    in_flight.append(
                        asyncio.create_task(
                            self._query_one(
                                round_id,
                                task_ids[task.id],
                                miner,
                                target,
                                variant,
                                request,
                                writer,
                                clock,
                                all_sent,
                                budget,
                            )
                        )
                    )
                if episodes:
                    shown = [(episode, episode_variant(episode, miner_seed)) for episode in episodes]
                    playing.append(
                        asyncio.create_task(
                            self._play_within(
                                player, round_id, task_ids, miner, target, shown, writer, recorded, budget
                            )
                        )
                    )
                # Let this miner's requests go out while the next miner's variants are built.
                await asyncio.sleep(0)
            await asyncio.sleep(0)  # the last miner's requests start
            all_sent.set()
            all_sent_s = time.perf_counter() - started_wall
            all_sent_cpu_s = time.process_time() - started_cpu
            results = await asyncio.gather(*in_flight)
            slowest_serial = 0.0
            for outcomes in await asyncio.gather(*playing):
                results.extend(outcomes)
                slowest_serial = max(slowest_serial, sum(latency for _, latency in outcomes))
            for status, latency in results:
                statuses[status] += 1
                latencies.append(latency)
            query_wall = time.perf_counter() - query_started
            last_answer_at = self.last_answer_at or time.perf_counter()
            await writer.close()
        except BaseException:
            for query in [*in_flight, *playing]:
                query.cancel()
            await asyncio.gather(*in_flight, *playing, return_exceptions=True)
            await writer.abort()
            raise
        await self.store.mark_collected(round_id, n_miners=len(miners))
        await self.store.apply_round(round_id, params.alpha, known=summarise_round(writer.scored))
        report = RoundReport(
            number=number,
            round_id=round_id,
            block=view.block,
            n_miners=len(miners),
            n_responses=sum(statuses.values()),
            wall_s=time.perf_counter() - started_wall,
            query_wall_s=query_wall,
            slowest_response_s=max(latencies, default=0.0),
            slowest_episodes_s=slowest_serial,
            failures=self.failures,
            after_last_answer_s=time.perf_counter() - last_answer_at,
            cpu_s=time.process_time() - started_cpu,
            clock=clock,
            all_sent_s=all_sent_s,
            all_sent_cpu_s=all_sent_cpu_s,
        )
        failed = f"; failed: {describe_failures(self.failures)}" if self.failures else ""
        log.info(
            "round %d scored: %d responses (%s) in %.2f s%s",
            number,
            report.n_responses,
            ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
            report.wall_s,
            failed,
        )
        if self.scoring_errors > 1:
            log.warning("round %d: scoring failed on %d responses (scored 0)", number, self.scoring_errors)
        return report

    async def _query_one(
        self,
        round_id: int,
        task_id: int,
        miner: Neuron,
        target: MinerTarget,
        variant: TaskLike,
        request: ChatCompletionRequest,
        writer: ResponseWriter,
        clock: StageClock,
        all_sent: asyncio.Event,
        budget: _MinerBudget,
    ) -> tuple[str, float]:
        started = time.perf_counter()
        try:
            async with asyncio.timeout_at(budget.ends_at):
                result = await self.querier.query(target, request, parse_after=all_sent)
        except TimeoutError:
            budget.cut(miner.uid)
            result = QueryResult(
                status=QueryStatus.TIMEOUT, latency_s=time.perf_counter() - started, error=budget.reason
            )
        self.last_answer_at = time.perf_counter()
        if not all_sent.is_set():
            await all_sent.wait()
        mark = time.perf_counter()
        judgement = self._judge(result, variant)
        clock.add("score", mark)
        status = result.status.value if isinstance(result.status, QueryStatus) else str(result.status)
        raw = result.raw_text or ""
        cap = self.params.raw_output_cap
        self._store(
            writer,
            ResponseRow(
                round_id,
                task_id,
                miner.hotkey,
                miner.uid,
                Outcome(
                    # The task's own category (missing_param is scored as irrelevance, but tallied as
                    # itself, so a column or row named irrelevance holds only irrelevance).
                    category=variant.category,
                    status=status,
                    latency_s=float(result.latency_s),
                    http_status=result.http_status,
                    error=(result.error or None) and str(result.error)[:1000],
                    raw_output=raw[:cap],
                    raw_truncated=len(raw) > cap or result.status is QueryStatus.TOO_LARGE,
                    decoded_calls=judgement.calls[:64] if result.ok else None,
                    valid=judgement.valid,
                    error_type=judgement.error_type if result.ok else f"transport:{status}",
                    score=judgement.score,
                    components=judgement.components,
                ),
            ),
        )
        if self.on_response is not None:
            self.on_response(status)
        return status, float(result.latency_s)

    def _store(self, writer: ResponseWriter, row: ResponseRow) -> None:
        """Hand a scored row to the writer, its failure cause counted for the round's log line."""
        outcome = row.outcome
        cause = failure_cause(outcome.category, outcome.status, outcome.http_status, outcome.error)
        if cause is not None:
            self.failures[cause] += 1
        writer.add(row)

    def _add_episode_row(
        self, writer: ResponseWriter, recorded: dict[str, dict[int, tuple[str, float]]]
    ) -> Callable[[ResponseRow], None]:
        def add(row: ResponseRow) -> None:
            self.last_answer_at = time.perf_counter()
            recorded.setdefault(row.hotkey, {})[row.task_id] = (row.outcome.status, row.outcome.latency_s)
            self._store(writer, row)

        return add

    async def _play_within(
        self,
        player: EpisodePlayer,
        round_id: int,
        task_ids: dict[str, int],
        miner: Neuron,
        target: MinerTarget,
        shown: list[tuple[Episode, Episode]],
        writer: ResponseWriter,
        recorded: dict[str, dict[int, tuple[str, float]]],
        budget: _MinerBudget,
    ) -> list[tuple[str, float]]:
        """The miner's episodes, played within its budget: (status, seconds) each. Those it
        had not finished when the budget ran out are recorded as its timeouts (no transcript);
        the ones it finished stay as they were scored."""
        started = time.perf_counter()
        try:
            async with asyncio.timeout_at(budget.ends_at):
                return await player.play_miner(round_id, task_ids, miner, target, shown)
        except TimeoutError:
            budget.cut(miner.uid)
        done = recorded.get(miner.hotkey, {})
        # The episode in play when the budget ran out took the time left; the rest never started.
        unaccounted = max(0.0, time.perf_counter() - started - sum(latency for _, latency in done.values()))
        outcomes: list[tuple[str, float]] = []
        for _, episode in shown:
            task_id = task_ids[episode.id]
            if task_id in done:
                outcomes.append(done[task_id])
                continue
            timeout = QueryStatus.TIMEOUT.value
            self._store(
                writer,
                ResponseRow(
                    round_id,
                    task_id,
                    miner.hotkey,
                    miner.uid,
                    Outcome.failure(
                        episode.category,
                        timeout,
                        budget.reason,
                        f"transport:{timeout}",
                        latency_s=unaccounted,
                    ),
                ),
            )
            if self.on_response is not None:
                self.on_response(QueryStatus.TIMEOUT.value)
            outcomes.append((QueryStatus.TIMEOUT.value, unaccounted))
            unaccounted = 0.0
        return outcomes

    def _judge(self, result: QueryResult, variant: TaskLike) -> Judgement:
        if not result.ok or result.completion is None:
            return _FAILED_QUERY
        try:
            return self.judge.judge(result.completion.message, variant)
        except Exception as exc:  # a scorer bug must not lose the round; the answer scores 0
            self.scoring_errors += 1
            if self.scoring_errors == 1:  # once per round; the count comes with the round's summary
                log.warning("scoring failed on a response (%s: %s); it scores 0", type(exc).__name__, exc)
            return Judgement(valid=False, error_type="scoring:internal_error", score=0.0)
