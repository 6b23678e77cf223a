"""The /hotel agent's tools. Each returns a ToolResult: a short answer for the model, and the
bulky data (ids, coordinates, images, exact prices) as metadata for the system. `TOOLS` defines
them; `HotelTool.as_tool` makes the LangChain tools the graph's ToolNode (bot.tools) runs."""

from __future__ import annotations

import difflib
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import ToolRuntime
from pydantic import BaseModel, Field, ValidationError

from agents.hotel import geo
from agents.hotel.enrich import convert, enriched, format_money, known_currency, match_hotel
from agents.hotel.phrasebook import city_name, landmark_name, language_in, names_joined, say
from agents.hotel.state import HotelFacts, HotelState, MemoryEntry, TurnRecord, new_turn
from agents.hotel.store import AMENITIES, HotelOffer, HotelQuery, HotelStore, normalize_amenity
from bot.events import Status
from bot.locale import Language

SHOWN_TO_MODEL = 10  # hotels listed in a tool answer
KEPT_PER_RESULT = 20  # hotels kept in metadata per tool result
MAX_NIGHTS = 30
MAX_GUESTS = 12
BOOKING_HORIZON_DAYS = 365


class ToolResult(BaseModel):
    """What a tool returns: `answer` for the model; everything else for the system."""

    answer: str
    status: str = ""  # shown to the user once the tool has run, in the request's language ("Found 15 hotels…")
    hotels: list[dict[str, Any]] = Field(default_factory=list)  # HotelFacts, ranked
    memory: dict[str, Any] | None = None  # a MemoryEntry summarising this call for later turns
    payload: list[dict[str, Any]] = Field(default_factory=list)  # full records (see for_model)
    ok: bool = True

    def for_model(self, full_records: bool = False) -> str:
        """The tool message text. `full_records` appends every record, as a naive agent that hands
        the model whole API results would (used to measure what selective context saves)."""
        if full_records and self.payload:
            return self.answer + "\n\nRecords: " + json.dumps(self.payload, default=str)
        return self.answer


def problem(text: str) -> ToolResult:
    return ToolResult(answer=text, status="", ok=False)


# --- arguments (these schemas are all the model sees) --------------------------------------


class SearchHotelsArgs(BaseModel):
    """Search hotels in a city available for the dates, with filters. Prices are per night."""

    city: str
    check_in: date
    check_out: date
    guests: int = 2
    min_price: float | None = None
    max_price: float | None = None
    currency: str | None = Field(None, description="ISO code of min/max_price; default the user's")
    min_rating: float | None = Field(None, description="guest rating, 0-5")
    min_stars: int | None = None
    amenities: list[str] = Field(default_factory=list)
    district: str | None = None
    sort: Literal["price", "rating", "stars", "popularity"] = "rating"


class AggregateHotelsArgs(BaseModel):
    """Count hotels in a city and their price ranges, grouped by district, price band or amenity."""

    city: str
    by: Literal["district", "price_band", "amenity"] = "district"
    check_in: date | None = None
    check_out: date | None = None


class HotelDetailsArgs(BaseModel):
    """Full details (address, amenities, description, price) of hotels named earlier."""

    names: list[str] = Field(min_length=1, max_length=3)
    city: str | None = None


class HotelsNearLandmarkArgs(BaseModel):
    """Rank hotels by distance to a landmark (a sight, the city centre, or a district of `city`): the
    last search's results in that city, else all."""

    landmark: str
    city: str | None = None
    limit: int = Field(5, ge=1, le=10)


# --- helpers ---------------------------------------------------------------------------------


def user_currency(tool_context: Mapping[str, Any]) -> str:
    code = str(tool_context.get("currency") or "USD").upper()
    return code if known_currency(code) else "USD"


