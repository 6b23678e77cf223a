"""Domain-neutral extractors for offline-model skills: numbers, counts, money, price ranges, ratings, ordinals."""

# Each function reads free text (English, with the common Japanese forms) and returns a small value
# or None when the text says nothing about it. Domain vocabulary (a hotel's nights and guests, a
# shop's items) is passed in by the agent; the hotel's own extractors live in agents/hotel/extract.py.

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from bot.locale import LATIN_WORD, rule

# --- numbers ---------------------------------------------------------------------------------

NUMBER_WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "twenty": 20, "couple": 2, "a couple": 2, "a couple of": 2,
}
_KANJI_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
# Regex fragments for a number as written, for callers building their own patterns:
# NUMBER_TOKEN also takes "a", "an" and "couple (of)"; INT_TOKEN only digits and number words.
NUMBER_TOKEN = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty|an?|couple(?: of)?|[一二三四五六七八九十])"
INT_TOKEN = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty|[一二三四五六七八九十])"


MAX_COUNT_DIGITS = 9


def parse_number(word: str) -> int | None:
    """'3' → 3, 'three' → 3, 'a' → 1, '三' → 3; None for anything else."""
    word = word.strip().lower()
    if word.isdecimal():  # what int() reads (isdigit() also takes `²`, which it refuses)
        # A count of nights, guests or stars; a run of digits longer than any count is none (and
        # past 4,300 digits int() refuses it).
        return int(word) if len(word) <= MAX_COUNT_DIGITS else None
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    if word.startswith("couple"):
        return 2
    return _KANJI_DIGITS.get(word)


def _to_float(raw: str) -> float:
    return float(raw.replace(",", "").replace("_", ""))


# --- counts ----------------------------------------------------------------------------------


def extract_count(text: str, nouns: Iterable[str]) -> int | None:
    """The number before any of `nouns`: extract_count('3 large rooms', ['rooms']) → 3. Kana or
    kanji may come right before it (「2 adultsと1 child」); a Latin letter or any digit may not (a run
    of full-width digits is tried once, not from each digit)."""
    alternatives = "|".join(re.escape(n) for n in sorted(nouns, key=len, reverse=True))
    pattern = rule(
        rf"(?<!{LATIN_WORD}|\d|\.)(?P<n>" + INT_TOKEN + r"|an?)\s+(?:[a-z-]+\s+)?(?:" + alternatives + r")\b"
    )
    match = pattern.search(text)
    if match:
        return parse_number(match.group("n"))
    return None


# --- prices and currency ---------------------------------------------------------------------

