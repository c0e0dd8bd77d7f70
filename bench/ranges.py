"""Generated date ranges: how often the end comes before the start, and how long the periods are,
for each ranged tool of the library (2,000 requests each, every template).

    PYTHONPATH=. .venv/bin/python bench/ranges.py [--requests 2000]
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from random import Random

# This tree's packages, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from subnet.cli import OneLineParser, user_errors
from tasks.builtin import instantiate
from tasks.library import by_name

PAIRS = {
    "set_out_of_office": ("start_date", "end_date"),
    "list_transactions": ("start_date", "end_date"),
    "rent_car": ("pickup_date", "return_date"),
}


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    with user_errors(parser.prog):
        args = parser.parse_args()
    for name, (first, last) in PAIRS.items():
        spec = by_name()[name]
        spans: list[int] = []
        for seed in range(args.requests):
            call = instantiate(spec, Random(seed)).call[name]
            if call.get(first, [""])[0] and call.get(last, [""])[0]:
                start, end = (dt.date.fromisoformat(call[key][0]) for key in (first, last))
                spans.append((end - start).days)
        spans.sort()
        backwards = sum(span < 0 for span in spans)
        print(
            f"{name}: {backwards}/{len(spans)} end before start; "
            f"days from start to end: min {spans[0]}, median {spans[len(spans) // 2]}, max {spans[-1]}"
        )


if __name__ == "__main__":
    main()
