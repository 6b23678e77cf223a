"""SQLite for an asyncio process: one connection on one dedicated thread, one hop per operation.

aiosqlite makes a thread hop for every cursor call (execute, fetch, close, commit), so one
checkpoint read or write costs four or five hops, each a GIL hand-off and a self-pipe wake-up of
the event loop. Here every operation — a whole `SqliteSaver.put`, a whole app-database update —
runs as one function on the database's thread: the event loop never blocks on SQLite (lock waits
under `busy_timeout` included) and pays one hop per operation. `python -m bench concurrency` shows
what that is worth per turn.

`SqliteCheckpointer` is langgraph's `SqliteSaver` (same schema and serialisation, so databases
written by `AsyncSqliteSaver` read back unchanged) with its async methods run on that thread.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from queue import SimpleQueue
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.sqlite import SqliteSaver

T = TypeVar("T")

_Job = tuple[asyncio.AbstractEventLoop, asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    elif isinstance(value, StopIteration):  # a future cannot carry StopIteration
        error = RuntimeError("StopIteration raised on the database thread")
        error.__cause__ = value
        future.set_exception(error)
    else:
        future.set_exception(value)


def _settle_all(outcomes: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, ok, value in outcomes:
        _settle(future, ok, value)


def _deliver(done: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]]) -> None:
    for loop, outcomes in done.items():
        try:
            loop.call_soon_threadsafe(_settle_all, outcomes)
        except RuntimeError:  # the loop has closed; nobody is waiting
            pass


_SETTLE_AFTER = 0.005  # seconds a batch may run before the results so far are delivered


class SqliteThread:
    """A SQLite connection owned by one thread; `await run(fn, *args)` runs `fn` there.

    Operations run one at a time in submission order, so callers need no lock of their own."""

    def __init__(self, path: Path, *, busy_timeout: float = 15.0, autocommit: bool = False) -> None:
        self.path = path
        self._jobs: SimpleQueue[_Job | None] = SimpleQueue()
        # A daemon thread: an unclosed database never keeps the process from exiting (SQLite's
        # journal makes an abrupt end safe), unlike aiosqlite's worker since 0.22.
        self._thread = threading.Thread(target=self._work, name=f"sqlite:{path.name}", daemon=True)
        self._busy_timeout = busy_timeout
        self._autocommit = autocommit
        self._closed = False
        self.conn: sqlite3.Connection

    @classmethod
    async def open(cls, path: Path, *, busy_timeout: float = 15.0, autocommit: bool = False) -> SqliteThread:
        """`autocommit`: no implicit transactions; the caller issues BEGIN/COMMIT itself."""
        path.parent.mkdir(parents=True, exist_ok=True)
        worker = cls(path, busy_timeout=busy_timeout, autocommit=autocommit)
        worker._thread.start()
        try:
            await worker.run(worker._connect)
        except BaseException:
            worker._jobs.put(None)
            raise
        return worker

    def _connect(self) -> None:
        conn = sqlite3.connect(self.path, timeout=self._busy_timeout, check_same_thread=False)
        if self._autocommit:
            conn.isolation_level = None
        # Switching a new file to WAL needs it to itself, and SQLite answers "database is locked"
        # at once, without its busy handler, when another process opens the same new file at the
        # same moment (replicas or shards starting together): retry until the busy timeout.
        deadline, pause = time.monotonic() + self._busy_timeout, 0.01
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    conn.close()
                    raise
                time.sleep(pause)  # this is the worker's own thread, not the event loop
                pause = min(pause * 2, 0.2)
        conn.execute("PRAGMA synchronous=NORMAL")
        self.conn = conn

    def _work(self) -> None:
        # Under load many operations are queued at once: run all that are waiting, then settle
        # their futures with one wake-up of each event loop instead of one per operation (sooner
        # when the batch runs long, e.g. waiting on another process's write lock).
        while True:
            jobs = [self._jobs.get()]
            while not self._jobs.empty() and jobs[-1] is not None:
                jobs.append(self._jobs.get_nowait())
            done: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
            since = time.monotonic()
            for job in jobs:
                if job is None:
                    break
                loop, future, fn, args = job
                try:
                    result, ok = fn(*args), True
                except BaseException as exc:  # handed to the awaiting task
                    result, ok = exc, False
                done.setdefault(loop, []).append((future, ok, result))
                if time.monotonic() - since > _SETTLE_AFTER:
                    _deliver(done)
                    done, since = {}, time.monotonic()
            _deliver(done)
            if jobs[-1] is None:
                return

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._closed:
            raise sqlite3.ProgrammingError("the database is closed")
        return await self._submit(fn, *args)

    async def _submit(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((loop, future, fn, args))
        return await future

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement and commit; the number of rows changed."""
        return await self.run(self._execute, sql, params)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return await self.run(self._fetch, sql, params)

    def _execute(self, sql: str, params: Sequence[Any]) -> int:
        try:
            cur = self.conn.execute(sql, params)
            self.conn.commit()
        except BaseException:
            self.conn.rollback()  # never keep the write lock after a failed statement
            raise
        return cur.rowcount

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cur = self.conn.execute(sql, params)
        names = [c[0] for c in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    async def close(self) -> None:
        if not self._closed:
            self._closed = True  # refuse new work; what is queued still runs, then the connection closes
            try:
                if hasattr(self, "conn"):
                    await self._submit(self.conn.close)
            finally:
                self._jobs.put(None)
        await asyncio.get_running_loop().run_in_executor(None, self._thread.join)


class SqliteCheckpointer(SqliteSaver):
    """langgraph's SqliteSaver whose async methods run on the database's own thread."""

    def __init__(self, worker: SqliteThread, **kwargs: Any) -> None:
        super().__init__(worker.conn, **kwargs)
        self.worker = worker

    async def asetup(self) -> None:
        await self.worker.run(self.setup)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.worker.run(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        def collect() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for item in await self.worker.run(collect):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self.worker.run(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.worker.run(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.worker.run(self.delete_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        def history() -> Mapping[str, Any]:
            return self.get_delta_channel_history(config=config, channels=channels)

        return await self.worker.run(history)
