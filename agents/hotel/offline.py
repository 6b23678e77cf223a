"""The offline model's hotel skill: reads the user's words into real tool calls, then writes the
structured answer from the tool results, so the /hotel graph runs without a language model.

It sees only what a language model would: the system prompt (today, the user's currency, the
summaries of earlier searches), the user's message, the tool messages and the answer schema."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, ToolMessage

from agents.hotel import extract as hotel_extract
from agents.hotel import geo, understand
from agents.hotel.extract import (
    Stay,
    extract_guests,
    extract_nights,
    extract_price_range,
    extract_stars,
    extract_stay,
)
from agents.hotel.phrasebook import AMENITIES_JA, city_name, joined, landmark_name, not_used, say, stay_ja
from agents.hotel.store import (
    _AMENITY_ALIASES,
    AMENITIES,
    AMENITY_WORDS_JA,
    DECLINED_AFTER_JA,
    normalize_amenity,
)
from agents.hotel.understand import Reading, read_places
from bot.locale import LATIN_WORD, Language, is_japanese, language_of, rule
from bot.offline import extract as core_extract
from bot.offline.extract import PriceRange, extract_min_rating, extract_ordinal, extract_ordinals, only_thanks
from bot.offline.model import OfflineRequest, tool_call
from bot.tools import degraded

HOTEL_TOOLS = {"search_hotels", "aggregate_hotels", "hotel_details", "hotels_near_landmark"}
ANSWER_SCHEMA = "HotelAnswer"

_TODAY = re.compile(r"Today is (\d{4}-\d{2}-\d{2})")
_CURRENCY = re.compile(r"currency is ([A-Z]{3})")
_MEMORY_CALL = re.compile(r"^- (?P<tool>\w+)\((?P<params>[^)]*)\)", re.MULTILINE)
_SHOWN = re.compile(r"Shown to the user: (?P<list>.+?)\.$", re.MULTILINE)
_HOTEL_LINE = re.compile(r"^(?P<n>\d+)\. (?P<name>.+?) — (?P<rest>.+)$", re.MULTILINE)
_RATING = re.compile(r"rating (\d+(?:\.\d+)?)")
_PRICE = re.compile(r"((?:[A-Z]{3}\s)?[^\s\d,(]*\d[\d,]*(?:\.\d+)?)/night")
_ASK = re.compile(r"(?:(?<=[.?!])|^)\s*(?:Ask|Tell) the user\b[^.?!]*[.?!]", re.IGNORECASE)

_NEAR_WORDS = rule(
    r"\b(?:near(?:est|er|by)?|close(?:st|r)?\s+to|next\s+to|walk(?:ing)?\s+distance|by\s+the|around\s+the|"
    r"distance|far\s+from|closest|view\s+of)\b|近く|近い|そば|最寄り|歩いて"
)
_MAP_WORDS = rule(r"\bmaps?\b|地図|マップ")
_BOOK_WORDS = rule(r"\b(?:book(?:ing)?|reserve|reservation)\b|予約")
# What a hotel's booking terms say, which the hotel data does not hold.
_TERMS_WORDS = rule(
    r"\b(?:cancel(?:l?ation|l?ing)?|refund(?:able)?|deposit|payment|pay\s+(?:at|on)|check[\s-]?(?:in|out)\s+(?:time|hours?)|what\s+time\s+(?:is|can\s+\w+)\s+check)\b"
    r"|キャンセル|返金|支払|チェックイン(?:の)?時間|チェックアウト(?:の)?時間"
)
_DETAIL_WORDS = rule(
    r"\b(?:tell\s+me\s+(?:more\s+)?about|more\s+(?:about|on|info)|details?|describe|what\s+about\s+the|"
    r"address|amenities\s+(?:of|at))\b|詳しく|詳細"
)
_AGGREGATE_WORDS = rule(
    r"\bhow\s+many\b|\bwhich\s+(?:area|district|neighbou?rhood)s?\b|\bby\s+(?:district|area|price|amenit)|"
    r"\bprice\s+(?:range|band)s?\b|\bbreakdown\b|\boverview\b|\bcompare\s+(?:the\s+)?(?:areas|districts)\b|何軒"
)
_CHEAPER = rule(r"\bcheaper\b|\bless\s+expensive\b|\blower\s+price|\bmore\s+affordable\b|\bbudget\b|安い")
_PRICIER = rule(r"\b(?:nicer|fancier|more\s+luxurious|luxury|upscale|more\s+expensive|higher\s+end|splurge)\b|高級")
_BETTER = rule(r"\b(?:better|higher|best)[\s-]+(?:rated|reviewed|reviews|rating)\b|評価の高い")
_SORTS = (
    (rule(r"\bcheapest\b|\blowest\s+price\b|\bcheap\b|最安|安い|格安|安め|リーズナブル"), "price"),
    (rule(r"\bpopular\b|\bmost\s+reviewed\b|人気"), "popularity"),
    (rule(r"\btop[\s-]+rated\b|\bbest[\s-]+rated\b|\bhighest[\s-]+rated\b"), "rating"),
)
_STOP = {
    "i", "a", "the", "hotel", "hotels", "find", "show", "me", "need", "want", "search", "next", "this", "under",
    "below", "tomorrow", "today", "tonight", "please", "book", "stay", "room", "rooms", "what", "which",
    "how", "any", "some", "cheap", "cheaper", "luxury", "near", "in", "for", "and", "with", "from", "weekend",
    "week", "month", "best", "top", "good", "nice", "tell", "more", "about", "is", "are", "can", "could",
    "would", "hi", "hello", "thanks", "thank", "ok", "okay", "yes", "no", "where", "when", "who",
    "closest", "nearest", "one", "ones", "second", "first", "third", "last", "between", "around", "over",
    "rated", "rating", "stars", "star", "family", "friends", "guests", "people", "adults", "nights", "night",
}
_CALENDAR = {m.lower() for m in ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov",
                                 "Dec", "January", "February", "March", "April", "June", "July", "August",
                                 "September", "October", "November", "December", "Monday", "Tuesday",
                                 "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")}


@dataclass
class Conversation:
    """What the skill knows from the prompt: today, the currency, earlier tool uses."""

    today: date
    currency: str
    searches: list[dict[str, str]] = field(default_factory=list)  # params of earlier search_hotels calls
    cities: list[str] = field(default_factory=list)  # cities of earlier tool uses, oldest first
    shown: list[tuple[str, str]] = field(default_factory=list)  # (name, price) last shown to the user

    @classmethod
    def read(cls, request: OfflineRequest) -> Conversation:
        system = request.system
        match = _TODAY.search(system)
        today = date.fromisoformat(match.group(1)) if match else date.today()
        currency_match = _CURRENCY.search(system)
        conversation = cls(today=today, currency=currency_match.group(1) if currency_match else "USD")
        for call in _MEMORY_CALL.finditer(system):
            params = _params(call.group("params"))
            if call.group("tool") == "search_hotels":
                conversation.searches.append(params)
            if params.get("city"):
                conversation.cities.append(params["city"])
        shown = _SHOWN.findall(system)
        if shown:
            conversation.shown = [_split_shown(item) for item in re.split(r";\s*(?=\d+\.\s)", shown[-1])]
        return conversation

    @property
    def last_search(self) -> dict[str, str] | None:
        return self.searches[-1] if self.searches else None

    @property
    def last_city(self) -> str | None:
        return self.cities[-1] if self.cities else None


def _params(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in re.split(r",\s+(?=\w+=)", text):
        key, _, value = part.partition("=")
        if key and value:
            out[key.strip()] = value.strip()
    return out


def _split_shown(item: str) -> tuple[str, str]:
    item = re.sub(r"^\d+\.\s*", "", item.strip())
    match = re.match(r"(?P<name>.+?)\s*\((?P<price>[^)]*)\)$", item)
    if match:
        return match.group("name"), match.group("price")
    return item, ""


def _amount(price_text: str) -> float | None:
    match = re.search(r"\d[\d,]*(?:\.\d+)?", price_text)
    return float(match.group(0).replace(",", "")) if match else None


# --- reading the user's words ----------------------------------------------------------------


def detect_city(text: str) -> geo.City | None:
    """The known city the text names first (by name or alias, any script)."""
    norm = geo.normalize(text)
    best: tuple[int, int, geo.City] | None = None
    for city in geo.CITIES.values():
        for name in (city.name, *city.aliases):
            key = geo.normalize(name)
            if not key:
                continue
            if key.isascii():
                match = _word(key).search(norm)
                position = match.start() if match else -1
            else:
                position = norm.find(key)
            if position >= 0 and (best is None or (position, -len(key)) < (best[0], best[1])):
                best = (position, -len(key), city)
    return best[2] if best else None


@functools.cache
def _word(key: str) -> re.Pattern[str]:
    """`key` (normalized, ASCII) as a word of its own: no Latin letter or digit touches it; kana or
    kanji may (「Shoreditchで」). Compiled once per name: the cities' and sights' names are more
    than `re`'s own cache holds."""
    return re.compile(rf"(?<!{LATIN_WORD}){re.escape(key)}(?!{LATIN_WORD})")


