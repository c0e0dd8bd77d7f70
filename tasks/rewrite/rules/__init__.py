"""Rewrite rule sets, one module each: see ``tasks.rewrite``."""
