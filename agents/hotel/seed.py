"""Deterministic demo data: hotels in every city of `geo`, with nightly prices and sell-outs."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import random
from datetime import date, timedelta
from functools import cache

from agents.hotel import geo
from agents.hotel.store import AvailabilityRow, Hotel, HotelStore

log = logging.getLogger(__name__)

HOTELS_PER_CITY = 40
DEFAULT_DAYS = 180

_STAR_WEIGHTS = {2: 15, 3: 35, 4: 35, 5: 15}
_STAR_PRICE = {2: 0.55, 3: 0.8, 4: 1.2, 5: 2.2}
_STAR_RATING = {2: 3.6, 3: 3.9, 4: 4.2, 5: 4.5}
_HOT = {
    "Bangkok", "Singapore", "Dubai", "Rio de Janeiro", "Cairo", "Marrakech", "Hong Kong", "Taipei",
    "Los Angeles", "Sydney", "Cape Town", "Buenos Aires", "Mexico City",
}
_DRIVING = {"United States", "Canada", "United Arab Emirates", "Australia", "South Africa", "Mexico"}

_ADJECTIVES = (
    "Amber", "Atlas", "Aurora", "Blue", "Cedar", "Central", "Compass", "Corner", "Crown", "Garden",
    "Golden", "Grand", "Harbour", "Heritage", "Ivory", "Jade", "Lantern", "Linden", "Lotus", "Maple",
    "Meridian", "Nova", "Opal", "Orchid", "Park", "Plaza", "River", "Royal", "Sapphire", "Silver",
    "Urban", "Vista", "Willow", "Station", "Skyline", "Palm", "Cloud", "Anchor", "Pearl", "Kestrel",
)
_NOUNS = {
    2: ("Inn", "Hostel", "Rooms", "Lodge", "Budget Hotel"),
    3: ("Hotel", "House", "Suites", "Inn", "Hotel"),
    4: ("Hotel", "Suites", "Hotel & Spa", "Hotel"),
    5: ("Hotel", "Palace", "Grand Hotel", "Residence"),
}
_LOCAL_NOUN = {"France": "Hôtel", "Italy": "Albergo", "Spain": "Hostal", "Japan": "Ryokan"}

_STREETS = {
    "France": ("{n} rue {s}", ("des Lilas", "du Moulin", "de la Paix", "Saint-Honoré", "des Écoles", "du Bac")),
    "Italy": ("Via {s} {n}", ("del Corso", "Nazionale", "dei Fiori", "Cavour", "Garibaldi", "della Scala")),
    "Spain": ("Carrer {s} {n}", ("Major", "del Sol", "de la Lluna", "Nou", "de les Flors", "del Mar")),
    "Mexico": ("Calle {s} {n}", ("Madero", "Durango", "Amsterdam", "Orizaba", "Reforma", "Colima")),
    "Argentina": ("Calle {s} {n}", ("Florida", "Defensa", "Thames", "Honduras", "Arenales", "Perú")),
    "Portugal": ("Rua {s} {n}", ("Augusta", "das Flores", "do Ouro", "da Prata", "Nova do Almada", "do Carmo")),
    "Brazil": ("Rua {s} {n}", ("Barata Ribeiro", "Visconde de Pirajá", "das Laranjeiras", "do Catete", "Almirante Alexandrino")),
    "Germany": ("{s} {n}", ("Lindenstraße", "Hauptstraße", "Gartenstraße", "Schillerstraße", "Bergstraße")),
    "Austria": ("{s} {n}", ("Mozartgasse", "Kärntner Straße", "Mariahilfer Straße", "Praterstraße", "Josefstädter Straße")),
    "Netherlands": ("{s} {n}", ("Prinsengracht", "Keizersgracht", "Herengracht", "Utrechtsestraat", "Overtoom")),
    "Czechia": ("{s} {n}", ("Karlova", "Národní", "Celetná", "Vodičkova", "Husova", "Vinohradská")),
    "Türkiye": ("{s} Caddesi No:{n}", ("İstiklal", "Divan Yolu", "Cumhuriyet", "Bağdat", "Necatibey")),
    "Hong Kong": ("{n} {s} Road", ("Nathan", "Queen's", "Des Voeux", "Hennessy", "Lockhart")),
    "Taiwan": ("No. {n}, {s} Road", ("Zhongshan", "Minsheng", "Nanjing", "Heping", "Xinyi")),
    "Thailand": ("{n} Soi {m}", ("",)),
    "Japan": ("{m}-{k}-{n}", ("",)),
    "South Korea": ("{n} {s}-ro", ("Sejong", "Teheran", "Namdaemun", "Itaewon", "Yanghwa")),
}
_DEFAULT_STREETS = (
    "{n} {s}",
    ("Market Street", "King Street", "Queen Street", "Park Avenue", "Church Road", "Harbour Road",
     "Station Road", "Victoria Street", "George Street", "Elm Street", "Maple Avenue", "Bay Street"),
)


def _slug(text: str) -> str:
    return geo.normalize(text).replace(" ", "-")


def _unit(*parts: object) -> tuple[float, float, float]:
    """Three stable uniforms in [0, 1) from the parts (independent of PYTHONHASHSEED)."""
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=12).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "big") / 2**32 for i in (0, 4, 8))  # type: ignore[return-value]


def _point_in(district: geo.District, rng: random.Random) -> tuple[float, float]:
    r = district.radius_km * math.sqrt(rng.random()) * 0.95
    theta = rng.uniform(0, 2 * math.pi)
    lat = district.lat + (r / 110.574) * math.cos(theta)
    lon = district.lon + (r / (111.320 * math.cos(math.radians(district.lat)))) * math.sin(theta)
    return round(lat, 6), round(lon, 6)


def _name(city: geo.City, district: geo.District, stars: int, rng: random.Random) -> str:
    adjective = rng.choice(_ADJECTIVES)
    noun = rng.choice(_NOUNS[stars])
    local = _LOCAL_NOUN.get(city.country)
    place = district.name
    if local and stars in (3, 4) and rng.random() < 0.35:
        if local == "Ryokan" and city.name not in ("Kyoto", "Tokyo"):
            local = "Hotel"
        return f"{local} {adjective} {place}" if local != "Ryokan" else f"{adjective} Ryokan {place}"
    if local == "Hostal" and stars == 2 and rng.random() < 0.5:
        return f"Hostal {adjective} {place}"
    pattern = rng.randrange(4)
    if pattern == 0:
        return f"{adjective} {noun} {place}"
    if pattern == 1:
        return f"{place} {adjective} {noun}"
    if pattern == 2 and stars >= 4:
        return f"The {adjective} {place}"
    return f"{noun} {adjective} {place}" if noun in ("Hotel", "Grand Hotel") else f"{adjective} {place} {noun}"


def _address(city: geo.City, district: geo.District, rng: random.Random) -> str:
    template, streets = _STREETS.get(city.country, _DEFAULT_STREETS)
    street = template.format(
        n=rng.randint(1, 180), m=rng.randint(1, 9), k=rng.randint(1, 30), s=rng.choice(streets)
    )
    return f"{street}, {district.name}, {city.name}, {city.country}"


def _amenities(city: geo.City, district: geo.District, stars: int, rng: random.Random) -> list[str]:
    hot = city.name in _HOT
    chances = {
        "wifi": 0.97,
        "breakfast": 0.35 + 0.1 * stars,
        "air-conditioning": 1.0 if hot else (0.95 if city.country in _DRIVING or city.currency == "JPY" else 0.3 + 0.12 * stars),
        "parking": 0.7 if city.country in _DRIVING else 0.25,
        "pool": {2: 0.02, 3: 0.1, 4: 0.3, 5: 0.6}[stars] + (0.3 if hot else 0.0),
        "gym": {2: 0.05, 3: 0.35, 4: 0.75, 5: 0.95}[stars],
        "spa": {2: 0.0, 3: 0.05, 4: 0.35, 5: 0.8}[stars],
        "restaurant": {2: 0.1, 3: 0.45, 4: 0.85, 5: 1.0}[stars],
        "bar": {2: 0.2, 3: 0.4, 4: 0.8, 5: 0.95}[stars],
        "pet-friendly": 0.25,
        "airport-shuttle": 0.5 if "Airport" in district.name else 0.12,
        "kitchen": {2: 0.2, 3: 0.2, 4: 0.08, 5: 0.05}[stars],
        "24h-front-desk": 0.4 if stars == 2 else 0.9,
        "family-rooms": 0.35,
        "room-service": {2: 0.0, 3: 0.2, 4: 0.7, 5: 1.0}[stars],
        "laundry": 0.5,
        "non-smoking": 0.8,
        "accessible": 0.3 + 0.12 * stars,
        "ev-charging": 0.25 if city.country in _DRIVING and stars >= 4 else 0.05,
        "hot-spring": 0.7 if district.name == "Beitou" else (0.12 if city.country == "Japan" else 0.0),
    }
    return [name for name, p in chances.items() if rng.random() < p]


@cache
def generate_hotels() -> tuple[Hotel, ...]:
    """The demo hotels: HOTELS_PER_CITY in each city, spread over its districts; always the same."""
    hotels: list[Hotel] = []
    for city in geo.CITIES.values():
        rng = random.Random(f"concierge-hotels:{city.name}")
        names: set[str] = set()
        for i in range(HOTELS_PER_CITY):
            district = city.districts[i % len(city.districts)]
            stars = rng.choices(list(_STAR_WEIGHTS), weights=list(_STAR_WEIGHTS.values()))[0]
            if district.price_factor >= 1.4 and stars < 5 and rng.random() < 0.3:
                stars += 1
            name = _name(city, district, stars, rng)
            while name in names:
                name = _name(city, district, stars, rng)
            names.add(name)
            lat, lon = _point_in(district, rng)
            rating = round(min(5.0, max(2.5, rng.gauss(_STAR_RATING[stars], 0.25))), 1)
            reviews = int(min(12_000, max(5, rng.lognormvariate(math.log(250 + 150 * stars), 0.9))))
            amenities = _amenities(city, district, stars, rng)
            nearest = min(city.landmarks, key=lambda lm: geo.haversine_km(lat, lon, lm.lat, lm.lon))
            km = geo.haversine_km(lat, lon, nearest.lat, nearest.lon)
            hotel_id = f"{_slug(city.name)}-{i + 1:03d}"
            highlights = ", ".join(
                [a.replace("-", " ") for a in amenities if a not in ("wifi", "non-smoking")][:4]
            )
            description = (
                f"{name} is a {stars}-star hotel in {district.name}, {city.name}, "
                f"{km:.1f} km from {nearest.name}. Guests rate it {rating}/5 over {reviews:,} reviews."
                + (f" Highlights: {highlights}." if highlights else "")
            )
            hotels.append(
                Hotel(
                    id=hotel_id,
                    name=name,
                    city=city.name,
                    country=city.country,
                    district=district.name,
                    address=_address(city, district, rng),
                    latitude=lat,
                    longitude=lon,
                    stars=stars,
                    guest_rating=rating,
                    review_count=reviews,
                    amenities=amenities,
                    thumbnail_url="",  # demo hotels have no photos; cards go without a thumbnail
                    description=description,
                    currency=city.currency,
                )
            )
    return tuple(hotels)


@cache
def _base_rate(hotel_id: str) -> tuple[float, geo.City]:
    hotel = demo_hotels()[hotel_id]
    city = geo.CITIES[hotel.city.lower()]
    district = city.district(hotel.district)
    factor = district.price_factor if district else 1.0
    quirk = 0.85 + 0.35 * _unit("quirk", hotel_id)[0]
    rating = 1.0 + 0.08 * (hotel.guest_rating - _STAR_RATING[hotel.stars])
    return city.base_price * factor * _STAR_PRICE[hotel.stars] * quirk * rating, city


@cache
def demo_hotels() -> dict[str, Hotel]:
    """The demo hotels by id."""
    return {h.id: h for h in generate_hotels()}


def season_factor(city: geo.City, night: date) -> float:
    """Dearer in the city's high season, over Christmas and New Year, and on Friday and Saturday nights."""
    factor = 1.0
    if (night.month == 12 and night.day >= 22) or (night.month == 1 and night.day <= 2):
        factor *= 1.35
    elif night.month in city.high_months:
        factor *= 1.22
    elif night.month in city.low_months:
        factor *= 0.85
    if night.weekday() in (4, 5):
        factor *= 1.15
    return factor