def shown_currency(tool_context: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> str:
    """The currency prices are shown in: the one the traveller last searched with ("under 30,000
    yen" → JPY), else the user's (from the platform or the console's default)."""
    for entry in reversed((metadata or {}).get("memory") or []):
        code = str((entry.get("params") or {}).get("currency") or "").upper()
        if entry.get("tool") == "search_hotels" and known_currency(code):
            return code
    return user_currency(tool_context)


def today_of(tool_context: Mapping[str, Any]) -> date:
    raw = tool_context.get("today")
    return date.fromisoformat(raw) if raw else date.today()


def stay_label(check_in: date, check_out: date) -> str:
    """'Dec 11–13, 2026' or 'Dec 30, 2026 – Jan 2, 2027'."""
    if check_in.year != check_out.year:
        return f"{check_in:%b} {check_in.day}, {check_in.year} – {check_out:%b} {check_out.day}, {check_out.year}"
    if check_in.month != check_out.month:
        return f"{check_in:%b} {check_in.day} – {check_out:%b} {check_out.day}, {check_in.year}"
    return f"{check_in:%b} {check_in.day}–{check_out.day}, {check_in.year}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def price_for_user(amount: float | None, hotel_currency: str, currency: str) -> str:
    if amount is None:
        return "price n/a"
    if not known_currency(hotel_currency):
        return format_money(amount, hotel_currency)
    return format_money(convert(amount, hotel_currency, currency), currency)


def facts(offer: HotelOffer, check_in: date, check_out: date) -> HotelFacts:
    hotel = offer.hotel
    return HotelFacts(
        id=hotel.id, name=hotel.name, city=hotel.city, district=hotel.district or "", stars=hotel.stars,
        rating=hotel.guest_rating, review_count=hotel.review_count, latitude=hotel.latitude,
        longitude=hotel.longitude, thumbnail_url=hotel.thumbnail_url or "", currency=hotel.currency,
        price=offer.avg_nightly_price if offer.available else None,
        total=offer.total_price if offer.available else None, available=offer.available,
        check_in=check_in.isoformat(), check_out=check_out.isoformat(),
    )


def hotel_line(i: int, hotel: HotelFacts, currency: str, extra: str = "") -> str:
    parts = [hotel.get("district") or "", f"{hotel.get('stars', 0)}★", f"rating {hotel.get('rating', 0):.1f}/5"]
    if hotel.get("available", True) and hotel.get("price") is not None:
        parts.append(price_for_user(hotel["price"], hotel.get("currency", currency), currency) + "/night")
    else:
        parts.append("not available")
    lead = f"{i}. {hotel['name']} — "
    return lead + (extra + ", " if extra else "") + ", ".join(p for p in parts if p)


def record(offer: HotelOffer) -> dict[str, Any]:
    return offer.model_dump(mode="json")


def _day(value: date) -> str:
    return f"{value:%a} {value:%b} {value.day}, {value.year}"


def check_stay(check_in: date, check_out: date, today: date) -> str | None:
    if check_in < today:
        return (f"The check-in date {_day(check_in)} is in the past (today is {_day(today)}). "
                "Ask the user for new dates.")
    if check_out <= check_in:
        return (f"The check-out date {_day(check_out)} must be after the check-in date {_day(check_in)}. "
                "Ask the user for the right dates.")
    if (check_out - check_in).days > MAX_NIGHTS:
        return f"Stays are limited to {MAX_NIGHTS} nights. Ask the user to shorten the stay."
    if check_in > today + timedelta(days=BOOKING_HORIZON_DAYS):
        return f"Hotels can be searched up to {BOOKING_HORIZON_DAYS} days ahead. Ask the user for earlier dates."
    return None


def resolve_city(name: str) -> geo.City | ToolResult:
    city = geo.find_city(name)
    if city is not None:
        return city
    suggestions = geo.suggest_cities(name)
    if suggestions:
        return problem(f"Unknown city '{name}'. Did you mean: {', '.join(suggestions)}? Ask the user.")
    known = ", ".join(sorted(c.name for c in geo.CITIES.values()))
    return problem(f"Unknown city '{name}'. Hotels are available in: {known}. Ask the user.")


def summary_params(args: BaseModel, *, skip: tuple[str, ...] = ()) -> str:
    values = args.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
    parts = []
    for key, value in values.items():
        if key in skip or value in ([], "", None):
            continue
        parts.append(f"{key}={','.join(value) if isinstance(value, list) else value}")
    return ", ".join(parts)


def default_stay(tool_context: dict[str, Any], metadata: dict[str, Any], city: str) -> tuple[date, date]:
    """The dates of the last search in `city`, else tomorrow for one night."""
    for entry in reversed(metadata.get("memory") or []):
        params = entry.get("params") or {}
        if params.get("city") == city and params.get("check_in") and params.get("check_out"):
            return date.fromisoformat(params["check_in"]), date.fromisoformat(params["check_out"])
    tomorrow = today_of(tool_context) + timedelta(days=1)
    return tomorrow, tomorrow + timedelta(days=1)


# --- tools -----------------------------------------------------------------------------------


async def search_hotels(args: SearchHotelsArgs, store: HotelStore, tool_context: dict[str, Any]) -> ToolResult:
    language = language_in(tool_context)
    city = resolve_city(args.city)
    if isinstance(city, ToolResult):
        return city
    issue = check_stay(args.check_in, args.check_out, today_of(tool_context))
    if issue:
        return problem(issue)
    if not 1 <= args.guests <= MAX_GUESTS:
        return problem(f"Guests must be between 1 and {MAX_GUESTS}. Ask the user how many people are travelling.")
    price_currency = (args.currency or user_currency(tool_context)).upper()
    currency = price_currency if known_currency(price_currency) else user_currency(tool_context)
    if not known_currency(price_currency):
        return problem(f"Unknown currency '{args.currency}'. Use an ISO code such as USD or EUR.")
    for label, value in (("min_price", args.min_price), ("max_price", args.max_price)):
        if value is not None and value < 0:
            return problem(f"{label} cannot be negative ({value:g}).")
    if args.min_price is not None and args.max_price is not None and args.min_price > args.max_price:
        return problem(f"The lowest price ({args.min_price:g}) is above the highest ({args.max_price:g}). Ask the user.")
    notes: list[str] = []
    district = None
    if args.district:
        found = city.district(args.district)
        if found is None:
            notes.append(f"Unknown district '{args.district}' ignored (districts: "
                         + ", ".join(d.name for d in city.districts) + ").")
        else:
            district = found.name
    amenities: list[str] = []
    for amenity in args.amenities:
        canonical = normalize_amenity(amenity)
        if canonical in AMENITIES:
            amenities.append(canonical)
        elif amenity.strip():
            notes.append(f"Unknown amenity '{amenity}' ignored (known: {', '.join(AMENITIES)}).")
    hotel_min = convert(args.min_price, price_currency, city.currency) if args.min_price else None
    # Shaved by a hair so a price converted back to the user's currency never exceeds their bound.
    hotel_max = (convert(args.max_price, price_currency, city.currency) * (1 - 1e-9)
                 if args.max_price is not None else None)
    min_rating = args.min_rating
    if min_rating is not None and min_rating > 5:
        if min_rating > 10:
            return problem(f"min_rating {min_rating:g} is out of range: guest ratings go from 0 to 5.")
        min_rating = round(min_rating / 2, 2)
        notes.append(f"min_rating {args.min_rating:g} read on a 10-point scale as {min_rating:g}/5.")
    try:
        query = HotelQuery(
            city=city.name, check_in=args.check_in, check_out=args.check_out, guests=args.guests,
            min_price=hotel_min, max_price=hotel_max, min_rating=min_rating,
            amenities=amenities, district=district, sort=args.sort,
            limit=50,
        )
    except ValidationError as exc:
        return problem("These search filters are not valid: "
                       + "; ".join(f"{'.'.join(map(str, e['loc'])) or 'query'}: {e['msg']}" for e in exc.errors()))
    offers = [o for o in await store.search(query) if args.min_stars is None or o.hotel.stars >= args.min_stars]
    available = [o for o in offers if o.available]
    ranked = available or offers
    hotels = [facts(o, args.check_in, args.check_out) for o in ranked[:KEPT_PER_RESULT]]
    label = stay_label(args.check_in, args.check_out)
    params = args.model_dump(mode="json", exclude_none=True)
    params["city"] = city.name
    call = f"search_hotels({summary_params(args.model_copy(update={'city': city.name}))})"
    if not available:
        hint = await _cheapest_hint(store, query, currency) if (hotel_max is not None or hotel_min) else ""
        answer = f"No hotels available in {city.name} for {label} with these filters. {hint}".strip()
        summary = f"{call} → no hotels available in {city.name} for {label}."
        return ToolResult(
            answer=" ".join([answer, *notes]),
            status=say("found_no_hotels", language, city=city_name(city.name, language)), hotels=[],
            memory=dict(MemoryEntry(tool="search_hotels", summary=summary, params=params, hotel_ids=[])),
            payload=[record(o) for o in offers],
        )
    prices = [convert(o.avg_nightly_price, o.hotel.currency, currency) for o in available]
    low, high = format_money(min(prices), currency), format_money(max(prices), currency)
    span = f"{low}/night" if low == high else f"{low}–{high}/night"
    availability = "all available" if len(available) == len(offers) else f"{len(available)} of {len(offers)} available"
    head = (f"{_plural(len(available), 'hotel')} available in {city.name} for {label} "
            f"({_plural((args.check_out - args.check_in).days, 'night')}, {_plural(args.guests, 'guest')}), {span}, sorted by {args.sort}.")
    lines = [head, *(hotel_line(i, h, currency) for i, h in enumerate(hotels[:SHOWN_TO_MODEL], 1))]
    if len(available) > SHOWN_TO_MODEL:
        lines.append(f"(top {SHOWN_TO_MODEL} of {len(available)} shown)")
    lines += notes
    summary = f"{call} → {_plural(len(offers), 'hotel')} found in {city.name} for {label}, {availability}, {span}."
    return ToolResult(
        answer="\n".join(lines),
        status=say("found_hotels", language, count=len(available), hotels=_plural(len(available), "hotel")),
        hotels=[dict(h) for h in hotels],
        memory=dict(MemoryEntry(tool="search_hotels", summary=summary, params=params,
                           hotel_ids=[h["id"] for h in hotels])),
        payload=[record(o) for o in ranked[:KEPT_PER_RESULT]],
    )


async def _cheapest_hint(store: HotelStore, query: HotelQuery, currency: str) -> str:
    """For a search that priced everything out: what the cheapest available hotel costs."""
    relaxed = query.model_copy(update={"min_price": None, "max_price": None, "sort": "price", "limit": 50})
    offers = [o for o in await store.search(relaxed) if o.available]
    if not offers:
        return ""
    if query.min_price:
        priciest = max(offers, key=lambda o: o.avg_nightly_price)
        return f"The most expensive available is {price_for_user(priciest.avg_nightly_price, priciest.hotel.currency, currency)}/night."
    cheapest = min(offers, key=lambda o: o.avg_nightly_price)
    return (f"The cheapest available is {cheapest.hotel.name} at "
            f"{price_for_user(cheapest.avg_nightly_price, cheapest.hotel.currency, currency)}/night.")


async def aggregate_hotels(
    args: AggregateHotelsArgs, store: HotelStore, tool_context: dict[str, Any], metadata: dict[str, Any]
) -> ToolResult:
    language = language_in(tool_context)
    city = resolve_city(args.city)
    if isinstance(city, ToolResult):
        return city
    check_in, check_out = args.check_in, args.check_out
    if check_in is None or check_out is None:
        check_in, check_out = default_stay(tool_context, metadata, city.name)
    issue = check_stay(check_in, check_out, today_of(tool_context))
    if issue:
        return problem(issue)
    currency = shown_currency(tool_context, metadata)
    rows = await store.aggregate(city.name, args.by, check_in, check_out)
    label = stay_label(check_in, check_out)
    lines = [f"Hotels in {city.name} by {args.by.replace('_', ' ')} for {label} (prices per night):"]
    for row in rows:
        span = ""
        if row.min_price is not None and row.max_price is not None:
            span = (f", {price_for_user(row.min_price, city.currency, currency)}–"
                    f"{price_for_user(row.max_price, city.currency, currency)}")
            if row.avg_price is not None:
                span += f", avg {price_for_user(row.avg_price, city.currency, currency)}"
        lines.append(f"- {row.key}: {row.hotels} hotels, {row.available} available{span}")
    total = sum(r.hotels for r in rows) if args.by != "amenity" else None
    summary = f"aggregate_hotels(city={city.name}, by={args.by}) → {len(rows)} groups" + (
        f", {total} hotels" if total is not None else "") + f" for {label}."
    params = {"city": city.name, "by": args.by, "check_in": check_in.isoformat(), "check_out": check_out.isoformat()}
    return ToolResult(
        answer="\n".join(lines),
        status=say("counted", language, city=city_name(city.name, language), by=say(f"by_{args.by}", language)),
        memory=dict(MemoryEntry(tool="aggregate_hotels", summary=summary, params=params, hotel_ids=[])),
        payload=[r.model_dump(mode="json") for r in rows],
    )


def _known_hotels(metadata: dict[str, Any]) -> list[HotelFacts]:
    """Hotels from earlier results, the most recent first."""
    hotels: dict[str, HotelFacts] = metadata.get("hotels") or {}
    ordered: list[HotelFacts] = []
    seen: set[str] = set()
    for ids in [(metadata.get("current") or {}).get("hotel_ids") or [],
                *[e.get("hotel_ids") or [] for e in reversed(metadata.get("memory") or [])]]:
        for hotel_id in ids:
            if hotel_id in hotels and hotel_id not in seen:
                seen.add(hotel_id)
                ordered.append(hotels[hotel_id])
    ordered += [h for i, h in hotels.items() if i not in seen]
    return ordered


async def hotel_details(
    args: HotelDetailsArgs, store: HotelStore, tool_context: dict[str, Any], metadata: dict[str, Any]
) -> ToolResult:
    language = language_in(tool_context)
    currency = shown_currency(tool_context, metadata)
    known = _known_hotels(metadata)
    city = geo.find_city(args.city) if args.city else None
    found: list[HotelFacts] = []
    missing: list[str] = []
    for name in args.names:
        hotel = match_hotel(name, known)
        if hotel is None and (city is not None or known):
            city_name = city.name if city else known[0].get("city", "")
            check_in, check_out = default_stay(tool_context, metadata, city_name)
            offers = await store.search(HotelQuery.model_validate(
                {"city": city_name, "check_in": check_in, "check_out": check_out, "limit": 500}))
            hotel = match_hotel(name, [facts(o, check_in, check_out) for o in offers])
        if hotel is None:
            missing.append(name)
        elif all(h["id"] != hotel["id"] for h in found):
            found.append(hotel)
    if not found:
        return problem(f"No hotel called {', '.join(repr(n) for n in missing)} is known. "
                       "Ask the user which hotel they mean, or search first.")
    full = {h.id: h for h in await store.get_hotels([h["id"] for h in found])}
    lines: list[str] = []
    refreshed: list[HotelFacts] = []
    payload: list[dict[str, Any]] = []
    for hotel in found:
        detail = full.get(hotel["id"])
        check_in = date.fromisoformat(hotel["check_in"])
        check_out = date.fromisoformat(hotel["check_out"])
        offer = await store.offer(hotel["id"], check_in, check_out)
        current = facts(offer, check_in, check_out) if offer is not None else hotel
        refreshed.append(current)
        price = (f"{price_for_user(current['price'], current['currency'], currency)}/night, total "
                 f"{price_for_user(current['total'], current['currency'], currency)} for {stay_label(check_in, check_out)}"
                 if current.get("available") and current.get("price") is not None
                 else f"not available for {stay_label(check_in, check_out)}")
        line = (f"{current['name']} — {current.get('district', '')}, {current.get('city', '')}; "
                f"{current.get('stars', 0)}★, rating {current.get('rating', 0):.1f}/5 "
                f"({current.get('review_count', 0):,} reviews); {price}.")
        if detail is not None:
            description = detail.description if len(detail.description) <= 300 else detail.description[:297] + "…"
            line += f"\nAddress: {detail.address}. Amenities: {', '.join(detail.amenities) or 'none listed'}.\n{description}"
            payload.append(detail.model_dump(mode="json"))
        lines.append(line)
    if missing:
        lines.append(f"Not found: {', '.join(missing)}.")
    names = ", ".join(h["name"] for h in refreshed)
    return ToolResult(
        answer="\n\n".join(lines),
        status=say("found_details", language, names=names_joined([h["name"] for h in refreshed], language)),
        hotels=[dict(h) for h in refreshed],
        memory=dict(MemoryEntry(tool="hotel_details", summary=f"hotel_details(names={names}) → details shown.",
                           params={"names": [h["name"] for h in refreshed]},
                           hotel_ids=[h["id"] for h in refreshed])),
        payload=payload,
    )


def find_landmark(text: str, city: geo.City | None) -> tuple[geo.City, geo.Landmark] | None:
    found = geo.find_landmark(text, city)
    if found is not None:
        return found
    cities = [city] if city else list(geo.CITIES.values())
    names = {geo.normalize(lm.name): (c, lm) for c in cities for lm in c.landmarks}
    close = difflib.get_close_matches(geo.normalize(text), list(names), n=1, cutoff=0.75)
    return names[close[0]] if close else None


def _last_search(metadata: dict[str, Any], city: str) -> dict[str, Any] | None:
    for entry in reversed(metadata.get("memory") or []):
        if entry.get("tool") == "search_hotels" and (entry.get("params") or {}).get("city") == city and entry.get("hotel_ids"):
            return entry
    return None


async def hotels_near_landmark(
    args: HotelsNearLandmarkArgs, store: HotelStore, tool_context: dict[str, Any], metadata: dict[str, Any]
) -> ToolResult:
    language = language_in(tool_context)
    city: geo.City | None = None
    if args.city:
        resolved = resolve_city(args.city)
        if isinstance(resolved, ToolResult):
            return resolved
        city = resolved
    found = find_landmark(args.landmark, city)
    if found is None:
        where = city or _recent_city(metadata)
        known = ", ".join(lm.name for lm in where.landmarks) if where else ""
        return problem(f"Unknown landmark '{args.landmark}'" + (f" in {where.name}. Known: {known}." if where else "."))
    city, landmark = found
    currency = shown_currency(tool_context, metadata)
    hotels_meta: dict[str, HotelFacts] = metadata.get("hotels") or {}
    last = _last_search(metadata, city.name)
    if last is not None:
        pool = [hotels_meta[i] for i in last["hotel_ids"] if i in hotels_meta]
        scope = "among the hotels found"
    else:
        check_in, check_out = default_stay(tool_context, metadata, city.name)
        offers = await store.search(HotelQuery.model_validate(
            {"city": city.name, "check_in": check_in, "check_out": check_out, "limit": 500}))
        pool = [facts(o, check_in, check_out) for o in offers if o.available] or [facts(o, check_in, check_out) for o in offers]
        scope = f"among all hotels in {city.name} (prices for {stay_label(check_in, check_out)})"
    if not pool:
        return problem(f"No hotels in {city.name} to rank.")
    ranked = sorted(pool, key=lambda h: geo.haversine_km(h["latitude"], h["longitude"], landmark.lat, landmark.lon))
    top = ranked[: args.limit]
    lines = [f"Hotels closest to {landmark.name}, {scope}:"]
    for i, hotel in enumerate(top, 1):
        km = geo.haversine_km(hotel["latitude"], hotel["longitude"], landmark.lat, landmark.lon)
        lines.append(hotel_line(i, hotel, currency, extra=f"{km:.1f} km"))
    names = "; ".join(h["name"] for h in top[:3])
    summary = f"hotels_near_landmark(landmark={landmark.name}, city={city.name}) → closest: {names}."
    return ToolResult(
        answer="\n".join(lines),
        status=say("ranked", language, count=len(pool), hotels=_plural(len(pool), "hotel"),
                   landmark=landmark_name(landmark.name, language)),
        hotels=[dict(h) for h in top],
        memory=dict(MemoryEntry(tool="hotels_near_landmark", summary=summary,
                           params={"landmark": landmark.name, "city": city.name},
                           hotel_ids=[h["id"] for h in top])),
        payload=[enriched(h, currency) for h in top],
    )


def _recent_city(metadata: dict[str, Any]) -> geo.City | None:
    for entry in reversed(metadata.get("memory") or []):
        city = (entry.get("params") or {}).get("city")
        if city and geo.find_city(city):
            return geo.find_city(city)
    return None


# --- the tool table --------------------------------------------------------------------------


@dataclass(frozen=True)
class HotelTool:
    """A tool's definition: its arguments (all the model sees), its function, whose other parameters
    (`store`, `tool_context`, `metadata`) are hidden data passed by name, and the status shown
    while it runs. `as_tool` makes the LangChain tool the graph's ToolNode runs."""

    name: str
    args: type[BaseModel]
    run: Callable[..., Awaitable[ToolResult]]
    starting: Callable[[Any, Language], str]  # the status shown while it runs, in the request's language

    def schema(self) -> dict[str, Any]:
        """The function schema the model is given."""
        return model_schema(self.as_tool(None))

    def as_tool(
        self,
        store: HotelStore | None,
        *,
        prepare: Callable[[], Awaitable[None]] | None = None,
        full_records: bool = False,
    ) -> StructuredTool:
        """The tool with `args` as its schema. It reads the hidden data from the graph state
        (`ToolRuntime`): `tool_context`, and `metadata` with this round's earlier results folded in
        (see `round_metadata`). It returns a ToolMessage whose text is for the model and whose
        artifact (`hotels`, `memory`) the graph folds into the metadata. `prepare` runs first (it
        seeds an empty store); `full_records` appends the whole records to the text."""
        spec = self
        wanted = set(inspect.signature(self.run).parameters)

        async def call(runtime: ToolRuntime, **arguments: Any) -> ToolMessage:
            args = spec.args.model_validate(arguments)  # already validated: this only rebuilds it
            if prepare is not None:
                await prepare()
            state = cast(HotelState, runtime.state if isinstance(runtime.state, dict) else {})
            tool_context = dict(state.get("tool_context") or {})
            language = language_in(tool_context)
            runtime.stream_writer(Status(text=spec.starting(args, language)))
            hidden = {"store": store, "tool_context": tool_context, "metadata": round_metadata(state)}
            try:
                result = await spec.run(args, **{k: v for k, v in hidden.items() if k in wanted})
            except ValidationError as exc:
                # Not the model's arguments (those were valid): a failure, retried then degraded.
                raise RuntimeError(f"{spec.name} failed: {exc}") from exc
            if result.status:
                runtime.stream_writer(Status(text=result.status))
            return ToolMessage(
                result.for_model(full_records=full_records),
                artifact={"hotels": result.hotels, "memory": result.memory},
                tool_call_id=str(runtime.tool_call_id), name=spec.name,
                status="success" if result.ok else "error",
            )

        return StructuredTool.from_function(
            coroutine=call, name=self.name, description=(self.args.__doc__ or "").strip(), args_schema=self.args,
        )


def model_schema(tool: BaseTool) -> dict[str, Any]:
    """A tool's function schema as the model gets it: compact (see compact_schema)."""
    parameters = tool.tool_call_schema
    assert isinstance(parameters, type) and issubclass(parameters, BaseModel)
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": compact_schema(parameters.model_json_schema()),
        },
    }


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema without titles and `null` alternatives: the same contract in fewer tokens."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: strip(v) for k, v in node.items() if k not in ("title",) and not (k == "default" and v is None)}
            options = node.get("anyOf")
            if isinstance(options, list):
                kept = [o for o in options if o != {"type": "null"}]
                if len(kept) == 1:
                    node.pop("anyOf")
                    node = {**kept[0], **node}
            return node
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    out = strip(schema)
    out.pop("description", None)
    return out


