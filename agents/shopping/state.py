"""The /shop graph's state, scoped the way the design asks:

- conversation (this checkpoint thread): `current_product_id`, the products last `shown`, and
  per-workflow `memory` (search, product, inventory, purchase) so one workflow's chatter never
  floods another's prompt;
- product level: `products`, per product id its catalog record, the version it was read at (a
  content hash, `product_version`) and the reviews retrieved per topic; an entry whose product
  has changed in the catalog starts afresh (`cache_products`), and `review_search` answers a
  topic it has already retrieved from here (coupons are not kept: they change on their own);
- user level: location, preferred store and fulfillment live in the catalog database
  (`CatalogStore.get_prefs`), so they follow the user into every conversation;
- turn level: `turn`, replaced at the start of each turn (intent, stage, tool findings, answer).
`messages` holds only the current workflow's recent exchange and this turn's tool traffic."""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage

from agents.shopping.models import Product
from bot.history import add_bounded_messages

WORKFLOWS = ("search", "product", "inventory", "purchase")
MEMORY_PER_WORKFLOW = 6  # user/assistant lines kept per workflow
PRODUCTS_KEPT = 20  # product-level entries per conversation, the most recently seen
TOPICS_KEPT = 3  # review topics kept per product

# Stages of the staged ReAct agents, in order. Each stage exposes only its own tool to the model,
# so the order cannot be skipped; the last stage answers with no tools.
INVENTORY_STAGES = ("locate_user", "choose_store", "check_stock", "explain")
PURCHASE_STAGES = ("validate_product", "validate_stock", "choose_fulfillment", "cart_operation", "confirm")
CHANGE_STAGES = ("validate_product", "cart_operation", "confirm")  # remove / set quantity
GENERAL_STAGES = ("answer",)
STAGE_TOOLS: dict[str, tuple[str, ...]] = {
    "locate_user": ("locate_user",),
    "choose_store": ("find_stores",),
    "check_stock": ("check_stock",),
    "validate_product": ("validate_product",),
    "validate_stock": ("validate_stock",),
    "choose_fulfillment": ("choose_fulfillment",),
    "cart_operation": ("propose_cart_change",),
}


def _replace(left: Any, right: Any) -> Any:
    return right


class ShopState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_bounded_messages]
    tool_context: dict[str, Any]  # user_id, currency, locale, today: hidden from the model
    turn: dict[str, Any]
    current_product_id: str | None
    shown: list[dict[str, Any]]  # compact products last shown, in order
    memory: dict[str, list[dict[str, str]]]
    products: dict[str, dict[str, Any]]
    awaiting: dict[str, Any] | None  # a cart change waiting for the user's confirmation


def new_turn(text: str) -> dict[str, Any]:
    return {"text": text, "intent": None, "workflow": None, "stages": [], "stage": 0, "rounds": 0,
            "stage_rounds": 0, "product_id": None, "found": {}, "answer": None, "data": {}, "note": None}


def product_version(product: Product) -> str:
    """A hash of the product's catalog record as read (price, specs, variants, rating, review
    count…): product-level data is valid while it is unchanged."""
    return hashlib.sha256(product.model_dump_json().encode()).hexdigest()[:16]


def cache_products(cache: dict[str, dict[str, Any]] | None, seen: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`cache` with this round's product-level findings (id → version, record, reviews by topic):
    an entry at another version is replaced, one at the same version gains the new topics."""
    out = dict(cache or {})
    for product_id, entry in seen.items():
        old = out.pop(product_id, None) or {}
        reviews = dict(old.get("reviews") or {}) if old.get("version") == entry["version"] else {}
        reviews.update(entry.get("reviews") or {})
        out[product_id] = {**entry, "reviews": dict(list(reviews.items())[-TOPICS_KEPT:])}
    return dict(list(out.items())[-PRODUCTS_KEPT:])
