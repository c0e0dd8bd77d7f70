"""Local development chain: the bittensor SDK's ``Substrate`` protocol backed by one SQLite file.

``DevChain`` is what ``--subtensor.network dev`` runs on and what the test
suite uses; ``python -m subnet.devchain status|reset`` inspects or restarts it.
"""

from subnet.devchain.chain import DEFAULT_BLOCK_TIME, ComposedCall, DevChain, default_path, dev_keypair
from subnet.devchain.rules import HYPERPARAMETERS, RAO_PER_TAO, DispatchError
from subnet.devchain.store import StoreError

__all__ = [
    "DEFAULT_BLOCK_TIME",
    "HYPERPARAMETERS",
    "RAO_PER_TAO",
    "ComposedCall",
    "DevChain",
    "DispatchError",
    "StoreError",
    "default_path",
    "dev_keypair",
]