CURRENCY_SYMBOLS = {
    "$": "USD", "us$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "￥": "JPY", "円": "JPY", "₩": "KRW", "฿": "THB",
    "₹": "INR", "nt$": "TWD", "hk$": "HKD", "s$": "SGD", "a$": "AUD", "c$": "CAD", "r$": "BRL",
}
CURRENCY_WORDS = {
    "usd": "USD", "dollar": "USD", "dollars": "USD", "buck": "USD", "bucks": "USD",
    "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "gbp": "GBP", "pound": "GBP", "pounds": "GBP", "quid": "GBP",
    "jpy": "JPY", "yen": "JPY",
    "chf": "CHF", "franc": "CHF", "francs": "CHF",
    "aud": "AUD", "cad": "CAD", "sgd": "SGD", "hkd": "HKD", "krw": "KRW", "won": "KRW",
    "thb": "THB", "baht": "THB", "cny": "CNY", "yuan": "CNY", "rmb": "CNY",
    "twd": "TWD", "mxn": "MXN", "peso": "MXN", "pesos": "MXN", "try": "TRY", "lira": "TRY", "aed": "AED",
    "dirham": "AED", "dirhams": "AED", "czk": "CZK", "koruna": "CZK", "zar": "ZAR", "rand": "ZAR", "brl": "BRL",
    "reais": "BRL", "egp": "EGP", "mad": "MAD", "inr": "INR", "rupee": "INR", "rupees": "INR", "nzd": "NZD",
    "myr": "MYR", "ringgit": "MYR", "php": "PHP", "idr": "IDR", "rupiah": "IDR", "vnd": "VND", "dong": "VND",
    "pln": "PLN", "zloty": "PLN", "huf": "HUF", "forint": "HUF", "sek": "SEK", "nok": "NOK", "dkk": "DKK",
    "isk": "ISK", "ars": "ARS",
}
# Japanese names of currencies, written right after the amount ("150ドル", "100ユーロ").
CURRENCY_WORDS_JA = {
    "米ドル": "USD", "ドル": "USD", "ユーロ": "EUR", "ポンド": "GBP", "ウォン": "KRW", "バーツ": "THB",
    "人民元": "CNY", "元": "CNY", "香港ドル": "HKD", "台湾ドル": "TWD", "豪ドル": "AUD", "カナダドル": "CAD",
    "シンガポールドル": "SGD", "ペソ": "MXN", "リラ": "TRY", "ディルハム": "AED", "ルピー": "INR",
    "スイスフラン": "CHF", "フラン": "CHF", "コルナ": "CZK", "ランド": "ZAR", "レアル": "BRL",
}
_SYMBOL = r"(?:(?<![A-Za-z])(?:us|nt|hk|s|a|c|r)\$|\$|€|£|¥|￥|₩|฿|₹)"
_CODE = r"(?:" + "|".join(sorted(CURRENCY_WORDS, key=len, reverse=True)) + r")"
# Currency words that are everyday English words too: before an amount they name a currency only
# written as a code ("TRY 500"), so "let me try 100 to 200" and "I won 50" hold no price; after an
# amount ("200,000 won", "500 rand") they still do.
AMBIGUOUS_WORDS = ("try", "won", "mad", "rand", "dong")
_CODE_BEFORE = (
    r"(?:(?-i:" + "|".join(w.upper() for w in AMBIGUOUS_WORDS) + r")|"
    + "|".join(sorted(set(CURRENCY_WORDS) - set(AMBIGUOUS_WORDS), key=len, reverse=True)) + r")"
)
_JA_CODE = "|".join(sorted(CURRENCY_WORDS_JA, key=len, reverse=True))
# From the first digit of a number only, and whole: what may follow an amount never starts with a
# digit or a comma, so a shorter amount never matches where the whole one did not (and a run of
# 4,000 digits is read once, not once per digit with every shorter amount tried).
_AMOUNT = r"(?<!\d)\d[\d,]*+(?:\.\d+)?"
# An amount with its currency either side: "$200", "200 euros", "EUR 150", "¥20,000", "2万円", "200". A
# code before the amount is a word of its own: "4 stars 200 max" is no price in ARS (st|ars).
_MONEY = (
    r"(?:(?P<sym{s}>" + _SYMBOL + r")\s?(?P<a{s}>" + _AMOUNT + r")(?P<k{s}>k\b)?"
    r"|(?P<pre{s}>(?<![A-Za-z])" + _CODE_BEFORE + r")\s?(?P<b{s}>" + _AMOUNT + r")(?P<kb{s}>k\b)?"
    r"|(?P<c{s}>" + _AMOUNT + r")(?P<kc{s}>k\b|万)?\s?(?P<post{s}>" + _SYMBOL + r"|円|" + _JA_CODE + "|" + _CODE
    + r"\b)?)"
)
# What, right after a number without a currency, makes it a quantity rather than an amount.
_QUANTITY_AFTER = (
    r"\+|-\s*star|★|stars?|days?|weeks?|months?|years?|people|persons?|km|miles?|mi\b|m\b|minutes?|mins?|hours?|"
    r"%|/\s*(?:5|10)\b|out of|人|名|つ星|(?:st|nd|rd|th)\b|(?:am|pm)\b|:\d"
)
_MAX_WORDS = (
    r"under|below|less\s+than|lower\s+than|cheaper\s+than|up\s+to|at\s+most|no\s+more\s+than|not\s+more\s+than|"
    r"max(?:imum)?(?:\s+of)?|within|budget(?:\s+of)?(?:\s+is)?|<=?|under\s+about"
)
_MIN_WORDS = r"over|above|more\s+than|at\s+least|min(?:imum)?(?:\s+of)?|starting\s+at|from|>=?"
_APPROX_WORDS = r"around|about|approximately|roughly|~|circa"

