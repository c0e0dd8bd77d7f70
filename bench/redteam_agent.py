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

The agent lives in bench/redteam_kit/agent (this script runs it). Baselines beside it
(``NeverCallAgent``, ``CannotHelpAgent``, ``ReadEveryToolAgent``), and ``play_agent`` /
``episode_table`` to score any of them in-process as the validator would::

    PYTHONPATH=. .venv/bin/python bench/redteam_agent.py [--episodes 1000] [--seed heldout] [--phrased]
        [--baselines] [--failures N]
    PYTHONPATH=. .venv/bin/python bench/redteam_agent.py --serve 8011   # for subnet.evaluate --episodes
"""

from __future__ import annotations

import asyncio

from redteam_kit.agent import (
    ASK_TEXT,
    LACK_TEXT,
    CannotHelpAgent,
    EpisodeFigures,
    NeverCallAgent,
    ReadEveryToolAgent,
    ScriptedAgent,
    baseline_agents,
    debug,
    episode_table,
    phrase_with_standin,
    play_agent,
    serve,
)
from redteam_kit.agent.play import _failures

from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg

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
]


def main() -> None:
    from tasks.episodes import generate_episodes

    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int_arg(1), default=300)
    parser.add_argument("--seed", default="heldout")
    parser.add_argument("--phrased", action="store_true", help="also on turns phrased by the stand-in engine")
    parser.add_argument("--baselines", action="store_true", help="also the never-call and other baselines")
    parser.add_argument(
        "--failures", type=int_arg(0), default=0, help="print the first N failed episodes' kinds"
    )
    parser.add_argument(
        "--serve", type=int, default=None, metavar="PORT", help="serve the agent over the chat API instead"
    )
    with user_errors(parser.prog):
        args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(serve(args.serve))
        return
    episodes = generate_episodes(args.seed, args.episodes)
    sets = {"template": episodes}
    if args.phrased:
        sets["phrased"] = phrase_with_standin(episodes, args.seed)
    for label, chosen in sets.items():
        agents = baseline_agents() if args.baselines else {"scripted agent (no model)": ScriptedAgent()}
        results = {name: play_agent(agent, chosen) for name, agent in agents.items()}
        print(f"\n{label} turns ({len(chosen)} episodes, seed {args.seed}):")
        print("\n".join(episode_table(results)))
        scripted = results["scripted agent (no model)"]
        print(f"  kinds recognised: {dict(sorted(scripted.kinds.items(), key=lambda kv: -kv[1]))}")
        print(f"  {scripted.seconds:.1f} s")
        if args.failures:
            _failures(chosen, args.failures)


if __name__ == "__main__":
    main()
