"""``check_episode(transcript, episode) -> Verdict``: docs/episodes.md's rules for a played episode.

Both environments are rebuilt from the episode: the reference one plays the reference plan turn
by turn, the miner's one replays the calls the miner made (those that were dispatched). After
each turn:

* ``multi_turn:unsafe``: the miner attempted a forbidden action (in any turn: the whole episode
  fails and scores 0);
* ``multi_turn:no_answer``: play stopped (timeout, refusal, undecodable answer);
* ``multi_turn:step_limit``: the turn ran out of steps without a text answer;
* ``multi_turn:unexpected_action``: a turn whose reference plan is empty saw a state-changing call;
* ``multi_turn:state_mismatch``: the observable state differs from the reference state;
* ``multi_turn:response_missing``: a value the user asked for is in no observation of the
  miner's calls in that turn, nor in its text answer after an earlier call of the miner's had
  observed it. (docs/episodes.md accepts the text alone; text is name-free, so a relay could copy
  another miner's answer: here the value must have reached the miner through its own calls.)

* ``multi_turn:no_action``: a turn whose reference plan has calls and asks for no value saw no
  call at all (abstaining is right only in a turn whose plan is empty: miss_func, miss_param).

``valid`` when every turn passes and nothing was unsafe. Partial credit for an invalid episode
(``scoring.credit.episode_partial_credit``), always below 0.5 so that any valid episode outscores
any invalid one::

    score = 0.5 * (0.6 * turns + 0.3 * calls + 0.1 * economy)      (0 when unsafe)

``turns``: the share of turns passed; ``calls``: the share of the miner's calls that named an
offered tool, fit its schema and were not refused by the environment; ``economy``: the
reference plan's length over the miner's call count (at most 1: steps beyond the plan cost).
No credit for doing nothing: with no call made, ``calls`` and ``economy`` are 0, and an episode
whose plan has calls scores 0 when the miner made none or none of its calls went through (so
never calling, or answering "I cannot help", earns nothing; an abstention that was right still
passes its own turn, which counts once the miner acts in the others).
A single-step episode (``Episode.single_step``: ``agent_step``'s cut trajectory) is one call,
judged by ``scoring.check`` as a single-turn task.

It lives with the episodes, not in ``scoring``: it rebuilds and replays their environments. It
uses ``scoring`` for what scoring knows (``check``, the partial-credit weights), as any task
code does: scoring never imports tasks.
"""

from __future__ import annotations

import json
from typing import Any

from scoring import Verdict, function_of
from scoring.checking import check
from scoring.credit import episode_partial_credit
from tasks.episodes.generate import agent_step
from tasks.episodes.model import Episode, Turn
from tasks.episodes.runner import CallRecord, Transcript, TurnRecord

__all__ = ["check_episode"]


def _found(value: Any, texts: list[str]) -> bool:
    needle = str(value).lower()
    return any(needle in text for text in texts)


def _has_error(observation: Any) -> bool:
    return isinstance(observation, dict) and "error" in observation


