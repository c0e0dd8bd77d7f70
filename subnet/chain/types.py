"""The values the chain client hands to callers: neurons, the metagraph, an accepted weight submission."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from subnet.chain.axon import split_axon


@dataclass(frozen=True)
class Neuron:
    """One uid of the subnet as the neurons need it.

    ``stake`` is the neuron's total stake as the chain's metagraph reports it, in the
    subnet's own units (alpha on dynamic-TAO subnets, TAO-equivalent on the devchain).
    """

    uid: int
    hotkey: str
    coldkey: str
    stake: float
    validator_permit: bool
    axon_ip: str
    axon_port: int
    last_update: int
    incentive: float

    @property
    def is_serving(self) -> bool:
        return self.axon_port > 0 and self.axon_ip not in {"", "0.0.0.0", "::"}


@dataclass(frozen=True)
class Metagraph:
    """The subnet at one block."""

    netuid: int
    block: int
    tempo: int
    neurons: list[Neuron] = field(default_factory=list)

    def by_hotkey(self, hotkey: str) -> Neuron | None:
        return next((neuron for neuron in self.neurons if neuron.hotkey == hotkey), None)

    def __len__(self) -> int:
        return len(self.neurons)

    def __iter__(self) -> Iterator[Neuron]:
        return iter(self.neurons)


WeightsPath = Literal["direct", "commit_reveal"]


@dataclass(frozen=True)
class WeightsResult:
    """A weight submission the chain accepted.

    ``path`` says how the SDK submitted them: ``direct`` (plain ``set_weights``) or
    ``commit_reveal`` (a timelocked commit the chain reveals at drand round ``reveal_round``).
    """

    path: WeightsPath
    block: int
    uids: tuple[int, ...]
    weights: tuple[float, ...]
    version_key: int
    extrinsic_id: str | None = None
    reveal_round: int | None = None
    message: str = ""


def metagraph_from_sdk(graph: Any) -> Metagraph:
    """The SDK's metagraph (``client.subnets.metagraph``) as the :class:`Metagraph` callers get."""
    neurons = []
    for row in graph.neurons:
        ip, port = split_axon(row.axon)
        neurons.append(
            Neuron(
                uid=int(row.uid),
                hotkey=str(row.hotkey),
                coldkey=str(row.coldkey),
                stake=float(row.total_stake.amount),
                validator_permit=bool(row.validator_permit),
                axon_ip=ip,
                axon_port=port,
                last_update=int(row.last_update),
                incentive=float(row.incentive),
            )
        )
    return Metagraph(
        netuid=int(graph.netuid), block=int(graph.block), tempo=int(graph.tempo), neurons=neurons
    )
