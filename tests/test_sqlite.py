"""bot/sqlite.py: one SQLite connection on one dedicated thread, and langgraph's SqliteSaver on it."""

from __future__ import annotations

import asyncio
import contextlib
import operator
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from bot.sqlite import SqliteCheckpointer, SqliteThread


@pytest.fixture
async def worker(tmp_path: Path) -> AsyncIterator[SqliteThread]:
    db = await SqliteThread.open(tmp_path / "test.db")
    yield db
    await db.close()


class LoopErrors:
    """Records what reaches the event loop's exception handler (e.g. a failing callback)."""

    def __init__(self) -> None:
        self.contexts: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: self.contexts.append(ctx))

    def restore(self) -> None:
        asyncio.get_running_loop().set_exception_handler(None)


async def until_submitted() -> None:
    """Let tasks created just before run up to their first await (they submit their job there)."""
    await asyncio.sleep(0)


# --- SqliteThread ------------------------------------------------------------------------------


async def test_operations_run_in_submission_order_on_one_dedicated_thread(worker: SqliteThread) -> None:
    gate = threading.Event()
    ran: list[tuple[int, int, str]] = []

    def job(i: int) -> int:
        if i == 0:
            assert gate.wait(timeout=30)  # everything else queues up behind this one
        thread = threading.current_thread()
        ran.append((i, thread.ident or 0, thread.name))
        return i * 10

    tasks = [asyncio.create_task(worker.run(job, i)) for i in range(20)]
    await until_submitted()
    gate.set()
    assert await asyncio.gather(*tasks) == [i * 10 for i in range(20)]

    assert [i for i, _, _ in ran] == list(range(20))
    idents = {ident for _, ident, _ in ran}
    assert idents == {worker._thread.ident}
    assert threading.get_ident() not in idents  # not the event loop's thread
    assert {name for _, _, name in ran} == {"sqlite:test.db"}
    # The connection itself lives on that thread too: SQL statements run there.
    statement_threads: set[int] = set()
    await worker.run(worker.conn.set_trace_callback, lambda _sql: statement_threads.add(threading.get_ident()))
    await worker.execute("CREATE TABLE t (x INTEGER)")
    await worker.fetch("SELECT * FROM t")
    await worker.run(worker.conn.set_trace_callback, None)
    assert statement_threads == {worker._thread.ident}


async def test_a_batch_of_queued_operations_settles_each_caller_with_its_own_outcome(worker: SqliteThread) -> None:
    """Operations queued while the thread is busy run as one batch; every caller still gets its own
    result or exception, in order."""
    gate = threading.Event()

    def job(i: int) -> int:
        if i == 0:
            assert gate.wait(timeout=30)
        if i % 3 == 2:
            raise ValueError(i)
        return i

    tasks = [asyncio.create_task(worker.run(job, i)) for i in range(30)]
    await until_submitted()
    gate.set()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    for i, outcome in enumerate(outcomes):
        if i % 3 == 2:
            assert isinstance(outcome, ValueError) and outcome.args == (i,)
        else:
            assert outcome == i


async def test_results_are_delivered_while_a_long_batch_is_still_running(worker: SqliteThread) -> None:
    """A caller whose operation finished is not kept waiting behind a slow one queued after it."""
    gate, release = threading.Event(), threading.Event()

    def first() -> None:
        assert gate.wait(timeout=30)  # the others queue up behind this one: one batch

    def quick() -> str:
        time.sleep(0.01)
        return "quick"

    def slow() -> str:
        assert release.wait(timeout=30)
        return "slow"

    tasks = [asyncio.create_task(worker.run(fn)) for fn in (first, quick, slow)]
    await until_submitted()
    gate.set()
    try:
        assert await asyncio.wait_for(tasks[1], timeout=10) == "quick"
        assert not tasks[2].done()
    finally:
        release.set()
    assert await tasks[2] == "slow"


async def test_an_exception_reaches_the_caller_and_the_worker_carries_on(worker: SqliteThread) -> None:
    class Boom(Exception):
        pass

    raised = Boom("inside the database thread")

    def fail() -> None:
        raise raised

    with pytest.raises(Boom) as info:
        await worker.run(fail)
    assert info.value is raised

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        await worker.fetch("SELECT * FROM missing")
    with pytest.raises(KeyError):
        await worker.run({}.__getitem__, "absent")

    assert await worker.run(operator.add, 40, 2) == 42
    assert await worker.fetch("SELECT 1 AS one") == [{"one": 1}]


