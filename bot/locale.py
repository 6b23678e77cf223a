"""A user's language and currency: the language a message is written in (agents answer Japanese
in Japanese), and a platform locale ("ja-JP", "en-GB", Discord's "ja") as default currency.

Platforms give a locale (Slack `users.info`, Discord interactions) but no currency; an agent shows
prices in the currency a user most likely thinks in until they name one ("under 30,000 yen")."""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["ja", "en"]
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")  # kana and kanji


def is_japanese(text: str | None) -> bool:
    """Whether the text has kana or kanji."""
    return bool(_JAPANESE.search(text or ""))


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
