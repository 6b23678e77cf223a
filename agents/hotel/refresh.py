"""The refresh worker: pulls availability and prices from a supplier on a schedule, apart from user requests."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

import aiohttp
from pydantic import BaseModel, Field, ValidationError

from agents.hotel import seed as demo
from agents.hotel.settings import HotelSettings
from agents.hotel.store import AvailabilityRow, HotelStore
from bot.faults import Backoff

if TYPE_CHECKING:
    from bot.config import Settings

log = logging.getLogger(__name__)

DEFAULT_DAYS = 180


# --- the supplier interface ----------------------------------------------------------------


class Supplier(Protocol):
    name: str

    async def fetch(self, hotel_ids: Sequence[str], start: date, end: date) -> list[AvailabilityRow]:
        """Nightly rates for the hotels, for nights from `start` up to (not including) `end`."""
        ...


class SupplierError(Exception):
    """The supplier could not give us rates."""


class SupplierRejected(SupplierError):
    """The supplier refused the request (a 4xx other than 429); retrying would not help."""

    def __init__(self, status: int, detail: str):
        super().__init__(f"supplier rejected the request with HTTP {status}: {detail}")
        self.status = status


class SupplierUnavailable(SupplierError):
    """The supplier kept failing (429, 5xx, connection errors) until we ran out of retries."""

    def __init__(self, url: str, attempts: int, last_error: str, status: int | None = None,
                 retry_after: float | None = None):
        super().__init__(f"supplier at {url} failed {attempts} time(s); last error: {last_error}")
        self.attempts = attempts
        self.status = status
        self.retry_after = retry_after


# --- wire format (see docs/hotel-data.md) ---------------------------------------------------


class RatesRequest(BaseModel):
    hotel_ids: list[str]
    start: date
    end: date  # exclusive


class SupplierRate(BaseModel):
    hotel_id: str
    date: date
    price: float = Field(ge=0)
    currency: str = Field(min_length=3, max_length=3)
    available: bool


class RatesResponse(BaseModel):
    rates: list[SupplierRate]
    unknown_hotel_ids: list[str] = []


# --- HTTP supplier ----------------------------------------------------------------------------


class TokenBucket:
    """At most `rate` acquisitions per second on average, with bursts of up to `capacity`."""

    def __init__(
        self,
        rate: float,
        capacity: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.capacity = capacity if capacity is not None else max(1.0, rate)
        self._tokens = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._updated = clock()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:  # first come, first served
            while True:
                now = self._clock()
                self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
                self._updated = now
                if self._tokens >= 1 - 1e-9:  # float error must not leave us a hair short forever
                    self._tokens = max(0.0, self._tokens - 1)
                    return
                await self._sleep((1 - self._tokens) / self.rate)


def _retry_after(headers: object) -> float | None:
    value = getattr(headers, "get", lambda _k: None)("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class HttpSupplier:
    """A supplier's JSON API, called politely: rate-limited, retried with backoff, never hammered."""

    def __init__(
        self,
        base_url: str,
        *,
        rate_per_second: float = 20.0,
        max_retries: int = 5,
        timeout: float = 30.0,
        backoff: Backoff | None = None,
        max_hotels_per_request: int = 100,
        max_retry_after: float = 300.0,
        session: aiohttp.ClientSession | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ):
        self.base_url = base_url.rstrip("/")
        self.name = urlsplit(base_url).netloc or base_url
        self.max_retries = max_retries
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.backoff = backoff or Backoff(base=0.5, cap=30.0)
        self.max_hotels_per_request = max_hotels_per_request
        self.max_retry_after = max_retry_after
        self.bucket = TokenBucket(rate_per_second, capacity=max(1.0, min(rate_per_second, 5.0)))
        self._session = session
        self._owns_session = session is None
        self._sleep = sleep

    async def close(self) -> None:
        if self._session is not None and self._owns_session:
            await self._session.close()
        self._session = None

    async def __aenter__(self) -> HttpSupplier:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self.timeout)
        return self._session

    async def fetch(self, hotel_ids: Sequence[str], start: date, end: date) -> list[AvailabilityRow]:
        rows: list[AvailabilityRow] = []
        ids = list(hotel_ids)
        for i in range(0, len(ids), self.max_hotels_per_request):
            request = RatesRequest(hotel_ids=ids[i : i + self.max_hotels_per_request], start=start, end=end)
            response = await self._post("/v1/availability", request)
            if response.unknown_hotel_ids:
                log.warning("supplier %s does not know %d hotel(s)", self.name, len(response.unknown_hotel_ids))
            rows.extend(
                AvailabilityRow(
                    hotel_id=r.hotel_id, date=r.date, price=r.price, available=r.available, currency=r.currency
                )
                for r in response.rates
            )
        return rows

    async def _post(self, path: str, request: RatesRequest) -> RatesResponse:
        url = self.base_url + path
        body = request.model_dump(mode="json")
        last_error = ""
        status: int | None = None
        for attempt in range(self.max_retries + 1):
            retry_after: float | None = None
            await self.bucket.acquire()
            try:
                async with self._client().post(url, json=body, timeout=self.timeout) as resp:
                    status = resp.status
                    if resp.status == 200:
                        try:
                            return RatesResponse.model_validate_json(await resp.read())
                        except ValidationError as exc:
                            # A truncated or garbled body is worth another try.
                            last_error = f"invalid response body ({exc.error_count()} error(s))"
                    elif resp.status == 429:
                        retry_after = _retry_after(resp.headers)
                        last_error = "HTTP 429 Too Many Requests"
                    elif resp.status >= 500:
                        retry_after = _retry_after(resp.headers)
                        last_error = f"HTTP {resp.status}"
                    else:
                        raise SupplierRejected(resp.status, (await resp.text())[:200])
            except (aiohttp.ClientError, TimeoutError) as exc:
                status = None
                last_error = f"{type(exc).__name__}: {exc}".rstrip(": ")
            if attempt == self.max_retries:
                break
            if retry_after is not None and retry_after > self.max_retry_after:
                raise SupplierUnavailable(url, attempt + 1, last_error, status, retry_after)
            delay = self.backoff.delay(attempt)
            if retry_after is not None:
                delay = max(delay, retry_after)
            log.info("supplier %s: %s; retry %d/%d in %.2fs", self.name, last_error, attempt + 1,
                     self.max_retries, delay)
            await self._sleep(delay)
        raise SupplierUnavailable(url, self.max_retries + 1, last_error, status)