TOOLS: dict[str, HotelTool] = {
    tool.name: tool
    for tool in (
        HotelTool("search_hotels", SearchHotelsArgs, search_hotels,
                  lambda a, lang: say("searching", lang, city=city_name(a.city, lang))),
        HotelTool("aggregate_hotels", AggregateHotelsArgs, aggregate_hotels,
                  lambda a, lang: say("counting", lang, city=city_name(a.city, lang), by=say(f"by_{a.by}", lang))),
        HotelTool("hotel_details", HotelDetailsArgs, hotel_details,
                  lambda a, lang: say("looking_up", lang, names=names_joined(a.names, lang))),
        HotelTool("hotels_near_landmark", HotelsNearLandmarkArgs, hotels_near_landmark,
                  lambda a, lang: say("measuring", lang, landmark=landmark_name(a.landmark, lang))),
    )
}
# Calls per turn; search_hotels's limit is build_graph's `search_limit`.
DEFAULT_LIMITS = {"aggregate_hotels": 2, "hotel_details": 2, "hotels_near_landmark": 2}


# --- this turn's results ---------------------------------------------------------------------


def current_turn(state: HotelState) -> TurnRecord:
    """This turn's record (calls, rounds, hotel ids…) as the state holds it."""
    current = (state.get("metadata") or {}).get("current")
    if current:
        return TurnRecord(**current)  # type: ignore[typeddict-item]
    return new_turn((state.get("tool_context") or {}).get("turn_id", ""))


