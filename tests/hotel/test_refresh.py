"""The refresh worker against the fake supplier: retries, rate limits, correct data, and no blocked users."""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from agents.hotel.refresh import (
    HttpSupplier,
    SimulatedSupplier,
    SupplierRejected,
    SupplierUnavailable,
    TokenBucket,
    _retry_after,
    refresh_once,
    run_worker,
)
from agents.hotel.seed import generate_hotels, nightly_rate
from agents.hotel.settings import HotelSettings
from agents.hotel.store import AvailabilityRow, HotelQuery, HotelStore
from bot.config import load_settings
from bot.faults import Backoff
from tests.fakes.supplier_server import FakeSupplier
from tests.hotel.conftest import FRESH_DAYS, TODAY

ALL_IDS = [h.id for h in generate_hotels()]


class RecordingSleep:
    """Stands in for asyncio.sleep: remembers each requested delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


def _http(fake: FakeSupplier, sleep: RecordingSleep, **kwargs: object) -> HttpSupplier:
    options: dict[str, object] = {
        "rate_per_second": 10_000.0, "max_retries": 6, "timeout": 5.0, "backoff": Backoff(base=0.01, cap=0.1),
        "max_hotels_per_request": 400, "sleep": sleep,
    }
    options.update(kwargs)
    return HttpSupplier(fake.base_url, **options)  # type: ignore[arg-type]


async def _stored(store: HotelStore, start: date, end: date) -> dict[tuple[str, date], tuple[float, bool]]:
    return {(r.hotel_id, r.date): (r.price, r.available) for r in await store.nightly_rates(ALL_IDS, start, end)}


# --- the HTTP supplier ---------------------------------------------------------------------------


async def test_refresh_through_429_500_and_dropped_connections_stores_exactly_what_was_served(
    fresh_store: HotelStore, fake_supplier: FakeSupplier
) -> None:
    fake_supplier.inject("429", retry_after="0.25")
    fake_supplier.inject("500")
    fake_supplier.inject("503")
    fake_supplier.inject("disconnect")
    fake_supplier.inject("garbage")
    sleep = RecordingSleep()
    async with _http(fake_supplier, sleep) as supplier:
        report = await refresh_once(fresh_store, supplier, today=TODAY, days=FRESH_DAYS, batch_size=700,
                                    hotels_per_fetch=400)

    assert report.rows_written == len(ALL_IDS) * FRESH_DAYS
    assert report.rows_rejected == 0 and report.hotels_skipped == 0
    assert fake_supplier.statuses()[:6] == [429, 500, 503, 0, 200, 200]
    first_chunk = fake_supplier.requests[0].hotel_ids
    assert all(r.hotel_ids == first_chunk for r in fake_supplier.requests[:6]), "retried as it was"
    assert sleep.delays[0] >= 0.25, "Retry-After is honoured"
    assert len(sleep.delays) == 5

    stored = await _stored(fresh_store, TODAY, TODAY + timedelta(days=FRESH_DAYS))
    assert len(fake_supplier.served) == len(ALL_IDS) * FRESH_DAYS
    assert stored == fake_supplier.served
    changed = sum(stored[k][0] != nightly_rate(*k)[0] for k in stored)
    assert changed > len(stored) * 0.9, "the supplier's prices replaced the seeded ones"
    assert await fresh_store.last_refresh() is not None

    night = TODAY + timedelta(days=1)
    offer = await fresh_store.offer("kyoto-007", night, night + timedelta(days=2))
    assert offer is not None
    assert offer.nightly_prices == [fake_supplier.served[("kyoto-007", night + timedelta(days=d))][0] for d in (0, 1)]


async def test_the_supplier_gives_up_with_a_clear_error_after_the_last_retry(fake_supplier: FakeSupplier) -> None:
    fake_supplier.inject("500", times=10)
    sleep = RecordingSleep()
    async with _http(fake_supplier, sleep, max_retries=3) as supplier:
        with pytest.raises(SupplierUnavailable) as failure:
            await supplier.fetch(["paris-001"], TODAY, TODAY + timedelta(days=2))
    assert failure.value.attempts == 4
    assert failure.value.status == 500
    assert "failed 4 time(s)" in str(failure.value) and "HTTP 500" in str(failure.value)
    assert len(fake_supplier.requests) == 4
    assert len(sleep.delays) == 3 and all(0 < d <= 0.1 for d in sleep.delays)


async def test_every_retry_waits_within_its_growing_backoff_ceiling(fake_supplier: FakeSupplier) -> None:
    fake_supplier.inject("503", times=5)
    sleep = RecordingSleep()
    async with _http(fake_supplier, sleep, max_retries=5, backoff=Backoff(base=0.01, cap=10)) as supplier:
        await supplier.fetch(["paris-001"], TODAY, TODAY + timedelta(days=1))
    # Full jitter: each delay lies in [0, base·2^n]; the ceiling doubles with every retry.
    assert len(sleep.delays) == 5
    for n, delay in enumerate(sleep.delays):
        assert 0 <= delay <= 0.01 * 2**n


async def test_a_client_error_is_not_retried(fake_supplier: FakeSupplier) -> None:
    fake_supplier.inject("400")
    sleep = RecordingSleep()
    async with _http(fake_supplier, sleep) as supplier:
        with pytest.raises(SupplierRejected) as failure:
            await supplier.fetch(["paris-001"], TODAY, TODAY + timedelta(days=1))
    assert failure.value.status == 400
    assert len(fake_supplier.requests) == 1 and sleep.delays == []


async def test_connection_errors_are_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleep = RecordingSleep()
    supplier = HttpSupplier(f"http://127.0.0.1:{port}", max_retries=2, backoff=Backoff(0.01, 0.05), sleep=sleep)
    async with supplier:
        with pytest.raises(SupplierUnavailable) as failure:
            await supplier.fetch(["paris-001"], TODAY, TODAY + timedelta(days=1))
    assert failure.value.attempts == 3 and failure.value.status is None
    assert "Connect" in str(failure.value)
    assert len(sleep.delays) == 2


async def test_a_retry_after_beyond_the_limit_ends_the_attempts_at_once(fake_supplier: FakeSupplier) -> None:
    fake_supplier.inject("429", retry_after="3600")
    sleep = RecordingSleep()
    async with _http(fake_supplier, sleep, max_retry_after=60) as supplier:
        with pytest.raises(SupplierUnavailable) as failure:
            await supplier.fetch(["paris-001"], TODAY, TODAY + timedelta(days=1))
    assert failure.value.retry_after == 3600 and failure.value.status == 429
    assert sleep.delays == []


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert _retry_after({"Retry-After": "7"}) == 7
    assert _retry_after({"Retry-After": "0.5"}) == 0.5
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    assert 100 < _retry_after({"Retry-After": when}) <= 120
    assert _retry_after({"Retry-After": "soon"}) is None
    assert _retry_after({}) is None


async def test_the_token_bucket_spaces_requests_at_the_configured_rate() -> None:
    now = [100.0]
    waited: list[float] = []

    async def sleep(delay: float) -> None:
        waited.append(delay)
        now[0] += delay

    bucket = TokenBucket(10.0, capacity=2, clock=lambda: now[0], sleep=sleep)
    for _ in range(12):
        await bucket.acquire()
    # Two go at once (the burst), the other ten wait a tenth of a second each.
    assert now[0] - 100.0 == pytest.approx(1.0)
    assert len(waited) == 10


# --- one refresh run ----------------------------------------------------------------------------


async def test_refresh_skips_hotels_in_a_refused_request_and_carries_on(
    fresh_store: HotelStore, fake_supplier: FakeSupplier
) -> None:
    fake_supplier.inject("400")
    async with _http(fake_supplier, RecordingSleep()) as supplier:
        report = await refresh_once(fresh_store, supplier, today=TODAY, days=2, hotels_per_fetch=400)
    assert report.hotels_skipped == 400
    assert report.rows_written == (len(ALL_IDS) - 400) * 2
    refused = set(fake_supplier.requests[0].hotel_ids)
    assert len(refused) == 400
    stored = await _stored(fresh_store, TODAY, TODAY + timedelta(days=2))
    for (hotel_id, night), rate in stored.items():
        if hotel_id in refused:
            assert (hotel_id, night) not in fake_supplier.served
            assert rate == nightly_rate(hotel_id, night), "kept the seeded rate"
        else:
            assert rate == fake_supplier.served[(hotel_id, night)]


async def test_rates_in_the_wrong_currency_are_rejected(fresh_store: HotelStore, fake_supplier: FakeSupplier) -> None:
    fake_supplier.currency_override["paris-001"] = "USD"
    async with _http(fake_supplier, RecordingSleep()) as supplier:
        report = await refresh_once(fresh_store, supplier, today=TODAY, days=3)
    assert report.rows_rejected == 3
    stored = await _stored(fresh_store, TODAY, TODAY + timedelta(days=3))
    assert [stored[("paris-001", TODAY + timedelta(days=d))] for d in range(3)] == [
        nightly_rate("paris-001", TODAY + timedelta(days=d)) for d in range(3)
    ]
    assert stored[("paris-002", TODAY)] == fake_supplier.served[("paris-002", TODAY)]


async def test_refresh_forgets_nights_that_have_passed(fresh_store: HotelStore) -> None:
    later = TODAY + timedelta(days=3)
    report = await refresh_once(fresh_store, SimulatedSupplier(), today=later, days=2)
    assert report.pruned == 3 * len(ALL_IDS)
    assert await fresh_store.nightly_rates(["paris-001"], TODAY, later) == []


# --- the simulated supplier ---------------------------------------------------------------------


async def test_the_simulated_supplier_drifts_deterministically_and_sells_out_some_nights() -> None:
    clock = datetime(2030, 6, 3, 12, tzinfo=UTC).timestamp
    ids = [h.id for h in generate_hotels() if h.city in ("Paris", "Osaka")]
    end = TODAY + timedelta(days=30)
    first = await SimulatedSupplier(seed=1, clock=clock).fetch([*ids, "unknown-hotel"], TODAY, end)
    again = await SimulatedSupplier(seed=1, clock=clock).fetch(ids, TODAY, end)
    other = await SimulatedSupplier(seed=2, clock=clock).fetch(ids, TODAY, end)
    later = await SimulatedSupplier(seed=1, clock=lambda: clock() + 7200).fetch(ids, TODAY, end)
    assert first == again
    assert len(first) == len(ids) * 30
    assert [r.price for r in first] != [r.price for r in other]
    assert [r.price for r in first] != [r.price for r in later], "prices drift over time"
    for row in first:
        seeded, _ = nightly_rate(row.hotel_id, row.date)
        assert seeded * 0.9 <= row.price <= seeded * 1.1
        assert row.currency == ("EUR" if row.hotel_id.startswith("paris") else "JPY")
    sold_out = sum(not r.available for r in first) / len(first)
    seeded_sold_out = sum(not nightly_rate(r.hotel_id, r.date)[1] for r in first) / len(first)
    assert seeded_sold_out < sold_out < 0.3
    soon = [r for r in first if r.date < TODAY + timedelta(days=7)]
    assert sum(not r.available for r in soon) / len(soon) > sold_out * 0.9


# --- users are never kept waiting by the worker -------------------------------------------------


class GatedSupplier:
    """Answers the first `free` fetches at once; later ones wait for the gate."""

    def __init__(self, inner: SimulatedSupplier, gate: asyncio.Event, free: int):
        self.name = "gated"
        self.inner = inner
        self.gate = gate
        self.free = free
        self.calls = 0

    async def fetch(self, hotel_ids: Sequence[str], start: date, end: date) -> list[AvailabilityRow]:
        self.calls += 1
        if self.calls > self.free:
            await self.gate.wait()
        return await self.inner.fetch(hotel_ids, start, end)


async def test_searches_complete_while_the_worker_writes(fresh_store: HotelStore) -> None:
    gate = asyncio.Event()
    supplier = GatedSupplier(SimulatedSupplier(seed=3), gate, free=2)
    written = {"rows": 0}

    def on_batch(report: object) -> None:
        written["rows"] = report.rows_written  # type: ignore[attr-defined]

    refresh = asyncio.create_task(
        refresh_once(fresh_store, supplier, today=TODAY, days=FRESH_DAYS, batch_size=100, hotels_per_fetch=100,
                     on_batch=on_batch)
    )
    target = 2 * 100 * FRESH_DAYS  # both ungated fetches written
    query = HotelQuery(city="Paris", check_in=TODAY + timedelta(days=3), check_out=TODAY + timedelta(days=6))
    seen: list[tuple[int, bool, int]] = []
    for _ in range(50_000):
        offers = await fresh_store.search(query)
        seen.append((written["rows"], refresh.done(), len(offers)))
        if written["rows"] >= target:
            break
    refresh_was_running = not refresh.done()
    gate.set()
    report = await refresh

    assert refresh_was_running
    assert seen[-1][0] >= target, "the worker wrote while the searches ran"
    assert not any(done for _, done, _ in seen), "every search finished before the refresh did"
    assert len({rows for rows, _, _ in seen}) > 1, "searches and write batches interleaved"
    assert all(count == 40 for _, _, count in seen)
    assert report.rows_written == len(ALL_IDS) * FRESH_DAYS


# --- the worker loop ----------------------------------------------------------------------------


async def test_the_worker_survives_a_failed_run_and_refreshes_on_the_next(
    tmp_path: Path, seeded_sqlite_url: str, fake_supplier: FakeSupplier, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copy(seeded_sqlite_url.removeprefix("sqlite:///"), tmp_path / "concierge.db")
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_RETRY_BASE_DELAY=0.001, CONCIERGE_RETRY_MAX_DELAY=0.005, _env_file=None,
    )
    hotel = HotelSettings(
        CONCIERGE_HOTEL_SUPPLIER_URL=fake_supplier.base_url, CONCIERGE_HOTEL_SUPPLIER_RATE=1000,
        CONCIERGE_HOTEL_REFRESH_INTERVAL=0.01, _env_file=None,
    )
    fake_supplier.inject("500", times=6)  # every attempt of the first run's first request
    with caplog.at_level(logging.INFO, logger="agents.hotel.refresh"):
        await run_worker(settings, hotel, days=2, max_runs=2)

    assert fake_supplier.statuses()[:6] == [500] * 6
    assert fake_supplier.statuses()[6:] == [200] * 13
    assert "refresh run failed" in caplog.text and "refresh done" in caplog.text
    store = await HotelStore.open(settings.resolved_database_url)
    try:
        today = date.today()
        assert await _stored(store, today, today + timedelta(days=2)) == fake_supplier.served
        assert await store.last_refresh() is not None
    finally:
        await store.close()


async def test_the_worker_seeds_an_empty_database_and_stops_when_asked(tmp_path: Path) -> None:
    settings = load_settings(CONCIERGE_DATA_DIR=tmp_path, _env_file=None)
    hotel = HotelSettings(CONCIERGE_HOTEL_REFRESH_INTERVAL=3600, _env_file=None)
    stop = asyncio.Event()
    worker = asyncio.create_task(run_worker(settings, hotel, stop=stop, days=2))
    store = await HotelStore.open(settings.resolved_database_url)
    try:
        for _ in range(1200):
            if await store.last_refresh() is not None or worker.done():
                break
            await asyncio.sleep(0.05)
        assert await store.last_refresh() is not None
        stop.set()
        await worker  # returns without waiting for the hour to pass
        assert await store.is_seeded()
        rows = await store.nightly_rates(["paris-001"], date.today(), date.today() + timedelta(days=2))
        assert len(rows) == 2
    finally:
        await store.close()
