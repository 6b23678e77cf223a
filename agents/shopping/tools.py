"""The /shop tools. The deterministic paths call them directly; the staged ReAct agents get the
current stage's tool only. Hidden context (who is shopping, in which currency, which product is
current, what earlier stages found) comes from the graph state through `InjectedState`, so the
model never has to copy ids around and cannot act for another user.

Each tool returns (content for the model, artifact for the graph): the content is compact JSON,
the artifact is what `data`, cards and later stages use."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Any, Literal

from langchain_core.tools import BaseTool, tool
from langgraph.config import get_stream_writer
from langgraph.prebuilt import InjectedState

from agents.shopping.intents import city_name
from agents.shopping.models import CATALOG_CURRENCY, Product, Store
from agents.shopping.phrasebook import fulfillment_word, label, language, refusal, say, sentences
from agents.shopping.render import RATES, cart_data, compact, convert, product_name
from agents.shopping.state import product_version
from bot.events import Status
from bot.locale import LATIN_WORD, rule

MAX_QUANTITY = 99


def status(text: str) -> None:
    try:
        get_stream_writer()(Status(text=text))
    except RuntimeError:  # outside a graph run
        pass


class ToolRefused(Exception):
    """A request the tool answers with a clear reason instead of a result (unknown product…):
    a phrasebook key and its values."""

    def __init__(self, key: str, **values: Any) -> None:
        super().__init__(say(key, "en", **values))
        self.key, self.values = key, values


@dataclass
class ShopServices:
    """What the tools work on: the catalog store, the review index (opened on first use) and today."""

    store: Any
    open_reviews: Callable[[], Awaitable[Any]] | None = None
    today: Callable[[dict[str, Any]], date] = lambda context: date.fromisoformat(context["today"])
    prepare: Callable[[], Awaitable[None]] | None = None  # seeds an empty catalog on first use
    _reviews: Any = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def ready(self) -> Any:
        if self.prepare is not None:
            await self.prepare()
        return self.store

    async def reviews(self) -> Any:
        async with self._lock:
            if self._reviews is None and self.open_reviews is not None:
                self._reviews = await self.open_reviews()
        return self._reviews

    async def close(self) -> None:
        if self._reviews is not None:
            await self._reviews.close()
            self._reviews = None


def _dump(value: Any, summary: str, state: dict[str, Any] | None = None) -> str:
    """A tool's content: one line for people (the status line shows it), then compact JSON for
    the model (and the offline skill). Given the state, a shopper who reads Japanese or another
    currency than the catalog's is described in `shopper` (language, currency and its rate per
    catalog unit), so the answer names products and shows prices as the cards do."""
    shopper = _shopper(state) if state is not None else None
    if shopper and isinstance(value, dict):
        value = {**value, "shopper": shopper}
    return summary + "\n" + json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _shopper(state: dict[str, Any]) -> dict[str, Any] | None:
    context = _context(state)
    lang, currency = language(context), str(context.get("currency") or CATALOG_CURRENCY).upper()
    if lang == "en" and currency == CATALOG_CURRENCY:
        return None
    out: dict[str, Any] = {"language": lang}
    if currency != CATALOG_CURRENCY and currency in RATES:
        out.update(currency=currency, rate=convert(1.0, CATALOG_CURRENCY, currency))
    return out


def _ja(state: dict[str, Any]) -> bool:
    return language(_context(state)) == "ja"


def _name(state: dict[str, Any], product: Product) -> str:
    """The product's name as the shopper reads it (its Japanese name for a Japanese request)."""
    return product_name(product, language(_context(state)))


def _names(product: Product) -> dict[str, str]:
    """A refusal's product names: `product` (English, for the model) and `product_ja`."""
    return {"product": product.name, "product_ja": product_name(product, "ja")}


def _error(message: str) -> tuple[str, dict[str, Any]]:
    """A refusal that only the model reads (stages called out of order)."""
    return _dump({"error": message}, message), {"error": message}


