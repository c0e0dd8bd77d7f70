"""The shop's parts: products picked by comparing what a search shows (the cheapest in stock, the
dearest under a budget, the cheaper of two), quantities corrected later ("make it three in
total"), orders cancelled or returned depending on their status, and conditions on prices, order
statuses and the cart's total."""

from __future__ import annotations

from typing import Any

from tasks.episodes.environments.shop import _KINDS, _REASONS, Shop, _address, _count
from tasks.episodes.goals import Abandon, Context, Part, Probe, Withhold, condition, goal
from tasks.episodes.scenario import quoted, stated
from tasks.rand import between, choose

_NOUNS = tuple(dict.fromkeys(kind[1] for kind in _KINDS))


def _shop(ctx: Context) -> Shop:
    env = ctx.env
    assert isinstance(env, Shop)
    return env


def _price_value(price: float, slot: str = "price") -> dict[str, Any]:
    said = f"{price:.2f}" if price % 1 else f"{price:.0f}"
    forms = [form for form in dict.fromkeys((f"{price:.2f}", f"{price:g}")) if form != said]
    return stated(slot, "a price", said, *forms, kind="number")


def _present(env: Shop) -> list[str]:
    """The product nouns the catalogue holds."""
    names = " ".join(p["name"] for p in env.catalogue)
    return [noun for noun in _NOUNS if noun in names]


def _room(env: Shop, sku: str, quantity: int, price: float) -> bool:
    """Whether ``quantity`` more of ``sku`` fit the stock, the 50-a-line cap and the checkout cap."""
    held = sum(line["quantity"] for line in env.cart if line["sku"] == sku)
    stock = next(p["stock"] for p in env.catalogue if p["sku"] == sku)
    total = env._cart_total() + quantity * price
    return held + quantity <= min(stock, 50) and total <= 4000


def _more(sku: str) -> Any:
    """The correction of an added quantity: "actually, I need N in total" (the difference added)."""

    def correct(ctx: Context) -> Part | None:
        env = _shop(ctx)
        now = sum(line["quantity"] for line in env.cart if line["sku"] == sku)
        price = next(p["price"] for p in env.catalogue if p["sku"] == sku)
        wanted = now + between(ctx.rng, 1, 3)
        if now == 0 or wanted > 9 or not _room(env, sku, wanted - now, price):
            return None
        ctx.run("add_to_cart", sku=sku, quantity=wanted - now)
        value = stated("quantity", "how many in total", str(wanted), kind="number")
        text = f"actually, I need {wanted} of those in the cart in total"
        return Part(text, [value], purpose="correct a quantity")

    return correct


@goal("shop", 1.5, withholds=True)
def cheapest_in_stock(ctx: Context) -> Part | None:
    """N of the cheapest product of a kind that is in stock (under a price, or of a brand)."""
    env, rng = _shop(ctx), ctx.rng
    nouns = _present(env)
    if not nouns:
        return None
    noun = choose(rng, nouns)
    quantity = between(rng, 1, 3)
    found = ctx.run("search_products", query=noun)["results"]
    pick = next((p for p in found if p["stock"] >= quantity), None)
    if pick is None or not _room(env, pick["sku"], quantity, pick["price"]):
        raise Abandon("nothing in stock")
    ctx.run("add_to_cart", sku=pick["sku"], quantity=quantity)
    said, value = _count(quantity, rng)
    slot = ctx.slot("quantity")
    value["slot"] = slot
    noun_value = stated("product", "what to buy", noun)
    text = f"put {said} of the cheapest {noun} that's in stock in my cart"
    held = {"slot": slot, "about": "how many", "said": "some", "forbidden": list(value["mentions"][0][1])}
    return Part(
        text,
        [value, noun_value],
        purpose="buy the cheapest of a kind",
        withhold=Withhold(text.replace(f"put {said} ", "put some ", 1), held, f"Make it {said}.", [value]),
        correction=_more(pick["sku"]),
    )


