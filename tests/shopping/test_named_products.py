"""Products named the way shoppers name them ("the Soundforge Voyage Mini", "the Aria 4", 「Voyage
MiniとAria 4」) and places the shop has no store in: the rules on the whole demo catalog, then /shop
end to end on the offline model."""

from __future__ import annotations

import pytest

from agents.shopping.catalog import CatalogStore
from agents.shopping.demo import demo_catalog
from agents.shopping.intents import (
    asked_feature,
    classify,
    compared_parts,
    extract_coupon_code,
    has_feature,
    named_products,
    place_named,
    ranked,
    review_topic,
    search_filters,
    spec_rank,
)
from agents.shopping.models import Product
from bot.agent import TurnInput
from bot.events import Final
from bot.runtime import ConversationRuntime
from tests.shopping.conftest import collect, key

CATALOG = demo_catalog().products


def by_id(product_id: str) -> Product:
    return next(p for p in CATALOG if p.id == product_id)


def model_words(product: Product) -> str:
    """What comes between the brand and the generic words ('Voyage Mini' of 'Soundforge Voyage Mini
    Wireless Headphones'): the Latin part of the Japanese name, less the brand."""
    core = " ".join(w for w in product.name_ja.split(" ") if w.isascii())
    return core[len(product.brand) + 1 :]


def test_every_product_is_named_by_its_brand_and_model() -> None:
    missed = [p.id for p in CATALOG
              if [n.id for n in named_products(f"reviews of the {p.brand} {model_words(p)}?", CATALOG)] != [p.id]]
    assert len(CATALOG) > 300 and missed == []


def test_a_model_name_alone_names_its_product_or_every_product_it_could_be() -> None:
    """Two words or more ("Voyage Mini", "Cube 3"); one ("Studio") needs the brand."""
    for product in CATALOG:
        model = model_words(product)
        named = {p.id for p in named_products(f"what about the {model}", CATALOG)}
        if " " not in model:
            assert named == set(), (product.name, named)
            continue
        could_be = {p.id for p in CATALOG if f"{model_words(p)} ".startswith(f"{model} ")}
        assert product.id in named and named <= could_be, (product.name, named)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("specs of the Soundforge Voyage Mini Wireless Headphones", ["headphones-009"]),  # the full name
        ("Soundforge Voyage Mini のレビュー", ["headphones-009"]),
        ("is the voyage mini any good", ["headphones-009"]),  # any case
        ("the Kumo Audio Flow Plus", ["earbuds-013"]),  # the brand said: not Soundforge's Flow Plus
        ("the Flow Plus", ["earbuds-013", "earbuds-015"]),  # two brands make one
        ("the Voyage", []),  # one word past no brand: every Voyage
        ("anything by Kumo Audio", []),  # a brand is no product
        ("the Voyage Minis", []),  # inside a longer word
        ("reviews of wireless headphones", []),
    ],
)
def test_names(text: str, expected: list[str]) -> None:
    assert [p.id for p in named_products(text, CATALOG)] == expected
    assert by_id("earbuds-013").brand == "Kumo Audio" and by_id("earbuds-015").brand == "Soundforge"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("compare the Voyage Mini and the Aria 4", ["compare the Voyage Mini", "the Aria 4"]),
        ("Voyage Mini vs. Aria 4", ["Voyage Mini", "Aria 4"]),
        ("Voyage MiniとAria 4を比較して", ["Voyage Mini", "Aria 4を比較して"]),
        ("compare earbuds-001 with the second one", ["compare earbuds-001", "the second one"]),
    ],
)
def test_a_comparison_is_cut_between_its_products(text: str, parts: list[str]) -> None:
    assert compared_parts(text) == parts


def test_a_long_comparison_is_looked_up_five_parts_at_most() -> None:
    assert compared_parts("compare " + "the Aria 4 and " * 1000) == ["compare the Aria 4"] + ["the Aria 4"] * 4


@pytest.mark.parametrize(
    ("text", "place"),
    [("is it in stock in Austin?", "Austin"), ("stock near Salt Lake City", "Salt Lake City"),
     ("in stock in NYC", "New York"), ("渋谷の店に在庫ある？", "Tokyo"), ("is it in stock near me?", None),
     ("is it in stock", None)],
)
def test_places(text: str, place: str | None) -> None:
    assert place_named(text) == place


