r"""`bot.locale.rule`: a `\b` that also stands where a Latin word meets Japanese script, as Japanese
users write ids, codes and English words against their own script (「ANC付き」, 「earbuds-001の」)."""

from __future__ import annotations

import random
import re

import pytest

from agents.shopping.intents import PATTERNS
from bot.locale import _BOUNDARY, _rewrite, rule


@pytest.mark.parametrize(
    ("pattern", "text", "span", "python_sees_it"),
    [
        (r"\bANC\b", "ANC付きのイヤホン", (0, 3), False),
        (r"\bANC\b", "ノイキャン(ANC)付き", (6, 9), True),
        (r"\bspecs?\b", "3番目のspecsを", (4, 9), False),
        (r"\d+\b", "型番は1234です", (3, 7), False),
        (r"いいえ\b", "いいえ", (0, 3), True),  # every edge Python's \b sees stays one
        (r"\bcafé\b", "le café.", (3, 7), True),
    ],
)
def test_a_word_ends_where_japanese_begins(pattern: str, text: str, span: tuple[int, int], python_sees_it: bool) -> None:
    match = rule(pattern).search(text)
    assert match is not None and match.span() == span
    assert (re.search(pattern, text, re.IGNORECASE) is not None) is python_sees_it


@pytest.mark.parametrize(("pattern", "text"), [(r"\bANC\b", "ANCX付き"), (r"\bANC\b", "xANC"), (r"\bcaf\b", "café")])
def test_a_word_still_does_not_end_inside_a_word(pattern: str, text: str) -> None:
    assert rule(pattern).search(text) is None


def test_backspace_in_a_class_and_an_escaped_backslash_are_left_as_written() -> None:
    assert rule(r"[\b]x").fullmatch("\bx") and rule(r"[]\b]").fullmatch("\b")
    assert rule(r"a\\b").fullmatch("a\\b") and rule(r"a\\b").search("a") is None


def test_flags_are_passed_on() -> None:
    assert rule(r"\bAbc\b").search("abcの") and rule(r"\bAbc\b", 0).search("abcの") is None


ENGLISH = [
    "wireless earbuds under $100", "compare the first and the second", "what do people say about the battery?",
    "add 2 of the first one to my cart", "is it waterproof?", "any coupons for headphones", "in stock near me in Osaka",
    "remove it from my cart", "apply SAVE10", "x" * 50, "don't", "specs, please", "reviews… of it", "e.g. 3.5mm",
]


@pytest.mark.parametrize("text", ENGLISH)
def test_text_without_japanese_matches_as_before(text: str) -> None:
    """The new edges are only where Latin meets Japanese: every rule of the shop's table finds the same
    spans in text without Japanese as the pattern compiled by `re`."""
    for rows in PATTERNS.values():
        for pattern, _weight in rows:
            old = [m.span() for m in re.finditer(pattern, text, re.IGNORECASE)]
            assert [m.span() for m in rule(pattern).finditer(text)] == old, pattern


# Patterns that read the bot's own text (a tool's result), never a user's.
OWN_TEXT = {"agents.hotel.offline._ASK"}


def test_every_rule_over_users_text_is_compiled_by_rule() -> None:
    """A pattern of the modules that read users' messages with Python's own `\\b` left in it was
    compiled with `re.compile`: it misses a word written against Japanese."""
    from bench.regex_sweep import MODULES, patterns

    plain = [
        f"{module}.{name}" for module in MODULES for name, pattern in patterns(module)
        if re.search(r"(?<!\\)\\b", pattern.pattern.replace("(?-i:\\b|", "")) and f"{module}.{name}" not in OWN_TEXT
    ]
    assert len(MODULES) >= 9 and plain == []


PIECES = ("the", "first", "one", "add", "cart", "ANC", "spec", "s", "1", "２", "は", "の", "カート", "付き", "番目", " ", "-",
          "?", "。", "x", "é", "Ω", "_", "this", "next", "weekend", "in stock", "review", "compare", "vs.", "and")


def test_the_one_sided_edges_match_where_the_general_edge_does() -> None:
    """`rule` spends the general, three-way edge only where it must; next to a letter or a group of
    letters a one-sided look is the same edge. Both compiled for every rule of the shop's table, on
    random texts of Latin, kana, kanji, digits, full-width digits and punctuation."""
    rng = random.Random(7)
    texts = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))) for _ in range(400)]
    patterns = [p for rows in PATTERNS.values() for p, _weight in rows] + [
        r"\b(?:this|next)\s+week\b", r"\b(?P<w>first|1st)\b", r"\b(?:the\s+)?day\b", r"\bspecs?\b", r"\b\d+\b"]
    for pattern in patterns:
        general = re.compile(_rewrite(pattern, lambda _pattern, _at: _BOUNDARY), re.IGNORECASE)
        for text in texts:
            assert [m.span() for m in rule(pattern).finditer(text)] == [m.span() for m in general.finditer(text)], (pattern, text)