_GOING_TO = rule(r"\b(?:in|to|at|visiting)\s+([A-Za-zÀ-ÿ][\w'-]+(?:\s+[A-Z][\w'-]+)?)", 0)
_CAPITALISED_WORD = rule(r"\b([A-Z][a-zà-ÿ'-]{2,})\b", 0)


def unknown_place(text: str) -> str | None:
    """A word that looks like a place the user named but no known city matches ('Pariss')."""
    match = _GOING_TO.search(text)
    candidates = [match.group(1)] if match else []
    candidates += _CAPITALISED_WORD.findall(text)
    for candidate in candidates:
        first = candidate.split()[0].lower()
        if first in _STOP or first in _CALENDAR or not re.search(r"[a-zA-Z]", candidate):
            continue
        if extract_price_range(candidate) or first.isdigit():
            continue
        return candidate
    return None


def detect_landmark(text: str, city: geo.City | None) -> tuple[geo.City, geo.Landmark] | None:
    norm = geo.normalize(text)
    cities = [city] if city else list(geo.CITIES.values())
    for candidate in cities:
        generic = {"museum", "tower", "the", "de", "of", "park", "temple", "market", "palace", "bridge",
                   "square", "station", "street", "night", "hall", "gate", "garden", "gardens", "beach",
                   "memorial", "national", "church", "cathedral", "city", "centre", "center", "downtown",
                   *geo.normalize(candidate.name).split()}
        for landmark in (*candidate.landmarks, candidate.centre):  # the centre last: a sight's name wins
            key = geo.normalize(landmark.name)
            if key in norm:
                return candidate, landmark
            for alias in landmark.aliases:
                other = geo.normalize(alias)
                if other and (_word(other).search(norm) if other.isascii()
                              else other.replace("・", "") in norm.replace("・", "")):
                    return candidate, landmark
            words = [w for w in key.split() if len(w) >= 4 and w not in generic]
            if words and all(_word(w).search(norm) for w in words[:1]):
                return candidate, landmark
    return None


