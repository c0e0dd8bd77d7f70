"""Value generators for the two ends of one period (a stay, a leave, a statement): the end is never
before the start, and the period is as long as such periods are.

Each parameter of a tool draws its value on its own, so two independent dates gave requests such
as "I'm off from April 6, 2027 to 11 June 2026". :func:`date_range` returns the two ends as a
linked pair: whichever end a request states first draws the whole period (its start, then a
plausible length), and the other end, drawn next from the same random stream, says the same
period's other day. A partner drawn later, after other draws (or never: an end only alluded to),
finds no period waiting for it and draws one of its own, still ordered only by chance; the
library's templates state both ends next to each other, and a test holds them to it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from random import Random
from typing import Any

from tasks.values import _DATE_SPAN, Drawn, _date_forms, _date_mentions

__all__ = ["DateEnd", "date_range"]


@dataclass(eq=False)
class _Period:
    """The period both ends of one range say; its drawn-but-unsaid end waits here for its partner."""

    min_days: int
    max_days: int
    # Per thread: (the stream's state right after the period was drawn, (start, end) offsets,
    # the end already said). The state proves the partner is drawn next from the same stream.
    _waiting: threading.local = field(default_factory=threading.local)

    def draw(self, rng: Random, end: bool) -> Drawn:
        waiting = getattr(self._waiting, "period", None)
        self._waiting.period = None
        if waiting is not None:
            state, offsets, said_end = waiting
            if said_end != end and rng.getstate() == state:
                return _said(offsets[end], rng)
        length = self.min_days + int(rng.random() * (self.max_days - self.min_days + 1))
        start = int(rng.random() * (_DATE_SPAN - length))
        offsets = (start, start + length)
        drawn = _said(offsets[end], rng)
        self._waiting.period = (rng.getstate(), offsets, end)
        return drawn


def _said(day: int, rng: Random) -> Drawn:
    spoken, accepted = _date_forms(day)
    return Drawn(spoken[int(rng.random() * len(spoken))], accepted, _date_mentions(day))


@dataclass(frozen=True, eq=False)
class DateEnd:
    """One end of a :func:`date_range`: a calendar date, said and accepted as ``tasks.values.Date``."""

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
