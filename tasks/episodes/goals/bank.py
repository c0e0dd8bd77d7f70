"""The bank's parts: payments and transfers whose amounts, payees and order come from the history,
small arithmetic ("my share of the 96.00 dinner we split three ways"), corrections ("actually,
make that 250.00") and conditions on balances and past payments."""

from __future__ import annotations

import datetime as _dt
from random import Random
from typing import Any

from tasks.episodes.environments.bank import _BILLERS, _MERCHANTS, _REFERENCES, Bank, _amount_value, _money
from tasks.episodes.environments.mail_calendar import _said_date
from tasks.episodes.goals import Abandon, Context, Part, Probe, Withhold, condition, goal
from tasks.episodes.scenario import quoted, stated
from tasks.library.common import PERSON
from tasks.rand import between, choose

_WORDS = {"Everyday checking": "checking", "Savings": "savings", "Credit card": "credit card"}
_WORDS["Travel fund"] = "travel fund"
_BILLER_NAMES = frozenset(biller[0] for biller in _BILLERS)
_WAYS = ("", "", "two", "three", "four", "five")
_SHARED = ("dinner", "taxi", "cabin weekend", "groceries", "concert tickets", "birthday present")


def _bank(ctx: Context) -> Bank:
    env = ctx.env
    assert isinstance(env, Bank)
    return env


def _word(account: dict[str, Any]) -> str:
    return _WORDS[account["name"]]


def _account_value(account: dict[str, Any], about: str) -> dict[str, Any]:
    return stated("account", about, _word(account))


def _listed(ctx: Context, account: dict[str, Any]) -> str:
    """The account's id, the accounts listed first where the conversation has not yet."""
    ctx.once("accounts", "list_accounts")
    return str(account["id"])


def _money_value(amount: float, slot: str = "amount") -> dict[str, Any]:
    value = _amount_value(amount)
    value["slot"] = slot
    return value


def _history(ctx: Context, account: dict[str, Any], rows: int = 20) -> list[dict[str, Any]]:
    """The account's newest transactions as the plan reads them (50 where the 20 by default
    would not reach the row the goal needs: ``rows`` is its index among the newest)."""
    arguments: dict[str, Any] = {"account_id": _listed(ctx, account)}
    if rows >= 20:
        arguments["limit"] = 50
    listed: list[dict[str, Any]] = ctx.run("list_transactions", **arguments)["transactions"]
    return listed


def _newest(env: Bank, account: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in reversed(env.transactions) if t["account"] == account["id"]][:50]


def _payable(env: Bank, account: dict[str, Any]) -> float:
    return min(env.payment_limit, account["balance"])


@goal("bank", 1.2, withholds=True)
def pay_stated(ctx: Context) -> Part | None:
    """A stated amount to a known payee (the amount can be withheld and supplied next turn)."""
    env, rng = _bank(ctx), ctx.rng
    account = choose(rng, env.accounts[:2])
    top = min(_payable(env, account), 900.0)
    if top < 10:
        return None
    payee, reference = choose(rng, env.payees)["name"], choose(rng, _REFERENCES)
    amount = round(between(rng, 500, int(top * 100)) / 100, 2)
    ctx.run("pay", payee=payee, from_account=_listed(ctx, account), amount=amount, reference=reference)
    slot = ctx.slot("amount")
    value = _money_value(amount, slot)
    tail = f'to {payee} from my {_word(account)} account, reference "{reference}"'
    values = [stated("payee", "who to pay", payee), _account_value(account, "account to pay from")]
    values.append(quoted("reference", "payment reference", reference))
    held = {"slot": slot, "about": "amount to pay", "said": "what I owe", "forbidden": [_money(amount)]}

    def correct(ctx: Context) -> Part | None:
        """ "Actually, it was X in all": the difference paid, with the same reference."""
        more = round(between(ctx.rng, 100, 5000) / 100, 2)
        if more > _payable(env, account):
            return None
        ctx.run("pay", payee=payee, from_account=account["id"], amount=more, reference=reference)
        total = round(amount + more, 2)
        text = f"actually, I owed {payee} {_money(total)} in all: send the rest with the same reference"
        return Part(text, [_money_value(total), stated("payee", "who to pay", payee)], purpose="pay the rest")

    return Part(
        f"send {_money(amount)} {tail}",
        [value, *values],
        purpose="pay someone",
        withhold=Withhold(f"send what I owe {tail}", held, f"It's {_money(amount)}.", [value]),
        correction=correct,
    )