def _refuse(state: dict[str, Any], key: str, **values: Any) -> tuple[str, dict[str, Any]]:
    """A refusal the shopper may read: its English text and its key for retelling it (phrasebook);
    the summary line in the shopper's language."""
    out = refusal(key, **values)
    return _dump(out, say(key, language(_context(state)), **values), state), out


def _refused(state: dict[str, Any], exc: ToolRefused) -> tuple[str, dict[str, Any]]:
    return _refuse(state, exc.key, **exc.values)


def _summary(state: dict[str, Any], key: str, **values: Any) -> str:
    """A tool result's summary line, in the shopper's language."""
    return say(key, language(_context(state)), **values)


def _context(state: dict[str, Any]) -> dict[str, Any]:
    return state.get("tool_context") or {}


def _turn(state: dict[str, Any]) -> dict[str, Any]:
    return state.get("turn") or {}


def _current(state: dict[str, Any], product_id: str | None = None) -> str | None:
    return product_id or _turn(state).get("product_id") or state.get("current_product_id")


def _found(state: dict[str, Any]) -> dict[str, Any]:
    return _turn(state).get("found") or {}


async def _product(store: Any, product_id: str | None) -> Product:
    if not product_id:
        raise ToolRefused("no_product_selected")
    product = await store.get_product(product_id)
    if product is None:
        raise ToolRefused("no_such_product", id=product_id)
    return product


def _product_level(
    records: Iterable[tuple[dict[str, Any], Product]], **reviews: list[dict[str, Any]]
) -> dict[str, Any]:
    """An artifact's product-level findings, per (record shown, product) pair
    (state.cache_products folds them into `products`)."""
    return {p.id: {"version": product_version(p), "record": r, "reviews": reviews} for r, p in records}


def _product_ja(state: dict[str, Any], product: Product) -> dict[str, str]:
    """A result's `product_ja` (the name a Japanese shopper reads) beside `product`, in a Japanese turn."""
    return {"product_ja": product.name_ja} if _ja(state) and product.name_ja else {}


def _topic(question: str) -> str:
    return " ".join(question.lower().split())


async def _stock_total(store: Any, product_id: str) -> int:
    return sum(row.quantity for row in await store.stock(product_id))


# The words a message that picks a store has ("at Umeda", "my store is …", 「梅田店」): other
# messages cost no query.
_STORE_HINT = rule(r"\b(?:at|from|stores?|shops?|branch)\b|店")
# How Japanese shoppers write the districts the stores are named after (「梅田店」, 「なんばの店舗」).
STORE_DISTRICTS_JA: dict[str, tuple[str, ...]] = {
    "Shibuya": ("渋谷",), "Shinjuku": ("新宿",), "Ginza": ("銀座",), "Akihabara": ("秋葉原", "アキバ"),
    "Ikebukuro": ("池袋",), "Umeda": ("梅田",), "Namba": ("難波", "なんば"), "Shinsaibashi": ("心斎橋",),
    "Tennoji": ("天王寺",),
}


def _store_phrase(name: str) -> str:
    return r"\s+".join(re.escape(w) for w in name.split())


def _own_names(stores: Sequence[Store]) -> list[tuple[Store, str]]:
    """Each store with the part of its name that sets it apart from the others ("Umeda" of
    "Concierge Shop Umeda"; "" when there is none)."""
    words = [s.name.split() for s in stores]
    common = set.intersection(*(set(w) for w in words)) if len(stores) > 1 else set()
    return [(s, " ".join(w for w in name_words if w not in common)) for s, name_words in zip(stores, words, strict=True)]


