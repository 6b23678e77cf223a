"""The hotel store, the demo data and the city geography, checked against the seed's own rates."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agents.hotel import geo
from agents.hotel.seed import HOTELS_PER_CITY, generate, generate_hotels, nightly_rate, seed
from agents.hotel.store import AMENITIES, AvailabilityRow, HotelQuery, HotelStore, price_bands
from tests.hotel.conftest import FRESH_DAYS, TODAY

CHECK_IN = TODAY + timedelta(days=32)  # a Friday in early July: weekend and high-season prices
CHECK_OUT = CHECK_IN + timedelta(days=3)


def _nights(check_in: date, check_out: date) -> list[date]:
    return [check_in + timedelta(days=d) for d in range((check_out - check_in).days)]


def _expected(city: str, check_in: date = CHECK_IN, check_out: date = CHECK_OUT) -> dict[str, tuple[float, bool]]:
    """hotel id → (average nightly price, available every night), straight from the seed's rates."""
    result = {}
    for hotel in generate_hotels():
        if hotel.city == city:
            rates = [nightly_rate(hotel.id, night) for night in _nights(check_in, check_out)]
            result[hotel.id] = (sum(p for p, _ in rates) / len(rates), all(a for _, a in rates))
    return result


def _query(**kwargs: object) -> HotelQuery:
    values: dict[str, object] = {"city": "Paris", "check_in": CHECK_IN, "check_out": CHECK_OUT, "limit": 500}
    values.update(kwargs)
    return HotelQuery.model_validate(values)


# --- geography -----------------------------------------------------------------------------


def test_at_least_thirty_real_cities_on_every_inhabited_continent() -> None:
    assert len(geo.CITIES) >= 30
    for name in ("Paris", "London", "Tokyo", "New York", "Kyoto", "Sydney", "Cape Town", "Buenos Aires",
                 "Mexico City", "Vancouver", "Dubai", "Marrakech"):
        assert geo.find_city(name) is not None, name
    assert {c.currency for c in geo.CITIES.values()} >= {"EUR", "GBP", "JPY", "USD", "KRW", "AUD"}
    for city in geo.CITIES.values():
        assert 4 <= len(city.landmarks) <= 8, city.name
        assert len(city.districts) >= 5, city.name
        for place in (*city.districts, *city.landmarks):
            assert geo.haversine_km(city.lat, city.lon, place.lat, place.lon) < 30, (city.name, place.name)


def test_city_lookup_ignores_case_and_accents_and_knows_aliases() -> None:
    assert geo.find_city("paris").name == "Paris"
    assert geo.find_city("  PARÍS ").name == "Paris"
    assert geo.find_city("İstanbul").name == "Istanbul"
    assert geo.find_city("NYC").name == "New York"
    assert geo.find_city("東京").name == "Tokyo"
    assert geo.find_city("Wien").name == "Vienna"
    assert geo.find_city("Atlantis") is None


def test_misspelled_cities_get_suggestions() -> None:
    assert geo.suggest_cities("Pariss")[0] == "Paris"
    assert geo.suggest_cities("Barcelonna")[0] == "Barcelona"
    assert "Tokyo" in geo.suggest_cities("Tokio")
    assert geo.suggest_cities("qqqqzzzz") == []


def test_districts_and_landmarks_resolve_by_partial_or_alias_name() -> None:
    paris = geo.find_city("Paris")
    assert paris.district("marais").name == "Le Marais"
    assert paris.district("saint germain des pres").name == "Saint-Germain-des-Prés"
    assert geo.find_city("Tokyo").district("新宿").name == "Shinjuku"
    assert geo.find_landmark("louvre")[1].name == "Louvre Museum"
    assert geo.find_landmark("senso-ji")[0].name == "Tokyo"


def test_haversine_matches_known_distances() -> None:
    paris, london = geo.find_city("Paris"), geo.find_city("London")
    assert 330 < geo.haversine_km(paris.lat, paris.lon, london.lat, london.lon) < 350
    assert geo.haversine_km(1.0, 2.0, 1.0, 2.0) == 0


# --- demo data -----------------------------------------------------------------------------


