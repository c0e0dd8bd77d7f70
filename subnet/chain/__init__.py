"""The one narrow client between the subnet and the chain, over the bittensor 11 SDK.

Everything the neurons need from the chain goes through :class:`ChainClient`: the block
and its hash, tempo and the next epoch, the metagraph, registration, serving the axon and
setting weights. Tests replace it whole, or hand it a substrate of their own.

- ``client.py``: :class:`ChainClient` (connection, retries with backoff, reads, writes)
- ``errors.py``: the typed :class:`ChainError` family; the SDK's errors become these, and
  their messages are one readable line
- ``types.py``: what callers get back (:class:`Neuron`, :class:`Metagraph`, :class:`WeightsResult`)
- ``axon.py``: which addresses may be published, and how the metagraph's are read
- ``__main__.py``: ``python -m subnet.chain register``
"""

from subnet.chain.client import DEVCHAIN_LABEL, TRANSIENT_ERRORS, ChainClient, SubstrateFactory
from subnet.chain.errors import (
    ChainError,
    ChainRejected,
    ChainUnavailable,
    NotRegistered,
    RegistrationRejected,
    ServeRejected,
    SubnetNotFound,
    WeightsRejected,
    WeightsTooSoon,
)
from subnet.chain.types import Metagraph, Neuron, WeightsPath, WeightsResult

__all__ = [
    "DEVCHAIN_LABEL",
    "TRANSIENT_ERRORS",
    "ChainClient",
    "ChainError",
    "ChainRejected",
    "ChainUnavailable",
    "Metagraph",
    "Neuron",
    "NotRegistered",
    "RegistrationRejected",
    "ServeRejected",
    "SubnetNotFound",
    "SubstrateFactory",
    "WeightsPath",
    "WeightsRejected",
    "WeightsResult",
    "WeightsTooSoon",
]