# An amenity right after one of these ("without breakfast", "no pool") or right before one of
# these ("breakfast not needed") is one the traveller does not want: it is not searched for.
AMENITY_DECLINED_BEFORE = rule(
    r"\b(?:without|no|not|skip|don t need|dont need|do not need|no need for)(?:\s+(?:a|an|the|any|free))?\s*$"
)
AMENITY_DECLINED_AFTER = rule(r"^\s*(?:is\s+|are\s+)?(?:not\s+(?:needed|required|necessary)|unnecessary|optional)\b")


_PETS = rule(r"\b(?:pets?|dogs?)\b")


def detect_amenities(text: str) -> list[str]:
    norm = geo.normalize(text).replace("wi fi", "wifi")
    found: list[str] = []
    words = [word.strip(",.;:!?") for word in norm.split()]
    declined: set[str] = set()
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            canonical = normalize_amenity(" ".join(words[i : i + n]))
            if canonical not in AMENITIES or canonical == "family-rooms":
                continue
            before, after = " ".join(words[:i]), " ".join(words[i + n :])
            if AMENITY_DECLINED_BEFORE.search(before) or AMENITY_DECLINED_AFTER.match(after):
                declined.add(canonical)
            elif canonical not in found:
                found.append(canonical)
    if _PETS.search(norm) and "pet-friendly" not in {*found, *declined}:
        found.append("pet-friendly")
    found = [amenity for amenity in found if amenity not in declined]
    if is_japanese(text):
        lowered = text.lower()
        for word, canonical in AMENITY_WORDS_JA.items():
            at = lowered.find(word.lower())
            if at >= 0 and canonical not in found:
                after = lowered[at + len(word) :].lstrip("はがもの ")
                if not after.startswith(DECLINED_AFTER_JA):
                    found.append(canonical)
    return sorted(found)


def detect_district(text: str, city: geo.City) -> str | None:
    """A district of `city` the text names, in full ('Le Marais') or by a distinctive part ('Marais')."""
    norm = geo.normalize(text)
    for district in city.districts:
        for name in (district.name, *district.aliases):
            key = geo.normalize(name)
            if key and (_word(key).search(norm) if key.isascii() else key in norm):
                return district.name
    words = norm.split()
    own = {geo.normalize(name) for name in (city.name, *city.aliases)}
    tried: set[str] = set()  # a phrase said twice is looked up once
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            phrase = " ".join(words[i : i + n])
            if phrase in tried:
                continue
            tried.add(phrase)
            if len(phrase) >= 4 and phrase not in _STOP and phrase not in _CALENDAR and phrase not in own:
                found = city.district(phrase)
                if found is not None:
                    return found.name
    return None


