"""``ScriptedAgent``: recognises the scenario kind of an episode and replays its script."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from .bank_home_mail import (
    _bank_card,
    _bank_new_payee,
    _bank_pay,
    _bank_repeat,
    _home_leave,
    _home_lock,
    _home_vacuum,
    _home_warmer,
    _mail_cancel,
    _mail_code,
    _mail_invite,
    _mail_move,
    _mail_reply,
)
from .shop_workspace import (
    _shop_budget,
    _shop_cancel,
    _shop_cheapest,
    _shop_return,
    _ws_cron,
    _ws_fix,
    _ws_locate,
    _ws_memory,
    _ws_record,
    _ws_survey,
)
from .tools import (
    ASK_TEXT,
    LACK_TEXT,
    Script,
    _Ask,
    _Call,
    _events,
    _Has,
    _Listen,
    _map_tools,
    _Missing,
    _Say,
    _Shown,
)
from .values import _IBAN, _Kind, _recognise, _text, _tool_call


@dataclass
class ScriptedAgent:
    """See the module docstring. ``ask`` for ``EpisodeRunner``; ``respond`` is the same, sync."""

    #: Per step: which kind it recognised (for the figures), None when it did not.
    last_kind: str | None = None
    tool_cache: dict[str, tuple[str | None, dict[str, _Shown]]] = field(default_factory=dict)

    async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self.respond(messages, tools)

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        try:
            return self._respond(messages, tools)
        except Exception:  # whatever this agent does not understand ends the turn, never the run
            return {"role": "assistant", "content": "Done."}

    def _tools(self, tools: list[dict[str, Any]]) -> tuple[str | None, dict[str, _Shown]]:
        key = json.dumps(tools, sort_keys=True)
        if key not in self.tool_cache:
            if len(self.tool_cache) > 512:
                self.tool_cache.clear()
            self.tool_cache[key] = _map_tools(tools)
        return self.tool_cache[key]

    def _respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        env, shown = self._tools(tools)
        events = _events(messages)
        script = self._episode(env)
        index = 0
        action = script.send(None)
        for _ in range(10_000):
            live = index >= len(events)
            if isinstance(action, _Listen):
                while index < len(events) and events[index].kind != "user":
                    index += 1  # the history went on where the script had ended its turn
                if index >= len(events):
                    return _text("Done.")
                text = events[index].text
                index += 1
                action = script.send(text)
            elif isinstance(action, _Has):
                if live or action.static:
                    action = script.send(action.tool in shown)
                else:
                    action = script.send(
                        not (events[index].kind == "text" and events[index].text == LACK_TEXT)
                    )
            elif isinstance(action, _Call):
                if live:
                    target = shown.get(action.tool)
                    if target is None:
                        return _text(LACK_TEXT)
                    arguments = {
                        **target.fixed,
                        **{target.params.get(key, key): value for key, value in action.arguments.items()},
                        **{
                            target.extras[role]: v
                            for role, v in action.extras.items()
                            if role in target.extras
                        },
                    }
                    return _tool_call(target.name, arguments, len(events))
                event = events[index]
                if event.kind == "call":
                    index += 1
                    action = script.send(event.observation)
                else:  # the history ended the turn earlier than the script would: it goes on from there
                    action = script.send({})
            elif isinstance(action, _Say):
                if live:
                    return _text(action.text)
                while index < len(events) and events[index].kind == "call":
                    index += 1
                if index < len(events) and events[index].kind == "text":
                    index += 1
                action = script.send(None)
            else:
                return _text("Done.")
        return _text("Done.")

    # -- the episode's script: recognise, then play turn by turn ---------------------------------

    def _episode(self, env: str | None) -> Script:
        try:
            text = yield _Listen()
            kinds = _KINDS.get(env or "", ())
            kind = _recognise(kinds, text)
            self.last_kind = kind.name if kind else None
            if kind is None:
                text = yield _Say("I can't help with that with these tools.")
                while True:
                    yield _Say("Done.")
                    yield _Listen()
            yield from kind.script(self, text)
            while True:
                yield _Say("Done.")
                yield _Listen()
        except GeneratorExit:
            raise

    def turn(self, body: Callable[[str], Script], text: str) -> Generator[Any, Any, str]:
        """Play one user turn with ``body`` (a script of calls); on a missing tool say so and try
        again in the next turn; on a missing value ask for it and read the answer with the request.
        Returns the next user message."""
        while True:
            try:
                answer = yield from body(text)
                break
            except _Missing:
                yield _Say(LACK_TEXT)
                yield _Listen()
            except _Ask:
                yield _Say(ASK_TEXT)
                more = yield _Listen()
                text = f"{text}\n{more}"
        yield _Say(str(answer or "Done."))
        return (yield _Listen())


_KINDS: dict[str, tuple[_Kind, ...]] = {
    "bank": (
        _Kind("bank.new_payee", ("add", "payee", "pay someone new"), _bank_new_payee, _IBAN),
        _Kind("bank.pay_off_card", ("credit card", "pay off", "in full", "debt"), _bank_card),
        _Kind("bank.repeat_payment", ("same amount", "last time", "repeat", "regular payment"), _bank_repeat),
        _Kind(
            "bank.pay_amount",
            ("send", "owe", "pay someone", "what is left"),
            _bank_pay,
            re.compile(r"(?<![\w.-])\d+\.\d{1,2}(?![\w-])"),
        ),
    ),
    "home": (
        _Kind(
            "home.leave",
            ("heading out", "every door", "away", "alarm", "before leaving", "secure"),
            _home_leave,
        ),
        _Kind("home.lock", ("is the", "lock it", "door is locked", "make sure"), _home_lock),
        _Kind("home.warmer", ("thermostat", "warm", "degrees", "warmer"), _home_warmer),
        _Kind("home.vacuum", ("vacuum", "clean", "empty rooms", "battery"), _home_vacuum),
    ),
    "mail_calendar": (
        _Kind("mail.code", ("code", "one-time", "log in"), _mail_code),
        _Kind(
            "mail.invite", ("meeting called", "calendar", "meet the last writer", "catch-up"), _mail_invite
        ),
        _Kind("mail.move", ("move", "reschedule", "better time"), _mail_move),
        _Kind("mail.cancel", ("cancel", "free up", "what else", "rest of the day"), _mail_cancel),
        _Kind("mail.reply", ("reply", "answer", "latest mail", "colleague's last mail"), _mail_reply),
    ),
    "shop": (
        _Kind("shop.cancel", ("shipped", "cancel", "stop an order", "before it ships"), _shop_cancel),
        _Kind("shop.return", ("return", "send back", "faulty", "return number"), _shop_return),
        _Kind("shop.budget", ("under", "dearest", "budget", "cart total", "spend"), _shop_budget),
        _Kind("shop.cheapest", ("cheapest", "order", "ship", "order id"), _shop_cheapest),
    ),
    "workspace": (
        _Kind(
            "workspace.record",
            ("failing code", "save that file's path", "exercises", "note where", "source file"),
            _ws_record,
        ),
        _Kind("workspace.memory", ("memory", "keep a note", "save", "recall"), _ws_memory),
        _Kind("workspace.cron", ("cron", "schedule", "automatically", "job"), _ws_cron),
        _Kind(
            "workspace.locate",
            ("where is", "how many lines", "find the file defining a function"),
            _ws_locate,
        ),
        _Kind("workspace.fix", ("fix", "failing", "went red", "wrong results", "passing again"), _ws_fix),
        _Kind("workspace.survey", ("how many test files", "size up", "test suite", "test files"), _ws_survey),
    ),
}
