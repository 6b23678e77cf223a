"""Money, cards and the `final` event's data for /shop (the contract in docs/shop.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.shopping.models import CATALOG_CURRENCY, Cart, Product
from agents.shopping.phrasebook import category_word, fulfillment_word, label
from bot.events import Action, Card
from bot.locale import Language

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


def price_text(amount: float, currency: str, shopper_currency: str, lang: Language = "en") -> str:
    """'$66.00', or '$66.00 (≈ ¥9,900)' when the shopper uses another currency ('$66.00（≈ ¥9,900）'
    in Japanese). The catalog's price is the price of record; the converted one is only a guide."""
    text = money(amount, currency)
    if amount and shopper_currency.upper() != currency.upper() and shopper_currency.upper() in RATES:
        converted = money(convert(amount, currency, shopper_currency), shopper_currency)
        text += f"（≈ {converted}）" if lang == "ja" else f" (≈ {converted})"
    return text


def display_name(record: Mapping[str, Any], lang: Language) -> str:
    """The name the shopper reads: the catalog's Japanese name (`name_ja`) for a Japanese request
    when it has one, else its name. `name` itself stays the catalog's (English) name."""
    return str((record.get("name_ja") if lang == "ja" else None) or record["name"])


def product_name(product: Product, lang: Language) -> str:
    return product.name_ja if lang == "ja" and product.name_ja else product.name


def compact(product: Product, *, stock: int | None = None) -> dict[str, Any]:
    """What `data.products` carries for a product, and what the conversation remembers of it."""
    out: dict[str, Any] = {
        "id": product.id, "name": product.name, "category": product.category, "brand": product.brand,
        "price": product.price, "currency": product.currency, "rating": product.rating,
        "review_count": product.review_count, "image_url": product.image_url,
    }
    if product.name_ja:
        out["name_ja"] = product.name_ja
    if stock is not None:
        out["stock"] = stock
    return out


def product_card(p: dict[str, Any], shopper_currency: str, *, command: str = "/shop", lang: Language = "en") -> Card:
    fields = {label("price", lang): price_text(p["price"], p["currency"], shopper_currency, lang),
              label("rating", lang): f"{p['rating']:.1f}/5 ({label('reviews', lang, n=p.get('review_count', 0))})"}
    if "stock" in p:
        fields[label("stock", lang)] = label("in_stores", lang, n=p["stock"]) if p["stock"] else label("online_only", lang)
    return Card(
        title=display_name(p, lang), subtitle=f"{p.get('brand') or ''} · {category_word(p['category'], lang)} · {p['id']}".strip(" ·"),
        fields=fields, image_url=p.get("image_url"),
        actions=[Action(label=label("add_to_cart", lang), value=label("add_command", lang, command=command, id=p["id"]),
                        style="primary")],
    )


def cart_data(cart: Cart) -> dict[str, Any]:
    return {
        "items": [{"product_id": i.product_id, "name": i.name, "quantity": i.quantity, "unit_price": i.unit_price,
                   **({"name_ja": i.name_ja} if i.name_ja else {})}
                  for i in cart.items],
        "subtotal": cart.subtotal, "discount": cart.discount, "coupon": cart.coupon,
        "total": cart.total, "currency": cart.currency,
    }


def cart_card(cart: dict[str, Any], shopper_currency: str, lang: Language = "en") -> Card:
    fields = {f"{i['quantity']} × {display_name(i, lang)}": money(i["unit_price"] * i["quantity"], cart["currency"])
              for i in cart["items"][:10]}
    if cart.get("discount"):
        fields[label("coupon", lang, code=cart.get("coupon"))] = "−" + money(cart["discount"], cart["currency"])
    fields[label("total", lang)] = price_text(cart["total"], cart["currency"], shopper_currency, lang)
    return Card(title=label("cart", lang), subtitle=label("items", lang, n=sum(i["quantity"] for i in cart["items"])),
                fields=fields)


def pending_card(pending: dict[str, Any], shopper_currency: str, lang: Language = "en") -> Card:
    coupon = pending["action"] == "apply_coupon"  # its name is "coupon CODE": the title names the code once
    name = display_name(pending, lang) if pending.get("name") else pending.get("product_id")
    title = label(pending["action"], lang, name=pending.get("code") if coupon else name)
    fields: dict[str, str] = {}
    if pending["action"] in ("add", "set"):
        fields[label("quantity", lang)] = str(pending["quantity"])
        if pending.get("unit_price") is not None:
            fields[label("price", lang)] = price_text(pending["unit_price"] * pending["quantity"], CATALOG_CURRENCY,
                                                      shopper_currency, lang)
    if pending.get("fulfillment"):
        kind = fulfillment_word(pending["fulfillment"], lang)
        fields[label("fulfillment", lang)] = (label("at_store", lang, kind=kind, store=pending["store"])
                                              if pending.get("store") else kind)
    return Card(
        title=title, subtitle=label("waiting", lang), fields=fields,
        actions=[Action(label=label("confirm", lang), value="yes", style="primary"),
                 Action(label=label("cancel", lang), value="no", style="danger")],
    )
