"""Tests for the domain-neutral extractors: numbers, counts, prices, currencies, ratings, ordinals."""

from __future__ import annotations

import pytest

from bot.offline.extract import (
    MinRating,
    PriceRange,
    extract_count,
    extract_min_rating,
    extract_ordinal,
    extract_price_range,
    only_thanks,
    parse_number,
)

# --- prices ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("under $200", PriceRange(None, 200, "USD")),
        ("Paris under $200 next weekend", PriceRange(None, 200, "USD")),
        ("below 150 euros", PriceRange(None, 150, "EUR")),
        ("between 100 and 200", PriceRange(100, 200, None)),
        ("between €100 and €200 a night", PriceRange(100, 200, "EUR")),
        ("$100-$200", PriceRange(100, 200, "USD")),
        ("EUR 120 to 180", PriceRange(120, 180, "EUR")),
        ("over 80 dollars", PriceRange(80, None, "USD")),
        ("at least £90", PriceRange(90, None, "GBP")),
        ("from $90", PriceRange(90, None, "USD")),
        ("max 250 EUR", PriceRange(None, 250, "EUR")),
        ("150€ max", PriceRange(None, 150, "EUR")),
        ("¥20,000 or less", PriceRange(None, 20000, "JPY")),
        ("2万円以下", PriceRange(None, 20000, "JPY")),
        ("less than 1.5k", PriceRange(None, 1500, None)),
        ("around $150", PriceRange(120, 180, "USD")),
        ("$200", PriceRange(None, 200, "USD")),
        ("Paris under 200 next weekend", PriceRange(None, 200, None)),
        ("4 nights under 100", PriceRange(None, 100, None)),
        ("cheaper than £90 per night", PriceRange(None, 90, "GBP")),
        ("under $600 total", PriceRange(None, 600, "USD", "total")),
        # A currency code is a word of its own, not the end of one (st|ars, c|ars).
        ("4 stars 200 max", PriceRange(None, 200, None)),
        ("3 stars 100-200", None),  # a bare range without a currency is no price
        ("cars between 100 and 200", PriceRange(100, 200, None)),
        ("ARS 100 to 200", PriceRange(100, 200, "ARS")),
        ("5 stars, usd 300 max", PriceRange(None, 300, "USD")),
    ],
)
def test_price_range(text: str, expected: PriceRange | None) -> None:
    assert extract_price_range(text) == expected


@pytest.mark.parametrize(
    "text",
    ["for 3 people", "Dec 12-14", "under 3 stars", "rated 4+", "2 adults and 2 kids", "3 nights",
     "from 12 to 14", "within 2 km of the Louvre", "next weekend", "the 2nd one"],
)
def test_numbers_that_are_not_prices(text: str) -> None:
    assert extract_price_range(text) is None


@pytest.mark.parametrize(
    ("text", "currency"),
    [("under $5", "USD"), ("below 150 euros", "EUR"), ("£40 max", "GBP"), ("5000円以下", "JPY"),
     ("CHF 200", "CHF"), ("under 200", None)],
)
def test_currency(text: str, currency: str | None) -> None:
    price = extract_price_range(text)
    assert price is not None and price.currency == currency


@pytest.mark.parametrize(
    "text",
    ["let me try 100 to 200", "try 150 max", "I won 50 in a raffle, under nothing", "mad 200 at the price",
     "Rand 300 tops", "dong 100 or less"],
)
def test_english_words_before_an_amount_are_no_currency(text: str) -> None:
    """'try', 'won', 'mad', 'rand' and 'dong' are currencies only as a code in capitals before an
    amount: 'let me try 100 to 200' read as Turkish lira found no hotel at all."""
    price = extract_price_range(text)
    assert price is None or price.currency is None


@pytest.mark.parametrize(
    ("text", "currency"),
    [("TRY 500 max", "TRY"), ("under 200,000 won", "KRW"), ("500 rand or less", "ZAR"), ("under MAD 900", "MAD"),
     ("below 2,000,000 dong", "VND"), ("under 3000 try", "TRY"), ("WON 90000 max", "KRW")],
)
def test_those_words_still_name_a_currency_as_a_code_or_after_the_amount(text: str, currency: str) -> None:
    price = extract_price_range(text)
    assert price is not None and price.currency == currency