@goal("shop")
def dearest_under(ctx: Context) -> Part | None:
    """The most expensive product of a kind under a budget, in stock."""
    env, rng = _shop(ctx), ctx.rng
    nouns = _present(env)
    if not nouns:
        return None
    noun = choose(rng, nouns)
    prices = sorted(p["price"] for p in env.catalogue if noun in p["name"])
    budget = float(int(prices[len(prices) // 2] + 1 + 40 * rng.random()))
    found = ctx.run("search_products", query=noun, max_price=budget)["results"]
    stocked = [p for p in found if p["stock"] >= 1]
    if not stocked:
        raise Abandon("nothing under the budget")
    pick = max(stocked, key=lambda p: (p["price"], p["sku"]))
    if sum(p["price"] == pick["price"] for p in stocked) > 1 or not _room(env, pick["sku"], 1, pick["price"]):
        raise Abandon("a tie")
    ctx.run("add_to_cart", sku=pick["sku"], quantity=1)
    values = [stated("product", "what to buy", noun), _price_value(budget, "budget")]
    text = f"add the most expensive {noun} under {values[1]['mentions'][0][1][0]} that's in stock to my cart"
    return Part(text, values, purpose="buy the best within a budget")


@goal("shop")
def cheaper_of_two(ctx: Context) -> Part | None:
    """Whichever of two named products is cheaper: two lookups, one comparison."""
    env, rng = _shop(ctx), ctx.rng
    stocked = [p for p in env.catalogue if p["stock"] >= 1]
    if len(stocked) < 2:
        return None
    first, second = choose(rng, stocked), choose(rng, stocked)
    if first is second or first["price"] == second["price"]:
        return None
    for product in (first, second):
        if not any(
            p["sku"] == product["sku"] for p in ctx.run("search_products", query=product["name"])["results"]
        ):
            raise Abandon("not found by its name")
    pick = min(first, second, key=lambda p: p["price"])
    if not _room(env, pick["sku"], 1, pick["price"]):
        raise Abandon("no room")
    ctx.run("add_to_cart", sku=pick["sku"], quantity=1)
    values = [
        quoted("product", "a product", first["name"]),
        quoted("product", "another product", second["name"]),
    ]
    text = f'add one of whichever is cheaper, "{first["name"]}" or "{second["name"]}", to my cart'
    return Part(text, values, purpose="buy the cheaper of two")


@goal("shop")
def check_out(ctx: Context) -> Part | None:
    """Check the cart out; the new order's id is asked for."""
    env, rng = _shop(ctx), ctx.rng
    if not env.cart:
        return None
    address, value = _address(rng)
    order = ctx.run("checkout", address=address)
    return Part(
        f"check out and ship it all to {address}, and tell me the order number", [value], [order["id"]], "buy"
    )


@goal("shop", branch=False)
def cancel_or_status(ctx: Context) -> Part | None:
    """Cancel an order if it has not shipped, else tell its status: which, the read decides."""
    env, rng = _shop(ctx), ctx.rng
    order = choose(rng, env.orders)
    if order["status"] == "cancelled":
        return None
    ctx.run("order_status", order_id=order["id"])
    needed: list[Any] = []
    if order["status"] == "processing":
        ctx.run("cancel_order", order_id=order["id"])
    else:
        needed = [order["status"]]
    values = [stated("order", "which order", order["id"])]
    text = f"cancel order {order['id']} if it hasn't shipped yet, and otherwise tell me its status"
    return Part(text, values, needed, "stop an order if it is not too late")


@goal("shop")
def return_item(ctx: Context) -> Part | None:
    """Return a named item of a delivered order: its sku is read off the order."""
    env, rng = _shop(ctx), ctx.rng
    delivered = [o for o in env.orders if o["status"] == "delivered"]
    if not delivered:
        return None
    order = choose(rng, delivered)
    item = choose(rng, order["items"])
    if any(r["order_id"] == order["id"] and r["sku"] == item["sku"] for r in env.returns):
        return None
    if sum(i["name"] == item["name"] for i in order["items"]) > 1:
        return None
    reason = choose(rng, _REASONS)
    ctx.run("order_status", order_id=order["id"])
    ctx.run("return_item", order_id=order["id"], sku=item["sku"], reason=reason)
    values = [quoted("product", "item to return", item["name"]), stated("order", "which order", order["id"])]
    values.append(quoted("reason", "why it goes back", reason))
    text = f'send back the "{item["name"]}" from order {order["id"]}, reason "{reason}"'
    return Part(text, values, purpose="return an item")


@goal("shop")
def order_cost(ctx: Context) -> Part | None:
    env = _shop(ctx)
    order = choose(ctx.rng, env.orders)
    total = ctx.run("order_status", order_id=order["id"])["total"]
    text = f"tell me what order {order['id']} cost in total"
    return Part(text, [stated("order", "which order", order["id"])], [total], "know an order's cost")


# -- conditions ---------------------------------------------------------------------------


@condition("shop")
def cheapest_under(ctx: Context) -> Probe | None:
    env, rng = _shop(ctx), ctx.rng
    nouns = _present(env)
    if not nouns:
        return None
    noun = choose(rng, nouns)
    found = ctx.run("search_products", query=noun)["results"]
    cheapest = found[0]["price"]
    limit = float(max(5, int(cheapest * (0.6 + 0.8 * rng.random()))))
    if limit == cheapest:
        return None
    values = [stated("product", "kind of product", noun), _price_value(limit, "threshold")]
    return Probe(
        f"the cheapest {noun} costs less than {values[1]['mentions'][0][1][0]}", values, cheapest < limit
    )


@condition("shop")
def order_delivered(ctx: Context) -> Probe | None:
    env, rng = _shop(ctx), ctx.rng
    order = choose(rng, env.orders)
    status = ctx.run("order_status", order_id=order["id"])["status"]
    values = [stated("order", "which order", order["id"])]
    return Probe(f"order {order['id']} has been delivered", values, status == "delivered")


@condition("shop")
def cart_over(ctx: Context) -> Probe | None:
    env, rng = _shop(ctx), ctx.rng
    if not env.cart:
        return None
    total = ctx.run("view_cart")["total"]
    limit = float(max(10, int(total * (0.6 + 0.8 * rng.random()))))
    if limit == total:
        return None
    values = [_price_value(limit, "threshold")]
    return Probe(f"my cart comes to more than {values[0]['mentions'][0][1][0]}", values, total > limit)


@goal("shop")
def reorder(ctx: Context) -> Part | None:
    """The same quantity of an item of a past order again: the sku and quantity are read off it."""
    env, rng = _shop(ctx), ctx.rng
    order = choose(rng, env.orders)
    item = choose(rng, order["items"])
    price = next(p["price"] for p in env.catalogue if p["sku"] == item["sku"])
    if sum(i["name"] == item["name"] for i in order["items"]) > 1 or not _room(
        env, item["sku"], item["quantity"], price
    ):
        return None
    ctx.run("order_status", order_id=order["id"])
    ctx.run("add_to_cart", sku=item["sku"], quantity=item["quantity"])
    values = [
        quoted("product", "item to buy again", item["name"]),
        stated("order", "which order", order["id"]),
    ]
    text = f'put the "{item["name"]}" from order {order["id"]} in my cart again, as many as I ordered then'
    return Part(text, values, purpose="buy again")


@goal("shop")
def cart_total(ctx: Context) -> Part | None:
    env = _shop(ctx)
    if not env.cart:
        return None
    total = ctx.run("view_cart")["total"]
    return Part("tell me what my cart comes to now", [], [total], "know the cart's total")


@goal("shop")
def cheapest_of_brand(ctx: Context) -> Part | None:
    """The cheapest in-stock product of a brand and kind (the brand narrows the search)."""
    env, rng = _shop(ctx), ctx.rng
    product = choose(rng, env.catalogue)
    brand = product["name"].split()[0]
    noun = next((n for n in _NOUNS if n in product["name"]), None)
    if noun is None:
        return None
    found = ctx.run("search_products", query=f"{brand} {noun}")["results"]
    pick = next((p for p in found if p["stock"] >= 1), None)
    if pick is None or not _room(env, pick["sku"], 1, pick["price"]):
        raise Abandon("none in stock")
    ctx.run("add_to_cart", sku=pick["sku"], quantity=1)
    values = [stated("brand", "the brand", brand), stated("product", "what to buy", noun)]
    return Part(f"add the cheapest {brand} {noun} in stock to my cart", values, purpose="buy a brand")


@condition("shop")
def in_stock(ctx: Context) -> Probe | None:
    env, rng = _shop(ctx), ctx.rng
    product = choose(rng, env.catalogue)
    found = ctx.run("search_products", query=product["name"])["results"]
    shown = next((p for p in found if p["sku"] == product["sku"]), None)
    if shown is None:
        return None
    values = [quoted("product", "a product", product["name"])]
    return Probe(f'"{product["name"]}" is in stock', values, shown["stock"] > 0)