# --- simulated supplier -------------------------------------------------------------------------


class SimulatedSupplier:
    """The default supplier: the demo rates with a deterministic drift and occasional sell-outs.

    Prices move within ±8% of the seeded rate and change every `drift_period` seconds; nights in
    the coming week sell out more often. The same seed and clock always give the same rates.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        clock: Callable[[], float] = time.time,
        drift_period: float = 3600.0,
        sellout_rate: float = 0.03,
    ):
        self.name = f"simulated:{seed}"
        self.seed = seed
        self._clock = clock
        self.drift_period = drift_period
        self.sellout_rate = sellout_rate

    async def fetch(self, hotel_ids: Sequence[str], start: date, end: date) -> list[AvailabilityRow]:
        now = self._clock()
        epoch = int(now // self.drift_period)
        today = datetime.fromtimestamp(now, UTC).date()
        catalog = demo.demo_hotels()
        nights = [start + timedelta(days=d) for d in range((end - start).days)]
        rows: list[AvailabilityRow] = []
        for hotel_id in hotel_ids:
            hotel = catalog.get(hotel_id)
            if hotel is None:
                continue
            step = demo.price_step(hotel_id)
            salt = self.seed * 1_000_003 + epoch
            for night in nights:
                price, available = demo.nightly_rate(hotel_id, night)
                drift, sell = demo.stable_units(hotel_id, night, salt)
                chance = self.sellout_rate * (3 if (night - today).days < 7 else 1)
                rows.append(
                    AvailabilityRow(
                        hotel_id=hotel_id,
                        date=night,
                        price=demo.round_price(price * (0.92 + 0.16 * drift), step),
                        available=available and sell >= chance,
                        currency=hotel.currency,
                    )
                )
            await asyncio.sleep(0)  # a long fetch must not hog the event loop
        return rows


# --- one refresh run and the worker loop ------------------------------------------------------


@dataclass
class RefreshReport:
    supplier: str
    start: date
    end: date
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    hotels: int = 0
    rows_received: int = 0
    rows_written: int = 0
    rows_rejected: int = 0
    hotels_skipped: int = 0  # in requests the supplier refused
    batches: int = 0
    pruned: int = 0

    def summary(self) -> str:
        seconds = ((self.finished_at or datetime.now(UTC)) - self.started_at).total_seconds()
        return (
            f"supplier={self.supplier} nights={self.start}..{self.end} hotels={self.hotels} "
            f"received={self.rows_received} written={self.rows_written} rejected={self.rows_rejected} "
            f"skipped_hotels={self.hotels_skipped} batches={self.batches} pruned={self.pruned} "
            f"took={seconds:.1f}s"
        )


async def refresh_once(
    store: HotelStore,
    supplier: Supplier,
    *,
    today: date | None = None,
    days: int = DEFAULT_DAYS,
    batch_size: int = 500,
    hotels_per_fetch: int = 100,
    on_batch: Callable[[RefreshReport], object] | None = None,
) -> RefreshReport:
    """Fetch rates for every hotel and write them in small batches, each its own short transaction.

    Rows for unknown hotels, in another currency than the hotel's, or outside the window are
    rejected. A request the supplier refuses skips those hotels; a supplier that stays down
    (SupplierUnavailable) ends the run with that error, keeping what was already written.
    """
    today = today or date.today()
    end = today + timedelta(days=days)
    report = RefreshReport(supplier=supplier.name, start=today, end=end)
    currencies = await store.hotel_currencies()
    ids = list(currencies)
    report.hotels = len(ids)
    report.pruned = await store.prune_availability(today)
    for i in range(0, len(ids), hotels_per_fetch):
        chunk = ids[i : i + hotels_per_fetch]
        try:
            rows = await supplier.fetch(chunk, today, end)
        except SupplierRejected as exc:
            log.warning("refresh: skipping %d hotel(s): %s", len(chunk), exc)
            report.hotels_skipped += len(chunk)
            continue
        report.rows_received += len(rows)
        wanted = set(chunk)
        good = [
            r for r in rows
            if r.hotel_id in wanted
            and today <= r.date < end
            and (r.currency is None or r.currency == currencies[r.hotel_id])
        ]
        report.rows_rejected += len(rows) - len(good)
        for j in range(0, len(good), batch_size):
            batch = good[j : j + batch_size]
            await store.upsert_availability(batch, batch_size=batch_size)
            report.rows_written += len(batch)
            report.batches += 1
            if on_batch is not None:
                on_batch(report)
    await store.mark_refreshed()
    report.finished_at = datetime.now(UTC)
    return report


def supplier_for(settings: Settings, hotel: HotelSettings) -> Supplier:
    """The HTTP supplier when CONCIERGE_HOTEL_SUPPLIER_URL is set, else the simulated one."""
    if hotel.supplier_url:
        return HttpSupplier(
            hotel.supplier_url,
            rate_per_second=hotel.supplier_rate,
            backoff=Backoff(base=settings.retry_base_delay, cap=settings.retry_max_delay),
        )
    return SimulatedSupplier()


async def run_worker(
    settings: Settings,
    hotel: HotelSettings | None = None,
    *,
    stop: asyncio.Event | None = None,
    supplier: Supplier | None = None,
    days: int = DEFAULT_DAYS,
    max_runs: int | None = None,
) -> None:
    """Seed the store if it is empty, then refresh every `hotel.refresh_interval` seconds until
    `stop` is set (or after `max_runs` runs). A failed run is logged and the next one still happens."""
    hotel = hotel or HotelSettings()
    stop = stop or asyncio.Event()
    store = await HotelStore.open(settings.resolved_database_url)
    supplier = supplier or supplier_for(settings, hotel)
    runs = 0
    try:
        written = await demo.seed(store)
        if written:
            log.info("worker: seeded %d demo hotels", written)
        while not stop.is_set():
            try:
                report = await refresh_once(store, supplier, today=date.today(), days=days)
                log.info("worker: refresh done: %s", report.summary())
            except Exception:
                log.exception("worker: refresh run failed; next run in %.0fs", hotel.refresh_interval)
            runs += 1
            if max_runs is not None and runs >= max_runs:
                break
            try:
                await asyncio.wait_for(stop.wait(), timeout=hotel.refresh_interval)
            except TimeoutError:
                pass
    finally:
        close = getattr(supplier, "close", None)
        if close is not None:
            await close()
        await store.close()
