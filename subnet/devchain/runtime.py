"""What the devchain answers, keyed the way the SDK asks: storage items, runtime APIs, calls.

Three registries map the bittensor SDK's ``(pallet, item)`` / ``(api, method)``
/ ``(pallet, call)`` names onto the SQLite state, returning the plain decoded
shapes the SDK's reads and intents expect from a real node. Anything not
listed raises a :class:`~bittensor.ChainError` naming the missing item, so a
gap shows up as a clear error rather than a silent default.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from subnet.devchain import rules
from subnet.devchain.rules import RAO_PER_TAO, Ctx

# Weights, bonds and commits are keyed by the mechanism index (mechid * 4096 + netuid).
GLOBAL_MAX_SUBNET_COUNT = 4096
EXISTENTIAL_DEPOSIT_RAO = 500

Getter = Callable[[Ctx, list[Any]], Any]
Lister = Callable[[Ctx, list[Any]], list[tuple[Any, Any]]]


@dataclass(frozen=True)
class StorageItem:
    """One storage item: ``get`` for ``query``, ``entries`` for ``query_map`` (None: not a map)."""

    get: Getter
    entries: Lister | None = None


def _netuid_of(index: Any) -> int:
    """The netuid under a mechanism storage index (mechanism 0 is the only one here)."""
    return int(index) % GLOBAL_MAX_SUBNET_COUNT


def _subnet(ctx: Ctx, netuid: Any) -> sqlite3.Row | None:
    return ctx.one("SELECT * FROM subnets WHERE netuid = ?", int(netuid))


def _column(column: str, cast: Callable[[Any], Any] = int) -> StorageItem:
    """A per-subnet value stored as a column of ``subnets``."""

    def get(ctx: Ctx, params: list[Any]) -> Any:
        row = _subnet(ctx, params[0])
        return None if row is None else cast(row[column])

    def entries(ctx: Ctx, params: list[Any]) -> list[tuple[Any, Any]]:
        return [(int(r["netuid"]), cast(r[column])) for r in ctx.all("SELECT * FROM subnets ORDER BY netuid")]

    return StorageItem(get, entries)


def _per_subnet_constant(value: Any) -> StorageItem:
    """A per-subnet item the devchain does not model beyond its default value."""

    def get(ctx: Ctx, params: list[Any]) -> Any:
        return value

    def entries(ctx: Ctx, params: list[Any]) -> list[tuple[Any, Any]]:
        return [(int(r["netuid"]), value) for r in ctx.all("SELECT netuid FROM subnets ORDER BY netuid")]

    return StorageItem(get, entries)


def _neuron_vector(column: str, cast: Callable[[Any], Any] = int) -> StorageItem:
    """A per-uid vector (LastUpdate, ValidatorPermit, Incentive, ...) under a mechanism index."""

    def get(ctx: Ctx, params: list[Any]) -> list[Any]:
        rows = ctx.all(
            f"SELECT {column} AS v FROM neurons WHERE netuid = ? ORDER BY uid", _netuid_of(params[0])
        )
        return [cast(r["v"]) for r in rows]

    def entries(ctx: Ctx, params: list[Any]) -> list[tuple[Any, Any]]:
        netuids = [int(r["netuid"]) for r in ctx.all("SELECT netuid FROM subnets ORDER BY netuid")]
        return [(n, get(ctx, [n])) for n in netuids]

    return StorageItem(get, entries)


def _constant(value: Any) -> StorageItem:
    return StorageItem(lambda ctx, params: value, lambda ctx, params: [])


def _account(ctx: Ctx, params: list[Any]) -> dict[str, Any]:
    row = ctx.one("SELECT free, nonce FROM accounts WHERE address = ?", str(params[0]))
    free, nonce = (int(row["free"]), int(row["nonce"])) if row else (0, 0)
    return {
        "nonce": nonce,
        "consumers": 0,
        "providers": 1 if free else 0,
        "sufficients": 0,
        "data": {"free": free, "reserved": 0, "frozen": 0, "flags": 0},
    }


def _uid_of(ctx: Ctx, params: list[Any]) -> int | None:
    row = ctx.one("SELECT uid FROM neurons WHERE netuid = ? AND hotkey = ?", int(params[0]), str(params[1]))
    return None if row is None else int(row["uid"])


def _uids(ctx: Ctx, params: list[Any]) -> list[tuple[Any, Any]]:
    rows = ctx.all("SELECT hotkey, uid FROM neurons WHERE netuid = ? ORDER BY uid", int(params[0]))
    return [(r["hotkey"], int(r["uid"])) for r in rows]


def _key_of(ctx: Ctx, params: list[Any]) -> str | None:
    row = ctx.one("SELECT hotkey FROM neurons WHERE netuid = ? AND uid = ?", int(params[0]), int(params[1]))
    return None if row is None else str(row["hotkey"])


def _keys(ctx: Ctx, params: list[Any]) -> list[tuple[Any, Any]]:
    rows = ctx.all("SELECT uid, hotkey FROM neurons WHERE netuid = ? ORDER BY uid", int(params[0]))
    return [(int(r["uid"]), r["hotkey"]) for r in rows]


def _weights_row(ctx: Ctx, params: list[Any]) -> list[tuple[int, int]]:
    rows = ctx.all(
        "SELECT dest, value FROM weights WHERE netuid = ? AND uid = ? ORDER BY dest",
        _netuid_of(params[0]),
        int(params[1]),
    )
    return [(int(r["dest"]), int(r["value"])) for r in rows]


def _weights(ctx: Ctx, params: list[Any]) -> list[tuple[Any, Any]]:
    netuid = _netuid_of(params[0])
    uids = [
        int(r["uid"])
        for r in ctx.all("SELECT DISTINCT uid FROM weights WHERE netuid = ? ORDER BY uid", netuid)
    ]
    return [(uid, _weights_row(ctx, [netuid, uid])) for uid in uids]


def _commit_tuple(r: sqlite3.Row) -> tuple[str, int, str, int]:
    return (str(r["hotkey"]), int(r["commit_block"]), str(r["ciphertext"]), int(r["reveal_round"]))


def _commits_for_epoch(ctx: Ctx, params: list[Any]) -> list[tuple[str, int, str, int]]:
    rows = ctx.all(
        "SELECT * FROM weight_commits WHERE netuid = ? AND epoch = ? ORDER BY id",
        _netuid_of(params[0]),
        int(params[1]),
    )
    return [_commit_tuple(r) for r in rows]


def _commits(ctx: Ctx, params: list[Any]) -> list[tuple[Any, Any]]:
    netuid = _netuid_of(params[0])
    epochs = [
        int(r["epoch"]) for r in ctx.all("SELECT DISTINCT epoch FROM weight_commits WHERE netuid = ?", netuid)
    ]
    return [(epoch, _commits_for_epoch(ctx, [netuid, epoch])) for epoch in sorted(epochs)]


def axon_info(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "block": int(row["axon_block"]),
        "version": int(row["axon_version"]),
        "ip": int(row["axon_ip"]),
        "port": int(row["axon_port"]),
        "ip_type": int(row["axon_ip_type"]),
        "protocol": int(row["axon_protocol"]),
        "placeholder1": 0,
        "placeholder2": 0,
    }


def _axon(ctx: Ctx, params: list[Any]) -> dict[str, Any] | None:
    row = ctx.one("SELECT * FROM neurons WHERE netuid = ? AND hotkey = ?", int(params[0]), str(params[1]))
    return None if row is None or not int(row["axon_block"]) else axon_info(row)


def _owner(ctx: Ctx, params: list[Any]) -> str | None:
    row = ctx.one("SELECT coldkey FROM hotkeys WHERE hotkey = ?", str(params[0]))
    return None if row is None else str(row["coldkey"])


def _owned_hotkeys(ctx: Ctx, params: list[Any]) -> list[str]:
    return [
        str(r["hotkey"])
        for r in ctx.all("SELECT hotkey FROM hotkeys WHERE coldkey = ? ORDER BY hotkey", str(params[0]))
    ]


def _is_member(ctx: Ctx, params: list[Any]) -> bool:
    return _uid_of(ctx, [params[1], params[0]]) is not None


def _memberships(ctx: Ctx, params: list[Any]) -> list[tuple[Any, Any]]:
    rows = ctx.all("SELECT netuid FROM neurons WHERE hotkey = ? ORDER BY netuid", str(params[0]))
    return [(int(r["netuid"]), True) for r in rows]


def _total_hotkey_alpha(ctx: Ctx, params: list[Any]) -> int:
    return rules.hotkey_stake(ctx, int(params[1]), str(params[0]))


def _alpha(ctx: Ctx, params: list[Any]) -> int:
    row = ctx.one(
        "SELECT alpha FROM stakes WHERE hotkey = ? AND coldkey = ? AND netuid = ?",
        str(params[0]),
        str(params[1]),
        int(params[2]),
    )
    return int(row["alpha"]) if row else 0


def _subnetwork_n(ctx: Ctx, params: list[Any]) -> int:
    row = ctx.one("SELECT COUNT(*) AS n FROM neurons WHERE netuid = ?", int(params[0]))
    return int(row["n"]) if row else 0


def _blocks_since_last_step(ctx: Ctx, params: list[Any]) -> int | None:
    row = _subnet(ctx, params[0])
    return None if row is None else ctx.block - int(row["last_epoch_block"])


def _text_bytes(value: Any) -> list[int]:
    return list(str(value).encode("utf-8"))


STORAGE: dict[tuple[str, str], StorageItem] = {
    ("System", "Account"): StorageItem(_account),
    ("System", "Number"): StorageItem(lambda ctx, params: ctx.block),
    ("Timestamp", "Now"): StorageItem(lambda ctx, params: ctx.timestamp_ms),
    ("SubtensorModule", "NetworksAdded"): _column("netuid", lambda _: True),
    ("SubtensorModule", "TotalNetworks"): StorageItem(
        lambda ctx, params: int(ctx.one("SELECT COUNT(*) AS n FROM subnets")["n"])  # type: ignore[index]
    ),
    ("SubtensorModule", "Tempo"): _column("tempo"),
    ("SubtensorModule", "WeightsSetRateLimit"): _column("weights_rate_limit"),
    ("SubtensorModule", "CommitRevealWeightsEnabled"): _column("commit_reveal", bool),
    ("SubtensorModule", "RevealPeriodEpochs"): _column("reveal_period"),
    ("SubtensorModule", "MaxWeightsLimit"): _column("max_weight_limit"),
    ("SubtensorModule", "MinAllowedWeights"): _column("min_allowed_weights"),
    ("SubtensorModule", "ImmunityPeriod"): _column("immunity_period"),
    ("SubtensorModule", "MaxAllowedUids"): _column("max_uids"),
    ("SubtensorModule", "MaxAllowedValidators"): _column("max_validators"),
    ("SubtensorModule", "Burn"): _column("burn"),
    ("SubtensorModule", "MinBurn"): _column("burn"),
    ("SubtensorModule", "MaxBurn"): _column("burn"),
    ("SubtensorModule", "NetworkRegistrationAllowed"): _column("registration_allowed", bool),
    ("SubtensorModule", "ServingRateLimit"): _column("serving_rate_limit"),
    ("SubtensorModule", "WeightsVersionKey"): _column("weights_version"),
    ("SubtensorModule", "ActivityCutoff"): _column("activity_cutoff"),
    ("SubtensorModule", "LastEpochBlock"): _column("last_epoch_block"),
    ("SubtensorModule", "SubnetEpochIndex"): _column("epoch_index"),
    ("SubtensorModule", "NetworkRegisteredAt"): _column("registered_at"),
    ("SubtensorModule", "SubnetOwner"): _column("owner_coldkey", str),
    ("SubtensorModule", "SubnetOwnerHotkey"): _column("owner_hotkey", str),
    ("SubtensorModule", "SubnetLocked"): _column("locked"),
    ("SubtensorModule", "FirstEmissionBlockNumber"): _column(
        "first_emission_block", lambda v: None if v is None else int(v)
    ),
    ("SubtensorModule", "TokenSymbol"): _column("symbol", _text_bytes),
    ("SubtensorModule", "SubnetName"): _column("name", _text_bytes),
    ("SubtensorModule", "BlocksSinceLastStep"): StorageItem(_blocks_since_last_step),
    ("SubtensorModule", "PendingEpochAt"): _per_subnet_constant(0),
    ("SubtensorModule", "SubnetEpochConsensus"): _per_subnet_constant("Yuma"),
    ("SubtensorModule", "CollateralLockShare"): _per_subnet_constant(0),
    ("SubtensorModule", "MechanismCountCurrent"): _per_subnet_constant(1),
    ("SubtensorModule", "Difficulty"): _per_subnet_constant(0),
    ("SubtensorModule", "SubnetEmissionEnabled"): _per_subnet_constant(1),
    ("SubtensorModule", "SubnetIdentitiesV3"): _per_subnet_constant(None),
    ("SubtensorModule", "SubnetworkN"): StorageItem(_subnetwork_n),
    ("SubtensorModule", "Uids"): StorageItem(_uid_of, _uids),
    ("SubtensorModule", "Keys"): StorageItem(_key_of, _keys),
    ("SubtensorModule", "LastUpdate"): _neuron_vector("last_update"),
    ("SubtensorModule", "ValidatorPermit"): _neuron_vector("validator_permit", bool),
    ("SubtensorModule", "Incentive"): _neuron_vector("incentive"),
    ("SubtensorModule", "Dividends"): _neuron_vector("dividends"),
    ("SubtensorModule", "Emission"): _neuron_vector("emission"),
    ("SubtensorModule", "Rank"): _neuron_vector("rank"),
    ("SubtensorModule", "Trust"): _neuron_vector("trust"),
    ("SubtensorModule", "Consensus"): _neuron_vector("consensus"),
    ("SubtensorModule", "BlockAtRegistration"): _neuron_vector("registered_at"),
    ("SubtensorModule", "Weights"): StorageItem(_weights_row, _weights),
    ("SubtensorModule", "Bonds"): StorageItem(lambda ctx, params: [], lambda ctx, params: []),
    ("SubtensorModule", "TimelockedWeightCommits"): StorageItem(_commits_for_epoch, _commits),
    ("SubtensorModule", "Axons"): StorageItem(_axon),
    ("SubtensorModule", "Owner"): StorageItem(_owner),
    ("SubtensorModule", "OwnedHotkeys"): StorageItem(_owned_hotkeys),
    ("SubtensorModule", "IsNetworkMember"): StorageItem(_is_member, _memberships),
    ("SubtensorModule", "TotalHotkeyAlpha"): StorageItem(_total_hotkey_alpha),
    ("SubtensorModule", "Alpha"): StorageItem(_alpha),
    ("SubtensorModule", "CurrentDissolveCleanupStatus"): _constant(None),
    ("SubtensorModule", "DissolveCleanupQueue"): _constant([]),
    ("SubtensorModule", "NetworkRegistrationQueue"): _constant([]),
    ("Commitments", "CommitmentOf"): _constant(None),
    ("Commitments", "RevealedCommitments"): _constant(None),
}


# --- Runtime APIs ----------------------------------------------------------------------


def _first(params: Any, name: str) -> Any:
    """Runtime params arrive as a positional list or (for swap sims) a dict."""
    return params[name] if isinstance(params, dict) else params[0]


def neuron_rows(ctx: Ctx, netuid: int) -> list[sqlite3.Row]:
    return ctx.all("SELECT * FROM neurons WHERE netuid = ? ORDER BY uid", netuid)


def _is_active(ctx: Ctx, subnet: sqlite3.Row, row: sqlite3.Row) -> bool:
    return ctx.block - int(row["last_update"]) <= int(subnet["activity_cutoff"])


def metagraph(ctx: Ctx, params: Any) -> dict[str, Any] | None:
    """The ``SubnetInfoRuntimeApi.get_metagraph`` record, in the columns the SDK decodes."""
    netuid = int(_first(params, "netuid"))
    subnet = _subnet(ctx, netuid)
    if subnet is None:
        return None
    rows = neuron_rows(ctx, netuid)
    stakes = [rules.hotkey_stake(ctx, netuid, r["hotkey"]) for r in rows]
    alpha_in = sum(stakes) or RAO_PER_TAO
    return {
        "netuid": netuid,
        "name": _text_bytes(subnet["name"]),
        "symbol": _text_bytes(subnet["symbol"]),
        "identity": None,
        "network_registered_at": int(subnet["registered_at"]),
        "owner_hotkey": subnet["owner_hotkey"],
        "owner_coldkey": subnet["owner_coldkey"],
        "block": ctx.block,
        "tempo": int(subnet["tempo"]),
        "last_step": int(subnet["last_epoch_block"]),
        "blocks_since_last_step": ctx.block - int(subnet["last_epoch_block"]),
        "subnet_emission": int(subnet["emission_per_block"]),
        # A fixed 1 TAO per alpha: the devchain has no AMM pool.
        "tao_in": alpha_in,
        "alpha_in": alpha_in,
        "moving_price": {"bits": 2**32},
        "num_uids": len(rows),
        "max_uids": int(subnet["max_uids"]),
        "max_validators": int(subnet["max_validators"]),
        "immunity_period": int(subnet["immunity_period"]),
        "weights_rate_limit": int(subnet["weights_rate_limit"]),
        "commit_reveal_weights_enabled": bool(subnet["commit_reveal"]),
        "hotkeys": [r["hotkey"] for r in rows],
        "coldkeys": [r["coldkey"] for r in rows],
        "identities": [None for _ in rows],
        "axons": [axon_info(r) for r in rows],
        "active": [_is_active(ctx, subnet, r) for r in rows],
        "validator_permit": [bool(r["validator_permit"]) for r in rows],
        "pruning_score": [int(r["incentive"]) for r in rows],
        "last_update": [int(r["last_update"]) for r in rows],
        "emission": [int(r["emission"]) for r in rows],
        "dividends": [int(r["dividends"]) for r in rows],
        "incentives": [int(r["incentive"]) for r in rows],
        "consensus": [int(r["consensus"]) for r in rows],
        "trust": [int(r["trust"]) for r in rows],
        "rank": [int(r["rank"]) for r in rows],
        "block_at_registration": [int(r["registered_at"]) for r in rows],
        "alpha_stake": stakes,
        "tao_stake": [0 for _ in rows],
        "total_stake": stakes,
    }


def _neuron_record(ctx: Ctx, subnet: sqlite3.Row, row: sqlite3.Row, *, lite: bool) -> dict[str, Any]:
    netuid = int(subnet["netuid"])
    stakes = ctx.all(
        "SELECT coldkey, alpha FROM stakes WHERE netuid = ? AND hotkey = ? ORDER BY coldkey",
        netuid,
        row["hotkey"],
    )
    record: dict[str, Any] = {
        "hotkey": row["hotkey"],
        "coldkey": row["coldkey"],
        "uid": int(row["uid"]),
        "netuid": netuid,
        "active": _is_active(ctx, subnet, row),
        "axon_info": axon_info(row),
        "prometheus_info": {"block": 0, "version": 0, "ip": 0, "port": 0, "ip_type": 4},
        "stake": [(s["coldkey"], int(s["alpha"])) for s in stakes],
        "rank": int(row["rank"]),
        "emission": int(row["emission"]),
        "incentive": int(row["incentive"]),
        "consensus": int(row["consensus"]),
        "trust": int(row["trust"]),
        "validator_trust": 0,
        "dividends": int(row["dividends"]),
        "last_update": int(row["last_update"]),
        "validator_permit": bool(row["validator_permit"]),
        "pruning_score": int(row["incentive"]),
    }
    if not lite:
        record["weights"] = _weights_row(ctx, [netuid, int(row["uid"])])
        record["bonds"] = []
    return record


def _neurons(lite: bool) -> Getter:
    def get(ctx: Ctx, params: Any) -> list[dict[str, Any]]:
        netuid = int(_first(params, "netuid"))
        subnet = _subnet(ctx, netuid)
        if subnet is None:
            return []
        return [_neuron_record(ctx, subnet, r, lite=lite) for r in neuron_rows(ctx, netuid)]

    return get


def _neuron(lite: bool) -> Getter:
    def get(ctx: Ctx, params: Any) -> dict[str, Any] | None:
        netuid, uid = (
            (int(params["netuid"]), int(params["uid"])) if isinstance(params, dict) else map(int, params)
        )
        subnet = _subnet(ctx, netuid)
        row = ctx.one("SELECT * FROM neurons WHERE netuid = ? AND uid = ?", netuid, uid)
        return None if subnet is None or row is None else _neuron_record(ctx, subnet, row, lite=lite)

    return get


# The runtime's v3 hyperparameter names, with their SCALE type tag.
_HYPERPARAMS_V3: tuple[tuple[str, str, str], ...] = (
    ("tempo", "tempo", "u16"),
    ("weights_rate_limit", "weights_rate_limit", "u64"),
    ("commit_reveal_weights_enabled", "commit_reveal", "bool"),
    ("commit_reveal_period", "reveal_period", "u64"),
    ("max_weight_limit", "max_weight_limit", "u16"),
    ("min_allowed_weights", "min_allowed_weights", "u16"),
    ("immunity_period", "immunity_period", "u16"),
    ("max_allowed_uids", "max_uids", "u16"),
    ("max_validators", "max_validators", "u16"),
    ("min_burn", "burn", "u64"),
    ("max_burn", "burn", "u64"),
    ("registration_allowed", "registration_allowed", "bool"),
    ("serving_rate_limit", "serving_rate_limit", "u64"),
    ("weights_version", "weights_version", "u64"),
    ("activity_cutoff", "activity_cutoff", "u16"),
)


def _hyperparams_v3(ctx: Ctx, params: Any) -> list[dict[str, Any]] | None:
    subnet = _subnet(ctx, _first(params, "netuid"))
    if subnet is None:
        return None
    return [
        {"name": name, "value": {tag: bool(subnet[column]) if tag == "bool" else int(subnet[column])}}
        for name, column, tag in _HYPERPARAMS_V3
    ]


def _stake_info_for_coldkey(ctx: Ctx, params: Any) -> list[dict[str, Any]]:
    coldkey = str(_first(params, "coldkey_account"))
    rows = ctx.all("SELECT * FROM stakes WHERE coldkey = ? ORDER BY netuid, hotkey", coldkey)
    return [
        {
            "hotkey": r["hotkey"],
            "coldkey": r["coldkey"],
            "netuid": int(r["netuid"]),
            "stake": int(r["alpha"]),
            "locked": 0,
            "emission": 0,
            "tao_emission": 0,
            "drain": 0,
            "is_registered": _uid_of(ctx, [r["netuid"], r["hotkey"]]) is not None,
        }
        for r in rows
    ]


def _swap(amount_key: str, result_key: str) -> Getter:
    """A swap simulation at the devchain's fixed 1:1 price, no fee, no slippage."""

    def get(ctx: Ctx, params: Any) -> dict[str, Any]:
        amount = int(params[amount_key]) if isinstance(params, dict) else int(params[1])
        return {result_key: amount, "tao_fee": 0, "alpha_fee": 0, "tao_slippage": 0, "alpha_slippage": 0}

    return get