def round_price(value: float, step: float) -> float:
    return float(max(step, round(value / step) * step))


_MASK64 = (1 << 64) - 1


def stable_units(hotel_id: str, night: date, salt: int = 0) -> tuple[float, float]:
    """Two stable uniforms in [0, 1) for a hotel, night and salt (splitmix64: cheap for 200k rows)."""
    x = (_hotel_key(hotel_id) + night.toordinal() * 0x9E3779B97F4A7C15 + salt * 0xD1B54A32D192ED03) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    x ^= x >> 31
    return (x >> 32) / 2**32, (x & 0xFFFFFFFF) / 2**32


@cache
def _hotel_key(hotel_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(hotel_id.encode(), digest_size=8).digest(), "big")


def nightly_rate(hotel_id: str, night: date) -> tuple[float, bool]:
    """The seed's price and availability for one demo hotel and night (independent of today)."""
    base, city = _base_rate(hotel_id)
    noise, sold = stable_units(hotel_id, night)
    season = season_factor(city, night)
    price = round_price(base * season * (0.94 + 0.12 * noise), city.price_step)
    sold_out_chance = 0.03 + 0.25 * (season - 1.0) if season > 1.0 else 0.02
    return price, sold >= sold_out_chance


def price_step(hotel_id: str) -> float:
    """What the hotel's prices are rounded to (1 unit, or 100 yen…)."""
    return _base_rate(hotel_id)[1].price_step