_RANGE = rule(
    r"(?:between|from)?\s*+" + _MONEY.format(s="1") + r"\s*+(?:-|–|—|to|and|〜|~)\s*+" + _MONEY.format(s="2")
)
_BOUND = rule(
    r"(?P<word>" + _MAX_WORDS + "|" + _MIN_WORDS + "|" + _APPROX_WORDS + r")\s*" + _MONEY.format(s="")
)
_TRAILING_BOUND = rule(
    _MONEY.format(s="") + r"\s*+(?P<word>or\s+less|or\s+under|or\s+below|max(?:imum)?|tops|or\s+more|"
    r"and\s+up|plus|以下|以内|未満|まで|以上|から|前後|くらい|ぐらい|程度|ほど)"
)
_APPROX_AFTER = ("前後", "くらい", "ぐらい", "程度", "ほど")
_BARE_MONEY = rule(r"(?:(?<=\s)|^|(?<=[\u3040-\u30ff\u4e00-\u9fff]))" + _MONEY.format(s=""))
_TOTAL = r"\b(?:in\s+)?total\b|合計|総額"


@functools.lru_cache(maxsize=32)
def _not_money_after(units: tuple[str, ...]) -> re.Pattern[str]:
    extra = "".join("|" + re.escape(u) for u in sorted(units, key=len, reverse=True))
    return rule(r"\s*(?:" + _QUANTITY_AFTER + extra + ")")


@functools.lru_cache(maxsize=32)
def _per_total(whole: tuple[str, ...]) -> re.Pattern[str]:
    pattern = _TOTAL
    if whole:
        nouns = "|".join(re.escape(n) for n in sorted(whole, key=len, reverse=True))
        pattern += r"|\bfor\s+(?:the\s+)?(?:whole|entire)\s+(?:" + nouns + r")\b"
    return rule(pattern)


