"""Runtime shared by the subnet's miner and validator.

Config, chain client, wire protocol, transport and persistence.
"""
