"""Red team for episodes: ``ScriptedAgent``, a model-free agent that plays the public scenarios.

No model, only the public code: it maps the offered (renamed) tools back to the environments'
tools by their descriptions (``match_tool``, as bench/redteam.py does for single calls),
recognises which scenario kind it is playing from keywords of the first user turn (quoted text
removed first; the phrasing stage's "purpose" words count as keywords too), reads the values off
the text by their shapes (names from the public name lists, IBANs, order ids, amounts, dates,
times, products, the fixed reference/reason/body lists), then replays the public scenario's plan
call for call, taking ids and later arguments from the observations. For a turn whose tool is not
offered it says it lacks a tool; for a turn that lacks a value it asks.

Tool designs that only reshape the same actions do not stop it: a tool with extra optional
parameters (filters) maps back by its own ones; one tool whose enum parameter names every action
maps back action by action; a listing answered in pages is read page after page, and a listing
of summaries record by record with its getter, until what the plan needs shows.

The agent keeps no state between steps: each step replays its script over the conversation so
far (the observations it already got are fed back), so it can answer any step of any episode,
``agent_step`` prefixes included. Anything it does not recognise (a scenario kind, a tool design)
ends the turn in text; it never raises.

Baselines beside it (``NeverCallAgent``, ``CannotHelpAgent``, ``ReadEveryToolAgent``), and
``play_agent`` / ``episode_table`` to score any of them in-process as the validator would::

    PYTHONPATH=. .venv/bin/python bench/redteam_agent.py [--episodes 1000] [--seed heldout] [--phrased]
        [--baselines] [--failures N]
    PYTHONPATH=. .venv/bin/python bench/redteam_agent.py --serve 8011   # for subnet.evaluate --episodes

Modules: ``tools`` (tools mapped back, script steps), ``values`` (values by shape, scenario
kinds), ``bank_home_mail`` and ``shop_workspace`` (the scripts), ``agent``, ``play``.
"""

from __future__ import annotations

from .agent import ScriptedAgent
from .play import (
    CannotHelpAgent,
    EpisodeFigures,
    NeverCallAgent,
    ReadEveryToolAgent,
    baseline_agents,
    debug,
    episode_table,
    phrase_with_standin,
    play_agent,
    serve,
)
from .tools import ASK_TEXT, LACK_TEXT

__all__ = [
    "ASK_TEXT",
    "LACK_TEXT",
    "CannotHelpAgent",
    "EpisodeFigures",
    "NeverCallAgent",
    "ReadEveryToolAgent",
    "ScriptedAgent",
    "baseline_agents",
    "debug",
    "episode_table",
    "phrase_with_standin",
    "play_agent",
    "serve",
]