def named_store(stores: Sequence[Store], text: str) -> Store | None:
    """The store the text picks: its id or full name anywhere, or the part of its name that sets it
    apart from the others ("Umeda" of "Concierge Shop Umeda") where a store is meant ("at Umeda",
    "the Umeda store", "my store is Umeda", 「梅田店」), so "I'm in Shibuya" (「渋谷にいます」)
    names a place, not a store."""
    for s, own in _own_names(stores):
        patterns = [rf"(?<!{LATIN_WORD}|-){re.escape(s.id)}(?!{LATIN_WORD}|-)", rf"\b{_store_phrase(s.name)}\b"]
        if own:
            part = _store_phrase(own)
            patterns += [rf"\b(?:at|from)\s+(?:the\s+)?{part}\b", rf"\b{part}\s+(?:store|shop|branch)\b",
                         rf"\b(?:store|shop)\s+(?:is|will be|:)\s+(?:the\s+)?{part}\b"]
            for ja in STORE_DISTRICTS_JA.get(own, ()):  # 「梅田店」「梅田の店舗」「店舗は梅田」
                patterns += [rf"{ja}(?:店|の(?:お?店|店舗))", rf"店(?:舗)?は{ja}"]
        if any(rule(p).search(text) for p in patterns):
            return s
    return None


def store_in_place(stores: Sequence[Store], text: str) -> Store | None:
    """The store in the district the text names as a place ("in stock in Shibuya?", 「渋谷にある？」):
    a stock answer lists it first, without taking it for the shopper's own store."""
    for s, own in _own_names(stores):
        if own and (rule(rf"\b{_store_phrase(own)}\b").search(text) or any(ja in text for ja in STORE_DISTRICTS_JA.get(own, ()))):
            return s
    return None


async def asked_store(store: Any, text: str) -> Store | None:
    """The store the text picks ("at the Umeda store", 「渋谷店」), if any."""
    if not _STORE_HINT.search(text):  # most messages name no store: no query for them
        return None
    return named_store(await store.stores(), text)


async def remember_store(store: Any, user_id: str, chosen: Store) -> bool:
    """User-level state: the store the shopper picked becomes their preferred store (in every
    conversation), and its city theirs. Whether it was not their store yet."""
    prefs = await store.get_prefs(user_id)
    if prefs.store_id == chosen.id:
        return False
    update: dict[str, Any] = {"store_id": chosen.id}
    if prefs.city != chosen.city:
        update.update(city=chosen.city, latitude=chosen.latitude, longitude=chosen.longitude)
    await store.set_prefs(prefs.model_copy(update=update))
    return True


