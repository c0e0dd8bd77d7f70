"""The miner logs why it refuses requests (its model too slow, a caller unsigned), at most one line
per refusal type and interval, with how many like it came in between."""

from __future__ import annotations

import logging

import pytest

from subnet.transport.refusals import Refusal, RefusalLog


def test_refusals_are_logged_with_their_cause_and_throttled(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    refusals = RefusalLog(logging.getLogger("test.refusals"), every_s=10.0, clock=lambda: now[0])
    slow = Refusal("handler_timeout", "the model did not answer within 27 s")
    with caplog.at_level(logging.INFO, logger="test.refusals"):
        refusals.note(slow, "127.0.0.1", 27.0)
        for _ in range(11):
            now[0] += 0.5
            refusals.note(slow, "127.0.0.1", 27.0)
        refusals.note(Refusal("missing_auth", "no signature"), "10.0.0.2", 0.0)
        now[0] = 12.0
        refusals.note(slow, "127.0.0.1", 27.0)
    lines = [(record.levelno, record.getMessage()) for record in caplog.records]
    assert len(lines) == 3, lines
    level, first = lines[0]
    assert level == logging.WARNING
    assert first.startswith(
        "refused 504 handler_timeout from 127.0.0.1 after 27.0 s: the model did not answer"
    )
    assert "raise it" in first and "--model.timeout" in first
    assert lines[1][0] == logging.INFO and "401 missing_auth" in lines[1][1] and "did not sign" in lines[1][1]
    assert lines[2][1].endswith("; 11 more like it since the last such line")
