"""/shop as a Japanese and an English shopper word it, on the offline model through the real
runtime: Japanese product names and yen beside the catalog's dollars in the text as on the cards,
ordinals that pick exactly the products meant, quantities read as written, and a change that
cannot happen said at once instead of asked for."""

from __future__ import annotations

import re

import pytest

from agents.shopping.catalog import CatalogStore
from bot.agent import TurnInput
from bot.events import Final, StreamEvent, ToolStarted
from bot.runtime import ConversationRuntime
from tests.shopping.conftest import TODAY, collect, key
from tests.shopping.test_agent import checkpoint, final, say, statuses

JA_SEARCH = "/shop ワイヤレスイヤホン 1万円以下"
EN_SEARCH = "/shop wireless earbuds under $100"


async def say_in(runtime: ConversationRuntime, text: str, currency: str, *, thread: str, user: str) -> list[StreamEvent]:
    """A turn from a platform that knows the shopper's currency (a ja-JP locale gives yen)."""
    return await collect(runtime.handle(key(thread), TurnInput.typed(text, user_id=user, currency=currency)))


def price_lines(answer: Final) -> list[str]:
    return [line for line in answer.text.splitlines() if re.match(r"\d+\. ", line)]


async def test_a_japanese_shopper_reads_japanese_names_in_the_answer_the_cards_and_the_cart(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    shown = final(await say(runtime, JA_SEARCH, user="n1", thread="n"))
    products = shown.data["products"]
    first = await store.get_product(products[0]["id"])
    assert first is not None and first.name_ja and first.name_ja != first.name
    assert (products[0]["name"], products[0]["name_ja"]) == (first.name, first.name_ja)  # both kept, with the id
    assert [c.title for c in shown.cards] == [p["name_ja"] for p in products]
    assert first.name_ja in shown.text and first.name not in shown.text
    asked = final(await say(runtime, "1番目をカートに入れて", user="n1", thread="n"))
    assert asked.text.startswith(f"{first.name_ja}を1個") and asked.cards[0].title == f"カートに追加: {first.name_ja}"
    done = final(await say(runtime, "はい", user="n1", thread="n"))
    assert done.text.startswith(f"{first.name_ja}を1個カートに追加しました。"), done.text
    assert f"1 × {first.name_ja}" in done.cards[-1].fields
    assert done.data["cart"]["items"][0] == {"product_id": first.id, "name": first.name, "name_ja": first.name_ja,
                                                  "quantity": 1, "unit_price": first.price}
    cart = final(await say(runtime, "カートの中", user="n1", thread="n"))
    assert f"• {first.name_ja} × 1" in cart.text and first.name not in cart.text, cart.text
    details = final(await say(runtime, "1番目の仕様は？", user="n1", thread="n"))
    assert details.text.startswith(f"{first.name_ja}（"), details.text


async def test_an_english_shopper_keeps_the_catalog_names(runtime: ConversationRuntime) -> None:
    shown = final(await say(runtime, EN_SEARCH, user="n2", thread="n"))
    assert all("name_ja" not in p for p in shown.data["products"])
    assert [c.title for c in shown.cards] == [p["name"] for p in shown.data["products"]]
    assert not re.search(r"[\u3040-\u30ff\u3400-\u9fff]", shown.text)


async def test_a_japanese_answer_shows_yen_beside_the_catalog_price_as_the_cards_do(runtime: ConversationRuntime) -> None:
    shown = final(await say(runtime, JA_SEARCH, user="y1", thread="y"))
    lines = price_lines(shown)
    assert len(lines) == len(shown.cards) > 0
    for line, card in zip(lines, shown.cards, strict=True):
        assert card.fields["価格"] in line and "（≈ ¥" in card.fields["価格"], (line, card.fields)
    details = final(await say(runtime, "1番目の仕様は？", user="y1", thread="y"))
    assert shown.cards[0].fields["価格"] in details.text.splitlines()[0]
    coupons = final(await say(runtime, "1番目のクーポンは？", user="y1", thread="y"))
    assert re.search(r"\$\d+\.\d\d（≈ ¥[\d,]+）以上のご購入", coupons.text), coupons.text


async def test_a_shopper_whose_platform_gives_yen_sees_yen_in_an_english_answer(runtime: ConversationRuntime) -> None:
    shown = final(await say_in(runtime, EN_SEARCH, "JPY", thread="y", user="y2"))
    lines = price_lines(shown)
    assert lines and all(re.search(r"\$[\d.,]+ \(≈ ¥[\d,]+\)", line) for line in lines), shown.text
    assert [c.fields["Price"] in line for c, line in zip(shown.cards, lines, strict=True)] == [True] * len(lines)
    assert "reviews)" in lines[0]  # still English
    dollars = final(await say(runtime, EN_SEARCH, user="y3", thread="y3"))
    assert "≈" not in dollars.text  # a dollar shopper reads dollars only, as before


@pytest.mark.parametrize(
    ("search", "question", "positions"),
    [
        (EN_SEARCH, "compare the first and the second", [0, 1]),
        (EN_SEARCH, "compare the 2nd and the 4th", [1, 3]),
        (EN_SEARCH, "compare #3 vs the last one", [2, -1]),
        (EN_SEARCH, "compare the last one with the first", [-1, 0]),
        (JA_SEARCH, "1つ目と2番目を比較して", [0, 1]),
        (JA_SEARCH, "最初と最後を比較して", [0, -1]),
        (JA_SEARCH, "2番目と4つ目の違いは？", [1, 3]),
    ],
)
async def test_ordinals_pick_exactly_the_products_compared(
    runtime: ConversationRuntime, search: str, question: str, positions: list[int]
) -> None:
    shown = final(await say(runtime, search, user="o1", thread="o")).data["products"]
    assert len(shown) == 5
    compared = final(await say(runtime, question, user="o1", thread="o"))
    assert [p["id"] for p in compared.data["products"]] == [shown[i]["id"] for i in positions]
    assert len([line for line in compared.text.splitlines() if line.startswith("• ")]) == len(positions)


async def test_a_comparison_keeps_the_list_its_ordinals_point_into(runtime: ConversationRuntime) -> None:
    shown = final(await say(runtime, EN_SEARCH, user="o2", thread="o")).data["products"]
    await say(runtime, "compare the first and the third", user="o2", thread="o")
    again = final(await say(runtime, "compare the second and the fifth", user="o2", thread="o"))
    assert [p["id"] for p in again.data["products"]] == [shown[1]["id"], shown[4]["id"]]
    specs = final(await say(runtime, "specs of the fourth one", user="o2", thread="o"))
    assert specs.data["products"][0]["id"] == shown[3]["id"]


async def test_an_ordinal_past_the_list_is_asked_about(runtime: ConversationRuntime) -> None:
    await say(runtime, EN_SEARCH, user="o3", thread="o")
    answer = final(await say(runtime, "compare the first and the seventh", user="o3", thread="o"))
    assert answer.text == "I showed 5 product(s); which one do you mean (1–5)?" and "products" not in answer.data


@pytest.mark.parametrize(
    ("text", "position", "quantity"),
    [
        ("2つ目をカートに入れて", 1, 1),  # 「2つ目」 is the second product, not two of it
        ("3個目をカートに入れて", 2, 1),
        ("1番目をカートに二つ入れて", 0, 2),  # a quantity in kanji
        ("最後のをカートに3個入れて", -1, 3),
        ("add two of the 2nd one to my cart", 1, 2),
    ],
)
async def test_positions_and_quantities_are_read_as_written(
    runtime: ConversationRuntime, text: str, position: int, quantity: int
) -> None:
    search = JA_SEARCH if re.search(r"[\u3040-\u30ff\u3400-\u9fff]", text) else EN_SEARCH
    shown = final(await say(runtime, search, user="q1", thread="q")).data["products"]
    asked = final(await say(runtime, text, user="q1", thread="q"))
    assert asked.data["pending"] == {"action": "add", "product_id": shown[position]["id"], "quantity": quantity}


@pytest.mark.parametrize(
    ("search", "change", "answer"),
    [
        (EN_SEARCH, "change the quantity of the first one to 5", "Change the quantity of {name} in your cart to 5"),
        (EN_SEARCH, "set the first one to 5", "Change the quantity of {name} in your cart to 5"),
        (JA_SEARCH, "1番目の数量を5個に変更して", "カートの{name}を5個"),
    ],
)
async def test_changing_a_quantity_sets_it_instead_of_adding_to_it(
    runtime: ConversationRuntime, store: CatalogStore, search: str, change: str, answer: str
) -> None:
    first = final(await say(runtime, search, user="q2", thread="q")).data["products"][0]
    await store.cart_add("q2", first["id"], 2)
    asked = final(await say(runtime, change, user="q2", thread="q"))
    assert asked.data["pending"] == {"action": "set", "product_id": first["id"], "quantity": 5}
    assert asked.text.startswith(answer.format(name=first.get("name_ja") or first["name"])), asked.text
    await say(runtime, "yes", user="q2", thread="q")
    assert [i.quantity for i in (await store.get_cart("q2")).items] == [5]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("add 98 of the first one to my cart", "The cart already has 2 × {name}; at most 99 fit on one line"),
        ("change the quantity of the first one to 2", "The cart already has 2 × {name}."),
        ("remove the second one from my cart", "{second} is not in the cart."),
    ],
)
async def test_a_cart_change_that_cannot_happen_is_said_at_once(
    runtime: ConversationRuntime, store: CatalogStore, change: str, expected: str
) -> None:
    shown = final(await say(runtime, EN_SEARCH, user="q3", thread="q")).data["products"]
    await store.cart_add("q3", shown[0]["id"], 2)
    answer = final(await say(runtime, change, user="q3", thread="q"))
    assert expected.format(name=shown[0]["name"], second=shown[1]["name"]) in answer.text, answer.text
    assert "pending" not in answer.data and not (await checkpoint(runtime, "q")).get("awaiting")
    assert [i.quantity for i in (await store.get_cart("q3")).items] == [2]


