"""Authenticated HTTP transport between validators (client) and miners (server).

Requests are signed with `bittensor.http_auth` and bound to the receiving miner's hotkey; the
miner checks them, and the caller's standing on the metagraph, before any model work.
"""

from subnet.transport.client import (
    ClientMetrics,
    ClientTimeouts,
    EngineTarget,
    MinerClient,
    MinerTarget,
    QueryResult,
    QueryStatus,
    QueryTarget,
)
from subnet.transport.limits import ReplayStore
from subnet.transport.policy import (
    AuthPolicy,
    CallerDirectory,
    CallerInfo,
    DirectoryEntry,
    HotkeyIndex,
    MetagraphDirectory,
    ServerPolicy,
    StaticDirectory,
)
from subnet.transport.refusals import REFUSAL_STATUS, CallerIdentity, Refusal
from subnet.transport.server import (
    CHAT_PATH,
    GATE_KEY,
    HEALTH_PATH,
    ChatHandler,
    MinerGate,
    MinerServer,
    ServerMetrics,
    build_miner_app,
    peer_key,
)

__all__ = [
    "CHAT_PATH",
    "GATE_KEY",
    "HEALTH_PATH",
    "REFUSAL_STATUS",
    "AuthPolicy",
    "CallerDirectory",
    "CallerIdentity",
    "CallerInfo",
    "ChatHandler",
    "ClientMetrics",
    "ClientTimeouts",
    "DirectoryEntry",
    "EngineTarget",
    "HotkeyIndex",
    "MetagraphDirectory",
    "MinerClient",
    "MinerGate",
    "MinerServer",
    "MinerTarget",
    "QueryResult",
    "QueryStatus",
    "QueryTarget",
    "Refusal",
    "ReplayStore",
    "ServerMetrics",
    "ServerPolicy",
    "StaticDirectory",
    "build_miner_app",
    "peer_key",
]
