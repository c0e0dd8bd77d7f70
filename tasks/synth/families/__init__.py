"""Synthesised tool families, one module each: see ``tasks.synth``."""