async def test_a_coupon_below_its_minimum_spend_is_refused_at_once_with_yen_beside_dollars(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    first = final(await say(runtime, JA_SEARCH, user="c1", thread="c")).data["products"][0]
    await store.cart_add("c1", first["id"], 1)  # well under SAVE20's $100.00
    answer = final(await say(runtime, "クーポン SAVE20 を使って", user="c1", thread="c"))
    assert "pending" not in answer.data and not answer.cards
    assert answer.text.startswith("クーポンSAVE20は使えません（クーポンSAVE20は$100.00（≈ ¥15,000）以上のご購入が必要です"), answer.text
    assert (await store.get_cart("c1")).coupon is None


async def test_a_coupon_already_on_the_cart_is_not_asked_for_again(runtime: ConversationRuntime, store: CatalogStore) -> None:
    first = final(await say(runtime, EN_SEARCH, user="c2", thread="c")).data["products"][0]
    await store.cart_add("c2", first["id"], 1)
    asked = final(await say(runtime, "apply WELCOME10", user="c2", thread="c"))
    assert asked.data["pending"]["code"] == "WELCOME10"
    await say(runtime, "yes", user="c2", thread="c")
    again = final(await say(runtime, "apply WELCOME10", user="c2", thread="c"))
    assert again.text == "Coupon WELCOME10 is already applied to your cart." and "pending" not in again.data


@pytest.mark.parametrize(
    ("search", "question", "position", "topic"),
    [
        (EN_SEARCH, "what do people say about the battery of the 2nd one?", 1, "battery"),
        (EN_SEARCH, "any complaints about the fit of the last one?", -1, "fit"),
        (JA_SEARCH, "3番目の商品の音質の口コミは？", 2, "音質"),
        (JA_SEARCH, "最後の商品のバッテリーの評判は？", -1, "バッテリー"),
    ],
)
async def test_a_review_question_searches_its_topic_without_the_products_position(
    runtime: ConversationRuntime, search: str, question: str, position: int, topic: str
) -> None:
    shown = final(await say(runtime, search, user="r1", thread="r")).data["products"]
    events = await say(runtime, question, user="r1", thread="r")
    started = next(e for e in events if isinstance(e, ToolStarted) and e.name == "review_search")
    assert started.args_summary == f"question={topic}"
    assert {r["product_id"] for r in final(events).data["reviews"]} == {shown[position]["id"]}


async def test_delivery_today_and_free_delivery_are_said_in_words(runtime: ConversationRuntime) -> None:
    await say(runtime, "/shop ランニングシューズ", user="d1", thread="d")
    details = final(await say(runtime, "1番目の仕様は？", user="d1", thread="d"))
    delivery = next(line for line in details.text.splitlines() if line.startswith("受け取り方法"))
    assert "0日" not in delivery and "$0.00" not in delivery and "無料" in delivery, delivery
    variants = next(line for line in details.text.splitlines() if line.startswith("バリエーション"))
    assert "), " not in variants, variants


async def test_a_coupon_for_other_categories_is_refused_at_once_with_the_category_in_japanese(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    shoes = final(await say(runtime, "/shop ランニングシューズ", user="c3", thread="c")).data["products"][0]
    await store.cart_add("c3", shoes["id"], 1)
    answer = final(await say(runtime, "クーポン AUDIO15 を使って", user="c3", thread="c"))
    assert answer.text == "クーポンAUDIO15は使えません（クーポンAUDIO15はオーディオの商品専用で、カートに対象の商品がありません）。"
    assert "pending" not in answer.data


async def test_an_english_yen_shopper_reads_a_minimum_spend_in_yen_too(runtime: ConversationRuntime, store: CatalogStore) -> None:
    first = final(await say_in(runtime, EN_SEARCH, "JPY", thread="c", user="c4")).data["products"][0]
    await store.cart_add("c4", first["id"], 1)
    answer = final(await say_in(runtime, "apply SAVE20", "JPY", thread="c", user="c4"))
    assert "needs a spend of at least $100.00 (≈ ¥15,000); the cart has $" in answer.text, answer.text


async def test_a_japanese_card_names_the_category_in_japanese(runtime: ConversationRuntime) -> None:
    shown = final(await say(runtime, JA_SEARCH, user="k1", thread="k"))
    assert all(c.subtitle and " · オーディオ · " in c.subtitle for c in shown.cards), [c.subtitle for c in shown.cards]
    english = final(await say(runtime, EN_SEARCH, user="k2", thread="k2"))
    assert all(c.subtitle and " · audio · " in c.subtitle for c in english.cards)


async def test_a_japanese_stock_question_names_the_city_in_japanese_while_it_works(runtime: ConversationRuntime) -> None:
    await say(runtime, JA_SEARCH, user="s1", thread="s")
    events = await say(runtime, "最後のは東京の店舗に在庫ある？", user="s1", thread="s")
    assert "東京の近くの店舗を探しています…" in statuses(events) and "Tokyo" not in statuses(events)


async def test_removing_from_the_cart_in_japanese_names_the_product_by_its_position(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    shown = final(await say(runtime, JA_SEARCH, user="s2", thread="s")).data["products"]
    await store.cart_add("s2", shown[1]["id"], 1)
    asked = final(await say(runtime, "カートから2番目を削除して", user="s2", thread="s"))
    assert asked.data["pending"] == {"action": "remove", "product_id": shown[1]["id"], "quantity": 0}
    assert asked.text.startswith(f"{shown[1]['name_ja']}をカートから削除しますか"), asked.text


async def test_a_coupon_that_would_replace_another_says_so_before_it_is_confirmed(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    first = final(await say(runtime, EN_SEARCH, user="c5", thread="c")).data["products"][0]
    await store.cart_add("c5", first["id"], 3)  # over AUDIO15's $50.00
    await store.cart_apply_coupon("c5", "WELCOME10", today=TODAY)
    asked = final(await say(runtime, "apply AUDIO15", user="c5", thread="c"))
    assert asked.text == ("Your cart has coupon WELCOME10; one coupon applies per order, so WELCOME10 would be replaced. "
                          "Apply coupon AUDIO15 to your cart? Reply yes or no."), asked.text
    await say(runtime, "yes", user="c5", thread="c")
    assert (await store.get_cart("c5")).coupon == "AUDIO15"


async def test_headphones_spelt_the_other_common_way_are_searched_for(runtime: ConversationRuntime) -> None:
    """「ノイキャンのヘッドフォン」: the planner reads ヘッドフォン as headphones (audio) and the search finds
    only noise-cancelling ones, as 「ノイズキャンセリングのヘッドホン」 does."""
    typed = final(await say(runtime, "/shop 予算3万円でノイキャンのヘッドフォン", user="v1", thread="v1"))
    usual = final(await say(runtime, "/shop 予算3万円でノイズキャンセリングのヘッドホン", user="v2", thread="v2"))
    assert typed.data["products"] and [p["id"] for p in typed.data["products"]] == [p["id"] for p in usual.data["products"]]
    assert all(p["id"].startswith(("headphones-", "earbuds-")) for p in typed.data["products"])


async def test_pairs_are_a_quantity(runtime: ConversationRuntime) -> None:
    shown = final(await say(runtime, "/shop running shoes under $120", user="p1", thread="p1")).data["products"]
    asked = final(await say(runtime, "add the first one to my cart, 2 pairs", user="p1", thread="p1"))
    assert asked.data["pending"] == {"action": "add", "product_id": shown[0]["id"], "quantity": 2}


async def test_after_the_cart_is_shown_a_position_means_its_line(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    """"remove the first one" right after "show my cart" is the cart's first line, not the first
    product of the search before it; 「2番目を削除して」 is its second line."""
    shown = final(await say(runtime, EN_SEARCH, user="l1", thread="l1")).data["products"]
    await store.cart_add("l1", shown[2]["id"], 1)
    await store.cart_add("l1", shown[0]["id"], 1)
    await say(runtime, "show my cart", user="l1", thread="l1")
    asked = final(await say(runtime, "remove the first one", user="l1", thread="l1"))
    assert asked.data["pending"] == {"action": "remove", "product_id": shown[2]["id"], "quantity": 0}
    await say(runtime, "no", user="l1", thread="l1")
    asked = final(await say(runtime, "2番目を削除して", user="l1", thread="l1"))
    assert asked.data["pending"] == {"action": "remove", "product_id": shown[0]["id"], "quantity": 0}


@pytest.mark.parametrize(
    ("text", "filters"),
    [
        ("smartwatches with 4+ stars", {"category": "wearables", "min_rating": 4.0}),
        ("earbuds 4.5 stars and up", {"category": "audio", "min_rating": 4.5}),
        ("星4以上のイヤホン", {"category": "audio", "min_rating": 4.0}),
        ("評価4以上のイヤホン", {"category": "audio", "min_rating": 4.0}),  # 「4以上」 here is no price
        ("星4以上で1万円以下のイヤホン", {"category": "audio", "currency": "JPY", "max_price": 10000.0, "min_rating": 4.0}),
        ("5000円以上のイヤホン", {"category": "audio", "currency": "JPY", "min_price": 5000.0}),
    ],
)
def test_a_products_stars_are_its_rating_and_no_price(text: str, filters: dict[str, object]) -> None:
    from agents.shopping.intents import search_filters

    assert search_filters(text, "JPY") == filters


async def test_a_search_that_finds_nothing_says_which_condition_to_loosen(runtime: ConversationRuntime) -> None:
    rated = final(await say(runtime, "/shop smartwatch rated 4.9+", user="r1", thread="r1"))
    assert rated.text == "No products rated 4.9 or higher match that. Try a lower rating."
    budget = final(await say(runtime, "/shop zzyzx quux under $5", user="r2", thread="r2"))
    assert budget.text == "No products match that. Try fewer words or a higher budget."
    words = final(await say(runtime, "/shop looking for a zzyzx quux", user="r3", thread="r3"))
    assert words.text == "No products match that. Try fewer or other words."
    ja = final(await say(runtime, "/shop 評価4.9以上のスマートウォッチ", user="r4", thread="r4"))
    assert ja.text == "評価4.9以上で条件に合う商品は見つかりませんでした。評価の条件を下げてみてください。"


async def test_a_budget_nothing_fits_names_the_cheapest_that_matches(runtime: ConversationRuntime, store: CatalogStore) -> None:
    """"running shoes under $40" listed two pairs of sandals as "products that match"; nothing of the
    kind asked fits, so the answer says so and names the cheapest that does match."""
    cheapest = (await store.search_products("running shoes", sort="price", limit=1))[0]
    assert cheapest.subcategory == "running shoes" and cheapest.price > 40
    answer = final(await say(runtime, "/shop running shoes under $40", user="r5", thread="r5"))
    assert answer.text == ("Nothing that matches is within that budget; the cheapest that does is "
                           f"{cheapest.name} at ${cheapest.price:.2f}.")
    ja = final(await say(runtime, "/shop ランニングシューズ 3000円以下", user="r6", thread="r6"))
    assert ja.text.startswith("予算内で条件に合う商品はありませんでした。条件に合う最安は") and f"${cheapest.price:.2f}" in ja.text


async def test_a_kind_of_product_named_is_the_kind_listed(runtime: ConversationRuntime, store: CatalogStore) -> None:
    """"bluetooth speaker under $30" listed one speaker and three pairs of earbuds (they are bluetooth
    too); now the speaker alone, said as one."""
    answer = final(await say(runtime, "/shop bluetooth speaker under $30", user="r7", thread="r7"))
    assert answer.text.startswith("One product matches:\n1. ") and answer.text.count("\n") == 1
    listed = await store.search_products("bluetooth speaker", max_price=30)
    assert listed and {p.subcategory for p in listed} == {"speakers"}
    assert {p.subcategory for p in await store.search_products("shoes under 40", max_price=40)} == {"sandals"}


async def test_a_city_the_shopper_gives_is_acknowledged_once(runtime: ConversationRuntime) -> None:
    """"I'm in Osaka" on its own gets a word that it was heard; the stock question after it uses
    Osaka's stores; saying it again says nothing new. A store named by name says only the store."""
    await say(runtime, EN_SEARCH, user="g1", thread="g1")
    told = final(await say(runtime, "I'm in Osaka", user="g1", thread="g1"))
    assert told.text.startswith("I'll look for stores in Osaka from now on.")
    stock = final(await say(runtime, "is the first one in stock near me?", user="g1", thread="g1"))
    assert "Concierge Shop Umeda" in stock.text and "from now on" not in stock.text
    again = final(await say(runtime, "I'm in Osaka", user="g1", thread="g1"))
    assert "from now on" not in again.text
    ja = final(await say(runtime, "/shop 大阪にいます", user="g2", thread="g2"))
    assert ja.text.startswith("これからは大阪の店舗を探します。")


async def test_english_details_name_specs_in_words_and_days_as_english_counts_them(runtime: ConversationRuntime) -> None:
    await say(runtime, EN_SEARCH, user="w1", thread="w1")
    details = final(await say(runtime, "what's the cheapest?", user="w1", thread="w1"))
    specs = next(line for line in details.text.splitlines() if line.startswith("Specs: "))
    assert "_" not in specs and "Battery (hours): " in specs and "Noise cancelling: " in specs, specs
    assert "day(s)" not in details.text and re.search(r"\b(?:1 day|[2-9] days)\b", details.text), details.text
    compared = final(await say(runtime, "compare the first two", user="w1", thread="w1"))
    assert "_" not in compared.text and "Battery (hours): " in compared.text, compared.text


async def test_a_product_pointed_at_and_asked_about_gets_its_details(runtime: ConversationRuntime) -> None:
    shown = final(await say(runtime, EN_SEARCH, user="w2", thread="w2")).data["products"]
    second = final(await say(runtime, "tell me more about the second one", user="w2", thread="w2"))
    assert second.data["products"][0]["id"] == shown[1]["id"] and "Specs: " in second.text
    cheapest = min(shown, key=lambda p: p["price"])
    for question in ("一番安いのは？", "どれが一番安い？", "一番安いやつ"):
        asked = final(await say(runtime, question, user="w2", thread="w2"))
        assert asked.data["products"][0]["id"] == cheapest["id"] and "仕様: " in asked.text, question


def test_the_first_two_after_the_are_two_positions() -> None:
    from agents.shopping.intents import ordinals

    assert ordinals("compare the first two") == [1, 2] and ordinals("compare the top three") == [1, 2, 3]
    assert ordinals("the first one") == [1] and ordinals("the first 2 nights") == [1]


@pytest.mark.parametrize("text", ["2番目をカートに2足入れて", "2番目をカートに2枚追加", "2番目を2着カートに入れて"])
async def test_japanese_counters_for_shoes_and_clothes_add_to_the_cart(runtime: ConversationRuntime, text: str) -> None:
    shown = final(await say(runtime, JA_SEARCH, user="k1", thread=text)).data["products"]
    asked = final(await say(runtime, text, user="k1", thread=text))
    assert asked.data["pending"] == {"action": "add", "product_id": shown[1]["id"], "quantity": 2}


async def test_the_cart_says_what_a_coupon_took_off(runtime: ConversationRuntime) -> None:
    """The cart's text went from the lines' $78.99 to "Total: $67.14" with no word of the coupon
    between (only the card had it)."""
    first = final(await say(runtime, "/shop wireless earbuds under $100", user="c1", thread="c1")).data["products"][0]
    await say(runtime, "add 3 of the first one to my cart", user="c1", thread="c1")  # AUDIO15 wants $50 of audio
    await say(runtime, "yes", user="c1", thread="c1")
    await say(runtime, "apply AUDIO15", user="c1", thread="c1")
    applied = final(await say(runtime, "yes", user="c1", thread="c1")).data["cart"]
    assert applied["coupon"] == "AUDIO15" and applied["discount"] > 0
    cart = final(await say(runtime, "what's in my cart?", user="c1", thread="c1"))
    assert cart.text == (f"Your cart:\n• 3 × {first['name']} — ${3 * first['price']:.2f}\n"
                         f"• Coupon AUDIO15: −${applied['discount']:.2f}\nTotal: ${applied['total']:.2f}")


@pytest.mark.parametrize(
    ("text", "user"), [("/shop is earbuds-002 in stock in Shibuya?", "p1"), ("/shop earbuds-002の在庫は渋谷にある？", "p2")]
)
async def test_stock_in_a_stores_district_lists_that_store_first(
    runtime: ConversationRuntime, store: CatalogStore, text: str, user: str
) -> None:
    """It listed Shinjuku and Ginza (nearer Tokyo's centre) before the Shibuya store asked about."""
    answer = final(await say(runtime, text, user=user, thread=user))
    assert answer.text.splitlines()[1].startswith("• Concierge Shop Shibuya")
    assert (await store.get_prefs(user)).store_id is None  # a place named, not a store picked


@pytest.mark.parametrize(
    ("search", "question", "first_line"),
    [("/shop laptop under $1000", "how heavy is the first one?", "Weight (kg): {weight_kg}."),
     ("/shop laptop under $1000", "what CPU does the first one have?", "CPU: {cpu}."),
     ("/shop laptop under $1000", "does the first one have a backlit keyboard?",
      "The specs listed for {name} do not say whether it has a backlit keyboard."),
     ("/shop wireless earbuds under $100", "is the first one waterproof?", "{verdict} — Water resistance: {water_resistance}."),
     ("/shop ワイヤレスイヤホン", "1番目の重さは？", "片耳の重さ（g）: {weight_g_per_bud}。"),
     ("/shop ワイヤレスイヤホン", "1番目のマイクは付いてる？", "{name_ja}の仕様には「マイク」についての記載がありません。")],
)
async def test_a_question_about_one_spec_is_answered_first(
    runtime: ConversationRuntime, store: CatalogStore, search: str, question: str, first_line: str
) -> None:
    """"how heavy is it?", "does it have a backlit keyboard?", "is it waterproof?" all got the same
    eight specs, the one asked about among them or not; 「マイクは付いてる？」 got the help text."""
    thread = f"s{abs(hash(question)) % 10_000}"
    shown = final(await say(runtime, search, user=thread, thread=thread)).data["products"][0]
    product = await store.get_product(shown["id"])
    assert product is not None
    answer = final(await say(runtime, question, user=thread, thread=thread))
    waterproof = re.fullmatch(r"IP[X\d][78]|\d+\s*ATM", product.specs.get("water_resistance", ""))
    assert answer.text.splitlines()[0] == first_line.format(
        **product.specs, name=product.name, name_ja=product.name_ja,
        verdict="Yes" if waterproof else "No")


@pytest.mark.parametrize(("text", "welcome"), [("thanks!", "You're welcome!"), ("ありがとうございます", "どういたしまして！")])
async def test_thanks_are_acknowledged(runtime: ConversationRuntime, text: str, welcome: str) -> None:
    """It was the help text ("I'm the shop assistant (offline model). Try: …")."""
    await say(runtime, "/shop wireless earbuds", user="t1", thread=f"t{len(text)}")
    assert final(await say(runtime, text, user="t1", thread=f"t{len(text)}")).text.startswith(welcome)
