"""The database layer: SQLite (a file) or PostgreSQL, one shared handle per process, same SQL.

The app tables (bot/storage.py), the checkpointer and the agents' stores (the hotel's rates, the
shop's catalogue) write their SQL once with `?` placeholders and portable types and run it here:

- One database per URL per process (per event loop): `open_database` hands every caller the same
  handle, counted, and the last `close` closes it. On PostgreSQL that is one psycopg pool of
  CONCIERGE_DB_POOL_SIZE connections in autocommit mode, shared with LangGraph's checkpointer;
  turn locks and the turn queue's notifications take one more connection of their own
  (`dedicated_connection`).
- SQLite: one writer and one reader connection, each on its own thread (bot/sqlite.py). With WAL,
  reads never wait for writes, and the event loop never waits for either. Writes are serialised by
  an asyncio lock and run inside `BEGIN IMMEDIATE`, so a transaction holds the write lock from its
  first statement and cannot fail half-way on a lock upgrade.
- Schemas are versioned: each component (app, hotel, shop) lists its `Migration` steps in order,
  and `migrate` applies the ones a database has not seen yet, recording the version reached in
  `concierge_schema_version`, all in one transaction under a lock so processes starting together
  apply each step once.

The core imports no agent: agents wrap `DatabaseError` in their own error type when they want to.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal, TypeVar

from bot.sqlite import SqliteThread

__all__ = [
    "DEFAULT_POOL_SIZE",
    "AddColumn",
    "Database",
    "DatabaseError",
    "Migration",
    "PostgresDatabase",
    "SqliteDatabase",
    "Transaction",
    "configure_pool_size",
    "connection_lost",
    "migrate",
    "open_database",
    "reconnecting",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_POOL_SIZE = 10
_pool_size = DEFAULT_POOL_SIZE


def configure_pool_size(size: int) -> None:
    """The pool size of PostgreSQL databases this process opens from now on (CONCIERGE_DB_POOL_SIZE)."""
    global _pool_size
    _pool_size = size


class DatabaseError(Exception):
    """The database could not be reached or used (bad URL, no server, no file)."""


class Transaction:
    """The statements a write needs, with `?` placeholders on both backends."""

    def __init__(self, cursor: Any, placeholder: str):
        self._cursor = cursor
        self._placeholder = placeholder

    def _sql(self, sql: str) -> str:
        return sql if self._placeholder == "?" else sql.replace("?", self._placeholder)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        await self._cursor.execute(self._sql(sql), params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._cursor.executemany(self._sql(sql), rows)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Read inside the transaction: sees its own writes, and (SQLite) no other writer's."""
        await self._cursor.execute(self._sql(sql), params)
        return [tuple(row) for row in await self._cursor.fetchall()]


class _SqliteCursor:
    """`execute`/`executemany`/`fetchall` on a SQLite thread's connection, inside the caller's transaction."""

    def __init__(self, worker: SqliteThread):
        self._worker = worker
        self._last: Any = None

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._last = await self._worker.run(self._worker.conn.execute, sql, params)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._last = await self._worker.run(self._worker.conn.executemany, sql, rows)

    async def fetchall(self) -> list[Any]:
        last = self._last
        if last is None:
            return []
        return await self._worker.run(last.fetchall)


