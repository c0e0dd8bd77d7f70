"""Research labs: booking shared instruments and logging their readings."""

from __future__ import annotations

from tasks.library.common import DAY, PERSON, choices, enum_req, opt, req
from tasks.synth.common import HOURS, compose, site_code, ticket
from tasks.synth.model import THING, Action, Family
from tasks.value_generators import ClockTime, Decimal, Flag

_ROOM = site_code("LAB", vague=("the usual lab", "our room", "the lab downstairs"))
_SAMPLE = ticket("SMP", vague=("the sample from yesterday", "my last sample", "that sample"))
_UNIT = choices(
    ("mg_per_l", ("mg/L", "milligrams per litre")),
    ("ppm", ("ppm", "parts per million")),
    ("absorbance", ("absorbance units", "AU")),
    ("celsius", ("degrees Celsius", "°C")),
)

FAMILY = Family(
    "lab",
    compose(
        ("bench", "cryo", "shared", "teaching", "core facility"),
        (
            "centrifuge",
            "spectrometer",
            "PCR cycler",
            "fume hood",
            "incubator",
            "confocal microscope",
            "autoclave",
            "plate reader",
        ),
    ),
    (
        Action(
            f"reserve_{THING}_slot",
            f"Reserves time on the {THING} for one person.",
            (
                req("room", "string", "Lab room code, e.g. LAB-Q3-118.", _ROOM),
                req("date", "string", "Day of the booking, YYYY-MM-DD.", DAY),
                req("start_time", "string", "Start, HH:MM, 24-hour clock.", ClockTime()),
                opt("hours", "integer", "Length of the booking in hours.", HOURS, default=1),
                req("operator", "string", "Full name of the person using it.", PERSON),
            ),
            (
                f"put {{operator}} down for the {THING} in {{room}} on {{date}} at {{start_time}}",
                f"{{operator}} needs the {THING} ({{room}}) on {{date}} from {{start_time}} for {{hours}}",
                f"hold the {THING} in {{room}} for {{operator}}: {{date}}, {{start_time}}",
                f"can {{operator}} have the {THING} at {{start_time}} on {{date}}? it's in {{room}}",
            ),
        ),
        Action(
            f"log_{THING}_reading",
            f"Records one measurement taken on the {THING}.",
            (
                req("sample", "string", "Sample identifier, e.g. SMP-K48213.", _SAMPLE),
                req("value", "float", "Measured value.", Decimal(0.1, 999.0, 2)),
                enum_req("unit", "Unit of the value.", _UNIT),
                opt(
                    "flagged",
                    "boolean",
                    "Mark the reading for review.",
                    Flag(("flag it for review", "mark it for a second look"), ("no review needed",)),
                    default=False,
                ),
            ),
            (
                f"note a reading of {{value}} {{unit}} for sample {{sample}} on the {THING}",
                f"the {THING} gave {{value}} {{unit}} for {{sample}}, {{flagged}}",
                f"write down {{sample}}: {{value}} {{unit}}, measured on the {THING}",
                f"sample {{sample}} came out at {{value}} {{unit}} on the {THING}",
            ),
        ),
    ),
)