async def ask(runtime: ConversationRuntime, text: str, *, thread: str = "named", user: str = "u1") -> Final:
    events = await collect(runtime.handle(key(thread), TurnInput.typed(text, user_id=user)))
    assert isinstance(events[-1], Final), events[-1]
    return events[-1]


async def test_a_product_named_after_a_list_was_shown_is_the_one_asked_about(runtime: ConversationRuntime) -> None:
    """It was "Which one do you mean?" over the earbuds just listed, none of them the one named."""
    shown = (await ask(runtime, "/shop wireless earbuds under $80")).data["products"]
    assert "headphones-009" not in {p["id"] for p in shown}
    answer = await ask(runtime, "what do reviews say about noise cancelling on the Soundforge Voyage Mini?")
    assert {r["product_id"] for r in answer.data["reviews"]} == {"headphones-009"}
    assert answer.text.startswith("Soundforge Voyage Mini Wireless Headphones is rated")


async def test_a_model_two_brands_share_is_asked_about_by_name_and_id(runtime: ConversationRuntime) -> None:
    answer = await ask(runtime, "/shop specs of the Flow Plus")
    assert answer.text == ("Which one do you mean? Kumo Audio Flow Plus Wireless Earbuds (earbuds-013), "
                           "Soundforge Flow Plus Wireless Earbuds (earbuds-015)")
    assert "products" not in answer.data
    specs = await ask(runtime, "specs of the Kumo Audio Flow Plus then")
    assert specs.data["products"][0]["id"] == "earbuds-013" and "Specs:" in specs.text


@pytest.mark.parametrize(
    ("text", "thread"),
    [("/shop compare the Voyage Mini and the Aria 4", "en"), ("/shop Voyage MiniとAria 4を比較して", "ja")],
)
async def test_products_compared_by_name(runtime: ConversationRuntime, text: str, thread: str) -> None:
    """It was "Comparing needs at least two products; search first or name them."."""
    answer = await ask(runtime, text, thread=thread)
    assert [p["id"] for p in answer.data["products"]] == ["headphones-009", "earbuds-002"]
    assert by_id("earbuds-002").name == "Auralis Aria 4 Wireless Earbuds"


async def test_a_place_without_a_store_is_named_and_not_saved(runtime: ConversationRuntime, store: CatalogStore) -> None:
    """It was "Sorry — The shopper's location is unknown. Ask which city they are in." (what the
    model reads), though the shopper had said where."""
    answer = await ask(runtime, "/shop is headphones-009 in stock near me in Austin?", user="traveller")
    assert answer.text == ("Sorry — There are no stores in Austin. Stores are in: London, New York, Osaka, "
                           "San Francisco, Tokyo.")
    assert (await store.get_prefs("traveller")).city is None


async def test_a_stock_question_with_no_city_asks_the_shopper_not_the_model(runtime: ConversationRuntime) -> None:
    answer = await ask(runtime, "/shop is headphones-009 in stock near me?", user="nowhere")
    assert "Which city are you in?" in answer.text and "Ask which city" not in answer.text


# --- the product first on a spec ("which is the lightest?") ---------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "most"),
    [("which has the most RAM?", "ram_gb", True), ("which one is the lightest?", "weight_g", False),
     ("the one with the longest battery life", "battery_hours", True), ("一番軽いのは？", "weight_g", False),
     ("画面が一番大きいのは？", "screen_in", True), ("the heaviest one", "weight_g", True),
     ("which is quietest", "noise_db_min", False), ("the most powerful vacuum", "watts", True)],
)
def test_spec_superlatives(text: str, key: str, most: bool) -> None:
    rank = spec_rank(text)
    assert rank is not None and rank.keys[0][0] == key and rank.most is most


@pytest.mark.parametrize("text", ["the cheapest one", "a light laptop", "most popular earbuds", "最も安いのは？"])
def test_no_spec_superlative(text: str) -> None:
    assert spec_rank(text) is None


