"""Shopping: product search, cart, orders, package tracking and returns."""

from __future__ import annotations

from tasks.library.common import PERSON, choices, enum_opt, enum_req, ident, opt, req
from tasks.spec import ToolSpec
from tasks.value_generators import Composed, Decimal, Flag, Integer, Record, Records

_PRODUCT = Composed(
    (
        ("", "", "grey ", "navy ", "olive ", "matte black ", "two-pack ", "XL ", "mini ", "refurbished "),
        (
            "wireless",
            "waterproof",
            "ergonomic",
            "compact",
            "stainless steel",
            "kids'",
            "noise-cancelling",
            "vintage",
        ),
        (
            "headphones",
            "backpack",
            "desk chair",
            "water bottle",
            "running shoes",
            "coffee grinder",
            "keyboard",
            "tent",
            "lamp",
            "blender",
        ),
    ),
    "{0}{1} {2}",
    quote=True,
    vague=("that thing I liked", "the usual"),
)
_SKU = ident("SKU-", 6, ("the one in my wishlist", "that item"))
_ORDER_LINE = Record(
    (("product_id", _SKU), ("quantity", Integer(1, 5))),
    "{quantity} of {product_id}",
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search_products",
        "shopping",
        "Searches the store catalogue.",
        (
            req("query", "string", "What to look for.", _PRODUCT),
            opt("max_price", "float", "Highest acceptable price.", Decimal(10, 800, 0, "${}")),
            enum_opt(
                "sort_by",
                "Ordering of the results.",
                choices(
                    ("price_low", "cheapest first"),
                    ("rating", "best reviewed first"),
                    ("newest", "newest first"),
                    ("relevance", "best match first"),
                ),
                default="relevance",
            ),
        ),
        (
            "I'm looking for {query}",
            "any {query} under {max_price}?",
            "show me {query}, {sort_by}",
            "does the shop have {query} for at most {max_price}",
        ),
    ),
    ToolSpec(
        "add_to_cart",
        "shopping",
        "Puts a product in the shopping basket.",
        (
            req("product_id", "string", "Product identifier, e.g. SKU-123456.", _SKU),
            opt("quantity", "integer", "How many.", Integer(2, 9), default=1),
        ),
        (
            "throw {product_id} in my basket",
            "I'll take {quantity} of {product_id}",
            "stick {product_id} in the cart for later",
            "grab {quantity} units of {product_id}, I'll check out later",
        ),
    ),
    ToolSpec(
        "place_order",
        "shopping",
        "Orders several products at once and ships them.",
        (
            req(
                "items",
                "array",
                "Order lines.",
                Records(_ORDER_LINE, 1, 3),
                items={
                    "type": "object",
                    "properties": {
                        "product_id": {"type": "string", "description": "Product identifier."},
                        "quantity": {"type": "integer", "description": "How many."},
                    },
                    "required": ["product_id", "quantity"],
                },
            ),
            enum_opt(
                "shipping_speed",
                "Delivery speed.",
                choices(
                    ("express", ("express", "fast")),
                    ("overnight", ("overnight", "next-day")),
                    ("standard", "standard"),
                ),
                default="standard",
            ),
            opt("gift_wrap", "boolean", "Wrap as a gift.", Flag(("gift-wrapped",)), default=False),
        ),
        (
            "buy {items} for me",
            "check out with {items}, {shipping_speed} shipping",
            "order {items} and have it {gift_wrap}",
            "I want {items} delivered, {shipping_speed} please",
        ),
    ),
    ToolSpec(
        "ship_parcel",
        "shopping",
        "Arranges a courier pick-up of a parcel from one person to another.",
        (
            req("sender", "string", "Full name of the person sending.", PERSON),
            req("recipient", "string", "Full name of the person receiving.", PERSON),
            req("weight_kg", "float", "Parcel weight in kilograms.", Decimal(0.5, 30, 1, "{} kg")),
        ),
        (
            "have a courier take a {weight_kg} parcel from {sender} to {recipient}",
            "{recipient} is expecting a {weight_kg} box that {sender} is sending, book the pick-up",
            "ship {weight_kg} of stuff to {recipient}; it's coming from {sender}",
            "{sender} wants to get a {weight_kg} package over to {recipient}, arrange a courier",
            "a parcel for {recipient} ({weight_kg}), collected at {sender}'s",
        ),
    ),
    ToolSpec(
        "track_package",
        "shopping",
        "Reports where a shipment is.",
        (
            req(
                "tracking_number",
                "string",
                "Carrier tracking number.",
                Composed(
                    (
                        ("1Z", "94", "JD", "TBA"),
                        tuple(str(n) for n in range(100000, 999999, 7919)),
                        tuple(str(n) for n in range(1000, 9999, 613)),
                    ),
                    "{0}{1}{2}",
                    vague=("my package", "the delivery"),
                ),
            ),
        ),
        (
            "where's my parcel {tracking_number}?",
            "has {tracking_number} shipped yet",
            "when will {tracking_number} show up",
            "any news on shipment {tracking_number}?",
        ),
    ),
    ToolSpec(
        "return_item",
        "shopping",
        "Starts a return for an order.",
        (
            req(
                "order_id",
                "string",
                "Order identifier, e.g. ORD-12345.",
                ident("ORD-", 5, ("my last order", "the thing I bought")),
            ),
            enum_req(
                "reason",
                "Why it goes back.",
                choices(
                    ("damaged", ("it arrived broken", "it came damaged")),
                    ("wrong_item", "they sent the wrong thing"),
                    ("no_longer_needed", "I don't need it anymore"),
                    ("defective", "it stopped working"),
                ),
            ),
            enum_opt(
                "refund_method",
                "How to refund.",
                choices(
                    ("store_credit", "store credit"),
                    ("original_payment", ("my card", "the original payment")),
                ),
                default="original_payment",
            ),
        ),
        (
            "I want to send back {order_id}, {reason}",
            "{order_id}: {reason}. refund me as {refund_method}",
            "{reason} - can I return {order_id}?",
            "start a return on {order_id} because {reason}",
        ),
    ),
)

__all__ = ["TOOLS"]
