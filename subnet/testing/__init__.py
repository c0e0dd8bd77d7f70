"""Test equipment shipped with the package: for the tests, the benchmarks and simulations, never the neurons.

- :mod:`subnet.testing.simulation`: simulated miners with personalities on the real
  transport, a devchain subnet builder, and a validator's argv from its settings.
- :mod:`subnet.testing.postgres`: a throwaway PostgreSQL cluster (initdb + pg_ctl in tmp).

It lives in the package rather than under tests/ because bench/validator.py uses both
(``python bench/validator.py`` cannot import from tests/, which is not a package). Nothing
else under subnet/ and no neuron imports it (tests/validator/test_testing_module.py holds that).
"""
