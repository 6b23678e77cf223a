"""A user's language and currency: the language a message is written in (agents answer Japanese
in Japanese), and a platform locale ("ja-JP", "en-GB", Discord's "ja") as default currency.

Platforms give a locale (Slack `users.info`, Discord interactions) but no currency; an agent shows
prices in the currency a user most likely thinks in until they name one ("under 30,000 yen")."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Literal

Language = Literal["ja", "en"]
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")  # kana and kanji
# A letter, digit or _ of Latin-1: the words English and most Western European languages write with
# spaces between. (Latin letters past Latin-1, "ř" of "Dvořák", count as another script here.)
LATIN_WORD = r"[0-9A-Za-z_\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff]"
# Python's \b, or where a Latin word meets a word character of another script (kana, kanji, hangul).
# Classes of Latin-1 only: a class reaching kanji takes ~2 ms to compile, per `\b`, in every rule.
_BOUNDARY = rf"(?-i:\b|(?<={LATIN_WORD})(?=\w)(?!{LATIN_WORD})|(?<=\w)(?<!{LATIN_WORD})(?={LATIN_WORD}))"


def is_japanese(text: str | None) -> bool:
    """Whether the text has kana or kanji."""
    return bool(_JAPANESE.search(text or ""))


@functools.lru_cache(maxsize=512)
def rule(pattern: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    r"""Compile a pattern over what users type, its `\b` the edge of a word in spaced writing. Python's
    `\b` counts kana and kanji as word characters, so a Latin word written against Japanese has no
    edge there: 「ANC付き」 would not match `\bANC\b`, nor 「earbuds-001のレビュー」 an id. Here `\b`
    is also where a Latin letter or digit meets kana or kanji, as if a space stood between; every
    edge Python sees stays one (「いいえ」 ends at the end of the text). `\b` inside a character
    class (a backspace) and `\\b` (a backslash, then b) are left as written."""
    return re.compile(_rewrite(pattern, _edge), flags)


def _rewrite(pattern: str, edge: Callable[[str, int], str]) -> str:
    """`pattern` with each `\\b` outside a character class replaced by `edge(pattern, where)`."""
    out: list[str] = []
    at, class_start = 0, -1  # where the character class being read opened, -1 outside one
    while at < len(pattern):
        ch = pattern[at]
        if ch == "\\":
            pair = pattern[at : at + 2]
            out.append(edge(pattern, at) if pair == "\\b" and class_start < 0 else pair)
            at += 2
            continue
        if class_start < 0 and ch == "[":
            class_start = at
        elif class_start >= 0 and ch == "]" and at - class_start > (2 if pattern[class_start + 1 : class_start + 2] == "^" else 1):
            class_start = -1  # a "]" first in the class ("[]…]", "[^]…]") is a literal
        out.append(ch)
        at += 1
    return "".join(out)


def _edge(pattern: str, at: int) -> str:
    r"""What the `\b` at `at` becomes. Next to a Latin letter the pattern spells out (`\bANC`,
    `ANC\b`), or before a group each alternative of which opens with one (`\b(?:this|next)`), the
    edge is one-sided and costs what Python's `\b` does: the text's character on the other side is
    no Latin letter or digit. Elsewhere (`\b\d`, `s?\b`, `\b(?:the\s+)?day`) it is the general one."""
    before = pattern[at - 1] if at >= 1 and (at < 2 or pattern[at - 2] != "\\") else ""
    if _LITERAL.fullmatch(before):
        return f"(?!{LATIN_WORD})"
    if _opens_with_letter(pattern, at + 2):
        return f"(?<!{LATIN_WORD})"
    return _BOUNDARY


def _opens_with_letter(pattern: str, at: int) -> bool:
    """Whether what the pattern matches from `at` surely opens with a Latin letter or digit: a
    letter it spells out, not optional ("ANC", "x+"), or a group every alternative of which does
    ("(?:this|next) ", "(?P<w>first|1st)")."""
    first, then = pattern[at : at + 1], pattern[at + 1 : at + 2]
    if _LITERAL.fullmatch(first):
        return then not in ("?", "*", "{")
    if first != "(":
        return False
    body = at + 1
    if pattern.startswith("?:", body):
        body += 2
    elif pattern.startswith("?P<", body):
        body = pattern.find(">", body) + 1
    elif pattern.startswith("?", body):
        return False  # a lookaround or inline flags: matches no letter of its own
    depth, starts, i = 0, [body], body
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # a class may hold ( ) |
            i = pattern.find("]", i + 2) + 1 or len(pattern)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif ch == ")":
            return pattern[i + 1 : i + 2] not in ("?", "*", "{") and all(_opens_with_letter(pattern, s) for s in starts)
        elif ch == "|" and not depth:
            starts.append(i + 1)
        i += 1
    return False


_LITERAL = re.compile(r"[0-9A-Za-z_]")


def language_of(text: str | None) -> Language:
    """'ja' for text with kana or kanji, else 'en': the language an answer to it is written in."""
    return "ja" if is_japanese(text) else "en"

# Region → currency for the regions a locale names (ISO 3166 → ISO 4217).
REGION_CURRENCY = {
    "US": "USD", "GB": "GBP", "JP": "JPY", "KR": "KRW", "CN": "CNY", "TW": "TWD", "HK": "HKD", "SG": "SGD",
    "AU": "AUD", "NZ": "NZD", "CA": "CAD", "IN": "INR", "TH": "THB", "ID": "IDR", "VN": "VND", "MY": "MYR",
    "PH": "PHP", "MX": "MXN", "BR": "BRL", "AR": "ARS", "ZA": "ZAR", "EG": "EGP", "MA": "MAD", "AE": "AED",
    "TR": "TRY", "CH": "CHF", "CZ": "CZK", "PL": "PLN", "HU": "HUF", "SE": "SEK", "NO": "NOK", "DK": "DKK",
    "IS": "ISK", "DE": "EUR", "FR": "EUR", "ES": "EUR", "IT": "EUR", "NL": "EUR", "BE": "EUR", "AT": "EUR",
    "PT": "EUR", "IE": "EUR", "FI": "EUR", "GR": "EUR",
}
# A bare language ("ja", Discord's "fr") → the currency of its main region.
LANGUAGE_CURRENCY = {
    "ja": "JPY", "ko": "KRW", "zh": "CNY", "de": "EUR", "fr": "EUR", "es": "EUR", "it": "EUR", "nl": "EUR",
    "pt": "EUR", "fi": "EUR", "el": "EUR", "th": "THB", "tr": "TRY", "pl": "PLN", "cs": "CZK", "hu": "HUF",
    "sv": "SEK", "no": "NOK", "da": "DKK", "hi": "INR", "id": "IDR", "vi": "VND",
}


def currency_for_locale(locale: str | None, default: str = "USD") -> str:
    """'ja-JP' → 'JPY', 'en-GB' → 'GBP', 'pt-BR' → 'BRL', 'fr' → 'EUR', 'en' or '' → `default`."""
    text = (locale or "").replace("_", "-").strip()
    language, _, region = text.partition("-")
    if region.upper() in REGION_CURRENCY:
        return REGION_CURRENCY[region.upper()]
    return LANGUAGE_CURRENCY.get(language.lower(), default)


def currency_of(currency: str | None, text: str | None) -> str:
    """The currency a turn's prices are shown in: the user's (from the platform's locale; USD when
    it says nothing), except that a request written in Japanese gets yen where it would otherwise
    get dollars (a terminal without LANG, a Discord DM, a Slack profile set to en-US)."""
    code = (currency or "USD").upper()
    return "JPY" if code == "USD" and is_japanese(text) else code


def language_for(locale: str | None, text: str | None = None) -> Language:
    """The language to answer in: the text's when it has words ('ja' for kana or kanji), else the
    user's locale's ('ja-JP', Discord's 'ja')."""
    if text and text.strip():
        return language_of(text)
    return "ja" if (locale or "").lower().startswith("ja") else "en"
