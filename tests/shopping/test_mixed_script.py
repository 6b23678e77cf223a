"""Ids, codes and English words written against Japanese (「earbuds-001を2個カートに追加」,
「ANCのあるのはどれ？」): Python's `\\b` sees no edge between ン and A, so the shop's rules missed
them. The rules now compile with `bot.locale.rule`; the old answers are in each docstring."""

from __future__ import annotations

import pytest

from agents.shopping.demo import demo_catalog
from agents.shopping.intents import asked_feature, classify, compared_parts, product_reference
from agents.shopping.tools import named_store
from bot.agent import TurnInput
from bot.events import Final
from bot.runtime import ConversationRuntime
from tests.shopping.conftest import collect, key


@pytest.mark.parametrize(
    ("text", "product_id"),
    [("earbuds-001のレビュー", "earbuds-001"), ("SKU1234の在庫は？", "SKU1234"), ("earbuds-001を2個カートに追加", "earbuds-001"),
     ("型番earbuds-001です", "earbuds-001"), ("earbuds-001x", None), ("earbuds-0012345", None), ("クーポンAUDIO15を", None)],
)
def test_an_id_against_japanese_is_read(text: str, product_id: str | None) -> None:
    assert product_reference(text).product_id == product_id


@pytest.mark.parametrize(
    ("text", "intent"),
    [("3番目のspecs", "specs"), ("specを教えて", "specs"), ("reviewを見せて", "reviews"), ("earbuds-001のレビュー", "reviews"),
     ("2番目をcartに入れて", "purchase"), ("cartの中身は？", "cart"), ("AUDIO15を適用", "apply_coupon"),
     ("SAVE10を使いたい", "apply_coupon"), ("HDMIを使って", "other")],
)
def test_an_english_word_against_japanese_is_read(text: str, intent: str) -> None:
    """「3番目のspecs」, 「specを教えて」, 「2番目をcartに入れて」, 「cartの中身は？」 and 「AUDIO15を適用」 were
    "other" (the help text); 「reviewを見せて」 a search. A code is a word of capitals ending in a digit."""
    assert classify(text).intent == intent


@pytest.mark.parametrize(
    ("text", "feature"),
    [("ANCのあるのはどれ？", "active noise cancelling"), ("multipoint対応はどれ", "multipoint"),
     ("NFC付きはどれ？", "payments"), ("GPS付きはどれ？", "built-in GPS")],
)
def test_a_feature_written_in_latin_letters_is_read(text: str, feature: str) -> None:
    found = asked_feature(text)
    assert found is not None and found.name == feature


@pytest.mark.parametrize(
    ("text", "store"),
    [("tokyo-shibuyaで受け取り", "tokyo-shibuya"), ("受け取りはtokyo-ginza店で", "tokyo-ginza"),
     ("at Shinjukuで受け取り", "tokyo-shinjuku"), ("tokyo-shibuyax", None)],
)
def test_a_store_id_against_japanese_is_read(text: str, store: str | None) -> None:
    """「tokyo-shibuyaで受け取り」 named no store."""
    picked = named_store(demo_catalog().stores, text)
    assert (picked.id if picked else None) == store


def test_ids_compared_with_to_are_each_read() -> None:
    parts = compared_parts("earbuds-001とearbuds-002を比較")
    assert [product_reference(p).product_id for p in parts] == ["earbuds-001", "earbuds-002"]


async def ask(runtime: ConversationRuntime, text: str, thread: str) -> Final:
    events = await collect(runtime.handle(key(thread), TurnInput.typed(text, user_id="u1")))
    assert isinstance(events[-1], Final), events[-1]
    return events[-1]


async def test_a_cart_change_by_id_against_japanese(runtime: ConversationRuntime) -> None:
    """It was 「どの商品のことですか？ まず商品を探してください。」."""
    answer = await ask(runtime, "/shop earbuds-001を2個カートに追加", "cart")
    assert answer.data["pending"] == {"action": "add", "product_id": "earbuds-001", "quantity": 2}


async def test_two_ids_compared_against_japanese(runtime: ConversationRuntime) -> None:
    """It was 「すみません、比較には2つ以上の商品が必要です。」."""
    answer = await ask(runtime, "/shop earbuds-001とearbuds-002を比較", "compare")
    assert [p["id"] for p in answer.data["products"]] == ["earbuds-001", "earbuds-002"]


async def test_a_feature_in_latin_letters_over_the_list(runtime: ConversationRuntime) -> None:
    """「ANCのあるのはどれ？」 after a list was the help text."""
    shown = (await ask(runtime, "/shop ワイヤレスイヤホン", "feature")).data["products"]
    answer = await ask(runtime, "ANCのあるのはどれ？", "feature")
    assert answer.text.startswith(f"ノイズキャンセリング: 表示した{len(shown)}件のうち")
    specs = await ask(runtime, "3番目のspecs", "feature")
    assert specs.data["products"][0]["id"] == shown[2]["id"] and "仕様:" in specs.text