def has_hotel_request(text: str, today: date) -> bool:
    """Whether the text asks for anything hotel-related (else it is thanks, small talk…)."""
    if _searches(text, today):
        return True
    checks = (
        extract_ordinal(text), _DETAIL_WORDS.search(text), _AGGREGATE_WORDS.search(text),
        _CHEAPER.search(text), _PRICIER.search(text), _BETTER.search(text),
        *(p.search(text) for p, _ in _SORTS),
        re.search(r"\b(?:hotels?|stays?|rooms?|accommodation|hostels?|other|others|more|else|instead|"
                  r"options?|alternatives?)\b|ホテル|宿", text, re.IGNORECASE),
    )
    return any(c is not None and c is not False for c in checks)


def _searches(text: str, today: date) -> bool:
    """Whether the text asks for a search of its own (dates, a budget, guests, a rating, stars,
    amenities, a landmark): "book a room for next weekend" searches, "book the second one" does not."""
    return any(found is not None and found is not False for found in (
        extract_stay(text, today), extract_price_range(text), extract_guests(text), extract_min_rating(text),
        extract_stars(text), detect_amenities(text) or None, _NEAR_WORDS.search(text)))


def _at(names: list[str], position: int) -> str | None:
    """The name at a position of a list (1 the first, -1 the last), if there is one."""
    index = position - 1 if position > 0 else len(names) + position
    return names[index] if 0 <= index < len(names) else None


# --- the skill -------------------------------------------------------------------------------


