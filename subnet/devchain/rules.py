"""The devchain's chain rules: registration, staking, serving, weights and epochs.

Every function here runs inside one write transaction of the store (a
:class:`Ctx`), raises :class:`DispatchError` with the *real* subtensor error
name when a rule refuses (so the SDK maps it to its own typed error), and
records the events the real pallet would emit.

Incentive is a documented simplification of Yuma consensus (see
docs/devchain.md): validators are the top-stake permit holders; a miner's
incentive is the stake-weighted mean of the validators' normalised weight
rows (self-weights masked), a validator's dividends follow its stake times
the incentive its weights pointed at. No bonds, no clipping to consensus.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

RAO_PER_TAO = 10**9
U16_MAX = 65535
# The chain's minimum stake operation (0.002 TAO).
MIN_STAKE_RAO = 2_000_000
MAX_UNREVEALED_COMMITS = 10
SUBNET_LOCK_COST_RAO = 100 * RAO_PER_TAO
DEV_ACCOUNT_BALANCE_RAO = 1_000_000 * RAO_PER_TAO
DEV_ACCOUNT_URIS = ("//Alice", "//Bob", "//Charlie", "//Dave", "//Eve", "//Ferdie")


class DispatchError(Exception):
    """A chain rule refused the call; ``name`` is the subtensor error name."""

    def __init__(self, name: str, detail: str = "") -> None:
        super().__init__(f"{name}: {detail}" if detail else name)
        self.name = name
        self.detail = detail


@dataclass
class Ctx:
    """One transaction's view: the connection, the current block and the events so far."""

    conn: sqlite3.Connection
    block: int
    timestamp_ms: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)

    def emit(self, module: str, event: str, **attributes: Any) -> None:
        self.events.append({"module_id": module, "event_id": event, "attributes": attributes})

    def one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.conn.execute(sql, args).fetchone()
        return row

    def all(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return list(self.conn.execute(sql, args).fetchall())

    def run(self, sql: str, *args: Any) -> None:
        self.conn.execute(sql, args)


# --- Hyperparameters ---------------------------------------------------------------


@dataclass(frozen=True)
class Hyperparameter:
    """One subnet hyperparameter: its column, how values are coerced, its default."""

    column: str
    default: int
    cast: Callable[[Any], int] = int
    doc: str = ""


def _flag(value: Any) -> int:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return 1
        if lowered in {"0", "false", "no", "off"}:
            return 0
        raise ValueError(f"expected true/false, got {value!r}")
    return 1 if bool(value) else 0


# Names follow the SDK's hyperparameter names (bt.SetHyperparameter, btcli).
HYPERPARAMETERS: dict[str, Hyperparameter] = {
    "tempo": Hyperparameter("tempo", 60, doc="blocks per epoch"),
    "weights_rate_limit": Hyperparameter("weights_rate_limit", 10, doc="blocks between weight sets"),
    "commit_reveal_weights_enabled": Hyperparameter("commit_reveal", 0, _flag, "timelocked commits"),
    "commit_reveal_period": Hyperparameter("reveal_period", 1, doc="reveal period in epochs"),
    "max_weight_limit": Hyperparameter("max_weight_limit", U16_MAX, doc="largest share of one weight"),
    "min_allowed_weights": Hyperparameter("min_allowed_weights", 1, doc="fewest non-zero weights"),
    "immunity_period": Hyperparameter("immunity_period", 100, doc="blocks a new uid is protected"),
    "max_allowed_uids": Hyperparameter("max_uids", 256, doc="uids before replacement starts"),
    "max_validators": Hyperparameter("max_validators", 64, doc="validator permits (top stake)"),
    "burn": Hyperparameter("burn", RAO_PER_TAO, doc="registration cost in rao"),
    "registration_allowed": Hyperparameter("registration_allowed", 1, _flag, "burned registration"),
    "serving_rate_limit": Hyperparameter("serving_rate_limit", 0, doc="blocks between serve_axon"),
    "weights_version": Hyperparameter("weights_version", 0, doc="minimum weights version key"),
    "activity_cutoff": Hyperparameter("activity_cutoff", 5000, doc="blocks before a uid is inactive"),
    "emission_per_block": Hyperparameter("emission_per_block", RAO_PER_TAO, doc="alpha rao per block"),
}


def set_hyperparameter(ctx: Ctx, netuid: int, name: str, value: Any, caller: str | None = None) -> None:
    spec = HYPERPARAMETERS.get(name)
    if spec is None:
        raise ValueError(f"unknown hyperparameter {name!r}; known: {', '.join(sorted(HYPERPARAMETERS))}")
    subnet = get_subnet(ctx, netuid)
    if caller is not None and caller != subnet["owner_coldkey"]:
        raise DispatchError("BadOrigin", "only the subnet owner may change its hyperparameters")
    raw = spec.cast(value)
    if raw < 0:
        raise ValueError(f"{name} must be non-negative, got {value!r}")
    if name == "tempo" and raw == 0:
        raise ValueError("tempo must be at least 1")
    ctx.run(f"UPDATE subnets SET {spec.column} = ? WHERE netuid = ?", raw, netuid)
    if name == "max_validators":
        update_permits(ctx, netuid)
    ctx.emit("SubtensorModule", "HyperparameterSet", netuid=netuid, name=name, value=raw)


# --- Accounts ------------------------------------------------------------------------


def balance(ctx: Ctx, address: str) -> int:
    row = ctx.one("SELECT free FROM accounts WHERE address = ?", address)
    return int(row["free"]) if row else 0


def credit(ctx: Ctx, address: str, rao: int) -> None:
    ctx.run(
        "INSERT INTO accounts (address, free) VALUES (?, ?) "
        "ON CONFLICT (address) DO UPDATE SET free = free + excluded.free",
        address,
        rao,
    )


def debit(ctx: Ctx, address: str, rao: int, error: str = "NotEnoughBalanceToStake") -> None:
    if balance(ctx, address) < rao:
        raise DispatchError(error, f"{address} holds less than {rao / RAO_PER_TAO} TAO")
    ctx.run("UPDATE accounts SET free = free - ? WHERE address = ?", rao, address)


def transfer(ctx: Ctx, source: str, dest: str, rao: int) -> None:
    if rao <= 0:
        raise DispatchError("ExistentialDeposit", "transfer amount must be positive")
    debit(ctx, source, rao, error="InsufficientBalance")
    credit(ctx, dest, rao)
    ctx.emit("Balances", "Transfer", **{"from": source, "to": dest, "amount": rao})


# --- Subnets -------------------------------------------------------------------------


def get_subnet(ctx: Ctx, netuid: int) -> sqlite3.Row:
    row = ctx.one("SELECT * FROM subnets WHERE netuid = ?", netuid)
    if row is None:
        raise DispatchError("SubnetNotExists", f"netuid {netuid} does not exist")
    return row


def create_subnet(
    ctx: Ctx,
    owner_coldkey: str,
    owner_hotkey: str,
    *,
    netuid: int | None = None,
    lock_rao: int = 0,
    name: str = "",
    symbol: str = "",
    hyperparameters: dict[str, Any] | None = None,
) -> int:
    """Create a subnet; like subtensor, the owner hotkey becomes uid 0."""
    if netuid is None:
        row = ctx.one("SELECT COALESCE(MAX(netuid), 0) + 1 AS next FROM subnets")
        netuid = int(row["next"]) if row else 1
    elif netuid <= 0 or netuid > U16_MAX:
        raise ValueError(f"netuid must be in 1..{U16_MAX}, got {netuid}")
    elif ctx.one("SELECT 1 FROM subnets WHERE netuid = ?", netuid):
        raise ValueError(f"netuid {netuid} already exists")
    claim_hotkey(ctx, owner_hotkey, owner_coldkey)
    if lock_rao:
        debit(ctx, owner_coldkey, lock_rao, error="CannotAffordLockCost")
    values = {spec.column: spec.default for spec in HYPERPARAMETERS.values()}
    ctx.run(
        "INSERT INTO subnets (netuid, owner_coldkey, owner_hotkey, registered_at, name, symbol, locked, "
        + ", ".join(values)
        + ", last_epoch_block) VALUES (?, ?, ?, ?, ?, ?, ?, "
        + ", ".join("?" for _ in values)
        + ", ?)",
        netuid,
        owner_coldkey,
        owner_hotkey,
        ctx.block,
        name or f"devnet{netuid}",
        symbol or f"α{netuid}",
        lock_rao,
        *values.values(),
        ctx.block,
    )
    for key, value in (hyperparameters or {}).items():
        set_hyperparameter(ctx, netuid, key, value)
    _append_neuron(ctx, netuid, 0, owner_hotkey, owner_coldkey)
    ctx.emit("SubtensorModule", "NetworkAdded", netuid=netuid, mechanism=1)
    return netuid


# --- Registration --------------------------------------------------------------------


def claim_hotkey(ctx: Ctx, hotkey: str, coldkey: str) -> None:
    """Bind a hotkey to its coldkey on first use; refuse another coldkey's hotkey."""
    row = ctx.one("SELECT coldkey FROM hotkeys WHERE hotkey = ?", hotkey)
    if row is None:
        ctx.run("INSERT INTO hotkeys (hotkey, coldkey) VALUES (?, ?)", hotkey, coldkey)
    elif row["coldkey"] != coldkey:
        raise DispatchError("NonAssociatedColdKey", f"hotkey {hotkey} belongs to another coldkey")


def _append_neuron(ctx: Ctx, netuid: int, uid: int, hotkey: str, coldkey: str) -> None:
    ctx.run(
        "INSERT INTO neurons (netuid, uid, hotkey, coldkey, registered_at, last_update) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        netuid,
        uid,
        hotkey,
        coldkey,
        ctx.block,
        ctx.block,
    )


def burned_register(ctx: Ctx, coldkey: str, netuid: int, hotkey: str) -> int:
    """Pay the burn and take a uid: the next free one, else replace the weakest unprotected."""
    subnet = get_subnet(ctx, netuid)
    if not subnet["registration_allowed"]:
        raise DispatchError("SubNetRegistrationDisabled", f"registration is closed on netuid {netuid}")
    if ctx.one("SELECT 1 FROM neurons WHERE netuid = ? AND hotkey = ?", netuid, hotkey):
        raise DispatchError("HotKeyAlreadyRegisteredInSubNet", f"{hotkey} already has a uid")
    claim_hotkey(ctx, hotkey, coldkey)
    debit(ctx, coldkey, int(subnet["burn"]))
    count = int(ctx.one("SELECT COUNT(*) AS n FROM neurons WHERE netuid = ?", netuid)["n"])  # type: ignore[index]
    if count < int(subnet["max_uids"]):
        uid = count
    else:
        uid = _uid_to_replace(ctx, subnet)
        _clear_uid(ctx, netuid, uid)
    _append_neuron(ctx, netuid, uid, hotkey, coldkey)
    update_permits(ctx, netuid)
    ctx.emit("SubtensorModule", "NeuronRegistered", netuid=netuid, uid=uid, hotkey=hotkey)
    return uid


def _uid_to_replace(ctx: Ctx, subnet: sqlite3.Row) -> int:
    """Lowest incentive among neurons past immunity; older registration, then lower uid, breaks ties."""
    row = ctx.one(
        "SELECT uid FROM neurons WHERE netuid = ? AND registered_at + ? <= ? AND hotkey != ? "
        "ORDER BY incentive ASC, registered_at ASC, uid ASC LIMIT 1",
        subnet["netuid"],
        subnet["immunity_period"],
        ctx.block,
        subnet["owner_hotkey"],
    )
    if row is None:
        raise DispatchError(
            "NoNeuronIdAvailable", f"netuid {subnet['netuid']} is full and every uid is still immune"
        )
    return int(row["uid"])


def _clear_uid(ctx: Ctx, netuid: int, uid: int) -> None:
    """A replaced uid starts fresh: no row, no weights to or from it, no pending commits."""
    old = ctx.one("SELECT hotkey FROM neurons WHERE netuid = ? AND uid = ?", netuid, uid)
    if old is not None:
        ctx.run("DELETE FROM weight_commits WHERE netuid = ? AND hotkey = ?", netuid, old["hotkey"])
        ctx.emit("SubtensorModule", "NeuronDeregistered", netuid=netuid, uid=uid, hotkey=old["hotkey"])
    ctx.run("DELETE FROM neurons WHERE netuid = ? AND uid = ?", netuid, uid)
    ctx.run("DELETE FROM weights WHERE netuid = ? AND (uid = ? OR dest = ?)", netuid, uid, uid)


def neuron(ctx: Ctx, netuid: int, hotkey: str) -> sqlite3.Row:
    get_subnet(ctx, netuid)
    row = ctx.one("SELECT * FROM neurons WHERE netuid = ? AND hotkey = ?", netuid, hotkey)
    if row is None:
        raise DispatchError("HotKeyNotRegisteredInSubNet", f"{hotkey} is not registered on netuid {netuid}")
    return row


# --- Staking -------------------------------------------------------------------------


def hotkey_stake(ctx: Ctx, netuid: int, hotkey: str) -> int:
    row = ctx.one(
        "SELECT COALESCE(SUM(alpha), 0) AS total FROM stakes WHERE netuid = ? AND hotkey = ?", netuid, hotkey
    )
    return int(row["total"]) if row else 0


def add_stake(ctx: Ctx, coldkey: str, hotkey: str, netuid: int, rao: int) -> None:
    """Stake TAO at a fixed 1:1 alpha price (the devchain has no AMM)."""
    get_subnet(ctx, netuid)
    if ctx.one("SELECT 1 FROM hotkeys WHERE hotkey = ?", hotkey) is None:
        raise DispatchError("HotKeyAccountNotExists", f"{hotkey} is not a known hotkey")
    if rao < MIN_STAKE_RAO:
        raise DispatchError("AmountTooLow", f"stake at least {MIN_STAKE_RAO / RAO_PER_TAO} TAO")
    debit(ctx, coldkey, rao)
    ctx.run(
        "INSERT INTO stakes (hotkey, coldkey, netuid, alpha) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (hotkey, coldkey, netuid) DO UPDATE SET alpha = alpha + excluded.alpha",
        hotkey,
        coldkey,
        netuid,
        rao,
    )
    update_permits(ctx, netuid)
    ctx.emit(
        "SubtensorModule", "StakeAdded", coldkey=coldkey, hotkey=hotkey, tao=rao, alpha=rao, netuid=netuid
    )


def remove_stake(ctx: Ctx, coldkey: str, hotkey: str, netuid: int, alpha: int) -> None:
    get_subnet(ctx, netuid)
    row = ctx.one(
        "SELECT alpha FROM stakes WHERE hotkey = ? AND coldkey = ? AND netuid = ?", hotkey, coldkey, netuid
    )
    held = int(row["alpha"]) if row else 0
    if alpha <= 0 or alpha > held:
        raise DispatchError("NotEnoughStakeToWithdraw", f"{coldkey} holds {held} alpha rao on {hotkey}")
    ctx.run(
        "UPDATE stakes SET alpha = alpha - ? WHERE hotkey = ? AND coldkey = ? AND netuid = ?",
        alpha,
        hotkey,
        coldkey,
        netuid,
    )
    ctx.run("DELETE FROM stakes WHERE alpha = 0")
    credit(ctx, coldkey, alpha)
    update_permits(ctx, netuid)
    ctx.emit("SubtensorModule", "StakeRemoved", coldkey=coldkey, hotkey=hotkey, tao=alpha, netuid=netuid)


def update_permits(ctx: Ctx, netuid: int) -> None:
    """Validator permits go to the ``max_validators`` registered neurons with the most (non-zero) stake."""
    subnet = get_subnet(ctx, netuid)
    ranked = ctx.all(
        "SELECT n.uid, COALESCE(SUM(s.alpha), 0) AS stake FROM neurons n "
        "LEFT JOIN stakes s ON s.netuid = n.netuid AND s.hotkey = n.hotkey "
        "WHERE n.netuid = ? GROUP BY n.uid ORDER BY stake DESC, n.uid ASC",
        netuid,
    )
    permitted = {int(r["uid"]) for r in ranked[: int(subnet["max_validators"])] if int(r["stake"]) > 0}
    for r in ranked:
        ctx.run(
            "UPDATE neurons SET validator_permit = ? WHERE netuid = ? AND uid = ?",
            int(int(r["uid"]) in permitted),
            netuid,
            r["uid"],
        )


# --- Serving -------------------------------------------------------------------------


def serve_axon(
    ctx: Ctx, hotkey: str, netuid: int, *, ip: int, port: int, ip_type: int, protocol: int, version: int
) -> None:
    row = neuron(ctx, netuid, hotkey)
    if ip_type not in (4, 6):
        raise DispatchError("InvalidIpType", f"ip_type must be 4 or 6, got {ip_type}")
    if ip < 0 or (ip_type == 4 and ip >= 2**32) or ip >= 2**128:
        raise DispatchError("InvalidIpAddress", f"{ip} is not an IPv{ip_type} address")
    if not 0 <= port <= U16_MAX:
        raise DispatchError("InvalidPort", f"port {port} is out of range")
    limit = int(get_subnet(ctx, netuid)["serving_rate_limit"])
    if limit and row["axon_block"] and ctx.block - int(row["axon_block"]) < limit:
        raise DispatchError("ServingRateLimitExceeded", f"served {ctx.block - row['axon_block']} blocks ago")
    ctx.run(
        "UPDATE neurons SET axon_ip = ?, axon_port = ?, axon_ip_type = ?, axon_protocol = ?, "
        "axon_version = ?, axon_block = ? WHERE netuid = ? AND hotkey = ?",
        str(ip),
        port,
        ip_type,
        protocol,
        version,
        ctx.block,
        netuid,
        hotkey,
    )
    ctx.emit("SubtensorModule", "AxonServed", netuid=netuid, hotkey=hotkey)


# --- Weights -------------------------------------------------------------------------


def _check_rate_limit(ctx: Ctx, subnet: sqlite3.Row, row: sqlite3.Row) -> None:
    limit = int(subnet["weights_rate_limit"])
    since = ctx.block - int(row["last_update"])
    if limit and int(row["last_update"]) > 0 and since < limit:
        raise DispatchError("SettingWeightsTooFast", f"last set {since} blocks ago; the limit is {limit}")


def set_weights(
    ctx: Ctx, hotkey: str, netuid: int, dests: list[int], values: list[int], version_key: int
) -> None:
    """Validate like subtensor's do_set_weights, then store the max-upscaled u16 row."""
    subnet = get_subnet(ctx, netuid)
    if len(dests) != len(values):
        raise DispatchError("WeightVecNotEqualSize", f"{len(dests)} uids vs {len(values)} weights")
    row = neuron(ctx, netuid, hotkey)
    uid = int(row["uid"])
    if version_key < int(subnet["weights_version"]):
        raise DispatchError(
            "IncorrectWeightVersionKey", f"version {version_key} < {subnet['weights_version']}"
        )
    if subnet["commit_reveal"]:
        raise DispatchError("CommitRevealEnabled", f"netuid {netuid} takes timelocked commits only")
    _check_rate_limit(ctx, subnet, row)
    is_self_weight = dests == [uid]
    if not is_self_weight and not row["validator_permit"]:
        raise DispatchError("NeuronNoValidatorPermit", f"uid {uid} holds no validator permit")
    if len(set(dests)) != len(dests):
        raise DispatchError("DuplicateUids", "each uid may appear once")
    count = int(ctx.one("SELECT COUNT(*) AS n FROM neurons WHERE netuid = ?", netuid)["n"])  # type: ignore[index]
    if any(d < 0 or d >= count for d in dests) or any(v < 0 or v > U16_MAX for v in values):
        raise DispatchError("UidVecContainInvalidOne", f"uids must be in 0..{count - 1}")
    if not is_self_weight and len(dests) < int(subnet["min_allowed_weights"]):
        raise DispatchError("WeightVecLengthIsLow", f"at least {subnet['min_allowed_weights']} weights")
    total = sum(values)
    if not is_self_weight and total and max(values) * U16_MAX > int(subnet["max_weight_limit"]) * total:
        raise DispatchError("MaxWeightExceeded", "one weight exceeds the subnet's max_weight_limit")
    top = max(values) if values else 0
    ctx.run("DELETE FROM weights WHERE netuid = ? AND uid = ?", netuid, uid)
    for dest, value in zip(dests, values, strict=True):
        scaled = round(value * U16_MAX / top) if top else 0
        if scaled:
            ctx.run(
                "INSERT INTO weights (netuid, uid, dest, value) VALUES (?, ?, ?, ?)",
                netuid,
                uid,
                dest,
                scaled,
            )
    ctx.run("UPDATE neurons SET last_update = ? WHERE netuid = ? AND uid = ?", ctx.block, netuid, uid)
    ctx.emit("SubtensorModule", "WeightsSet", netuid=netuid, uid=uid)


def commit_timelocked(
    ctx: Ctx, hotkey: str, netuid: int, ciphertext: bytes, reveal_round: int, version: int
) -> None:
    """Record a timelocked commit. The devchain cannot reveal it: there is no drand beacon offline."""
    subnet = get_subnet(ctx, netuid)
    row = neuron(ctx, netuid, hotkey)
    if not subnet["commit_reveal"]:
        raise DispatchError("CommitRevealDisabled", f"commit-reveal is off on netuid {netuid}")
    _check_rate_limit(ctx, subnet, row)
    pending = ctx.one(
        "SELECT COUNT(*) AS n FROM weight_commits WHERE netuid = ? AND hotkey = ?", netuid, hotkey
    )
    if pending is not None and int(pending["n"]) >= MAX_UNREVEALED_COMMITS:
        raise DispatchError("TooManyUnrevealedCommits", f"{MAX_UNREVEALED_COMMITS} commits are pending")
    ctx.run(
        "INSERT INTO weight_commits (netuid, hotkey, epoch, commit_block, ciphertext, reveal_round, version) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        netuid,
        hotkey,
        int(subnet["epoch_index"]),
        ctx.block,
        "0x" + bytes(ciphertext).hex(),
        reveal_round,
        version,
    )
    ctx.run("UPDATE neurons SET last_update = ? WHERE netuid = ? AND hotkey = ?", ctx.block, netuid, hotkey)
    ctx.emit(
        "SubtensorModule",
        "TimelockedWeightsCommitted",
        hotkey=hotkey,
        netuid=netuid,
        reveal_round=reveal_round,
    )


# --- Epochs --------------------------------------------------------------------------


def epochs_due(ctx: Ctx) -> bool:
    return ctx.one("SELECT 1 FROM subnets WHERE last_epoch_block + tempo <= ? LIMIT 1", ctx.block) is not None


def run_due_epochs(ctx: Ctx) -> None:
    """Catch every subnet up to the current block (epochs are lazy: no block producer runs them)."""
    for subnet in ctx.all("SELECT * FROM subnets WHERE last_epoch_block + tempo <= ?", ctx.block):
        tempo = int(subnet["tempo"])
        elapsed = (ctx.block - int(subnet["last_epoch_block"])) // tempo
        run_epoch(ctx, subnet)
        ctx.run(
            "UPDATE subnets SET last_epoch_block = last_epoch_block + ?, epoch_index = epoch_index + ? "
            "WHERE netuid = ?",
            elapsed * tempo,
            elapsed,
            subnet["netuid"],
        )


def _to_u16(fractions: dict[int, float]) -> dict[int, int]:
    return {uid: round(share * U16_MAX) for uid, share in fractions.items()}


def _normalised(values: dict[int, float]) -> dict[int, float]:
    total = sum(values.values())
    return {k: v / total for k, v in values.items()} if total > 0 else {k: 0.0 for k in values}


def compute_scores(
    stakes: dict[int, int], permits: set[int], rows: dict[int, dict[int, int]], uids: list[int]
) -> tuple[dict[int, float], dict[int, float]]:
    """(incentive, dividends) per uid, each summing to 1 (or all zero).

    ``rows`` are the stored u16 weight rows by validator uid. Only permit
    holders with stake count; self-weights are masked as Yuma masks the
    diagonal.
    """
    validators = {v: float(stakes.get(v, 0)) for v in permits if stakes.get(v, 0) > 0 and rows.get(v)}
    stake_share = _normalised(validators)
    incentive = dict.fromkeys(uids, 0.0)
    normalised_rows: dict[int, dict[int, float]] = {}
    for v, share in stake_share.items():
        row = {dest: float(w) for dest, w in rows[v].items() if dest != v and dest in incentive}
        normalised_rows[v] = _normalised(row)
        for dest, weight in normalised_rows[v].items():
            incentive[dest] += share * weight
    incentive = _normalised(incentive)
    dividends = dict.fromkeys(uids, 0.0)
    for v, share in stake_share.items():
        dividends[v] = share * sum(w * incentive[dest] for dest, w in normalised_rows[v].items())
    return incentive, _normalised(dividends)


def run_epoch(ctx: Ctx, subnet: sqlite3.Row) -> None:
    netuid = int(subnet["netuid"])
    neurons = ctx.all(
        "SELECT uid, hotkey, validator_permit FROM neurons WHERE netuid = ? ORDER BY uid", netuid
    )
    uids = [int(n["uid"]) for n in neurons]
    stakes = {int(n["uid"]): hotkey_stake(ctx, netuid, n["hotkey"]) for n in neurons}
    permits = {int(n["uid"]) for n in neurons if n["validator_permit"]}
    rows: dict[int, dict[int, int]] = {}
    for w in ctx.all("SELECT uid, dest, value FROM weights WHERE netuid = ?", netuid):
        rows.setdefault(int(w["uid"]), {})[int(w["dest"])] = int(w["value"])
    incentive, dividends = compute_scores(stakes, permits, rows, uids)
    epoch_emission = int(subnet["emission_per_block"]) * int(subnet["tempo"])
    incentive_u16, dividends_u16 = _to_u16(incentive), _to_u16(dividends)
    for uid in uids:
        # Half to miners by incentive, half to validators by dividends (no owner cut here).
        emission = int(epoch_emission * (incentive[uid] + dividends[uid]) / 2)
        ctx.run(
            "UPDATE neurons SET incentive = ?, rank = ?, consensus = ?, trust = ?, dividends = ?, "
            "emission = ? WHERE netuid = ? AND uid = ?",
            incentive_u16[uid],
            incentive_u16[uid],
            incentive_u16[uid],
            U16_MAX if incentive[uid] > 0 else 0,
            dividends_u16[uid],
            emission,
            netuid,
            uid,
        )
    ctx.emit("SubtensorModule", "EpochRun", netuid=netuid, block=ctx.block)
