"""Everyday wording: interchangeable phrases of the library's parameter and tool descriptions."""

from __future__ import annotations

from tasks.rewrite.model import RuleSet

RULES = RuleSet(
    "wording",
    phrases=(
        ("number of", "count of", "how many"),
        ("the user's", "the caller's", "your"),
        ("identifier", "ID", "reference"),
        ("e.g.", "for example", "such as"),
        ("when left out", "if omitted", "when not given"),
        ("today", "the current day"),
        ("email address", "e-mail address", "mail address"),
        ("email addresses", "e-mail addresses", "mail addresses"),
        ("look for", "search for", "find"),
        ("text", "wording"),
        ("city", "town"),
        ("departure", "leaving"),
        ("people", "persons", "individuals"),
        ("kind of", "type of", "sort of"),
        ("in meters", "in metres", "measured in meters"),
        ("in percent", "as a percentage", "in per cent"),
        ("in minutes", "measured in minutes", "as minutes"),
        ("in seconds", "measured in seconds", "as seconds"),
        ("in degrees", "measured in degrees"),
        ("only", "solely", "just"),
        ("several", "multiple", "a few"),
        ("large", "big"),
        ("wanted", "desired", "requested"),
        ("to run", "to execute"),
        ("workspace", "work area", "project folder"),
        ("message", "note"),
        ("day", "date"),
    ),
)
