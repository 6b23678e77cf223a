"""The hotel database: hotels, amenities and nightly availability, on SQLite or PostgreSQL."""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from agents.hotel import geo
from bot.sqldb import Database, DatabaseError, Migration, Transaction, migrate, open_database

MAX_NIGHTS = 60

# Canonical amenity names; `normalize_amenity` maps common spellings onto them.
AMENITIES: tuple[str, ...] = (
    "wifi", "breakfast", "air-conditioning", "parking", "pool", "gym", "spa", "restaurant", "bar",
    "pet-friendly", "airport-shuttle", "kitchen", "24h-front-desk", "family-rooms", "room-service",
    "laundry", "non-smoking", "accessible", "ev-charging", "hot-spring",
)
_AMENITY_ALIASES = {
    "wi-fi": "wifi", "free-wifi": "wifi", "internet": "wifi", "wireless": "wifi",
    "breakfast-included": "breakfast", "free-breakfast": "breakfast",
    "ac": "air-conditioning", "a/c": "air-conditioning", "aircon": "air-conditioning",
    "air-con": "air-conditioning", "airconditioning": "air-conditioning",
    "car-park": "parking", "free-parking": "parking", "garage": "parking",
    "swimming-pool": "pool", "swimming": "pool", "outdoor-pool": "pool", "indoor-pool": "pool",
    "fitness": "gym", "fitness-centre": "gym", "fitness-center": "gym", "fitness-room": "gym",
    "wellness": "spa", "sauna": "spa",
    "pets": "pet-friendly", "pet": "pet-friendly", "pets-allowed": "pet-friendly",
    "dog-friendly": "pet-friendly", "dogs-allowed": "pet-friendly",
    "shuttle": "airport-shuttle", "airport-transfer": "airport-shuttle",
    "kitchenette": "kitchen", "24-hour-front-desk": "24h-front-desk", "24h-reception": "24h-front-desk",
    "family": "family-rooms", "family-room": "family-rooms", "laundry-service": "laundry",
    "wheelchair-accessible": "accessible", "accessibility": "accessible",
    "onsen": "hot-spring", "hot-springs": "hot-spring",
}


# Japanese names of the amenities, read anywhere in a request (Japanese has no spaces between
# words); an amenity the traveller declines right after its name (朝食なし) is not asked for.
AMENITY_WORDS_JA: dict[str, str] = {
    "朝食": "breakfast", "朝ごはん": "breakfast", "朝ご飯": "breakfast", "モーニング": "breakfast",
    "ワイファイ": "wifi", "無線LAN": "wifi", "wifi": "wifi", "wi-fi": "wifi",
    "エアコン": "air-conditioning", "冷房": "air-conditioning",
    "駐車場": "parking", "パーキング": "parking", "駐車": "parking",
    "プール": "pool", "ジム": "gym", "フィットネス": "gym", "スパ": "spa", "サウナ": "spa",
    "レストラン": "restaurant", "ペット": "pet-friendly", "犬連れ": "pet-friendly", "愛犬": "pet-friendly",
    "空港送迎": "airport-shuttle", "送迎": "airport-shuttle", "シャトル": "airport-shuttle",
    "キッチン": "kitchen", "自炊": "kitchen", "24時間フロント": "24h-front-desk",
    "ルームサービス": "room-service", "ランドリー": "laundry", "洗濯": "laundry", "禁煙": "non-smoking",
    "バリアフリー": "accessible", "車いす": "accessible", "車椅子": "accessible",
    "EV充電": "ev-charging", "充電スタンド": "ev-charging",
    "温泉": "hot-spring", "露天風呂": "hot-spring", "大浴場": "hot-spring",
}
DECLINED_AFTER_JA = ("なし", "無し", "不要", "いらない", "要らない", "は要りません", "はいりません")


def normalize_amenity(text: str) -> str:
    """Map 'Free WiFi', 'swimming pool', 'A/C'… onto the canonical names in AMENITIES."""
    key = "-".join(text.strip().lower().replace("_", " ").split())
    return _AMENITY_ALIASES.get(key, key)


