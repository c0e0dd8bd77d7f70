"""The command lines the localnet starts its neurons with: a miner's (demo model or an engine
behind the openai backend), the validator's, and the chain flags both share. A mixin of
`Localnet` (subnet/localnet/run.py), which holds the state they read."""

from __future__ import annotations

import sys
from pathlib import Path

from subnet.localnet.leaderboard import MinerInfo
from subnet.localnet.processes import free_port
from subnet.localnet.settings import LocalnetSettings
from subnet.localnet.state import StateDir

REPO_ROOT = Path(__file__).resolve().parents[2]
MINER_ENTRY = REPO_ROOT / "neurons" / "miner.py"
VALIDATOR_ENTRY = REPO_ROOT / "neurons" / "validator.py"
HOST = "127.0.0.1"
HOTKEY = "default"
# The validator's moving average weighs each round this much: a localnet runs few rounds.
LOCALNET_ALPHA = 0.5
# The validator's weight floor, where it has the flag: the demo model only earns on no-call
# tasks (irrelevance, missing_param), well under the production floor, so without this a
# localnet would never see weights on chain.
LOCALNET_WEIGHT_FLOOR = 0.0


class CommandLines:
    """What `Localnet` starts: argv lists built from its settings and state."""

    settings: LocalnetSettings
    state: StateDir
    netuid: int
    block_time: float
    dashboard_url: str | None

    @property
    def db_url(self) -> str:
        return self.settings.db_url or self.state.database_url

    def miner_argv(self, miner: MinerInfo, port: int) -> list[str]:
        common = [
            sys.executable,
            str(MINER_ENTRY),
            *self.chain_flags(miner.label),
            "--axon.ip",
            HOST,
            "--axon.port",
            str(port),
            # Local development stake is whatever the bootstrap staked; do not ask for more.
            "--blacklist.min_stake",
            "0",
            "--model.timeout",
            f"{self.settings.miner_timeout:g}",
            "--model.max_new_tokens",
            str(self.settings.max_new_tokens),
        ]
        if miner.endpoint is not None:
            key = ["--model.api_key_env", self.settings.api_key_env] if self.settings.api_key_env else []
            return [
                *common,
                "--model.backend",
                "openai",
                "--model.base_url",
                miner.endpoint,
                "--model.name",
                str(miner.model),
                *key,
            ]
        return [
            *common,
            "--model.path",
            "demo",
            "--model.format",
            miner.format,
            "--model.guided",
            miner.guided,
            "--model.device",
            "cpu",
            "--model.max_batch",
            str(self.settings.tasks),
        ]

    def chain_flags(self, wallet: str) -> list[str]:
        return [
            "--wallet.name",
            wallet,
            "--wallet.hotkey",
            HOTKEY,
            "--wallet.path",
            str(self.state.wallets),
            "--netuid",
            str(self.netuid),
            "--subtensor.network",
            "dev",
            "--devchain.path",
            str(self.state.devchain),
            "--devchain.block_time",
            f"{self.block_time:g}",
        ]

    def validator_argv(self) -> list[str]:
        settings = self.settings
        dashboard_port = settings.dashboard_port
        if dashboard_port is None:
            dashboard_port = free_port(HOST)
        if dashboard_port:
            self.dashboard_url = f"http://{HOST}:{dashboard_port}/"
        argv = [
            sys.executable,
            str(VALIDATOR_ENTRY),
            *self.chain_flags("validator"),
            "--db.url",
            self.db_url,
            "--validator.secret_path",
            str(self.state.secret),
            "--rounds",
            str(settings.rounds),
            "--round.tasks",
            str(settings.tasks),
            # Multi-turn episodes beside the tasks (docs/episodes.md): they weigh half of a round.
            "--round.episodes",
            str(settings.episodes),
            "--query.timeout",
            f"{settings.query_timeout:g}",
            "--scoring.alpha",
            f"{LOCALNET_ALPHA:g}",
            # One round's answers are evidence enough on a localnet.
            "--scoring.min_samples",
            str(settings.tasks),
            "--metrics.port",
            str(free_port(HOST)),
            "--dashboard.port",
            str(dashboard_port),
            # Demo models are weak: any positive standing earns weight on a localnet.
            "--weights.floor",
            f"{LOCALNET_WEIGHT_FLOOR:g}",
        ]
        return argv
