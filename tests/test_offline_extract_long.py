"""The domain-neutral price and rating rules read a long run of digits, spaces or commas without
trying every shorter number at every position: `/shop 1111…` (3,990 digits) held the event loop
28.8 s, 3,990 spaces between two words 7.5 s, `1,1,1,…` 14.6 s, and every other conversation waited.

As in tests/hotel/test_long_messages.py: each rewritten expression is compared with its old form
on seeded random strings over the pieces that matter to it (the same strings every run), and the
extractors are given runs far past /hotel's and /shop's 4,000 characters. A run of digits is read
once, so it gets 200,000 characters; a run of spaces or of `1,` is still scanned once from each of its positions
(in one tight loop, no longer with every shorter amount tried), so it gets the agents' limit. No
wall time is asserted: a regression fails on the suite's per-test timeout."""

from __future__ import annotations

import random
import re

import pytest

from bot.offline import extract
from bot.offline.extract import extract_min_rating, extract_price_range, japanese_amounts

BIG = 200_000  # fifty times the agents' limit: at the old growth, days
LIMIT = 4_000  # HotelAgent.max_input_chars, ShopAgent.max_input_chars


def old_form(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """The expression as it was: every amount tried from each of its digits, with each shorter
    length, and every run of spaces split every way between the rules around it."""
    old = pattern.pattern
    for new, was in (
        (r"(?<!\d)\d[\d,]*+", r"\d[\d,]*"),
        (r"(?<!\d)(?P<v2>\d++", r"(?P<v2>\d+"),
        (r"(?<!\d)\d++", r"\d+"),
        (r"\d++", r"\d+"),
        (r"\s*+", r"\s*"),
    ):
        old = old.replace(new, was)
    assert old != pattern.pattern
    assert "*+" not in old and "++" not in old
    return re.compile(old, pattern.flags)


PIECES = [
    "1", "2", "12", "100", "0", "5", "10", "１", ",", ",,", ".", ".5", " ", "  ", "\t", "\n", "$", "us$", "€", "¥", "円",
    "万", "千", "三", "二万", "k", "K ", "usd", "eur", "euros", "yen", "ドル", "between ", "from ", "-", " - ", "to", " and ",
    "〜", "~", "or less", "or more", " plus", "以下", "以上", "くらい", "under ", "over ", "about ", "rated ", "rating",
    "score", " review", "stars", "/", "/5", "/ 10", " out of 10", "+", "or higher", "at least ", "評価", "x", "a",
]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))


@pytest.mark.parametrize(
    ("name", "least"), [("_RANGE", 300), ("_BOUND", 1_000), ("_TRAILING_BOUND", 1_000), ("_BARE_MONEY", 2_000), ("_KANJI_NUMBER", 2_000)]
)
def test_prices_are_found_where_the_old_expressions_found_them(name: str, least: int) -> None:
    new = getattr(extract, name)
    old = old_form(new)
    rng = random.Random(name)
    found = 0
    for _ in range(20_000):
        text = random_text(rng)
        expected = [(m.span(), m.groupdict()) for m in old.finditer(text)]
        assert [(m.span(), m.groupdict()) for m in new.finditer(text)] == expected, text
        found += bool(expected)
    assert found > least


def test_ratings_are_found_where_the_old_expression_found_them() -> None:
    old = old_form(extract._RATING)
    rng = random.Random(5)
    found = 0
    for _ in range(30_000):
        text = random_text(rng)
        was = old.search(text)
        now = extract._RATING.search(text)
        assert (now and (now.span(), now.groupdict())) == (was and (was.span(), was.groupdict())), text
        found += was is not None
    assert found > 3_000


def test_the_old_forms_are_the_expressions_that_were_in_the_source() -> None:
    # The forms above, rebuilt from the new patterns, are the ones the extractors used before.
    amount = r"\d[\d,]*(?:\.\d+)?"
    assert amount in old_form(extract._BARE_MONEY).pattern
    assert old_form(extract._KANJI_NUMBER).pattern == r"[〇一二三四五六七八九十百千万]+|\d+(?:\.\d+)?(?:万(?:\d+千)?|千)"
    assert old_form(extract._RANGE).pattern.startswith(r"(?:between|from)?\s*(?:(?P<sym1>")
    assert r"|(?P<v2>\d+(?:\.\d+)?)\s*(?:\+|or\s+(?:more|higher|better))?\s*(?:/\s*(?P<s3>5|10)" in old_form(extract._RATING).pattern


@pytest.mark.parametrize("run", ["1", "1.", "１", "1.5", "12万"])
def test_a_long_run_of_digits_is_read_once(run: str) -> None:
    text = "under " + run * (BIG // len(run)) + " or less, rated " + run * (BIG // len(run))
    extract_price_range(text)
    extract_min_rating(text)
    japanese_amounts(text)


@pytest.mark.parametrize("run", [" ", "\t", "\n", "1,", "1 ", "$1 ", "1万円"])
def test_runs_at_the_agents_limit_are_read(run: str) -> None:
    # What /hotel and /shop take at most: before, each of these took 7–29 s in the event loop.
    text = (run * LIMIT)[: LIMIT - 2] + "$1"
    assert extract_price_range(text) is not None or run != " "
    extract_min_rating(text)
    japanese_amounts(text)


def test_prices_and_ratings_read_as_before() -> None:
    cases = {
        "between 100 and 200": (100, 200), "$1,000-$2,000": (1000, 2000), "under 2万円": (None, 20000),
        "4 stars, 100-200 dollars": (100, 200), "$1.5k to $2k": (1500, 2000), "100以上": (100, None),
    }
    for text, bounds in cases.items():
        found = extract_price_range(text)
        assert (found and (found.min, found.max)) == bounds, text
    assert extract_min_rating("rated 4.5 or more") == extract.MinRating(4.5, None)
    assert extract_min_rating("4/5 rated") == extract.MinRating(4.0, 5.0)
    assert japanese_amounts("1万5千円") == "15000円"