class HotelStoreError(DatabaseError):
    """The hotel database could not be reached or used (a `DatabaseError` raised while opening it)."""


# --- models at the boundary ----------------------------------------------------------------


class Hotel(BaseModel):
    id: str
    name: str
    city: str
    country: str
    district: str
    address: str
    latitude: float
    longitude: float
    stars: int = Field(ge=1, le=5)
    guest_rating: float = Field(ge=0, le=5)  # out of 5
    review_count: int = Field(ge=0)
    amenities: list[str]
    thumbnail_url: str
    description: str
    currency: str  # currency of stored prices


class AvailabilityRow(BaseModel):
    """One hotel, one night: the price of a double room and whether one is left."""

    hotel_id: str
    date: date
    price: float = Field(ge=0)
    available: bool
    currency: str | None = None  # set by suppliers; checked against the hotel's currency


class HotelQuery(BaseModel):
    city: str = Field(min_length=1)
    check_in: date
    check_out: date
    guests: int = Field(2, ge=1, le=16)  # informational: prices are per room (double) per night
    min_price: float | None = Field(None, ge=0)  # per night, hotel currency
    max_price: float | None = Field(None, ge=0)
    min_rating: float | None = Field(None, ge=0, le=5)
    amenities: list[str] = []
    district: str | None = None
    sort: Literal["price", "rating", "stars", "popularity"] = "rating"
    limit: int = Field(50, ge=1, le=500)

    @field_validator("amenities")
    @classmethod
    def _canonical_amenities(cls, value: list[str]) -> list[str]:
        return sorted({normalize_amenity(a) for a in value if a.strip()})

    @model_validator(mode="after")
    def _stay(self) -> HotelQuery:
        if self.check_out <= self.check_in:
            raise ValueError("check_out must be after check_in")
        if self.nights > MAX_NIGHTS:
            raise ValueError(f"stays are limited to {MAX_NIGHTS} nights")
        if self.min_price is not None and self.max_price is not None and self.min_price > self.max_price:
            raise ValueError("min_price must not exceed max_price")
        return self

    @property
    def nights(self) -> int:
        return (self.check_out - self.check_in).days


class HotelOffer(BaseModel):
    hotel: Hotel
    nightly_prices: list[float]  # nights with a known rate, in stay order
    avg_nightly_price: float
    total_price: float
    available: bool  # available on every night of the stay
    unavailable_nights: list[date] = []  # sold out, or no rate known


class AggregateRow(BaseModel):
    key: str
    hotels: int
    available: int  # hotels available every night of the stay
    min_price: float | None  # over the average nightly price of available hotels
    max_price: float | None
    avg_price: float | None


# --- schema ---------------------------------------------------------------------------------

