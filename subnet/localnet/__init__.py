"""The embedded local network: one command runs the whole subnet on this machine.

    python -m subnet.localnet --miners 3 --rounds 2

Creates development wallets and a devchain file in a state directory, bootstraps the subnet
with :mod:`subnet.bootstrap`, starts one validator and N miners (the demo model, each in a
different output format) as separate OS processes on loopback, shows progress, and ends with
a leaderboard read from the validator's database and the devchain. Ctrl-C stops every child.

Parts: :mod:`.settings` (flags), :mod:`.state` (the state directory), :mod:`.processes`
(child processes and their shutdown), :mod:`.progress` (what the validator is doing),
:mod:`.leaderboard` (the final table), :mod:`.run` (the orchestration, ``main``).
"""