@goal("bank")
def split_share(ctx: Context) -> Part | None:
    """My share of a bill split N ways: the amount is worked out, never stated."""
    env, rng = _bank(ctx), ctx.rng
    people = [p["name"] for p in env.payees if p["name"] not in _BILLER_NAMES]
    checking = env.accounts[0]
    ways = between(rng, 2, 5)
    share = between(rng, 800, 9000) / 100
    if share > _payable(env, checking) or not people:
        return None
    total = round(share * ways, 2)
    person, thing, reference = choose(rng, people), choose(rng, _SHARED), choose(rng, _REFERENCES)
    ctx.run("pay", payee=person, from_account=_listed(ctx, checking), amount=share, reference=reference)
    values = [stated("payee", "who to pay", person), _money_value(total, "total")]
    values += [stated("ways", "how many people split it", _WAYS[ways], str(ways), kind="number")]
    values.append(quoted("reference", "payment reference", reference))
    text = (
        f"pay {person} my share of the {_money(total)} {thing} we split {_WAYS[ways]} ways, "
        f'from my checking account, reference "{reference}"'
    )
    return Part(text, values, purpose="settle a shared bill")


@goal("bank")
def repeat_last(ctx: Context) -> Part | None:
    """Pay someone the same as last time: the amount comes from the history."""
    env, rng = _bank(ctx), ctx.rng
    checking = env.accounts[0]
    newest = _newest(env, checking)
    latest: dict[str, int] = {}
    for index, row in enumerate(newest):
        if row["kind"] == "payment":
            latest.setdefault(row["counterparty"], index)
    choices = [name for name, index in latest.items() if -newest[index]["amount"] <= _payable(env, checking)]
    if not choices:
        return None
    payee = choose(rng, choices)
    row = newest[latest[payee]]
    word = row["reference"].split()[0] if row["reference"] else ""
    reference = f"{word} {env.today[:7]}" if word in ("Rent", "Account") else choose(rng, _REFERENCES)
    _history(ctx, checking, latest[payee])
    ctx.run("pay", payee=payee, from_account=checking["id"], amount=-row["amount"], reference=reference)
    values = [stated("payee", "who to pay", payee), quoted("reference", "payment reference", reference)]
    text = f'pay {payee} the same amount as last time from my checking account, reference "{reference}"'
    return Part(text, values, purpose="repeat a payment")


@goal("bank")
def pay_landlord(ctx: Context) -> Part | None:
    """Rent to "my landlord": who that is and how much are read off the rent rows; the share is
    a half or a third of it where a flatmate pays the rest (worked out)."""
    env, rng = _bank(ctx), ctx.rng
    checking = env.accounts[0]
    newest = _newest(env, checking)
    index = next((i for i, t in enumerate(newest) if t["reference"].startswith("Rent ")), None)
    if index is None:
        return None
    rent = -newest[index]["amount"]
    share, said = choose(rng, ((1, "this month's rent"), (2, "my half of this month's rent")))
    if rng.random() < 0.3:
        share, said = 3, "my third of this month's rent"
    amount = round(rent / share, 2)
    if amount > _payable(env, checking) or round(amount * share, 2) != rent:
        return None
    row, reference = newest[index], f"Rent {env.today[:7]}"
    _history(ctx, checking, index)
    ctx.run("pay", payee=row["counterparty"], from_account=checking["id"], amount=amount, reference=reference)
    text = (
        f'pay my landlord {said} from checking (the rent is what I paid last time), reference "{reference}"'
    )
    return Part(text, [quoted("reference", "payment reference", reference)], purpose="pay the rent")


@goal("bank")
def whoever_for(ctx: Context) -> Part | None:
    """A stated amount to "whoever I paid for X": the payee is read off the history."""
    env, rng = _bank(ctx), ctx.rng
    checking = env.accounts[0]
    newest = _newest(env, checking)
    by_reference: dict[str, list[int]] = {}
    for index, row in enumerate(newest):
        if row["kind"] == "payment" and row["reference"] in _REFERENCES:
            by_reference.setdefault(row["reference"], []).append(index)
    unique = [
        (ref, rows[0])
        for ref, rows in by_reference.items()
        if len({newest[i]["counterparty"] for i in rows}) == 1
    ]
    top = min(_payable(env, checking), 300.0)
    if not unique or top < 10:
        return None
    reference, index = choose(rng, unique)
    amount = float(between(rng, 5, int(top)))
    _history(ctx, checking, max(by_reference[reference]))
    payee = newest[index]["counterparty"]
    ctx.run("pay", payee=payee, from_account=checking["id"], amount=amount, reference=reference)
    values = [_money_value(amount), quoted("reference", "what the earlier payment was for", reference)]
    text = f'send {_money(amount)} from checking to whoever I paid for "{reference}", with the same reference'
    return Part(text, values, purpose="pay someone again")