def test_demo_hotels_are_plausible_and_sit_inside_their_district() -> None:
    hotels = generate_hotels()
    assert len({h.id for h in hotels}) == len(hotels)
    per_city: dict[str, int] = {}
    for hotel in hotels:
        per_city[hotel.city] = per_city.get(hotel.city, 0) + 1
        city = geo.find_city(hotel.city)
        district = city.district(hotel.district)
        assert district is not None
        assert geo.haversine_km(district.lat, district.lon, hotel.latitude, hotel.longitude) <= district.radius_km
        assert 2 <= hotel.stars <= 5
        assert 1 <= hotel.guest_rating <= 5
        assert hotel.review_count > 0
        assert hotel.currency == city.currency
        assert set(hotel.amenities) <= set(AMENITIES)
        assert hotel.thumbnail_url == ""  # no photo rather than a link that does not load
        assert hotel.district in hotel.description
    assert set(per_city.values()) == {HOTELS_PER_CITY}
    assert len(per_city) == len(geo.CITIES)
    names = [h.name for h in hotels if h.city == "Paris"]
    assert len(set(names)) == len(names)


def test_generation_is_deterministic_and_independent_of_the_start_day() -> None:
    hotels_a, rows_a = generate(TODAY, days=5)
    hotels_b, rows_b = generate(TODAY, days=5)
    assert hotels_a == hotels_b
    assert rows_a == rows_b
    _, shifted = generate(TODAY + timedelta(days=2), days=5)
    by_key = {(r.hotel_id, r.date): r for r in rows_a}
    overlap = [r for r in shifted if (r.hotel_id, r.date) in by_key]
    assert overlap and all(by_key[(r.hotel_id, r.date)] == r for r in overlap)


def test_prices_are_dearer_at_weekends_and_in_high_season_and_some_nights_sell_out() -> None:
    year = [date(2030, 1, 7) + timedelta(days=d) for d in range(364)]

    def rates(city: str) -> list[tuple[date, float, bool]]:
        return [
            (night, *nightly_rate(h.id, night)) for h in generate_hotels() if h.city == city for night in year
        ]

    paris = rates("Paris")

    def mean(pred: object) -> float:
        prices = [p for night, p, _ in paris if pred(night)]  # type: ignore[operator]
        return sum(prices) / len(prices)

    assert mean(lambda d: d.weekday() in (4, 5)) > mean(lambda d: d.weekday() in (0, 1, 2)) * 1.08
    assert mean(lambda d: d.month == 7) > mean(lambda d: d.month == 2) * 1.3
    sold_out = sum(not ok for _, _, ok in paris) / len(paris)
    assert 0.01 < sold_out < 0.2
    tokyo = [p for _, p, _ in rates("Tokyo")]
    assert all(p % 100 == 0 for p in tokyo)  # yen prices come in hundreds
    assert sum(tokyo) / len(tokyo) > 10_000


# --- seeding -------------------------------------------------------------------------------


async def test_seeding_is_idempotent(empty_url: str) -> None:
    store = await HotelStore.open(empty_url)
    try:
        assert not await store.is_seeded()
        assert await seed(store, TODAY, days=3) == len(generate_hotels())
        assert await store.is_seeded()
        before = await store.nightly_rates(["paris-001", "tokyo-002"], TODAY, TODAY + timedelta(days=3))
        assert await seed(store, TODAY, days=3) == 0
        assert await seed(store, TODAY + timedelta(days=1), days=3) == 0
        after = await store.nightly_rates(["paris-001", "tokyo-002"], TODAY, TODAY + timedelta(days=5))
        assert after == before
        assert len(await store.cities()) == len(geo.CITIES)
    finally:
        await store.close()


async def test_setup_can_run_again_on_a_seeded_store(store: HotelStore) -> None:
    await store.setup()
    assert await store.is_seeded()


# --- search --------------------------------------------------------------------------------


async def test_every_city_is_searchable_by_any_of_its_names(store: HotelStore) -> None:
    assert sorted(await store.cities()) == sorted(c.name for c in geo.CITIES.values())
    for text in ("paris", "PARÍS", "パリ"):
        offers = await store.search(_query(city=text))
        assert len(offers) == HOTELS_PER_CITY
        assert {o.hotel.city for o in offers} == {"Paris"}