class Database:
    """What a store needs: reads, one-transaction writes, and dialect-specific parameter values."""

    dialect: Literal["sqlite", "postgresql"]
    # Column types that differ between the dialects, for `Migration` statements: `{real}` is an
    # 8-byte float (PostgreSQL's REAL is 4 bytes and would round prices), `{date}` a calendar date
    # (ISO text on SQLite, where it sorts as text), `{smallint}` a small integer.
    types: dict[str, str]

    def __init__(self) -> None:
        self._users = 1
        self._on_close: Callable[[], None] | None = None

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    async def fetch_dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        raise NotImplementedError

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement on its own (committed); the number of rows it changed."""
        raise NotImplementedError

    async def transaction(self, work: Callable[[Transaction], Awaitable[None]]) -> None:
        """Run `work` in one transaction: it commits when `work` returns, rolls back when it raises."""
        raise NotImplementedError

    async def close(self) -> None:
        """Give back this handle; the last one closes the connections."""
        self._users -= 1
        if self._users > 0:
            return
        if self._on_close is not None:
            self._on_close()
        await self._close()

    async def _close(self) -> None:
        raise NotImplementedError

    def date_value(self, value: date) -> Any:
        """A date as a parameter: a DATE on PostgreSQL, ISO text on SQLite (where it sorts as text)."""
        return value


class SqliteDatabase(Database):
    """One writer and one reader connection, each on its own thread (bot/sqlite.py): with WAL,
    reads never wait for writes, and the event loop never waits for either."""

    dialect = "sqlite"
    types = {"real": "REAL", "date": "TEXT", "smallint": "INTEGER"}

    def __init__(self, reader: SqliteThread, writer: SqliteThread, *, owns: bool = True):
        super().__init__()
        self._reader = reader
        self._writer = writer
        self._owns = owns
        self._write_lock = asyncio.Lock()

    @classmethod
    def on(cls, worker: SqliteThread) -> SqliteDatabase:
        """Transactions on a connection someone else owns and closes (the checkpointer's)."""
        return cls(worker, worker, owns=False)

    @classmethod
    async def open(cls, path: str, *, name: str = "store") -> SqliteDatabase:
        if path in ("", ":memory:"):
            # Two connections must see the same data: an in-memory database would be two databases.
            raise DatabaseError(f"the {name} needs a file: sqlite:///PATH")
        writer = await SqliteThread.open(Path(path), busy_timeout=10, autocommit=True)
        try:
            reader = await SqliteThread.open(Path(path), busy_timeout=10, autocommit=True)
        except BaseException:
            await writer.close()
            raise
        await writer.execute("PRAGMA synchronous = NORMAL")
        return cls(reader, writer)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        def rows() -> list[tuple[Any, ...]]:
            return [tuple(row) for row in self._reader.conn.execute(sql, params).fetchall()]

        return await self._reader.run(rows)

    async def fetch_dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return await self._reader.fetch(sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        async with self._write_lock:
            return await self._writer.execute(sql, params)

    async def transaction(self, work: Callable[[Transaction], Awaitable[None]]) -> None:
        async with self._write_lock:  # the writer connection runs one transaction at a time
            await self._writer.run(self._writer.conn.execute, "BEGIN IMMEDIATE")  # not .execute: it commits
            try:
                await work(Transaction(_SqliteCursor(self._writer), "?"))
            except BaseException:
                await self._writer.run(self._writer.conn.rollback)
                raise
            await self._writer.run(self._writer.conn.commit)

    async def _close(self) -> None:
        if not self._owns:
            return
        try:
            await self._reader.close()
        finally:
            await self._writer.close()

    def date_value(self, value: date) -> Any:
        return value.isoformat()


# The server ended the session: an administrator or a failover (57P01-57P03), the connection
# itself failing (class 08), or the client finding the socket gone (no SQLSTATE at all).
_SESSION_ENDED = ("57P01", "57P02", "57P03")


def connection_lost(exc: BaseException) -> bool:
    """Whether psycopg raised `exc` because the connection is gone, not because of the statement."""
    import psycopg

    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or state in _SESSION_ENDED or state.startswith("08")


async def reconnecting(pool: Any, work: Callable[[], Awaitable[T]]) -> T:
    """Run `work` (statements on a pooled connection); should the server have ended that
    connection, check the pool (every other connection ended with it is dropped and replaced) and
    run it once more on a live one. A pool's idle connections die together when the server ends
    them (a failover, a proxy, `pg_terminate_backend`) and psycopg finds out only on their next
    statement; without this, every turn would fail once per dead connection.

    Only for idempotent work: a statement the server never ran, or an autocommit statement or a
    transaction that the lost session rolled back. The one ambiguous case, a commit done just
    before the session ended and its reply lost, runs it twice; every write here is an upsert, a
    delete or an assignment, and `claim_delivery` knows its own earlier claim."""
    try:
        return await work()
    except Exception as exc:
        if not connection_lost(exc):
            raise
        log.warning("a PostgreSQL connection was ended by the server (%s); checking the pool, then retrying once",
                    type(exc).__name__)
    await pool.check()
    return await work()


class PostgresDatabase(Database):
    """A psycopg pool in autocommit mode with every statement prepared on first use
    (`prepare_threshold=0`, as LangGraph's checkpointer, which shares the pool, expects); writes
    take an explicit transaction."""

    dialect = "postgresql"
    types = {"real": "DOUBLE PRECISION", "date": "DATE", "smallint": "SMALLINT"}

    def __init__(self, pool: Any, conninfo: str, connect_kwargs: dict[str, Any]):
        super().__init__()
        self.pool = pool
        self._conninfo = conninfo
        self._kwargs = connect_kwargs

    @classmethod
    async def open(cls, url: str, *, pool_size: int | None = None) -> PostgresDatabase:
        from psycopg.conninfo import conninfo_to_dict
        from psycopg_pool import AsyncConnectionPool

        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}
        try:
            if "application_name" not in conninfo_to_dict(url):
                kwargs["application_name"] = "concierge"  # how an operator finds our connections
        except Exception as exc:
            raise DatabaseError(f"the PostgreSQL URL is not valid: {type(exc).__name__}") from None
        size = max(1, pool_size or _pool_size)
        db = cls(None, url, kwargs)
        await (await db.dedicated_connection()).close()  # a server that is not there fails now, not after the pool's retries
        pool = AsyncConnectionPool(url, min_size=1, max_size=size, open=False, kwargs=kwargs)
        try:
            await pool.open(wait=True, timeout=10)
        except Exception as exc:
            await pool.close()
            # The type only: the message can carry the URL, password included.
            raise DatabaseError(f"cannot connect to PostgreSQL: {type(exc).__name__}") from None
        db.pool = pool
        return db

    @property
    def max_size(self) -> int:
        return int(self.pool.max_size)

    async def dedicated_connection(self) -> Any:
        """A connection outside the pool, for what must live on one session (advisory locks, LISTEN)."""
        import psycopg

        try:
            return await psycopg.AsyncConnection.connect(self._conninfo, **self._kwargs)
        except Exception as exc:  # the type only, as in `open`
            raise DatabaseError(f"cannot connect to PostgreSQL: {type(exc).__name__}") from None

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        async def run() -> list[tuple[Any, ...]]:
            async with self.pool.connection() as conn, conn.cursor() as cursor:
                await cursor.execute(sql.replace("?", "%s"), params)
                return list(await cursor.fetchall())

        return await reconnecting(self.pool, run)

    async def fetch_dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        from psycopg.rows import dict_row

        async def run() -> list[dict[str, Any]]:
            async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cursor:
                await cursor.execute(sql.replace("?", "%s"), params)
                return list(await cursor.fetchall())

        return await reconnecting(self.pool, run)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        async def run() -> int:
            async with self.pool.connection() as conn:
                cursor = await conn.execute(sql.replace("?", "%s"), params)
                return int(cursor.rowcount or 0)

        return await reconnecting(self.pool, run)

    async def transaction(self, work: Callable[[Transaction], Awaitable[None]]) -> None:
        async def run() -> None:
            async with self.pool.connection() as conn, conn.transaction():
                async with conn.cursor() as cursor:
                    await work(Transaction(cursor, "%s"))

        await reconnecting(self.pool, run)

    async def _close(self) -> None:
        await self.pool.close()


# --- one database per URL per process -------------------------------------------------------
# Per event loop: a pool's connections belong to the loop that opened them.
_open: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Database]] = weakref.WeakKeyDictionary()
_opening: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _normal(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1) if url.startswith("postgres://") else url