class HotelSkill:
    def respond(self, request: OfflineRequest) -> AIMessage | dict[str, Any] | None:
        if request.schema is not None:
            if request.schema.get("title") != ANSWER_SCHEMA:
                return None
            return self.answer(request)
        if not request.tool_names & HOTEL_TOOLS:
            return None
        if request.tool_results:
            return AIMessage(content=relay(request.tool_results, language_of(request.last_human)))
        return self.plan(request)

    # --- tool-calling mode --------------------------------------------------------------
    def plan(self, request: OfflineRequest) -> AIMessage:
        text = request.last_human
        conversation = Conversation.read(request)
        language = language_of(text)
        reading = read_places(text)
        if reading.question:
            first, second = reading.question
            return AIMessage(content=say("which_one", language, first=city_name(first, language),
                                         second=city_name(second, language)))
        city = reading.city
        previous = conversation.last_search

        ordinal = extract_ordinal(text)
        if city is None and reading.place is None and _BOOK_WORDS.search(text) and not _searches(text, conversation.today):
            name = self._named_hotel(text, conversation, ordinal) if conversation.shown else None
            return AIMessage(content=say("cannot_book_named" if name else "cannot_book", language, name=name))
        if city is None and reading.place is None and _TERMS_WORDS.search(text) and not _searches(text, conversation.today):
            return AIMessage(content=say("no_terms", language))
        if previous and city is None and reading.place is None and _MAP_WORDS.search(text) \
                and not _searches(text, conversation.today):  # "show me the map": the last search again, its map with it
            again = self._search_args(text, conversation, None, reading)
            if isinstance(again, dict):
                return _calls(("search_hotels", again))
        if conversation.shown and (ordinal or _DETAIL_WORDS.search(text)) and city is None:
            shown = [name for name, _ in conversation.shown]
            several = [name for name in (_at(shown, n) for n in extract_ordinals(text)) if name]
            if len(several) >= 2:  # "the difference between the first and the second"
                return _calls(("hotel_details", {"names": several}))
            name = self._named_hotel(text, conversation, ordinal)
            if name:
                return _calls(("hotel_details", {"names": [name]}))

        if (city is None and previous is not None and reading.place is None and unknown_place(text) is None
                and not has_hotel_request(text, conversation.today)):
            return AIMessage(content=say("welcome" if only_thanks(text) else "anything_else", language))

        landmark_city = city or (geo.find_city(conversation.last_city) if conversation.last_city else None)
        landmark = detect_landmark(text, landmark_city) if _NEAR_WORDS.search(text) else None
        # The city searched last, named again ("closest to Kyoto Station" after Kyoto), is no new search.
        new_city = city is not None and city.name != conversation.last_city
        new_search = new_city or extract_stay(text, conversation.today) is not None or previous is None

        if _AGGREGATE_WORDS.search(text) and (city or landmark_city):
            target = city or landmark_city
            assert target is not None
            by = "amenity" if re.search(r"amenit|facilit", text, re.I) else (
                "price_band" if re.search(r"price|budget|cost", text, re.I) else "district")
            args: dict[str, Any] = {"city": target.name, "by": by}
            stay = extract_stay(text, conversation.today)
            if stay:
                args |= {"check_in": stay.check_in.isoformat(), "check_out": stay.check_out.isoformat()}
            return _calls(("aggregate_hotels", args))

        if landmark is None and not new_search and landmark_city and _NEAR_WORDS.search(text) \
                and (district := landmark_city.district(detect_district(text, landmark_city) or "")) is not None:
            landmark = landmark_city, district.point  # "which is closest to Gion?": ranked, not a new search in Gion
        if landmark is not None and not new_search:
            return _calls(("hotels_near_landmark", {"landmark": landmark[1].name, "city": landmark[0].name}))

        search = self._search_args(text, conversation, city, reading)
        if isinstance(search, str):
            return AIMessage(content=search)
        calls: list[tuple[str, dict[str, Any]]] = [("search_hotels", search)]
        if landmark is not None:
            calls.append(("hotels_near_landmark", {"landmark": landmark[1].name, "city": search["city"]}))
        return _calls(*calls)

    @staticmethod
    def _named_hotel(text: str, conversation: Conversation, ordinal: int | None) -> str | None:
        names = [name for name, _ in conversation.shown]
        if ordinal:
            return _at(names, ordinal)
        norm = geo.normalize(text)
        for name in names:
            if geo.normalize(name) in norm:
                return name
        return names[0] if len(names) == 1 else None

    def _search_args(
        self, text: str, conversation: Conversation, city: geo.City | None, reading: Reading
    ) -> dict[str, Any] | str:
        previous = conversation.last_search or {}
        today = conversation.today
        place = None if city is not None else (reading.place or unknown_place(text))
        if place is not None and previous:
            known = geo.find_city(previous["city"])
            if known is not None and (detect_district(place, known) or known.landmark(place)):
                place = None  # a part of the city already searched, not a new city
        follow_up = bool(previous) and place is None and (city is None or city.name == previous.get("city"))
        if city is not None:
            city_name = city.name
        elif place is not None:
            city_name = place
        elif previous:
            city_name = previous["city"]
        else:
            return say("which_city", language_of(text))
        args: dict[str, Any] = {"city": city_name}
        stay = _corrected_stay(reading, today)
        if stay is not None:
            args["check_in"], args["check_out"] = stay.check_in.isoformat(), stay.check_out.isoformat()
        elif previous.get("check_in") and previous.get("check_out"):
            args["check_in"], args["check_out"] = previous["check_in"], previous["check_out"]
        else:
            args["check_in"] = (today + timedelta(days=1)).isoformat()
            args["check_out"] = (today + timedelta(days=2)).isoformat()
        nights = max(1, (date.fromisoformat(args["check_out"]) - date.fromisoformat(args["check_in"])).days)
        guests = _latest(extract_guests, reading)
        args["guests"] = guests if guests is not None else int(previous.get("guests", 2))

        price = _corrected_price(reading)
        if price is not None:
            divisor = nights if price.per == "total" else 1
            if price.min is not None:
                args["min_price"] = round(price.min / divisor, 2)
            if price.max is not None:
                args["max_price"] = round(price.max / divisor, 2)
            args["currency"] = price.currency or conversation.currency
        elif previous:
            for key in ("min_price", "max_price", "currency"):
                if key in previous:
                    args[key] = float(previous[key]) if key != "currency" else previous[key]

        rating = _latest(extract_min_rating, reading)
        if rating is not None:
            args["min_rating"] = rating.on_scale(5)
        elif follow_up and "min_rating" in previous:
            args["min_rating"] = float(previous["min_rating"])
        stars = _latest(extract_stars, reading)
        if stars is not None:
            args["min_stars"] = stars
        elif follow_up and "min_stars" in previous:
            args["min_stars"] = int(previous["min_stars"])
        amenities = detect_amenities(text)
        if not amenities and follow_up and previous.get("amenities"):
            amenities = previous["amenities"].split(",")
        if amenities:
            args["amenities"] = amenities
        known = geo.find_city(city_name)
        district = detect_district(text, known) if known else None
        if district is None and follow_up:
            district = previous.get("district")
        if district:
            args["district"] = district

        shown_in = previous.get("currency") or conversation.currency  # the currency of the prices shown
        sort = previous.get("sort", "rating") if follow_up else "rating"
        for pattern, name in _SORTS:
            if pattern.search(text):
                sort = name
        if follow_up and _CHEAPER.search(text) and price is None:
            shown_prices = [p for p in (_amount(price) for _, price in conversation.shown) if p is not None]
            if shown_prices:
                args["max_price"] = max(1.0, min(shown_prices) - 1)
                args["currency"] = shown_in
            elif "max_price" in args:
                args["max_price"] = round(float(args["max_price"]) * 0.8, 2)
            args.pop("min_price", None)
            sort = "price"
        if follow_up and _PRICIER.search(text) and price is None:
            shown_prices = [p for p in (_amount(price) for _, price in conversation.shown) if p is not None]
            args.pop("max_price", None)
            if shown_prices:
                args["min_price"] = max(shown_prices) + 1
                args["currency"] = shown_in
            sort = "stars"
        if _BETTER.search(text):
            sort = "rating"
        args["sort"] = sort
        return args

    # --- structured-output mode ---------------------------------------------------------
    def answer(self, request: OfflineRequest) -> dict[str, Any]:
        results = request.tool_results
        text = request.last_human
        language = language_of(text)
        calls: dict[str, dict[str, Any]] = {
            str(c["id"]): dict(c) for m in request.turn if isinstance(m, AIMessage) for c in m.tool_calls
        }
        answer: dict[str, Any] | None = None
        for message in reversed(results):
            answer = self._from_result(message, calls.get(message.tool_call_id or ""), language)
            if answer is not None:
                break
        if answer is None:
            answer = {"text": relay(results, language) if results else say("nothing", language), "hotels": []}
        elif results and results[-1].name == "hotels_near_landmark":  # searched in the same turn: say what was found
            search = next((m for m in results if m.name == "search_hotels" and _HOTEL_LINE.search(m.text)), None)
            searched = self._searched(search, calls.get(search.tool_call_id or ""), language) if search else None
            if searched:
                answer["text"] = f"{searched}{'' if language == 'ja' else ' '}{answer['text']}"
        unused = not_used(text, understood_words() | _words_of(text, results, request.system), language)
        if unused:
            quoted = ", ".join(f"“{w}”" for w in unused) if language == "en" else "、".join(f"「{w}」" for w in unused)
            answer["text"] += " " + say("not_used", language, words=quoted)
        return answer

    @staticmethod
    def _searched(message: ToolMessage, call: dict[str, Any] | None, language: Language) -> str | None:
        """What a search found, in a sentence ("12 hotels available in Rome for Dec 11–13, … sorted by rating.")."""
        head = message.text.split("\n", 1)[0].rstrip(":").strip()
        found, args = _FOUND.match(head), (call or {}).get("args") or {}
        if language != "ja":
            return say("searched", language, head=head if head.endswith(".") else head + ".")
        if found is None or not (args.get("check_in") and args.get("check_out")):
            return None
        stay = stay_ja(date.fromisoformat(str(args["check_in"])), date.fromisoformat(str(args["check_out"])))
        return say("searched", language, city=city_name(found.group("city"), language), stay=stay,
                   nights=found.group("nights"), guests=found.group("guests"), available=found.group("n"))

    @staticmethod
    def _from_result(message: ToolMessage, call: dict[str, Any] | None, language: Language) -> dict[str, Any] | None:
        content = message.text
        name = message.name or ""
        if name == "hotel_details":
            blocks = [b for b in content.split("\n\n") if " — " in b.split("\n", 1)[0]]
            if not blocks:
                return None
            hotels = []
            for block in blocks[:3]:
                head = block.split("\n", 1)[0]
                hotel_name = head.split(" — ", 1)[0].strip()
                hotels.append(_pick(hotel_name, head))
            text = content.split("\n\n")[0] if len(blocks) == 1 else content
            return {"text": _retold_ja(text) if language == "ja" else text, "hotels": hotels}
        lines = list(_HOTEL_LINE.finditer(content))
        if not lines:
            return None
        top = lines[:3]
        head = content.split("\n", 1)[0]
        hotels = [_pick(m.group("name"), m.group("rest")) for m in top]
        args = (call or {}).get("args") or {}
        if name == "hotels_near_landmark":
            first = top[0]
            distance = first.group("rest").split(",", 1)[0]
            text = say("closest", language, head=head.rstrip(":"), name=first.group("name"), distance=distance,
                       landmark=landmark_name(str(args.get("landmark", "")), language))
            if len(top) > 1:
                others = joined([f"{m.group('name')} ({m.group('rest').split(',', 1)[0]})" for m in top[1:]], language)
                text += say("next", language, others=others)
            return {"text": text, "hotels": hotels}
        picks = joined([_described(h, language) for h in hotels], language)
        found = _FOUND.match(head)
        if language == "ja" and found and args.get("check_in") and args.get("check_out"):
            stay = stay_ja(date.fromisoformat(str(args["check_in"])), date.fromisoformat(str(args["check_out"])))
            text = say("found", language, city=city_name(found.group("city"), language), stay=stay,
                       nights=found.group("nights"), guests=found.group("guests"), available=found.group("n"),
                       picks=picks)
        else:
            lead = "My pick" if len(hotels) == 1 else f"My top {len(hotels)}"
            text = say("found", "en", head=head, top=lead, picks=picks)
            if language == "ja":
                text = say("english_follows", language, text=text)
        return {"text": text, "hotels": hotels}


