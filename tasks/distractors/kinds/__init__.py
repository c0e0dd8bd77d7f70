"""Distractor kinds, one module each: see ``tasks.distractors``."""