async def open_database(url: str, *, name: str, pool_size: int | None = None) -> Database:
    """The process's database at `sqlite:///path/to.db` or `postgresql://…` (`postgres://` too),
    opened on first use and shared by every caller until each has closed its handle. `name` says
    whose database it is in error messages ("the hotel store needs a file…"); `pool_size` applies
    when this call opens the PostgreSQL pool (else CONCIERGE_DB_POOL_SIZE as configured)."""
    url = _normal(url)
    if not url.startswith(("sqlite:///", "postgresql://")):
        raise DatabaseError("database URL must be sqlite:///PATH or postgresql://…")
    loop = asyncio.get_running_loop()
    lock = _opening.setdefault(loop, asyncio.Lock())
    async with lock:
        databases = _open.setdefault(loop, {})
        db = databases.get(url)
        if db is not None:
            db._users += 1
            return db
        if url.startswith("sqlite:///"):
            db = await SqliteDatabase.open(url.removeprefix("sqlite:///"), name=name)
        else:
            db = await PostgresDatabase.open(url, pool_size=pool_size)
        databases[url] = db

        def forget(databases: dict[str, Database] = databases, db: Database = db) -> None:
            if databases.get(url) is db:
                del databases[url]

        db._on_close = forget
        return db


# --- versioned schemas ----------------------------------------------------------------------
_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS concierge_schema_version ("
    "component TEXT PRIMARY KEY, version INTEGER NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
)
_MIGRATION_LOCK = 7215300  # PostgreSQL advisory lock: processes starting together migrate one at a time


