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
    asked_quality,
    asked_specs,
    category_of,
    classify,
    extract_fulfillment,
    extract_quantity,
    has_feature,
    named_feature,
    place_named,
    review_topic,
    search_filters,
)
from agents.shopping.models import CATALOG_CURRENCY
from agents.shopping.phrasebook import fulfillment_word, retell, say, spec_text, tool_word
from agents.shopping.render import display_name, price_text
from bot.locale import Language, is_japanese
from bot.offline.extract import only_thanks
from bot.offline.model import OfflineRequest, tool_call
from bot.tools import degraded

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
            if tool is None and only_thanks(text):
                return AIMessage(content=say("welcome", "ja" if is_japanese(text) else "en"))
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
        if name == "locate_user" and place_named(text):
            args["city"] = place_named(text)
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
    """An answer from the tool results of this turn (the last result of each tool counts), in the
    language of the shopper's message, naming products and showing prices as the cards do (the
    result's `shopper`: the Japanese name, the catalog's price with the shopper's beside it)."""
    last = results[-1]
    data = _load(last)
    shopper: dict[str, Any] = data["shopper"] if isinstance(data.get("shopper"), dict) else {}
    lang: Language = "ja" if shopper.get("language") == "ja" or (not shopper and is_japanese(text)) else "en"
    currency = str(shopper.get("currency") or CATALOG_CURRENCY)

    def money(amount: float, of: str = CATALOG_CURRENCY) -> str:
        return price_text(amount, of, currency, lang)

    def product(record: dict[str, Any]) -> str:  # a result's `product`, or its Japanese name
        return str(record.get("product_ja") if lang == "ja" and record.get("product_ja") else record.get("product"))

    if degraded(last):
        return say("unavailable", lang, what=tool_word(last.name or "", lang))
    if "error" in data:
        return say("sorry", lang, error=retell(data, lang))
    name = last.name or ""
    if name == "search_products":
        products = data.get("products") or []
        filters = data.get("filters") or {}
        if not products:  # the hint names what to loosen: the rating asked for, the budget, or the words
            if filters.get("min_rating"):
                return say("no_products_rated", lang, rating=f"{float(filters['min_rating']):g}")
            if cheapest := data.get("cheapest"):
                return say("no_products_cheapest", lang, name=display_name(cheapest, lang),
                           price=money(cheapest["price"], cheapest["currency"]))
            return say("no_products" if "max_price" in filters else "no_products_words", lang)
        ordered = filters.get("sort") in ("price", "rating") and len(products) > 1  # "cheapest first"
        found = say(f"products_by_{filters['sort']}" if ordered else "products_found" if len(products) > 1
                    else "one_product_found", lang, count=len(products))
        return found + "\n" + "\n".join(
            say("product_line", lang, n=i + 1, name=display_name(p, lang), price=money(p["price"], p["currency"]),
                rating=p["rating"], reviews=p.get("review_count", 0)) for i, p in enumerate(products))
    if name == "product_details":
        specs = ("、" if lang == "ja" else "; ").join(
            spec_text(k, v, lang) for k, v in list((data.get("specs") or {}).items())[:8])
        ways = ("、" if lang == "ja" else ", ").join(
            say("way", lang, kind=fulfillment_word(f["kind"], lang),
                when=say("today" if not f["days"] else "in_a_day" if f["days"] == 1 else "in_days", lang, days=f["days"]),
                fee=money(f["fee"], data["currency"]) if f["fee"] else say("free", lang))
            for f in data.get("fulfillment") or [])
        variants = ("、" if lang == "ja" else ", ").join(v["label"] for v in data.get("variants") or [])
        lines = [say("details_head", lang, name=display_name(data, lang), brand=data.get("brand", ""),
                     price=money(data["price"], data["currency"]), rating=data["rating"])]
        all_specs: dict[str, Any] = data.get("specs") or {}
        asked = asked_specs(text, list(all_specs), lang)  # "how heavy is it?": the weight first
        quality = asked_quality(text)  # "is it waterproof?", "does it have a backlit keyboard?"
        feature = named_feature(text) if quality else None
        verdict = has_feature(feature, all_specs) if feature is not None else None
        if asked or verdict is not None:
            said = ("、" if lang == "ja" else "; ").join(spec_text(k, all_specs[k], lang) for k in asked)
            yes_no = "" if verdict is None else say("yes" if verdict else "no", lang)
            lines.insert(0, yes_no + said + ("。" if lang == "ja" else "."))
        elif quality:  # a quality its specs do not list: said, not guessed
            lines.insert(0, say(f"not_in_specs_{quality[0]}", lang, name=display_name(data, lang), quality=quality[1]))
        for key, listed in (("specs", specs), ("variants", variants), ("delivery", ways)):
            if listed:
                lines.append(say(key, lang, items=listed))
        return "\n".join(lines)
    if name == "compare_products":
        rows = data.get("compare") or []
        cheapest = min(rows, key=lambda r: r["price"])
        best = max(rows, key=lambda r: r["rating"])
        comma = "、" if lang == "ja" else ", "
        lines = [f"• {display_name(r, lang)}: {money(r['price'], r['currency'])}{comma}{r['rating']:.1f}/5"
                 + (("；" if lang == "ja" else "; ") + comma.join(spec_text(k, v, lang) for k, v in r["specs"].items())
                    if r["specs"] else "")
                 for r in rows]
        return "\n".join([*lines, say("compare_tail", lang, cheapest=display_name(cheapest, lang), best=display_name(best, lang))])
    if name == "review_search":
        reviews = data.get("reviews") or []
        if not reviews:
            return say("no_reviews", lang, product=product(data))
        head = say("reviews_head", lang, product=product(data), rating=data["rating"], count=data["review_count"],
                   shown=len(reviews), good=sum(1 for r in reviews if r["rating"] >= 4),
                   bad=sum(1 for r in reviews if r["rating"] <= 2))
        quotes = "\n".join(f"• {r['rating']}★ “{_clip(r['text'])}”" for r in reviews[:3])
        return f"{head}\n{quotes}"
    if name == "product_coupons":
        coupons = data.get("coupons") or []
        if not coupons:
            return say("no_coupons", lang, product=product(data))
        return say("coupons_head", lang, product=product(data)) + "\n" + "\n".join(
            say("coupon_line", lang, code=c["code"], expires=c["expires"],
                value=say("percent_off" if c["kind"] == "percent" else "amount_off", lang, value=c["value"],
                          money=money(c["value"])),
                min_spend=say("min_spend", lang, value=c["min_spend"], money=money(c["min_spend"]))
                if c.get("min_spend") else "")
            for c in coupons)
    if name == "view_cart":
        items = data.get("items") or []
        if not items:
            return say("cart_empty", lang)
        lines = [say("cart_line", lang, quantity=i["quantity"], name=display_name(i, lang),
                     price=money(i["unit_price"] * i["quantity"], data["currency"])) for i in items]
        if data.get("discount"):  # the total is after it: say what it took off, as the card does
            lines.append(say("cart_discount", lang, code=data.get("coupon"), amount=money(data["discount"], data["currency"])))
        return "\n".join([say("cart_head", lang), *lines, say("total", lang, total=money(data["total"], data["currency"]))])
    if name == "check_stock":
        return _stock_answer({**data, "product": product(data)}, lang)
    return "\n".join(str(m.content) for m in results[-2:])


def _stock_answer(data: dict[str, Any], lang: Language) -> str:
    """The stores near the shopper that have the product, one a line. A store the shopper asked
    about is named first, and said plainly when it has none; shipping goes on its own line."""
    rows = data.get("stock") or []
    asked = next((r for r in rows if r.get("asked")), None)
    have = [r for r in rows if r["quantity"]]
    lines = [say("stock_line", lang, store=r["name"], km=r["km"], hours=r["hours"], quantity=r["quantity"]) for r in have]
    if asked is not None and not asked["quantity"]:
        head = [say("stock_none_at", lang, store=asked["name"], product=data["product"])]
        head.append(say("stock_elsewhere", lang) if have else say("stock_none_else", lang))
    elif have:
        head = [say("stock_head", lang, product=data["product"])]
    else:
        head = [say("stock_none", lang, product=data["product"])]
    return "\n".join([*head, *lines, *([say("ships", lang)] if data.get("ships") else [])])


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
