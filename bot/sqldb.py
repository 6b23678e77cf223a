"""A small two-dialect SQL layer for agent stores: SQLite (a file) or PostgreSQL, same SQL.

Agents that keep relational data (the hotel's rates, the shop's catalog) write their SQL once with
`?` placeholders and portable types; this module runs it on either backend:

- SQLite: one writer and one reader connection, each on its own thread (bot/sqlite.py). With WAL,
  reads never wait for writes, and the event loop never waits for either. Writes are serialised by
  an asyncio lock and run inside `BEGIN IMMEDIATE`, so a transaction holds the write lock from its
  first statement and cannot fail half-way on a lock upgrade.
- PostgreSQL: a psycopg pool (at most 4 connections) in autocommit mode; `transaction` opens an
  explicit transaction on one pooled connection.

The core imports no agent: agents wrap `DatabaseError` in their own error type when they want to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any, Literal

from bot.sqlite import SqliteThread

__all__ = [
    "Database",
    "DatabaseError",
    "PostgresDatabase",
    "SqliteDatabase",
    "Transaction",
    "open_database",
]


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

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    async def transaction(self, work: Callable[[Transaction], Awaitable[None]]) -> None:
        """Run `work` in one transaction: it commits when `work` returns, rolls back when it raises."""
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    def date_value(self, value: date) -> Any:
        """A date as a parameter: a DATE on PostgreSQL, ISO text on SQLite (where it sorts as text)."""
        return value


class SqliteDatabase(Database):
    """One writer and one reader connection, each on its own thread (bot/sqlite.py): with WAL,
    reads never wait for writes, and the event loop never waits for either."""

    dialect = "sqlite"

    def __init__(self, reader: SqliteThread, writer: SqliteThread):
        self._reader = reader
        self._writer = writer
        self._write_lock = asyncio.Lock()

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

    async def transaction(self, work: Callable[[Transaction], Awaitable[None]]) -> None:
        async with self._write_lock:  # the writer connection runs one transaction at a time
            await self._writer.run(self._writer.conn.execute, "BEGIN IMMEDIATE")  # not .execute: it commits
            try:
                await work(Transaction(_SqliteCursor(self._writer), "?"))
            except BaseException:
                await self._writer.run(self._writer.conn.rollback)
                raise
            await self._writer.run(self._writer.conn.commit)

    async def close(self) -> None:
        try:
            await self._reader.close()
        finally:
            await self._writer.close()

    def date_value(self, value: date) -> Any:
        return value.isoformat()


class PostgresDatabase(Database):
    """A small pool (at most 4 connections) in autocommit mode; writes take an explicit transaction."""

    dialect = "postgresql"

    def __init__(self, pool: Any):
        self._pool = pool

    @classmethod
    async def open(cls, url: str) -> PostgresDatabase:
        from psycopg_pool import AsyncConnectionPool

        pool = AsyncConnectionPool(
            url, min_size=1, max_size=4, open=False, kwargs={"autocommit": True}
        )
        try:
            await pool.open(wait=True, timeout=10)
        except Exception as exc:
            await pool.close()
            # The type only: the message can carry the URL, password included.
            raise DatabaseError(f"cannot connect to PostgreSQL: {type(exc).__name__}") from exc
        return cls(pool)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(sql.replace("?", "%s"), params)
            return list(await cursor.fetchall())

    async def transaction(self, work: Callable[[Transaction], Awaitable[None]]) -> None:
        async with self._pool.connection() as conn, conn.transaction():
            async with conn.cursor() as cursor:
                await work(Transaction(cursor, "%s"))

    async def close(self) -> None:
        await self._pool.close()


async def open_database(url: str, *, name: str) -> Database:
    """Open `sqlite:///path/to.db` or `postgresql://…` (`postgres://` too); `name` says whose
    database it is in error messages ("the hotel store needs a file…")."""
    if url.startswith("sqlite:///"):
        return await SqliteDatabase.open(url.removeprefix("sqlite:///"), name=name)
    if url.startswith(("postgresql://", "postgres://")):
        return await PostgresDatabase.open(url)
    raise DatabaseError("database URL must be sqlite:///PATH or postgresql://…")