_KANJI_NUMBER = re.compile(r"[〇一二三四五六七八九十百千万]+|(?<!\d)\d++(?:\.\d+)?(?:万(?:\d++千)?|千)")
_KANJI_VALUES = {"〇": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_KANJI_UNITS = {"十": 10, "百": 100, "千": 1000}


def _kanji_value(token: str) -> float | None:
    """'1万5千' → 15000, '2.5万' → 25000, '三千' → 3000, '二万五千' → 25000; None if not a number."""
    total, section, digit = 0.0, 0.0, None
    for raw in re.findall(r"\d+(?:\.\d+)?|.", token):
        if raw[0].isdigit():
            digit = float(raw)
        elif raw in _KANJI_VALUES:
            digit = float(_KANJI_VALUES[raw])
        elif raw in _KANJI_UNITS:
            section += (digit if digit is not None else 1) * _KANJI_UNITS[raw]
            digit = None
        elif raw == "万":
            total += (section + (digit or 0)) * 10_000
            section, digit = 0.0, None
        else:
            return None
    return total + section + (digit or 0)


def japanese_amounts(text: str) -> str:
    """Amounts in Japanese notation as digits: '1万5千円' → '15000円', '2.5万円' → '25000円',
    '三千円' → '3000円'. Kanji numbers are rewritten only before a currency (円, ドル…), so
    '一泊' and '三人' stay as they are."""

    def digits(match: re.Match[str]) -> str:
        token = match.group(0)
        if not any(unit in token for unit in "万千") and token.isdigit():
            return token
        if not token[0].isdigit():
            after = text[match.end() : match.end() + 8]
            if not re.match(r"\s?(?:円|" + _JA_CODE + ")", after):
                return token
        value = _kanji_value(token)
        return token if value is None else f"{value:.0f}"

    return _KANJI_NUMBER.sub(digits, text)


@dataclass(frozen=True)
class PriceRange:
    """Price bounds as the user said them; `per` is "total" when the amount covers everything
    (“in total”), "unit" when it is the price of one unit (a night, an item)."""

    min: float | None = None
    max: float | None = None
    currency: str | None = None
    per: Literal["unit", "total"] = "unit"


@dataclass(frozen=True)
class _Money:
    amount: float
    currency: str | None
    explicit: bool  # a currency symbol or word was present


def _money(match: re.Match[str], s: str = "") -> _Money | None:
    g = match.groupdict()
    raw = g.get(f"a{s}") or g.get(f"b{s}") or g.get(f"c{s}")
    if not raw:
        return None
    amount = _to_float(raw)
    multiplier = g.get(f"k{s}") or g.get(f"kb{s}") or g.get(f"kc{s}")
    if multiplier:
        amount *= 10_000 if multiplier == "万" else 1_000
    marker = (g.get(f"sym{s}") or g.get(f"pre{s}") or g.get(f"post{s}") or "").lower()
    currency = CURRENCY_SYMBOLS.get(marker) or CURRENCY_WORDS.get(marker) or CURRENCY_WORDS_JA.get(marker)
    if multiplier == "万" and currency is None:
        currency = "JPY"
    return _Money(amount, currency, bool(marker))


def _is_money_context(text: str, end: int, money: _Money, not_money: re.Pattern[str]) -> bool:
    if money.explicit:
        return True
    return not not_money.match(text, end)


def extract_price_range(
    text: str, *, quantity_units: Iterable[str] = (), whole: Iterable[str] = (), bare_ranges: bool = False
) -> PriceRange | None:
    """'under $200' → max 200 USD; 'below 150 euros'; 'between 100 and 200'; '$100-$200';
    'over 80'; '2万円以下'; 'around $150' (±20%); a bare '$200' is read as a budget (max).

    `quantity_units` are the caller's words that, right after a number without a currency, make it
    a quantity rather than a price (matched as prefixes: 'night' also covers 'nights'), on top of
    the generic ones (days, people, km, stars, %…). `whole` are the nouns of "for the whole …"
    that mean the amount is a total ('stay', 'order'); "in total" always does. `bare_ranges`: a
    range with neither currency nor "between"/"from" ("headphones 50 to 100") is a price too, for
    callers whose requests hold no dates ("12-14" is more often days than dollars in a hotel's).
    """
    text = japanese_amounts(text)
    not_money = _not_money_after(tuple(quantity_units))
    per: Literal["unit", "total"] = "total" if _per_total(tuple(whole)).search(text) else "unit"
    for match in _RANGE.finditer(text):
        low, high = _money(match, "1"), _money(match, "2")
        if low is None or high is None:
            continue
        prefix = text[max(0, match.start() - 12) : match.start()].lower()
        has_range_word = bool(re.search(r"(between|from)\s*$", prefix)) or "between" in match.group(0).lower()
        explicit = low.explicit or high.explicit
        if not (explicit or has_range_word or bare_ranges):
            continue
        if not _is_money_context(text, match.end(), high, not_money):
            continue
        if re.search(r"(?:rated|rating|stars?)\s*$", prefix):
            continue
        if not (explicit or has_range_word) and re.search(r"(?:sizes?|ages?|aged|for|kids?|children|boys|girls)\s*$", prefix):
            continue  # a bare range of sizes or ages: "size 8-10", "kids 6-8"
        currency = low.currency or high.currency
        return PriceRange(min(low.amount, high.amount), max(low.amount, high.amount), currency, per)
    for match in _BOUND.finditer(text):
        money = _money(match)
        if money is None or not _is_money_context(text, match.end(), money, not_money):
            continue
        word = re.sub(r"\s+", " ", match.group("word").lower())
        if word == "from" and not money.explicit:
            continue  # "from 12" is more often a date than a price
        if re.fullmatch(_APPROX_WORDS, word):
            return PriceRange(round(money.amount * 0.8, 2), round(money.amount * 1.2, 2), money.currency, per)
        if re.fullmatch(_MIN_WORDS, word):
            return PriceRange(money.amount, None, money.currency, per)
        return PriceRange(None, money.amount, money.currency, per)
    for match in _TRAILING_BOUND.finditer(text):
        money = _money(match)
        if money is None:
            continue
        word = match.group("word").lower()
        if word in _APPROX_AFTER:
            return PriceRange(round(money.amount * 0.8, 2), round(money.amount * 1.2, 2), money.currency, per)
        if word in ("以上", "から", "or more", "and up", "plus"):
            if not money.explicit and word in ("から", "plus"):
                continue
            return PriceRange(money.amount, None, money.currency, per)
        return PriceRange(None, money.amount, money.currency, per)
    for match in _BARE_MONEY.finditer(text):
        money = _money(match)
        if money is not None and money.explicit and _is_money_context(text, match.end(), money, not_money):
            return PriceRange(None, money.amount, money.currency, per)
    return None


# --- ratings ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MinRating:
    """A minimum review rating; `scale` is 5 or 10 when the text says so ('8/10'), else None."""

    value: float
    scale: float | None = None

    def on_scale(self, scale: float) -> float:
        """The bound on a `scale`-point scale; an unstated scale is guessed from the value."""
        own = self.scale or (5.0 if self.value <= 5 else 10.0)
        return round(self.value / own * scale, 2)


_RATING = rule(
    r"(?:rated|rating|score|reviews?|review\s+score)\s*+(?:of\s+)?(?:at\s+least|above|over|of|>=?|min(?:imum)?)?\s*+"
    r"(?P<v>\d+(?:\.\d+)?)\s*(?P<plus>\+|or\s+(?:more|higher|better|above))?\s*(?:/\s*(?P<s>5|10)|out\s+of\s+(?P<s2>5|10))?"
    r"|(?<!\d)(?P<v2>\d++(?:\.\d+)?)\s*+(?:\+|or\s+(?:more|higher|better))?\s*+(?:/\s*+(?P<s3>5|10)|out\s+of\s+(?P<s4>5|10))?\s*+"
    r"(?:\+\s*)?(?:rated|rating|review|score|(?:guest|customer|user|average)\s+rating)"
    r"|(?:at\s+least|above|over)\s*+(?P<v3>\d++(?:\.\d+)?)\s*+(?:/\s*(?P<s5>5|10)|out\s+of\s+(?P<s6>5|10))"
    r"|評価\s*(?P<v4>\d+(?:\.\d+)?)\s*(?:以上)?"
    r"|(?<![\d/])(?P<v5>\d(?:\.\d+)?)\s*+(?:/\s*(?P<s7>5|10)|out\s+of\s+(?P<s8>5|10))(?![\d/])"
)


def extract_min_rating(text: str) -> MinRating | None:
    """'rated 4+' → 4, 'rating above 8.5' → 8.5, '4.5/5 or better' → 4.5 of 5, '評価4以上'."""
    match = _RATING.search(text)
    if not match:
        return None
    g = match.groupdict()
    raw = g["v"] or g["v2"] or g["v3"] or g["v4"] or g["v5"]
    scale_raw = g["s"] or g["s2"] or g["s3"] or g["s4"] or g["s5"] or g["s6"] or g["s7"] or g["s8"]
    value = float(raw)
    scale = float(scale_raw) if scale_raw else None
    if value <= 0 or value > (scale or 10):
        return None
    return MinRating(value, scale)


# --- thanks ---------------------------------------------------------------------------------

THANKS_WORDS = r"thanks|thank\s+you|thx|cheers|much\s+appreciated"
# A message that thanks and asks nothing more: "thanks!", "ok, thank you so much", 「ありがとうございます」.
_ONLY_THANKS = rule(
    rf"^\s*(?:(?:ok(?:ay)?|great|perfect|cool|nice)[,!.]?\s*)?(?:{THANKS_WORDS}|ty)"
    r"(?:\s+(?:so\s+much|a\s+lot|very\s+much|again))?[\s!.~]*$"
    r"|^\s*(?:(?:了解|わかりました|助かりました)[、。!！]?\s*)?(?:ありがとう(?:ございます|ございました)?|どうも|感謝します?)[\s!！。~〜]*$"
)


def only_thanks(text: str) -> bool:
    """Whether the message thanks and asks nothing more."""
    return bool(_ONLY_THANKS.match(text))


# --- ordinals --------------------------------------------------------------------------------

ORDINAL_WORDS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9, "tenth": 10, "10th": 10, "last": -1, "final": -1,
}
_ORDINAL = rule(
    r"\b(?:the\s+)?(?P<w>" + "|".join(ORDINAL_WORDS) + r")\b(?!\s+(?:night|time|of\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))"
    r"|(?:#|\bnumber\s+|\bno\.\s*|\boption\s+)(?P<n>\d{1,2})\b"
    r"|(?P<ja>\d|[一二三四五六七八九十])\s*(?:番目|つ目|件目)"
)


def extract_ordinals(text: str) -> list[int]:
    """Every item of a list the text points at, in its order: 'the first and the third' → [1, 3]."""
    found: list[int] = []
    for match in _ORDINAL.finditer(text):
        value = _ordinal_value(match)
        if value is not None and value not in found:
            found.append(value)
    return found


def extract_ordinal(text: str) -> int | None:
    """Which item of a list the text points at: 'the second one' → 2, '#3' → 3, 'the last' → -1."""
    match = _ORDINAL.search(text)
    return _ordinal_value(match) if match else None


def _ordinal_value(match: re.Match[str]) -> int | None:
    if match.group("w"):
        return ORDINAL_WORDS[match.group("w").lower()]
    return parse_number(match.group("n") or match.group("ja"))