async def test_execute_commits_and_fetch_returns_dicts(worker: SqliteThread, tmp_path: Path) -> None:
    assert await worker.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER)") in (0, -1)
    for i, name in enumerate(["apple", "pear", "plum"], start=1):
        assert await worker.execute("INSERT INTO items (id, name, qty) VALUES (?, ?, ?)", (i, name, i)) == 1
    assert await worker.execute("UPDATE items SET qty = qty + 1 WHERE qty >= ?", (2,)) == 2
    assert await worker.execute("DELETE FROM items WHERE name = ?", ("nothing",)) == 0

    assert await worker.fetch("SELECT id, name, qty FROM items ORDER BY id") == [
        {"id": 1, "name": "apple", "qty": 1},
        {"id": 2, "name": "pear", "qty": 3},
        {"id": 3, "name": "plum", "qty": 4},
    ]
    assert await worker.fetch("SELECT name FROM items WHERE qty > ?", (100,)) == []
    assert await worker.run(lambda: worker.conn.in_transaction) is False

    # Committed: another connection (another process, as far as SQLite knows) sees every row.
    with contextlib.closing(sqlite3.connect(tmp_path / "test.db", timeout=0)) as other:
        assert other.execute("SELECT name, qty FROM items ORDER BY id").fetchall() == [
            ("apple", 1), ("pear", 3), ("plum", 4)
        ]
        # ... and no write lock is left behind.
        other.execute("INSERT INTO items (id, name, qty) VALUES (4, 'fig', 1)")
        other.commit()
    assert await worker.fetch("SELECT name FROM items WHERE id = 4") == [{"name": "fig"}]
    assert await worker.fetch("PRAGMA journal_mode") == [{"journal_mode": "wal"}]


async def test_close_finishes_queued_work_then_refuses_new_work_and_stops_the_thread(tmp_path: Path) -> None:
    worker = await SqliteThread.open(tmp_path / "nested" / "dir" / "closing.db")  # parents are created
    await worker.execute("CREATE TABLE t (x INTEGER)")
    queued = asyncio.create_task(worker.execute("INSERT INTO t VALUES (1)"))
    await until_submitted()

    await worker.close()

    assert queued.done() and queued.result() == 1
    assert not worker._thread.is_alive()
    for call in (worker.run(operator.add, 1, 2), worker.execute("SELECT 1"), worker.fetch("SELECT 1")):
        with pytest.raises(sqlite3.ProgrammingError):
            await call
    with pytest.raises(sqlite3.ProgrammingError):  # the connection itself is closed
        worker.conn.execute("SELECT 1")
    await worker.close()  # a second close is a no-op
    with contextlib.closing(sqlite3.connect(tmp_path / "nested" / "dir" / "closing.db")) as other:
        assert other.execute("SELECT x FROM t").fetchall() == [(1,)]


async def test_a_cancelled_caller_does_not_break_the_worker(worker: SqliteThread) -> None:
    errors = LoopErrors()
    try:
        await worker.execute("CREATE TABLE t (x INTEGER)")
        gate = threading.Event()
        running = asyncio.create_task(worker.run(gate.wait, 30))  # running when cancelled
        queued = asyncio.create_task(worker.execute("INSERT INTO t VALUES (1)"))  # not started yet
        await until_submitted()
        running.cancel()
        queued.cancel()
        for task in (running, queued):
            with pytest.raises(asyncio.CancelledError):
                await task
        gate.set()

        # The worker still serves later calls, in order, and the cancelled jobs were not lost
        # half-way: SQLite work already handed to the thread runs to completion.
        assert await worker.execute("INSERT INTO t VALUES (2)") == 1
        assert await worker.fetch("SELECT x FROM t ORDER BY x") == [{"x": 1}, {"x": 2}]
        assert await worker.run(operator.mul, 6, 7) == 42
        # Settling a cancelled future is skipped, not an error in a loop callback.
        assert errors.contexts == []
    finally:
        errors.restore()


async def test_open_failure_raises_and_stops_the_thread(tmp_path: Path) -> None:
    directory = tmp_path / "a-directory.db"
    directory.mkdir()
    before = set(threading.enumerate())
    with pytest.raises(sqlite3.OperationalError):
        await SqliteThread.open(directory)
    started = [t for t in set(threading.enumerate()) - before if t.name == "sqlite:a-directory.db"]
    for thread in started:  # it was told to stop; join only guards against a hang
        await asyncio.get_running_loop().run_in_executor(None, thread.join, 10)
        assert not thread.is_alive()


async def test_stop_iteration_from_fn_reaches_the_caller(worker: SqliteThread) -> None:
    errors = LoopErrors()
    try:
        stuck = asyncio.create_task(worker.run(next, iter(())))
        await until_submitted()
        # FIFO thread and FIFO loop callbacks: once this later call has returned, the earlier
        # job's result has been delivered (and its task woken) if it ever will be.
        await worker.run(operator.add, 1, 1)
        assert stuck.done(), f"the caller is still waiting; loop errors: {errors.contexts}"
        assert stuck.exception() is not None
    finally:
        errors.restore()
        if not stuck.done():
            stuck.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stuck


