"""The validator node: wires settings, database, chain, transport and jobs together, and runs them.

``Validator.run(rounds=K)`` runs K rounds back to back (each preceded by a
metagraph sync and followed by a weights check; the last one sets weights even when not yet
due, if none were set during the run) and returns; ``rounds=None``
starts the scheduler (metagraph sync, round, weights, pruning) and runs until
stopped. Start-up upgrades a SQLite schema, refuses an out-of-date PostgreSQL
one, and settles any round a killed process left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from aiohttp import web
from prometheus_client import CollectorRegistry

from subnet.chain import Neuron
from subnet.config import PUBLIC_NETWORKS, UserError, ValidatorSettings
from subnet.db import NotAValidatorDatabase, SchemaOutOfDate, create_engine, prepare_schema
from subnet.db.connection import DatabaseUrlError, error_reason
from subnet.metrics import add_metrics_route, new_registry
from subnet.phrasing import PhrasingSetupError, build_engine
from subnet.phrasing.session import RoundPhraser, policy_from
from subnet.registry import engine_rewrites
from subnet.transport import ClientTimeouts, MinerClient
from subnet.validator.budget import RoundBudget
from subnet.validator.dashboard import DashboardStartError, start_dashboard
from subnet.validator.jobs import GuardedJob, JobSpec, build_scheduler
from subnet.validator.judge import BfclJudge, Judge
from subnet.validator.metrics import ValidatorMetrics
from subnet.validator.rounds import ChainView, Querier, RoundParams, RoundReport, RoundRunner, VariantObserver
from subnet.validator.sandbox import Sandbox, SandboxLimits
from subnet.validator.secret import SecretFileError, load_or_create_secret
from subnet.validator.state import WeightPolicy
from subnet.validator.store import Store
from subnet.validator.task_source import LibraryTasks, TaskSource

if TYPE_CHECKING:
    from subnet.phrasing.session import RoundPhraser
from subnet.validator.weights import WeightsAttempt, WeightSetter, WeightsOutcome
from tasks import SourceFileError, TaskConfigError

log = logging.getLogger(__name__)


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop when it is installed, else None (asyncio's default loop).

    For ``asyncio.Runner(loop_factory=...)``: a round's sockets, timers and callbacks
    cost about a quarter less CPU on uvloop (MinerClient on 2,048 loopback queries:
    0.43-0.47 -> 0.31-0.35 ms per query).
    """
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


# Sockets and files the validator holds besides its queries' connections: database, chain,
# metrics and dashboard servers, logs, the interpreter's own.
OPEN_FILES_BESIDES_QUERIES = 256


def raise_open_file_limit(needed: int) -> int:
    """Raise the soft limit on open files towards ``needed`` (never above the hard limit).

    Every query in flight holds a socket: with ``--query.concurrency`` 2,048 the common
    soft limit of 1,024 would turn the surplus into "refused" results that score 0.
    Returns the soft limit in force afterwards.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return int(soft) if soft != resource.RLIM_INFINITY else needed
    target = needed if hard == resource.RLIM_INFINITY else min(needed, int(hard))
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-file limit from %d to %d: %s", soft, target, exc)
    if soft < needed:
        log.warning(
            "open-file limit %d is below the %d that --query.concurrency needs; raise it (ulimit -n)"
            " or lower --query.concurrency, or queries beyond it fail as refused",
            soft,
            needed,
        )
    return int(soft)


def public_axons_only(settings: ValidatorSettings) -> bool:
    """Whether rounds skip axons on loopback, private and link-local addresses: on finney and
    test, where anyone publishes an axon, unless --query.allow_private_axons; never on the
    local networks (devchain, localnet), whose miners are on this machine."""
    return settings.subtensor.network in PUBLIC_NETWORKS and not settings.query.allow_private_axons


class StartupError(UserError):
    """The validator cannot start (database, secret file); one line says what to do."""


@dataclass(frozen=True)
class Cadence:
    """How often each scheduled job runs and how long one run may take, in seconds."""

    metagraph_interval: float = 60.0
    metagraph_timeout: float = 120.0
    weights_interval: float = 60.0
    weights_timeout: float = 180.0
    prune_interval: float = 3600.0
    prune_timeout: float = 600.0
    # Raw outputs older than this are dropped; verdicts, scores and aggregates stay.
    keep_raw_outputs: timedelta = timedelta(days=7)


@dataclass
class ValidatorOptions:
    """What a caller may replace (tests, simulations, benchmarks); the defaults are production's."""

    task_source: TaskSource | None = None
    judge: Judge | None = None
    observer: VariantObserver | None = None
    weight_policy: WeightPolicy | None = None
    cadence: Cadence = field(default_factory=Cadence)
    querier: Querier | None = None
    registry: CollectorRegistry | None = None
    install_signal_handlers: bool = True
    # None: the engine --phrasing.engine names (see _phraser).
    phraser: RoundPhraser | None = None
    # None: a sandbox of --round.sandbox_workers workers; one given here is still closed at shutdown.
    sandbox: Sandbox | None = None


