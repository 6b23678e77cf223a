"""Hotel search latency over the full demo data, with the store's indexes and without them.

    python -m bench hotel-search [--queries N] [--postgres URL] [--keep DIR]

Seeds a scratch database (SQLite in a temporary directory, or a scratch schema when --postgres is
given), times a fixed, varied set of searches, drops every secondary index, times the same searches
again and prints both medians and the ratio. It also checks both passes returned the same offers.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from datetime import date, timedelta
from pathlib import Path

from agents.hotel import geo
from agents.hotel.seed import DEFAULT_DAYS, seed
from agents.hotel.store import AMENITIES, INDEXES, HotelOffer, HotelQuery, HotelStore


def _queries(today: date, n: int) -> list[HotelQuery]:
    """A fixed mix of what users ask: every city, stays of 1–7 nights, with and without filters."""
    rng = random.Random(20260)
    cities = list(geo.CITIES.values())
    queries = []
    for i in range(n):
        city = cities[i % len(cities)]
        check_in = today + timedelta(days=rng.randint(1, 150))
        query: dict[str, object] = {
            "city": city.name,
            "check_in": check_in,
            "check_out": check_in + timedelta(days=rng.randint(1, 7)),
            "sort": rng.choice(["price", "rating", "stars", "popularity"]),
            "limit": 20,
        }
        if rng.random() < 0.5:
            query["max_price"] = city.base_price * rng.choice([0.8, 1.2, 2.0])
        if rng.random() < 0.3:
            query["min_rating"] = rng.choice([3.5, 4.0, 4.5])
        if rng.random() < 0.3:
            query["amenities"] = rng.sample(AMENITIES[:10], rng.randint(1, 2))
        if rng.random() < 0.25:
            query["district"] = rng.choice(city.districts).name
        queries.append(HotelQuery.model_validate(query))
    return queries


async def _time(store: HotelStore, queries: list[HotelQuery]) -> tuple[list[float], list[list[HotelOffer]]]:
    for q in queries[:10]:  # warm the caches and the connection
        await store.search(q)
    latencies, results = [], []
    for q in queries:
        started = time.perf_counter()
        results.append(await store.search(q))
        latencies.append(time.perf_counter() - started)
    return latencies, results


async def _drop_indexes(url: str) -> None:
    statements = [f"DROP INDEX IF EXISTS {name}" for name in INDEXES]
    if url.startswith("sqlite:///"):
        import aiosqlite

        async with aiosqlite.connect(url.removeprefix("sqlite:///")) as db:
            for statement in statements:
                await db.execute(statement)
            await db.commit()
    else:
        import psycopg

        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            for statement in statements:
                await conn.execute(statement)
            await conn.execute("ANALYZE")


async def _analyze(url: str) -> None:
    if url.startswith("sqlite:///"):
        return
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("ANALYZE")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


async def _run(url: str, n: int, label: str) -> int:
    today = date.today()
    store = await HotelStore.open(url)
    try:
        started = time.perf_counter()
        await seed(store, today)
        seeded_in = time.perf_counter() - started
        hotels = len(await store.hotel_currencies())
    finally:
        await store.close()
    await _analyze(url)
    queries = _queries(today, n)

    store = await HotelStore.open(url, create=False)
    try:
        indexed, indexed_results = await _time(store, queries)
    finally:
        await store.close()
    await _drop_indexes(url)
    store = await HotelStore.open(url, create=False)
    try:
        plain, plain_results = await _time(store, queries)
    finally:
        await store.close()

    with_median, without_median = statistics.median(indexed), statistics.median(plain)
    same = [[o.hotel.id for o in r] for r in indexed_results] == [[o.hotel.id for o in r] for r in plain_results]
    print(f"hotel-search on {label}: {hotels} hotels x {DEFAULT_DAYS} nights seeded in {seeded_in:.1f}s, {n} searches")
    print(f"  with indexes:    median {_ms(with_median)}   p95 {_ms(_p95(indexed))}")
    print(f"  without indexes: median {_ms(without_median)}   p95 {_ms(_p95(plain))}")
    print(f"  ratio (without / with, median): {without_median / with_median:.1f}x")
    print(f"  same results both ways: {'yes' if same else 'NO'}")
    return 0 if same else 1


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench hotel-search", description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300, help="searches per pass (default 300)")
    parser.add_argument("--postgres", metavar="URL", help="run on PostgreSQL in a scratch schema instead of SQLite")
    parser.add_argument("--keep", metavar="DIR", help="build the SQLite scratch database in DIR and keep it")
    args = parser.parse_args(argv)
    if args.postgres:
        return asyncio.run(_run_postgres(args.postgres, args.queries))
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        path = Path(args.keep) / "hotel-bench.db"
        for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            leftover.unlink(missing_ok=True)
        return asyncio.run(_run(f"sqlite:///{path.as_posix()}", args.queries, "SQLite"))
    with tempfile.TemporaryDirectory(prefix="hotel-bench-") as scratch:
        return asyncio.run(_run(f"sqlite:///{(Path(scratch) / 'hotels.db').as_posix()}", args.queries, "SQLite"))


async def _run_postgres(url: str, n: int) -> int:
    import psycopg

    schema = f"bench_hotel_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in url else "?"
    try:
        return await _run(f"{url}{separator}options=-csearch_path%3D{schema}", n, "PostgreSQL")
    finally:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA {schema} CASCADE")