def make_tools(shop: ShopServices) -> dict[str, BaseTool]:
    """The tools, by name, bound to `shop`."""

    # --- read tools: the deterministic paths and the general agent ----------------------------
    @tool(response_format="content_and_artifact")
    async def search_products(
        state: Annotated[dict[str, Any], InjectedState],
        query: str = "",
        category: str | None = None,
        max_price: float | None = None,
        min_price: float | None = None,
        currency: str | None = None,
        min_rating: float | None = None,
        sort: Literal["relevance", "price", "rating"] = "relevance",
    ) -> tuple[str, dict[str, Any]]:
        """Search the catalog by words (English or Japanese), category, price bounds (in `currency`,
        default the shopper's) and minimum rating (0-5). Returns up to 5 products."""
        store = await shop.ready()
        status(say("status_searching", language(_context(state))))
        cur = (currency or _context(state).get("currency") or CATALOG_CURRENCY).upper()
        bound = {k: convert(v, cur, CATALOG_CURRENCY) for k, v in (("max_price", max_price), ("min_price", min_price))
                 if v is not None}
        products = await store.search_products(query, category=category, min_rating=min_rating, sort=sort, limit=5, **bound)
        shown = [compact(p, stock=await _stock_total(store, p.id)) for p in products]
        keys = ("id", "name", *(("name_ja",) if _ja(state) else ()), "brand", "price", "currency", "rating",
                "review_count", "stock")
        content = [{k: p[k] for k in keys if k in p} for p in shown]
        level = _product_level(zip(shown, products, strict=True))
        filters = {"query": query, "category": category, **bound, **({"min_rating": min_rating} if min_rating else {}),
                   **({"sort": sort} if sort != "relevance" else {})}
        over: dict[str, Any] = {}
        if not products and "max_price" in bound:  # nothing within the budget: the cheapest that matches
            cheapest = await store.search_products(query, category=category, min_rating=min_rating, sort="price", limit=1)
            if cheapest:
                over = {"cheapest": {k: v for k, v in compact(cheapest[0]).items() if k in keys}}
        return _dump({"products": content, "filters": filters, **over},
                     _summary(state, "sum_found", n=len(content)), state), {"products": shown, "product_level": level}

    @tool(response_format="content_and_artifact")
    async def product_details(
        state: Annotated[dict[str, Any], InjectedState], product_id: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """The specs, variants, price and fulfillment options of one product (default: the current one)."""
        store = await shop.ready()
        try:
            product = await _product(store, _current(state, product_id))
        except ToolRefused as exc:
            return _refused(state, exc)
        status(say("status_looking_up", language(_context(state)), product=_name(state, product)))
        details = {
            "id": product.id, "name": product.name, **({"name_ja": product.name_ja} if _ja(state) and product.name_ja else {}),
            "brand": product.brand, "category": product.category,
            "price": product.price, "currency": product.currency, "rating": product.rating,
            "specs": product.specs, "variants": [v.model_dump() for v in product.variants],
            "fulfillment": [f.model_dump() for f in product.fulfillment], "description": product.description,
        }
        record = compact(product, stock=await _stock_total(store, product.id))
        return _dump(details, _summary(state, "sum_details", product=_name(state, product)), state), {
            "products": [record], "details": details, "product_level": _product_level([(record, product)])}

    @tool(response_format="content_and_artifact")
    async def compare_products(
        state: Annotated[dict[str, Any], InjectedState], product_ids: list[str] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Compare products side by side: price, rating and the specs they share (default: the
        products last shown)."""
        store = await shop.ready()
        ids = product_ids or [p["id"] for p in (state.get("shown") or [])[:3]]
        products = await store.get_products(ids[:4])
        if len(products) < 2:
            return _refuse(state, "compare_needs_two")
        lang = language(_context(state))
        status(say("status_comparing", lang, products=("、" if lang == "ja" else ", ").join(_name(state, p) for p in products)))
        shared = set.intersection(*(set(p.specs) for p in products))
        rows = [{"id": p.id, "name": p.name, **({"name_ja": p.name_ja} if _ja(state) and p.name_ja else {}),
                 "price": p.price, "currency": p.currency, "rating": p.rating,
                 "specs": {k: p.specs[k] for k in sorted(shared)}} for p in products]
        shown = [compact(p, stock=await _stock_total(store, p.id)) for p in products]
        level = _product_level(zip(shown, products, strict=True))
        return _dump({"compare": rows}, _summary(state, "sum_compared", n=len(rows)), state), {"products": shown, "product_level": level}

    @tool(response_format="content_and_artifact")
    async def review_search(
        state: Annotated[dict[str, Any], InjectedState], question: str, product_id: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Find the customer reviews of a product (default: the current one) that are about what the
        question asks (semantic search over review text, any language)."""
        store = await shop.ready()
        try:
            product = await _product(store, _current(state, product_id))
        except ToolRefused as exc:
            return _refused(state, exc)
        topic = _topic(question)
        known = (state.get("products") or {}).get(product.id) or {}
        if known.get("version") == product_version(product) and topic in (known.get("reviews") or {}):
            status(say("status_reviews_kept", language(_context(state)), product=_name(state, product)))
            reviews = known["reviews"][topic]  # the product is unchanged: no embedding, no search
        else:
            index = await shop.reviews()
            if index is None:
                return _refuse(state, "reviews_unavailable")
            status(say("status_reading_reviews", language(_context(state)), product=_name(state, product)))
            await index.sync(store, [product.id])  # embeds only reviews not yet embedded
            hits = await index.search(question, product_id=product.id, k=5)
            reviews = [{"id": h.review_id, "product_id": h.product_id, "rating": h.rating, "text": h.text} for h in hits]
        record = compact(product)
        return (_dump({"product": product.name, **_product_ja(state, product), "rating": product.rating,
                       "review_count": product.review_count, "reviews": reviews},
                      _summary(state, "sum_reviews", n=len(reviews)), state),
                {"reviews": reviews, "products": [record], "product_level": _product_level([(record, product)], **{topic: reviews})})

    @tool(response_format="content_and_artifact")
    async def product_coupons(
        state: Annotated[dict[str, Any], InjectedState], product_id: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Coupons valid today for a product (default: the current one)."""
        store = await shop.ready()
        today = shop.today(_context(state))
        try:
            product = await _product(store, _current(state, product_id))
        except ToolRefused as exc:
            return _refused(state, exc)
        coupons = await store.coupons_for(product, today=today)
        rows = [c.model_dump(mode="json") for c in coupons]
        out = {"product": product.name, **_product_ja(state, product), "category": product.category,
               "price": product.price, "coupons": rows, "today": today.isoformat()}
        record = compact(product)
        return _dump(out, _summary(state, "sum_coupons", n=len(rows)), state), {
            "coupons": rows, "products": [record], "product_level": _product_level([(record, product)])}

    @tool(response_format="content_and_artifact")
    async def view_cart(state: Annotated[dict[str, Any], InjectedState]) -> tuple[str, dict[str, Any]]:
        """The shopper's cart: items, coupon, total."""
        store = await shop.ready()
        cart = cart_data(await store.get_cart(_context(state)["user_id"]))
        content = cart if _ja(state) else {**cart, "items": [{k: v for k, v in i.items() if k != "name_ja"}
                                                             for i in cart["items"]]}
        return _dump(content, _summary(state, "sum_cart", n=len(cart["items"])), state), {"cart": cart}

    # --- inventory stages -------------------------------------------------------------------
    @tool(response_format="content_and_artifact")
    async def locate_user(
        state: Annotated[dict[str, Any], InjectedState], city: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Stage 1: where the shopper is. Give the city if the user named one; otherwise the saved
        location is used. An error means: ask the user for their city."""
        store = await shop.ready()
        prefs = await store.get_prefs(_context(state)["user_id"])
        city = city or _turn(state).get("city") or prefs.city
        if not city:
            return _refuse(state, "location_unknown")
        stores = await store.stores_in_city(city)
        if not stores:
            cities = await store.cities()
            return _refuse(state, "no_stores_in_city", city=city, cities=", ".join(cities),
                           cities_ja="、".join(city_name(c, "ja") for c in cities))
        lat = sum(s.latitude for s in stores) / len(stores)
        lon = sum(s.longitude for s in stores) / len(stores)
        if prefs.city != stores[0].city:
            await store.set_prefs(prefs.model_copy(update={"city": stores[0].city, "latitude": lat, "longitude": lon}))
        location = {"city": stores[0].city, "latitude": lat, "longitude": lon}
        return _dump({"location": location}, _summary(state, "sum_located", city=city_name(location["city"], language(_context(state))))), {"location": location}

    @tool(response_format="content_and_artifact")
    async def find_stores(state: Annotated[dict[str, Any], InjectedState]) -> tuple[str, dict[str, Any]]:
        """Stage 2: the stores nearest the shopper's location (the store they asked about, then
        their preferred store, first; the one asked about is marked `asked`)."""
        store = await shop.ready()
        location = _found(state).get("location")
        if not location:
            return _error("Locate the user first.")
        status(say("status_finding_stores", language(_context(state)), city=city_name(location["city"], language(_context(state)))))
        ranked = await store.stores_near(location["latitude"], location["longitude"], limit=100)
        prefs = await store.get_prefs(_context(state)["user_id"])
        asked = _turn(state).get("store_id")
        near = ranked[:4]
        # the store asked about, and the shopper's own store, even when four others are nearer
        first = [(s, km) for s, km in ranked[4:]
                 if s.id == asked or (s.id == prefs.store_id and s.city == location["city"])]
        if first:
            near = [*first, *near[:4 - len(first)]]
        near.sort(key=lambda pair: (pair[0].id != asked, pair[0].id != prefs.store_id, pair[1]))
        rows = [{"id": s.id, "name": s.name, "city": s.city, "km": round(km, 1), "hours": s.hours,
                 **({"asked": True} if s.id == asked else {})} for s, km in near]
        return _dump({"stores": rows}, _summary(state, "sum_stores", n=len(rows))), {"stores": rows}

    @tool(response_format="content_and_artifact")
    async def check_stock(state: Annotated[dict[str, Any], InjectedState]) -> tuple[str, dict[str, Any]]:
        """Stage 3: stock of the current product in the stores found."""
        store = await shop.ready()
        try:
            product = await _product(store, _current(state))
        except ToolRefused as exc:
            return _refused(state, exc)
        stores = _found(state).get("stores") or []
        if not stores:
            return _error("Find stores first.")
        status(say("status_checking_stock", language(_context(state)), product=_name(state, product)))
        rows = await store.stock(product.id, store_ids=[s["id"] for s in stores])
        by_store: dict[str, int] = {}
        for row in rows:
            by_store[row.store_id] = by_store.get(row.store_id, 0) + row.quantity
        result = [{**s, "quantity": by_store.get(s["id"], 0)} for s in stores]
        can_ship = any(f.kind == "ship" for f in product.fulfillment)
        out = {"product": product.name, **_product_ja(state, product), "product_id": product.id, "stock": result,
               "ships": can_ship}
        return _dump(out, _summary(state, "sum_stock", n=sum(by_store.values())), state), {"stock": out, "products": [compact(product, stock=sum(by_store.values()))]}

    # --- purchase stages --------------------------------------------------------------------
    @tool(response_format="content_and_artifact")
    async def validate_product(
        state: Annotated[dict[str, Any], InjectedState], quantity: int = 1
    ) -> tuple[str, dict[str, Any]]:
        """Stage 1: check the current product exists and the quantity is allowed (1-99; 0 removes)."""
        store = await shop.ready()
        action = _turn(state).get("action") or "add"
        try:
            product = await _product(store, _current(state))
        except ToolRefused as exc:
            return _refused(state, exc)
        if action == "set" and quantity == 0:
            action = "remove"  # a quantity of 0 takes it out of the cart
        if action == "remove":
            quantity = 0
        elif not 1 <= quantity <= MAX_QUANTITY:
            return _refuse(state, "quantity_range", max=MAX_QUANTITY, quantity=quantity)
        # a change the cart cannot take is refused here, before the shopper is asked to confirm it
        lines = [i for i in (await store.get_cart(_context(state)["user_id"])).items if i.product_id == product.id]
        have = sum(i.quantity for i in lines)
        if action in ("remove", "set") and not lines:
            return _refuse(state, "not_in_cart", **_names(product))
        if action == "set" and len(lines) > 1:
            return _refuse(state, "cart_several_variants", id=product.id, variants=", ".join(i.variant_id or "-" for i in lines))
        if action == "set" and have == quantity:
            return _refuse(state, "quantity_already", quantity=quantity, **_names(product))
        on_line = sum(i.quantity for i in lines if not i.variant_id)  # the line an add without a variant adds to
        if action == "add" and on_line + quantity > MAX_QUANTITY:
            return _refuse(state, "line_full", have=on_line, max=MAX_QUANTITY, quantity=quantity, **_names(product))
        item = {"product_id": product.id, "name": product.name, "unit_price": product.price, "quantity": quantity,
                "action": action, **({"name_ja": product.name_ja} if product.name_ja else {})}
        content = item if _ja(state) else {k: v for k, v in item.items() if k != "name_ja"}
        return _dump({"ok": True, **content}, _summary(state, "sum_product_ok", product=_name(state, product)), state), {
            "item": item, "products": [compact(product)]}

    @tool(response_format="content_and_artifact")
    async def validate_stock(state: Annotated[dict[str, Any], InjectedState]) -> tuple[str, dict[str, Any]]:
        """Stage 2: check the product can be had: in stock in a store, or shippable."""
        store = await shop.ready()
        item = _found(state).get("item")
        if not item:
            return _error("Validate the product first.")
        product = await _product(store, item["product_id"])
        in_stores = await _stock_total(store, product.id)
        ships = any(f.kind == "ship" for f in product.fulfillment)
        if not in_stores and not ships:
            return _refuse(state, "out_of_stock_everywhere", **_names(product))
        options = [f.model_dump() for f in product.fulfillment
                   if f.kind == "ship" or in_stores]  # pickup and same-day need store stock
        out = {"in_store_stock": in_stores, "options": options}
        return _dump(out, _summary(state, "sum_ships" if ships else "sum_in_stores", n=in_stores)), {"availability": out}

    @tool(response_format="content_and_artifact")
    async def choose_fulfillment(
        state: Annotated[dict[str, Any], InjectedState], kind: Literal["ship", "pickup", "same_day"] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Stage 3: how the shopper gets it: the kind they asked for, else their saved preference,
        else the fastest available option."""
        store = await shop.ready()
        options = (_found(state).get("availability") or {}).get("options") or []
        if not options:
            return _error("Validate stock first.")
        prefs = await store.get_prefs(_context(state)["user_id"])
        lang = language(_context(state))  # the notes are read by the shopper, in the confirmation
        wanted = kind or _turn(state).get("fulfillment") or prefs.fulfillment
        chosen = next((o for o in options if o["kind"] == wanted), None)
        note = None
        if chosen is None:
            if wanted:
                note = say("kind_unavailable", lang, kind=fulfillment_word(wanted, lang))
                note = note[:1].upper() + note[1:]
            chosen = min(options, key=lambda o: (o["days"], o["fee"]))
        if kind and chosen["kind"] == kind and prefs.fulfillment != kind:
            await store.set_prefs(prefs.model_copy(update={"fulfillment": kind}))
        out: dict[str, Any] = {"fulfillment": chosen, "note": note}
        summary = fulfillment_word(chosen["kind"], lang)
        pickup = await store.get_store(prefs.store_id) if chosen["kind"] == "pickup" and prefs.store_id else None
        if pickup is not None:  # picked up at the shopper's own store, if it has enough of it
            item = _found(state).get("item") or {}
            there = sum(r.quantity for r in await store.stock(str(item.get("product_id") or ""), store_ids=[pickup.id]))
            if there >= int(item.get("quantity") or 1):
                out["store"] = {"id": pickup.id, "name": pickup.name, "hours": pickup.hours}
                summary = label("at_store", lang, kind=summary, store=pickup.name)
            else:
                out["note"] = sentences([note, say("store_lacks_stock", lang, store=pickup.name)], lang)
        return _dump(out, summary), out

    @tool(response_format="content_and_artifact")
    async def propose_cart_change(
        state: Annotated[dict[str, Any], InjectedState],
    ) -> tuple[str, dict[str, Any]]:
        """Stage 4: prepare the cart change from the validated product; the shopper confirms it
        before anything is written."""
        item = _found(state).get("item")
        if not item:
            return _error("Validate the product first.")
        action = item.get("action") or _turn(state).get("action") or "add"
        fulfillment = (_found(state).get("fulfillment") or {}).get("kind")
        pending = {"action": action, "product_id": item["product_id"], "quantity": item["quantity"],
                   "name": item["name"], "unit_price": item["unit_price"], "fulfillment": fulfillment}
        if item.get("name_ja"):
            pending["name_ja"] = item["name_ja"]
        if fulfillment == "pickup" and _found(state).get("store"):
            pending["store"] = _found(state)["store"]["name"]
        if _found(state).get("note"):  # what the fulfillment stage could not do as asked
            pending["note"] = _found(state)["note"]
        return _dump({"pending": pending, "needs_confirmation": True}, _summary(state, "sum_waiting")), {"pending": pending}

    return {t.name: t for t in (
        search_products, product_details, compare_products, review_search, product_coupons, view_cart,
        locate_user, find_stores, check_stock, validate_product, validate_stock, choose_fulfillment,
        propose_cart_change,
    )}


READ_TOOLS = ("search_products", "product_details", "compare_products", "review_search", "product_coupons", "view_cart")
