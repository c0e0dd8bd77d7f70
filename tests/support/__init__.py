"""Test equipment: for the tests and the benchmarks, never the neurons (nothing under scoring/,
tasks/, subnet/ or neurons/ imports it; tests/validator/test_testing_module.py holds that).

- :mod:`tests.support.simulation`: simulated miners with personalities on the real
  transport, a devchain subnet builder, and a validator's argv from its settings.
- :mod:`tests.support.postgres`: a throwaway PostgreSQL cluster (initdb + pg_ctl in tmp).
- :mod:`tests.support.processes`: the sandbox's worker processes, as the OS lists them.

The benchmarks that use it (bench/validator.py, bench/stall.py) put the repository root on
``sys.path`` to import it.
"""