def test_callers_add_their_own_quantity_units() -> None:
    assert extract_price_range("at least 2 items") == PriceRange(2, None, None)
    assert extract_price_range("at least 2 items", quantity_units=["item"]) is None
    assert extract_price_range("at least $2 items", quantity_units=["item"]) == PriceRange(2, None, "USD")


def test_callers_name_what_a_whole_total_covers() -> None:
    assert extract_price_range("under $50 for the whole order") == PriceRange(None, 50, "USD")
    assert extract_price_range("under $50 for the whole order", whole=["order"]) == PriceRange(None, 50, "USD", "total")
    assert extract_price_range("under $50 in total") == PriceRange(None, 50, "USD", "total")


# --- numbers and counts ----------------------------------------------------------------------


def test_count_is_generic() -> None:
    assert extract_count("I need 3 large rooms", ["rooms"]) == 3
    assert extract_count("five items please", ["items"]) == 5
    assert extract_count("rooms", ["rooms"]) is None


@pytest.mark.parametrize(("word", "value"), [("3", 3), ("three", 3), ("a", 1), ("三", 3), ("dozen", None)])
def test_parse_number(word: str, value: int | None) -> None:
    assert parse_number(word) == value


# --- ratings and stars -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rating"),
    [
        ("rated 4+", MinRating(4.0)),
        ("rating above 8.5", MinRating(8.5)),
        ("8+ rating", MinRating(8.0)),
        ("at least 9/10", MinRating(9.0, 10.0)),
        ("4.5/5 or better", MinRating(4.5, 5.0)),
        ("reviews of 4 or more", MinRating(4.0)),
        ("評価4以上", MinRating(4.0)),
        ("4+ customer rating", MinRating(4.0)),
        ("Dec 12", None),
        ("under $200", None),
        ("rated 42", None),
    ],
)
def test_min_rating(text: str, rating: MinRating | None) -> None:
    assert extract_min_rating(text) == rating


def test_rating_scale_conversion() -> None:
    assert MinRating(4.0).on_scale(10) == 8.0
    assert MinRating(8.5).on_scale(10) == 8.5
    assert MinRating(9.0, 10.0).on_scale(5) == 4.5


# --- ordinals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ordinal"),
    [
        ("tell me more about the second one", 2),
        ("the first", 1),
        ("3rd", 3),
        ("#3", 3),
        ("option 2", 2),
        ("the last one", -1),
        ("2番目", 2),
        ("二つ目", 2),
        ("first night", None),
        ("cheaper ones?", None),
    ],
)
def test_ordinal(text: str, ordinal: int | None) -> None:
    assert extract_ordinal(text) == ordinal


def test_a_bare_range_is_a_price_only_where_the_caller_says_so() -> None:
    """A hotel's "12-14" is more often days; a shop's "50 to 100" is dollars."""
    assert extract_price_range("headphones 50 to 100") is None
    assert extract_price_range("headphones 50 to 100", bare_ranges=True) == PriceRange(50, 100, None)
    assert extract_price_range("size 8-10", bare_ranges=True) is None
    assert extract_price_range("for 2-3 people", bare_ranges=True) is None
    assert extract_price_range("for $50-$100", bare_ranges=True) == PriceRange(50, 100, "USD")


def test_every_position_a_text_points_at() -> None:
    from bot.offline.extract import extract_ordinals

    assert extract_ordinals("the difference between the first and the second") == [1, 2]
    assert extract_ordinals("compare #3 with the last and #3 again") == [3, -1]
    assert extract_ordinals("1番目と3番目") == [1, 3] and extract_ordinals("no position") == []


@pytest.mark.parametrize(
    ("text", "thanks"),
    [("thanks!", True), ("ok, thank you so much", True), ("Thank you again.", True), ("ありがとうございます！", True),
     ("了解、ありがとう", True), ("thanks, now cheaper ones?", False), ("no thanks", False), ("thanks for nothing, find Paris", False),
     ("ありがとう、京都も探して", False), ("", False)],
)
def test_a_message_that_only_thanks(text: str, thanks: bool) -> None:
    assert only_thanks(text) is thanks
