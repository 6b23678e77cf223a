"""The offline model's generic extractors: dates, prices, guests, ratings, ordinals."""

from __future__ import annotations

from datetime import date

import pytest

from bot.offline.extract import (
    MinRating,
    PriceRange,
    Stay,
    extract_count,
    extract_currency,
    extract_dates,
    extract_guests,
    extract_min_rating,
    extract_nights,
    extract_ordinal,
    extract_price_range,
    extract_stars,
    extract_stay,
    parse_number,
)

TUESDAY = date(2026, 12, 1)
SATURDAY = date(2026, 12, 5)


def d(month: int, day: int, year: int = 2026) -> date:
    return date(year, month, day)


# --- dates -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "check_in", "check_out"),
    [
        ("Paris under $200 next weekend", d(12, 11), d(12, 13)),
        ("this weekend", d(12, 4), d(12, 6)),
        ("Dec 12 for 3 nights", d(12, 12), d(12, 15)),
        ("from 2026-12-12 to 2026-12-14", d(12, 12), d(12, 14)),
        ("tomorrow", d(12, 2), d(12, 3)),
        ("tonight", d(12, 1), d(12, 2)),
        ("the day after tomorrow", d(12, 3), d(12, 4)),
        ("in 2 weeks", d(12, 15), d(12, 16)),
        ("in two weeks for 2 nights", d(12, 15), d(12, 17)),
        ("in 3 days", d(12, 4), d(12, 5)),
        ("Dec 12-14", d(12, 12), d(12, 14)),
        ("Dec 12–14", d(12, 12), d(12, 14)),
        ("December 12th to 15th", d(12, 12), d(12, 15)),
        ("12-14 Dec", d(12, 12), d(12, 14)),
        ("12th of December for a week", d(12, 12), d(12, 19)),
        ("Dec 12 to the 15th", d(12, 12), d(12, 15)),
        ("Dec 30 - Jan 2", d(12, 30), d(1, 2, 2027)),
        ("Dec 30 to Jan 2", d(12, 30), d(1, 2, 2027)),
        ("on Friday", d(12, 4), d(12, 5)),
        ("next Friday for 2 nights", d(12, 11), d(12, 13)),
        ("Tokyo next week", d(12, 7), d(12, 8)),
        ("Rome for a week from Dec 20", d(12, 20), d(12, 27)),
        ("3 days in Rome starting tomorrow", d(12, 2), d(12, 4)),
        ("2026/12/24", d(12, 24), d(12, 25)),
        ("12月12日から2泊", d(12, 12), d(12, 14)),
        ("明日から3泊", d(12, 2), d(12, 5)),
        ("来週末", d(12, 11), d(12, 13)),
    ],
)
def test_stay_is_read_relative_to_today(text: str, check_in: date, check_out: date) -> None:
    assert extract_stay(text, TUESDAY) == Stay(check_in, check_out)


def test_month_day_without_year_means_the_next_occurrence() -> None:
    assert extract_stay("Nov 20 for 2 nights", TUESDAY) == Stay(d(11, 20, 2027), d(11, 22, 2027))
    assert extract_dates("March 3 and Dec 24", TUESDAY) == [d(3, 3, 2027), d(12, 24)]


def test_past_dates_with_an_explicit_year_stay_in_the_past() -> None:
    stay = extract_stay("Jan 5, 2020", TUESDAY)
    assert stay == Stay(d(1, 5, 2020), d(1, 6, 2020))
    assert extract_stay("from Jan 5, 2020 to Jan 7", TUESDAY) == Stay(d(1, 5, 2020), d(1, 7, 2020))


def test_check_out_before_check_in_is_returned_as_written() -> None:
    stay = extract_stay("from Dec 14 to Dec 12", TUESDAY)
    assert stay is not None and stay.check_out < stay.check_in
    stay = extract_stay("check in 2026-12-12 check out 2026-12-10", TUESDAY)
    assert stay == Stay(d(12, 12), d(12, 10))
    assert stay.nights == -2


def test_weekend_on_a_saturday() -> None:
    assert extract_stay("this weekend", SATURDAY) == Stay(SATURDAY, d(12, 6))
    assert extract_stay("next weekend", SATURDAY) == Stay(d(12, 11), d(12, 13))


def test_default_nights_applies_to_a_single_date() -> None:
    assert extract_stay("Dec 12", TUESDAY, default_nights=2) == Stay(d(12, 12), d(12, 14))


@pytest.mark.parametrize("text", ["hotel in paris", "cheaper ones?", "the second one", "rated 4+", ""])
def test_no_date_gives_none(text: str) -> None:
    assert extract_stay(text, TUESDAY) is None


def test_invalid_calendar_dates_are_ignored() -> None:
    assert extract_dates("Feb 30", TUESDAY) == []


@pytest.mark.parametrize(
    ("text", "nights"),
    [("for 3 nights", 3), ("2 nights", 2), ("a week", 7), ("for two weeks", 14), ("one night", 1),
     ("3 days", 2), ("2泊", 2), ("overnight", 1), ("in 2 weeks", None), ("Paris", None)],
)
def test_nights(text: str, nights: int | None) -> None:
    assert extract_nights(text) == nights


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
    ],
)
def test_price_range(text: str, expected: PriceRange) -> None:
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
    [("$5", "USD"), ("in euros", "EUR"), ("£", "GBP"), ("5000円", "JPY"), ("CHF 200", "CHF"),
     ("no currency here", None)],
)
def test_currency(text: str, currency: str | None) -> None:
    assert extract_currency(text) == currency


# --- counts and guests -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "guests"),
    [
        ("for 3 people", 3),
        ("3 guests", 3),
        ("two adults", 2),
        ("2 adults and 2 kids", 4),
        ("one adult", 1),
        ("family of 5", 5),
        ("group of six", 6),
        ("for 3 next weekend", 3),
        ("solo", 1),
        ("just me", 1),
        ("for two", 2),
        ("with my wife", 2),
        ("a couple", 2),
        ("3名", 3),
        ("大人2人", 2),
        ("3 nights", None),
        ("Paris next weekend", None),
        ("for 3 nights", None),
    ],
)
def test_guests(text: str, guests: int | None) -> None:
    assert extract_guests(text) == guests


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


@pytest.mark.parametrize(
    ("text", "stars"),
    [("4-star", 4), ("five star hotels", 5), ("4★", 4), ("5つ星", 5), ("3 stars or more", 3),
     ("rated 4+", None), ("7 stars", None)],
)
def test_stars(text: str, stars: int | None) -> None:
    assert extract_stars(text) == stars


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