class Validator:
    def __init__(
        self, settings: ValidatorSettings, *, wallet: Any, chain: Any, options: ValidatorOptions | None = None
    ) -> None:
        self.settings = settings
        self.wallet = wallet
        self.chain = chain
        self.options = options or ValidatorOptions()
        self.registry = self.options.registry or new_registry()
        self.metrics = ValidatorMetrics.register(self.registry)
        self.view: ChainView | None = None
        self._weights_accepted = 0  # attempts the chain took since start, however old
        self._stack = contextlib.AsyncExitStack()
        self._store: Store | None = None
        self._runner: RoundRunner | None = None
        self._weights: WeightSetter | None = None
        self._stop = asyncio.Event()
        self._own_hotkey = ""

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("validator not started")
        return self._store

    async def start(self) -> None:
        settings = self.settings
        # Flags first: a bad --tasks.sources or phrasing set-up should not wait behind the database.
        task_source = self.options.task_source or _task_source(settings.tasks)
        phraser = self.options.phraser or _phraser(settings, task_source)
        try:
            engine = create_engine(settings.db.url)
        except DatabaseUrlError as exc:
            raise StartupError(str(exc)) from None
        self._stack.push_async_callback(engine.dispose)
        try:
            await prepare_schema(settings.db.url, engine)
        except (SchemaOutOfDate, NotAValidatorDatabase) as exc:
            raise StartupError(str(exc)) from None
        except Exception as exc:  # unreachable server, wrong password, unwritable file: the user's to fix
            detail = error_reason(exc)[:300]
            raise StartupError(f"cannot open the database {engine.url!r}: {detail}") from None
        try:
            secret = load_or_create_secret(settings.validator.secret_path)
        except SecretFileError as exc:
            raise StartupError(str(exc)) from None
        self._store = Store(engine)
        for recovery in await self._store.recover_interrupted(settings.scoring.alpha):
            if recovery.action == "finished":
                log.warning("round %d had every response stored: finished it now", recovery.number)
            else:
                log.warning(
                    "round %d was interrupted while querying miners: discarded (kept for audit, not counted)",
                    recovery.number,
                )
            self.metrics.rounds.labels(f"recovered_{recovery.action}").inc()

        querier = self.options.querier
        if querier is None:
            raise_open_file_limit(settings.query.concurrency + OPEN_FILES_BESIDES_QUERIES)
            client = MinerClient(
                self.wallet,
                timeouts=ClientTimeouts(
                    connect_s=min(3.0, settings.query.timeout), total_s=settings.query.timeout
                ),
                global_concurrency=settings.query.concurrency,
                # A miner gets all its tasks of a round at once; its own limits queue them.
                per_miner_concurrency=max(1, settings.round.tasks),
                registry=self.registry,
            )
            querier = await self._stack.enter_async_context(client)
            self._own_hotkey = client.hotkey
        else:
            self._own_hotkey = str(getattr(self.chain, "hotkey", ""))
        # Episodes' tool calls run in worker processes, never on this loop; ended at shutdown.
        sandbox = self.options.sandbox or Sandbox(SandboxLimits(workers=settings.round.sandbox_workers))
        self._stack.push_async_callback(sandbox.close)
        if settings.round.episodes:
            sandbox.warm()
        self._runner = RoundRunner(
            store=self._store,
            querier=querier,
            task_source=task_source,
            judge=self.options.judge or BfclJudge(),
            secret=secret,
            params=RoundParams(
                netuid=settings.netuid,
                n_tasks=settings.round.tasks,
                alpha=settings.scoring.alpha,
                public_axons_only=public_axons_only(settings),
                n_episodes=settings.round.episodes,
                budget=RoundBudget.from_settings(settings, phrases=phraser is not None and phraser.rewrites),
            ),
            observer=self.options.observer,
            on_response=lambda status: self.metrics.responses.labels(status).inc(),
            phraser=phraser,
            sandbox=sandbox,
        )
        if phraser is not None:
            try:
                await phraser.engine.start()
            except Exception as exc:  # a bad model path, an unset API key: the user's to fix
                raise StartupError(
                    f"phrasing engine {phraser.engine.name}: {error_reason(exc)[:300]}"
                ) from None
            self._stack.push_async_callback(self._runner.close)
        self._weights = WeightSetter(
            store=self._store,
            chain=self.chain,
            policy=self.options.weight_policy
            or WeightPolicy(min_samples=settings.scoring.min_samples, floor=settings.weights.floor),
            interval_blocks=settings.weights.interval,
        )
        if settings.metrics.port:
            await self._serve_metrics(settings.dashboard.host, settings.metrics.port)
        if settings.dashboard.port:
            await self._serve_dashboard(engine)

    async def _serve_dashboard(self, engine: Any) -> None:
        settings = self.settings
        try:
            server = await start_dashboard(
                engine,
                host=settings.dashboard.host,
                port=settings.dashboard.port,
                alpha=settings.scoring.alpha,
                allowed_hosts=settings.dashboard.allowed_hosts,
            )
        except DashboardStartError as exc:
            raise StartupError(str(exc)) from None
        self._stack.push_async_callback(server.stop)

    async def _serve_metrics(self, host: str, port: int) -> None:
        app = web.Application()
        add_metrics_route(app, self.registry)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        self._stack.push_async_callback(runner.cleanup)
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:
            raise StartupError(
                f"cannot serve metrics on {host}:{port} ({exc.strerror}); pick --metrics.port"
            ) from None
        log.info("metrics on http://%s:%d/metrics", host, port)

    async def close(self) -> None:
        await self._stack.aclose()

    def stop(self) -> None:
        self._stop.set()

    # -- the jobs -------------------------------------------------------------------------------

    async def sync_metagraph(self) -> ChainView:
        """Refresh the view of the subnet; on failure the previous view stays in use."""
        graph = await self.chain.metagraph()
        block = int(getattr(graph, "block", 0)) or int(await self.chain.block())
        block_hash = str(await self.chain.block_hash(block))
        neurons = tuple(graph.neurons)
        self.view = ChainView(
            block=block, block_hash=block_hash, neurons=neurons, own_hotkey=self._own_hotkey
        )
        await self.store.upsert_miners(neurons)
        self.metrics.chain_view_age.set(0)
        return self.view

    async def _view_for_round(self) -> ChainView:
        if self.view is None:
            try:
                return await self.sync_metagraph()
            except Exception as exc:
                stored = await self._view_from_database()
                if stored is None:
                    raise RuntimeError(f"no metagraph yet and the chain is unreachable ({exc})") from exc
                log.warning("chain unreachable at start (%s); using the miners stored by the last run", exc)
                self.view = stored
        age = time.time() - self.view.fetched_at
        self.metrics.chain_view_age.set(age)
        if age > 2 * self.options.cadence.metagraph_interval:
            log.warning("running the round on a metagraph %.0f s old (chain unreachable)", age)
        return self.view

    async def _view_from_database(self) -> ChainView | None:
        """The last metagraph this validator stored (per uid its latest hotkey), for a start without chain."""
        latest = await self.store.latest_block()
        if latest is None:
            return None
        newest_by_uid: dict[int, Any] = {}
        for miner in await self.store.known_miners():
            current = newest_by_uid.get(miner.uid)
            if current is None or miner.last_seen > current.last_seen:
                newest_by_uid[miner.uid] = miner
        neurons = tuple(
            Neuron(
                uid=miner.uid,
                hotkey=miner.hotkey,
                coldkey=miner.coldkey,
                stake=0.0,
                validator_permit=miner.is_validator,
                axon_ip=miner.axon_ip,
                axon_port=miner.axon_port,
                last_update=0,
                incentive=0.0,
            )
            for miner in newest_by_uid.values()
        )
        block, block_hash = latest
        return ChainView(
            block=block, block_hash=block_hash, neurons=neurons, own_hotkey=self._own_hotkey, fetched_at=0.0
        )

    async def run_round(self) -> RoundReport:
        if self._runner is None:
            raise RuntimeError("validator not started")
        view = await self._view_for_round()
        started = time.perf_counter()
        try:
            report = await self._runner.run(view)
        except BaseException:
            self.metrics.rounds.labels("failed").inc()
            raise
        if report.phrasing is not None:
            self.metrics.phrasing_done(report.phrasing.to_dict())
        self.metrics.rounds.labels("scored").inc()
        self.metrics.round_seconds.observe(time.perf_counter() - started)
        self.metrics.miners_queried.set(report.n_miners)
        self.metrics.last_round_number.set(report.number)
        return report

    async def set_weights(self, *, force: bool = False) -> WeightsAttempt | None:
        if self._weights is None or self.view is None:
            return None
        attempt = await self._weights.maybe_set(self.view, force=force)
        if attempt.outcome is not WeightsOutcome.NOT_DUE:
            self.metrics.weights_attempts.labels(attempt.outcome.value).inc()
        if attempt.outcome is WeightsOutcome.OK:
            self._weights_accepted += 1
        return attempt

    async def prune(self) -> int:
        pruned = await self.store.prune_raw_outputs(self.options.cadence.keep_raw_outputs)
        if pruned:
            log.info("pruned raw outputs of %d old responses", pruned)
        return pruned

    def round_budget(self) -> RoundBudget:
        """What a round may take, from the same settings for the rounds (per miner) and the round
        job (its timeout): see subnet.validator.budget."""
        return RoundBudget.from_settings(self.settings, phrases=self._phrases())

    def _phrases(self) -> bool:
        """Whether the rounds' requests are rewritten by a phrasing engine (which takes time)."""
        phraser = getattr(self._runner, "phraser", None) if self._runner is not None else self.options.phraser
        if phraser is not None:
            return phraser.rewrites
        if self._runner is not None:  # started: the task source brings its own text
            return False
        return engine_rewrites(self.settings.phrasing.engine)

    def job_specs(self) -> list[JobSpec]:
        settings, cadence = self.settings, self.options.cadence
        # Longer than any miner's work can make a round (whatever it does), so that no miner can
        # get the round cancelled, and with it every other miner's results.
        round_timeout = self.round_budget().job_s
        return [
            JobSpec("metagraph", cadence.metagraph_interval, self.sync_metagraph, cadence.metagraph_timeout),
            JobSpec(
                "round",
                settings.round.interval,
                self.run_round,
                round_timeout,
                misfire_grace_s=max(1, math.ceil(settings.round.interval)),
            ),
            JobSpec("weights", cadence.weights_interval, self.set_weights, cadence.weights_timeout),
            JobSpec("prune", cadence.prune_interval, self.prune, cadence.prune_timeout),
        ]

    # -- running --------------------------------------------------------------------------------

    async def run(self, rounds: int | None = None) -> None:
        try:
            await self.start()
            with self._signals():
                if rounds is not None:
                    await self._run_rounds(rounds)
                else:
                    await self._run_forever()
        finally:
            await self.close()

    async def _run_rounds(self, count: int) -> None:
        jobs = {spec.name: GuardedJob(spec, on_finish=self.metrics.job_finished) for spec in self.job_specs()}
        for _ in range(count):
            if self._stop.is_set():
                break
            await jobs["metagraph"].run_once()
            await jobs["round"].run_once()
            await jobs["weights"].run_once()
        if not self._stop.is_set() and not self._weights_accepted:
            # A bounded run ends with its standing on chain even when its rounds were quicker
            # than the weights interval (a fast engine on the devchain ran two rounds in 1 s).
            attempt = await self.set_weights(force=True)
            if attempt is not None and attempt.blocks_left and await self._wait_blocks(attempt.blocks_left):
                await self.set_weights(force=True)
        await jobs["prune"].run_once()

    async def _wait_blocks(self, count: int, limit_s: float = 60.0) -> bool:
        """Wait until the chain is ``count`` blocks further (True), unless that takes longer than
        ``limit_s`` or the validator is stopped (False): the chain's weights rate limit on a local
        chain is seconds, on finney it is far longer than a bounded run should wait."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        try:
            target = int(await self.chain.block()) + count
            while loop.time() < deadline and not self._stop.is_set():
                if int(await self.chain.block()) >= target:
                    return True
                await asyncio.sleep(0.25)
        except Exception as exc:  # the chain's own failures are logged by the chain client
            log.debug("waiting for blocks failed: %s", exc)
        log.info("weights: the chain's rate limit wants %d more blocks; not waiting for them", count)
        return False

    async def _run_forever(self) -> None:
        scheduler, _ = build_scheduler(self.job_specs(), on_finish=self.metrics.job_finished)
        scheduler.start()
        try:
            await self._stop.wait()
        finally:
            scheduler.shutdown(wait=False)

    @contextlib.contextmanager
    def _signals(self) -> Any:
        loop = asyncio.get_running_loop()
        installed: list[signal.Signals] = []
        if self.options.install_signal_handlers:
            for signum in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.add_signal_handler(signum, self.stop)
                    installed.append(signum)
        try:
            yield
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)


def check_phrasing(settings: ValidatorSettings) -> None:
    """Refuse template text on finney and test (a StartupError line): code without a model can
    answer it. Run before anything connects, so the mistake costs no wait."""
    if (
        not engine_rewrites(settings.phrasing.engine)
        and settings.subtensor.network in PUBLIC_NETWORKS
        and not settings.phrasing.allow_templates
    ):
        raise StartupError(
            f"a validator on {settings.subtensor.network} needs a phrasing engine (--phrasing.engine openai "
            "--phrasing.url URL, or transformers --phrasing.path DIR): template text can be answered by code "
            "without a model; --phrasing.allow_templates runs without one anyway"
        )


def _phraser(settings: ValidatorSettings, task_source: TaskSource) -> RoundPhraser | None:
    """The phrasing step ``--phrasing.*`` names; refuses template text on finney and test.

    None where the task source is not the library's (tests that bring their own tasks).
    """

    check_phrasing(settings)
    phrasing = settings.phrasing
    if not isinstance(task_source, LibraryTasks):
        return None
    try:
        engine = build_engine(phrasing)
    except PhrasingSetupError as exc:
        raise StartupError(str(exc)) from None
    return RoundPhraser(engine, policy_from(phrasing), redraw=task_source.redraw)


def _task_source(settings: Any) -> TaskSource:
    """The task source ``--tasks.sources`` names; a bad value or pool file is a one-line StartupError."""

    text = settings.sources
    try:
        return LibraryTasks.from_flag(text, settings.paths)
    except (TaskConfigError, SourceFileError) as exc:
        raise StartupError(f"--tasks.sources {text!r}: {exc}") from None