_FOUND = re.compile(r"^(?P<n>\d+) hotels? available in (?P<city>.+?) for .+? \((?P<nights>\d+) nights?, "
                    r"(?P<guests>\d+) guests?\)")


def _described(hotel: dict[str, str], language: Language) -> str:
    parts = [hotel["price"] + say("per_night", language) if hotel["price"] else "",
             say("rated", language, rating=hotel["rating"]) if hotel["rating"] else ""]
    inside = ("、" if language == "ja" else ", ").join(p for p in parts if p)
    return f"{hotel['name']} ({inside})" if inside else hotel["name"]


@functools.cache
def understood_words() -> frozenset[str]:
    """Every word some rule reads: the literals of the patterns of the extractors and of this
    skill, the city tables (names, aliases, districts, sights), the amenities, the stop words."""
    words: set[str] = set(_STOP) | _CALENDAR
    modules = (sys.modules[__name__], hotel_extract, understand, core_extract)
    for module in modules:
        for value in vars(module).values():
            sources: list[str] = []
            if isinstance(value, re.Pattern):
                sources.append(value.pattern)
            elif isinstance(value, str):
                sources.append(value)
            elif isinstance(value, dict | tuple | list | set | frozenset):
                for item in value:
                    if isinstance(item, re.Pattern):
                        sources.append(item.pattern)
                    elif isinstance(item, str):
                        sources.append(item)
                    elif isinstance(item, tuple) and item and isinstance(item[0], re.Pattern):
                        sources.append(item[0].pattern)
            for source in sources:
                words.update(re.findall(r"[a-z]{3,}", source.lower()))
                words.update(re.findall(r"[\u3040-\u30ff\u3400-\u9fff]+", source))
    for amenity in (*AMENITIES, *_AMENITY_ALIASES, *AMENITY_WORDS_JA):
        words.update(re.split(r"[-/]", amenity))
    words.update(("付き", "付", "あり", "付きの"))  # 朝食付き, 駐車場あり: the amenity's own ending
    return frozenset(words)


