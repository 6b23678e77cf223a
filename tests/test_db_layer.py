"""The database layer (bot/sqldb.py): one pool per process shared by the app tables, the
checkpointer and the agents' stores; versioned migrations on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import uuid
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from agents.hotel.store import HotelStore
from agents.registry import registered_agents
from agents.shopping.catalog import CatalogStore
from bot.agent import TurnInput
from bot.config import load_settings
from bot.conversation import ConversationKey
from bot.events import Final
from bot.runtime import ConversationRuntime
from bot.sqldb import AddColumn, DatabaseError, Migration, migrate, open_database, schema_version
from bot.storage import MIGRATIONS, AppDatabase
from tests.support.waiting import eventually

POOL_SIZE = 4


async def _connections(url: str, application_name: str) -> int:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application_name,)
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def _peak_while(url: str, application_name: str, work: Awaitable[Any]) -> int:
    """The most connections named `application_name` seen while `work` runs."""
    task = asyncio.ensure_future(work)
    peak = 0
    while not task.done():
        peak = max(peak, await _connections(url, application_name))
        await asyncio.sleep(0.01)
    await task
    return max(peak, await _connections(url, application_name))


async def test_a_runtime_with_every_agent_on_postgres_holds_one_pool_and_one_lock_connection(
    tmp_path: Path, postgres_url: str
) -> None:
    """Turns, the app tables, the checkpointer, the hotel store and the shop catalogue all busy at
    once: the process never holds more than CONCIERGE_DB_POOL_SIZE connections plus the one that
    holds its turn locks."""
    name = f"concierge-test-{uuid.uuid4().hex[:10]}"
    url = f"{postgres_url}?application_name={name}"
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_DATABASE_URL=url,
        CONCIERGE_DB_POOL_SIZE=POOL_SIZE, _env_file=None,
    )
    run = uuid.uuid4().hex[:8]
    async with await ConversationRuntime.open(settings, agents=registered_agents()) as rt:
        hotels = await HotelStore.open(settings.resolved_database_url)
        catalog = await CatalogStore.open(settings.resolved_database_url)
        try:
            async def turn(i: int) -> object:
                key = ConversationKey.console(f"pool-{run}-{i}")
                events = [e async for e in rt.handle(key, TurnInput.typed(f"hello there, number {i}"))]
                return events[-1]

            async def busy(fetch: Callable[..., Awaitable[Any]]) -> None:
                await fetch("SELECT pg_sleep(0.05)")

            async def everything() -> list[Any]:
                return await asyncio.gather(
                    *(turn(i) for i in range(12)),
                    *(busy(rt.app_db.fetch) for _ in range(12)),
                    *(busy(hotels._db.fetch) for _ in range(12)),
                    *(busy(catalog._db.fetch) for _ in range(12)),
                )

            peak = await asyncio.wait_for(_peak_while(postgres_url, name, everything()), timeout=120)
            finals = await asyncio.gather(*(turn(i) for i in range(2)))
        finally:
            await catalog.close()
            await hotels.close()
    assert all(isinstance(f, Final) for f in finals)
    print(f"\npeak PostgreSQL connections of one runtime: {peak} (pool {POOL_SIZE} + 1 for locks)")
    assert 1 < peak <= POOL_SIZE + 1
    # Closing the runtime closed them all (a server backend goes a moment after its client).
    async def all_closed() -> bool:
        return await _connections(postgres_url, name) == 0

    await eventually(all_closed, "the connections to close after the runtime closed", interval=0.02)


@pytest.fixture(params=["sqlite", "postgres"])
def any_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{(tmp_path / 'concierge.db').as_posix()}"


def _steps(table: str) -> list[Migration]:
    return [
        Migration("a table", (f"CREATE TABLE IF NOT EXISTS {table} (id TEXT PRIMARY KEY, price {{real}} NOT NULL)",)),
        Migration("a column", (AddColumn(table, "night", "{date}"),)),
    ]


async def test_migrations_apply_each_step_once_and_record_the_version(any_url: str) -> None:
    component, table = f"test-{uuid.uuid4().hex[:8]}", f"t_{uuid.uuid4().hex[:8]}"
    db = await open_database(any_url, name="test store")
    try:
        assert await schema_version(db, component) == 0
        assert await migrate(db, component, _steps(table)[:1]) == 1
        await db.execute(f"INSERT INTO {table} (id, price) VALUES (?, ?)", ("a", 1.25))
        assert await migrate(db, component, _steps(table)) == 2  # only the new step runs
        assert await migrate(db, component, _steps(table)) == 2  # nothing left to do
        await db.execute(f"UPDATE {table} SET night = ? WHERE id = ?", (db.date_value(date(2030, 1, 2)), "a"))
        assert [tuple(r) for r in await db.fetch(f"SELECT id, price FROM {table}")] == [("a", 1.25)]
        assert await schema_version(db, component) == 2
        with pytest.raises(DatabaseError, match="newer than this version of Concierge"):
            await migrate(db, component, _steps(table)[:1])  # an older release on a newer database
    finally:
        if db.dialect == "postgresql":
            await db.execute(f"DROP TABLE IF EXISTS {table}")
        await db.close()


async def test_app_tables_made_before_versions_were_recorded_are_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "concierge.db"
    with contextlib.closing(sqlite3.connect(path)) as old:  # the first release's threads table
        old.execute(
            "CREATE TABLE concierge_threads (key TEXT PRIMARY KEY, platform TEXT NOT NULL, agent TEXT, "
            "generation INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL DEFAULT 'idle', turn INTEGER NOT NULL "
            "DEFAULT 0, pending TEXT, note TEXT, created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)"
        )
        old.execute("INSERT INTO concierge_threads (key, platform, created_at, updated_at) VALUES ('console:x', 'console', 1, 1)")
        old.commit()
    db = await AppDatabase.open(f"sqlite:///{path.as_posix()}")
    try:
        await db.update_thread("console:x", status_message="m1")
        record = await db.get_thread("console:x")
        assert record is not None and record.status_message == "m1"
        rows = await db.fetch("SELECT version FROM concierge_schema_version WHERE component = 'app'")
        assert rows == [{"version": len(MIGRATIONS)}]
    finally:
        await db.close()


async def test_stores_on_one_url_share_one_database_until_the_last_closes(any_url: str) -> None:
    hotels = await HotelStore.open(any_url)
    catalog = await CatalogStore.open(any_url)
    shared = hotels._db
    assert catalog._db is shared
    await hotels.close()
    await hotels.close()  # a second close gives nothing back twice
    assert await catalog.get_meta("nothing-here") is None  # still open for the catalogue
    await catalog.close()
    reopened = await HotelStore.open(any_url)
    try:
        assert reopened._db is not shared  # the last close closed it; the next open opens anew
        assert await reopened.get_meta("nothing-here") is None
    finally:
        await reopened.close()


async def test_a_bad_database_url_is_refused_without_echoing_secrets() -> None:
    with pytest.raises(DatabaseError, match=r"sqlite:///PATH or postgresql://") as caught:
        await open_database("mysql://root:hunter2@db/concierge", name="test store")
    assert "hunter2" not in str(caught.value)
    with pytest.raises(DatabaseError) as caught:
        await open_database("postgresql://root:hunter2@127.0.0.1:1/concierge?connect_timeout=1", name="test store")
    assert "hunter2" not in str(caught.value)


async def test_langgraphs_own_postgres_saver_reads_what_the_runtime_wrote(tmp_path: Path, postgres_url: str) -> None:
    """The checkpointer's cheaper write path keeps LangGraph's tables and rows: the stock
    AsyncPostgresSaver finds the same conversation, step by step."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    from tests.support.agents import EchoAgent

    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_DATABASE_URL=postgres_url, _env_file=None
    )
    key = ConversationKey.console(f"stock-{uuid.uuid4().hex[:8]}")
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as rt:
        for topic in ("otters", "badgers"):
            events = [e async for e in rt.handle(key, TurnInput.typed(f"/echo look up {topic}"))]
            assert isinstance(events[-1], Final)
        graph = await rt._graph(rt._agents["echo"])
        config = rt._config(key, rt._agents["echo"], 0)
        ours = [c async for c in graph.aget_state_history(config)]
    async with AsyncConnectionPool(
        postgres_url, min_size=1, max_size=2, open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    ) as pool:
        stock = AsyncPostgresSaver(pool)
        theirs = [c async for c in stock.alist(config)]
    assert [c.config["configurable"]["checkpoint_id"] for c in theirs] == [
        c.config["configurable"]["checkpoint_id"] for c in ours
    ]
    latest = theirs[0].checkpoint["channel_values"]["messages"]
    assert [m.content for m in latest] == [m.content for m in ours[0].values["messages"]]
    assert "Notes about badgers" in latest[-1].content


