"""A /hotel message is read by the offline planner in the event loop, so every reading of it must be
linear: before /hotel took at most 4,000 characters (HotelAgent.max_input_chars) it took the
runtime's 100 KB, and a run of 20,000 digits held the loop (and every other conversation) for
7.8 s, a message naming a place 3,400 times for 1.9 s. The readings stay linear on their own.

As in tests/proofread/test_linear_rules.py: each rewritten expression or lookup is compared with
the old one on seeded random strings, and each is given input ten times the limit, where the old
forms would run for hours (a regression fails on the suite's per-test timeout). No wall time is
asserted."""

from __future__ import annotations

import random
import re
from datetime import date

import pytest

from agents.hotel import extract, geo, understand
from agents.hotel.extract import extract_guests, extract_nights, extract_stay
from agents.hotel.offline import _CALENDAR, _STOP, detect_district
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


def _old_named(key: str, places: tuple[geo.District, ...] | tuple[geo.Landmark, ...]) -> object:
    """City.district and City.landmark as they were: every name and alias normalized on each call."""
    if not key:
        return None
    for place in places:
        if key == geo.normalize(place.name) or key in (geo.normalize(a) for a in place.aliases):
            return place
    partial = [place for place in places if key in geo.normalize(place.name)]
    return partial[0] if len(partial) == 1 else None


def _asked_for(city: geo.City, rng: random.Random) -> list[str]:
    """What a district or landmark lookup is asked: every name and alias, pieces of them, other words."""
    names = [n for place in (*city.districts, *city.landmarks) for n in (place.name, *place.aliases)]
    pieces = [name[i : i + k] for name in names for i, k in ((0, 3), (1, 4), (2, 6)) if name[i : i + k]]
    other = ["", " ", "the", "Paris", "st", "MARAIS", "Le  Marais", "shinjuku-ku", "x" * 9]
    return names + [n.upper() for n in names] + pieces + other + [rng.choice(names) + " " + rng.choice(other) for _ in range(40)]


def test_districts_and_landmarks_are_found_by_their_keys_as_by_the_old_lookup():
    rng = random.Random(7)
    asked = 0
    for city in geo.CITIES.values():
        for text in _asked_for(city, rng):
            key = geo.normalize(text)
            assert city.district(text) is _old_named(key, city.districts), (city.name, text)
            assert city.landmark(text) is _old_named(key, city.landmarks), (city.name, text)
            asked += 1
    assert asked > 4_000


def _old_detect_district(text: str, city: geo.City) -> str | None:
    """detect_district as it was: every phrase of the message looked up, however often it recurs."""
    norm = geo.normalize(text)
    for district in city.districts:
        for name in (district.name, *district.aliases):
            key = geo.normalize(name)
            if key and (re.search(r"(?<!\w)" + re.escape(key) + r"(?!\w)", norm) if key.isascii() else key in norm):
                return district.name
    words = norm.split()
    own = {geo.normalize(name) for name in (city.name, *city.aliases)}
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            phrase = " ".join(words[i : i + n])
            if len(phrase) >= 4 and phrase not in _STOP and phrase not in _CALENDAR and phrase not in own:
                found = city.district(phrase)
                if found is not None:
                    return found.name
    return None


def test_a_district_is_found_in_a_message_as_before_with_each_phrase_looked_up_once():
    rng = random.Random(11)
    found = 0
    for city in geo.CITIES.values():
        words = [w for d in city.districts for n in (d.name, *d.aliases) for w in n.split()]
        words += ["near", "the", "hotel", "quiet", city.name, "in", "with", "pool", "and", "or"]
        for _ in range(30):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
            expected = _old_detect_district(text, city)
            assert detect_district(text, city) == expected, (city.name, text)
            found += expected is not None
    assert found > 300


def _without_possessives(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """The expression as it was: each run of spaces shared out every way between its parts."""
    old = pattern.pattern.replace("*+", "*").replace("++", "+")
    assert old != pattern.pattern
    return re.compile(old, pattern.flags)


@pytest.mark.parametrize(("name", "least"), [("_CHOSEN_AFTER", 5_000), ("_NEGATED_AFTER", 5_000), ("ALTERNATIVES", 300)])
def test_what_follows_a_place_is_read_as_before_with_its_spaces_taken_whole(name: str, least: int):
    new = getattr(understand, name)
    old = _without_possessives(new)
    rng = random.Random(name)
    pieces = [*PLACE_PIECES, "   ", "\t", " ,  ", ",", "please", "it is", "or", "maybe", "else", "で、", "がいい", "はやめ"]
    found = 0
    for _ in range(40_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        for at in range(len(text) + 1):
            was, now = old.match(text, at), new.match(text, at)
            assert (now and now.span()) == (was and was.span()), (text, at)
            found += was is not None
    assert found > least


def test_a_place_followed_by_a_long_run_of_spaces_is_read_once():
    # "Paris", 100,000 spaces, then a choice word, a negation or a second place: the old forms tried
    # every way of sharing the spaces out between their parts (0.27 s at 4,000 spaces, growing with
    # the square: minutes here).
    for tail in ("please", "じゃなくて", "Rome", "or Rome"):
        few, many = read_places("Paris   " + tail), read_places("Paris" + " " * (BIG // 10) + tail)
        assert (many.city, many.place, many.question) == (few.city, few.place, few.question), tail
