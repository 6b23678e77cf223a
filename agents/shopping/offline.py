"""The offline model's shop skill: it reads the shopper's text and the structured tool context
(which tools are bound, what the tool results say), never the wording of the prompts, so a
reworded prompt cannot break it.

- Intent schema asked for → the rule classifier's intent.
- One stage tool bound → call it with what the text says (city, quantity, fulfillment).
- The general agent's read tools bound → call the tool the rules pick, then answer from its result.
- No tools, tool results present → an answer composed from the results (search, details,
  comparison, reviews, coupons, cart, stock, stage errors)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from agents.shopping.intents import (
    category_of,
    classify,
    extract_city,
    extract_fulfillment,
    extract_quantity,
    review_topic,
    search_filters,
)
from agents.shopping.render import money
from bot.locale import is_japanese
from bot.offline.model import OfflineRequest, tool_call

STAGE_TOOL_NAMES = {"locate_user", "find_stores", "check_stock", "validate_product", "validate_stock",
                    "choose_fulfillment", "propose_cart_change"}
READ_TOOL_NAMES = {"search_products", "product_details", "compare_products", "review_search", "product_coupons", "view_cart"}
SHOP_TOOLS = STAGE_TOOL_NAMES | READ_TOOL_NAMES
INTENT_TOOL = {"search": "search_products", "compare": "compare_products", "specs": "product_details",
               "reviews": "review_search", "coupons": "product_coupons", "cart": "view_cart"}


def _load(message: ToolMessage) -> dict[str, Any]:
    content = message.text if isinstance(message.text, str) else str(message.content)
    try:
        value = json.loads(content.rsplit("\n", 1)[-1])  # the JSON line after the summary line
    except (TypeError, ValueError):
        return {"error": str(message.content)}
    return value if isinstance(value, dict) else {"value": value}


class ShopSkill:
    def respond(self, request: OfflineRequest) -> AIMessage | dict[str, Any] | None:
        text = request.last_human
        schema = request.schema or {}
        if schema.get("title") == "Intent" and "product_reference" in (schema.get("properties") or {}):
            intent = classify(text).intent
            if intent == "other" and category_of(text):
                intent = "search"
            return {"intent": intent, "product_reference": None}
        names = request.tool_names
        results = [m for m in request.tool_results if (m.name or "") in SHOP_TOOLS]
        if names and names <= STAGE_TOOL_NAMES:
            if results and results[-1].status == "error":
                return AIMessage(content=compose(results, text))
            return self._stage_call(sorted(names)[0], text)
        if names and names <= READ_TOOL_NAMES:
            if results:
                return AIMessage(content=compose(results, text))
            intent = classify(text).intent
            if intent == "other" and category_of(text):
                intent = "search"
            tool = INTENT_TOOL.get(intent)
            if tool is None:
                return AIMessage(content=HELP_JA if is_japanese(text) else HELP)
            args: dict[str, Any] = {}
            if tool == "search_products":
                args = {"query": text, **search_filters(text, "USD")}
            elif tool == "review_search":
                args = {"question": review_topic(text)}
            return AIMessage(content="", tool_calls=[tool_call(tool, args)])
        if not names and results and request.schema is None:
            return AIMessage(content=compose(results, text))
        return None

    @staticmethod
    def _stage_call(name: str, text: str) -> AIMessage:
        args: dict[str, Any] = {}
        if name == "locate_user" and extract_city(text):
            args["city"] = extract_city(text)
        elif name == "validate_product":
            quantity = extract_quantity(text)
            args["quantity"] = quantity if quantity is not None else 1
        elif name == "choose_fulfillment" and extract_fulfillment(text):
            args["kind"] = extract_fulfillment(text)
        return AIMessage(content="", tool_calls=[tool_call(name, args)])


HELP = ("I'm the shop assistant (offline model). Try: `wireless earbuds under $100`, `what do people say about "
        "the battery?`, `is it in stock near me?`, `add it to my cart`, `show my cart`.")
HELP_JA = ("ショッピングアシスタントです（オフラインモデル）。例：「ワイヤレスイヤホン 1万円以下」「バッテリーの評判は？」"
           "「近くの店に在庫ある？」「カートに入れて」")


def compose(results: list[ToolMessage], text: str) -> str:
    """An answer from the tool results of this turn (the last result of each tool counts)."""
    ja = is_japanese(text)
    last = results[-1]
    data = _load(last)
    if "error" in data:
        return (f"すみません、{data['error']}" if ja else f"Sorry — {data['error']}")
    name = last.name or ""
    if name == "search_products":
        products = data.get("products") or []
        if not products:
            return "条件に合う商品が見つかりませんでした。条件を緩めてみてください。" if ja else \
                "No products match that. Try fewer words or a higher budget."
        head = f"{len(products)}件見つかりました：" if ja else f"Here are {len(products)} products that match:"
        return head + "\n" + "\n".join(
            f"{i + 1}. {p['name']} — {money(p['price'], p['currency'])}, "
            f"{p['rating']:.1f}/5 ({p.get('review_count', 0)} reviews)" for i, p in enumerate(products))
    if name == "product_details":
        specs = "; ".join(f"{k}: {v}" for k, v in list((data.get("specs") or {}).items())[:8])
        ways = ", ".join(f"{f['kind'].replace('_', ' ')} ({f['days']} day(s), {money(f['fee'], data['currency'])})"
                         for f in data.get("fulfillment") or [])
        variants = ", ".join(v["label"] for v in data.get("variants") or [])
        lines = [f"{data['name']} ({data.get('brand', '')}) — {money(data['price'], data['currency'])}, "
                 f"rated {data['rating']:.1f}/5."]
        if specs:
            lines.append(("仕様: " if ja else "Specs: ") + specs + ".")
        if variants:
            lines.append(("バリエーション: " if ja else "Variants: ") + variants + ".")
        if ways:
            lines.append(("受け取り方法: " if ja else "Delivery: ") + ways + ".")
        return "\n".join(lines)
    if name == "compare_products":
        rows = data.get("compare") or []
        cheapest = min(rows, key=lambda r: r["price"])
        best = max(rows, key=lambda r: r["rating"])
        lines = [f"• {r['name']}: {money(r['price'], r['currency'])}, {r['rating']:.1f}/5"
                 + ("; " + ", ".join(f"{k} {v}" for k, v in r["specs"].items()) if r["specs"] else "") for r in rows]
        tail = (f"最安: {cheapest['name']}、最高評価: {best['name']}" if ja
                else f"Cheapest: {cheapest['name']}. Best rated: {best['name']}.")
        return "\n".join([*lines, tail])
    if name == "review_search":
        reviews = data.get("reviews") or []
        if not reviews:
            return f"{data.get('product')}: no reviews found on that."
        good = sum(1 for r in reviews if r["rating"] >= 4)
        bad = sum(1 for r in reviews if r["rating"] <= 2)
        head = (f"{data['product']}（平均 {data['rating']:.1f}/5、{data['review_count']}件）で関連するレビュー {len(reviews)}件："
                f"好意的 {good}件、否定的 {bad}件。" if ja else
                f"{data['product']} is rated {data['rating']:.1f}/5 over {data['review_count']} reviews. "
                f"The {len(reviews)} reviews closest to your question: {good} positive, {bad} negative.")
        quotes = "\n".join(f"• {r['rating']}★ “{_clip(r['text'])}”" for r in reviews[:3])
        return f"{head}\n{quotes}"
    if name == "product_coupons":
        coupons = data.get("coupons") or []
        if not coupons:
            return f"No coupons apply to {data.get('product')} today."
        return f"Coupons for {data.get('product')}:\n" + "\n".join(
            f"• {c['code']}: {c['value']:g}{'%' if c['kind'] == 'percent' else ' off'}"
            + (f", min spend {c['min_spend']:g}" if c.get("min_spend") else "") + f", until {c['expires']}"
            for c in coupons)
    if name == "view_cart":
        items = data.get("items") or []
        if not items:
            return "カートは空です。" if ja else "Your cart is empty."
        lines = [f"• {i['quantity']} × {i['name']} — {money(i['unit_price'] * i['quantity'], data['currency'])}"
                 for i in items]
        return "\n".join(["Your cart:", *lines, f"Total: {money(data['total'], data['currency'])}"])
    if name == "check_stock":
        rows = data.get("stock") or []
        have = [r for r in rows if r["quantity"]]
        ship = " It can also be shipped." if data.get("ships") else ""
        if not have:
            return f"{data['product']} is not in stock at the stores near you.{ship}"
        return f"{data['product']} near you:\n" + "\n".join(
            f"• {r['name']} ({r['km']} km, open {r['hours']}): {r['quantity']} in stock" for r in have
        ) + (f"\n{ship.strip()}" if ship else "")  # its own line, not glued to the last store's
    return "\n".join(str(m.content) for m in results[-2:])


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