async def _end_connections(url: str, application_name: str) -> int:
    """Have PostgreSQL end every connection named `application_name`, as a failover would."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
            (application_name,),
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0


async def test_turns_go_on_after_the_server_ends_every_connection_of_the_process(
    tmp_path: Path, postgres_url: str
) -> None:
    """Every pooled connection (idle, so psycopg only finds out on its next statement) and the
    turn-lock connection ended at once: the next turns are answered, the conversation keeps its
    history, a delivery is still claimed exactly once, and the process holds live connections again."""
    name = f"concierge-test-{uuid.uuid4().hex[:10]}"
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_DB_POOL_SIZE=POOL_SIZE,
        CONCIERGE_DATABASE_URL=f"{postgres_url}?application_name={name}", _env_file=None,
    )
    run = uuid.uuid4().hex[:8]
    async with await ConversationRuntime.open(settings, agents=registered_agents()) as rt:
        keys = [ConversationKey.console(f"ended-{run}-{i}") for i in range(POOL_SIZE)]

        async def turn(key: ConversationKey, text: str, delivery: str | None = None) -> list[object]:
            return [e async for e in rt.handle(key, TurnInput(text=text, user_id="u1", delivery_id=delivery))]

        # Every pooled connection used (turns side by side), then idle in the pool.
        await asyncio.gather(*(turn(key, "hello") for key in keys))
        assert await _end_connections(postgres_url, name) >= 2  # the pool's and the lock connection

        after = await asyncio.gather(*(turn(key, "hello again", f"d-{run}-{i}") for i, key in enumerate(keys)))
        assert all(isinstance(events[-1], Final) for events in after), after
        assert await turn(keys[0], "hello again", f"d-{run}-0") == []  # the same delivery: claimed once
        chat = rt._agents["chat"]
        graph = await rt._graph(chat)
        for key in keys:  # both turns in the checkpoint: the earlier one was kept, the new one written
            snapshot = await graph.aget_state(rt._config(key, chat, 0))
            humans = [m.content for m in snapshot.values["messages"] if m.type == "human"]
            assert humans == ["hello", "hello again"]
        assert await _connections(postgres_url, name) >= 1


async def test_a_turns_state_is_recorded_even_when_the_turn_lock_connection_was_just_ended(postgres_url: str) -> None:
    """A turn's state changes ride the turn-lock connection; when the server has just ended it,
    the change is written through the pool instead, and the next one rides the new connection."""
    name = f"concierge-test-{uuid.uuid4().hex[:10]}"
    key = f"console:state-{uuid.uuid4().hex[:8]}"
    db = await AppDatabase.open(f"{postgres_url}?application_name={name}")
    try:
        await db.ensure_thread(key, "console")
        await db.update_thread(key, state="processing")  # opens the turn-lock connection
        assert await _end_connections(postgres_url, name) >= 1
        await db.update_thread(key, state="responding", note="after the cut")
        record = await db.get_thread(key)
        assert record is not None and (record.state, record.note) == ("responding", "after the cut")
        await db.update_thread(key, state="idle", note=None)
        record = await db.get_thread(key)
        assert record is not None and (record.state, record.note) == ("idle", None)
    finally:
        await db.close()