async def test_max_price_returns_exactly_the_hotels_available_every_night_under_it(store: HotelStore) -> None:
    expected = {h for h, (avg, ok) in _expected("Paris").items() if ok and avg <= 250}
    offers = await store.search(_query(max_price=250))
    assert {o.hotel.id for o in offers} == expected
    assert expected, "the data set should have cheap hotels"
    for offer in offers:
        assert offer.available and not offer.unavailable_nights
        assert offer.avg_nightly_price <= 250
        assert len(offer.nightly_prices) == 3
        assert offer.total_price == pytest.approx(sum(offer.nightly_prices))
        assert offer.avg_nightly_price == pytest.approx(offer.total_price / 3, abs=0.01)


async def test_min_price_applies_to_the_average_nightly_price(store: HotelStore) -> None:
    expected = {h for h, (avg, ok) in _expected("Tokyo").items() if ok and avg >= 40_000}
    offers = await store.search(_query(city="Tokyo", min_price=40_000))
    assert {o.hotel.id for o in offers} == expected
    assert all(o.avg_nightly_price >= 40_000 and o.available for o in offers)


async def test_price_range_and_sort_by_price(store: HotelStore) -> None:
    expected = {h for h, (avg, ok) in _expected("London").items() if ok and 150 <= avg <= 400}
    offers = await store.search(_query(city="London", min_price=150, max_price=400, sort="price"))
    assert {o.hotel.id for o in offers} == expected
    prices = [o.avg_nightly_price for o in offers]
    assert prices == sorted(prices)


async def test_without_a_price_filter_sold_out_hotels_are_listed_last_and_flagged(store: HotelStore) -> None:
    expected = _expected("Paris")
    offers = await store.search(_query())
    assert len(offers) == len(expected)
    flags = [o.available for o in offers]
    assert flags == sorted(flags, reverse=True), "available hotels first"
    assert False in flags, "some Paris hotel should be sold out on a July weekend"
    for offer in offers:
        assert offer.available == expected[offer.hotel.id][1]
        if not offer.available:
            closed = [n for n in _nights(CHECK_IN, CHECK_OUT) if not nightly_rate(offer.hotel.id, n)[1]]
            assert offer.unavailable_nights == closed


async def test_rating_filter_and_rating_order(store: HotelStore) -> None:
    offers = await store.search(_query(city="Rome", min_rating=4.3))
    expected = {h.id for h in generate_hotels() if h.city == "Rome" and h.guest_rating >= 4.3}
    assert {o.hotel.id for o in offers} == expected
    available = [o.hotel.guest_rating for o in offers if o.available]
    assert available == sorted(available, reverse=True)


async def test_amenities_must_all_be_present_and_accept_common_spellings(store: HotelStore) -> None:
    offers = await store.search(_query(city="Bangkok", amenities=["Swimming Pool", "Free WiFi", "gym"]))
    expected = {
        h.id for h in generate_hotels()
        if h.city == "Bangkok" and {"pool", "wifi", "gym"} <= set(h.amenities)
    }
    assert expected
    assert {o.hotel.id for o in offers} == expected
    assert await store.search(_query(amenities=["teleporter"])) == []


async def test_district_filter_accepts_aliases_and_partial_names(store: HotelStore) -> None:
    offers = await store.search(_query(district="marais"))
    assert offers and {o.hotel.district for o in offers} == {"Le Marais"}
    assert len(offers) == sum(1 for h in generate_hotels() if h.district == "Le Marais")
    shinjuku = await store.search(_query(city="東京", district="新宿"))
    assert shinjuku and {o.hotel.district for o in shinjuku} == {"Shinjuku"}
    assert await store.search(_query(district="Nowhere")) == []


async def test_all_filters_together_agree_with_the_seed(store: HotelStore) -> None:
    rates = _expected("New York")
    expected = {
        h.id for h in generate_hotels()
        if h.city == "New York" and h.guest_rating >= 4.0 and "breakfast" in h.amenities
        and h.district == "Midtown Manhattan" and rates[h.id][1] and rates[h.id][0] <= 900
    }
    offers = await store.search(_query(city="nyc", district="Midtown", min_rating=4.0,
                                       amenities=["breakfast"], max_price=900, sort="stars"))
    assert {o.hotel.id for o in offers} == expected
    stars = [o.hotel.stars for o in offers]
    assert stars == sorted(stars, reverse=True)


