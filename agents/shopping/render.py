"""Money, cards and the `final` event's data for /shop (the contract in docs/shop.md)."""

from __future__ import annotations

from typing import Any

from agents.shopping.models import CATALOG_CURRENCY, Cart, Product
from bot.events import Action, Card

# Fixed reference rates (units per USD) for showing prices and reading budgets in the shopper's
# currency. They are approximate and say so ("≈"); the catalog's own price is always shown.
RATES: dict[str, float] = {"USD": 1.0, "JPY": 150.0, "EUR": 0.92, "GBP": 0.79}
SYMBOLS = {"USD": "$", "JPY": "¥", "EUR": "€", "GBP": "£"}


def convert(amount: float, from_currency: str, to_currency: str) -> float:
    source, target = RATES.get(from_currency.upper()), RATES.get(to_currency.upper())
    if source is None or target is None:
        return amount
    return amount / source * target


def money(amount: float, currency: str) -> str:
    symbol = SYMBOLS.get(currency.upper())
    if currency.upper() == "JPY":
        return f"¥{round(amount):,}"
    return f"{symbol}{amount:,.2f}" if symbol else f"{amount:,.2f} {currency}"


def price_text(amount: float, currency: str, shopper_currency: str) -> str:
    """'$66.00', or '$66.00 (≈ ¥9,900)' when the shopper uses another currency."""
    text = money(amount, currency)
    if shopper_currency.upper() != currency.upper() and shopper_currency.upper() in RATES:
        text += f" (≈ {money(convert(amount, currency, shopper_currency), shopper_currency)})"
    return text


def compact(product: Product, *, stock: int | None = None) -> dict[str, Any]:
    """What `data.products` carries for a product, and what the conversation remembers of it."""
    out: dict[str, Any] = {
        "id": product.id, "name": product.name, "category": product.category, "brand": product.brand,
        "price": product.price, "currency": product.currency, "rating": product.rating,
        "review_count": product.review_count, "image_url": product.image_url,
    }
    if stock is not None:
        out["stock"] = stock
    return out


def product_card(p: dict[str, Any], shopper_currency: str, *, command: str = "/shop") -> Card:
    fields = {"Price": price_text(p["price"], p["currency"], shopper_currency),
              "Rating": f"{p['rating']:.1f}/5 ({p.get('review_count', 0)} reviews)"}
    if "stock" in p:
        fields["Stock"] = f"{p['stock']} in stores" if p["stock"] else "Online only"
    return Card(
        title=p["name"], subtitle=f"{p.get('brand') or ''} · {p['category']} · {p['id']}".strip(" ·"),
        fields=fields, image_url=p.get("image_url"),
        actions=[Action(label="Add to cart", value=f"{command} add {p['id']}", style="primary")],
    )


def cart_data(cart: Cart) -> dict[str, Any]:
    return {
        "items": [{"product_id": i.product_id, "name": i.name, "quantity": i.quantity, "unit_price": i.unit_price}
                  for i in cart.items],
        "subtotal": cart.subtotal, "discount": cart.discount, "coupon": cart.coupon,
        "total": cart.total, "currency": cart.currency,
    }


def cart_card(cart: dict[str, Any], shopper_currency: str) -> Card:
    fields = {f"{i['quantity']} × {i['name']}": money(i["unit_price"] * i["quantity"], cart["currency"])
              for i in cart["items"][:10]}
    if cart.get("discount"):
        fields[f"Coupon {cart.get('coupon')}"] = "−" + money(cart["discount"], cart["currency"])
    fields["Total"] = price_text(cart["total"], cart["currency"], shopper_currency)
    return Card(title="Your cart", subtitle=f"{sum(i['quantity'] for i in cart['items'])} item(s)", fields=fields)


def pending_card(pending: dict[str, Any], shopper_currency: str) -> Card:
    verb = {"add": "Add", "set": "Set quantity of", "remove": "Remove", "apply_coupon": "Apply coupon"}[pending["action"]]
    title = f"{verb} {pending.get('name') or pending.get('code') or pending.get('product_id')}"
    fields: dict[str, str] = {}
    if pending["action"] in ("add", "set"):
        fields["Quantity"] = str(pending["quantity"])
        if pending.get("unit_price") is not None:
            fields["Price"] = price_text(pending["unit_price"] * pending["quantity"], CATALOG_CURRENCY, shopper_currency)
    if pending.get("fulfillment"):
        fields["Fulfillment"] = pending["fulfillment"].replace("_", " ")
        if pending.get("store"):
            fields["Fulfillment"] += f" at {pending['store']}"
    return Card(
        title=title, subtitle="Waiting for your confirmation", fields=fields,
        actions=[Action(label="Confirm", value="yes", style="primary"), Action(label="Cancel", value="no", style="danger")],
    )
