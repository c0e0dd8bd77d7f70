"""The scripts of the shop and workspace scenario kinds, replayed from the public plans."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from tasks.library.common import CITY, STREET_ADDRESS

from .bank_home_mail import _any_stocked, _last_stock_known, _strip
from .tools import Agent, Script, _Ask, _call
from .values import _ORDER, _PERSON, _amounts, _find_listed, _quoted, _small_number, _times, _unquoted

_NOUNS = (
    "cutting board", "chef's knife", "coffee grinder", "kettle", "USB-C cable", "wireless mouse", "laptop",
    "headphones", "monitor", "desk lamp", "throw blanket", "office chair", "tent", "water bottle", "backpack",
)  # fmt: skip


_BRANDS = ("Acme", "Northwind", "Zenith", "Orbit", "Maple", "Vertex", "Nimbus", "Harbor", "Lumen", "Pioneer")


_REASONS = ("arrived damaged", "wrong size", "no longer needed", "not as described", "stopped working")


_NOUN_ALTERNATION = "|".join(re.escape(noun) for noun in _NOUNS)


_PRODUCT = re.compile(rf"\b(?:{'|'.join(_BRANDS)}) (?:{_NOUN_ALTERNATION})(?: Pro| Mini| XL| Lite)?(?![\w-])")


@cache
def _address_regex() -> re.Pattern[str]:
    _, streets, suffixes = STREET_ADDRESS.parts
    cities = [re.escape(str(option.accepted[0])) for option in CITY.options]
    return re.compile(
        rf"\b(\d+ (?:{'|'.join(map(re.escape, streets))}) (?:{'|'.join(suffixes)})),? ({'|'.join(cities)})"
    )


def _address(text: str) -> str | None:
    match = _address_regex().search(text)
    return f"{match.group(1)}, {match.group(2)}" if match else None


def _shop_cheapest(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        noun = _find_listed(text, _NOUNS)
        address = _address(text)
        count = _small_number(_strip(text, address), "how many", "order")
        if noun is None or address is None or count is None:
            raise _Ask
        found = yield from _call("search_products", until=_any_stocked, query=noun)
        stocked = [p for p in found.get("results") or [] if p.get("stock")]
        if not stocked:
            return "Nothing in stock."
        yield from _call("add_to_cart", sku=stocked[0]["sku"], quantity=count)
        order = yield from _call("checkout", address=address)
        return f"Order {order.get('id')}."

    yield from agent.turn(first, text)


def _shop_cancel(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        order = _ORDER.search(text)
        if order is None:
            raise _Ask
        order_id = order.group(0).upper()
        status = yield from _call("order_status", order_id=order_id)
        if status.get("status") == "processing":
            yield from _call("cancel_order", order_id=order_id)
        return f"It was {status.get('status')}."

    yield from agent.turn(first, text)


def _shop_return(agent: Agent, text: str) -> Script:
    state: dict[str, Any] = {}

    def first(text: str) -> Script:
        order, reason = _ORDER.search(text), _find_listed(text, _REASONS)
        if order is None or reason is None:
            raise _Ask
        seen = yield from _call("order_status", order_id=order.group(0).upper())
        items = seen.get("items") or []
        name = _find_listed(text, [str(item.get("name")) for item in items])
        item = next((i for i in items if i.get("name") == name), None)
        if item is None:
            return "No such item."
        done = yield from _call("return_item", order_id=seen["id"], sku=item["sku"], reason=reason)
        state["address"] = seen.get("address", "")
        return f"Return {done.get('id')}."

    def reorder(text: str) -> Script:
        product = _PRODUCT.search(text)
        if product is None:
            raise _Ask
        name = product.group(0)

        def named(seen: dict[str, Any]) -> bool:
            return any(p.get("name") == name for p in seen.get("results") or [])

        found = yield from _call("search_products", until=named, query=name)
        match = next((p for p in found.get("results") or [] if p.get("name") == name), None)
        if match is None:
            return "Not found."
        yield from _call("add_to_cart", sku=match["sku"], quantity=_small_number(_strip(text, name)) or 2)
        yield from _call("checkout", address=state.get("address", ""))
        return "Ordered."

    text = yield from agent.turn(first, text)
    yield from agent.turn(reorder, text)


def _shop_budget(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        noun = _find_listed(text, _NOUNS)
        amounts = _amounts(_strip(text))
        if noun is None or not amounts:
            raise _Ask
        budget = float(amounts[-1])
        found = yield from _call(
            "search_products", until=_last_stock_known, from_end=True, query=noun, max_price=budget
        )
        stocked = [p for p in found.get("results") or [] if p.get("stock")]
        if not stocked:
            return "Nothing fits."
        yield from _call("add_to_cart", sku=stocked[-1]["sku"], quantity=1)
        cart = yield from _call("view_cart")
        return f"Cart total {cart.get('total')}."

    yield from agent.turn(first, text)


@cache
def _function_regex() -> re.Pattern[str]:
    from tasks.episodes.environments.repository import _NOUNS as nouns
    from tasks.episodes.environments.repository import KINDS

    verbs = sorted({verb for kind in KINDS for verb in kind.verbs}, key=len, reverse=True)
    return re.compile(rf"\b(?:{'|'.join(verbs)})_(?:{'|'.join(nouns)})\b")


def _fix(path: str, content: str, function: str) -> str | None:
    """The diff that puts the known correct line back in ``function`` (the public bug kinds)."""
    from tasks.episodes.environments.patching import make_patch
    from tasks.episodes.environments.repository import KINDS

    start = content.find(f"def {function}(")
    if start < 0:
        return None
    end = content.find("\ndef ", start + 1)
    body = content[start : end if end > 0 else len(content)]
    for kind in KINDS:
        if kind.buggy + "\n" in body:
            after = content[:start] + content[start:].replace(kind.buggy + "\n", kind.fixed + "\n", 1)
            return str(make_patch(path, content, after))
    return None


def _failing(report: dict[str, Any]) -> tuple[str, str] | None:
    """(test file, test function) of the first failing test of a run_tests report."""
    for failure in report.get("failures") or []:
        test = str(failure.get("test", ""))
        if "::" in test:
            path, name = test.split("::", 1)
            return path, name
    return None


def _module_of(test_source: str) -> str | None:
    match = re.search(r"^from ([\w.]+) import", test_source, re.MULTILINE)
    return "src/" + match.group(1).replace(".", "/") + ".py" if match else None


def _ws_fix(agent: Agent, text: str) -> Script:
    def by_tests(text: str) -> Script:
        report = yield from _call("run_tests")
        failing = _failing(report)
        if failing is None:
            return "Nothing fails."
        test = yield from _call("read_file", path=failing[0])
        module = _module_of(str(test.get("content", "")))
        if module is None:
            return "Could not find the module."
        source = yield from _call("read_file", path=module)
        function = failing[1].removeprefix("test_")
        patch = _fix(module, str(source.get("content", "")), function)
        if patch is None:
            return "Could not find the bug."
        yield from _call("apply_patch", patch=patch)
        yield from _call("run_tests")
        return f"It was {failing[1]}."

    def by_name(text: str) -> Script:
        function = _function_regex().search(_unquoted(text))
        if function is None:
            raise _Ask
        name = function.group(0)
        found = yield from _call("run_shell", command=f"grep -rn 'def {name}(' src")
        match = re.match(r"([^:\s]+):\d+:", str(found.get("output", "")))
        if match is None:
            return "Not found."
        source = yield from _call("read_file", path=match.group(1))
        patch = _fix(match.group(1), str(source.get("content", "")), name)
        if patch is None:
            return "Could not find the bug."
        yield from _call("apply_patch", patch=patch)
        yield from _call("run_tests")
        return f"It was in {match.group(1)}."

    named = _function_regex().search(_unquoted(text)) is not None
    yield from agent.turn(by_name if named else by_tests, text)


def _ws_locate(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        function = _function_regex().search(_unquoted(text))
        if function is None:
            raise _Ask
        name = function.group(0)
        found = yield from _call("run_shell", command=f"grep -rn 'def {name}(' src")
        match = re.match(r"([^:\s]+):\d+:", str(found.get("output", "")))
        if match is None:
            return "Not found."
        counted = yield from _call("run_shell", command=f"wc -l {match.group(1)}")
        return f"{match.group(1)}: {counted.get('output', '')}"

    yield from agent.turn(first, text)


_FACT_KEYS = ("release_reviewer", "staging_db_host", "deploy_branch", "oncall_handle")


_FACT_VALUE = {
    "release_reviewer": _PERSON,
    "staging_db_host": re.compile(r"\bdb-staging-\d\.(?:internal|corp\.lan|eu-west-1\.rds)\b"),
    "deploy_branch": re.compile(r"\brelease/\d+\.\d+\b"),
    "oncall_handle": re.compile(r"@[a-z]+(?:\.dev|_ops|42|\.pm|_qa|-eng)?\b"),
}


_FACT_QUESTIONS = {
    "release_reviewer": ("reviews", "reviewer"),
    "staging_db_host": ("staging", "database", "host"),
    "deploy_branch": ("branch", "deploy"),
    "oncall_handle": ("on call", "on-call", "oncall"),
}


def _ws_memory(agent: Agent, text: str) -> Script:
    state: dict[str, Any] = {}

    def save(text: str) -> Script:
        key = _find_listed(text, _FACT_KEYS)
        if key is None:
            raise _Ask
        values = [m.group(0) for m in _FACT_VALUE[key].finditer(text)]
        values = [v for v in values if v != key]
        if not values:
            raise _Ask
        yield from _call("remember", key=key, value=values[-1])
        state["key"] = key
        return "Saved."

    def recall(text: str) -> Script:
        seen = yield from _call("retrieve_memory", key=state.get("key", ""))
        return f"{seen.get('value')}"

    text = yield from agent.turn(save, text)
    yield from agent.turn(recall, text)


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


_COMMANDS = ("pytest -x -q", "pytest -q", "pytest tests")


def _schedule(text: str) -> str | None:
    plain = _unquoted(text)
    lowered = plain.lower()
    hourly = re.search(r"every hour at (\d+) minutes past", lowered)
    if hourly or re.search(r"\b(?:every hour|hourly)\b", lowered):
        if hourly:
            return f"{int(hourly.group(1))} * * * *"
        minutes = [int(n) for n in re.findall(r"(?<![\d:])\b(\d{1,2})\b(?!:)", plain)]
        return f"{minutes[-1]} * * * *" if minutes else None
    times = _times(plain)
    if not times:
        return None
    hour, minute = (int(part) for part in times[-1].split(":"))
    if re.search(r"\b(?:every weekday|weekdays)\b", lowered):
        day = "1-5"
    elif re.search(r"\b(?:every day|daily)\b", lowered):
        day = "*"
    else:
        named = next((d for d in _WEEKDAYS if d.lower() in lowered), None)
        if named is None:
            return None
        day = str((_WEEKDAYS.index(named) + 1) % 7)
    return f"{minute} {hour} * * {day}"


def _ws_cron(agent: Agent, text: str) -> Script:
    def create(text: str) -> Script:
        command = _find_listed(text, _COMMANDS)
        schedule = _schedule(_strip(text, command) if command else text)
        if command is None or schedule is None:
            raise _Ask
        job = yield from _call("cron_create", schedule=schedule, command=command)
        return f"Job {job.get('id')}."

    def tell(text: str) -> Script:
        handle = re.search(r"@[a-z]+(?:\.dev|_ops|42|\.pm|_qa|-eng)?(?![\w-])", text)
        quoted = [q for q in _quoted(text) if q.startswith("Heads-up")] or _quoted(text)
        if handle is None or not quoted:
            raise _Ask
        yield from _call("message_send", recipient=handle.group(0), text=quoted[-1])
        return "Sent."

    text = yield from agent.turn(create, text)
    yield from agent.turn(tell, text)


def _ws_record(agent: Agent, text: str) -> Script:
    def first(text: str) -> Script:
        key = _find_listed(text, ("broken_module", "bug_location", "failing_module"))
        if key is None:
            raise _Ask
        report = yield from _call("run_tests")
        failing = _failing(report)
        if failing is None:
            return "Nothing fails."
        test = yield from _call("read_file", path=failing[0])
        module = _module_of(str(test.get("content", "")))
        if module is None:
            return "Could not tell."
        yield from _call("remember", key=key, value=module)
        return module

    yield from agent.turn(first, text)


def _ws_survey(agent: Agent, text: str) -> Script:
    def count(text: str) -> Script:
        listing = yield from _call(
            "list_files", until=lambda seen: True, directory="tests", pattern="test_*.py"
        )
        return f"{listing.get('count')} test files."

    def run(text: str) -> Script:
        report = yield from _call("run_tests")
        failing = _failing(report)
        return f"{failing[1] if failing else 'none'} fails."

    text = yield from agent.turn(count, text)
    yield from agent.turn(run, text)
