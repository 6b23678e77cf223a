"""/shop answers in the language of the request, on the offline model through the real runtime:
a Japanese shopper reads Japanese throughout (stock, store notes, confirmations and their cards,
coupons, details, the cart, refusals), an English one English; and a stock question about a named
store says what that store has, even when it has none."""

from __future__ import annotations

import re

import pytest

from agents.shopping.catalog import CatalogStore
from bot.events import Final, ToolFinished
from bot.runtime import ConversationRuntime
from tests.shopping.conftest import collect, key
from tests.shopping.test_agent import checkpoint, final, say, statuses

# What a Japanese answer may keep in Latin letters: the catalog's names, store names, coupon
# codes, product ids and units.
STORE_NAME = re.compile(r"Concierge Shop(?: [A-Z][A-Za-z]*)+")
ALLOWED = re.compile(r"\b(?:km|[A-Z0-9]{4,}|[a-z]+-\d{3,})\b")


def english_left(answer: Final, *names: str) -> list[str]:
    """The Latin words of the answer's text, once the names it may quote are taken out."""
    text = answer.text
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, " ")
    text = ALLOWED.sub(" ", STORE_NAME.sub(" ", text))
    return re.findall(r"[A-Za-z]{2,}", text)


async def search_ja(runtime: ConversationRuntime, *, user: str, thread: str) -> list[dict[str, object]]:
    products = final(await say(runtime, "/shop ワイヤレスイヤホン 1万円以下", user=user, thread=thread)).data["products"]
    assert products
    return list(products)


async def sold_out_at(store: CatalogStore, product_id: str, *store_ids: str) -> None:
    rows = await store.stock(product_id, store_ids=list(store_ids))
    await store.upsert_stock([r.model_copy(update={"quantity": 0}) for r in rows])


async def test_a_japanese_stock_question_is_answered_in_japanese_with_the_store_note(runtime: ConversationRuntime) -> None:
    products = await search_ja(runtime, user="j1", thread="ja")
    events = await say(runtime, "1番目は渋谷店に在庫はありますか", user="j1", thread="ja")
    assert "の在庫を確認しています…" in statuses(events) and "Checking stock" not in statuses(events)
    summaries = [e.summary for e in events if isinstance(e, ToolFinished)]  # the progress lines of the tools
    assert summaries[:2] == ["現在地: 東京", "近くの店舗4件"] and summaries[2].startswith("近くの在庫"), summaries
    answer = final(events)
    assert answer.text.startswith("Concierge Shop Shibuyaをご利用の店舗として登録しました。"), answer.text
    assert "在庫" in answer.text and "• Concierge Shop Shibuya（" in answer.text
    assert english_left(answer, str(products[0]["name_ja"])) == [], answer.text
    assert set(answer.cards[0].fields) == {"価格", "評価", "在庫"}
    assert answer.cards[0].actions[0].label == "カートに入れる"


async def test_a_japanese_cart_change_is_confirmed_in_japanese(runtime: ConversationRuntime, store: CatalogStore) -> None:
    products = await search_ja(runtime, user="j2", thread="ja")
    name = str(products[0]["name_ja"])
    asked = final(await say(runtime, "1番目をカートに2個入れて", user="j2", thread="ja"))
    assert asked.data["pending"] == {"action": "add", "product_id": products[0]["id"], "quantity": 2}
    assert f"{name}を2個" in asked.text and "カートに追加しますか" in asked.text and "「はい」" in asked.text
    assert english_left(asked, name) == [], asked.text
    card = asked.cards[0]
    assert card.title == f"カートに追加: {name}" and card.subtitle == "ご確認をお待ちしています"
    assert set(card.fields) == {"数量", "価格", "受け取り方法"} and "≈ ¥" in card.fields["価格"]
    assert [(a.label, a.value) for a in card.actions] == [("確定", "yes"), ("キャンセル", "no")]
    done = final(await say(runtime, "はい", user="j2", thread="ja"))
    assert "カートに追加しました" in done.text and "カートの合計" in done.text
    assert english_left(done, name) == [], done.text
    assert done.cards[-1].title == "カート" and "合計" in done.cards[-1].fields
    assert (await store.get_cart("j2")).items[0].quantity == 2


