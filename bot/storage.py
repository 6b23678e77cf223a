"""Storage: the LangGraph checkpointer and the app database (threads, turn lifecycle, deliveries).

SQLite (one connection on its own thread, see bot/sqlite.py) by default; PostgreSQL (psycopg pool)
when CONCIERGE_DATABASE_URL is postgresql://."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import enum
import json
import logging
import os
import time
import types
import typing
import uuid
import zlib
from collections.abc import AsyncIterator, Iterable, Sequence
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
from bot.sqlite import SqliteCheckpointer, SqliteThread

log = logging.getLogger(__name__)

_SCHEMA = [
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
]
# Columns added after a table first shipped: (table, column, type), added where missing at start-up.
_COLUMNS = [
    # The platform id of the in-flight turn's status message, so a restart can edit or replace it.
    ("concierge_threads", "status_message", "TEXT"),
]


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


def _record(row: dict[str, Any]) -> ThreadRecord:
    return ThreadRecord(**{**row, "pending": json.loads(row["pending"]) if row["pending"] else None})


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


async def _postgres_pool(url: str, *, max_size: int) -> Any:
    """A psycopg pool set up as AsyncPostgresSaver needs it: autocommit, no prepared statements
    (poolers), dict rows."""
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True, timeout=10)
    return pool


class AppDatabase:
    """Threads (key, bound agent, lifecycle state, timestamps) and delivery de-duplication."""

    def __init__(
        self,
        *,
        sqlite: SqliteThread | None = None,
        pool: Any = None,
        url: str = "",
        owns_connection: bool = True,
        lock_ttl: float = 600.0,
    ) -> None:
        self._sqlite = sqlite
        self._pool = pool
        self._url = url
        self._owns = owns_connection
        self._lock_ttl = lock_ttl
        self._locks: _TurnLocks | None = None
        self._last_sweep = 0.0

    @property
    def is_postgres(self) -> bool:
        return self._pool is not None

    @classmethod
    async def open(cls, url: str, *, share: Checkpoints | None = None, lock_ttl: float = 600.0) -> AppDatabase:
        """Open the app database; with `share` (a SQLite checkpointer on the same file) it uses the
        checkpointer's connection and thread, so the two never contend for SQLite's write lock.

        `lock_ttl`: on SQLite, after how many seconds a turn lock of a process that still seems
        alive counts as abandoned (the turn deadline plus a margin)."""
        if share is not None and share.kind == "sqlite":
            db = cls(sqlite=share.connection, owns_connection=False, lock_ttl=lock_ttl)
        elif url.startswith("postgresql://"):
            db = cls(pool=await _postgres_pool(url, max_size=16), url=url)
        else:
            db = cls(sqlite=await SqliteThread.open(sqlite_path(url)), lock_ttl=lock_ttl)
        for statement in _SCHEMA:
            await db.execute(statement)
        await db._add_columns()
        return db

    async def _add_columns(self) -> None:
        """Add the columns of `_COLUMNS` a database made by an older version lacks."""
        for table, column, kind in _COLUMNS:
            if self.is_postgres:
                await self.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")
                continue
            present = {row["name"] for row in await self.fetch(f"PRAGMA table_info({table})")}
            if column not in present:
                with contextlib.suppress(Exception):  # another process added it meanwhile
                    await self.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    async def close(self) -> None:
        if self._sqlite is not None and self._owns:
            await self._sqlite.close()
        if self._locks is not None:
            await self._locks.close()
        if self._pool is not None:
            await self._pool.close()

    # --- low level ----------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.is_postgres else sql

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        if self._pool is not None:
            async with self._pool.connection() as conn:
                cur = await conn.execute(self._sql(sql), params)
                return int(cur.rowcount or 0)
        assert self._sqlite is not None
        return await self._sqlite.execute(sql, params)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        if self._pool is not None:
            async with self._pool.connection() as conn:
                cur = await conn.execute(self._sql(sql), params)
                return list(await cur.fetchall())
        assert self._sqlite is not None
        return await self._sqlite.fetch(sql, params)

    # --- threads ------------------------------------------------------------------------
    async def get_thread(self, key: str) -> ThreadRecord | None:
        rows = await self.fetch("SELECT * FROM concierge_threads WHERE key = ?", (key,))
        return _record(rows[0]) if rows else None

    async def ensure_thread(self, key: str, platform: str) -> ThreadRecord:
        existing = await self.get_thread(key)  # the common case: one read, no write
        if existing is not None:
            return existing
        now = time.time()
        await self.execute(
            "INSERT INTO concierge_threads (key, platform, created_at, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            (key, platform, now, now),
        )
        record = await self.get_thread(key)
        assert record is not None
        return record

    async def update_thread(self, key: str, **fields: Any) -> None:
        if "pending" in fields and fields["pending"] is not None:
            fields["pending"] = json.dumps(fields["pending"], ensure_ascii=False)
        fields["updated_at"] = time.time()
        assignments = ", ".join(f"{name} = ?" for name in fields)
        await self.execute(
            f"UPDATE concierge_threads SET {assignments} WHERE key = ?", (*fields.values(), key)
        )

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
        claimed = await self.execute(
            "INSERT INTO concierge_deliveries (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING",
            (delivery_id, now + ttl),
        )
        if claimed:
            return True
        # An expired row counts as unseen.
        return bool(await self.execute(
            "UPDATE concierge_deliveries SET expires_at = ? WHERE id = ? AND expires_at < ?",
            (now + ttl, delivery_id, now),
        ))

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

    # --- cross-process turn lock ---------------------------------------------------------
    @contextlib.asynccontextmanager
    async def thread_lock(self, key: str) -> AsyncIterator[None]:
        """A lock on one thread's turns across every process on this database, so processes sharing
        it never run two turns of one thread at once (in-process serialisation is the runtime's job).
        PostgreSQL: advisory locks; SQLite: a row per locked thread, see `_SqliteTurnLocks`."""
        locks = self._turn_locks()
        delay = 0.01
        while not await locks.try_acquire(key):  # another process runs a turn of this thread
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.25)
        try:
            yield
        finally:
            await locks.release(key)

    @contextlib.asynccontextmanager
    async def try_thread_lock(self, key: str) -> AsyncIterator[bool]:
        """The thread's turn lock if no process holds it (yields True, held for the block), else
        yields False at once."""
        locks = self._turn_locks()
        acquired = await locks.try_acquire(key)
        try:
            yield acquired
        finally:
            if acquired:
                await locks.release(key)

    def _turn_locks(self) -> _TurnLocks:
        if self._locks is None:
            if self._pool is not None:
                self._locks = _AdvisoryLocks(self._url)
            else:
                assert self._sqlite is not None
                self._locks = _SqliteTurnLocks(self._sqlite, self._lock_ttl)
        return self._locks


class _TurnLocks:
    async def try_acquire(self, key: str) -> bool:
        raise NotImplementedError

    async def release(self, key: str) -> None:
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


class _SqliteTurnLocks(_TurnLocks):
    """Turn locks for processes sharing one SQLite file (always on one machine): a row names the
    holder's process id; a lock whose process has died, or that is older than `ttl` (a turn cannot
    run longer than its deadline), is taken over."""

    def __init__(self, worker: SqliteThread, ttl: float) -> None:
        self._worker = worker
        self._ttl = ttl
        self._pid = os.getpid()
        self._owner = f"{self._pid}-{uuid.uuid4().hex[:12]}"

    async def try_acquire(self, key: str) -> bool:
        return await self._worker.run(self._try_acquire, key, time.time())

    def _try_acquire(self, key: str, now: float) -> bool:
        conn = self._worker.conn
        try:
            taken = conn.execute(
                "INSERT INTO concierge_turn_locks (key, owner, pid, acquired_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (key) DO NOTHING",
                (key, self._owner, self._pid, now),
            ).rowcount
            if not taken:
                row = conn.execute(
                    "SELECT owner, pid, acquired_at FROM concierge_turn_locks WHERE key = ?", (key,)
                ).fetchone()
                if row is not None and (not _pid_alive(row[1]) or now - row[2] > self._ttl):
                    log.warning("taking over the turn lock of %s from process %s (gone, or past the turn deadline)", key, row[1])
                    taken = conn.execute(  # compare-and-swap: only if nobody else took it meanwhile
                        "UPDATE concierge_turn_locks SET owner = ?, pid = ?, acquired_at = ? "
                        "WHERE key = ? AND owner = ?",
                        (self._owner, self._pid, now, key, row[0]),
                    ).rowcount
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
        return bool(taken)

    async def release(self, key: str) -> None:
        await self._worker.execute(
            "DELETE FROM concierge_turn_locks WHERE key = ? AND owner = ?", (key, self._owner)
        )


class _AdvisoryLocks(_TurnLocks):
    """Session-level advisory locks, all held on one dedicated connection per process.

    Any number of turns can hold locks without holding pooled connections (a turn that held one
    for its lock and then needed another for its own writes could exhaust the pool and wait
    forever). A process that dies takes its connection and with it every lock it held. Taking a
    lock never blocks the shared connection: `pg_try_advisory_lock`, retried with backoff while
    another process runs a turn of that thread."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._conn: Any = None
        self._connecting = asyncio.Lock()

    @staticmethod
    def _lock_id(key: str) -> int:
        return zlib.crc32(key.encode()) - 2**31

    async def _connection(self) -> Any:
        async with self._connecting:
            if self._conn is None or self._conn.closed:
                import psycopg

                self._conn = await psycopg.AsyncConnection.connect(self._url, autocommit=True, prepare_threshold=0)
            return self._conn

    async def try_acquire(self, key: str) -> bool:
        conn = await self._connection()
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (self._lock_id(key),))
        row = await cur.fetchone()
        return bool(row and row[0])

    async def release(self, key: str) -> None:
        conn = self._conn
        if conn is None or conn.closed:
            return  # the connection, and with it the lock, is already gone
        try:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (self._lock_id(key),))
        except Exception:
            log.warning("could not release a turn lock; closing its connection to drop it", exc_info=True)
            await conn.close()

    async def close(self) -> None:
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
    """AsyncPostgresSaver; `sealed`: one that stores every channel value through the serializer."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    if not sealed:
        return AsyncPostgresSaver(pool)

    class SealedPostgresSaver(AsyncPostgresSaver):
        """AsyncPostgresSaver keeps str, int, float and bool channel values in the checkpoint's
        plain JSON, out of the serializer's reach (a user's text in a `str` state field would be
        stored in the clear). Here they are written as blobs, through the encrypting serializer,
        like every other value; reading finds them by channel version as it finds any blob."""

        async def aput(
            self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions,
        ) -> RunnableConfig:
            values = checkpoint["channel_values"]
            plain = {k: v for k, v in values.items() if isinstance(v, str | int | float | bool)}
            if versions := {k: v for k, v in new_versions.items() if k in plain}:
                configurable = config["configurable"]
                rows = await asyncio.to_thread(
                    self._dump_blobs, configurable["thread_id"], configurable["checkpoint_ns"], plain, versions
                )
                async with self._cursor(pipeline=True) as cur:
                    await cur.executemany(self.UPSERT_CHECKPOINT_BLOBS_SQL, rows)
            rest = {k: v for k, v in values.items() if k not in plain}
            return await super().aput(config, {**checkpoint, "channel_values": rest}, metadata, new_versions)

    return SealedPostgresSaver(pool)


class Checkpoints:
    """The checkpointer plus pruning, so stored history stays bounded per thread."""

    def __init__(self, saver: BaseCheckpointSaver, closer: Any, kind: str, serde: CheckpointSerde | None = None) -> None:
        self.saver = saver
        self._closer = closer
        self.kind = kind
        self.serde = serde or CheckpointSerde()
        saver.serde = self.serde.serializer()

    @classmethod
    async def open(cls, settings: Settings) -> Checkpoints:
        serde = CheckpointSerde(aes_key(settings.checkpoint_key) if settings.checkpoint_key else None)
        url = settings.resolved_database_url
        checkpoints: Checkpoints
        if url.startswith("postgresql://"):
            pool = await _postgres_pool(url, max_size=16)
            pg_saver = _postgres_saver(pool, sealed=serde.encrypted)
            await pg_saver.setup()
            checkpoints = cls(pg_saver, pool, "postgres", serde)
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
        if self.kind == "sqlite":
            worker: SqliteThread = self._closer
            await worker.execute(_KEY_CHECK_TABLE)
            if store is not None:
                await worker.execute("INSERT INTO concierge_checkpoint_key (id, sample) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", (store,))
            return [str(row["sample"]) for row in await worker.fetch("SELECT sample FROM concierge_checkpoint_key WHERE id = 1")]
        async with self._closer.connection() as pg:
            await pg.execute(_KEY_CHECK_TABLE)
            if store is not None:
                await pg.execute("INSERT INTO concierge_checkpoint_key (id, sample) VALUES (1, %s) ON CONFLICT (id) DO NOTHING", (store,))
            cur = await pg.execute("SELECT sample FROM concierge_checkpoint_key WHERE id = 1")
            return [str(row["sample"]) for row in await cur.fetchall()]

    @property
    def connection(self) -> SqliteThread:
        if self.kind != "sqlite":
            raise AttributeError("only a SQLite checkpointer has a single connection")
        return self._closer  # type: ignore[no-any-return]

    async def close(self) -> None:
        await self._closer.close()

    async def prune(self, thread_id: str, keep: int) -> None:
        """Delete all but the newest `keep` checkpoints of a thread (and their writes and blobs)."""
        if self.kind == "sqlite":
            worker: SqliteThread = self._closer

            def prune() -> None:
                conn = worker.conn
                row = conn.execute(
                    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
                    "ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?",
                    (thread_id, keep - 1),
                ).fetchone()
                if row is None:
                    return
                for table in ("checkpoints", "writes"):
                    conn.execute(f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id < ?", (thread_id, row[0]))
                conn.commit()

            await worker.run(prune)
            return
        async with self._closer.connection() as pg:
            cur = await pg.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' "
                "ORDER BY checkpoint_id DESC LIMIT 1 OFFSET %s",
                (thread_id, keep - 1),
            )
            row = await cur.fetchone()
            if row is None:
                return
            cutoff_id = row["checkpoint_id"]
            await pg.execute(
                "DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_id < %s", (thread_id, cutoff_id)
            )
            await pg.execute(
                "DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_id < %s", (thread_id, cutoff_id)
            )
            await pg.execute(
                "DELETE FROM checkpoint_blobs b WHERE b.thread_id = %s AND NOT EXISTS ("
                " SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id"
                " AND c.checkpoint_ns = b.checkpoint_ns"
                " AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
                (thread_id,),
            )

    async def stored_bytes(self, thread_id: str | None = None) -> int:
        """Bytes of checkpoint data stored (all threads, or one)."""
        where, params = ("WHERE thread_id = ?", (thread_id,)) if thread_id else ("", ())
        if self.kind == "sqlite":
            worker: SqliteThread = self._closer
            total = 0
            for sql in (
                f"SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) AS n FROM checkpoints {where}",
                f"SELECT COALESCE(SUM(LENGTH(value)), 0) AS n FROM writes {where}",
            ):
                rows = await worker.fetch(sql, params)
                total += int(rows[0]["n"]) if rows else 0
            return total
        where = where.replace("?", "%s")
        total = 0
        async with self._closer.connection() as pg:
            for sql in (
                f"SELECT COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) AS n FROM checkpoints {where}",
                f"SELECT COALESCE(SUM(LENGTH(blob)), 0) AS n FROM checkpoint_blobs {where}",
                f"SELECT COALESCE(SUM(LENGTH(blob)), 0) AS n FROM checkpoint_writes {where}",
            ):
                cur = await pg.execute(sql, params)
                row = await cur.fetchone()
                total += int(row["n"]) if row else 0
        return total
