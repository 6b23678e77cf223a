"""Post-processing: match the model's hotel names to real hotels and add what the model never sees
(ids, thumbnails, coordinates, a map link, the price in the user's currency)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher
from typing import Any

from agents.hotel.state import HotelFacts, HotelPick
from bot.events import Card

# Units of each currency per US dollar. Reference rates, good enough for comparing budgets and
# showing an approximate price in the user's currency; bookings settle in the hotel's currency.
PER_USD: dict[str, float] = {
    "USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 150.0, "CHF": 0.88, "AUD": 1.52, "CAD": 1.36,
    "SGD": 1.34, "HKD": 7.8, "KRW": 1350.0, "THB": 35.5, "CNY": 7.2, "AED": 3.67, "CZK": 23.0,
    "DKK": 6.85, "SEK": 10.5, "NOK": 10.6, "PLN": 4.0, "HUF": 360.0, "TRY": 32.0, "MXN": 17.0,
    "BRL": 5.0, "INR": 83.0, "NZD": 1.65, "ZAR": 18.5, "ISK": 138.0, "EGP": 48.0, "MAD": 10.0,
    "TWD": 32.0, "ARS": 900.0, "IDR": 15800.0, "VND": 25000.0, "MYR": 4.7, "PHP": 56.0,
}
_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", "KRW": "₩", "INR": "₹", "THB": "฿"}
_NO_DECIMALS = {"JPY", "KRW", "HUF", "ISK"}


class UnknownCurrency(ValueError):
    pass


def convert(amount: float, source: str, target: str) -> float:
    source, target = source.upper(), target.upper()
    if source == target:
        return amount
    if source not in PER_USD or target not in PER_USD:
        raise UnknownCurrency(f"no rate for {source}→{target}")
    return amount / PER_USD[source] * PER_USD[target]


def known_currency(code: str | None) -> bool:
    return bool(code) and code.upper() in PER_USD  # type: ignore[union-attr]


def format_money(amount: float, currency: str) -> str:
    """'$182', '€95', '¥21,000', 'CHF 200': whole units, which is how people compare hotel prices."""
    currency = currency.upper()
    value = f"{round(amount):,}"
    symbol = _SYMBOLS.get(currency)
    return f"{symbol}{value}" if symbol else f"{currency} {value}"


def map_url(latitude: float, longitude: float) -> str:
    return f"https://www.openstreetmap.org/?mlat={latitude:.5f}&mlon={longitude:.5f}#map=17/{latitude:.5f}/{longitude:.5f}"


# --- name matching ---------------------------------------------------------------------------

_GENERIC = {"hotel", "hotels", "the", "le", "la", "les", "l", "de", "du", "des", "and", "et", "by", "inn"}
_PUNCT = re.compile(r"[^\w\s]")


def _folded(name: str) -> str:
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(_PUNCT.sub(" ", text.replace("&", " and ").replace("'", " ")).split())


def normalize_name(name: str) -> str:
    """Case, accents, punctuation and filler words removed: 'Hôtel  Lumière' → 'lumiere'."""
    text = _folded(name)
    return " ".join(w for w in text.split() if w not in _GENERIC) or text


def _ratio(a: str, b: str) -> float:
    def one_way(x: str, y: str) -> float:
        return SequenceMatcher(None, x, y, autojunk=False).ratio()

    # Word-order swaps ("Marais Suites" / "Suites Marais") compare equal as sorted words.
    sa, sb = " ".join(sorted(a.split())), " ".join(sorted(b.split()))
    return max(one_way(a, b), one_way(b, a), one_way(sa, sb), one_way(sb, sa))


def name_similarity(a: str, b: str) -> float:
    """0..1, symmetric. 1 only for the same name up to case, accents and punctuation; just below
    for the same name without filler words; then by character similarity, which tolerates small
    typos in the distinctive words or in the filler ones ('Hôtle Vista' for 'Hôtel Vista')."""
    fa, fb = _folded(a), _folded(b)
    na, nb = normalize_name(a), normalize_name(b)
    if not na or not nb:
        return 0.0
    if fa == fb:
        return 1.0
    if na == nb:
        return 0.995
    return 0.99 * max(_ratio(na, nb), _ratio(fa, fb))


MATCH_THRESHOLD = 0.84


def match_hotel(name: str, candidates: Sequence[HotelFacts], threshold: float = MATCH_THRESHOLD) -> HotelFacts | None:
    """The candidate the name means, or None: a name that is not close to a real hotel is dropped,
    never guessed. Ties go to the earlier candidate (the tool's ranking)."""
    best: HotelFacts | None = None
    best_score = 0.0
    for candidate in candidates:
        score = name_similarity(name, candidate.get("name", ""))
        if score > best_score:
            best, best_score = candidate, score
    return best if best is not None and best_score >= threshold else None


# --- enrichment ------------------------------------------------------------------------------


def enrich(
    picks: Iterable[HotelPick | dict[str, Any]],
    candidates: Sequence[HotelFacts],
    currency: str,
    limit: int = 3,
) -> list[dict[str, Any]]:
    """The model's picks as real hotels, in the model's order, unknown names dropped, at most `limit`."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for pick in picks:
        name = pick.name if isinstance(pick, HotelPick) else str(pick.get("name", ""))
        hotel = match_hotel(name, candidates)
        if hotel is None or hotel["id"] in seen:
            continue
        seen.add(hotel["id"])
        out.append(enriched(hotel, currency))
        if len(out) >= limit:
            break
    return out


def enriched(hotel: HotelFacts, currency: str) -> dict[str, Any]:
    price = hotel.get("price")
    total = hotel.get("total")
    source = hotel.get("currency") or currency
    target = currency if known_currency(currency) and known_currency(source) else source
    user_price = convert(price, source, target) if price is not None else None
    user_total = convert(total, source, target) if total is not None else None
    lat, lon = hotel.get("latitude"), hotel.get("longitude")
    return {
        "id": hotel["id"],
        "name": hotel["name"],
        "city": hotel.get("city", ""),
        "district": hotel.get("district", ""),
        "stars": hotel.get("stars"),
        "rating": hotel.get("rating"),
        "review_count": hotel.get("review_count"),
        "thumbnail_url": hotel.get("thumbnail_url"),
        "latitude": lat,
        "longitude": lon,
        "map_url": map_url(lat, lon) if lat is not None and lon is not None else None,
        "available": hotel.get("available"),
        "check_in": hotel.get("check_in"),
        "check_out": hotel.get("check_out"),
        "hotel_currency": source,
        "hotel_price": price,
        "currency": target,
        "price": round(user_price, 2) if user_price is not None else None,
        "total_price": round(user_total, 2) if user_total is not None else None,
    }


CARD_LABELS: dict[str, dict[str, str]] = {
    "en": {"price": "Price", "rating": "Rating", "per_night": "/night", "unavailable": "not available on these dates",
           "reviews": "{n:,} reviews"},
    "ja": {"price": "料金", "rating": "評価", "per_night": "/泊", "unavailable": "この日程は空室なし",
           "reviews": "レビュー{n:,}件"},
}


def card(hotel: dict[str, Any], language: str = "en") -> Card:
    """A hotel as a platform-neutral card, labelled in `language` ("en" or "ja")."""
    labels = CARD_LABELS.get(language, CARD_LABELS["en"])
    subtitle = " · ".join(
        part for part in (hotel.get("district") or "", "★" * int(hotel.get("stars") or 0)) if part
    )
    fields: dict[str, str] = {}
    if hotel.get("price") is not None:
        price = format_money(hotel["price"], hotel["currency"]) + labels["per_night"]
        if hotel.get("hotel_currency") and hotel["hotel_currency"] != hotel["currency"] and hotel.get("hotel_price"):
            price += f" ({format_money(hotel['hotel_price'], hotel['hotel_currency'])})"
        fields[labels["price"]] = price
    elif hotel.get("available") is False:
        fields[labels["price"]] = labels["unavailable"]
    if hotel.get("rating") is not None:
        rating = f"{hotel['rating']:.1f}/5"
        if hotel.get("review_count"):
            rating += " (" + labels["reviews"].format(n=hotel["review_count"]) + ")"
        fields[labels["rating"]] = rating
    return Card(
        title=hotel["name"],
        subtitle=subtitle,
        fields=fields,
        image_url=hotel.get("thumbnail_url"),
        url=hotel.get("map_url"),
        lat=hotel.get("latitude"),
        lon=hotel.get("longitude"),
    )
