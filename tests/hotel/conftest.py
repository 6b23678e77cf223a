"""Hotel store fixtures: one seeded SQLite file per session, the same on PostgreSQL when it runs."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents.hotel.seed import seed
from agents.hotel.store import HotelQuery, HotelStore
from tests.conftest import POSTGRES_URL, require_service
from tests.fakes.supplier_server import FakeSupplier

TODAY = date(2030, 6, 3)  # a Monday; every test database is seeded from this day
FRESH_DAYS = 14  # nights seeded into the per-test databases the tests write to

BACKENDS = ["sqlite", "postgresql"]


def _with_schema(url: str, schema: str) -> str:
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}"


def _require_postgres() -> None:
    require_service("PostgreSQL", "127.0.0.1", 5432)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_swept = False


def _sweep_stale_schemas(conn: psycopg.Connection[Any]) -> None:
    """Drop scratch schemas left by test runs that were killed before their teardown."""
    global _swept
    if _swept:
        return
    _swept = True
    rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'hotel\\_test\\_%'").fetchall()
    for (name,) in rows:
        parts = name.split("_")
        if len(parts) == 4 and parts[2].isdigit() and not _alive(int(parts[2])):
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _create_schema() -> tuple[str, str]:
    schema = f"hotel_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        _sweep_stale_schemas(conn)
        conn.execute(f"CREATE SCHEMA {schema}")
    return schema, _with_schema(POSTGRES_URL, schema)


def _drop_schema(schema: str) -> None:
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _run(coro: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine to completion from sync code, even when an event loop is already running here."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coro).result()


async def _seed(url: str, days: int | None = None) -> None:
    store = await HotelStore.open(url)
    try:
        if days is None:
            await seed(store, TODAY)
        else:
            await seed(store, TODAY, days=days)
    finally:
        await store.close()


@pytest.fixture(scope="session")
def seeded_sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The full demo data set (180 nights from TODAY), seeded once; tests must only read it."""
    path = tmp_path_factory.mktemp("hotel") / "hotels.db"
    url = f"sqlite:///{path.as_posix()}"
    _run(_seed(url))
    return url


@pytest.fixture(scope="session")
def seeded_postgresql_url() -> Iterator[str]:
    _require_postgres()
    schema, url = _create_schema()
    try:
        _run(_seed(url))
        yield url
    finally:
        _drop_schema(schema)


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[HotelStore]:
    """A read-only view of the fully seeded data, on each backend."""
    url = request.getfixturevalue(f"seeded_{request.param}_url")
    opened = await HotelStore.open(url)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture(params=BACKENDS)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of the test's own, on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{(tmp_path / 'hotels.db').as_posix()}"
        return
    _require_postgres()
    schema, url = _create_schema()
    try:
        yield url
    finally:
        _drop_schema(schema)


@pytest.fixture
async def fresh_store(empty_url: str) -> AsyncIterator[HotelStore]:
    """A database of the test's own, seeded with FRESH_DAYS nights from TODAY, free to write to."""
    await _seed(empty_url, FRESH_DAYS)
    opened = await HotelStore.open(empty_url)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def fake_supplier() -> AsyncIterator[FakeSupplier]:
    async with FakeSupplier() as server:
        yield server


# --- the agent tests' store -------------------------------------------------------------------


class RecordingStore:
    """The real store, with every search query recorded."""

    def __init__(self, store: HotelStore) -> None:
        self._store = store
        self.searches: list[HotelQuery] = []

    async def search(self, q: HotelQuery) -> Any:
        self.searches.append(q)
        return await self._store.search(q)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.fixture
async def hotel_store(seeded_sqlite_url: str) -> AsyncIterator[HotelStore]:
    store = await HotelStore.open(seeded_sqlite_url)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def recording(hotel_store: HotelStore) -> RecordingStore:
    return RecordingStore(hotel_store)
