"""Math and units: length and temperature conversion, tips, quadratic equations, summary statistics
and greatest common divisors.
"""

from __future__ import annotations

from tasks.library.common import choices, enum_req, opt, req
from tasks.spec import ToolSpec
from tasks.value_generators import Decimal, Integer, ListOf, Pick, option

_LENGTH = Pick(
    (
        option("km", "kilometers", "kilometer", "kilometres", say=("kilometers", "km")),
        option("miles", "mile", "mi", say=("miles",)),
        option("meters", "m", "meter", "metres", say=("meters",)),
        option("feet", "ft", "foot", say=("feet",)),
        option("inches", "in", "inch", say=("inches",)),
        option("centimeters", "cm", "centimeter", "centimetres", say=("centimeters", "cm")),
    ),
)
_SCALE = Pick(
    (
        option("celsius", "C", say=("Celsius", "degrees C")),
        option("fahrenheit", "F", say=("Fahrenheit", "degrees F")),
        option("kelvin", "K", say=("Kelvin",)),
    ),
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "convert_units",
        "math",
        "Converts a length from one unit to another.",
        (
            req("value", "float", "The quantity.", Decimal(0.5, 5000, 2)),
            req("from_unit", "string", "Unit of the quantity.", _LENGTH),
            req("to_unit", "string", "Unit wanted.", _LENGTH),
        ),
        (
            "how many {to_unit} is {value} {from_unit}?",
            "turn {value} {from_unit} into {to_unit}",
            "{value} {from_unit} - what's that in {to_unit}",
            "I measured {value} {from_unit}; express it in {to_unit}",
        ),
    ),
    ToolSpec(
        "convert_temperature",
        "math",
        "Converts a temperature between scales.",
        (
            req("value", "float", "The temperature.", Decimal(-40, 250, 1)),
            req("from_scale", "string", "Scale of the value.", _SCALE),
            req("to_scale", "string", "Scale wanted.", _SCALE),
        ),
        (
            "the recipe says {value} {from_scale}, what's that in {to_scale}?",
            "{value} degrees {from_scale} to {to_scale} please",
            "how hot is {value} {from_scale} when you put it in {to_scale}",
            "translate a reading of {value} {from_scale} into {to_scale}",
        ),
    ),
    ToolSpec(
        "calculate_tip",
        "math",
        "Computes the tip and each person's share of a bill.",
        (
            req("bill_amount", "float", "Total of the bill.", Decimal(8, 900, 2, "${}")),
            req("tip_percent", "integer", "Tip in percent.", Integer(5, 30, "{}%")),
            opt("split", "integer", "Number of people paying.", Integer(2, 8, "{} ways"), default=1),
        ),
        (
            "our check came to {bill_amount}, what's a {tip_percent} tip?",
            "dinner was {bill_amount}; add {tip_percent} and divide it {split}",
            "how much should I leave on {bill_amount} if I want to give {tip_percent}",
            "work out {tip_percent} on top of {bill_amount}, split {split}",
        ),
    ),
    ToolSpec(
        "solve_quadratic",
        "math",
        "Finds the real roots of a*x^2 + b*x + c = 0.",
        (
            req("a", "integer", "Coefficient of x squared.", Integer(1, 12)),
            req("b", "integer", "Coefficient of x.", Integer(-30, 30)),
            req("c", "integer", "Constant term.", Integer(-60, 60)),
        ),
        (
            "where does {a}x^2 + ({b})x + ({c}) cross zero?",
            "find x when {a}x² + {b}x + {c} = 0",
            "roots of the polynomial with a={a}, b={b}, c={c}?",
            "my homework: {a}x^2 plus {b}x plus {c} equals zero, what's x",
        ),
    ),
    ToolSpec(
        "compute_statistics",
        "math",
        "Computes one summary statistic of a list of numbers.",
        (
            req("numbers", "array", "The data.", ListOf(Decimal(0, 500, 1), 3, 6), items={"type": "number"}),
            enum_req(
                "statistic",
                "Which statistic.",
                choices(
                    ("mean", ("average", "mean")),
                    ("median", ("median", "middle value")),
                    ("stdev", ("standard deviation", "spread")),
                    ("max", ("largest value", "maximum")),
                    ("min", ("smallest value", "minimum")),
                ),
            ),
        ),
        (
            "what's the {statistic} of {numbers}?",
            "here are my readings: {numbers}. give me the {statistic}",
            "figure out the {statistic} for {numbers}",
            "{numbers} - {statistic} please",
        ),
    ),
    ToolSpec(
        "greatest_common_divisor",
        "math",
        "Finds the largest integer dividing all the given integers.",
        (
            req(
                "numbers",
                "array",
                "Whole numbers.",
                ListOf(Integer(2, 5000), 2, 4),
                items={"type": "integer"},
            ),
        ),
        (
            "what's the biggest number that goes evenly into {numbers}?",
            "highest common factor of {numbers}?",
            "I need to simplify a ratio of {numbers} - what do they share as a divisor",
            "largest whole number dividing {numbers} with no remainder",
        ),
    ),
)

__all__ = ["TOOLS"]
