"""The validator node: round pipeline, score state, weights, scheduled jobs, recovery (see docs/validator.md)."""