_TABLES = (
    """CREATE TABLE IF NOT EXISTS hotels (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, country TEXT NOT NULL,
        district TEXT NOT NULL, address TEXT NOT NULL, latitude {real} NOT NULL,
        longitude {real} NOT NULL, stars INTEGER NOT NULL,
        guest_rating {real} NOT NULL, review_count INTEGER NOT NULL,
        amenities TEXT NOT NULL, thumbnail_url TEXT NOT NULL, description TEXT NOT NULL,
        currency TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS hotel_amenities (
        hotel_id TEXT NOT NULL REFERENCES hotels(id) ON DELETE CASCADE, amenity TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS hotel_availability (
        hotel_id TEXT NOT NULL REFERENCES hotels(id) ON DELETE CASCADE, night {date} NOT NULL,
        price {real} NOT NULL, available {smallint} NOT NULL,
        updated_at {real} NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS hotel_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)

# Every secondary index, by name, so the benchmark can drop and recreate them. The two unique
# ones also back the upserts' ON CONFLICT targets.
INDEXES: dict[str, str] = {
    "hotel_availability_hotel_night": (
        "CREATE UNIQUE INDEX IF NOT EXISTS hotel_availability_hotel_night "
        "ON hotel_availability (hotel_id, night)"
    ),
    "hotel_amenities_hotel_amenity": (
        "CREATE UNIQUE INDEX IF NOT EXISTS hotel_amenities_hotel_amenity "
        "ON hotel_amenities (hotel_id, amenity)"
    ),
    "hotel_amenities_amenity": (
        "CREATE INDEX IF NOT EXISTS hotel_amenities_amenity ON hotel_amenities (amenity, hotel_id)"
    ),
    "hotels_city_district": "CREATE INDEX IF NOT EXISTS hotels_city_district ON hotels (city, district)",
}

# The hotel tables' schema, one versioned step at a time (bot/sqldb.py); append, never edit.
MIGRATIONS = (Migration("hotels, amenities, availability, meta", (*_TABLES, *INDEXES.values())),)

_HOTEL_COLUMNS = (
    "id", "name", "city", "country", "district", "address", "latitude", "longitude", "stars",
    "guest_rating", "review_count", "amenities", "thumbnail_url", "description", "currency",
)
_HOTEL_SELECT = ", ".join(f"h.{c}" for c in _HOTEL_COLUMNS)

_UPSERT_HOTEL = (
    f"INSERT INTO hotels ({', '.join(_HOTEL_COLUMNS)}) VALUES ({', '.join('?' for _ in _HOTEL_COLUMNS)}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _HOTEL_COLUMNS if c != "id")
)
_UPSERT_AVAILABILITY_SQLITE = (
    "INSERT INTO hotel_availability (hotel_id, night, price, available, updated_at) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (hotel_id, night) DO UPDATE SET price = excluded.price, "
    "available = excluded.available, updated_at = excluded.updated_at"
)
# One statement per batch: psycopg sends the columns as arrays.
_UPSERT_AVAILABILITY_POSTGRES = (
    "INSERT INTO hotel_availability (hotel_id, night, price, available, updated_at) "
    "SELECT * FROM unnest(?::text[], ?::date[], ?::float8[], ?::smallint[], ?::float8[]) "
    "ON CONFLICT (hotel_id, night) DO UPDATE SET price = excluded.price, "
    "available = excluded.available, updated_at = excluded.updated_at"
)

_SORTS = {
    "price": "stay.avg_price ASC, h.guest_rating DESC",
    "rating": "h.guest_rating DESC, h.review_count DESC",
    "stars": "h.stars DESC, h.guest_rating DESC",
    "popularity": "h.review_count DESC, h.guest_rating DESC",
}


# --- database access ------------------------------------------------------------------------


@dataclass
class _StayStats:
    hotel: Hotel
    nights_known: int
    nights_open: int
    avg_price: float
    total_price: float


def _batches(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _placeholders(n: int) -> str:
    return ", ".join("?" for _ in range(n))


def _hotel_from_row(row: Sequence[Any]) -> Hotel:
    values = dict(zip(_HOTEL_COLUMNS, row, strict=False))
    values["amenities"] = json.loads(values["amenities"])
    return Hotel.model_validate(values)


def _as_date(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(value)


def _within(avg_price: float, q: HotelQuery) -> bool:
    return (q.min_price is None or avg_price >= q.min_price) and (q.max_price is None or avg_price <= q.max_price)


def canonical_city(text: str) -> str:
    """The stored name of a city given any of its names ('パリ', 'paris' → 'Paris')."""
    city = geo.find_city(text)
    return city.name if city else text.strip()


def _nice(value: float) -> float:
    """Round to a readable price: the nearest half of the value's power of ten (119 → 100, 289 → 300)."""
    if value <= 0:
        return 0.0
    step = 10 ** math.floor(math.log10(value)) / 2
    return max(step, round(value / step) * step)


def price_bands(city: str) -> list[tuple[str, float, float | None]]:
    """The city's price bands as (label, lower, upper): upper is exclusive and None for the top band."""
    known = geo.find_city(city)
    base = known.base_price if known else 150.0
    currency = known.currency if known else ""
    edges = sorted({_nice(base * f) for f in (0.7, 1.1, 1.7, 2.6)})

    def fmt(value: float) -> str:
        return f"{value:,.0f}"

    unit = f" {currency}" if currency else ""
    bands: list[tuple[str, float, float | None]] = [(f"under {fmt(edges[0])}{unit}", 0.0, edges[0])]
    for low, high in itertools.pairwise(edges):
        bands.append((f"{fmt(low)}–{fmt(high)}{unit}", low, high))
    bands.append((f"{fmt(edges[-1])}+{unit}", edges[-1], None))
    return bands


class HotelStore:
    """Queries the agent runs, and the writes the seeder and the refresh worker make."""

    def __init__(self, db: Database):
        self._db = db
        self._closed = False

    @property
    def dialect(self) -> Literal["sqlite", "postgresql"]:
        return self._db.dialect

    @classmethod
    async def open(cls, database_url: str, *, create: bool = True) -> HotelStore:
        """Open `sqlite:///path/to.db` or `postgresql://…`; creates the tables unless `create` is False."""
        try:
            db = await open_database(database_url, name="hotel store")
        except DatabaseError as exc:  # callers catch the hotel's own error type
            raise HotelStoreError(str(exc)) from exc
        store = cls(db)
        if create:
            try:
                await store.setup()
            except BaseException:
                await store.close()
                raise
        return store

    async def close(self) -> None:
        """Give back this store's handle on the process's database (closing it when it was the last)."""
        if not self._closed:
            self._closed = True
            await self._db.close()

    async def setup(self) -> None:
        """Bring the tables to the current schema version; safe to call from several processes at once."""
        await migrate(self._db, "hotel", MIGRATIONS)

        async def indexes(tx: Transaction) -> None:
            if self.dialect == "postgresql":
                # Concurrent CREATE … IF NOT EXISTS can still collide in the catalog.
                await tx.execute("SELECT pg_advisory_xact_lock(7215301)")
            for statement in INDEXES.values():
                await tx.execute(statement)

        # Indexes an operator (or the search benchmark) dropped come back; present ones cost nothing.
        await self._db.transaction(indexes)

    # --- metadata ---------------------------------------------------------------------------

    async def get_meta(self, key: str) -> str | None:
        rows = await self._db.fetch("SELECT value FROM hotel_meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    async def set_meta(self, key: str, value: str) -> None:
        async def write(tx: Transaction) -> None:
            await tx.execute(
                "INSERT INTO hotel_meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

        await self._db.transaction(write)

    async def is_seeded(self) -> bool:
        return await self.get_meta("seeded_at") is not None

    async def last_refresh(self) -> datetime | None:
        """When the refresh worker last finished a run, if it ever did."""
        value = await self.get_meta("refreshed_at")
        return datetime.fromisoformat(value) if value else None

    # --- reads ------------------------------------------------------------------------------

    async def cities(self) -> list[str]:
        rows = await self._db.fetch("SELECT DISTINCT city FROM hotels ORDER BY city")
        return [r[0] for r in rows]

    async def districts(self, city: str) -> list[str]:
        rows = await self._db.fetch(
            "SELECT DISTINCT district FROM hotels WHERE city = ? ORDER BY district", (canonical_city(city),)
        )
        return [r[0] for r in rows]

    async def hotel_currencies(self) -> dict[str, str]:
        """Every hotel id with the currency its prices are stored in."""
        rows = await self._db.fetch("SELECT id, currency FROM hotels ORDER BY id")
        return {r[0]: r[1] for r in rows}

    async def get_hotels(self, ids: Sequence[str]) -> list[Hotel]:
        """Hotels by id, in the order asked; unknown ids are left out."""
        if not ids:
            return []
        by_id: dict[str, Hotel] = {}
        for chunk in _batches(list(dict.fromkeys(ids)), 500):
            rows = await self._db.fetch(
                f"SELECT {_HOTEL_SELECT} FROM hotels h WHERE h.id IN ({_placeholders(len(chunk))})",
                tuple(chunk),
            )
            by_id.update((row[0], _hotel_from_row(row)) for row in rows)
        return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]

    async def nightly_rates(self, hotel_ids: Sequence[str], start: date, end: date) -> list[AvailabilityRow]:
        """The stored rates of the hotels for nights from `start` up to (not including) `end`."""
        rows: list[AvailabilityRow] = []
        for chunk in _batches(list(dict.fromkeys(hotel_ids)), 500):
            fetched = await self._db.fetch(
                "SELECT hotel_id, night, price, available FROM hotel_availability "
                f"WHERE hotel_id IN ({_placeholders(len(chunk))}) AND night >= ? AND night < ? "
                "ORDER BY hotel_id, night",
                (*chunk, self._db.date_value(start), self._db.date_value(end)),
            )
            rows.extend(
                AvailabilityRow(hotel_id=h, date=_as_date(n), price=float(p), available=bool(a))
                for h, n, p, a in fetched
            )
        return rows

    async def search(self, q: HotelQuery) -> list[HotelOffer]:
        """Offers in the city for the stay, filtered and sorted; available hotels always come first.

        With a price filter only hotels available every night are returned, and the filter applies
        to the average nightly price. Hotels with no known rate for any night are left out.
        """
        nights = q.nights
        where = ["city = ?"]
        params: list[Any] = [canonical_city(q.city)]
        if q.district:
            city = geo.find_city(q.city)
            district = city.district(q.district) if city else None
            where.append("district = ?")
            params.append(district.name if district else q.district.strip())
        if q.min_rating is not None:
            where.append("guest_rating >= ?")
            params.append(q.min_rating)
        if q.amenities:
            where.append(
                "id IN (SELECT hotel_id FROM hotel_amenities "
                f"WHERE amenity IN ({_placeholders(len(q.amenities))}) "
                "GROUP BY hotel_id HAVING COUNT(*) = ?)"
            )
            params.extend(q.amenities)
            params.append(len(q.amenities))
        params.extend((self._db.date_value(q.check_in), self._db.date_value(q.check_out)))

        having: list[str] = []
        if q.min_price is not None or q.max_price is not None:
            having.append(f"stay.nights_open = {nights:d} AND stay.nights_known = {nights:d}")
        if q.min_price is not None:
            having.append("stay.avg_price >= ?")
            params.append(q.min_price)
        if q.max_price is not None:
            having.append("stay.avg_price <= ?")
            params.append(q.max_price)
        params.append(q.limit)

        sql = f"""
            WITH candidates AS (SELECT id FROM hotels WHERE {" AND ".join(where)}),
            stay AS (
                SELECT a.hotel_id AS hotel_id, COUNT(*) AS nights_known, SUM(a.available) AS nights_open,
                       AVG(a.price) AS avg_price, SUM(a.price) AS total_price
                FROM hotel_availability a
                WHERE a.hotel_id IN (SELECT id FROM candidates) AND a.night >= ? AND a.night < ?
                GROUP BY a.hotel_id
            )
            SELECT {_HOTEL_SELECT}, stay.nights_known, stay.nights_open, stay.avg_price, stay.total_price
            FROM stay JOIN hotels h ON h.id = stay.hotel_id
            {"WHERE " + " AND ".join(having) if having else ""}
            ORDER BY CASE WHEN stay.nights_open = {nights:d} AND stay.nights_known = {nights:d}
                          THEN 0 ELSE 1 END,
                     {_SORTS[q.sort]}, h.id
            LIMIT ?"""
        rows = await self._db.fetch(sql, params)
        stats = [self._stats(row) for row in rows]
        offers = await self._offers(stats, q.check_in, q.check_out)
        if q.min_price is None and q.max_price is None:
            return offers
        # The rates are read a moment after the filter ran: a refresh batch may have landed between.
        return [o for o in offers if o.available and _within(sum(o.nightly_prices) / q.nights, q)]

    async def offer(self, hotel_id: str, check_in: date, check_out: date) -> HotelOffer | None:
        """One hotel's offer for a stay; None for an unknown hotel or one with no rates for it."""
        offers = await self._offers_for_ids([hotel_id], check_in, check_out)
        return offers[0] if offers else None

    async def aggregate(
        self,
        city: str,
        by: Literal["district", "price_band", "amenity"],
        check_in: date,
        check_out: date,
    ) -> list[AggregateRow]:
        """Hotels in the city grouped by district, price band (of the average nightly price) or amenity."""
        if check_out <= check_in:
            raise ValueError("check_out must be after check_in")
        name = canonical_city(city)
        stats = await self._city_stats(name, check_in, check_out)
        nights = (check_out - check_in).days
        groups: dict[str, list[_StayStats]] = {}
        if by == "district":
            for s in stats:
                groups.setdefault(s.hotel.district, []).append(s)
            keys = sorted(groups)
        elif by == "amenity":
            for s in stats:
                for amenity in s.hotel.amenities:
                    groups.setdefault(amenity, []).append(s)
            keys = sorted(groups, key=lambda k: (-len(groups[k]), k))
        elif by == "price_band":
            bands = price_bands(name)
            keys = [label for label, _, _ in bands]
            for s in stats:
                for label, low, high in bands:
                    if s.avg_price >= low and (high is None or s.avg_price < high):
                        groups.setdefault(label, []).append(s)
                        break
            keys = [k for k in keys if k in groups]
        else:
            raise ValueError(f"cannot aggregate by {by!r}")
        result = []
        for key in keys:
            members = groups[key]
            open_prices = [
                s.avg_price for s in members if s.nights_known == nights and s.nights_open == nights
            ]
            result.append(
                AggregateRow(
                    key=key,
                    hotels=len(members),
                    available=len(open_prices),
                    min_price=round(min(open_prices), 2) if open_prices else None,
                    max_price=round(max(open_prices), 2) if open_prices else None,
                    avg_price=round(sum(open_prices) / len(open_prices), 2) if open_prices else None,
                )
            )
        return result

    async def _city_stats(self, city: str, check_in: date, check_out: date) -> list[_StayStats]:
        rows = await self._db.fetch(
            f"""
            WITH stay AS (
                SELECT a.hotel_id AS hotel_id, COUNT(*) AS nights_known, SUM(a.available) AS nights_open,
                       AVG(a.price) AS avg_price, SUM(a.price) AS total_price
                FROM hotel_availability a
                WHERE a.hotel_id IN (SELECT id FROM hotels WHERE city = ?) AND a.night >= ? AND a.night < ?
                GROUP BY a.hotel_id
            )
            SELECT {_HOTEL_SELECT}, stay.nights_known, stay.nights_open, stay.avg_price, stay.total_price
            FROM stay JOIN hotels h ON h.id = stay.hotel_id ORDER BY h.id""",
            (city, self._db.date_value(check_in), self._db.date_value(check_out)),
        )
        return [self._stats(row) for row in rows]

    @staticmethod
    def _stats(row: Sequence[Any]) -> _StayStats:
        n = len(_HOTEL_COLUMNS)
        return _StayStats(
            hotel=_hotel_from_row(row[:n]),
            nights_known=int(row[n]),
            nights_open=int(row[n + 1]),
            avg_price=float(row[n + 2]),
            total_price=float(row[n + 3]),
        )

    async def _offers_for_ids(self, ids: Sequence[str], check_in: date, check_out: date) -> list[HotelOffer]:
        hotels = await self.get_hotels(ids)
        stats = [_StayStats(h, 0, 0, 0.0, 0.0) for h in hotels]
        return await self._offers(stats, check_in, check_out)

    async def _offers(self, stats: Sequence[_StayStats], check_in: date, check_out: date) -> list[HotelOffer]:
        """Attach the nightly rates to each hotel (one query for all of them)."""
        if not stats:
            return []
        ids = [s.hotel.id for s in stats]
        rows = await self._db.fetch(
            "SELECT hotel_id, night, price, available FROM hotel_availability "
            f"WHERE hotel_id IN ({_placeholders(len(ids))}) AND night >= ? AND night < ? "
            "ORDER BY hotel_id, night",
            (*ids, self._db.date_value(check_in), self._db.date_value(check_out)),
        )
        nightly: dict[str, dict[date, tuple[float, bool]]] = {}
        for hotel_id, night, price, available in rows:
            nightly.setdefault(hotel_id, {})[_as_date(night)] = (float(price), bool(available))
        stay = [date.fromordinal(d) for d in range(check_in.toordinal(), check_out.toordinal())]
        offers = []
        for s in stats:
            rates = nightly.get(s.hotel.id, {})
            if not rates:
                continue
            prices = [rates[d][0] for d in stay if d in rates]
            closed = [d for d in stay if d not in rates or not rates[d][1]]
            total = sum(prices)
            offers.append(
                HotelOffer(
                    hotel=s.hotel,
                    nightly_prices=prices,
                    avg_nightly_price=round(total / len(prices), 2),
                    total_price=round(total, 2),
                    available=not closed,
                    unavailable_nights=closed,
                )
            )
        return offers

    # --- writes -----------------------------------------------------------------------------

    async def upsert_hotels(self, hotels: Sequence[Hotel], *, batch_size: int = 500) -> int:
        for batch in _batches(hotels, batch_size):
            hotel_rows = [
                tuple(
                    json.dumps(h.amenities) if c == "amenities" else getattr(h, c) for c in _HOTEL_COLUMNS
                )
                for h in batch
            ]
            amenity_rows = [(h.id, a) for h in batch for a in dict.fromkeys(h.amenities)]
            ids = [h.id for h in batch]

            async def write(tx: Transaction, hotel_rows=hotel_rows, amenity_rows=amenity_rows, ids=ids) -> None:
                await tx.executemany(_UPSERT_HOTEL, hotel_rows)
                await tx.execute(
                    f"DELETE FROM hotel_amenities WHERE hotel_id IN ({_placeholders(len(ids))})", ids
                )
                await tx.executemany("INSERT INTO hotel_amenities (hotel_id, amenity) VALUES (?, ?)", amenity_rows)

            await self._db.transaction(write)
        return len(hotels)

    async def upsert_availability(self, rows: Sequence[AvailabilityRow], *, batch_size: int = 1000) -> int:
        """Write nightly rates in batches, one short transaction each, so readers never wait long."""
        now = time.time()
        for batch in _batches(rows, max(1, batch_size)):
            if self.dialect == "postgresql":
                columns = (
                    [r.hotel_id for r in batch],
                    [r.date for r in batch],
                    [r.price for r in batch],
                    [int(r.available) for r in batch],
                    [now] * len(batch),
                )

                async def write(tx: Transaction, columns=columns) -> None:
                    await tx.execute(_UPSERT_AVAILABILITY_POSTGRES, columns)
            else:
                values = [(r.hotel_id, r.date.isoformat(), r.price, int(r.available), now) for r in batch]

                async def write(tx: Transaction, values=values) -> None:  # type: ignore[misc]
                    await tx.executemany(_UPSERT_AVAILABILITY_SQLITE, values)

            await self._db.transaction(write)
        return len(rows)

    async def prune_availability(self, before: date) -> int:
        """Forget nights before `before`; returns how many were deleted."""
        rows = await self._db.fetch(
            "SELECT COUNT(*) FROM hotel_availability WHERE night < ?", (self._db.date_value(before),)
        )

        async def delete(tx: Transaction) -> None:
            await tx.execute("DELETE FROM hotel_availability WHERE night < ?", (self._db.date_value(before),))

        if rows[0][0]:
            await self._db.transaction(delete)
        return int(rows[0][0])

    async def mark_seeded(self) -> None:
        await self.set_meta("seeded_at", datetime.now(UTC).isoformat())

    async def mark_refreshed(self, when: datetime | None = None) -> None:
        await self.set_meta("refreshed_at", (when or datetime.now(UTC)).isoformat())