async def test_limit_and_popularity_order(store: HotelStore) -> None:
    offers = await store.search(_query(city="Seoul", sort="popularity", limit=5))
    assert len(offers) == 5
    available = [o.hotel.review_count for o in offers if o.available]
    assert available == sorted(available, reverse=True)


async def test_stays_past_the_known_nights_are_not_available(store: HotelStore) -> None:
    last = TODAY + timedelta(days=179)
    offers = await store.search(_query(check_in=last, check_out=last + timedelta(days=2)))
    assert offers and not any(o.available for o in offers)
    assert all(last + timedelta(days=1) in o.unavailable_nights for o in offers)
    assert await store.search(_query(check_in=last, check_out=last + timedelta(days=2), max_price=10_000)) == []
    far = TODAY + timedelta(days=400)
    assert await store.search(_query(check_in=far, check_out=far + timedelta(days=1))) == []


def test_a_query_needs_a_sensible_stay() -> None:
    with pytest.raises(ValidationError):
        _query(check_out=CHECK_IN)
    with pytest.raises(ValidationError):
        _query(check_out=CHECK_IN + timedelta(days=90))
    with pytest.raises(ValidationError):
        _query(min_price=300, max_price=100)
    assert _query(amenities=["A/C", "Wi-Fi", "wifi"]).amenities == ["air-conditioning", "wifi"]


# --- details and aggregates ----------------------------------------------------------------


async def test_get_hotels_keeps_the_order_asked_and_skips_unknown_ids(store: HotelStore) -> None:
    hotels = await store.get_hotels(["tokyo-003", "nope", "paris-001", "tokyo-003"])
    assert [h.id for h in hotels] == ["tokyo-003", "paris-001"]
    assert hotels[1] == next(h for h in generate_hotels() if h.id == "paris-001")
    assert await store.get_hotels([]) == []


async def test_offer_for_one_hotel(store: HotelStore) -> None:
    offer = await store.offer("paris-001", CHECK_IN, CHECK_OUT)
    assert offer is not None
    assert offer.nightly_prices == [nightly_rate("paris-001", n)[0] for n in _nights(CHECK_IN, CHECK_OUT)]
    assert await store.offer("nope", CHECK_IN, CHECK_OUT) is None
    far = TODAY + timedelta(days=400)
    assert await store.offer("paris-001", far, far + timedelta(days=2)) is None


async def test_aggregate_by_district(store: HotelStore) -> None:
    expected = _expected("Paris")
    hotels = {h.id: h for h in generate_hotels() if h.city == "Paris"}
    rows = await store.aggregate("paris", "district", CHECK_IN, CHECK_OUT)
    assert {r.key for r in rows} == {d.name for d in geo.find_city("Paris").districts}
    assert sum(r.hotels for r in rows) == HOTELS_PER_CITY
    for row in rows:
        members = [h for h in hotels.values() if h.district == row.key]
        open_prices = [expected[h.id][0] for h in members if expected[h.id][1]]
        assert row.hotels == len(members)
        assert row.available == len(open_prices)
        if open_prices:
            assert row.min_price == pytest.approx(min(open_prices), abs=0.01)
            assert row.max_price == pytest.approx(max(open_prices), abs=0.01)
            assert row.avg_price == pytest.approx(sum(open_prices) / len(open_prices), abs=0.01)
        else:
            assert row.min_price is None


async def test_aggregate_by_price_band_puts_every_hotel_in_one_band(store: HotelStore) -> None:
    rows = await store.aggregate("Tokyo", "price_band", CHECK_IN, CHECK_OUT)
    assert sum(r.hotels for r in rows) == HOTELS_PER_CITY
    bands = {label: (low, high) for label, low, high in price_bands("Tokyo")}
    assert [r.key for r in rows] == [k for k in bands if k in {r.key for r in rows}]
    for row in rows:
        low, high = bands[row.key]
        if row.min_price is not None:
            assert row.min_price >= low - 0.01
            assert high is None or row.max_price < high + 0.01
    assert all(r.key.endswith("JPY") for r in rows)