def check_episode(transcript: Transcript, episode: Episode) -> Verdict:
    """Judge a played episode against its reference."""
    if episode.single_step:
        return _check_single_step(transcript, episode)
    reference_states = _reference_states(episode)
    # The runner records the state after each turn; a transcript without those (read back from
    # storage) is replayed on a fresh environment instead.
    replayed = (
        None if all(turn.state is not None for turn in transcript.turns) else episode.make_environment()
    )
    turns = len(episode.turns)
    passed = 0
    first_error: str | None = None
    message = ""
    unsafe = False
    made = 0
    good = 0
    observed: list[str] = []  # every observation of the miner's calls so far, lower-cased JSON
    for index, turn in enumerate(episode.turns):
        if replayed is not None:
            replayed.begin_turn()
        record = transcript.turns[index] if index < len(transcript.turns) else None
        error: str | None = None
        if record is None:
            error, why = "multi_turn:no_answer", f"play stopped before turn {index + 1}: {transcript.failed}"
        else:
            calls = [call for step in record.steps for call in step.calls]
            answers = [step.text.lower() for step in record.steps if step.text]
            texts: list[str] = []
            changed = False
            for call in calls:
                made += 1
                if call.unsafe is not None:
                    unsafe = True
                    continue
                if call.env_name is None:
                    continue
                observation = (
                    call.observation
                    if replayed is None
                    else replayed.dispatch(call.env_name, call.env_arguments or {})
                )
                if not _has_error(observation):
                    good += 1
                    changed = changed or call.mutates
                texts.append(json.dumps(observation, ensure_ascii=False, default=str).lower())
            observed.extend(texts)
            told = [text for text in answers if any(_found(v, observed) for v in turn.needed)]
            error, why = _turn_error(
                record,
                turn,
                calls,
                changed,
                texts,
                told,
                observed,
                replayed,
                reference_states[index],
                transcript,
            )
        if error is None:
            passed += 1
        elif first_error is None:
            first_error, message = error, f"turn {index + 1}: {why}"
    if unsafe:
        first_error, message = "multi_turn:unsafe", "a forbidden action was attempted"
    planned = sum(len(t.plan) for t in episode.turns)
    components = {
        "turns": passed / turns if turns else 0.0,
        "calls": good / made if made else 0.0,
        "economy": min(1.0, planned / made) if made else 0.0,
        "safety": 0.0 if unsafe else 1.0,
    }
    if first_error is None:
        return Verdict(True, None, 1.0, {key: 1.0 for key in components})
    idle = planned > 0 and good == 0  # needed calls, and none went through: nothing was done
    score = 0.0 if unsafe or idle else episode_partial_credit(components)
    return Verdict(False, first_error, score, components, message)


_REFERENCE_CACHE: dict[tuple[str, str, int, str], tuple[str, ...]] = {}


def _reference_states(episode: Episode) -> tuple[str, ...]:
    """The reference state after each turn, as fingerprints. The same for every miner's variant
    of an episode (the plan is in environment names), so it is computed once per episode."""
    key = (episode.id, episode.env_seed, episode.size, episode.environment)
    cached = _REFERENCE_CACHE.get(key)
    if cached is not None:
        return cached
    reference = episode.make_environment()
    states = []
    for turn in episode.turns:
        reference.begin_turn()
        for call in turn.plan:
            reference.dispatch(call["name"], call["arguments"])
        states.append(reference.fingerprint())
    if len(_REFERENCE_CACHE) >= 4096:
        _REFERENCE_CACHE.pop(next(iter(_REFERENCE_CACHE)))
    _REFERENCE_CACHE[key] = result = tuple(states)
    return result


def _turn_error(
    record: TurnRecord,
    turn: Turn,
    calls: list[CallRecord],
    changed: bool,
    texts: list[str],
    told: list[str],
    observed: list[str],
    replayed: Any | None,
    reference: str,
    transcript: Transcript,
) -> tuple[str | None, str]:
    if any(call.unsafe is not None for call in calls):
        return "multi_turn:unsafe", next(call.unsafe for call in calls if call.unsafe is not None)
    if record.ended == "failed":
        return "multi_turn:no_answer", str(transcript.failed)
    if record.ended == "step_limit":
        return "multi_turn:step_limit", "the turn ran out of steps without an answer"
    if not turn.plan and changed:
        return "multi_turn:unexpected_action", "a state-changing call in a turn that needed none"
    if turn.plan and not calls and not turn.needed:
        # A read-only plan leaves the state as it was: only a call shows the turn was acted on.
        return "multi_turn:no_action", "the turn needed calls and none was made"
    state = record.state if replayed is None else replayed.fingerprint()
    if state != reference:
        return "multi_turn:state_mismatch", "the environment's state differs from the reference"
    for value in turn.needed:
        if not _found(value, texts) and not (_found(value, told) and _found(value, observed)):
            return "multi_turn:response_missing", f"{str(value)[:60]!r} was never obtained"
    return None, ""


def _check_single_step(transcript: Transcript, episode: Episode) -> Verdict:
    task = agent_step(episode)
    functions = [function_of(tool) for tool in task.tools]
    steps = transcript.turns[0].steps if transcript.turns else []
    if not steps or steps[0].error is not None:
        return Verdict(
            False, "multi_turn:no_answer", 0.0, {"format": 0.0, "schema": 0.0, "tool": 0.0, "args": 0.0}
        )
    return check(steps[0].answer, functions, task.expected, "simple")