async def test_a_failed_execute_leaves_no_transaction_open(worker: SqliteThread, tmp_path: Path) -> None:
    await worker.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    await worker.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sqlite3.IntegrityError):
        await worker.execute("INSERT INTO t VALUES (1)")
    with contextlib.closing(sqlite3.connect(tmp_path / "test.db", timeout=0)) as other:
        other.execute("INSERT INTO t VALUES (2)")  # sqlite3.OperationalError: database is locked
        other.commit()


async def test_close_after_a_cancelled_close_stops_the_thread(worker: SqliteThread) -> None:
    gate = threading.Event()
    blocker = asyncio.create_task(worker.run(gate.wait, 30))
    await until_submitted()
    closing = asyncio.create_task(worker.close())
    await until_submitted()  # close() is now waiting for the connection to close
    closing.cancel()
    gate.set()
    await blocker
    with pytest.raises(asyncio.CancelledError):
        await closing
    try:
        await worker.close()
        assert not worker._thread.is_alive()
    finally:
        if worker._thread.is_alive():  # the bug: stop the stranded thread so it does not leak
            worker._jobs.put(None)
            await asyncio.get_running_loop().run_in_executor(None, worker._thread.join, 10)


# --- SqliteCheckpointer ------------------------------------------------------------------------


class ChatState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    turns: Annotated[int, operator.add]


def chat_graph(checkpointer: Checkpointer) -> CompiledStateGraph:
    def reply(state: ChatState) -> dict[str, Any]:
        said = [m.content for m in state["messages"] if isinstance(m, HumanMessage)]
        return {"messages": [AIMessage(f"heard {len(said)}: {' / '.join(map(str, said))}")], "turns": 1}

    builder = StateGraph(ChatState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=checkpointer)