async def test_the_add_to_cart_button_of_a_japanese_card_asks_in_japanese(runtime: ConversationRuntime) -> None:
    shown = final(await say(runtime, "/shop ワイヤレスイヤホン 1万円以下"))
    add = shown.cards[1].actions[0].value
    asked = final(await collect(runtime.resume(key(), add, user_id="u1", delivery_id="b1")))
    assert asked.data["pending"]["product_id"] == shown.data["products"][1]["id"]
    assert "カートに追加しますか" in asked.text, asked.text


async def test_japanese_details_coupons_and_the_cart_are_in_japanese(runtime: ConversationRuntime) -> None:
    products = await search_ja(runtime, user="j3", thread="ja")
    name = str(products[0]["name_ja"])
    details = final(await say(runtime, "1番目の仕様は？", user="j3", thread="ja"))
    assert f"{name}（" in details.text and "評価" in details.text and "受け取り方法: " in details.text
    delivery = next(line for line in details.text.splitlines() if line.startswith("受け取り方法"))
    assert re.findall(r"[A-Za-z]{2,}", delivery) == [], delivery  # 配送・店舗受け取り, days as 日
    specs = next(line for line in details.text.splitlines() if line.startswith("仕様"))
    assert "_" not in specs and ("なし" in specs or "あり" in specs), specs  # the catalog's keys and yes/no, labelled
    compared = final(await say(runtime, "1番目と2番目を比較して", user="j3", thread="ja"))
    assert "最安: " in compared.text and "_" not in compared.text, compared.text
    coupons = final(await say(runtime, "1番目のクーポンは？", user="j3", thread="ja"))
    assert "に使えるクーポン" in coupons.text and "引き" in coupons.text and "まで" in coupons.text
    assert english_left(coupons, name) == [], coupons.text
    await say(runtime, "1番目をカートに入れて", user="j3", thread="ja")
    await say(runtime, "はい", user="j3", thread="ja")
    cart = final(await say(runtime, "カートの中", user="j3", thread="ja"))
    assert cart.text.startswith("カートの中身：") and "合計" in cart.text
    assert english_left(cart, name) == [], cart.text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1番目を-2個カートに入れて", "数量は1〜99個"),  # a stage refusal, retold
        ("1番目は近くの店舗に在庫ある？", "どの都市"),  # no location known yet
    ],
)
async def test_refusals_to_a_japanese_shopper_are_in_japanese(runtime: ConversationRuntime, text: str, expected: str) -> None:
    products = await search_ja(runtime, user="j4", thread="ja")
    answer = final(await say(runtime, text, user="j4", thread="ja"))
    assert expected in answer.text and "pending" not in answer.data
    assert english_left(answer, str(products[0]["name_ja"])) == [], answer.text