@goal("bank", 1.2)
def move_money(ctx: Context) -> Part | None:
    """A transfer between own accounts; a later turn may change the amount ("make that X")."""
    env, rng = _bank(ctx), ctx.rng
    own = [a for a in env.accounts if a["name"] != "Credit card"]
    source = choose(rng, own)
    target = choose(rng, [a for a in own if a is not source])
    if source["balance"] < 60:
        return None
    amount = float(between(rng, 5, int(min(source["balance"], 800.0) // 10)) * 10)
    ctx.run("transfer", from_account=_listed(ctx, source), to_account=target["id"], amount=amount)
    values = [_money_value(amount), _account_value(source, "account to move from")]
    values.append(_account_value(target, "account to move to"))
    text = f"move {_money(amount)} from my {_word(source)} to my {_word(target)} account"

    def correct(ctx: Context) -> Part | None:
        wanted = amount + choose(ctx.rng, (-1, 1)) * between(ctx.rng, 1, 9) * 5
        if wanted <= 0:
            return None
        low, high = (source, target) if wanted > amount else (target, source)
        difference = round(abs(wanted - amount), 2)
        if low["balance"] < difference:
            return None
        ctx.run("transfer", from_account=low["id"], to_account=high["id"], amount=difference)
        said = f"actually, I meant {_money(wanted)} in total, not {_money(amount)}: fix the difference"
        return Part(said, [_money_value(wanted), _money_value(amount)], purpose="correct the amount moved")

    return Part(text, values, purpose="move money", correction=correct)


@goal("bank", branch=False)
def top_up_to(ctx: Context) -> Part | None:
    """Bring checking up to a stated amount from savings, if it is below it (the difference)."""
    env, rng = _bank(ctx), ctx.rng
    checking, savings = env.accounts[0], env.accounts[1]
    balance = checking["balance"]
    target = float(max(100, int(balance * (0.7 + 0.6 * rng.random())) // 50 * 50))
    if target > balance and savings["balance"] < target - balance:
        return None
    ctx.run("get_balance", account_id=_listed(ctx, checking))
    if balance < target:
        ctx.run(
            "transfer",
            from_account=savings["id"],
            to_account=checking["id"],
            amount=round(target - balance, 2),
        )
    text = f"if my checking account holds less than {_money(target)}, top it up to exactly that from savings"
    return Part(text, [_money_value(target)], purpose="keep a floor in checking")


@goal("bank")
def pay_off_card(ctx: Context) -> Part | None:
    """Clear the card's debt as it stands now (read fresh: earlier parts may have changed it)."""
    env = _bank(ctx)
    checking, card = env.accounts[0], env.accounts[2]
    debt = round(-card["balance"], 2)
    if debt <= 0 or checking["balance"] < debt:
        return None
    ctx.run("get_balance", account_id=_listed(ctx, card))
    ctx.run("transfer", from_account=checking["id"], to_account=card["id"], amount=debt)
    return Part("pay off my credit card in full from checking", [], purpose="clear the card")


@goal("bank")
def tell_balance(ctx: Context) -> Part | None:
    env = _bank(ctx)
    account = choose(ctx.rng, env.accounts)
    balance = ctx.run("get_balance", account_id=_listed(ctx, account))["balance"]
    text = f"tell me what my {_word(account)} balance is at that point"
    return Part(text, [_account_value(account, "account asked about")], [balance], "know a balance")


@goal("bank")
def save_what_spent(ctx: Context) -> Part | None:
    """Put aside as much as was spent at a merchant since a day: the plan reads the rows, the
    amount is their sum (worked out, never stated)."""
    env, rng = _bank(ctx), ctx.rng
    checking, savings = env.accounts[0], env.accounts[1]
    account = choose(rng, (checking, env.accounts[2]))
    merchant = choose(rng, _MERCHANTS)
    since = _said_since(env, between(rng, 10, 60), rng)
    rows = [t for t in env.transactions if t["account"] == account["id"] and t["date"] >= since[0]]
    spent = [t for t in rows if t["counterparty"] == merchant and t["amount"] < 0]
    total = round(-sum(t["amount"] for t in spent), 2)
    if not spent or len(rows) > 50 or total > checking["balance"]:
        return None
    ctx.run("list_transactions", account_id=_listed(ctx, account), since=since[0], limit=50)
    ctx.run("transfer", from_account=checking["id"], to_account=savings["id"], amount=total)
    values = [stated("merchant", "where the money went", merchant), _account_value(account, "account")]
    values.append(since[2])
    text = (
        f"move from checking to savings as much as I've spent at {merchant} on my {_word(account)} "
        f"account since {since[1]}"
    )
    return Part(text, values, purpose="save what a habit costs")


def _said_since(env: Bank, days: int, rng: Random) -> tuple[str, str, dict[str, Any]]:
    """A day ``days`` before the bank's today: (ISO day, as said, its stated value)."""
    day = (_dt.date.fromisoformat(env.today) - _dt.timedelta(days=days)).isoformat()
    said, value = _said_date(day, rng)
    return day, said, value


@goal("bank")
def bills_in_order(ctx: Context) -> Part | None:
    """Two bills again at their last amounts, the larger first: the order follows the data."""
    env, rng = _bank(ctx), ctx.rng
    checking = env.accounts[0]
    newest = _newest(env, checking)
    last: dict[str, int] = {}
    for index, row in enumerate(newest):
        if row["kind"] == "payment" and row["counterparty"] in _BILLER_NAMES:
            last.setdefault(row["counterparty"], index)
    if len(last) < 2:
        return None
    names = sorted(last)
    first, second = choose(rng, names), choose(rng, names)
    if first == second:
        return None
    amounts = {name: -newest[last[name]]["amount"] for name in (first, second)}
    if amounts[first] == amounts[second] or sum(amounts.values()) > _payable(env, checking):
        return None
    reference = f"Account {env.today[:7]}"
    _history(ctx, checking, max(last[first], last[second]))
    for name in sorted((first, second), key=lambda n: -amounts[n]):
        ctx.run("pay", payee=name, from_account=checking["id"], amount=amounts[name], reference=reference)
    values = [stated("payee", "a biller", first), stated("payee", "another biller", second)]
    values.append(quoted("reference", "payment reference", reference))
    text = (
        f"pay {first} and {second} again what each charged last time, from checking, the larger bill "
        f'first, both with reference "{reference}"'
    )
    return Part(text, values, purpose="pay two bills in order")


@goal("bank", 0.6)
def new_payee(ctx: Context) -> Part | None:
    env, rng = _bank(ctx), ctx.rng
    names = {p["name"].lower() for p in env.payees}
    person = next((n for n in (PERSON.draw(rng).text for _ in range(20)) if n.lower() not in names), None)
    checking = env.accounts[0]
    top = min(_payable(env, checking), 400.0)
    if person is None or top < 10:
        return None
    iban, reference = env._iban(rng), choose(rng, _REFERENCES)
    amount = round(between(rng, 1000, int(top * 100)) / 100, 2)
    ctx.run("add_payee", name=person, iban=iban)
    ctx.run("pay", payee=person, from_account=_listed(ctx, checking), amount=amount, reference=reference)
    values = [stated("payee", "new payee's name", person), stated("iban", "the payee's IBAN", iban)]
    values += [_money_value(amount), quoted("reference", "payment reference", reference)]
    text = f"add {person} (IBAN {iban}) as a payee and send them {_money(amount)} from checking"
    text += f', reference "{reference}"'
    return Part(text, values, purpose="pay someone new")


# -- conditions ---------------------------------------------------------------------------


@condition("bank")
def balance_under(ctx: Context) -> Probe | None:
    env, rng = _bank(ctx), ctx.rng
    account = choose(rng, [a for a in env.accounts if a["name"] != "Credit card"])
    balance = ctx.run("get_balance", account_id=_listed(ctx, account))["balance"]
    limit = float(int(balance * (0.6 + 0.8 * rng.random())) // 10 * 10)
    if limit <= 0 or limit == balance:
        raise Abandon("no threshold")
    values = [_account_value(account, "account tested"), _money_value(limit, "threshold")]
    return Probe(f"my {_word(account)} balance is under {_money(limit)}", values, balance < limit)


@condition("bank")
def last_paid_over(ctx: Context) -> Probe | None:
    env, rng = _bank(ctx), ctx.rng
    checking = env.accounts[0]
    newest = _newest(env, checking)
    latest: dict[str, int] = {}
    for index, row in enumerate(newest):
        if row["kind"] == "payment":
            latest.setdefault(row["counterparty"], index)
    if not latest:
        return None
    payee = choose(rng, sorted(latest))
    paid = -newest[latest[payee]]["amount"]
    limit = float(max(10, int(paid * (0.6 + 0.8 * rng.random())) // 5 * 5))
    if limit == paid:
        return None
    _history(ctx, checking, latest[payee])
    values = [stated("payee", "who was paid", payee), _money_value(limit, "threshold")]
    return Probe(f"the last payment to {payee} was over {_money(limit)}", values, paid > limit)


@goal("bank")
def half_the_card(ctx: Context) -> Part | None:
    """Pay half the card's debt as it stands (read fresh), from savings."""
    env = _bank(ctx)
    savings, card = env.accounts[1], env.accounts[2]
    debt = round(-card["balance"], 2)
    half = round(debt / 2, 2)
    if half < 1 or savings["balance"] < half:
        return None
    ctx.run("get_balance", account_id=_listed(ctx, card))
    ctx.run("transfer", from_account=savings["id"], to_account=card["id"], amount=half)
    text = "pay half of what I owe on my credit card from savings (round to the cent)"
    return Part(text, [], purpose="pay down the card")


@goal("bank")
def even_out(ctx: Context) -> Part | None:
    """Move money so two accounts hold the same: both balances read, half the gap moved."""
    env, rng = _bank(ctx), ctx.rng
    own = [a for a in env.accounts if a["name"] != "Credit card"]
    first = choose(rng, own)
    second = choose(rng, [a for a in own if a is not first])
    gap = round(first["balance"] - second["balance"], 2)
    if abs(gap) < 2 or round(gap * 50) != gap * 50:  # half the gap in whole cents
        return None
    ctx.run("get_balance", account_id=_listed(ctx, first))
    ctx.run("get_balance", account_id=second["id"])
    high, low = (first, second) if gap > 0 else (second, first)
    ctx.run("transfer", from_account=high["id"], to_account=low["id"], amount=round(abs(gap) / 2, 2))
    values = [_account_value(first, "one account"), _account_value(second, "the other account")]
    text = f"even out my {_word(first)} and {_word(second)} accounts so both hold the same"
    return Part(text, values, purpose="balance two accounts")


@goal("bank")
def save_share_of_salary(ctx: Context) -> Part | None:
    """A percentage of the latest salary to savings: the salary is read, the amount worked out."""
    env, rng = _bank(ctx), ctx.rng
    checking, savings = env.accounts[0], env.accounts[1]
    newest = _newest(env, checking)
    index = next((i for i, t in enumerate(newest) if t["reference"] == "Salary"), None)
    if index is None:
        return None
    percent = choose(rng, (5, 10, 15, 20, 25))
    amount = round(newest[index]["amount"] * percent / 100, 2)
    if amount > checking["balance"]:
        return None
    _history(ctx, checking, index)
    ctx.run("transfer", from_account=checking["id"], to_account=savings["id"], amount=amount)
    value = stated("percent", "share of the salary", f"{percent}%", f"{percent} percent", kind="number")
    return Part(f"put {percent}% of my last salary into savings", [value], purpose="save part of the pay")


@condition("bank")
def card_debt_over(ctx: Context) -> Probe | None:
    env, rng = _bank(ctx), ctx.rng
    card = env.accounts[2]
    debt = -ctx.run("get_balance", account_id=_listed(ctx, card))["balance"]
    limit = float(max(10, int(debt * (0.6 + 0.8 * rng.random())) // 10 * 10))
    if limit == debt:
        return None
    return Probe(
        f"I owe more than {_money(limit)} on my credit card", [_money_value(limit, "threshold")], debt > limit
    )


@goal("bank")
def save_largest_purchase(ctx: Context) -> Part | None:
    """Put aside the largest card purchase since a day: the rows read and compared."""
    env, rng = _bank(ctx), ctx.rng
    checking, savings = env.accounts[0], env.accounts[1]
    account = choose(rng, (checking, env.accounts[2]))
    since = _said_since(env, between(rng, 10, 45), rng)
    rows = [t for t in env.transactions if t["account"] == account["id"] and t["date"] >= since[0]]
    cards = sorted(-t["amount"] for t in rows if t["kind"] == "card")
    if not cards or len(rows) > 50 or (len(cards) > 1 and cards[-1] == cards[-2]):
        return None
    largest = cards[-1]
    if largest > checking["balance"]:
        return None
    ctx.run("list_transactions", account_id=_listed(ctx, account), since=since[0], limit=50)
    ctx.run("transfer", from_account=checking["id"], to_account=savings["id"], amount=largest)
    values = [_account_value(account, "account"), since[2]]
    text = (
        f"move from checking to savings as much as the largest card purchase on my {_word(account)} "
        f"account since {since[1]}"
    )
    return Part(text, values, purpose="save what the biggest purchase cost")
