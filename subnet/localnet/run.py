"""The localnet's orchestration: state, devchain, bootstrap, miners, validator, leaderboard, shutdown.

``main()`` is ``python -m subnet.localnet``. Every child is a separate OS process started
from the repository's entry points (``neurons/miner.py``, ``neurons/validator.py``) with
flags only, on loopback ports picked free at start. User mistakes and children that die at
start end in one line (plus the child's last log lines) and exit code 2; Ctrl-C or SIGTERM
stops every child (SIGTERM, a grace period, SIGKILL) and exits 130 / 143.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from subnet.bootstrap import BootstrapError, BootstrapSettings
from subnet.bootstrap import bootstrap as run_bootstrap
from subnet.db import (
    DatabaseUrlError,
    WeightSubmission,
    create_engine,
    is_sqlite,
    normalise_url,
    session_factory,
    upgrade,
)
from subnet.devchain import DevChain, rules
from subnet.localnet import commands
from subnet.localnet.commands import HOST, HOTKEY, REPO_ROOT, CommandLines
from subnet.localnet.endpoints import EndpointError, engine_model, one_line, tools_reach_the_model
from subnet.localnet.leaderboard import (
    LEGEND,
    ChainStanding,
    MinerInfo,
    chain_standing,
    database_rows,
    last_weights,
    render,
    with_chain,
)
from subnet.localnet.processes import Child, ChildDied, Supervisor, free_port, port_in_use, wait_until
from subnet.localnet.progress import (
    LogFollower,
    RoundWatcher,
    answers_in_flight,
    last_round_number,
    progress_line,
)
from subnet.localnet.settings import LocalnetSettings, UsageError, parse_settings
from subnet.localnet.state import StateDir, StateError
from subnet.miner.base import ModelLoadError
from subnet.miner.demo import demo_gguf_path

EXIT_USER_ERROR = 2
EXIT_SIGNAL_BASE = 128
POLL_S = 1.0
# How often a round in flight reports its answers so far (only when the count moved).
IN_FLIGHT_EVERY_S = 15.0
# How often a wait (miners loading their model) says what it still waits for.
WAIT_REPORT_S = 15.0
# The leaderboard's setup column for a miner of an earlier run that this run did not start.
NOT_STARTED = "not started this run"
_ROUND_OR_WEIGHTS_DONE = re.compile(r"^(round \d+ scored|weights ok)")

Say = Callable[[str], None]


class LocalnetError(Exception):
    """Something the user can fix; the first line is the message, any further lines are a log tail."""


def say(line: str) -> None:
    print(f"localnet: {line}", flush=True)


def _rounds(count: int) -> str:
    return f"{count} round" if count == 1 else f"{count} rounds"


def _died_at_start(child: Child, what: str) -> LocalnetError:
    code = child.returncode
    tail = child.tail()
    last = tail.splitlines()[-1] if tail else "(no output)"
    return LocalnetError(
        f"{child.name} {what} (exit code {code}): {one_line(last)}; last lines of {child.log_path}:\n{tail}"
    )


def wallet_names(wallets: Path) -> dict[str, str]:
    """hotkey ss58 -> wallet name, for the wallets in the state folder (their ``default`` hotkey)."""
    names: dict[str, str] = {}
    for keyfile in sorted(wallets.glob(f"*/hotkeys/{HOTKEY}")):
        try:
            address = json.loads(keyfile.read_text()).get("ss58Address")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(address, str):
            names[address] = keyfile.parent.parent.name
    return names


async def _answers(url: str) -> bool:
    """True when ``url`` answers 200 within two seconds."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2.0)) as session:
        try:
            async with session.get(url) as response:
                return response.status == 200
        except (aiohttp.ClientError, TimeoutError):
            return False