async def test_a_japanese_reference_with_nothing_shown_gets_a_japanese_question(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop それの評判は？", thread="fresh"))
    assert "どの商品のことですか" in answer.text and "products" not in answer.data


async def test_english_requests_stay_english(runtime: ConversationRuntime) -> None:
    await say(runtime, "/shop wireless earbuds under $100")
    stock = final(await say(runtime, "is the first one in stock at the Shibuya store?"))
    assert stock.text.startswith("I'll use Concierge Shop Shibuya as your store.") and " km, open " in stock.text
    coupons = final(await say(runtime, "coupons for the first one"))
    assert coupons.text.startswith("Coupons for ") and "until" in coupons.text
    asked = final(await say(runtime, "add the first one to my cart"))
    assert "to your cart? Reply yes or no." in asked.text
    assert [a.label for a in asked.cards[0].actions] == ["Confirm", "Cancel"] and "Quantity" in asked.cards[0].fields
    assert not re.search(r"[\u3040-\u30ff\u3400-\u9fff]", stock.text + coupons.text + asked.text)


@pytest.mark.parametrize(
    ("search", "question", "none_there", "elsewhere"),
    [
        ("/shop wireless earbuds under $100", "is the first one in stock at the Shibuya store?",
         "Concierge Shop Shibuya has no {product} in stock.", "Nearby stores that have it:"),
        ("/shop ワイヤレスイヤホン 1万円以下", "渋谷店に1番目の在庫はありますか",
         "Concierge Shop Shibuyaには{product}の在庫がありません。", "在庫のある近くの店舗："),
    ],
)
async def test_the_store_asked_about_is_said_to_have_none_before_the_stores_that_do(
    runtime: ConversationRuntime, store: CatalogStore, search: str, question: str, none_there: str, elsewhere: str
) -> None:
    product = final(await say(runtime, search, user="s1", thread="s")).data["products"][0]
    await sold_out_at(store, product["id"], "tokyo-shibuya")
    answer = final(await say(runtime, question, user="s1", thread="s"))
    lines = answer.text.splitlines()
    assert lines[0].endswith(none_there.format(product=product.get("name_ja") or product["name"])), answer.text
    assert lines[1] == elsewhere
    stores = [line for line in lines if line.startswith("• ")]
    assert stores and not any("Shibuya" in line for line in stores)


async def test_the_store_asked_about_and_its_neighbours_having_none_leaves_shipping(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    product = final(await say(runtime, "/shop wireless earbuds under $100", user="s2", thread="s")).data["products"][0]
    await sold_out_at(store, product["id"], *(s.id for s in await store.stores_in_city("Tokyo")))
    answer = final(await say(runtime, "is the first one in stock at the Ginza store?", user="s2", thread="s"))
    assert answer.text.splitlines()[-3:] == [
        f"I'll use Concierge Shop Ginza as your store. Concierge Shop Ginza has no {product['name']} in stock.",
        "Nor do the other stores near you.", "It can also be shipped."]


async def test_a_coupon_the_cart_cannot_take_is_refused_at_once_in_japanese(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop クーポン SAVE20 を使って", user="j5", thread="c"))
    assert answer.text == "クーポンSAVE20は使えません（カートが空です。クーポンを使う前に商品を入れてください）。", answer.text
    assert "pending" not in answer.data and not answer.cards  # no confirmation for a change that cannot happen
    assert not (await checkpoint(runtime, "c")).get("awaiting")


async def test_a_coupon_on_an_empty_cart_is_refused_without_a_confirmation(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop apply SAVE20"))
    assert answer.text == "I can't apply coupon SAVE20: the cart is empty; add something before applying a coupon."
    assert "pending" not in answer.data and "awaiting_input" not in answer.data and not answer.cards


async def test_a_japanese_pickup_at_a_store_without_stock_is_explained_in_japanese(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    products = await search_ja(runtime, user="j6", thread="p")
    await say(runtime, "店舗は渋谷", user="j6", thread="p")
    await sold_out_at(store, str(products[0]["id"]), "tokyo-shibuya")
    asked = final(await say(runtime, "1番目を店舗受け取りでカートに入れて", user="j6", thread="p"))
    assert asked.text.startswith("Concierge Shop Shibuyaには十分な在庫がないため、在庫のある店舗で受け取ってください。"), asked.text
    assert asked.cards[0].fields["受け取り方法"] == "店舗受け取り"
    assert english_left(asked, str(products[0]["name_ja"])) == [], asked.text



def test_the_add_to_cart_command_of_a_japanese_card_is_a_purchase_of_that_product() -> None:
    from agents.shopping.intents import classify, product_reference
    from agents.shopping.phrasebook import label

    text = label("add_command", "ja", command="", id="fitness-trackers-001").strip()
    assert classify(text).intent == "purchase" and classify(text).confident
    assert product_reference(text).product_id == "fitness-trackers-001"


async def test_running_shoes_in_katakana_are_searched_for(runtime: ConversationRuntime) -> None:
    answer = final(await say(runtime, "/shop ランニングシューズ", thread="k"))
    assert answer.data["products"] and all(p["category"] == "shoes" for p in answer.data["products"])
    assert "件見つかりました" in answer.text
