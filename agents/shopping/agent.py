"""ShopAgent: the /shop command's contract with the runtime — settings, demo data, ingestion
(CLI and worker), the offline skill, the turn's input, and the answer (product and cart cards)."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from langgraph.graph.state import CompiledStateGraph

from agents.shopping.graph import build_graph
from agents.shopping.intents import yes_or_no
from agents.shopping.models import CATALOG_CURRENCY
from agents.shopping.offline import ShopSkill
from agents.shopping.phrasebook import language, say, sentences
from agents.shopping.render import RATES, cart_card, display_name, pending_card, price_text, product_card
from agents.shopping.settings import ShopSettings
from agents.shopping.state import new_turn
from agents.shopping.tools import ShopServices, status
from bot.agent import AgentDefinition, AgentDeps, AgentEnv, CliCommand, OnFirstUse, TurnInput, WorkerJob
from bot.config import Settings
from bot.events import Card, Final
from bot.locale import Language, currency_of, language_of

log = logging.getLogger(__name__)


def today_in(timezone: str) -> date:
    try:
        return datetime.now(ZoneInfo(timezone)).date()
    except (ZoneInfoNotFoundError, ValueError):
        return datetime.now(ZoneInfo("UTC")).date()


async def open_catalog(settings: Settings) -> Any:
    from agents.shopping.catalog import CatalogStore

    return await CatalogStore.open(settings.resolved_database_url)


def _review_modules() -> tuple[Any, Any]:
    from agents.shopping import embeddings, reviews

    return embeddings, reviews


async def open_review_index(settings: Settings, shop: ShopSettings) -> Any:
    # qdrant-client takes most of a second to import: in a thread, so no turn waits on the loop.
    embeddings, reviews = await asyncio.to_thread(_review_modules)
    return await reviews.ReviewIndex.open(
        embeddings=embeddings.make_embeddings(shop),
        path=None if shop.qdrant_url else (shop.qdrant_path or settings.data_dir / "qdrant"),
        url=shop.qdrant_url,
        api_key=shop.qdrant_api_key.get_secret_value() if shop.qdrant_api_key else None,
    )


async def seed_demo(store: Any) -> str | None:
    """The demo catalog and its reviews' text; each product's reviews are embedded on first use."""
    from agents.shopping.demo import demo_catalog, seed_catalog
    from agents.shopping.demo_reviews import generate_reviews

    if await store.is_seeded():
        return None
    catalog = await asyncio.to_thread(demo_catalog)  # CPU work off the event loop, as the hotel seed does
    written = await seed_catalog(store, catalog)
    changed, _ = await store.upsert_reviews(await asyncio.to_thread(generate_reviews, catalog.products))
    await store.update_ratings()
    await store.mark_seeded()
    return f"shop: {written} catalog rows, {changed} reviews"


async def seed_on_first_use(store: Any) -> None:
    if not await store.is_seeded():
        status("Preparing the shop catalog (first use)…")
        await seed_demo(store)


async def ingest(kind: str, path: Path, settings: Settings, shop: ShopSettings, *, store: Any = None) -> str:
    """`data ingest catalog|reviews PATH`: validate, load, embed new reviews; a summary line."""
    from agents.shopping.ingest import ingest_catalog, ingest_reviews_records

    own = store is None
    store = store or await open_catalog(settings)
    try:
        if kind == "catalog":
            return "catalog: " + (await ingest_catalog(store, path)).summary()
        report = await ingest_reviews_records(store, path)
        await store.update_ratings()
        index = await open_review_index(settings, shop)
        try:
            embedded = await index.sync(store)
        finally:
            await index.close()
        return f"reviews: {report.summary()}; embedded {embedded}"
    finally:
        if own:
            await store.close()


def _ingest_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=("catalog", "reviews"), help="what the files hold")
    parser.add_argument("path", type=Path, help="a .jsonl or .csv file, or a directory of them")


def _named_for(record: dict[str, Any], lang: Language) -> dict[str, Any]:
    """A product or cart line as `data` carries it: `name` is the catalog's name; a Japanese
    request also gets `name_ja`, the name its text and cards show."""
    return record if lang == "ja" else {k: v for k, v in record.items() if k != "name_ja"}


class ShopAgent(AgentDefinition):
    name = "shop"
    command = "/shop"
    summary = "Find products, read reviews, check stock near you, use coupons and fill your cart"
    usage = "wireless earbuds under $100"
    summary_ja = "商品探し、レビュー、近くの店舗の在庫、クーポン、カート"
    usage_ja = "ワイヤレスイヤホン 1万円以下"
    intent_words = (
        "buy", "cart", "coupon", "in stock", "earbuds", "headphones", "laptop", "shoes", "sneakers",
        "product", "shopping", "review", "カート", "買", "イヤホン", "クーポン", "在庫", "商品",
    )
    settings_model = ShopSettings
    offline_skills = (ShopSkill(),)
    max_input_chars = 4_000  # a request or a question about a product, not a document
    resumable = False  # cart changes live outside the checkpoint: never repeat them on a restart
    narrates_tools = True  # its tools say their progress in the shopper's language, not "Using search_products…"

    def __init__(
        self,
        *,
        clock: Callable[[str], date] = today_in,
        store: Any = None,
        reviews: Any = None,
        settings: ShopSettings | None = None,
        force_react: bool | None = None,
    ) -> None:
        """`store` (a CatalogStore) and `reviews` (a ReviewIndex) replace the ones the settings
        open (the caller closes them); `force_react` routes every intent through the ReAct agent."""
        self.clock = clock
        self.store = store
        self.reviews = reviews
        self.settings = settings
        self.force_react = force_react
        self._services: list[ShopServices] = []
        self._opened: list[Any] = []

    def load_settings(self, settings: Settings | None = None) -> ShopSettings:
        return self.settings or super().load_settings(settings)

    def cli_commands(self) -> list[CliCommand]:
        async def run(app: Any, args: argparse.Namespace) -> int:
            from agents.shopping.ingest import IngestError

            try:
                print(await ingest(args.kind, args.path, app.settings, self.load_settings(app.settings)))
            except (IngestError, OSError) as exc:
                print(f"cannot ingest {args.path}: {exc}")
                return 2
            return 0

        return [CliCommand("ingest", "load catalog or review files (JSONL/CSV) into /shop", run, _ingest_args, group="data")]

    async def seed(self, env: AgentEnv) -> str | None:
        """The demo catalog and review texts (about a second). Reviews are embedded per product on
        its first review question (under a second each); embedding all 5,847 up front would take
        minutes on a small CPU (`data ingest reviews` embeds what it loads)."""
        store = await open_catalog(env.settings)
        try:
            return await seed_demo(store)
        finally:
            await store.close()

    def worker_jobs(self, env: AgentEnv) -> list[WorkerJob]:
        shop: ShopSettings = env.agent_settings or self.load_settings(env.settings)
        if shop.drop_dir is None:
            return []
        drop = shop.drop_dir

        def job(kind: str, interval: float) -> WorkerJob:
            async def run(stop: asyncio.Event) -> None:
                while not stop.is_set():
                    folder = drop / kind
                    if folder.is_dir() and any(folder.iterdir()):
                        try:
                            log.info("%s", await ingest(kind, folder, env.settings, shop))
                        except Exception as exc:  # the next run tries again; the worker lives
                            from agents.shopping.reviews import ReviewIndexError

                            if isinstance(exc, ReviewIndexError):  # e.g. the bot holds the local index
                                log.warning("shop %s ingestion postponed: %s", kind, exc)
                            else:
                                log.exception("shop %s ingestion failed", kind)
                    try:
                        await asyncio.wait_for(stop.wait(), interval)
                    except TimeoutError:
                        pass

            return WorkerJob(f"shop {kind} ingestion", run)

        return [job("catalog", shop.catalog_interval), job("reviews", shop.reviews_interval)]

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        shop: ShopSettings = deps.agent_settings or self.load_settings(deps.settings)
        store = self.store
        prepare = None
        if store is None:
            store = await open_catalog(deps.settings)
            self._opened.append(store)
            prepare = OnFirstUse(lambda: seed_on_first_use(store))

        async def reviews() -> Any:
            if self.reviews is not None:
                return self.reviews
            return await open_review_index(deps.settings, shop)

        services = ShopServices(store=store, open_reviews=reviews, prepare=prepare)
        self._services.append(services)
        force = shop.force_react if self.force_react is None else self.force_react
        return build_graph(deps, services, force_react=force)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        today = getattr(turn, "today", None) or self.clock(turn.timezone)
        lang = language_of(turn.text)  # the request's, not the platform's: Japanese in, Japanese out
        currency = currency_of(turn.currency, turn.text)
        return {
            "turn": new_turn(turn.text),
            "tool_context": {"user_id": turn.user_id, "currency": currency if currency in RATES else "USD",
                             "locale": turn.locale, "timezone": turn.timezone, "today": today.isoformat(),
                             "language": lang},
        }

    def resume_value(self, turn: TurnInput, pending: Any) -> str | None:
        """The next message answers a waiting confirmation when it is a yes or a no."""
        return yes_or_no(turn.text)

    def final(self, state: dict[str, Any]) -> Final:
        turn = state.get("turn") or {}
        context = state.get("tool_context") or {}
        currency, lang = context.get("currency", "USD"), language(context)
        data = turn.get("data") or {}
        out: dict[str, Any] = {"intent": turn.get("intent")}
        cards: list[Card] = []
        if data.get("products") and turn.get("intent") not in ("purchase", "cart", "apply_coupon"):
            out["products"] = [_named_for(p, lang) for p in data["products"]]
            cards = [product_card(p, currency, lang=lang) for p in data["products"]]
        if data.get("reviews"):
            out["reviews"] = data["reviews"]
        if data.get("cart") is not None:
            out["cart"] = {**data["cart"], "items": [_named_for(i, lang) for i in data["cart"]["items"]]}
            if data["cart"]["items"]:
                cards.append(cart_card(data["cart"], currency, lang))
        return Final(text=turn.get("answer") or say("no_answer", lang), cards=cards, data=out)

    def interrupted(self, value: Any) -> Final:
        """The confirmation question; `confirm` passes the turn's language and currency with the change."""
        pending = dict(value or {})
        lang, currency = language(pending), pending.get("currency") or "USD"
        action = pending.get("action")
        if action == "apply_coupon":
            text = sentences([pending.get("note"), say("confirm_coupon", lang, code=pending["code"])], lang)
        elif action in ("add", "set", "remove"):
            amount = (say("amount", lang, price=price_text(pending["unit_price"] * pending["quantity"], CATALOG_CURRENCY,
                                                          currency, lang))
                      if pending.get("unit_price") is not None and action != "remove" else "")
            name = display_name(pending, lang) if pending.get("name") else pending.get("product_id")
            text = say(f"confirm_{action}", lang, quantity=pending.get("quantity"), name=name, amount=amount)
            if pending.get("note"):
                text = sentences([pending["note"], text], lang)
        else:
            text = str(value)
        public = {k: pending.get(k) for k in ("action", "product_id", "quantity")}
        if pending.get("code"):
            public["code"] = pending["code"]
        return Final(text=text, cards=[pending_card(pending, currency, lang)], data={"pending": public, "awaiting_input": True})

    async def close(self) -> None:
        services, self._services = self._services, []
        for s in services:
            if self.reviews is None:
                await s.close()
        opened, self._opened = self._opened, []
        for store in opened:
            await store.close()


AGENT = ShopAgent()
