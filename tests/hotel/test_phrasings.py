"""The offline planner on traveller phrasings: the table in agents/hotel/eval/phrasings.json (each
development case must be read fully right; the held-out part must not fall below the score it had
when the rules were frozen), and the rule tables behind it."""

from __future__ import annotations

from datetime import date

import pytest

from agents.hotel.eval.phrasings import load, run, score
from agents.hotel.extract import extract_nights, extract_stay
from agents.hotel.understand import read_places, split_correction
from bot.offline.extract import extract_price_range, japanese_amounts

TABLE = load()
DEV = [case for case in TABLE["cases"] if case["split"] == "dev"]
HELD_OUT_FROZEN = 22  # of 25, scored once when the rules were frozen (see docs/hotel.md)
TODAY = date(2026, 12, 1)


def test_the_table_has_what_it_promises() -> None:
    cases = TABLE["cases"]
    japanese = [c for c in cases if any("\u3040" <= ch <= "\u9fff" for ch in c["text"])]
    assert len(cases) >= 60 and len(japanese) >= 20
    assert len({c["id"] for c in cases}) == len(cases)
    assert sum(c["split"] == "heldout" for c in cases) >= 20


@pytest.mark.parametrize("case", DEV, ids=[c["id"] for c in DEV])
def test_development_phrasings_are_read_fully_right(case: dict) -> None:
    outcome = score(case, TABLE["today"])
    assert outcome.right, f"{case['text']!r}: made {outcome.made}; {'; '.join(outcome.problems)}"


def test_the_held_out_phrasings_keep_their_frozen_score() -> None:
    outcomes = run("heldout")
    assert sum(o.right for o in outcomes) >= HELD_OUT_FROZEN


def test_a_case_that_is_wrong_is_reported_wrong() -> None:
    case = {"text": "Paris next weekend", "expect": {"tool": "search_hotels", "args": {"city": "Rome"}}}
    outcome = score(case, TABLE["today"])
    assert not outcome.right and outcome.problems == ("city='Paris', expected 'Rome'",)


# --- the rule tables -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "city", "place", "question"),
    [
        ("Lisbon or Porto? Porto please", None, "Porto", None),
        ("Rome or Paris? Paris it is", "Paris", None, None),
        ("Seoul / Tokyo", None, None, ("Seoul", "Tokyo")),
        ("ロンドンかパリ", None, None, ("London", "Paris")),
        ("Paris, no wait, Rome", "Rome", None, None),
        ("anywhere but not Berlin: Vienna", "Vienna", None, None),
        ("Osaka rather than Kyoto", "Osaka", None, None),
        ("ローマはやめてパリ", "Paris", None, None),
        ("near Tokyo Tower", None, None, None),  # a sight's name, not the city
        ("I visited Paris last year, now Berlin please", "Berlin", None, None),
        ("Quiet hotel in Kyoto", "Kyoto", None, None),  # a capitalised word is not a place
    ],
)
def test_places_negations_choices_and_questions(text: str, city: str | None, place: str | None,
                                                question: tuple[str, str] | None) -> None:
    reading = read_places(text)
    assert (reading.city.name if reading.city else None, reading.place, reading.question) == (city, place, question)


def test_a_correction_splits_the_message_at_its_last_marker() -> None:
    assert split_correction("Paris under 200, actually Rome, no wait, Milan") == ("Paris under 200, actually Rome, ", ", Milan")
    assert split_correction("Paris under 200") == ("", "Paris under 200")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1万5千円", "15000円"), ("2.5万円", "25000円"), ("三千円", "3000円"), ("二万五千円", "25000円"),
        ("一泊三人", "一泊三人"), ("十二月", "十二月"),  # kanji numbers not before a currency stay
    ],
)
def test_japanese_amounts_become_digits(text: str, expected: str) -> None:
    assert japanese_amounts(text) == expected


@pytest.mark.parametrize(
    ("text", "low", "high", "currency"),
    [
        ("1泊150ドル以下", None, 150, "USD"), ("100ユーロ未満", None, 100, "EUR"), ("3000バーツまで", None, 3000, "THB"),
        ("10万ウォン以下", None, 100000, "KRW"), ("1万円前後", 8000, 12000, "JPY"), ("2万円くらい", 16000, 24000, "JPY"),
        ("予算1泊200ドル", None, 200, "USD"), ("NT$3000", None, 3000, "TWD"), ("under 90 pesos", None, 90, "MXN"),
        ("£80以上", 80, None, "GBP"),
    ],
)
def test_prices_in_japanese_and_other_currencies(text: str, low: float | None, high: float | None, currency: str) -> None:
    price = extract_price_range(text)
    assert price is not None and (price.min, price.max, price.currency) == (low, high, currency)


def test_currency_names_are_read_only_after_an_amount() -> None:
    price = extract_price_range("150ドル以下")
    assert price is not None and price.currency == "USD"
    assert extract_price_range("元に戻す") is None


@pytest.mark.parametrize(
    ("text", "nights"),
    [("1泊150ドル以下", None), ("2泊3日", 2), ("$180 a night", None), ("120 euros per night", None),
     ("for a night", 1), ("1泊 2万円", None), ("3泊", 3)],
)
def test_one_night_as_a_price_unit_is_not_a_stay_length(text: str, nights: int | None) -> None:
    assert extract_nights(text) == nights


def test_month_slash_day_is_a_date_but_a_score_out_of_ten_is_not() -> None:
    stay = extract_stay("12/30から3泊", TODAY)
    assert stay is not None and (stay.check_in, stay.check_out) == (date(2026, 12, 30), date(2027, 1, 2))
    assert extract_stay("rated 8/10 or better", TODAY) is None
    stay = extract_stay("from 25/12 for 2 nights", TODAY)  # a first number above 12 is the day
    assert stay is not None and stay.check_in == date(2026, 12, 25)
