"""The validator node: round pipeline, score state, weights, jobs, recovery (see docs/validator.md)."""
