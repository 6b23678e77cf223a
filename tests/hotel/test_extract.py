"""Tests for the hotel extractors: stays, dates, nights, guests, hotel stars, prices per night."""

from __future__ import annotations

from datetime import date

import pytest

from agents.hotel.extract import (
    Stay,
    extract_dates,
    extract_guests,
    extract_nights,
    extract_price_range,
    extract_stars,
    extract_stay,
)
from bot.offline.extract import PriceRange

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
        ("from the 20th to the 23rd of December", d(12, 20), d(12, 23)),  # was Dec 23 for one night
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
        # Japanese weekdays: 来週の金曜 was next Monday (来週 alone), 金曜 nothing at all
        ("来週の金曜から2泊", d(12, 11), d(12, 13)),
        ("来週金曜", d(12, 11), d(12, 12)),
        ("金曜から2泊", d(12, 4), d(12, 6)),
        ("今週の土曜", d(12, 5), d(12, 6)),
        ("再来週の月曜日", d(12, 14), d(12, 15)),
        # days of the year: searched tomorrow before
        ("Barcelona for New Year's Eve", d(12, 31), d(1, 1, 2027)),
        ("christmas for 3 nights", d(12, 25), d(12, 28)),
        ("new years day", d(1, 1, 2027), d(1, 2, 2027)),
        ("大晦日から2泊", d(12, 31), d(1, 2, 2027)),
        ("元旦", d(1, 1, 2027), d(1, 2, 2027)),
        ("クリスマスイブ", d(12, 24), d(12, 25)),
        # a day named by a word, then a date: the stay between them (was the date alone)
        ("Christmas Eve to Dec 27", d(12, 24), d(12, 27)),
        ("tomorrow until Dec 5", d(12, 2), d(12, 5)),
        ("クリスマスから12月28日まで", d(12, 25), d(12, 28)),
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
        ("Paris under $200 next weekend", PriceRange(None, 200, "USD")),
        ("4 nights under 100", PriceRange(None, 100, None)),
        ("under $600 for the whole stay", PriceRange(None, 600, "USD", "total")),
        ("under 900 for the entire trip", PriceRange(None, 900, None, "total")),
        ("Paris 4 stars 200 max", PriceRange(None, 200, None)),  # was 200 ARS: st|ars
        ("Paris, let me try between 100 and 200", PriceRange(100, 200, None)),  # was TRY: 'try' the verb
        ("Istanbul TRY 3000 max", PriceRange(None, 3000, "TRY")),
    ],
)
def test_price_range_per_night_or_for_the_stay(text: str, expected: PriceRange) -> None:
    assert extract_price_range(text) == expected


@pytest.mark.parametrize(
    "text", ["up to 4 guests", "at least 2 adults", "more than 3 nights", "max 2 rooms", "under 3 kids", "over 2 beds"]
)
def test_hotel_quantities_are_not_prices(text: str) -> None:
    assert extract_price_range(text) is None


# --- guests ----------------------------------------------------------------------------------


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
        ("大人2人 子供1人", 3),  # was 2: the first count alone
        ("子ども2名と大人2名", 4),
        ("子供1人", 2),  # a child travels with an adult, as "1 kid" does
        ("3 nights", None),
        ("Paris next weekend", None),
        ("for 3 nights", None),
    ],
)
def test_guests(text: str, guests: int | None) -> None:
    assert extract_guests(text) == guests


# --- hotel class -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "stars"),
    [("4-star", 4), ("five star hotels", 5), ("4★", 4), ("5つ星", 5), ("3 stars or more", 3),
     ("rated 4+", None), ("7 stars", None)],
)
def test_stars(text: str, stars: int | None) -> None:
    assert extract_stars(text) == stars


