"""Value generators for the two ends of one period (a stay, a leave, a statement): the end is never
before the start, and the period is as long as such periods are.

Each parameter of a tool draws its value on its own, so two independent dates gave requests such
as "I'm off from April 6, 2027 to 11 June 2026". :func:`date_range` returns the two ends as a
linked pair: the start draws the whole period (its first day, then a plausible length) and leaves
its last day waiting for the end, which the same random stream draws next; an end drawn with no
start before it (the start only alluded to) draws a period of its own. So a request must state
the start before the end: the library's templates do, and a test holds every template to it.
Nothing but a reference to the waiting day is kept: the check costs no draw and no copy of the
generator's state (the task generator's throughput target counts microseconds).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from random import Random
from typing import Any

from tasks.value_generators import _DATE_SPAN, Drawn, _date_forms, _date_mentions

__all__ = ["DateEnd", "date_range"]


@dataclass(eq=False)
class _Period:
    """The period both ends of one range say; the last day the start drew waits here for the end."""

    min_days: int
    max_days: int
    # Per thread: (the random stream the start drew from, the end's day). Generation is one
    # stream per task set, drawn in order, so the next end drawn from that stream is this one's.
    _waiting: threading.local = field(default_factory=threading.local)

    def draw(self, rng: Random, end: bool) -> Drawn:
        waiting = getattr(self._waiting, "end", None)
        self._waiting.end = None
        if end and waiting is not None and waiting[0] is rng:
            return _said(waiting[1], rng)
        length = self.min_days + int(rng.random() * (self.max_days - self.min_days + 1))
        start = int(rng.random() * (_DATE_SPAN - length))
        if end:
            return _said(start + length, rng)
        self._waiting.end = (rng, start + length)
        return _said(start, rng)


def _said(day: int, rng: Random) -> Drawn:
    spoken, accepted = _date_forms(day)
    return Drawn(spoken[int(rng.random() * len(spoken))], accepted, _date_mentions(day))


@dataclass(frozen=True, eq=False)
class DateEnd:
    """One end of a :func:`date_range`: a calendar date, said and accepted as
    ``tasks.value_generators.Date``."""

    period: _Period
    end: bool
    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        return self.period.draw(rng, self.end)


def date_range(min_days: int, max_days: int, *, vague: tuple[str, str] | None = None) -> tuple[Any, Any]:
    """(start, end) generators of one period of ``min_days..max_days`` days (end - start)."""
    if not 0 <= min_days <= max_days < _DATE_SPAN:
        raise ValueError(f"a period of {min_days}..{max_days} days does not fit the calendar")
    period = _Period(min_days, max_days)
    start_vague, end_vague = vague or ("the first day we talked about", "the last day we talked about")
    return DateEnd(period, False, (start_vague,)), DateEnd(period, True, (end_vague,))
