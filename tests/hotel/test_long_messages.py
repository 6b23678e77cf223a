"""A /hotel message may be up to the runtime's input limit (100 KB) and is read by the offline
planner in the event loop, so every reading of it must be linear: a run of 20,000 digits held the
loop (and every other conversation) for 7.8 s, and a message naming a place 3,400 times for 1.9 s.

As in tests/proofread/test_linear_rules.py: each rewritten expression or lookup is compared with
the old one on seeded random strings, and each is given input ten times the limit, where the old
forms would run for hours (a regression fails on the suite's per-test timeout). No wall time is
asserted."""

from __future__ import annotations

import random
import re
from datetime import date

import pytest

from agents.hotel import extract, understand
from agents.hotel.extract import extract_guests, extract_nights, extract_stay
from agents.hotel.understand import Mention, mentions, read_places

BIG = 1_000_000
TODAY = date(2026, 12, 1)


def _old_form(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """The expression as it was: a number before 泊, 日後 or 人 tried from each of its digits."""
    old = pattern.pattern.replace(r"(?<!\d)\d++|", r"\d+|")
    assert old != pattern.pattern
    return re.compile(old, pattern.flags)


NUMBER_PIECES = ["1", "2", "12", "１", "一", "三", " ", "  ", "泊", "日", "後", "週間", "人", "名", "大人", "night", "nights",
                 "days", "week", "in", "for", "family of", "ago", "later", "from now", "-", ",", "x", "a", "日後", "週間後",
                 "か月後", " days from now", "in 3 days", " "]


@pytest.mark.parametrize("name", ["_NIGHTS", "_IN_N", "_GROUP"])
def test_numbers_before_a_japanese_counter_are_found_where_they_were(name: str):
    new = getattr(extract, name)
    old = _old_form(new)
    rng = random.Random(name)
    found = 0
    for _ in range(30_000):
        sample = "".join(rng.choice(NUMBER_PIECES) for _ in range(rng.randint(0, 14)))
        expected = [m.groupdict() | {"span": m.span()} for m in old.finditer(sample)]
        assert [m.groupdict() | {"span": m.span()} for m in new.finditer(sample)] == expected, sample
        found += bool(expected)
    assert found > 300


def test_a_long_run_of_digits_is_read_once():
    digits = "1" * BIG
    assert extract_nights(digits) is None
    assert extract_nights(digits + " 3泊") == 3
    assert extract_nights(digits + "泊") is None  # no count of nights has a million digits (int() refuses past 4,300)
    assert extract_guests("１" * BIG) is None
    assert extract_stay(digits, TODAY) is None


def test_a_place_inside_a_sight_is_found_as_the_old_scan_of_every_sight_found_it():
    rng = random.Random(3)
    for _ in range(3_000):
        spans = sorted((a, a + rng.randint(0, 6)) for a in (rng.randint(0, 20) for _ in range(rng.randint(0, 6))))
        within = understand._within(spans)
        for start in range(22):
            for end in range(start, start + 8):
                expected = any(a <= start and end <= b and (a, b) != (start, end) for a, b in spans)
                assert within(start, end) == expected, (spans, start, end)


PLACE_PIECES = ["Paris", "Rome", "Kyoto", "Porto", "Lyon", "Tokyo Tower", "京都", "大阪城", " ", "  ", ", ", " or ", "/", "か",
                "not", "not in", "instead of", "rather than", "except", "skip", " please", " then", "にします", "じゃなくて",
                "より", "actually", "make it", "x", "Hotel", "\n"]


def test_places_and_their_choice_are_read_as_before():
    # The old reading, from the commit before: each check scanned the whole text or every place.
    def old_negated(text: str, mention: Mention) -> bool:
        return bool(re.compile(understand._NEGATED_BEFORE.pattern, re.I).search(text[: mention.start])
                    or re.match(r"^" + understand._NEGATED_AFTER.pattern, text[mention.end :]))

    rng = random.Random(5)
    chosen = 0
    for _ in range(6_000):
        text = "".join(rng.choice(PLACE_PIECES) for _ in range(rng.randint(1, 10)))
        places = mentions(text)
        for place in places:
            assert understand._negated(text, place) == old_negated(text, place), (text, place)
            after = re.match("^" + understand._CHOSEN_AFTER.pattern, text[place.end :], re.I)
            assert bool(understand._CHOSEN_AFTER.match(text, place.end)) == bool(after), (text, place)
            chosen += bool(after)
    assert chosen > 100


@pytest.mark.parametrize(
    "unit", ["Paris ", "Paris or Rome ", "Paris please ", "not Paris ", "Tokyo Tower ", "Porto Lyon "]
)
def test_a_message_naming_a_place_thousands_of_times_is_read_once(unit: str):
    # The reading of half a million characters is that of three repetitions (the same first place, the
    # same question between two), found without comparing every place with every other.
    few = read_places(unit * 3)
    many = read_places(unit * (BIG // 2 // len(unit)))
    assert (many.city, many.place, many.question, many.head) == (few.city, few.place, few.question, few.head)
