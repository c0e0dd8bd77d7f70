"""Freight logistics: moving goods between two addresses and counting stock."""

from __future__ import annotations

from tasks.library.common import DAY, STREET_ADDRESS, opt, req
from tasks.synth.common import compose, site_code
from tasks.synth.model import THING, Action, Family
from tasks.value_generators import Flag, Integer

_WAREHOUSE = site_code("WH", vague=("our main warehouse", "the depot", "the usual warehouse"))

FAMILY = Family(
    "logistics",
    compose(
        ("refrigerated", "oversized", "fragile", "bulk", "express"),
        ("pallet", "crate", "container", "parcel", "drum", "roll cage"),
    ),
    (
        Action(
            f"dispatch_{THING}_pickup",
            f"Sends a driver to collect one {THING} at one address and drop it at another.",
            (
                req("pickup_address", "string", "Address to collect from.", STREET_ADDRESS),
                req("dropoff_address", "string", "Address to deliver to.", STREET_ADDRESS),
                req("date", "string", "Collection day, YYYY-MM-DD.", DAY),
                opt("count", "integer", "How many to move.", Integer(2, 40, "{} of them"), default=1),
            ),
            (
                f"collect the {THING} from {{pickup_address}} and take it to {{dropoff_address}} on {{date}}",
                f"move one {THING} to {{dropoff_address}} from {{pickup_address}}, {{date}}, {{count}}",
                f"on {{date}} pick up the {THING} at {{pickup_address}}; it goes to {{dropoff_address}}",
                f"{{dropoff_address}} is waiting for one {THING} now at {{pickup_address}} - {{date}}",
            ),
        ),
        Action(
            f"count_{THING}_stock",
            f"Counts the {THING} stock held at one warehouse.",
            (
                req("warehouse", "string", "Warehouse code, e.g. WH-R2-310.", _WAREHOUSE),
                opt(
                    "include_reserved",
                    "boolean",
                    "Also count units already promised to orders.",
                    Flag(("including reserved ones", "count the reserved ones too"), ("free stock only",)),
                    default=False,
                ),
            ),
            (
                f"how many of the {THING} do we have at {{warehouse}}?",
                f"stock check on the {THING} in {{warehouse}}, {{include_reserved}}",
                f"what's the {THING} count in {{warehouse}} right now",
                f"tally up every {THING} at {{warehouse}} ({{include_reserved}})",
            ),
        ),
    ),
)
