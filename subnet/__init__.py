"""Runtime shared by the subnet's miner and validator: config, chain client, wire protocol, transport, persistence."""