def test_weights_in_grams_and_kilograms_rank_together() -> None:
    rank = spec_rank("the lightest")
    assert rank is not None
    tent = next(p for p in CATALOG if "weight_kg" in p.specs and p.subcategory == "tents")
    stove = next(p for p in CATALOG if "weight_g" in p.specs and p.subcategory == "camping stoves")
    first, second = ranked(rank, [tent, stove])
    assert (first[0].id, second[0].id) == (stove.id, tent.id)
    assert second[2] == pytest.approx(float(tent.specs["weight_kg"]) * 1000)


async def test_the_lightest_of_the_products_shown_is_the_one_asked_about(
    runtime: ConversationRuntime, store: CatalogStore
) -> None:
    """It was the shop's help text: "which one is the lightest?" read as nothing at all."""
    shown = (await ask(runtime, "/shop a laptop under $1200", thread="light")).data["products"]
    weights = {p.id: float(p.specs["weight_kg"]) for p in await store.get_products([p["id"] for p in shown])}
    lightest = min(weights, key=weights.__getitem__)
    assert sorted(weights.values())[0] < sorted(weights.values())[1]  # no tie in this list

    answer = await ask(runtime, "which one is the lightest?", thread="light")

    assert answer.data["products"][0]["id"] == lightest
    name = by_id(lightest).name
    assert answer.text.startswith(f"Of the {len(shown)} shown, {name} has the least: Weight (kg) {weights[lightest]:g}.")
    japanese = await ask(runtime, "一番重いのは？", thread="light")
    heaviest = max(weights, key=weights.__getitem__)
    assert japanese.data["products"][0]["id"] == heaviest and "重さ（kg）が最大なのは" in japanese.text


async def test_a_tie_or_a_spec_none_of_them_lists_is_asked_about(runtime: ConversationRuntime, store: CatalogStore) -> None:
    shown = (await ask(runtime, "/shop a laptop under $1200", thread="tie")).data["products"]
    ram = sorted(((float(p.specs["ram_gb"]), p.name) for p in await store.get_products([p["id"] for p in shown])),
                 reverse=True)
    assert ram[0][0] == ram[1][0] > ram[2][0]  # two of them have the most
    answer = await ask(runtime, "which has the most RAM?", thread="tie")
    assert answer.text.endswith(" tie on that; which one do you mean?") and "products" not in answer.data
    assert ram[0][1] in answer.text and ram[1][1] in answer.text and ram[2][1] not in answer.text
    brightest = await ask(runtime, "which is the brightest?", thread="tie")
    assert brightest.text == f"None of the {len(shown)} products shown lists that."


async def test_a_superlative_with_nothing_shown_asks_which_product(runtime: ConversationRuntime) -> None:
    answer = await ask(runtime, "/shop which one is the lightest?", thread="empty")
    assert answer.text.startswith("Which product do you mean?")


# --- a search ordered as asked ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sort"),
    [("cheapest bluetooth speaker", "price"), ("a cheap tent", "price"), ("安いワイヤレスイヤホン", "price"),
     ("best rated tent", "rating"), ("top-rated earbuds under $50", "rating"), ("評価が高いテント", "rating"),
     ("wireless earbuds under $100", None), ("cheaper than $50", None)],
)
def test_a_search_is_ordered_as_asked(text: str, sort: str | None) -> None:
    assert search_filters(text, "USD").get("sort") == sort


async def test_the_cheapest_speakers_come_cheapest_first(runtime: ConversationRuntime) -> None:
    """It listed them by relevance: $26.99, $109.99, $209.99…"""
    answer = await ask(runtime, "/shop cheapest bluetooth speaker", thread="cheap")
    prices = [p["price"] for p in answer.data["products"]]
    assert len(prices) == 5 and prices == sorted(prices)
    assert answer.text.startswith("Here are 5 products that match, cheapest first:")
    rated = await ask(runtime, "/shop best rated tent", thread="rated")
    ratings = [p["rating"] for p in rated.data["products"]]
    assert ratings == sorted(ratings, reverse=True) and "best rated first" in rated.text


@pytest.mark.parametrize(
    "text", ["what colors does the first one come in?", "what sizes?", "does it come in size 10?", "2番目の色は？", "サイズ展開は？"]
)
def test_questions_about_colours_and_sizes_are_about_the_product(text: str) -> None:
    """They were the help text: no intent at all."""
    assert classify(text).intent == "specs"


