"""/shop end to end on the offline model, through the real runtime: deterministic paths, product
references, the staged agents, confirmation before any cart change, state scopes, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.shopping import prompts
from agents.shopping.catalog import CatalogStore
from agents.shopping.ingest import ingest_catalog
from agents.shopping.reviews import ReviewIndex
from bot.agent import TurnInput
from bot.config import Settings
from bot.events import Failure, Final, Status, StreamEvent, ToolStarted
from bot.runtime import ConversationRuntime
from tests.shopping.conftest import collect, key, shop_agent

PRODUCT_KEYS = {"id", "name", "category", "price", "currency", "rating"}


async def say(runtime: ConversationRuntime, text: str, *, thread: str = "shop", user: str = "u1") -> list[StreamEvent]:
    return await collect(runtime.handle(key(thread), TurnInput.typed(text, user_id=user)))


def final(events: list[StreamEvent]) -> Final:
    assert isinstance(events[-1], Final), events[-1]
    return events[-1]


def tools_started(events: list[StreamEvent]) -> list[str]:
    return [e.name for e in events if isinstance(e, ToolStarted)]


def statuses(events: list[StreamEvent]) -> str:
    return "\n".join(e.text for e in events if isinstance(e, Status))


async def test_search_in_english_returns_products_with_cards_in_the_same_order(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop wireless earbuds under $100"))
    products = answer.data["products"]
    assert products and all(PRODUCT_KEYS <= set(p) for p in products)
    assert all(p["category"] == "audio" and p["price"] <= 100 for p in products)
    assert [c.title for c in answer.cards] == [p["name"] for p in products]
    assert all(c.actions[0].value == f"/shop add {p['id']}" for c, p in zip(answer.cards, products, strict=True))
    assert products[0]["name"] in answer.text


async def test_search_in_japanese_reads_a_yen_budget(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop ワイヤレスイヤホン 1万円以下"))
    products = answer.data["products"]
    assert products and all(p["category"] == "audio" and p["price"] <= 10_000 / 150 + 0.01 for p in products)
    assert "件見つかりました" in answer.text
    assert "≈ ¥" in answer.cards[0].fields["価格"]  # the shopper's currency beside the catalog's, labelled in Japanese


async def test_review_question_about_the_second_product_retrieves_reviews_on_that_aspect(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    shown = final(await say(runtime, "/shop wireless earbuds under $150")).data["products"]
    answer = final(await say(runtime, "what do people say about the battery of the second one?"))
    reviews = answer.data["reviews"]
    assert reviews and {r["product_id"] for r in reviews} == {shown[1]["id"]}
    labelled = await store.get_reviews([r["id"] for r in reviews])
    assert sum("battery" in r.aspects for r in labelled) >= 3  # semantic retrieval, not the product's reviews at random
    assert shown[1]["name"] in answer.text
    # Closest by meaning is not "about it": the answer does not claim the quotes speak to the question.
    assert "closest in meaning to your question (they may not address it)" in answer.text


async def test_the_cheaper_one_resolves_over_the_products_shown(runtime: ConversationRuntime) -> None:
    shown = final(await say(runtime, "/shop running shoes")).data["products"]
    answer = final(await say(runtime, "specs of the cheaper one"))
    cheapest = min(shown, key=lambda p: (p["price"], p["id"]))
    assert answer.data["products"][0]["id"] == cheapest["id"]
    assert "Specs:" in answer.text


async def test_a_reference_with_nothing_shown_gets_a_clarifying_question(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop what do people say about it?", thread="fresh"))
    assert "Which product" in answer.text and "products" not in answer.data


async def test_an_unknown_product_id_is_named_in_the_answer(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop add ZZ-9999 to my cart"))
    assert "ZZ-9999" in answer.text and "pending" not in answer.data


async def test_a_cart_change_waits_for_confirmation_then_writes(runtime: ConversationRuntime, store: CatalogStore) -> None:
    first = final(await say(runtime, "/shop wireless earbuds under $100")).data["products"][0]
    events = await say(runtime, "add 2 of the first one to my cart")
    asked = final(events)
    assert asked.data["pending"] == {"action": "add", "product_id": first["id"], "quantity": 2}
    assert [a.label for a in asked.cards[0].actions] == ["Confirm", "Cancel"]
    assert tools_started(events) == ["validate_product", "validate_stock", "choose_fulfillment", "propose_cart_change"]
    assert (await store.get_cart("u1")).items == []  # nothing written before the answer
    done = final(await say(runtime, "yes"))
    cart = done.data["cart"]
    assert cart["items"] == [{"product_id": first["id"], "name": first["name"], "quantity": 2, "unit_price": first["price"]}]
    assert cart["total"] == pytest.approx(2 * first["price"]) and cart["currency"] == "USD"
    assert (await store.get_cart("u1")).items[0].quantity == 2


async def test_declining_leaves_the_cart_unchanged(runtime: ConversationRuntime, store: CatalogStore) -> None:
    await say(runtime, "/shop wireless earbuds under $100")
    final(await say(runtime, "add the first one to my cart"))
    answer = final(await say(runtime, "いいえ"))
    assert (answer.data["cart"]["items"] == [] and "unchanged" in answer.text) or "変更" in answer.text
    assert (await store.get_cart("u1")).items == []


async def test_a_button_press_confirms_and_a_product_card_button_starts_the_purchase(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    shown = final(await say(runtime, "/shop wireless earbuds under $100"))
    add = shown.cards[1].actions[0].value
    asked = final(await collect(runtime.resume(key(), add, user_id="u1", delivery_id="b1")))
    assert asked.data["pending"]["product_id"] == shown.data["products"][1]["id"]
    confirm = asked.cards[0].actions[0].value
    done = final(await collect(runtime.resume(key(), confirm, user_id="u1", delivery_id="b2")))
    assert [i["product_id"] for i in done.data["cart"]["items"]] == [shown.data["products"][1]["id"]]


async def test_moving_on_drops_the_waiting_change(runtime: ConversationRuntime, store: CatalogStore) -> None:
    await say(runtime, "/shop wireless earbuds under $100")
    final(await say(runtime, "add the first one to my cart"))
    answer = final(await say(runtime, "show my cart"))
    assert "did not make the earlier cart change" in answer.text
    assert answer.data["cart"]["items"] == []


async def test_a_negative_quantity_gets_a_clear_answer_and_no_confirmation(runtime: ConversationRuntime) -> None:
    await say(runtime, "/shop wireless earbuds under $100")
    answer = final(await say(runtime, "add -2 of the first one to my cart"))
    assert "between 1 and 99" in answer.text and "pending" not in answer.data


async def test_a_crash_between_the_question_and_the_answer_loses_nothing(
    settings: Settings, store: CatalogStore, review_index: ReviewIndex
) -> None:
    first_rt = await ConversationRuntime.open(settings, agents=[shop_agent(store, review_index)])
    try:
        product = final(await say(first_rt, "/shop wireless earbuds under $100")).data["products"][0]
        final(await say(first_rt, "add 3 of the first one to my cart"))
    finally:
        await first_rt.close()  # the process goes away with the question open
    second_rt = await ConversationRuntime.open(settings, agents=[shop_agent(store, review_index)])
    try:
        done = final(await say(second_rt, "confirm"))
    finally:
        await second_rt.close()
    assert done.data["cart"]["items"][0] == {"product_id": product["id"], "name": product["name"], "quantity": 3,
                                             "unit_price": product["price"]}


async def test_inventory_runs_its_stages_in_order_and_remembers_the_city_for_the_user(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    await say(runtime, "/shop wireless earbuds under $100")
    events = await say(runtime, "is the first one in stock near me? I'm in Osaka")
    assert tools_started(events) == ["locate_user", "find_stores", "check_stock"]
    answer = final(events)
    assert "Osaka" in answer.text or "in stock" in answer.text or "not in stock" in answer.text
    assert (await store.get_prefs("u1")).city == "Osaka"
    # another conversation of the same user: the saved location is used, no question asked
    await say(runtime, "/shop laptop", thread="other")
    events = await say(runtime, "is the first one available near me?", thread="other")
    assert tools_started(events) == ["locate_user", "find_stores", "check_stock"]
    assert "Which city" not in final(events).text


async def test_inventory_without_a_known_location_asks_for_the_city(runtime: ConversationRuntime) -> None:
    await say(runtime, "/shop wireless earbuds under $100", user="nowhere")
    answer = final(await say(runtime, "is the first one in stock near me?", user="nowhere"))
    assert "city" in answer.text.lower()


async def test_an_expired_coupon_is_refused_with_its_date(runtime: ConversationRuntime, store: CatalogStore) -> None:
    expired = next(c for c in await store.coupons() if c.expires.isoformat() < "2026-06-01")
    answer = final(await say(runtime, f"/shop apply {expired.code}"))
    assert "expired" in answer.text and expired.expires.isoformat() in answer.text


async def test_workflows_keep_separate_memory(runtime: ConversationRuntime) -> None:
    await say(runtime, "/shop wireless earbuds under $100")
    await say(runtime, "is the first one in stock near me? I'm in Tokyo")
    graph = await runtime._graph(runtime._agents["shop"])  # the checkpoint is the contract here
    record = await runtime.app_db.get_thread(key().thread_id)
    state = (await graph.aget_state(runtime._config(key(), runtime._agents["shop"], record.generation))).values
    assert [m["role"] for m in state["memory"]["search"]] == ["user", "assistant"]
    assert "earbuds" in state["memory"]["search"][0]["text"]
    assert "stock" in state["memory"]["inventory"][0]["text"]
    assert state["current_product_id"] == state["shown"][0]["id"]


async def test_rewording_the_prompts_does_not_change_the_offline_path(
    runtime: ConversationRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = final(await say(runtime, "/shop wireless earbuds under $100", thread="p1"))
    monkeypatch.setattr(prompts, "_template", lambda name: "Totally different wording for {stage}{stages}{intent}.")
    after = final(await say(runtime, "/shop wireless earbuds under $100", thread="p2"))
    assert after.text == before.text and after.data == before.data


async def test_empty_shop_command_gets_usage(runtime: ConversationRuntime) -> None:
    events = await say(runtime, "/shop")
    assert isinstance(events[-1], Failure) and "/shop" in events[-1].user_message


async def test_a_product_out_of_stock_everywhere_that_cannot_ship_is_refused_clearly(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    from agents.shopping.models import FulfillmentOption, Product

    gone = Product(id="lamp-990", name="Sold Out Lamp", category="home", subcategory="lamp", price=30.0,
                   keywords=["lamp"], fulfillment=[FulfillmentOption(kind="pickup", days=0, fee=0)])
    await store.upsert_products([gone])
    answer = final(await say(runtime, "/shop add lamp-990 to my cart"))
    assert "out of stock" in answer.text and "pending" not in answer.data
    assert (await store.get_cart("u1")).items == []


async def checkpoint(runtime: ConversationRuntime, thread: str = "shop") -> dict[str, Any]:
    """The conversation's checkpointed state (the contract for state scopes)."""
    agent = runtime._agents["shop"]
    record = await runtime.app_db.get_thread(key(thread).thread_id)
    assert record is not None
    return (await (await runtime._graph(agent)).aget_state(runtime._config(key(thread), agent, record.generation))).values