@dataclass
class Localnet(CommandLines):
    settings: LocalnetSettings
    out: Say = say
    state: StateDir = field(init=False)
    supervisor: Supervisor = field(init=False)
    netuid: int = -1
    validator_uid: int = -1
    block_time: float = 0.0
    miners: list[MinerInfo] = field(default_factory=list)
    # Miners an earlier run in this state folder registered and this run does not start.
    absent: list[MinerInfo] = field(default_factory=list)
    dashboard_url: str | None = None
    _devchain: Any = None
    _started_hotkeys: set[str] = field(default_factory=set)
    _engine: Any = None

    def __post_init__(self) -> None:
        self.state = StateDir(self.settings.state_path)
        env = dict(os.environ)
        # Several model processes share few cores: one thread each unless the user decided.
        threads = max(1, (os.cpu_count() or 1) // max(1, self.settings.miners))
        env.setdefault("OMP_NUM_THREADS", str(threads))
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        env["PYTHONUNBUFFERED"] = "1"
        self.supervisor = Supervisor(cwd=REPO_ROOT, env=env, grace=self.settings.grace)

    @property
    def shown_db_url(self) -> str:
        """The database URL as printed: never with its password."""
        return make_url(self.db_url).render_as_string(hide_password=True)

    # -- the steps --------------------------------------------------------------------------------

    async def run(self) -> int:
        self.preflight()
        endpoints = await self.resolve_endpoints()
        self.prepare_state()
        await self.open_devchain()
        await self.bootstrap(endpoints)
        await self.retire_absent_miners()
        # Before the miners: an unreachable or foreign database should not wait behind their model loads.
        await self.prepare_database()
        await self.prepare_demo_model()
        await self.start_miners()
        validator = await self.start_validator()
        weights_mark, round_mark = await self.marks()
        await self.follow(validator, round_mark)
        await self.supervisor.stop(self.miner_children())
        self.out("miners stopped")
        chain = await self.settle_epoch(weights_mark)
        await self.print_leaderboard(chain)
        return 0

    def preflight(self) -> None:
        for entry in (commands.MINER_ENTRY, commands.VALIDATOR_ENTRY):
            if not entry.is_file():
                raise LocalnetError(f"{entry} is missing; run the localnet from a checkout of the project")
        try:
            if self.settings.miners:
                demo_gguf_path()
        except ModelLoadError as exc:
            raise LocalnetError(str(exc)) from None
        if self.settings.api_key_env and not os.environ.get(self.settings.api_key_env):
            name = self.settings.api_key_env
            raise LocalnetError(
                f"--model.api_key_env {name}: the environment variable {name} is not set or empty"
            )
        try:
            normalise_url(self.db_url)
        except DatabaseUrlError as exc:
            raise LocalnetError(f"--db.url: {exc}") from None
        port = self.settings.dashboard_port
        if port and port_in_use(port):
            raise LocalnetError(
                f"--dashboard.port {port} is in use on {HOST}; "
                "pick another port, or 0 to turn the dashboard off"
            )

    async def resolve_endpoints(self) -> list[tuple[str, str]]:
        """(URL, served model) of each --model.base_url: the engine must answer now, and its
        /v1/models names the model unless --model.name did."""
        resolved = []
        for index, url in enumerate(self.settings.endpoints):
            given = (
                self.settings.endpoint_models[index] if index < len(self.settings.endpoint_models) else None
            )
            try:
                model = await engine_model(url, given, self.settings.api_key_env)
            except EndpointError as exc:
                raise LocalnetError(str(exc)) from None
            self.out(f"engine {index + 1}: {url} serves {model}")
            problem = await tools_reach_the_model(url, model, self.settings.api_key_env)
            if problem is not None:
                self.out(f"warning: engine {index + 1}: {problem}")
            resolved.append((url, model))
        return resolved

    def prepare_state(self) -> None:
        try:
            if self.settings.reset and self.state.reset():
                self.out(f"--reset: deleted the previous state in {self.state.root}")
            reused = self.state.devchain.exists()
            self.state.prepare({"block_time": self.settings.block_time, "tempo": self.settings.tempo})
        except StateError as exc:
            raise LocalnetError(str(exc)) from None
        verb = "reusing" if reused else "new"
        self.out(f"state: {self.state.root} ({verb}; --reset starts over)")

    async def open_devchain(self) -> None:
        try:
            self._devchain = DevChain(self.state.devchain, block_time=self.settings.block_time)
            block_time = (await asyncio.to_thread(self._devchain.clock)).block_time
        except Exception as exc:  # a corrupt or foreign file: the devchain says why in its message
            raise LocalnetError(
                f"cannot open the devchain {self.state.devchain}: {one_line(str(exc))}; "
                "run again with --reset to start over (it deletes this state directory's contents)"
            ) from None
        if abs(block_time - self.settings.block_time) > 1e-9:
            self.out(
                f"devchain keeps its block time of {block_time:g} s (fixed at creation; --reset changes it)"
            )
        self.block_time = block_time

    async def bootstrap(self, endpoints: Sequence[tuple[str, str]] = ()) -> None:
        demo = [f"miner{index + 1}" for index in range(self.settings.miners)]
        labels = demo + [f"engine{index + 1}" for index in range(len(endpoints))]
        settings = BootstrapSettings(
            network="dev",
            devchain_path=self.state.devchain,
            wallet_path=self.state.wallets,
            miners=tuple(labels),
            hotkey=HOTKEY,
            tempo=self.settings.tempo,
            start_timeout_s=60.0,
            state_file=self.state.bootstrap_report,
        )
        log_path = self.state.log("bootstrap")
        started = time.monotonic()
        with log_path.open("a", encoding="utf-8") as log:

            def note(line: str) -> None:
                log.write(line + "\n")
                log.flush()

            try:
                report = await run_bootstrap(settings, log=note)
            except BootstrapError as exc:
                raise LocalnetError(f"bootstrap: {exc} (log: {log_path})") from None
        self.netuid = report.netuid
        self.validator_uid = report.uids["validator"]
        self._started_hotkeys = set(report.hotkeys.values())  # owner, validator, this run's miners
        self.miners = [
            MinerInfo(
                label,
                report.hotkeys[label],
                report.uids[label],
                self.settings.format_of(index),
                self.settings.guided_of(index),
            )
            for index, label in enumerate(demo)
        ]
        self.miners += [
            MinerInfo(label, report.hotkeys[label], report.uids[label], "auto", "off", url, model)
            for label, (url, model) in zip(labels[len(demo) :], endpoints, strict=True)
        ]
        self.state.update_record(netuid=self.netuid)
        self.out(
            f"devchain: netuid {self.netuid}, tempo {self.settings.tempo} blocks of {self.block_time:g} s; "
            f"bootstrap {len(report.done)} steps done, {len(report.skipped)} already done "
            f"({time.monotonic() - started:.1f} s, log: {log_path})"
        )

    async def retire_absent_miners(self) -> None:
        """Withdraw the axons of miners an earlier run registered that this run does not start.

        They stay registered (their standing in the database is kept for a later run that starts
        them again), but with no axon the validator neither queries them nor pays them: a run
        scores and pays only what it runs.
        """
        graph = await asyncio.to_thread(self._devchain.metagraph, self.netuid)
        if graph is None:
            return
        running = (
            self._started_hotkeys | {miner.hotkey for miner in self.miners} | {graph.get("owner_hotkey")}
        )
        names = wallet_names(self.state.wallets)
        hotkeys, axons = graph.get("hotkeys", []), graph.get("axons", [])
        permits = graph.get("validator_permit", [])
        for uid, hotkey in enumerate(hotkeys):
            if hotkey in running or (uid < len(permits) and permits[uid]):
                continue
            label = names.get(hotkey, f"uid{uid}")
            self.absent.append(MinerInfo(label, hotkey, uid, NOT_STARTED))
            if uid >= len(axons) or int(axons[uid].get("port") or 0) <= 0:
                continue

            def withdraw(ctx: Any, hotkey: str = hotkey) -> None:
                rules.serve_axon(ctx, hotkey, self.netuid, ip=0, port=0, ip_type=4, protocol=4, version=0)

            try:
                await asyncio.to_thread(self._devchain.write_sync, withdraw)
            except Exception as exc:  # the devchain's refusal names why; the validator would still query it
                self.out(f"warning: cannot withdraw the axon of {label} (uid {uid}): {one_line(str(exc))}")
        if self.absent:
            listed = ", ".join(f"{miner.label} (uid {miner.uid})" for miner in self.absent)
            self.out(
                f"not started this run: {listed}, from an earlier run in this state folder; "
                "their axons are withdrawn, so they are neither queried nor paid (--reset starts over)"
            )

    async def prepare_demo_model(self) -> None:
        """Convert the demo model once, before the miners start (so they do not all convert it)."""
        if not self.settings.miners:
            return
        code = "from subnet.miner.demo import ensure_demo_model; print(ensure_demo_model())"
        child = await self.supervisor.start(
            "demo model", [sys.executable, "-c", code], self.state.log("demo-model")
        )
        try:
            async with asyncio.timeout(2.0):
                await child.process.wait()
        except TimeoutError:
            self.out("converting the demo model (SmolLM2-135M) once; it is cached for later runs")
            await child.process.wait()
        if child.returncode != 0:
            raise _died_at_start(child, "conversion failed")
        lines = child.output().strip().splitlines()
        self.out(f"demo model: {lines[-1] if lines else '?'}")

    async def start_miners(self) -> None:
        started: list[tuple[MinerInfo, Child, int]] = []
        for miner in self.miners:
            port = free_port(HOST)
            child = await self.supervisor.start(
                miner.label, self.miner_argv(miner, port), self.state.log(miner.label)
            )
            started.append((miner, child, port))
            how = (
                f"engine {miner.model} at {miner.endpoint}"
                if miner.endpoint is not None
                else f"format {miner.format}, guided {miner.guided}"
            )
            self.out(f"{miner.label} starting: uid {miner.uid}, {how}, {HOST}:{port} (log: {child.log_path})")
        waiting = {miner.label for miner, _, _ in started}
        reporter = asyncio.create_task(self._report_wait(waiting, "come up (loading the model)"))
        try:
            await self._wait_for_miners(started, waiting)
        finally:
            reporter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reporter

    async def _report_wait(self, waiting: set[str], what: str) -> None:
        """Every WAIT_REPORT_S, say which of ``waiting`` are still awaited (a long wait is never silent)."""
        started = time.monotonic()
        while True:
            await asyncio.sleep(WAIT_REPORT_S)
            if waiting:
                names = ", ".join(sorted(waiting))
                self.out(f"waiting for {names} to {what} ({time.monotonic() - started:.0f} s)")

    async def _wait_for_miners(self, started: list[tuple[MinerInfo, Child, int]], waiting: set[str]) -> None:
        for miner, child, port in started:
            try:
                seconds = await wait_until(
                    lambda miner=miner, port=port: self.miner_ready(miner, port),  # type: ignore[misc]
                    child=child,
                    within_s=self.settings.start_timeout,
                )
            except ChildDied:
                raise _died_at_start(child, "exited at start") from None
            except TimeoutError:
                raise LocalnetError(
                    f"{miner.label} did not come up within {self.settings.start_timeout:g} s "
                    f"(raise --miner.start_timeout); last lines of {child.log_path}:\n{child.tail()}"
                ) from None
            waiting.discard(miner.label)
            self.out(f"{miner.label} ready: serving on {HOST}:{port}, axon on chain ({seconds:.0f} s)")

    async def miner_ready(self, miner: MinerInfo, port: int) -> bool:
        """Ready when its axon on the devchain names the port and the port answers /health."""
        graph = await asyncio.to_thread(self._devchain.metagraph, self.netuid)
        axons = (graph or {}).get("axons", [])
        if miner.uid >= len(axons) or int(axons[miner.uid].get("port") or 0) != port:
            return False
        return await _answers(f"http://{HOST}:{port}/health")

    async def prepare_database(self) -> None:
        """Bring a PostgreSQL schema up to date (the validator upgrades only SQLite by itself)."""
        if is_sqlite(self.db_url):
            return
        try:
            await upgrade(self.db_url)
        except (OSError, ConnectionError) as exc:
            raise LocalnetError(f"cannot reach the database {self.shown_db_url}: {exc}") from None
        except Exception as exc:  # the driver's own error names what is wrong (auth, missing database)
            reason = f"{type(exc).__name__}: {one_line(str(exc))}"
            raise LocalnetError(f"cannot migrate the database {self.shown_db_url}: {reason}") from None
        self.out("database: schema upgraded to the latest revision")

    async def start_validator(self) -> Child:
        child = await self.supervisor.start("validator", self.validator_argv(), self.state.log("validator"))
        episodes = self.settings.episodes
        and_episodes = f" and {episodes} episode{'s' if episodes != 1 else ''}" if episodes else ""
        self.out(
            f"validator starting: uid {self.validator_uid}, {self.settings.rounds} rounds of "
            f"{self.settings.tasks} tasks{and_episodes} per miner (log: {child.log_path})"
        )
        return child

    def engine(self) -> Any:
        if self._engine is None:
            self._engine = create_engine(self.db_url)
        return self._engine

    async def marks(self) -> tuple[int, int]:
        """The last weight submission and round already in the database (a re-run continues them)."""
        rounds = await last_round_number(self.engine())
        try:
            async with session_factory(self.engine())() as session:
                weights = int(await session.scalar(select(func.max(WeightSubmission.id))) or 0)
        except DBAPIError:
            weights = 0
        return weights, rounds

    def miner_children(self) -> list[Child]:
        # Demo miners (minerN) and endpoint miners (engineN) alike.
        labels = {miner.label for miner in self.miners}
        return [child for child in self.supervisor.children if child.name in labels]

    async def follow(self, validator: Child, round_mark: int) -> None:
        """Show the validator's progress until it exits; a miner that dies is reported once."""
        labels = {miner.hotkey: f"{miner.label} ({miner.setup})" for miner in self.miners}
        watcher = RoundWatcher(self.engine(), labels, round_mark)
        log = LogFollower(validator.log_path, validator.log_offset)
        reported: set[str] = set()
        dashboard = self.dashboard_url
        last_in_flight: tuple[int, int] | None = None
        next_in_flight_at = time.monotonic() + IN_FLIGHT_EVERY_S
        while True:
            finished = validator.running is False
            if time.monotonic() >= next_in_flight_at:
                next_in_flight_at = time.monotonic() + IN_FLIGHT_EVERY_S
                in_flight = await answers_in_flight(self.engine(), list(labels))
                if in_flight is not None and in_flight[1] > 0 and in_flight != last_in_flight:
                    # One answer per task and one per episode (its row holds every step), of this
                    # run's miners: the numerator counts the same answers.
                    expected = (self.settings.tasks + self.settings.episodes) * len(self.miners)
                    self.out(f"round {in_flight[0]}: {in_flight[1]}/{expected} answers in")
                last_in_flight = in_flight
            if dashboard is not None and not finished and await _answers(dashboard):
                self.out(f"dashboard: {dashboard} (read-only, while the validator runs)")
                dashboard = None
            # Finished rounds first: the log read next may already hold the next round's start.
            before = watcher.finished
            for index, result in enumerate(await watcher.poll(), start=before + 1):
                self.out(f"{result.describe()} [{index}/{self.settings.rounds}]")
            for line in log.new_lines():
                shown = progress_line(line)
                # Finished rounds and accepted weights get their own lines (from the database).
                if shown is not None and not _ROUND_OR_WEIGHTS_DONE.match(shown):
                    self.out(f"validator: {shown}")
            for child in self.miner_children():
                if not child.running and child.name not in reported:
                    reported.add(child.name)
                    self.out(
                        f"warning: {child.name} exited (code {child.returncode}); it scores 0 from now on; "
                        f"last lines of {child.log_path}:\n{child.tail(5)}"
                    )
            if finished:
                break
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_S):
                    await validator.process.wait()
        if validator.returncode != 0:
            if watcher.finished == 0:
                raise _died_at_start(validator, "stopped before finishing a round")
            raise _died_at_start(validator, f"stopped after {_rounds(watcher.finished)}")
        self.out(f"validator finished {_rounds(watcher.finished)}")

    async def settle_epoch(self, weights_mark: int) -> ChainStanding | None:
        """Wait for (advance the devchain to) the epoch after this run's weights, then read the chain."""
        accepted, outcomes = await last_weights(self.engine(), weights_mark)
        if accepted is None:
            seen = "; ".join(outcomes[-3:]) or "no attempt"
            self.out(f"no weights were set this run ({seen}); incentive stays as it was")
        else:
            graph = await asyncio.to_thread(self._devchain.metagraph, self.netuid)
            block, last_epoch, tempo = int(graph["block"]), int(graph["last_step"]), int(graph["tempo"])
            if accepted.block is None or int(accepted.block) >= last_epoch:
                skip = last_epoch + tempo - block
                if skip > 0:
                    await asyncio.to_thread(self._devchain.skip_blocks, skip)
                self.out(
                    f"weights set at block {accepted.block}; advanced the devchain {max(skip, 0)} blocks "
                    f"to the epoch at block {last_epoch + tempo}"
                )
            else:
                # A slow run: an epoch has already passed since the weights, nothing to advance.
                self.out(f"weights set at block {accepted.block}; counted by the epoch at block {last_epoch}")
        graph = await asyncio.to_thread(self._devchain.metagraph, self.netuid)
        if graph is None:
            return None
        row = await self._devchain.query("SubtensorModule", "Weights", [self.netuid, self.validator_uid])
        return chain_standing(graph, row or [])

    async def print_leaderboard(self, chain: ChainStanding | None) -> None:
        # Every uid that holds weight or incentive is shown, a miner this run did not start too.
        paid = [
            miner
            for miner in self.absent
            if chain is not None
            and (chain.weights.get(miner.uid, 0.0) > 0 or (chain.incentives.get(miner.uid) or 0.0) > 0)
        ]
        rows = with_chain(await database_rows(self.engine(), [*self.miners, *paid]), chain)
        epoch = f" after the epoch at block {chain.last_epoch_block}" if chain is not None else ""
        print(f"\nleaderboard (netuid {self.netuid}, devchain{epoch}):", flush=True)
        print(render(rows), flush=True)
        print(f"\n{LEGEND}", flush=True)
        self.out(f"database: {self.shown_db_url}")
        self.out(f"logs: {self.state.logs}")
        self.out(f"state: {self.state.root} (run again to continue, --reset to start over)")

    async def close(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None
        if self._devchain is not None:
            await self._devchain.close()
            self._devchain = None


async def run_localnet(settings: LocalnetSettings, out: Say = say) -> int:
    """Run the localnet until done or interrupted; every child is stopped before this returns."""
    localnet = Localnet(settings, out)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []
    stopping = False

    def interrupt(signum: int) -> None:
        received.append(signum)
        if len(received) == 1 and not stopping and task is not None:
            task.cancel()
        else:  # asked again, or while already stopping: no more grace
            for child in localnet.supervisor.running():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signal.SIGKILL)

    handled = (signal.SIGINT, signal.SIGTERM)
    for signum in handled:
        loop.add_signal_handler(signum, interrupt, signum)
    try:
        return await localnet.run()
    except asyncio.CancelledError:
        if not received:
            raise
        out(f"{signal.Signals(received[0]).name} received: stopping every process")
        if localnet.state.is_ours():
            out(f"state kept in {localnet.state.root} (database and logs/; run again to continue)")
        return EXIT_SIGNAL_BASE + received[0]
    finally:
        stopping = True
        running = localnet.supervisor.running()
        if running:
            names = ", ".join(child.name for child in running)
            out(f"stopping {names} (up to {settings.grace:g} s, then killed)")
        await localnet.supervisor.stop_all()
        await localnet.close()
        for signum in handled:
            loop.remove_signal_handler(signum)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        settings = parse_settings(argv)
    except UsageError as exc:
        print(f"localnet: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    try:
        return asyncio.run(run_localnet(settings))
    except LocalnetError as exc:
        first, _, rest = str(exc).partition("\n")
        print(f"localnet: error: {first}", file=sys.stderr)
        if rest:
            print(rest, file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:  # a signal before the handlers were installed
        return EXIT_SIGNAL_BASE + signal.SIGINT
