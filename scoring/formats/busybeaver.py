"""BusyBeaver's policy action: ``{"tool": ..., "args": {...}, "confidence": ..., "state_update": ...}``
(a list for several). The decoder reads it as JSON; a miner asked for it is started with ``json``."""

from __future__ import annotations

from scoring.formats.spec import Format
from scoring.formats.writing import json_text
from scoring.model import Call


def render(calls: list[Call]) -> str:
    actions = [
        {"tool": call.name, "args": call.arguments, "confidence": 1.0, "state_update": ""} for call in calls
    ]
    return json_text(actions[0] if len(actions) == 1 else actions)


FORMAT = Format(name="busybeaver", render=render)