@functools.cache
def _place_names() -> tuple[tuple[str, str], ...]:
    """(normalised name, name) of every city, district and sight, any script."""
    names = []
    for city in geo.CITIES.values():
        names += [city.name, *city.aliases]
        names += [n for d in city.districts for n in (d.name, *d.aliases)]
        names += [n for lm in (*city.landmarks, city.centre) for n in (lm.name, *lm.aliases)]
    return tuple((geo.normalize(n), n) for n in names if geo.normalize(n))


def _words_of(text: str, results: list[ToolMessage], system: str) -> set[str]:
    """The places the request names ("Sea Point" counts only when written whole) and the words
    of what the tools returned and of earlier answers (hotel names a follow-up repeats)."""
    norm = geo.normalize(text)
    words: set[str] = set()
    for key, name in _place_names():
        if key in norm:
            words.update(key.split())
            words.add(name)
    earlier = system + "\n" + "\n".join(m.text for m in results)
    return words | {geo.normalize(w) for w in re.findall(r"[A-Za-z][A-Za-z'-]{2,}", earlier)}


T = TypeVar("T")


def _latest(extract: Callable[[str], T | None], reading: Reading) -> T | None:
    """What the traveller said last: the tail of a correction, else the part before it."""
    value = extract(reading.tail)
    if value is None and reading.head:
        value = extract(reading.head)
    return value


def _corrected_stay(reading: Reading, today: date) -> Stay | None:
    """'Tokyo for 3 nights from Dec 18, actually 2 nights' keeps Dec 18 and takes 2 nights."""
    stay = extract_stay(reading.tail, today)
    if stay is not None or not reading.head:
        return stay
    earlier = extract_stay(reading.head, today)
    nights = extract_nights(reading.tail)
    if earlier is not None and nights:
        return Stay(earlier.check_in, earlier.check_in + timedelta(days=nights))
    return earlier


def _corrected_price(reading: Reading) -> PriceRange | None:
    """'under 150 euros, no wait, under 120': 120, still in euros."""
    price = extract_price_range(reading.tail)
    earlier = extract_price_range(reading.head) if reading.head else None
    if price is None:
        return earlier
    if price.currency is None and earlier is not None and earlier.currency:
        return replace(price, currency=earlier.currency)
    return price


