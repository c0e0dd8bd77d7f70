"""Pinned output: the builtin episodes, their variants and reference trajectories stay
byte-identical across refactors (as tests/tasks/test_pinned_output.py pins the tasks).

One digest covers what a miner is shown and what it is judged against: every episode of a seeded
set (``to_dict``: category, environment, design, turns, plans, cut), one miner's variant of each
(tool_shuffle's renames and the offered tools), the agent-step tasks cut from the variants, and
the reference plan replayed on a fresh environment (every observation and the state after each
turn). A change in any of them (a new environment drawn, a scenario reworded, a tool answering
differently) changes the digest: re-pin it deliberately and say why in the commit. Re-pinned
nine times since: the task generator's version "4" (the open name and place spaces and devices the
episodes' values share with the tasks), "5" (the subjects of facts about someone else, and
devices drawing their own values keep apart from the scene's other values), "6", "7", "8", "9",
"10", "11" and "12" (only the version string the agent-step tasks carry: the episodes themselves
are unchanged;
checked each time by setting the version back, which gives the old digest).
The JSON keeps dict order (no sort_keys): the order of tools and turns is part of what miners see.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tasks.episodes import Episode, agent_step, generate_episodes, variant

_EPISODE_DIGEST = "f735c2cc36c0eb90f160058af163a4638a57b74f1522db1c1e3e20bcea36a064"


def _reference(episode: Episode) -> list[Any]:
    """The reference plan's observations and the state after each turn, replayed afresh."""
    environment = episode.make_environment()
    replayed: list[Any] = []
    for turn in episode.turns:
        environment.begin_turn()
        replayed += [environment.dispatch(call["name"], call["arguments"]) for call in turn.plan]
        replayed.append(environment.fingerprint())
    return replayed


def test_builtin_episodes_variants_and_references_are_byte_identical() -> None:
    episodes = generate_episodes(b"pin", 120)
    variants = [variant(episode, b"pin-miner") for episode in episodes]
    blob: list[Any] = [episode.to_dict() for episode in episodes] + [shown.to_dict() for shown in variants]
    blob += [agent_step(shown).to_dict() for shown in variants if shown.cut is not None]
    blob.append([observed for episode in episodes for observed in _reference(episode)])
    text = json.dumps(blob, ensure_ascii=True, default=str)
    assert hashlib.sha256(text.encode()).hexdigest() == _EPISODE_DIGEST