async def test_the_store_a_shopper_picks_comes_first_in_their_other_conversations(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    await say(runtime, "/shop wireless earbuds under $100")
    answer = final(await say(runtime, "is the first one in stock at the Umeda store?"))
    assert "I'll use Concierge Shop Umeda as your store." in answer.text
    lines = answer.text.splitlines()  # one store a line; shipping said on its own line
    assert all(line.endswith("in stock") for line in lines if line.startswith("• "))
    prefs = await store.get_prefs("u1")
    assert (prefs.store_id, prefs.city) == ("osaka-umeda", "Osaka")
    # another thread of the same user: Umeda (the farthest of the four Osaka stores) is checked first
    await say(runtime, "/shop running shoes", thread="other")
    events = await say(runtime, "is the first one available near me?", thread="other")
    assert tools_started(events) == ["locate_user", "find_stores", "check_stock"]
    stores = (await checkpoint(runtime, "other"))["turn"]["found"]["stores"]
    assert stores[0]["id"] == "osaka-umeda" and stores[0]["km"] > max(s["km"] for s in stores[1:])
    # and a pickup in the purchase flow is at that store, when it has the product
    product_id = (await checkpoint(runtime, "other"))["current_product_id"]
    stocked = (await store.stock(product_id))[0]  # the demo has none of it at Umeda: put some there
    await store.upsert_stock([stocked.model_copy(update={"store_id": "osaka-umeda", "quantity": 5})])
    asked = final(await say(runtime, "add the first one to my cart for pickup", thread="other"))
    assert asked.cards[0].fields["Fulfillment"] == "pickup at Concierge Shop Umeda"


async def test_my_store_is_sets_the_preferred_store(runtime: ConversationRuntime, store: CatalogStore) -> None:
    answer = final(await say(runtime, "/shop my store is Ginza", user="u2", thread="g"))
    assert "Concierge Shop Ginza as your store" in answer.text
    assert (await store.get_prefs("u2")).store_id == "tokyo-ginza"


@pytest.mark.parametrize(
    ("text", "store_id"),
    [("/shop 梅田店で受け取りたい", "osaka-umeda"), ("/shop 私の店舗は銀座です", "tokyo-ginza"),
     ("/shop なんばの店舗の在庫は？", "osaka-namba")],
)
async def test_a_store_named_in_japanese_becomes_the_preferred_store(
    runtime: ConversationRuntime, store: CatalogStore, text: str, store_id: str
) -> None:
    await say(runtime, text, user="u3", thread="ja")
    assert (await store.get_prefs("u3")).store_id == store_id


async def test_the_store_is_confirmed_once_when_a_question_follows(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop 梅田店で受け取りたい", user="u5", thread="q"))
    assert answer.text.count("Concierge Shop Umedaをご利用の店舗として登録しました") == 1, answer.text  # in Japanese


async def test_being_somewhere_names_no_store(runtime: ConversationRuntime, store: CatalogStore) -> None:
    await say(runtime, "/shop 渋谷にいます。ワイヤレスイヤホンの在庫はある？", user="u4", thread="ja")
    assert (await store.get_prefs("u4")).store_id is None


async def test_reviews_retrieved_for_a_product_are_reused_until_its_catalog_record_changes(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    shown = final(await say(runtime, "/shop wireless earbuds under $150")).data["products"]
    first = await say(runtime, "what do people say about the battery of the first one?")
    again = await say(runtime, "what do people say about the battery?")  # the same product, now current
    assert "Reading reviews of" in statuses(first) and "retrieved earlier" in statuses(again)
    assert final(again).data["reviews"] == final(first).data["reviews"]
    entry = (await checkpoint(runtime))["products"][shown[0]["id"]]
    assert list(entry["reviews"]) == ["battery"] and entry["record"]["name"] == shown[0]["name"]

    product = await store.get_product(shown[0]["id"])
    assert product is not None
    await store.upsert_products([product.model_copy(update={"price": product.price + 1})])  # a catalog update
    fresh = await say(runtime, "what do people say about the battery?")
    assert "Reading reviews of" in statuses(fresh)
    assert (await checkpoint(runtime))["products"][shown[0]["id"]]["record"]["price"] == product.price + 1


async def test_a_product_card_shows_the_image_an_ingested_record_gives(
    runtime: ConversationRuntime, store: CatalogStore, tmp_path: Path
) -> None:
    record = {"kind": "product", "id": "lamp-991", "name": "Paper Moon Lamp", "category": "home", "subcategory": "lamp",
              "price": 42.0, "keywords": ["lamp"], "image_url": "https://images.example.com/lamp-991.jpg"}
    feed = tmp_path / "products.jsonl"
    feed.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert (await ingest_catalog(store, feed)).loaded == 1
    answer = final(await say(runtime, "/shop paper moon lamp"))
    cards = {c.title: c for c in answer.cards}
    assert cards["Paper Moon Lamp"].image_url == record["image_url"]
    assert answer.data["products"][0]["image_url"] == record["image_url"]
    assert all(c.image_url is None for title, c in cards.items() if title != "Paper Moon Lamp")  # demo products have none


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'll pick it up at the store", "pickup"),
        ("can I pick them up tomorrow?", "pickup"),
        ("pickup please", "pickup"),
        ("店舗受け取りで", "pickup"),
        ("ship it to me", "ship"),
        ("pick the blue one", None),
    ],
)
def test_how_the_shopper_wants_it_is_read_from_their_words(text: str, expected: str | None) -> None:
    from agents.shopping.intents import extract_fulfillment

    assert extract_fulfillment(text) == expected


@pytest.mark.parametrize("text", ["カートに入れて", "カートに1個入れて", "カートに２つ追加して", "2個カートに入れて"])
def test_putting_a_quantity_in_the_cart_in_japanese_is_a_purchase(text: str) -> None:
    from agents.shopping.intents import classify

    assert classify(text).intent == "purchase"


async def test_pickup_is_not_offered_at_the_shoppers_store_when_it_has_none(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    shown = final(await say(runtime, "/shop wireless earbuds under $100", user="u6", thread="p")).data["products"]
    await say(runtime, "my store is Shibuya", user="u6", thread="p")
    product_id = shown[0]["id"]
    rows = await store.stock(product_id, store_ids=["tokyo-shibuya"])
    await store.upsert_stock([r.model_copy(update={"quantity": 0}) for r in rows])  # sold out there
    assert sum(r.quantity for r in await store.stock(product_id)) > 0  # still in stock elsewhere: pickup stays
    answer = final(await say(runtime, "add the first one to my cart for pickup", user="u6", thread="p"))
    assert "Concierge Shop Shibuya does not have enough in stock" in answer.text, answer.text
    assert all("Shibuya" not in str(card) for card in answer.cards)
