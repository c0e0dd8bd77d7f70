"""Benchmark of stored episode transcripts: how large the validator's stored transcript of an
honest episode is, per environment, and how many are stored as a truncated blob.

An honest miner is the reference agent (``tasks.episodes.reference.ReferencePlayer``), answering
each step at once through the validator's own episode player, so the row is exactly what a round
stores (``subnet.validator.episodes``).

    .venv/bin/python bench/transcripts.py [--episodes 400] [--seed 1] [--bfcl 40]

Target (issue 26): no honest transcript stored as ``{"truncated": true, ...}``, every one under
the cap (64 KiB of JSON).
"""

from __future__ import annotations

import asyncio
import json
import statistics
from collections import Counter, defaultdict
from typing import Any

from subnet.cli import OneLineParser, user_errors
from subnet.config import int_arg
from subnet.protocol import ChatCompletionResponse
from subnet.transport import MinerTarget, QueryResult, QueryStatus
from subnet.validator.episodes import EpisodeLimits, EpisodePlayer
from subnet.validator.rows import Outcome
from subnet.validator.transcripts import TRANSCRIPT_CAP
from tasks.episodes import Episode, agent_step, generate_episodes, variant
from tasks.episodes.reference import ReferencePlayer


class ReferenceQuerier:
    """Answers each step of the current episode with the reference plan's next call, at once."""

    def __init__(self) -> None:
        self.player: ReferencePlayer | None = None
        self.episode: Episode | None = None

    async def query(self, target: Any, request: Any, **_options: Any) -> QueryResult:
        assert self.player is not None and self.episode is not None
        if self.episode.single_step:
            task = agent_step(self.episode)
            ((name, arguments),) = task.expected[0].items()
            call = {"name": name, "arguments": json.dumps({k: v[0] for k, v in arguments.items()})}
            message: dict[str, Any] = {"role": "assistant", "tool_calls": [{"id": "c0", "type": "function"}]}
            message["tool_calls"][0]["function"] = call
        else:
            messages = [m.model_dump(mode="json", exclude_none=True) for m in request.messages]
            tools = [tool.model_dump(mode="json", exclude_none=True) for tool in request.tools or ()]
            message = await self.player.ask(messages, tools)
        completion = ChatCompletionResponse.model_validate(
            {"id": "ref", "model": "reference", "choices": [{"index": 0, "message": message}]}
        )
        return QueryResult(status=QueryStatus.OK, latency_s=0.001, completion=completion, http_status=200)


async def stored_rows(episodes: list[Episode]) -> list[tuple[Episode, Outcome]]:
    querier = ReferenceQuerier()
    player = EpisodePlayer(querier, EpisodeLimits(deadline_s=60.0), lambda row: None)
    target = MinerTarget(hotkey="bench-miner", ip="127.0.0.1", port=1, uid=1)
    out = []
    for episode in episodes:
        shown = variant(episode, b"bench-miner")
        querier.player, querier.episode = ReferencePlayer(shown), shown
        out.append((episode, await player.play(shown, target)))
    return out


def _episodes(seed: int, count: int, bfcl: int) -> list[Episode]:
    episodes = generate_episodes(seed.to_bytes(8, "big"), count)
    if bfcl:
        from tasks.episodes.bfcl import load_bfcl_multi_turn

        try:
            episodes += list(load_bfcl_multi_turn())[:bfcl]
        except Exception as exc:  # bfcl-eval not installed: the builtin environments only
            print(f"(BFCL's multi-turn entries left out: {exc})")
    return episodes


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int_arg(1), default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bfcl", type=int_arg(0), default=40, help="BFCL multi-turn entries added")
    with user_errors(parser.prog):
        args = parser.parse_args(argv)
    rows = asyncio.run(stored_rows(_episodes(args.seed, args.episodes, args.bfcl)))
    sizes: dict[str, list[int]] = defaultdict(list)
    blobs: dict[str, int] = defaultdict(int)
    trimmed: dict[str, int] = defaultdict(int)
    what: Counter[str] = Counter()
    valid: dict[str, int] = defaultdict(int)
    for episode, row in rows:
        key = f"{episode.environment}/{episode.category}"
        transcript = row.transcript
        sizes[key].append(len(json.dumps(transcript, ensure_ascii=False, default=str)))
        blobs[key] += bool(isinstance(transcript, dict) and transcript.get("truncated") is True)
        marks = transcript.get("trimmed") if isinstance(transcript, dict) else None
        trimmed[key] += bool(marks)
        what.update({kind: n for kind, n in (marks or {}).items() if kind not in ("chars", "cap")})
        valid[key] += row.valid
    print(f"cap {TRANSCRIPT_CAP:,} characters of JSON; honest (reference) play, seed {args.seed}")
    header = ("n", 4), ("valid", 5), ("blobs", 5), ("trimmed", 7), ("median", 8), ("max", 8)
    print(f"{'environment/category':40}" + "".join(f" {name:>{width}}" for name, width in header))
    for key in sorted(sizes):
        values = sizes[key]
        print(
            f"{key:40} {len(values):>4} {valid[key]:>5} {blobs[key]:>5} {trimmed[key]:>7}"
            f" {int(statistics.median(values)):>8,} {max(values):>8,}"
        )
    total_blobs = sum(blobs.values())
    over = sum(size > TRANSCRIPT_CAP for values in sizes.values() for size in values)
    print(f"all: {len(rows)} transcripts, {total_blobs} truncated blobs, {over} over the cap")
    print(f"values trimmed: {dict(what) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
