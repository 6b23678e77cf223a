"""Storage: the LangGraph checkpointer, the app database (threads, turn lifecycle, deliveries, the
per-thread turn queues) and retention (pruning old checkpoints, expiring idle threads).

SQLite (one connection on its own thread, see bot/sqlite.py) by default; PostgreSQL when
CONCIERGE_DATABASE_URL is postgresql://, on the process's one pool (bot/sqldb.py), which the
checkpointer shares."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import enum
import json
import logging
import os
import re
import sqlite3
import time
import types
import typing
import uuid
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from bot.config import ConfigError, Settings, aes_key
from bot.lifecycle import IN_FLIGHT
from bot.sqldb import (
    AddColumn,
    Migration,
    PostgresDatabase,
    SqliteDatabase,
    Transaction,
    migrate,
    open_database,
    reconnecting,
)
from bot.sqlite import SqliteCheckpointer, SqliteThread

log = logging.getLogger(__name__)

# The app tables' schema, one versioned step at a time (bot/sqldb.py); append, never edit.
MIGRATIONS = (
    Migration("threads, deliveries, turn locks, token usage", (
        """CREATE TABLE IF NOT EXISTS concierge_threads (
            key TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            agent TEXT,
            generation INTEGER NOT NULL DEFAULT 0,
            state TEXT NOT NULL DEFAULT 'idle',
            turn INTEGER NOT NULL DEFAULT 0,
            pending TEXT,
            note TEXT,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS concierge_threads_state ON concierge_threads (state)",
        """CREATE TABLE IF NOT EXISTS concierge_deliveries (
            id TEXT PRIMARY KEY,
            expires_at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS concierge_deliveries_expiry ON concierge_deliveries (expires_at)",
        # SQLite only: which process runs a turn of a thread (PostgreSQL uses advisory locks).
        """CREATE TABLE IF NOT EXISTS concierge_turn_locks (
            key TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            pid INTEGER NOT NULL,
            acquired_at DOUBLE PRECISION NOT NULL
        )""",
        # Model tokens spent per workspace per UTC day (CONCIERGE_DAILY_TOKEN_BUDGET).
        """CREATE TABLE IF NOT EXISTS concierge_token_usage (
            account TEXT NOT NULL,
            day TEXT NOT NULL,
            tokens BIGINT NOT NULL DEFAULT 0,
            PRIMARY KEY (account, day)
        )""",
    )),
    # The platform id of the in-flight turn's status message, so a restart can edit or replace it.
    Migration("threads remember their status message", (AddColumn("concierge_threads", "status_message", "TEXT"),)),
    # Retention finds threads idle past the TTL without reading them all.
    Migration("threads by last activity", (
        "CREATE INDEX IF NOT EXISTS concierge_threads_updated ON concierge_threads (updated_at)",
    )),
    # Turns wait in a queue per thread, in arrival order, across processes (`AppDatabase.enqueue`);
    # a thread remembers which queue entry its latest turn ran for, so the entry of a process
    # that died is recovered (it had started) or run again from its request (it had not).
    Migration("per-thread turn queue", (
        """CREATE TABLE IF NOT EXISTS concierge_turn_queue (
            key TEXT NOT NULL,
            seq BIGINT NOT NULL,
            entry TEXT NOT NULL,
            owner TEXT NOT NULL,
            pid BIGINT NOT NULL,
            request TEXT,
            queued_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (key, seq)
        )""",
        AddColumn("concierge_threads", "turn_entry", "TEXT"),
    )),
)


@dataclass
class ThreadRecord:
    key: str
    platform: str
    agent: str | None
    generation: int
    state: str
    turn: int
    pending: dict[str, Any] | None
    note: str | None
    created_at: float
    updated_at: float
    status_message: str | None = None
    turn_entry: str | None = None  # the queue entry the latest turn ran for


@dataclass(frozen=True)
class QueuedTurn:
    """A turn's place in its thread's queue: `seq` orders it, `entry` names it for good (an
    adopted entry keeps it), `request` is what running it again needs (None: it cannot be)."""

    key: str
    seq: int
    entry: str
    request: dict[str, Any] | None = None
    running: bool = False  # at the head with the thread's lock already taken
    held: ThreadRecord | None = dataclasses.field(default=None, compare=False)  # the thread then, if running


@dataclass
class HeldThread:
    """A thread held for a turn (`AppDatabase.turn_slot`): its record as read once the lock was
    taken (None: no record yet), and the fields to write as the turn leaves the queue, sent with
    leaving it (one round trip for both)."""

    record: ThreadRecord | None
    final_update: dict[str, Any] | None = None


@dataclass(frozen=True)
class OrphanedTurn:
    """A queued turn whose process is gone, with the process that owned it."""

    turn: QueuedTurn
    owner: str
    pid: int = 0  # the owner's process (SQLite) or server process of its connection (PostgreSQL)


def _thread_update(key: str, fields: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """The UPDATE that sets `fields` of a thread (and its `updated_at`)."""
    fields = dict(fields)
    if "pending" in fields and fields["pending"] is not None:
        fields["pending"] = json.dumps(fields["pending"], ensure_ascii=False)
    fields["updated_at"] = time.time()
    assignments = ", ".join(f"{name} = ?" for name in fields)
    return f"UPDATE concierge_threads SET {assignments} WHERE key = ?", (*fields.values(), key)


_THREAD = "SELECT * FROM concierge_threads WHERE key = ?"


def _record(row: dict[str, Any]) -> ThreadRecord:
    return ThreadRecord(**{**row, "pending": json.loads(row["pending"]) if row["pending"] else None})


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


# A statement for the turn-lock connection's pipeline: SQL, parameters, and its rows as dicts
# (True), as tuples (False) or not read (None); a pipeline runs a list of them in one round trip,
# or gives None when the caller must use the pool (AppDatabase.pipelined).
Statement = tuple[str, Sequence[Any], bool | None]
Pipeline = Callable[[list[Statement]], Awaitable[list[list[Any]] | None]]


class AppDatabase:
    """Threads (key, bound agent, lifecycle state, timestamps), delivery de-duplication, and the
    per-thread turn queues that order turns across processes.

    SQLite: on the checkpointer's connection and thread when shared, so the two never contend for
    SQLite's write lock. PostgreSQL: on the process's pool (bot/sqldb.py), plus one connection of
    its own that holds the turn locks and listens for turns ending in other processes."""

    def __init__(
        self,
        *,
        sqlite: SqliteThread | None = None,
        pg: PostgresDatabase | None = None,
        owns_connection: bool = True,
        lock_ttl: float = 600.0,
    ) -> None:
        self._sqlite = sqlite
        self._pg = pg
        self._owns = owns_connection
        self._lock_ttl = lock_ttl
        self._queue: _TurnQueue | None = None
        # What to do with turns queued by a process that died, found by a turn waiting behind
        # them (the runtime adopts them); None: they are dropped.
        self.orphan_handler: Callable[[str, list[OrphanedTurn]], Awaitable[object]] | None = None
        self._last_sweep = 0.0

    @property
    def is_postgres(self) -> bool:
        return self._pg is not None

    @classmethod
    async def open(
        cls, url: str, *, share: Checkpoints | None = None, lock_ttl: float = 600.0, pool_size: int | None = None
    ) -> AppDatabase:
        """Open the app database; with `share` (a SQLite checkpointer on the same file) it uses the
        checkpointer's connection and thread, so the two never contend for SQLite's write lock.

        `lock_ttl`: on SQLite, after how many seconds a turn lock of a process that still seems
        alive counts as abandoned (the turn deadline plus a margin)."""
        if share is not None and share.kind == "sqlite":
            db = cls(sqlite=share.connection, owns_connection=False, lock_ttl=lock_ttl)
        elif url.startswith(("postgresql://", "postgres://")):
            pg = await open_database(url, name="app database", pool_size=pool_size)
            assert isinstance(pg, PostgresDatabase)
            db = cls(pg=pg)
            if share is not None and share.kind == "postgres":
                share.pipeline_through(db.pipelined)  # a turn's checkpoints ride its queue's round trips
        else:
            db = cls(sqlite=await SqliteThread.open(sqlite_path(url)), lock_ttl=lock_ttl)
        try:
            if db._pg is not None:
                await migrate(db._pg, "app", MIGRATIONS)
            elif db._sqlite is not None:
                await migrate(SqliteDatabase.on(db._sqlite), "app", MIGRATIONS)
        except BaseException:
            await db.close()
            raise
        return db

    async def close(self) -> None:
        if self._queue is not None:
            queue, self._queue = self._queue, None
            await queue.close()
        if self._sqlite is not None and self._owns:
            await self._sqlite.close()
        if self._pg is not None:
            pg, self._pg = self._pg, None
            await pg.close()

    # --- low level ----------------------------------------------------------------------
    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        if self._pg is not None:
            return await self._pg.execute(sql, params)
        assert self._sqlite is not None
        return await self._sqlite.execute(sql, params)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        if self._pg is not None:
            return await self._pg.fetch_dicts(sql, params)
        assert self._sqlite is not None
        return await self._sqlite.fetch(sql, params)

    async def _write_returning(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        """One write that returns rows (`RETURNING`), committed."""
        if self._pg is not None:
            return await self._pg.fetch_dicts(sql, params)
        assert self._sqlite is not None
        worker = self._sqlite

        def write() -> list[dict[str, Any]]:
            try:
                cur = worker.conn.execute(sql, params)
                names = [c[0] for c in cur.description or ()]
                rows = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
                worker.conn.commit()
            except BaseException:
                worker.conn.rollback()
                raise
            return rows

        return await worker.run(write)

    # --- threads ------------------------------------------------------------------------
    async def get_thread(self, key: str) -> ThreadRecord | None:
        rows = await self.fetch("SELECT * FROM concierge_threads WHERE key = ?", (key,))
        return _record(rows[0]) if rows else None

    async def ensure_thread(self, key: str, platform: str) -> ThreadRecord:
        existing = await self.get_thread(key)  # the common case: one read, no write
        if existing is not None:
            return existing
        return await self.create_thread(key, platform)

    async def create_thread(self, key: str, platform: str) -> ThreadRecord:
        """The record of a thread not seen before (or, should another process have just made it, that one)."""
        now = time.time()
        rows = await self._write_returning(  # a new thread: one more round trip, not two
            "INSERT INTO concierge_threads (key, platform, created_at, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING RETURNING *",
            (key, platform, now, now),
        )
        record = _record(rows[0]) if rows else await self.get_thread(key)  # none: another process made it
        assert record is not None
        return record

    async def bind_thread(self, key: str, platform: str, agent: str | None = None) -> None:
        """Record a platform thread the bot has started (and the agent its command names), so
        every process sharing this database routes the replies there, before its first turn runs."""
        now = time.time()
        await self.execute(
            "INSERT INTO concierge_threads (key, platform, agent, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET agent = COALESCE(concierge_threads.agent, excluded.agent)",
            (key, platform, agent, now, now),
        )

    async def pipelined(self, statements: list[Statement]) -> list[list[Any]] | None:
        """PostgreSQL: statements (placeholders `?` or psycopg's `%s`; the flag: rows as dicts if
        True, as tuples if False, not read if None) run in order on the turn-lock connection, in the
        round trip of whatever else is waiting there (group commit), without a pooled connection;
        the rows of each. None on
        SQLite, when that connection just broke, or once the app database is closed: the caller
        runs them through the pool."""
        if self._pg is None:
            return None
        queue = self._turn_queue()
        assert isinstance(queue, _PostgresTurnQueue)
        try:
            return await queue._batch(statements)
        except _LockConnectionLost:
            return None

    async def update_thread(self, key: str, **fields: Any) -> None:
        statement = _thread_update(key, fields)
        # A turn's state changes go where its queue place and lock are (PostgreSQL); idempotent, so
        # on the pool once more should that connection just have broken.
        if await self.pipelined([(*statement, None)]) is None:
            await self.execute(*statement)

    async def threads_in_states(self, states: Sequence[str]) -> list[ThreadRecord]:
        marks = ", ".join("?" for _ in states)
        rows = await self.fetch(f"SELECT * FROM concierge_threads WHERE state IN ({marks})", tuple(states))
        return [_record(row) for row in rows]

    # --- deliveries ---------------------------------------------------------------------
    async def claim_delivery(self, delivery_id: str, ttl: float) -> bool:
        """True the first time `delivery_id` is seen within `ttl` seconds."""
        now = time.time()
        if now - self._last_sweep > 60:
            self._last_sweep = now
            await self.execute("DELETE FROM concierge_deliveries WHERE expires_at < ?", (now,))
        return bool(await self.execute(_CLAIM, _Claim.made_now(delivery_id, ttl).params))

    # --- token budget -------------------------------------------------------------------
    async def add_tokens(self, account: str, day: str, tokens: int) -> None:
        """Count `tokens` spent by `account` (a workspace) on `day` (UTC, ISO date)."""
        await self.execute(
            "INSERT INTO concierge_token_usage (account, day, tokens) VALUES (?, ?, ?) "
            "ON CONFLICT (account, day) DO UPDATE SET tokens = concierge_token_usage.tokens + excluded.tokens",
            (account, day, tokens),
        )

    async def tokens_spent(self, account: str, day: str) -> int:
        rows = await self.fetch(
            "SELECT tokens FROM concierge_token_usage WHERE account = ? AND day = ?", (account, day)
        )
        return int(rows[0]["tokens"]) if rows else 0

    # --- per-thread turn queue ------------------------------------------------------------
    async def enqueue(self, key: str, request: dict[str, Any] | None = None) -> QueuedTurn:
        """Give a turn of thread `key` its place in the thread's queue, after every turn queued
        before it by any process on this database. One round trip; a turn that finds the queue
        empty takes the thread's lock in the same one (`running`)."""
        queued = await self._turn_queue().enqueue(key, uuid.uuid4().hex, _json(request))
        assert queued is not None  # only a claim can refuse a place
        return queued

    async def claim_and_enqueue(
        self, delivery_id: str, ttl: float, key: str, request: dict[str, Any] | None = None
    ) -> QueuedTurn | None:
        """`claim_delivery` and `enqueue` as one write: the turn has its place exactly when its
        delivery is claimed (None: a delivery already claimed). A process that dies after this
        leaves a queued turn another process adopts; one that dies before it leaves no claim, so
        the platform's redelivery is answered. Same round trip as `enqueue`."""
        claim = _Claim.made_now(delivery_id, ttl)
        return await self._turn_queue().enqueue(key, uuid.uuid4().hex, _json(request), claim)

    @contextlib.asynccontextmanager
    async def turn_slot(self, queued: QueuedTurn) -> AsyncIterator[HeldThread]:
        """Wait until every turn queued before `queued` is done, then hold the thread for the
        block; afterwards the turn leaves the queue and the next one starts (woken by LISTEN/NOTIFY
        on PostgreSQL, in-process or by a short poll on SQLite). A turn given up while it waits
        (cancelled) leaves the queue. The thread's record comes with the lock, and a
        `final_update` set in the block is written with leaving the queue, before the next turn
        can start."""
        queue = self._turn_queue()
        try:
            held = HeldThread(queued.held) if queued.running else await self._wait_for_head(queue, queued)
        except BaseException:
            with contextlib.suppress(Exception):
                await asyncio.shield(queue.finish(queued.key, queued.seq, locked=False))
            raise
        try:
            yield held
        finally:
            update = _thread_update(queued.key, held.final_update) if held.final_update else None
            await asyncio.shield(queue.finish(queued.key, queued.seq, locked=True, update=update))

    async def _wait_for_head(self, queue: _TurnQueue, queued: QueuedTurn) -> HeldThread:
        """Wait for the turn's place at the head of its queue. The turn-lock connection breaking
        meanwhile changes nothing for a waiting turn: its place is in the table, and it looks
        again once the connection is back (`_LockConnectionLost` is not its failure)."""
        waited_since = time.monotonic()
        while True:
            wake = queue.wakeup(queued.key)
            try:
                try:
                    started, row = await queue.try_start(queued.key, queued.seq)
                except _LockConnectionLost:
                    started, row = False, None
                if started:
                    return HeldThread(_record(row) if row else None)
                await asyncio.wait([wake], timeout=queue.poll_interval)
            finally:
                queue.forget(queued.key, wake)
            if time.monotonic() - waited_since >= ORPHAN_CHECK:
                with contextlib.suppress(_LockConnectionLost):  # checked again on the next round
                    orphans = await self._confirmed_orphans(queue, queued.key, queued.seq)
                    if orphans:
                        await self._handle_orphans(queued.key, orphans)
                waited_since = time.monotonic()

    async def _confirmed_orphans(self, queue: _TurnQueue, key: str | None, before: int | None) -> list[OrphanedTurn]:
        """Turns whose owner looks gone now and still does `ORPHAN_GRACE` seconds later: a live
        process whose lock connection was cut has reconnected by then and its rows name the new one."""
        first = await queue.orphans(key, before)
        if not first:
            return []
        await asyncio.sleep(ORPHAN_GRACE)
        still = {(o.turn.key, o.turn.seq, o.owner, o.pid) for o in await queue.orphans(key, before)}
        return [o for o in first if (o.turn.key, o.turn.seq, o.owner, o.pid) in still]

    async def _handle_orphans(self, key: str, orphans: list[OrphanedTurn]) -> None:
        if self.orphan_handler is not None:
            await self.orphan_handler(key, orphans)
            return
        for orphan in orphans:  # nobody here can run them: they must not block the thread
            log.warning("dropping turn %s of %s queued by a process that is gone", orphan.turn.seq, key)
            await self.drop_turn(orphan.turn, orphan.owner)

    async def orphaned_turns(self) -> list[OrphanedTurn]:
        """Queued turns of every thread whose process is gone, in queue order."""
        return await self._confirmed_orphans(self._turn_queue(), None, None)

    async def adopt_turn(self, orphan: OrphanedTurn) -> bool:
        """Make this process the owner of an orphaned turn, keeping its place; False when another
        process adopted it first."""
        return await self._turn_queue().adopt(orphan.turn.key, orphan.turn.seq, orphan.owner, orphan.pid)

    async def drop_turn(self, turn: QueuedTurn, owner: str = "") -> None:
        """Take a queued turn of this process (or of `owner`, a process that is gone) out of its
        queue, if it is still there: the next one starts."""
        await self._turn_queue().drop(turn.key, turn.entry, owner)

    @contextlib.asynccontextmanager
    async def thread_lock(self, key: str, request: dict[str, Any] | None = None) -> AsyncIterator[HeldThread]:
        """Hold thread `key` for the block, after every turn queued before this one (`enqueue`,
        then `turn_slot`), so processes sharing this database run one turn of a thread at a time,
        in arrival order."""
        async with self.turn_slot(await self.enqueue(key, request)) as held:
            yield held

    @contextlib.asynccontextmanager
    async def try_thread_lock(self, key: str) -> AsyncIterator[bool]:
        """The thread's turn lock if no process holds it (yields True, held for the block), else
        yields False at once. Outside the queue: for maintenance (retention, recovery scans)."""
        queue = self._turn_queue()
        acquired = await queue.try_acquire(key)
        try:
            yield acquired
        finally:
            if acquired:
                await asyncio.shield(queue.release(key))

    def _turn_queue(self) -> _TurnQueue:
        if self._queue is None:
            if self._pg is not None:
                self._queue = _PostgresTurnQueue(self._pg)
            else:
                assert self._sqlite is not None
                self._queue = _SqliteTurnQueue(self._sqlite, self._lock_ttl)
        return self._queue


ORPHAN_CHECK = 1.0  # seconds a queued turn waits before it looks for dead processes ahead of it
ORPHAN_GRACE = 1.0  # seconds a turn's owner must stay gone before another process takes the turn over


def _json(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _queued(
    key: str, seq: int, entry: str, request: str | None, running: bool = False, row: dict[str, Any] | None = None
) -> QueuedTurn:
    held = _record(row) if running and row else None
    return QueuedTurn(key, int(seq), entry, json.loads(request) if request else None, running, held)


class _TurnQueue:
    """One process's side of the per-thread turn queues: `enqueue` a turn, `try_start` it when it
    is at the head (taking the thread's lock), `finish` it; waiters of this process are woken
    through `wakeup` futures."""

    poll_interval = 1.0  # seconds between checks when no wake-up comes

    def __init__(self) -> None:
        self.owner = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._waiters: dict[str, set[asyncio.Future[None]]] = {}

    def wakeup(self, key: str) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(key, set()).add(future)
        return future

    def forget(self, key: str, future: asyncio.Future[None]) -> None:
        waiting = self._waiters.get(key)
        if waiting is not None:
            waiting.discard(future)
            if not waiting:
                del self._waiters[key]

    def wake(self, key: str) -> None:
        for future in self._waiters.get(key, ()):
            if not future.done():
                future.set_result(None)

    async def enqueue(self, key: str, entry: str, request: str | None, claim: _Claim | None = None) -> QueuedTurn | None:
        """The turn's place; with `claim`, only if the delivery is claimed in the same write (else None)."""
        raise NotImplementedError

    async def try_start(self, key: str, seq: int) -> tuple[bool, dict[str, Any] | None]:
        """Whether the turn is at the head and now holds the thread's lock, with the thread's
        record read after the lock was taken."""
        raise NotImplementedError

    async def finish(
        self, key: str, seq: int, *, locked: bool, update: tuple[str, tuple[Any, ...]] | None = None
    ) -> None:
        """The turn leaves the queue (and the lock, when `locked`), `update` written first."""
        raise NotImplementedError

    async def try_acquire(self, key: str) -> bool:
        raise NotImplementedError

    async def release(self, key: str) -> None:
        raise NotImplementedError

    async def orphans(self, key: str | None, before: int | None) -> list[OrphanedTurn]:
        raise NotImplementedError

    async def adopt(self, key: str, seq: int, owner: str, pid: int) -> bool:
        raise NotImplementedError

    async def drop(self, key: str, entry: str, owner: str) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


_INSERT_QUEUED = (
    "INSERT INTO concierge_turn_queue (key, seq, entry, owner, pid, request, queued_at) "
    "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, {pid}, ?, ? FROM concierge_turn_queue WHERE key = ? {having}"
    "ON CONFLICT DO NOTHING RETURNING seq"
)
# A delivery is claimed when it is new, or its earlier claim has expired, or the row carries this
# claim's own mark (its expiry, a float no other claim has): the same claim run again after its
# reply was lost with a connection the server ended, or after its place in a queue was taken.
_CLAIM = (
    "INSERT INTO concierge_deliveries (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE "
    "SET expires_at = excluded.expires_at "
    "WHERE concierge_deliveries.expires_at < ? OR concierge_deliveries.expires_at = excluded.expires_at"
)


@dataclass(frozen=True)
class _Claim:
    delivery_id: str
    expires: float  # also the claim's mark
    now: float

    @classmethod
    def made_now(cls, delivery_id: str, ttl: float) -> _Claim:
        """A claim made now, for `ttl` seconds."""
        now = time.time()
        return cls(delivery_id, now + ttl, now)

    @property
    def params(self) -> tuple[str, float, float]:
        return self.delivery_id, self.expires, self.now


class _SqliteTurnQueue(_TurnQueue):
    """Queues and turn locks for processes sharing one SQLite file (always on one machine). A
    turn lock is a row naming the holder's process id; a lock whose process has died, or that is
    older than `ttl` (a turn cannot run longer than its deadline), is taken over. Waiters of this
    process are woken when a turn ends here; other processes' turns are noticed by a short poll."""

    poll_interval = 0.05

    def __init__(self, worker: SqliteThread, ttl: float) -> None:
        super().__init__()
        self._worker = worker
        self._ttl = ttl
        self._pid = os.getpid()

    async def enqueue(self, key: str, entry: str, request: str | None, claim: _Claim | None = None) -> QueuedTurn | None:
        placed = await self._worker.run(self._enqueue, key, entry, request, time.time(), claim)
        if placed is None:
            return None
        seq, running, row = placed
        return _queued(key, seq, entry, request, running, row)

    def _enqueue(
        self, key: str, entry: str, request: str | None, now: float, claim: _Claim | None
    ) -> tuple[int, bool, dict[str, Any] | None] | None:
        conn = self._worker.conn
        try:
            if not conn.in_transaction:
                conn.execute("BEGIN IMMEDIATE")  # the write lock first: the place read is the place taken
            if claim is not None and not conn.execute(_CLAIM, claim.params).rowcount:
                conn.rollback()
                return None
            (seq,) = conn.execute(
                _INSERT_QUEUED.format(pid="?", having=""), (key, entry, self.owner, self._pid, request, now, key)
            ).fetchone()
            running = seq == 1 and self._lock(conn, key, now)  # seq 1: the queue was empty
            row = _row(conn, key) if running else None
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        return int(seq), running, row

    async def try_start(self, key: str, seq: int) -> tuple[bool, dict[str, Any] | None]:
        return await self._worker.run(self._try_start, key, seq, time.time())

    def _try_start(self, key: str, seq: int, now: float) -> tuple[bool, dict[str, Any] | None]:
        conn = self._worker.conn
        ahead = conn.execute("SELECT 1 FROM concierge_turn_queue WHERE key = ? AND seq < ? LIMIT 1", (key, seq)).fetchone()
        if ahead is not None or not self._locked(conn, key, now):
            return False, None
        return True, _row(conn, key)

    def _locked(self, conn: sqlite3.Connection, key: str, now: float) -> bool:
        try:
            taken = self._lock(conn, key, now)
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        return taken

    def _lock(self, conn: sqlite3.Connection, key: str, now: float) -> bool:
        taken = conn.execute(
            "INSERT INTO concierge_turn_locks (key, owner, pid, acquired_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            (key, self.owner, self._pid, now),
        ).rowcount
        if not taken:
            row = conn.execute("SELECT owner, pid, acquired_at FROM concierge_turn_locks WHERE key = ?", (key,)).fetchone()
            if row is not None and (not _pid_alive(row[1]) or now - row[2] > self._ttl):
                log.warning("taking over the turn lock of %s from process %s (gone, or past the turn deadline)", key, row[1])
                taken = conn.execute(  # compare-and-swap: only if nobody else took it meanwhile
                    "UPDATE concierge_turn_locks SET owner = ?, pid = ?, acquired_at = ? WHERE key = ? AND owner = ?",
                    (self.owner, self._pid, now, key, row[0]),
                ).rowcount
        return bool(taken)

    async def finish(
        self, key: str, seq: int, *, locked: bool, update: tuple[str, tuple[Any, ...]] | None = None
    ) -> None:
        await self._worker.run(self._finish, key, seq, locked, update)
        self.wake(key)

    def _finish(self, key: str, seq: int, locked: bool, update: tuple[str, tuple[Any, ...]] | None) -> None:
        conn = self._worker.conn
        try:
            if update is not None:
                conn.execute(*update)
            conn.execute("DELETE FROM concierge_turn_queue WHERE key = ? AND seq = ?", (key, seq))
            if locked:
                conn.execute("DELETE FROM concierge_turn_locks WHERE key = ? AND owner = ?", (key, self.owner))
            conn.commit()
        except BaseException:
            conn.rollback()
            raise

    async def try_acquire(self, key: str) -> bool:
        return await self._worker.run(self._locked, self._worker.conn, key, time.time())

    async def release(self, key: str) -> None:
        await self._worker.execute("DELETE FROM concierge_turn_locks WHERE key = ? AND owner = ?", (key, self.owner))
        self.wake(key)

    async def orphans(self, key: str | None, before: int | None) -> list[OrphanedTurn]:
        where, params = ("WHERE key = ? AND seq < ?", (key, before)) if key is not None else ("", ())
        rows = await self._worker.fetch(
            f"SELECT key, seq, entry, owner, pid, request FROM concierge_turn_queue {where} ORDER BY key, seq", params
        )
        return [
            OrphanedTurn(_queued(row["key"], row["seq"], row["entry"], row["request"]), row["owner"], int(row["pid"]))
            for row in rows
            if row["owner"] != self.owner and not _pid_alive(int(row["pid"]))
        ]

    async def adopt(self, key: str, seq: int, owner: str, pid: int) -> bool:
        return bool(await self._worker.execute(
            "UPDATE concierge_turn_queue SET owner = ?, pid = ? WHERE key = ? AND seq = ? AND owner = ? AND pid = ?",
            (self.owner, self._pid, key, seq, owner, pid),
        ))

    async def drop(self, key: str, entry: str, owner: str) -> None:
        await self._worker.execute(
            "DELETE FROM concierge_turn_queue WHERE key = ? AND entry = ? AND owner IN (?, ?)", (key, entry, owner, self.owner)
        )
        self.wake(key)


def _row(conn: sqlite3.Connection, key: str) -> dict[str, Any] | None:
    cur = conn.execute(_THREAD, (key,))
    row = cur.fetchone()
    return None if row is None else dict(zip([c[0] for c in cur.description], row, strict=True))


_CHANNEL = "concierge_turns"
_GONE = "NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = q.pid)"


def _named_rows(cursor: Any) -> Callable[[Sequence[Any]], dict[str, Any]]:
    """psycopg's dict_row without building the cursor's `description` (a Column object per field,
    each looking up its type) for every statement: the names straight from the result."""
    result = cursor.pgresult
    names = [result.fname(i).decode() for i in range(result.nfields)] if result is not None else []
    return lambda values: dict(zip(names, values, strict=True))


def _has_rows(cursor: Any) -> bool:
    result = cursor.pgresult
    return result is not None and result.nfields > 0


class _LockConnectionLost(Exception):
    """The turn-lock connection broke during a statement (it reconnects on the next one)."""


_Pending = tuple[list[Statement], "asyncio.Future[list[list[Any]]]"]


class _PostgresTurnQueue(_TurnQueue):
    """Queues on PostgreSQL, all on one dedicated connection per process: it holds the turn locks
    (session-level advisory locks, so a process that dies takes its connection and with it every
    lock it held) and LISTENs for turns ending in other processes (NOTIFY with the thread's key).

    Any number of turns can hold locks without holding pooled connections (a turn that held one
    for its lock and then needed another for its own writes could exhaust the pool and wait
    forever). A queue entry names the backend of its process's connection (`pid`): an entry whose
    backend is gone belongs to a process that died. Between statements the connection waits for
    notifications; a statement interrupts the wait and it resumes when no statement is left
    (notifications that arrive meanwhile are kept by psycopg)."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__()
        self._db = db
        self._conn: Any = None
        self._connecting = asyncio.Lock()
        self._busy = 0  # statements running or waiting for the connection
        self._using = asyncio.Lock()  # one pipeline at a time: batches must not interleave
        self._waiting: list[_Pending] = []  # batches not yet sent, sent together (see `_batch`)
        self._listener: asyncio.Task[None] | None = None
        self._reconnecting: asyncio.Task[None] | None = None

    @staticmethod
    def _lock_id(key: str) -> int:
        return zlib.crc32(key.encode()) - 2**31

    async def _connection(self) -> Any:
        async with self._connecting:
            if self._conn is None or self._conn.closed:
                conn = await self._db.dedicated_connection()
                await conn.execute(f"LISTEN {_CHANNEL}")
                # After a reconnect this process's entries name its new backend.
                await conn.execute(
                    "UPDATE concierge_turn_queue SET pid = pg_backend_pid() WHERE owner = %s", (self.owner,)
                )
                self._conn = conn
            return self._conn

    async def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return (await self._batch([(sql, params, False)]))[0]

    async def _batch(self, statements: list[Statement]) -> list[list[Any]]:
        """Statements (sql, params, and rows as dicts, as tuples or not read: True, False, None) run
        in order, each committed before the next starts, sent in one round trip (pipeline mode);
        the rows of each. Batches asked for while
        another is on the connection go together in the next round trip (group commit): a burst
        of arrivals, each acknowledged only once queued, costs a few round trips, not one each."""
        request: _Pending = (statements, asyncio.get_running_loop().create_future())
        request[1].add_done_callback(lambda f: f.cancelled() or f.exception())  # a caller may be gone
        self._waiting.append(request)
        self._busy += 1
        try:
            async with self._using:  # one pipeline at a time on the connection
                if not request[1].done():  # else a batch before it took it along
                    taken, self._waiting = self._waiting, []
                    await self._run_together(taken)
            return request[1].result()
        except asyncio.CancelledError:
            if request in self._waiting:
                self._waiting.remove(request)  # not sent: it never runs
            raise
        finally:
            self._busy -= 1
            if self._busy == 0:
                self._listen()

    async def _run_together(self, taken: list[_Pending]) -> None:
        """Run the statements of every batch in `taken` in one pipeline; each batch gets its rows,
        or the error (`_LockConnectionLost` when the connection broke)."""
        conn: Any = None
        try:
            await self._stop_listening()
            conn = await self._connection()
            statements = [statement for batch, _ in taken for statement in batch]
            cursors: list[Any] = []
            unread: Any = None  # one cursor for every statement whose rows nobody reads
            async with conn.pipeline() if len(statements) > 1 else contextlib.nullcontext():
                for sql, params, rows_as in statements:
                    if rows_as is None:
                        unread = unread or conn.cursor()
                        await unread.execute(sql.replace("?", "%s"), params)
                        cursors.append(None)
                        continue
                    cursor = conn.cursor(row_factory=_named_rows) if rows_as else conn.cursor()
                    await cursor.execute(sql.replace("?", "%s"), params)
                    cursors.append(cursor)
            rows = [
                list(await cursor.fetchall()) if cursor is not None and _has_rows(cursor) else []
                for cursor in cursors
            ]
        except Exception as exc:
            lost = conn is not None and (conn.closed or conn.broken)
            if lost:
                log.warning("the turn-lock connection broke; reconnecting (turn locks it held are gone)")
                self._wake_all()  # waiters check again on the next connection
                self._reconnect_soon()
            for _, future in taken:
                if not future.done():
                    error = _LockConnectionLost() if lost else exc
                    if lost:
                        error.__cause__ = exc
                    future.set_exception(error)
            return
        at = 0
        for batch, future in taken:
            if not future.done():
                future.set_result(rows[at : at + len(batch)])
            at += len(batch)

    async def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None and not listener.done():
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener

    def _listen(self) -> None:
        conn = self._conn
        # Listening whenever idle also drains what arrives for threads nobody here waits on.
        if conn is not None and not conn.closed and self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._notifications(conn), name="turn queue listener")

    async def _notifications(self, conn: Any) -> None:
        try:
            async for note in conn.notifies():
                self.wake(note.payload)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("the turn-lock connection broke; reconnecting")
            self._wake_all()
            self._reconnect_soon()

    def _reconnect_soon(self) -> None:
        """Reconnect at once, not at the next statement: until this process's queue entries name
        the new connection they look orphaned to other processes."""
        if self._reconnecting is None or self._reconnecting.done():
            self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        with contextlib.suppress(Exception):
            await self._query("SELECT 1")

    def _wake_all(self) -> None:
        for key in list(self._waiters):
            self.wake(key)

    def wakeup(self, key: str) -> asyncio.Future[None]:
        future = super().wakeup(key)
        if self._busy == 0:
            self._listen()
        return future

    # The thread's record travels with taking its lock: read by the next statement of the same
    # round trip, so after the lock is held (a statement's snapshot predates its own lock call).
    async def enqueue(self, key: str, entry: str, request: str | None, claim: _Claim | None = None) -> QueuedTurn | None:
        while True:
            try:
                placed, thread = await self._place(key, entry, request, claim)
            except _LockConnectionLost:  # the place may have been taken before the connection broke
                found = await self._query("SELECT seq FROM concierge_turn_queue WHERE key = ? AND entry = ?", (key, entry))
                if found:
                    return _queued(key, found[0][0], entry, request)
                continue  # a claim made before the break carries this claim's mark: it is taken again
            claimed, seq, running = placed[0] if placed else (1, None, False)
            if not claimed:
                return None
            if seq is not None:  # else a concurrent enqueue took the same place: take the next one
                return _queued(key, seq, entry, request, bool(running), thread[0] if thread else None)

    async def _place(self, key: str, entry: str, request: str | None, claim: _Claim | None) -> list[list[Any]]:
        queued = (key, entry, self.owner, request, time.time(), key)
        if claim is None:
            sql = (
                f"WITH ins AS ({_INSERT_QUEUED.format(pid='pg_backend_pid()', having='')}) "
                "SELECT 1, seq, CASE WHEN seq = 1 THEN pg_try_advisory_lock(?) ELSE false END FROM ins"
            )
            params: tuple[Any, ...] = (*queued, self._lock_id(key))
        else:  # one statement, so the claim and the place are taken together or not at all
            having = "HAVING EXISTS (SELECT 1 FROM claim) "
            sql = (
                f"WITH claim AS ({_CLAIM} RETURNING 1), "
                f"ins AS ({_INSERT_QUEUED.format(pid='pg_backend_pid()', having=having)}) "
                "SELECT (SELECT count(*) FROM claim), ins.seq, "
                "CASE WHEN ins.seq = 1 THEN pg_try_advisory_lock(?) ELSE false END "
                "FROM (SELECT 1) AS one LEFT JOIN ins ON true"
            )
            params = (*claim.params, *queued, self._lock_id(key))
        return await self._batch([(sql, params, False), (_THREAD, (key,), True)])

    async def try_start(self, key: str, seq: int) -> tuple[bool, dict[str, Any] | None]:
        statements: list[Statement] = [
            (
                "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM concierge_turn_queue WHERE key = ? AND seq < ?) "
                "THEN pg_try_advisory_lock(?) ELSE false END",
                (key, seq, self._lock_id(key)),
                False,
            ),
            (_THREAD, (key,), True),
        ]
        try:
            started, thread = await self._batch(statements)
        except _LockConnectionLost:
            started, thread = await self._batch(statements)  # once more, on a new connection
        if not (started and started[0][0]):
            return False, None
        return True, thread[0] if thread else None

    async def finish(
        self, key: str, seq: int, *, locked: bool, update: tuple[str, tuple[Any, ...]] | None = None
    ) -> None:
        # The turn's last state change, when there is one, is part of the same statement: it
        # commits with the queue place's removal, so the next turn, which starts only once that
        # removal is visible, always reads the thread as this turn left it.
        changed, changed_params = (f"upd AS ({update[0]}), ", update[1]) if update is not None else ("", ())
        leave = (
            f"WITH {changed}done AS (DELETE FROM concierge_turn_queue WHERE key = ? AND seq = ?) "
            f"SELECT {'pg_advisory_unlock(?)' if locked else '?::bigint'}, "
            "CASE WHEN EXISTS (SELECT 1 FROM concierge_turn_queue WHERE key = ? AND owner <> ?) "
            f"THEN pg_notify('{_CHANNEL}', ?) END",
            (*changed_params, key, seq, self._lock_id(key), key, self.owner, key),
            None,
        )
        try:
            await self._batch([leave])
        except Exception:
            # Through the pool instead; closing the lock connection lets go of the lock.
            log.warning("could not leave the turn queue of %s on the turn-lock connection", key, exc_info=True)
            await self._drop_connection()
            self._reconnect_soon()
            try:
                if update is not None:
                    await self._db.execute(*update)
                await self._db.execute(
                    "DELETE FROM concierge_turn_queue WHERE key = ? AND seq = ? AND owner = ?", (key, seq, self.owner)
                )
                await self._db.execute("SELECT pg_notify(?, ?)", (_CHANNEL, key))
            except Exception:
                log.exception("could not leave the turn queue of %s; turns after it wait for this process to end", key)
        self.wake(key)

    async def _drop_connection(self) -> None:
        conn = self._conn
        if conn is not None and not conn.closed:
            await conn.close()  # the locks go with the session; the entry is found orphaned

    async def try_acquire(self, key: str) -> bool:
        rows = await self._query("SELECT pg_try_advisory_lock(?)", (self._lock_id(key),))
        return bool(rows and rows[0][0])

    async def release(self, key: str) -> None:
        try:
            await self._query(
                "SELECT pg_advisory_unlock(?), CASE WHEN EXISTS (SELECT 1 FROM concierge_turn_queue WHERE key = ?) "
                f"THEN pg_notify('{_CHANNEL}', ?) END",
                (self._lock_id(key), key, key),
            )
        except Exception:
            log.warning("could not release a turn lock; closing its connection to drop it", exc_info=True)
            await self._drop_connection()
        self.wake(key)

    async def orphans(self, key: str | None, before: int | None) -> list[OrphanedTurn]:
        where, params = ("AND key = ? AND seq < ?", (key, before)) if key is not None else ("", ())
        rows = await self._query(
            f"SELECT key, seq, entry, owner, request, pid FROM concierge_turn_queue q WHERE owner <> ? AND {_GONE} {where} "
            "ORDER BY key, seq",
            (self.owner, *params),
        )
        return [
            OrphanedTurn(_queued(k, seq, entry, request), owner, int(pid)) for k, seq, entry, owner, request, pid in rows
        ]

    async def adopt(self, key: str, seq: int, owner: str, pid: int) -> bool:
        rows = await self._query(
            "UPDATE concierge_turn_queue SET owner = ?, pid = pg_backend_pid() "
            "WHERE key = ? AND seq = ? AND owner = ? AND pid = ? RETURNING seq",
            (self.owner, key, seq, owner, pid),
        )
        return bool(rows)

    async def drop(self, key: str, entry: str, owner: str) -> None:
        await self._query(
            "WITH done AS (DELETE FROM concierge_turn_queue WHERE key = ? AND entry = ? AND owner IN (?, ?)) "
            f"SELECT pg_notify('{_CHANNEL}', ?)",
            (key, entry, owner, self.owner, key),
        )
        self.wake(key)

    async def close(self) -> None:
        await self._stop_listening()
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        if self._conn is not None and not self._conn.closed:
            await self._conn.close()


# --- checkpointer --------------------------------------------------------------------------
KEY_CHECK = b"concierge checkpoint key check"
_KEY_CHECK_TABLE = "CREATE TABLE IF NOT EXISTS concierge_checkpoint_key (id INTEGER PRIMARY KEY, sample TEXT NOT NULL)"


class CheckpointSerde:
    """How checkpoints are written and read: LangGraph's serializer with a strict allowlist (only
    LangGraph's safe built-ins, messages, and the classes the agents' states declare are rebuilt
    from stored data; anything else stays plain data), encrypted with AES when a key is set."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key
        self._plain = JsonPlusSerializer(allowed_msgpack_modules=None)  # None: the safe set only

    @property
    def encrypted(self) -> bool:
        return self._key is not None

    def allow(self, classes: Iterable[type]) -> None:
        """Let these classes be rebuilt from checkpoints too."""
        self._plain = self._plain.with_msgpack_allowlist(classes)

    def serializer(self) -> SerializerProtocol:
        if self._key is None:
            return self._plain
        return EncryptedSerializer.from_pycryptodome_aes(self._plain, key=self._key)

    def seal(self, data: bytes) -> str:
        """`data` encrypted as the checkpoints are (for the key check), base64."""
        _, sealed = self.serializer().dumps_typed(data)
        return base64.b64encode(sealed).decode()

    def opens(self, sample: str) -> bool:
        """Whether this key decrypts a `seal()`ed sample."""
        try:
            return bool(self.serializer().loads_typed(("bytes+aes", base64.b64decode(sample))) == KEY_CHECK)
        except ValueError:  # the MAC check fails for another key
            return False


def state_classes(graph: Any) -> set[type]:
    """The classes a compiled graph's states (its subgraphs' included) declare: pydantic models,
    dataclasses and enums, found through TypedDict fields, unions and containers."""
    found: set[type] = set()
    seen: set[int] = set()
    graphs = [graph, *(sub for _, sub in graph.get_subgraphs(recurse=True))]
    for pregel in graphs:
        builder = getattr(pregel, "builder", None)
        if builder is None:
            continue
        schemas = [builder.state_schema, builder.input_schema, builder.output_schema]
        schemas += [node.input_schema for node in builder.nodes.values()]
        for schema in schemas:
            _collect_classes(schema, found, seen)
    return found


def _collect_classes(hint: Any, found: set[type], seen: set[int]) -> None:
    if id(hint) in seen:
        return
    seen.add(id(hint))
    if typing.get_origin(hint) is not None or isinstance(hint, types.UnionType):
        if typing.get_origin(hint) is not typing.Literal:
            for arg in typing.get_args(hint):
                _collect_classes(arg, found, seen)
        return
    if not isinstance(hint, type):
        return
    hints: Iterable[Any] = ()
    if typing.is_typeddict(hint):
        hints = _type_hints(hint)
    elif issubclass(hint, BaseModel):
        found.add(hint)
        hints = [field.annotation for field in hint.model_fields.values()]
    elif dataclasses.is_dataclass(hint):
        found.add(hint)
        hints = _type_hints(hint)
    elif issubclass(hint, enum.Enum):
        found.add(hint)
    for sub in hints:
        _collect_classes(sub, found, seen)


def _type_hints(cls: type) -> list[Any]:
    try:
        return list(typing.get_type_hints(cls).values())
    except Exception:  # an annotation that does not resolve names nothing we could rebuild anyway
        return []


def _postgres_saver(pool: Any, *, sealed: bool) -> Any:
    """LangGraph's AsyncPostgresSaver (same tables, rows and serialisation, so its own tools read
    what this writes) with a cheaper write path; `sealed`: every channel value goes through the
    serializer (see `aput`)."""
    from langgraph.checkpoint.base import (
        WRITES_IDX_MAP,
        CheckpointTuple,
        get_checkpoint_id,
        get_serializable_checkpoint_metadata,
    )
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.serde.types import _DeltaSnapshot
    from psycopg.types.json import Jsonb

    # Statements handed to a pipeline keep psycopg's placeholders; the queue's own use `?`.
    assert not any("?" in sql for sql in (
        AsyncPostgresSaver.SELECT_SQL, AsyncPostgresSaver.UPSERT_CHECKPOINT_BLOBS_SQL,
        AsyncPostgresSaver.UPSERT_CHECKPOINTS_SQL, AsyncPostgresSaver.UPSERT_CHECKPOINT_WRITES_SQL,
        AsyncPostgresSaver.INSERT_CHECKPOINT_WRITES_SQL,
    ))

    class PostgresCheckpointer(AsyncPostgresSaver):
        """Serialisation runs inline, not in `asyncio.to_thread`: a checkpoint of a bounded
        history takes well under a millisecond to dump, less than the thread hop costs, and the
        upstream saver holds a pooled connection across that hop. A put is one pipelined round
        trip: its blobs and its checkpoint row together.

        Sealed: the upstream saver keeps str, int, float and bool channel values in the
        checkpoint's plain JSON, out of the serializer's reach (a user's text in a `str` state
        field would be stored in the clear). Sealed, they are written as blobs, through the
        encrypting serializer, like every other value; reading finds them by channel version as
        it finds any blob.

        Pipelined (`pipeline`, set by the app database sharing the turn-lock connection): a turn's
        reads and writes go on that connection in the round trip of whatever else is waiting
        there, the queue's statements and other turns' checkpoints alike, instead of each taking
        a pooled connection (and the upstream saver's process-wide lock) for a round trip of its
        own. When that connection has just broken, the pool serves as before."""

        pipeline: Pipeline | None = None

        async def _pipelined(self, statements: list[Statement]) -> list[list[Any]] | None:
            return None if self.pipeline is None else await self.pipeline(statements)

        async def aput(
            self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions,
        ) -> RunnableConfig:
            configurable = config["configurable"]
            thread_id, namespace = configurable["thread_id"], configurable["checkpoint_ns"]
            inline = dict(checkpoint["channel_values"])
            blobs: dict[str, Any] = {}
            for channel, value in checkpoint["channel_values"].items():
                if isinstance(value, _DeltaSnapshot):
                    blobs[channel] = inline.pop(channel)
                    inline[channel] = True
                elif value is None or (not sealed and isinstance(value, str | int | float | bool)):
                    continue
                else:
                    blobs[channel] = inline.pop(channel)
            versions = {k: v for k, v in new_versions.items() if k in blobs}
            blob_rows = self._dump_blobs(thread_id, namespace, blobs, versions) if versions else []
            row = (
                thread_id, namespace, checkpoint["id"], configurable.get("checkpoint_id"),
                Jsonb({**checkpoint, "channel_values": inline}),
                Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
            )
            async def put() -> None:
                async with self._cursor(pipeline=True) as cur:
                    if blob_rows:
                        await cur.executemany(self.UPSERT_CHECKPOINT_BLOBS_SQL, blob_rows)
                    await cur.execute(self.UPSERT_CHECKPOINTS_SQL, row)

            statements: list[Statement] = [
                (self.UPSERT_CHECKPOINT_BLOBS_SQL, blob, None) for blob in blob_rows
            ]
            if await self._pipelined([*statements, (self.UPSERT_CHECKPOINTS_SQL, row, None)]) is None:
                await reconnecting(self.conn, put)  # upserts: safe to run again
            return {"configurable": {"thread_id": thread_id, "checkpoint_ns": namespace, "checkpoint_id": checkpoint["id"]}}

        async def aput_writes(
            self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "",
        ) -> None:
            query = (
                self.UPSERT_CHECKPOINT_WRITES_SQL
                if all(w[0] in WRITES_IDX_MAP for w in writes)
                else self.INSERT_CHECKPOINT_WRITES_SQL
            )
            configurable = config["configurable"]
            rows = self._dump_writes(
                configurable["thread_id"], configurable["checkpoint_ns"], configurable["checkpoint_id"],
                task_id, task_path, writes,
            )
            async def put() -> None:
                async with self._cursor(pipeline=True) as cur:
                    await cur.executemany(query, rows)

            if await self._pipelined([(query, row, None) for row in rows]) is None:
                await reconnecting(self.conn, put)  # keyed by task and index: safe to run again

        async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
            configurable = config["configurable"]
            checkpoint_id = get_checkpoint_id(config)
            key = (configurable["thread_id"], configurable.get("checkpoint_ns", ""))
            where = (
                "WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s" if checkpoint_id
                else "WHERE thread_id = %s AND checkpoint_ns = %s ORDER BY checkpoint_id DESC LIMIT 1"
            )
            found = await self._pipelined([(self.SELECT_SQL + where, (*key, checkpoint_id) if checkpoint_id else key, True)])
            if found is not None:
                if not found[0]:
                    return None
                value = found[0][0]
                # A checkpoint older than format 4 has pending sends to migrate: the upstream read does it.
                if not (value["checkpoint"]["v"] < 4 and value["parent_checkpoint_id"]):
                    return await self._load_checkpoint_tuple(value)
            return await reconnecting(self.conn, lambda: AsyncPostgresSaver.aget_tuple(self, config))

        async def _load_checkpoint_tuple(self, value: Any) -> CheckpointTuple:
            parent = value["parent_checkpoint_id"]
            return CheckpointTuple(
                {"configurable": {
                    "thread_id": value["thread_id"], "checkpoint_ns": value["checkpoint_ns"],
                    "checkpoint_id": value["checkpoint_id"],
                }},
                {  # type: ignore[typeddict-item]  # the stored JSON holds the other keys
                    **value["checkpoint"],
                    "channel_values": {
                        **(value["checkpoint"].get("channel_values") or {}),
                        **self._load_blobs(value["channel_values"]),
                    },
                },
                value["metadata"],
                {"configurable": {
                    "thread_id": value["thread_id"], "checkpoint_ns": value["checkpoint_ns"], "checkpoint_id": parent,
                }} if parent else None,
                self._load_writes(value["pending_writes"]),
            )

    return PostgresCheckpointer(pool)


@dataclass
class Removed:
    """What a prune or an expiry took away (or, in a dry run, would take away)."""

    checkpoints: int = 0
    bytes: int = 0

    def __iadd__(self, other: Removed) -> Removed:
        self.checkpoints += other.checkpoints
        self.bytes += other.bytes
        return self


class Checkpoints:
    """The checkpointer plus pruning, so stored history stays bounded per thread."""

    def __init__(self, saver: BaseCheckpointSaver, closer: Any, kind: str, serde: CheckpointSerde | None = None) -> None:
        self.saver = saver
        self._closer = closer  # SQLite: the SqliteThread; PostgreSQL: the process's PostgresDatabase
        self.kind = kind
        self.serde = serde or CheckpointSerde()
        saver.serde = self.serde.serializer()

    @classmethod
    async def open(cls, settings: Settings) -> Checkpoints:
        serde = CheckpointSerde(aes_key(settings.checkpoint_key) if settings.checkpoint_key else None)
        url = settings.resolved_database_url
        checkpoints: Checkpoints
        if url.startswith("postgresql://"):
            db = await open_database(url, name="checkpoints", pool_size=settings.db_pool_size)
            assert isinstance(db, PostgresDatabase)
            try:
                pg_saver = _postgres_saver(db.pool, sealed=serde.encrypted)
                await pg_saver.setup()
            except BaseException:
                await db.close()
                raise
            checkpoints = cls(pg_saver, db, "postgres", serde)
        else:
            worker = await SqliteThread.open(sqlite_path(url))
            sqlite_saver = SqliteCheckpointer(worker)
            await sqlite_saver.asetup()
            checkpoints = cls(sqlite_saver, worker, "sqlite", serde)
        try:
            await checkpoints._check_key()
        except BaseException:
            await checkpoints.close()
            raise
        return checkpoints

    def pipeline_through(self, pipeline: Pipeline) -> None:
        """PostgreSQL: the checkpointer's reads and writes run through `pipeline` (the app
        database's turn-lock connection), the pool only when that fails."""
        saver: Any = self.saver
        saver.pipeline = pipeline

    def allow(self, graph: Any) -> None:
        """Let the classes `graph`'s states declare be rebuilt from its checkpoints."""
        self.serde.allow(state_classes(graph))
        self.saver.serde = self.serde.serializer()

    async def _check_key(self) -> None:
        """The first encrypted start stores a sample sealed with the key; later starts check the
        configured key opens it, so a wrong or missing key fails here, not mid-conversation."""
        rows = await self._key_sample()
        if not rows:
            if self.serde.encrypted:
                await self._key_sample(self.serde.seal(KEY_CHECK))
            return
        if not self.serde.encrypted:
            raise ConfigError(
                "The checkpoints in this database are encrypted: set CONCIERGE_CHECKPOINT_KEY to the key they were written with."
            )
        if not self.serde.opens(rows[0]):
            raise ConfigError(
                "CONCIERGE_CHECKPOINT_KEY is not the key the checkpoints in this database were encrypted with."
            )

    async def _key_sample(self, store: str | None = None) -> list[str]:
        """The stored key-check sample ([] when none); with `store`, save it first."""
        await self._execute(_KEY_CHECK_TABLE)
        if store is not None:
            await self._execute(
                "INSERT INTO concierge_checkpoint_key (id, sample) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", (store,)
            )
        return [str(row["sample"]) for row in await self._fetch("SELECT sample FROM concierge_checkpoint_key WHERE id = 1")]

    async def _execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(await self._closer.execute(sql, params))

    async def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        if self.kind == "sqlite":
            return await self._closer.fetch(sql, params)  # type: ignore[no-any-return]
        return await self._closer.fetch_dicts(sql, params)  # type: ignore[no-any-return]

    @property
    def connection(self) -> SqliteThread:
        if self.kind != "sqlite":
            raise AttributeError("only a SQLite checkpointer has a single connection")
        return self._closer  # type: ignore[no-any-return]

    async def close(self) -> None:
        closer, self._closer = self._closer, None
        if closer is not None:  # a second close must not give back the shared pool twice
            await closer.close()

    async def thread_ids(self) -> dict[str, int]:
        """Every thread that has checkpoints, with how many it has (subgraphs' included)."""
        rows = await self._fetch("SELECT thread_id, COUNT(*) AS n FROM checkpoints GROUP BY thread_id")
        return {str(row["thread_id"]): int(row["n"]) for row in rows}

    async def prune(self, thread_id: str, keep: int, *, dry_run: bool = False, measure: bool = False) -> Removed:
        """Delete all but the newest `keep` checkpoints of a thread (and their writes and blobs).
        `measure`: count what goes (checkpoints, bytes) first; `dry_run`: only count it."""
        if self.kind == "sqlite":
            worker: SqliteThread = self._closer
            return await worker.run(_prune_sqlite, worker.conn, thread_id, keep, dry_run, measure or dry_run)
        rows = await self._fetch(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
            "ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?",
            (thread_id, keep - 1),
        )
        if not rows:
            return Removed()
        cutoff = rows[0]["checkpoint_id"]
        removed = Removed()
        if measure or dry_run:
            removed = await self._measure_pg(thread_id, cutoff)
        if dry_run:
            return removed

        async def delete(tx: Transaction) -> None:
            await tx.execute("DELETE FROM checkpoint_writes WHERE thread_id = ? AND checkpoint_id < ?", (thread_id, cutoff))
            await tx.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id < ?", (thread_id, cutoff))
            await tx.execute(_UNREFERENCED_BLOBS.format(verb="DELETE FROM checkpoint_blobs b", newer=""), (thread_id,))

        await self._closer.transaction(delete)
        return removed

    async def _measure_pg(self, thread_id: str, cutoff: str | None) -> Removed:
        """Checkpoints before `cutoff` (all when None) and the bytes they, their writes and the
        blobs only they refer to take."""
        before = "AND checkpoint_id < ?" if cutoff is not None else ""
        params: tuple[Any, ...] = (thread_id, cutoff) if cutoff is not None else (thread_id,)
        newer = "AND c.checkpoint_id >= ?" if cutoff is not None else "AND FALSE"
        rows = await self._fetch(
            "SELECT "
            f"(SELECT COUNT(*) FROM checkpoints WHERE thread_id = ? {before}) AS n, "
            "(SELECT COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) "
            f" FROM checkpoints WHERE thread_id = ? {before}) AS c, "
            f"(SELECT COALESCE(SUM(LENGTH(blob)), 0) FROM checkpoint_writes WHERE thread_id = ? {before}) AS w, "
            "(" + _UNREFERENCED_BLOBS.format(verb="SELECT COALESCE(SUM(LENGTH(b.blob)), 0) FROM checkpoint_blobs b", newer=newer) + ") AS b",
            (*params, *params, *params, thread_id, *((cutoff,) if cutoff is not None else ())),
        )
        row = rows[0]
        return Removed(int(row["n"]), int(row["c"]) + int(row["w"]) + int(row["b"]))

    async def delete_thread(self, thread_id: str, *, dry_run: bool = False) -> Removed:
        """Every checkpoint of a thread, with its writes and blobs; what that was."""
        if self.kind == "sqlite":
            worker: SqliteThread = self._closer
            return await worker.run(_delete_sqlite, worker.conn, thread_id, dry_run)
        removed = await self._measure_pg(thread_id, None)
        if not dry_run:
            await self.saver.adelete_thread(thread_id)
        return removed

    async def stored_bytes(self, thread_id: str | None = None) -> int:
        """Bytes of checkpoint data stored (all threads, or one)."""
        where, params = ("WHERE thread_id = ?", (thread_id,)) if thread_id else ("", ())
        sums: tuple[str, ...]
        if self.kind == "sqlite":
            sums = (
                f"SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) AS n FROM checkpoints {where}",
                f"SELECT COALESCE(SUM(LENGTH(value)), 0) AS n FROM writes {where}",
            )
        else:
            sums = (
                f"SELECT COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) AS n FROM checkpoints {where}",
                f"SELECT COALESCE(SUM(LENGTH(blob)), 0) AS n FROM checkpoint_blobs {where}",
                f"SELECT COALESCE(SUM(LENGTH(blob)), 0) AS n FROM checkpoint_writes {where}",
            )
        total = 0
        for sql in sums:
            rows = await self._fetch(sql, params)
            total += int(rows[0]["n"]) if rows else 0
        return total


# Blobs of a thread no checkpoint (`newer`: no checkpoint at or after the cutoff) refers to.
_UNREFERENCED_BLOBS = (
    "{verb} WHERE b.thread_id = ? AND NOT EXISTS ("
    " SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id"
    " AND c.checkpoint_ns = b.checkpoint_ns {newer}"
    " AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)"
)


def _sqlite_removed(conn: sqlite3.Connection, thread_id: str, before: str | None) -> Removed:
    where, params = ("thread_id = ? AND checkpoint_id < ?", (thread_id, before)) if before else ("thread_id = ?", (thread_id,))
    n, size = conn.execute(
        f"SELECT COUNT(*), COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints WHERE {where}", params
    ).fetchone()
    (writes,) = conn.execute(f"SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE {where}", params).fetchone()
    return Removed(int(n), int(size) + int(writes))


def _prune_sqlite(conn: sqlite3.Connection, thread_id: str, keep: int, dry_run: bool, measure: bool) -> Removed:
    """On the database's thread: one operation, one commit."""
    row = conn.execute(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
        "ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?",
        (thread_id, keep - 1),
    ).fetchone()
    if row is None:
        return Removed()
    removed = _sqlite_removed(conn, thread_id, row[0]) if measure else Removed()
    if dry_run:
        return removed
    try:
        for table in ("checkpoints", "writes"):
            conn.execute(f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id < ?", (thread_id, row[0]))
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return removed


def _delete_sqlite(conn: sqlite3.Connection, thread_id: str, dry_run: bool) -> Removed:
    removed = _sqlite_removed(conn, thread_id, None)
    if dry_run:
        return removed
    try:
        for table in ("checkpoints", "writes"):
            conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return removed


# --- retention ------------------------------------------------------------------------------
_GENERATION = re.compile(r"#\d+$")


def conversation_of(checkpoint_thread: str) -> str:
    """The conversation key a checkpoint thread belongs to: `{key}[#generation]/{agent}` → key."""
    head = checkpoint_thread.rsplit("/", 1)[0] if "/" in checkpoint_thread else checkpoint_thread
    return _GENERATION.sub("", head)


@dataclass
class RetentionReport:
    """What `prune_stored_threads` removed (or, in a dry run, would remove)."""

    dry_run: bool = False
    threads_expired: int = 0  # conversations idle past the TTL, forgotten with their checkpoints
    threads_pruned: int = 0  # conversations whose older checkpoints went, the latest kept
    checkpoints: int = 0
    bytes: int = 0
    busy: int = 0  # conversations left alone because a turn was running there

    def summary(self) -> str:
        verb = "would remove" if self.dry_run else "removed"
        return (
            f"{verb} {self.checkpoints} checkpoints ({_size(self.bytes)}): {self.threads_expired} threads "
            f"expired, {self.threads_pruned} pruned to their latest checkpoint"
            + (f"; {self.busy} skipped (a turn was running)" if self.busy else "")
        )


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    size = n / 1024
    for unit in ("KB", "MB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


async def prune_stored_threads(
    checkpoints: Checkpoints,
    app_db: AppDatabase,
    *,
    ttl_days: float,
    dry_run: bool = False,
    now: float | None = None,
) -> RetentionReport:
    """Retention, for every conversation no turn is running in: one idle past `ttl_days` (0: none
    ever is) loses its checkpoints and its record; any other keeps only its latest checkpoint,
    which is all the next turn reads. Each conversation is handled under its turn lock, so a turn
    that starts meanwhile waits, and a conversation with a turn running is left for the next run."""
    now = time.time() if now is None else now
    cutoff = now - ttl_days * 86400 if ttl_days > 0 else None
    report = RetentionReport(dry_run=dry_run)
    threads: dict[str, list[str]] = {}
    prunable = set()
    for thread_id, count in (await checkpoints.thread_ids()).items():
        key = conversation_of(thread_id)
        threads.setdefault(key, []).append(thread_id)
        if count > 1:
            prunable.add(key)
    expiring = set()
    if cutoff is not None:
        rows = await app_db.fetch("SELECT key FROM concierge_threads WHERE updated_at < ?", (cutoff,))
        expiring = {str(row["key"]) for row in rows}
    in_flight = {state.value for state in IN_FLIGHT}
    for key in sorted(prunable | expiring):  # a conversation already down to one checkpoint has nothing to give
        async with app_db.try_thread_lock(key) as free:
            record = await app_db.get_thread(key)
            if not free or (record is not None and record.state in in_flight):
                report.busy += 1
                continue
            removed = Removed()
            if cutoff is not None and record is not None and record.updated_at < cutoff:
                for thread_id in threads.get(key, ()):
                    removed += await checkpoints.delete_thread(thread_id, dry_run=dry_run)
                if not dry_run:
                    await app_db.execute(
                        "DELETE FROM concierge_threads WHERE key = ? AND updated_at < ?", (key, cutoff)
                    )
                report.threads_expired += 1
            else:
                for thread_id in threads.get(key, ()):
                    removed += await checkpoints.prune(thread_id, 1, dry_run=dry_run, measure=True)
                if removed.checkpoints:
                    report.threads_pruned += 1
            report.checkpoints += removed.checkpoints
            report.bytes += removed.bytes
    return report


async def prune_database(settings: Settings, *, ttl_days: float | None = None, dry_run: bool = False) -> RetentionReport:
    """`python -m bot data prune`: retention on the configured database (see `prune_stored_threads`)."""
    checkpoints = await Checkpoints.open(settings)
    try:
        app_db = await AppDatabase.open(
            settings.resolved_database_url, share=checkpoints, lock_ttl=settings.turn_deadline + 60,
            pool_size=settings.db_pool_size,
        )
        try:
            return await prune_stored_threads(
                checkpoints, app_db, ttl_days=settings.thread_ttl_days if ttl_days is None else ttl_days, dry_run=dry_run
            )
        finally:
            await app_db.close()
    finally:
        await checkpoints.close()
