"""Building facilities: inspections, faults and spare parts for plant equipment."""

from __future__ import annotations

from tasks.library.common import DAY, PERSON, PHONE, choices, enum_opt, enum_req, opt, req
from tasks.synth.common import PRIORITY, compose, site_code, ticket
from tasks.synth.model import THING, Action, Family
from tasks.value_generators import Flag, Integer, ListOf, Quoted, Record, Records

_SITE = site_code("FAC", vague=("our usual building", "the site from last time", "the other campus"))
_SEVERITY = choices(
    ("minor", ("a minor issue", "only minor")),
    ("major", ("a major problem", "seriously broken")),
    ("outage", ("completely down", "a full outage")),
)
_SUMMARY = Quoted(
    (
        "strange rattling noise",
        "leaking since this morning",
        "error light keeps blinking",
        "won't restart after the power cut",
        "smells like burning",
        "stops halfway and beeps",
        "pressure gauge reads zero",
    ),
    ("", " again", " twice today", " since Monday"),
)
_CONTACT = Record((("name", PERSON), ("phone", PHONE)), "call back {name} on {phone}")
_PART = Record(
    (("part_number", ticket("PN", vague=())), ("quantity", Integer(1, 12, "{} of"))),
    "{quantity} {part_number}",
)

FAMILY = Family(
    "facilities",
    compose(
        ("north wing", "east wing", "basement", "rooftop", "warehouse", "lobby", "annex", "plant room"),
        (
            "boiler",
            "elevator",
            "chiller",
            "sprinkler line",
            "backup generator",
            "freight lift",
            "ventilation fan",
            "fire panel",
        ),
    ),
    (
        Action(
            f"schedule_{THING}_inspection",
            f"Schedules a safety inspection of the {THING} at a site on a given day.",
            (
                req("site", "string", "Site code of the building, e.g. FAC-K4-213.", _SITE),
                req("date", "string", "Inspection day, YYYY-MM-DD.", DAY),
                opt(
                    "inspectors",
                    "array",
                    "Full names of the inspectors to send.",
                    ListOf(PERSON, 1, 2),
                    items={"type": "string"},
                ),
                enum_opt("priority", "How urgent the inspection is.", PRIORITY, default="normal"),
            ),
            (
                f"get someone to look over the {THING} at site {{site}} on {{date}}",
                f"book a safety check of the {THING} at {{site}} for {{date}}, {{priority}}",
                f"the {THING} at {{site}} is due a check on {{date}}; send {{inspectors}}",
                f"arrange for the {THING}, site {{site}}, to be checked on {{date}}",
            ),
        ),
        Action(
            f"report_{THING}_fault",
            f"Opens a fault ticket for the {THING} at a site.",
            (
                req("site", "string", "Site code of the building, e.g. FAC-K4-213.", _SITE),
                enum_req("severity", "How bad the fault is.", _SEVERITY),
                req("summary", "string", "Short account of the fault, as quoted.", _SUMMARY),
                opt(
                    "contact",
                    "dict",
                    "Who to call back about it.",
                    _CONTACT,
                    properties={
                        "name": {"type": "string", "description": "Full name."},
                        "phone": {"type": "string", "description": "Phone number."},
                    },
                    required=["name", "phone"],
                ),
            ),
            (
                f"the {THING} at {{site}} is {{severity}}: {{summary}}",
                f"log a fault: the {THING} at {{site}}, it's {{severity}}, {{summary}}, and {{contact}}",
                f"raise a ticket: {THING} in {{site}}, {{severity}}, {{summary}}",
                f"something's wrong with the {THING} ({{site}}) - {{summary}} - {{severity}}",
            ),
        ),
        Action(
            f"order_{THING}_parts",
            f"Orders spare parts for the {THING} at a site.",
            (
                req("site", "string", "Site code of the building, e.g. FAC-K4-213.", _SITE),
                req(
                    "parts",
                    "array",
                    "Order lines: part number and quantity.",
                    Records(_PART, 1, 3),
                    items={
                        "type": "object",
                        "properties": {
                            "part_number": {"type": "string", "description": "Part number, e.g. PN-K48213."},
                            "quantity": {"type": "integer", "description": "How many."},
                        },
                        "required": ["part_number", "quantity"],
                    },
                ),
                opt(
                    "expedite",
                    "boolean",
                    "Ship overnight.",
                    Flag(
                        ("rush them overnight", "overnight delivery please"), ("standard shipping is fine",)
                    ),
                    default=False,
                ),
            ),
            (
                f"we need {{parts}} for the {THING} at {{site}}",
                f"get {{parts}} sent to {{site}} for the {THING}, {{expedite}}",
                f"spares for the {THING} at site {{site}}: {{parts}}",
                f"order in {{parts}} - it's for the {THING} in {{site}}",
            ),
        ),
    ),
)