def _pick(name: str, rest: str) -> dict[str, str]:
    rating = _RATING.search(rest)
    price = _PRICE.search(rest)
    return {"name": name.strip(), "rating": rating.group(1) if rating else "", "price": price.group(1) if price else ""}


def _calls(*calls: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(content="", tool_calls=[tool_call(name, args) for name, args in calls])


def relay(results: list[ToolMessage], language: Language = "en") -> str:
    """Tool messages retold for the user, without the instructions meant for the model."""
    texts = []
    for message in results:
        text = _ASK.sub("", message.text).strip()
        if text.startswith("Not run:"):
            continue
        if degraded(message):
            text = say("unavailable", language)
        elif language == "ja":
            text = _retold_ja(text)
        texts.append(text)
    return "\n\n".join(texts) or say("nothing", language)


# hotel_details' report of one hotel (tools.hotel_details), to retell in Japanese
_DETAILS = re.compile(
    r"(?P<name>[^\n]+?) — (?P<district>[^,\n]*), (?P<city>[^;\n]*); (?P<stars>\d)★, rating (?P<rating>[\d.]+)/5 "
    r"\((?P<reviews>[\d,]+) reviews\); (?:(?P<night>\S+)/night, total (?P<total>\S+) for (?P<stay>[^\n]+?)"
    r"|not available for (?P<away>[^\n]+?))\."
    r"(?:\nAddress: (?P<address>[^\n]+?)\. Amenities: (?P<amenities>[^\n]+?)\.(?:\n(?P<description>(?s:.+)))?)?\Z"
)
_STAY = re.compile(
    r"(?P<m1>[A-Z][a-z]{2}) (?P<d1>\d{1,2})(?:, \d{4})?(?:–| – (?P<m2>[A-Z][a-z]{2}) )(?P<d2>\d{1,2}), (?P<y>\d{4})"
)


def _details_ja(block: str) -> str:
    found = _DETAILS.match(block)
    assert found is not None
    g = found.groupdict()
    stay = _stay_ja_of(g["stay"] or g["away"])
    price = (say("details_price", "ja", stay=stay, night=g["night"], total=g["total"]) if g["night"]
             else say("details_unavailable", "ja", stay=stay))
    amenities = "、".join(AMENITIES_JA.get(a, a) for a in (g["amenities"] or "").split(", ") if a and a != "none listed")
    text = say("details", "ja", name=g["name"], city=city_name(g["city"], "ja"), district=g["district"],
               stars=g["stars"], rating=g["rating"], reviews=g["reviews"], price=price,
               address=g["address"] or "—", amenities=amenities or "記載なし")
    return text + ("\n" + say("description_follows", "ja", text=g["description"].strip()) if g["description"] else "")


def _stay_ja_of(label: str) -> str:
    """tools.stay_label's 'Dec 11–13, 2026' as stay_ja says it: 12月11日〜13日 ('Dec 30, 2026 – Jan 2, 2027' → 12月30日〜1月2日)."""
    found = _STAY.fullmatch(label.strip())
    try:
        assert found is not None
        first = datetime.strptime(found["m1"], "%b").month
        last = datetime.strptime(found["m2"], "%b").month if found["m2"] else first
        year = int(found["y"])
        return stay_ja(date(year - (first > last), first, int(found["d1"])), date(year, last, int(found["d2"])))
    except (AssertionError, ValueError):
        return label


_NONE_FOUND = re.compile(r"^No hotels available in (?P<city>.+?) for (?P<label>.+?) with these filters\.\s*")
_CHEAPEST = re.compile(r"The cheapest available is (?P<name>.+?) at (?P<price>\S+)/night\.")
_PRICIEST = re.compile(r"The most expensive available is (?P<price>\S+)/night\.")


def _retold_ja(text: str) -> str:
    """A tool's English report in Japanese where its shape is known, else after a Japanese lead."""
    blocks = text.split("\n\n")
    if all(_DETAILS.match(block) for block in blocks):
        return "\n\n".join(_details_ja(block) for block in blocks)
    none = _NONE_FOUND.match(text)
    if none is None:
        return say("english_follows", "ja", text=text)
    parts = [say("none_found", "ja", city=city_name(none.group("city"), "ja"))]
    rest = text[none.end():]
    if cheapest := _CHEAPEST.search(rest):
        parts.append(say("cheapest", "ja", name=cheapest.group("name"), price=cheapest.group("price")))
        rest = rest.replace(cheapest.group(0), "")
    elif priciest := _PRICIEST.search(rest):
        parts.append(say("priciest", "ja", price=priciest.group("price")))
        rest = rest.replace(priciest.group(0), "")
    if rest.strip():
        parts.append(rest.strip())
    return "".join(parts)