def _next_epoch_start_block(ctx: Ctx, params: Any) -> int | None:
    subnet = _subnet(ctx, _first(params, "netuid"))
    return None if subnet is None else int(subnet["last_epoch_block"]) + int(subnet["tempo"])


RUNTIME_APIS: dict[tuple[str, str], Getter] = {
    ("SubnetInfoRuntimeApi", "get_metagraph"): metagraph,
    ("SubnetInfoRuntimeApi", "get_next_epoch_start_block"): _next_epoch_start_block,
    ("SubnetInfoRuntimeApi", "get_subnet_hyperparams_v3"): _hyperparams_v3,
    ("NeuronInfoRuntimeApi", "get_neurons_lite"): _neurons(lite=True),
    ("NeuronInfoRuntimeApi", "get_neurons"): _neurons(lite=False),
    ("NeuronInfoRuntimeApi", "get_neuron_lite"): _neuron(lite=True),
    ("NeuronInfoRuntimeApi", "get_neuron"): _neuron(lite=False),
    ("SwapRuntimeApi", "current_alpha_price"): lambda ctx, params: RAO_PER_TAO,
    ("SwapRuntimeApi", "sim_swap_tao_for_alpha"): _swap("tao", "alpha_amount"),
    ("SwapRuntimeApi", "sim_swap_alpha_for_tao"): _swap("alpha", "tao_amount"),
    ("SubnetRegistrationRuntimeApi", "get_network_registration_cost"): (
        lambda ctx, params: rules.SUBNET_LOCK_COST_RAO
    ),
    ("StakeInfoRuntimeApi", "get_stake_info_for_coldkey"): _stake_info_for_coldkey,
}