def this_round(messages: Sequence[BaseMessage]) -> tuple[AIMessage | None, list[ToolMessage]]:
    """The last AIMessage and the ToolMessages after it (the tool results of this round so far)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, AIMessage):
            return message, [m for m in messages[i + 1:] if isinstance(m, ToolMessage)]
    return None, []


def round_metadata(state: HotelState) -> dict[str, Any]:
    """The metadata with this round's tool results folded in, in call order: each result's hotels
    join `hotels` and this turn's `hotel_ids`, its summary joins `memory`."""
    metadata = dict(state.get("metadata") or {})
    turn = current_turn(state)
    hotels = dict(metadata.get("hotels") or {})
    hotel_ids = list(turn.get("hotel_ids") or [])
    memory = list(metadata.get("memory") or [])
    _, results = this_round(state.get("messages") or [])
    for message in results:
        artifact = message.artifact if isinstance(message.artifact, dict) else {}
        for hotel in artifact.get("hotels") or []:
            hotels[hotel["id"]] = hotel
            if hotel["id"] not in hotel_ids:
                hotel_ids.append(hotel["id"])
        if artifact.get("memory"):
            memory.append({**artifact["memory"], "turn_id": turn.get("turn_id", "")})
    turn["hotel_ids"] = hotel_ids
    return {**metadata, "current": turn, "hotels": hotels, "memory": memory}