async def test_the_sizes_of_a_product_shown_are_its_variants(runtime: ConversationRuntime) -> None:
    await ask(runtime, "/shop running shoes under $120", thread="sizes")
    answer = await ask(runtime, "what sizes does the first one come in?", thread="sizes")
    assert "Variants: US 6 (24 cm)" in answer.text


# --- a bare range is a budget in a shop ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bounds"),
    [("headphones 50 to 100", (50, 100)), ("laptop 500-800", (500, 800)), ("earbuds for $50 to $100", (50, 100)),
     ("running shoes size 8-10", None), ("kids 6-8 shoes", None), ("laptop 8-16 GB", None),
     ("tent for 2-3 people", None), ("backpack 20-30 L", None), ("coffee maker 4-6 cups", None),
     ("socks 3-6 pack", None), ("earbuds 2-3 hours", None)],
)
def test_a_range_without_a_currency_is_a_budget_unless_it_counts_or_measures(
    text: str, bounds: tuple[float, float] | None
) -> None:
    """'headphones 50 to 100' listed a $429.99 pair: a range needed a currency or 'between'."""
    filters = search_filters(text, "USD")
    assert ((filters["min_price"], filters["max_price"]) if "max_price" in filters else None) == bounds


async def test_headphones_50_to_100_are_all_in_that_range(runtime: ConversationRuntime) -> None:
    answer = await ask(runtime, "/shop headphones 50 to 100", thread="bare")
    assert answer.data["products"] and all(50 <= p["price"] <= 100 for p in answer.data["products"])


async def test_one_product_to_compare_with_nothing_shown_asks_for_another_by_name(runtime: ConversationRuntime) -> None:
    """It asked for a position in a list of none: "(1–1)"."""
    answer = await ask(runtime, "/shop compare the Aria 4 with the Aria 4", thread="one")
    assert answer.text == "Which product should I compare it with? Name it, or search first."


def test_only_values_of_one_measure_are_ranked_together() -> None:
    """A phone's 4,400 mAh is no longer battery life than a laptop's 8 hours."""
    rank = spec_rank("the longest battery life")
    assert rank is not None
    phone = next(p for p in CATALOG if "battery_mah" in p.specs)
    laptops = [p for p in CATALOG if "battery_hours" in p.specs and p.subcategory == "laptops"][:2]
    assert [found[0].id for found in ranked(rank, [phone, *laptops])] == [
        p.id for p in sorted(laptops, key=lambda p: -float(p.specs["battery_hours"]))]
    assert [found[0].id for found in ranked(rank, [phone])] == [phone.id]


@pytest.mark.parametrize(("text", "code"), [("クーポンAUDIO15を使って", "AUDIO15"), ("AUDIO15を適用して", "AUDIO15"),
                                           ("apply AUDIO15", "AUDIO15"), ("クーポンを使って", None)])
def test_a_coupon_code_written_against_japanese_is_read(text: str, code: str | None) -> None:
    """「クーポンAUDIO15を使って」 was asked which coupon: no word boundary between ン and A."""
    assert extract_coupon_code(text) == code


@pytest.mark.parametrize("text", ["/shop 渋谷で在庫のあるワイヤレスイヤホン", "/shop wireless earbuds in stock in Tokyo"])
async def test_a_kind_of_product_in_stock_somewhere_is_a_search(runtime: ConversationRuntime, text: str) -> None:
    """It was "Which product do you mean? Search first": a stock question with no product."""
    answer = await ask(runtime, text, thread="kind")
    assert answer.data["products"] and all(p["category"] == "audio" and "stock" in p for p in answer.data["products"])
    stock = await ask(runtime, "is the first one in stock in Tokyo?", thread="kind")
    assert "in stock" in stock.text and stock.text.startswith(answer.data["products"][0]["name"])