def thread(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def open_checkpointer(path: Path) -> SqliteCheckpointer:
    saver = SqliteCheckpointer(await SqliteThread.open(path))
    await saver.asetup()
    return saver


async def test_checkpointer_round_trips_a_graph(tmp_path: Path) -> None:
    saver = await open_checkpointer(tmp_path / "checkpoints.db")
    statement_threads: set[int] = set()
    await saver.worker.run(
        saver.worker.conn.set_trace_callback, lambda _sql: statement_threads.add(threading.get_ident())
    )
    try:
        graph = chat_graph(saver)
        first = await graph.ainvoke({"messages": [HumanMessage("hello")]}, thread("a"))
        assert [m.content for m in first["messages"]] == ["hello", "heard 1: hello"]
        second = await graph.ainvoke({"messages": [HumanMessage("again")]}, thread("a"))
        assert [m.content for m in second["messages"]] == [
            "hello", "heard 1: hello", "again", "heard 2: hello / again"
        ]
        assert second["turns"] == 2
        other = await graph.ainvoke({"messages": [HumanMessage("separate")]}, thread("b"))
        assert [m.content for m in other["messages"]] == ["separate", "heard 1: separate"]

        latest = await saver.aget_tuple(thread("a"))
        assert isinstance(latest, CheckpointTuple)
        assert [m.content for m in latest.checkpoint["channel_values"]["messages"]] == [
            m.content for m in second["messages"]
        ]
        assert (await graph.aget_state(thread("a"))).values == second

        history = [t async for t in saver.alist(thread("a"))]
        ids = [t.checkpoint["id"] for t in history]
        assert len(history) == 6  # per invoke: input, loop start, after "reply"
        assert ids == sorted(ids, reverse=True)  # newest first
        assert ids[0] == latest.checkpoint["id"]
        assert [t.metadata["step"] for t in history] == [4, 3, 2, 1, 0, -1]
        # Each checkpoint's parent is the next older one.
        assert [t.parent_config["configurable"]["checkpoint_id"] for t in history[:-1] if t.parent_config] == ids[1:]
        # filter, before and limit reach SqliteSaver.list.
        assert [t.checkpoint["id"] for t in [t async for t in saver.alist(thread("a"), limit=2)]] == ids[:2]
        before = [t async for t in saver.alist(thread("a"), before=history[1].config)]
        assert [t.checkpoint["id"] for t in before] == ids[2:]
        inputs = [t async for t in saver.alist(thread("a"), filter={"source": "input"})]
        assert [t.checkpoint["id"] for t in inputs] == [t.checkpoint["id"] for t in history if t.metadata["source"] == "input"]
        assert len(inputs) == 2
        older = await saver.aget_tuple({"configurable": {"thread_id": "a", "checkpoint_id": ids[3]}})
        assert older is not None and older.checkpoint["id"] == ids[3]

        await saver.adelete_thread("a")
        assert await saver.aget_tuple(thread("a")) is None
        assert [t async for t in saver.alist(thread("a"))] == []
        assert (await saver.aget_tuple(thread("b"))) is not None  # other threads are untouched
        fresh = await graph.ainvoke({"messages": [HumanMessage("anew")]}, thread("a"))
        assert [m.content for m in fresh["messages"]] == ["anew", "heard 1: anew"]
    finally:
        await saver.worker.run(saver.worker.conn.set_trace_callback, None)
        await saver.worker.close()
    # Every statement of every checkpoint operation ran on the database's own thread.
    assert statement_threads == {saver.worker._thread.ident}


async def test_checkpointer_keeps_pending_writes_of_a_failed_step(tmp_path: Path) -> None:
    class Fanout(TypedDict):
        log: Annotated[list[str], operator.add]

    good_done = asyncio.Event()

    async def good(state: Fanout) -> dict[str, Any]:
        good_done.set()
        return {"log": ["good"]}

    async def bad(state: Fanout) -> dict[str, Any]:
        await good_done.wait()  # fail only once "good" has finished, so its writes are kept
        raise RuntimeError("bad node")

    builder = StateGraph(Fanout)
    builder.add_node("good", good)
    builder.add_node("bad", bad)
    builder.add_edge(START, "good")
    builder.add_edge(START, "bad")
    saver = await open_checkpointer(tmp_path / "writes.db")
    try:
        graph = builder.compile(checkpointer=saver)
        with pytest.raises(RuntimeError, match="bad node"):
            await graph.ainvoke({"log": ["start"]}, thread("w"))
        latest = await saver.aget_tuple(thread("w"))
        assert latest is not None
        assert ("log", ["good"]) in [(channel, value) for _task, channel, value in latest.pending_writes or ()]
    finally:
        await saver.worker.close()


def comparable(item: CheckpointTuple) -> tuple[Any, ...]:
    return (item.config, item.checkpoint, item.metadata, item.parent_config, item.pending_writes)


async def test_a_database_written_by_async_sqlite_saver_reads_back_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "legacy.db"
    async with AsyncSqliteSaver.from_conn_string(str(path)) as legacy:
        graph = chat_graph(legacy)
        await graph.ainvoke({"messages": [HumanMessage("one")]}, thread("t"))
        written = await graph.ainvoke({"messages": [HumanMessage("two")]}, thread("t"))
        await graph.ainvoke({"messages": [HumanMessage("elsewhere")]}, thread("u"))
        legacy_history = {t: [comparable(c) async for c in legacy.alist(thread(t))] for t in ("t", "u")}
        legacy_state = (await graph.aget_state(thread("t"))).values
    assert [m.content for m in written["messages"]] == ["one", "heard 1: one", "two", "heard 2: one / two"]

    saver = await open_checkpointer(path)
    try:
        graph = chat_graph(saver)
        assert (await graph.aget_state(thread("t"))).values == legacy_state == written
        for t, history in legacy_history.items():
            assert [comparable(c) async for c in saver.alist(thread(t))] == history
        latest = await saver.aget_tuple(thread("t"))
        assert latest is not None and comparable(latest) == legacy_history["t"][0]
        # And the conversation carries on where AsyncSqliteSaver left it.
        more = await graph.ainvoke({"messages": [HumanMessage("three")]}, thread("t"))
        assert [m.content for m in more["messages"]][-1] == "heard 3: one / two / three"
        assert more["turns"] == 3
    finally:
        await saver.worker.close()

    # The other way round too: what SqliteCheckpointer wrote, AsyncSqliteSaver reads.
    async with AsyncSqliteSaver.from_conn_string(str(path)) as legacy:
        assert (await chat_graph(legacy).aget_state(thread("t"))).values == more


def _open_together(path: str, barrier: Any, results: Any) -> None:
    """One process of the race below: wait for the others, then connect to the same new file the
    way SqliteThread's worker does (its `_connect`, called here on the process's own thread)."""
    worker = SqliteThread(Path(path))
    barrier.wait()
    try:
        worker._connect()
        worker.conn.close()
        results.put("ok")
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(repr(exc))


def test_processes_opening_a_new_database_at_once_all_get_it(tmp_path: Path) -> None:
    """Shards or replicas starting together on a new SQLite file: switching it to WAL must wait
    for the other process, not fail with "database is locked" (SQLite skips its busy handler
    there). Three processes race on twenty new files."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    outcomes: list[str] = []
    for round_ in range(20):
        barrier, results = context.Barrier(3), context.Queue()
        processes = [
            context.Process(target=_open_together, args=(str(tmp_path / f"race-{round_}.db"), barrier, results))
            for _ in range(3)
        ]
        for process in processes:
            process.start()
        outcomes += [results.get(timeout=60) for _ in processes]
        for process in processes:
            process.join(timeout=60)
    assert outcomes == ["ok"] * 60, [o for o in outcomes if o != "ok"]