@dataclass(frozen=True)
class AddColumn:
    """A column added to a table that may already have it (made before versions were recorded)."""

    table: str
    column: str
    type: str


@dataclass(frozen=True)
class Migration:
    """One step of a component's schema: statements run in order, in one transaction with the
    others still to apply. `{real}`, `{date}` and `{smallint}` in a statement name the dialect's
    type (`Database.types`). Steps are only ever appended: a shipped step never changes."""

    description: str
    statements: tuple[str | AddColumn, ...]


async def schema_version(db: Database, component: str) -> int:
    """The version `component`'s schema is at in this database (0: none recorded)."""
    try:
        rows = await db.fetch("SELECT version FROM concierge_schema_version WHERE component = ?", (component,))
    except Exception:  # no version table yet
        return 0
    return int(rows[0][0]) if rows else 0


async def migrate(db: Database, component: str, steps: Sequence[Migration]) -> int:
    """Bring `component`'s tables to the last of `steps`; the version reached. A database already
    there costs one read."""
    if await schema_version(db, component) == len(steps):
        return len(steps)
    reached = 0

    async def apply(tx: Transaction) -> None:
        nonlocal reached
        if db.dialect == "postgresql":
            await tx.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
        await tx.execute(_VERSION_TABLE)
        rows = await tx.fetch("SELECT version FROM concierge_schema_version WHERE component = ?", (component,))
        current = int(rows[0][0]) if rows else 0
        if current > len(steps):
            raise DatabaseError(
                f"the {component} tables are at schema version {current}, newer than this version of "
                f"Concierge knows ({len(steps)}): upgrade it before starting it on this database"
            )
        for step in steps[current:]:
            for statement in step.statements:
                if isinstance(statement, AddColumn):
                    await _add_column(db, tx, statement)
                else:
                    await tx.execute(statement.format(**db.types))
        await tx.execute(
            "INSERT INTO concierge_schema_version (component, version, applied_at) VALUES (?, ?, ?) "
            "ON CONFLICT (component) DO UPDATE SET version = excluded.version, applied_at = excluded.applied_at",
            (component, len(steps), time.time()),
        )
        reached = len(steps)

    await db.transaction(apply)
    return reached


async def _add_column(db: Database, tx: Transaction, add: AddColumn) -> None:
    kind = add.type.format(**db.types)
    if db.dialect == "postgresql":
        await tx.execute(f"ALTER TABLE {add.table} ADD COLUMN IF NOT EXISTS {add.column} {kind}")
        return
    present = {row[1] for row in await tx.fetch(f"PRAGMA table_info({add.table})")}
    if add.column not in present:
        await tx.execute(f"ALTER TABLE {add.table} ADD COLUMN {add.column} {kind}")