def generate(today: date, days: int = DEFAULT_DAYS) -> tuple[list[Hotel], list[AvailabilityRow]]:
    """Hotels plus their nightly rates for `days` nights from `today`; the same inputs give the same data."""
    hotels = list(generate_hotels())
    nights = [today + timedelta(days=d) for d in range(days)]
    rows = []
    for hotel in hotels:
        for night in nights:
            price, available = nightly_rate(hotel.id, night)
            rows.append(AvailabilityRow(hotel_id=hotel.id, date=night, price=price, available=available))
    return hotels, rows


async def seed(store: HotelStore, today: date | None = None, *, days: int = DEFAULT_DAYS) -> int:
    """Fill an empty store with the demo data; returns hotels written, 0 when it was already seeded."""
    await store.setup()
    if await store.is_seeded():
        return 0
    # Seconds of pure CPU (1,280 hotels, their distances and a year of rates): off the event loop,
    # which in a bot process serves every conversation meanwhile (the first /hotel turn seeds).
    hotels, rows = await asyncio.to_thread(generate, today or date.today(), days)
    await store.upsert_hotels(hotels)
    await store.upsert_availability(rows, batch_size=10_000)
    await store.mark_seeded()
    log.info("seeded %d hotels and %d nightly rates", len(hotels), len(rows))
    return len(hotels)
