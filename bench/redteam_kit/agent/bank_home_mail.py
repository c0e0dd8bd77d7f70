"""The scripts of the bank, home and mail_calendar scenario kinds, replayed from the public plans."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from .tools import Agent, Script, _Ask, _call
from .values import (
    _DATES,
    _IBAN,
    _PERSON,
    _amounts,
    _date,
    _find_listed,
    _quoted,
    _small_number,
    _times,
    _unquoted,
)

_BANK_REFERENCES = ("Thanks!", "Dinner last week", "Concert tickets", "Half of the taxi", "Birthday gift")


_BILLERS = (
    "City Power & Light",
    "Metro Water",
    "Northwind Telecom",
    "FitLife Gym",
    "SafeHome Insurance",
    "StreamPlus",
)


_MONTHLY_REFERENCE = re.compile(r"\b(?:Rent|Account) \d{4}-\d{2}\b")


def _payee(text: str) -> str | None:
    biller = _find_listed(text, _BILLERS)
    if biller is not None:
        return biller
    match = _PERSON.search(text)
    return match.group(0) if match else None


def _reference(text: str) -> str | None:
    for quoted in _quoted(text):
        if quoted in _BANK_REFERENCES or _MONTHLY_REFERENCE.fullmatch(quoted):
            return quoted
    monthly = _MONTHLY_REFERENCE.search(text)
    if monthly:
        return monthly.group(0)
    listed = _find_listed(text, _BANK_REFERENCES)
    if listed is not None:
        return listed
    quoted_all = [q for q in _quoted(text) if not _PERSON.fullmatch(q) and q not in _BILLERS]
    return quoted_all[-1] if quoted_all else None


def _strip(text: str, *parts: str | None) -> str:
    for part in parts:
        if part:
            text = text.replace(part, " ")
    return _IBAN.sub(" ", _unquoted(text))


def _accounts(observation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    by_kind: dict[str, dict[str, Any]] = {}
    for account in observation.get("accounts") or []:
        name = str(account.get("name", "")).lower()
        for word in ("checking", "savings", "credit", "travel"):
            if word in name:
                by_kind.setdefault(word, account)
    return by_kind


def _bank_repeat(agent: Agent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        payee, reference = _payee(text), _reference(text)
        if payee is None or reference is None:
            raise _Ask
        accounts = _accounts((yield from _call("list_accounts")))
        checking = accounts["checking"]["id"]

        def found(seen: dict[str, Any]) -> bool:
            return _latest_payment(seen, payee) is not None

        def payee_row(row: dict[str, Any]) -> bool:
            return row.get("kind", "payment") == "payment" and _paid_to(row, payee)

        listing = yield from _call("list_transactions", until=found, relevant=payee_row, account_id=checking)
        row = _latest_payment(listing, payee)
        if row is None and listing.get("more"):
            listing = yield from _call(
                "list_transactions", until=found, relevant=payee_row, account_id=checking, limit=50
            )
            row = _latest_payment(listing, payee)
        if row is None:
            return "I could not find an earlier payment to them."
        done = yield from _call(
            "pay",
            payee=row["counterparty"],
            from_account=checking,
            amount=-row["amount"],
            reference=reference,
        )
        state["account"] = checking
        return f"Paid. {done.get('balance_after', '')}"

    def balance(text: str) -> Script:
        seen = yield from _call("get_balance", account_id=state.get("account", ""))
        return f"The balance is {seen.get('balance')}."

    text = yield from agent.turn(first, text)
    yield from agent.turn(balance, text)


def _latest_payment(listing: dict[str, Any], payee: str) -> dict[str, Any] | None:
    for row in listing.get("transactions") or []:
        if row.get("kind", "payment") == "payment" and _paid_to(row, payee) and "amount" in row:
            return row
    return None


def _paid_to(row: dict[str, Any], payee: str) -> bool:
    """Whether a row (or its summary, which may not show the counterparty) can be a payment to ``payee``."""
    return str(row.get("counterparty", payee)).lower() == payee.lower()


def _bank_pay(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        payee, reference = _payee(text), _reference(text)
        rest = _strip(text, reference, payee)
        amounts = _amounts(rest)
        if payee is None or reference is None or not amounts:
            raise _Ask
        label = "savings" if "savings" in _unquoted(text).lower() else "checking"
        accounts = _accounts((yield from _call("list_accounts")))
        done = yield from _call(
            "pay", payee=payee, from_account=accounts[label]["id"], amount=amounts[-1], reference=reference
        )
        return f"Paid; {done.get('balance_after', '')} left."

    yield from agent.turn(first, text)


def _bank_card(agent: Agent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        def card_balance(seen: dict[str, Any]) -> bool:
            return "balance" in _accounts(seen).get("credit", {})

        def is_card(account: dict[str, Any]) -> bool:
            return "credit" in str(account.get("name", "credit")).lower()

        accounts = _accounts((yield from _call("list_accounts", until=card_balance, relevant=is_card)))
        checking, card = accounts["checking"], accounts["credit"]
        yield from _call(
            "transfer", from_account=checking["id"], to_account=card["id"], amount=-card["balance"]
        )
        seen = yield from _call("get_balance", account_id=checking["id"])
        state.update(checking=checking["id"], savings=accounts["savings"]["id"])
        return f"Checking now holds {seen.get('balance')}."

    def top_up(text: str) -> Script:
        amounts = _amounts(_strip(text))
        if not amounts:
            raise _Ask
        yield from _call(
            "transfer", from_account=state["savings"], to_account=state["checking"], amount=amounts[-1]
        )
        return "Moved."

    text = yield from agent.turn(first, text)
    yield from agent.turn(top_up, text)


def _bank_new_payee(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        iban = _IBAN.search(text)
        reference = _reference(text)
        person = _PERSON.search(text)
        amounts = _amounts(_strip(text, reference))
        if iban is None or person is None or reference is None or not amounts:
            raise _Ask
        yield from _call("add_payee", name=person.group(0), iban=iban.group(0))
        accounts = _accounts((yield from _call("list_accounts")))
        yield from _call(
            "pay",
            payee=person.group(0),
            from_account=accounts["checking"]["id"],
            amount=amounts[-1],
            reference=reference,
        )
        return "Added and paid."

    yield from agent.turn(first, text)


_DOORS = ("front door", "back door", "garage door", "patio door", "side door", "basement door")


@cache
def _rooms() -> tuple[str, ...]:
    from tasks.library.common import ROOM

    return tuple(str(option.accepted[0]) for option in ROOM.options)


def _room(text: str) -> str | None:
    lowered = text.lower()
    best = None
    for room in _rooms():
        for match in re.finditer(rf"\b{re.escape(room)}(?: (\d+))?\b", lowered):
            found = room + (f" {match.group(1)}" if match.group(1) else "")
            if best is None or len(found) > len(best):
                best = found
    return best


def _home_lock(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        door = _find_listed(text, _DOORS)
        if door is None:
            raise _Ask
        status = yield from _call("get_status")
        if (status.get("doors") or {}).get(door, {}).get("locked") is not True:
            yield from _call("lock_door", door=door, locked=True)
        return f"The {door} is locked."

    yield from agent.turn(first, text)


def _home_leave(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        status = yield from _call("get_status")
        for door, state in (status.get("doors") or {}).items():
            if not state.get("locked"):
                yield from _call("lock_door", door=door, locked=True)
        yield from _call("arm_security", mode="away")
        return "Locked up and armed."

    yield from agent.turn(first, text)


def _home_warmer(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        step = _small_number(_unquoted(text), "by", "warmer")
        if step is None:
            raise _Ask
        status = yield from _call("get_status")
        target = float((status.get("thermostat") or {}).get("target", 20.0))
        yield from _call("set_thermostat", target=target + step)
        return "Done."

    def dim(text: str) -> Script:
        room = _room(text.replace('"', " "))
        if room is None:
            raise _Ask
        status = yield from _call("get_status", room=room)
        brightness = int((status.get("light") or {}).get("brightness", 0))
        yield from _call("set_light", room=room, on=True, brightness=brightness // 2)
        return "Dimmed."

    text = yield from agent.turn(first, text)
    yield from agent.turn(dim, text)


def _home_vacuum(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        status = yield from _call("get_status")
        dark = [room for room, light in (status.get("lights") or {}).items() if str(light).startswith("off")]
        yield from _call("start_vacuum", rooms=dark)
        return f"Battery: {(status.get('vacuum') or {}).get('battery')}%"

    yield from agent.turn(first, text)


_REPLIES = (
    "Thanks, I'll review it by Friday.",
    "Sounds good, let's go ahead.",
    "Got it, thanks!",
    "Can we push this to next week?",
    "I'll send the numbers tomorrow morning.",
    "Works for me.",
)


_SERVICES = ("CloudBox", "Payly", "ShopRight", "TravelNest")


def _reply_body(text: str) -> str | None:
    listed = _find_listed(text, _REPLIES)
    if listed is not None:
        return listed
    quoted = [q for q in _quoted(text) if not _PERSON.fullmatch(q)]
    return quoted[-1] if quoted else None


def _mail_reply(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        who, body = _PERSON.search(text), _reply_body(text)
        if who is None or body is None:
            raise _Ask
        found = yield from _call("search_mail", until=_any_result, query="", sender=who.group(0))
        results = found.get("results") or []
        if not results:
            return "No mail from them."
        yield from _call("reply", mail_id=results[0]["id"], body=body)
        return "Replied."

    yield from agent.turn(first, text)


def _any_result(seen: dict[str, Any]) -> bool:
    return bool(seen.get("results"))


def _last_stock_known(seen: dict[str, Any]) -> bool:
    """The dearest product whose stock is shown holds some (or every stock is shown)."""
    results = seen.get("results") or []
    known = [product for product in results if "stock" in product]
    return len(known) == len(results) or any(product.get("stock") for product in known)


def _first_with_sender(seen: dict[str, Any]) -> bool:
    results = seen.get("results") or []
    return not results or "from" in results[0]


def _any_stocked(seen: dict[str, Any]) -> bool:
    return any(product.get("stock") for product in seen.get("results") or [])


def _attended(listing: dict[str, Any], email: str) -> dict[str, Any] | None:
    """The event of a day's listing one of whose attendees' addresses starts with ``email``."""
    return next(
        (
            event
            for event in listing.get("events") or []
            if any(str(a).startswith(email) for a in event.get("attendees", []))
        ),
        None,
    )


def _mail_move(agent: Agent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        who, day = _PERSON.search(text), _date(text)
        times = _times(text)
        if who is None or day is None or not times:
            raise _Ask
        email = who.group(0).lower().replace(" ", ".") + "@"
        listing = yield from _call(
            "list_events", until=lambda seen: _attended(seen, email) is not None, date=day
        )
        event = _attended(listing, email)
        if event is None:
            return "No such meeting."
        yield from _call("move_event", event_id=event["id"], date=day, start=times[-1])
        state.update(day=day, email=email)
        return "Moved."

    def ends(text: str) -> Script:
        email = state.get("email", "")

        def shown_end(seen: dict[str, Any]) -> bool:
            event = _attended(seen, email)
            return event is not None and "end" in event

        listing = yield from _call("list_events", until=shown_end, date=state.get("day", ""))
        return "Ends: " + ", ".join(str(e.get("end")) for e in listing.get("events") or [])

    text = yield from agent.turn(first, text)
    yield from agent.turn(ends, text)


def _mail_invite(agent: Agent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        who, day = _PERSON.search(text), _date(text)
        times = _times(text)
        title_match = re.search(r"Catch-up with [A-Z][a-z]+", text)
        if who is None or day is None or len(times) < 2 or title_match is None:
            raise _Ask
        found = yield from _call("search_mail", until=_first_with_sender, query="", sender=who.group(0))
        results = found.get("results") or []
        if not results:
            return "No mail from them."
        mail = results[0]
        start, end = sorted(times[:2])
        yield from _call(
            "create_event",
            title=title_match.group(0),
            date=day,
            start=start,
            end=end,
            attendees=[mail["from"]],
        )
        state["mail"] = mail["id"]
        return "Booked."

    def answer(text: str) -> Script:
        body = _reply_body(text)
        if body is None:
            raise _Ask
        yield from _call("reply", mail_id=state.get("mail", ""), body=body)
        return "Replied."

    text = yield from agent.turn(first, text)
    yield from agent.turn(answer, text)


def _mail_code(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        service = _find_listed(text, _SERVICES)
        if service is None:
            raise _Ask
        found = yield from _call("search_mail", until=_any_result, query="code", sender=service)
        results = found.get("results") or []
        if not results:
            return "No code."
        mail = yield from _call("read_mail", mail_id=results[0]["id"])
        codes = re.findall(r"\d{6}", str(mail.get("body", "")))
        return f"The code is {codes[0] if codes else '?'}."

    yield from agent.turn(first, text)


_EVENT_TITLES = ("Project sync", "Design review", "Budget review", "Customer call", "Sprint planning", "1:1")


def _mail_cancel(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        day = _date(text)
        if day is None:
            raise _Ask
        listing = yield from _call("list_events", date=day)
        events = listing.get("events") or []
        quoted = _quoted(text)
        titles = [str(e.get("title")) for e in events]
        title = next((q for q in quoted if q in titles), None) or _find_listed(_strip_dates(text), titles)
        event = next((e for e in events if e.get("title") == title), None)
        if event is None:
            return "No such event."
        yield from _call("cancel_event", event_id=event["id"])
        return "Also that day: " + ", ".join(t for t in titles if t != title)

    yield from agent.turn(first, text)


def _strip_dates(text: str) -> str:
    for regex, _ in _DATES:
        text = regex.sub(" ", text)
    return text
