"""Gardens and allotments: watering plans and harvest records."""

from __future__ import annotations

from tasks.library.common import DAY, opt, req
from tasks.synth.common import compose
from tasks.synth.model import THING, Action, Family
from tasks.value_generators import ClockTime, Decimal, Integer, ListOf, Pick, option, words

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_OF_WEEK = Pick(tuple(option(day, say=day.capitalize()) for day in _WEEKDAYS))
_CROP = words("tomatoes", "courgettes", "strawberries", "apples", "basil", "runner beans", "honey")

FAMILY = Family(
    "garden",
    compose(
        ("north", "south", "rooftop", "back", "community"),
        ("tomato bed", "greenhouse", "orchard row", "herb planter", "berry patch", "lawn"),
    ),
    (
        Action(
            f"schedule_{THING}_watering",
            f"Sets a weekly watering plan for the {THING}.",
            (
                req(
                    "liters",
                    "integer",
                    "Water per run, in litres.",
                    Integer(2, 60, "{} litres", vague=("the usual amount", "as much as last time")),
                ),
                req(
                    "days",
                    "array",
                    "Weekdays to water on.",
                    ListOf(_DAY_OF_WEEK, 1, 3),
                    items={"type": "string", "enum": list(_WEEKDAYS)},
                ),
                req("start_time", "string", "When to start, HH:MM.", ClockTime()),
            ),
            (
                f"water the {THING} with {{liters}} on {{days}} at {{start_time}}",
                f"set the {THING} sprinklers: {{days}}, {{start_time}}, {{liters}} each time",
                f"every {{days}} at {{start_time}} give the {THING} {{liters}}",
                f"{{liters}} for the {THING} at {{start_time}} on {{days}}, please",
            ),
        ),
        Action(
            f"log_{THING}_harvest",
            f"Records a harvest taken from the {THING}.",
            (
                req("date", "string", "Harvest day, YYYY-MM-DD.", DAY),
                req(
                    "weight_kg",
                    "float",
                    "Weight picked, in kilograms.",
                    Decimal(0.5, 40.0, 1, "{} kg", vague=("about the same as last week", "a fair amount")),
                ),
                opt("crop", "string", "What was picked.", _CROP),
            ),
            (
                f"we took {{weight_kg}} off the {THING} on {{date}}",
                f"note {{weight_kg}} of {{crop}} from the {THING}, picked {{date}}",
                f"harvest from the {THING}: {{weight_kg}}, {{date}}",
                f"on {{date}} the {THING} gave us {{weight_kg}} of {{crop}}",
            ),
        ),
    ),
)