# --- Calls ---------------------------------------------------------------------------

CallHandler = Callable[[Ctx, str, dict[str, Any]], None]


def _address(value: Any) -> str:
    """A MultiAddress (``{"Id": ss58}``) or a plain ss58 string."""
    if isinstance(value, dict):
        value = value.get("Id") or next(iter(value.values()))
    return str(value)


def _burned_register(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    rules.burned_register(ctx, signer, int(args["netuid"]), _address(args["hotkey"]))


def _register_network(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    rules.create_subnet(ctx, signer, _address(args["hotkey"]), lock_rao=rules.SUBNET_LOCK_COST_RAO)


def _add_stake(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    limit = args.get("limit_price")
    if limit is not None and int(limit) < RAO_PER_TAO:
        raise rules.DispatchError("SlippageTooHigh", "the devchain's alpha price is fixed at 1 TAO")
    rules.add_stake(ctx, signer, _address(args["hotkey"]), int(args["netuid"]), int(args["amount_staked"]))


def _remove_stake(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    rules.remove_stake(
        ctx, signer, _address(args["hotkey"]), int(args["netuid"]), int(args["amount_unstaked"])
    )


def _serve_axon(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    rules.serve_axon(
        ctx,
        signer,
        int(args["netuid"]),
        ip=int(args["ip"]),
        port=int(args["port"]),
        ip_type=int(args["ip_type"]),
        protocol=int(args["protocol"]),
        version=int(args["version"]),
    )


def _set_weights(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    if int(args.get("mecid") or 0) != 0:
        raise rules.DispatchError("MechanismDoesNotExist", "the devchain runs mechanism 0 only")
    rules.set_weights(
        ctx,
        signer,
        int(args["netuid"]),
        [int(d) for d in args["dests"]],
        [int(w) for w in args["weights"]],
        int(args.get("version_key") or 0),
    )


def _commit_timelocked(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    if int(args.get("mecid") or 0) != 0:
        raise rules.DispatchError("MechanismDoesNotExist", "the devchain runs mechanism 0 only")
    commit = args["commit"]
    if isinstance(commit, str):
        commit = bytes.fromhex(commit.removeprefix("0x"))
    elif isinstance(commit, list):
        commit = bytes(commit)
    rules.commit_timelocked(
        ctx,
        signer,
        int(args["netuid"]),
        bytes(commit),
        int(args["reveal_round"]),
        int(args.get("commit_reveal_version") or 0),
    )


def _transfer(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    rules.transfer(ctx, signer, _address(args["dest"]), int(args["value"]))


def _start_call(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
    netuid = int(args["netuid"])
    subnet = rules.get_subnet(ctx, netuid)
    if subnet["owner_coldkey"] != signer:
        raise rules.DispatchError("NotSubnetOwner", "only the subnet owner may start it")
    if subnet["first_emission_block"] is not None:
        raise rules.DispatchError(
            "FirstEmissionBlockNumberAlreadySet", f"started at block {subnet['first_emission_block']}"
        )
    ctx.run("UPDATE subnets SET first_emission_block = ? WHERE netuid = ?", ctx.block + 1, netuid)
    ctx.emit("SubtensorModule", "FirstEmissionBlockNumberSet", netuid=netuid, block=ctx.block + 1)


def _sudo_setter(name: str, arg: str) -> CallHandler:
    """An AdminUtils ``sudo_set_*`` call; the devchain lets the subnet owner set every one of them."""

    def handler(ctx: Ctx, signer: str, args: dict[str, Any]) -> None:
        rules.set_hyperparameter(ctx, int(args["netuid"]), name, args[arg], caller=signer)

    return handler


CALLS: dict[tuple[str, str], CallHandler] = {
    ("SubtensorModule", "burned_register"): _burned_register,
    ("SubtensorModule", "register_network"): _register_network,
    ("SubtensorModule", "add_stake"): _add_stake,
    ("SubtensorModule", "add_stake_limit"): _add_stake,
    ("SubtensorModule", "remove_stake"): _remove_stake,
    ("SubtensorModule", "remove_stake_limit"): _remove_stake,
    ("SubtensorModule", "serve_axon"): _serve_axon,
    ("SubtensorModule", "set_weights"): _set_weights,
    ("SubtensorModule", "set_mechanism_weights"): _set_weights,
    ("SubtensorModule", "commit_timelocked_weights"): _commit_timelocked,
    ("SubtensorModule", "commit_timelocked_mechanism_weights"): _commit_timelocked,
    ("SubtensorModule", "start_call"): _start_call,
    ("Balances", "transfer_keep_alive"): _transfer,
    ("Balances", "transfer_allow_death"): _transfer,
    ("AdminUtils", "sudo_set_tempo"): _sudo_setter("tempo", "tempo"),
    ("AdminUtils", "sudo_set_weights_set_rate_limit"): _sudo_setter(
        "weights_rate_limit", "weights_set_rate_limit"
    ),
    ("AdminUtils", "sudo_set_commit_reveal_weights_enabled"): _sudo_setter(
        "commit_reveal_weights_enabled", "enabled"
    ),
    ("AdminUtils", "sudo_set_commit_reveal_weights_interval"): _sudo_setter(
        "commit_reveal_period", "interval"
    ),
    ("AdminUtils", "sudo_set_min_allowed_weights"): _sudo_setter(
        "min_allowed_weights", "min_allowed_weights"
    ),
    ("AdminUtils", "sudo_set_immunity_period"): _sudo_setter("immunity_period", "immunity_period"),
    ("AdminUtils", "sudo_set_max_allowed_uids"): _sudo_setter("max_allowed_uids", "max_allowed_uids"),
    ("AdminUtils", "sudo_set_max_allowed_validators"): _sudo_setter(
        "max_validators", "max_allowed_validators"
    ),
    ("AdminUtils", "sudo_set_serving_rate_limit"): _sudo_setter("serving_rate_limit", "serving_rate_limit"),
    ("AdminUtils", "sudo_set_weights_version_key"): _sudo_setter("weights_version", "weights_version_key"),
    ("AdminUtils", "sudo_set_network_registration_allowed"): _sudo_setter(
        "registration_allowed", "registration_allowed"
    ),
    ("AdminUtils", "sudo_set_activity_cutoff"): _sudo_setter("activity_cutoff", "activity_cutoff"),
    ("AdminUtils", "sudo_set_min_burn"): _sudo_setter("burn", "min_burn"),
}

CONSTANTS: dict[tuple[str, str], Callable[[float], Any]] = {
    ("Aura", "SlotDuration"): lambda block_time: round(block_time * 1000),
    ("Timestamp", "MinimumPeriod"): lambda block_time: round(block_time * 500),
    ("Balances", "ExistentialDeposit"): lambda block_time: EXISTENTIAL_DEPOSIT_RAO,
    ("SubtensorModule", "InitialStartCallDelay"): lambda block_time: 0,
}