# --- which of the products shown have a quality -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "feature"),
    [("which one is waterproof?", "waterproof"), ("do any of them have built-in GPS?", "built-in GPS"),
     ("which ones have noise cancelling?", "active noise cancelling"), ("防水なのはどれ？", "waterproof"),
     ("is it waterproof?", None), ("waterproof running shoes", None)],
)
def test_a_question_over_the_list_about_a_quality(text: str, feature: str | None) -> None:
    found = asked_feature(text)
    assert (found.name if found else None) == feature


def test_waterproof_is_an_immersion_rating_and_splashes_are_only_water_resistance() -> None:
    waterproof, resistant = asked_feature("which is waterproof"), asked_feature("which is water resistant")
    assert waterproof is not None and resistant is not None
    splash = next(p for p in CATALOG if p.specs.get("water_resistance") == "IPX4")
    swim = next(p for p in CATALOG if p.specs.get("water_resistance") == "5 ATM")
    assert (has_feature(waterproof, splash.specs), has_feature(waterproof, swim.specs)) == (False, True)
    assert has_feature(resistant, splash.specs) is True
    dry = next(p for p in CATALOG if not ({"water_resistance", "waterproof"} & set(p.specs)))
    assert has_feature(waterproof, dry.specs) is None


async def test_which_of_the_products_shown_are_foldable(runtime: ConversationRuntime, store: CatalogStore) -> None:
    """"which are foldable?" got the help text."""
    shown = (await ask(runtime, "/shop noise cancelling headphones under 300", thread="fold")).data["products"]
    products = {p.id: p for p in await store.get_products([p["id"] for p in shown])}
    foldable = [f"{i + 1}. {p['name']}" for i, p in enumerate(shown) if products[p["id"]].specs.get("foldable") == "yes"]
    assert foldable  # the list has some, and some not
    answer = await ask(runtime, "which are foldable?", thread="fold")
    assert answer.text == f"Foldable: {len(foldable)} of the {len(shown)} shown — {'; '.join(foldable)}."
    again = await ask(runtime, "tell me more about the first one", thread="fold")
    assert again.data["products"][0]["id"] == shown[0]["id"]  # the list is still the one they point into


@pytest.mark.parametrize("text", ["how is the battery on the second one?", "how much is the third one?"])
def test_how_questions_about_a_product_shown_are_about_its_details(text: str) -> None:
    """They got the help text."""
    assert classify(text).intent == "specs"


async def test_a_question_naming_a_kind_of_product_searches_instead(runtime: ConversationRuntime) -> None:
    await ask(runtime, "/shop noise cancelling headphones under 300", thread="kind2")
    answer = await ask(runtime, "which waterproof speakers do you have?", thread="kind2")
    assert answer.data["products"] and {p["category"] for p in answer.data["products"]} == {"audio"}
    assert not answer.text.startswith("Waterproof:")


@pytest.mark.parametrize(("text", "topic"), [("電池持ちはどう？", "電池持ち"), ("音質はどうですか？", "音質"), ("装着感は？", "装着感")])
def test_japanese_how_is_it_questions_ask_the_reviews(text: str, topic: str) -> None:
    """「電池持ちはどう？」 got the help text."""
    assert classify(text).intent == "reviews" and review_topic(text) == topic


async def test_a_city_alone_after_a_product_asks_its_stock_there(runtime: ConversationRuntime) -> None:
    """「大阪で」 after "where are you?" saved the city and answered with the help text."""
    await ask(runtime, "/shop 1万円以下のワイヤレスイヤホン", thread="city", user="walker")
    await ask(runtime, "1番目の詳細", thread="city", user="walker")
    asked = await ask(runtime, "在庫はある？", thread="city", user="walker")
    assert "どの都市" in asked.text
    osaka = await ask(runtime, "大阪で", thread="city", user="walker")
    assert "在庫" in osaka.text and "Shinsaibashi" in osaka.text
    london = await ask(runtime, "what about London?", thread="city", user="walker")
    assert "in stock" in london.text and "Covent Garden" in london.text


def test_a_long_run_of_spaces_is_cut_once() -> None:
    """A separator pattern that opened with `\\s*` read 4,000 spaces again from each space (1.8 s)."""
    parts = compared_parts("compare the Aria 4" + " " * 20_000 + "vs the Flow Plus" + " " * 20_000)  # 46 s before
    assert parts == ["compare the Aria 4", "the Flow Plus"]