async def test_aggregate_by_amenity(store: HotelStore) -> None:
    rows = await store.aggregate("Sydney", "amenity", CHECK_IN, CHECK_OUT)
    counts = {r.key: r.hotels for r in rows}
    sydney = [h for h in generate_hotels() if h.city == "Sydney"]
    assert counts == {a: sum(a in h.amenities for h in sydney) for a in {a for h in sydney for a in h.amenities}}
    assert [r.hotels for r in rows] == sorted((r.hotels for r in rows), reverse=True)


async def test_aggregate_of_an_unknown_city_is_empty(store: HotelStore) -> None:
    assert await store.aggregate("Atlantis", "district", CHECK_IN, CHECK_OUT) == []


# --- writes --------------------------------------------------------------------------------


async def test_upserted_rates_replace_the_old_ones(fresh_store: HotelStore) -> None:
    night = TODAY + timedelta(days=2)
    rows = [
        AvailabilityRow(hotel_id="paris-001", date=night, price=999.0, available=False),
        AvailabilityRow(hotel_id="paris-002", date=night, price=123.0, available=True),
        AvailabilityRow(hotel_id="paris-002", date=TODAY + timedelta(days=FRESH_DAYS), price=77.0, available=True),
    ]
    assert await fresh_store.upsert_availability(rows, batch_size=2) == 3
    stored = await fresh_store.nightly_rates(["paris-001", "paris-002"], night, night + timedelta(days=1))
    assert [(r.hotel_id, r.price, r.available) for r in stored] == [
        ("paris-001", 999.0, False), ("paris-002", 123.0, True),
    ]
    offer = await fresh_store.offer("paris-001", night, night + timedelta(days=1))
    assert offer is not None and not offer.available
    new_night = await fresh_store.nightly_rates(["paris-002"], TODAY + timedelta(days=FRESH_DAYS),
                                                TODAY + timedelta(days=FRESH_DAYS + 1))
    assert [r.price for r in new_night] == [77.0]


async def test_pruning_forgets_past_nights(fresh_store: HotelStore) -> None:
    removed = await fresh_store.prune_availability(TODAY + timedelta(days=2))
    assert removed == 2 * len(generate_hotels())
    assert await fresh_store.nightly_rates(["paris-001"], TODAY, TODAY + timedelta(days=2)) == []
    assert await fresh_store.prune_availability(TODAY + timedelta(days=2)) == 0


async def test_a_failed_write_leaves_nothing_behind(fresh_store: HotelStore) -> None:
    """Writes are one transaction: a failure half-way rolls back what came before it."""
    db = fresh_store._db
    before = await db.fetch("SELECT COUNT(*) FROM hotel_meta")

    async def write(tx: Any) -> None:
        await tx.execute("INSERT INTO hotel_meta (key, value) VALUES (?, ?)", ("half-way", "1"))
        raise RuntimeError("the supplier went away")

    with pytest.raises(RuntimeError):
        await db.transaction(write)
    assert await db.fetch("SELECT COUNT(*) FROM hotel_meta") == before
    assert await db.fetch("SELECT value FROM hotel_meta WHERE key = ?", ("half-way",)) == []


async def test_an_open_sqlite_write_holds_the_database_write_lock(tmp_path: Path) -> None:
    url = f"sqlite:///{(tmp_path / 'hotels.db').as_posix()}"
    store = await HotelStore.open(url)
    inside, finish = asyncio.Event(), asyncio.Event()

    async def write(tx: Any) -> None:
        await tx.execute("INSERT INTO hotel_meta (key, value) VALUES (?, ?)", ("k", "v"))
        inside.set()
        await finish.wait()

    try:
        task = asyncio.create_task(store._db.transaction(write))
        await inside.wait()
        with contextlib.closing(sqlite3.connect(tmp_path / "hotels.db", timeout=0)) as other:
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("INSERT INTO hotel_meta (key, value) VALUES ('other', 'x')")
            assert other.execute("SELECT COUNT(*) FROM hotel_meta WHERE key = 'k'").fetchone() == (0,)
        finish.set()
        await task
        assert await store._db.fetch("SELECT value FROM hotel_meta WHERE key = 'k'") == [("v",)]
    finally:
        finish.set()
        await store.close()
