"""Format hints: the same date, time and code formats, said another way."""

from __future__ import annotations

from tasks.rewrite.model import RuleSet

RULES = RuleSet(
    "formats",
    phrases=(
        ("YYYY-MM-DD", "year-month-day", "ISO 8601 (YYYY-MM-DD)", "as YYYY-MM-DD"),
        ("HH:MM", "hours:minutes", "HH:MM form", "hh:mm"),
        ("24-hour clock", "24h format", "twenty-four-hour clock"),
        ("ISO code", "ISO 4217 code", "three-letter code"),
        ("international format", "E.164 style", "full international form"),
        ("km/h", "kilometres per hour", "kilometers an hour"),
        ("kilograms", "kg"),
        ("centimeters", "cm"),
        ("milligrams", "mg"),
    ),
)
