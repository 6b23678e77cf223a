"""Storage on SQLite and PostgreSQL: checkpoints, pruning, thread records, delivery de-duplication."""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from bot.agent import TurnInput
from bot.config import Settings, load_settings
from bot.conversation import ConversationKey
from bot.events import Final
from bot.runtime import ConversationRuntime
from bot.storage import AppDatabase
from tests.support.agents import EchoAgent


@pytest.fixture(params=["sqlite", "postgres"])
def any_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    overrides: dict[str, object] = {"CONCIERGE_DATA_DIR": tmp_path, "CONCIERGE_LLM": "offline", "CONCIERGE_CHECKPOINTS_KEPT": 4}
    if request.param == "postgres":
        overrides["CONCIERGE_DATABASE_URL"] = request.getfixturevalue("postgres_url")
    return load_settings(**overrides, _env_file=None)


async def test_conversation_continues_and_old_checkpoints_are_pruned(any_settings: Settings) -> None:
    key = ConversationKey.console(f"store-{uuid.uuid4().hex[:8]}")
    async with await ConversationRuntime.open(any_settings, agents=[EchoAgent()]) as rt:
        for i in range(8):  # pruning runs every fourth turn
            events = [e async for e in rt.handle(key, TurnInput.typed(f"/echo look up thing{i}"))]
            assert isinstance(events[-1], Final)
        graph = await rt._graph(rt._agents["echo"])
        config = rt._config(key, rt._agents["echo"], 0)
        history = [c async for c in graph.aget_state_history(config)]
        assert len(history) == 4  # CONCIERGE_CHECKPOINTS_KEPT
        latest = history[0].values["messages"]
        assert len(latest) == 32 and "thing7" in latest[-1].content
        assert await rt.checkpoints.stored_bytes(config["configurable"]["thread_id"]) > 0
    # A new process (a new runtime) sees the same conversation.
    async with await ConversationRuntime.open(any_settings, agents=[EchoAgent()]) as rt:
        events = [e async for e in rt.handle(key, TurnInput.typed("/echo look up more"))]
        assert isinstance(events[-1], Final) and events[-1].data["messages"] == 36


async def test_delivery_ids_are_claimed_once_until_they_expire(any_settings: Settings) -> None:
    db = await AppDatabase.open(any_settings.resolved_database_url)
    try:
        delivery = f"Ev{uuid.uuid4().hex}"
        assert await db.claim_delivery(delivery, ttl=60)
        assert not await db.claim_delivery(delivery, ttl=60)
        expiring = f"Ev{uuid.uuid4().hex}"
        assert await db.claim_delivery(expiring, ttl=0.05)
        await asyncio.sleep(0.1)
        assert await db.claim_delivery(expiring, ttl=60)
    finally:
        await db.close()


async def test_concurrent_claims_of_one_delivery_only_one_wins(any_settings: Settings) -> None:
    db = await AppDatabase.open(any_settings.resolved_database_url)
    try:
        delivery = f"Ev{uuid.uuid4().hex}"
        results = await asyncio.gather(*(db.claim_delivery(delivery, ttl=60) for _ in range(10)))
        assert results.count(True) == 1
    finally:
        await db.close()


async def test_two_runtimes_on_one_database_never_run_one_thread_at_once(any_settings: Settings) -> None:
    """Two runtimes (as two processes would) on one database: the cross-process turn lock, not the
    in-process one, keeps their turns of one thread apart."""
    settings = any_settings.model_copy(update={"checkpoints_kept": 1000})
    key = ConversationKey.console(f"shared-{uuid.uuid4().hex[:8]}")
    a = await ConversationRuntime.open(settings, agents=[EchoAgent()])
    b = await ConversationRuntime.open(settings, agents=[EchoAgent()])
    try:
        async def turn(rt: ConversationRuntime, i: int) -> None:
            events = [e async for e in rt.handle(key, TurnInput.typed(f"/echo look up n{i}"))]
            assert isinstance(events[-1], Final)

        await asyncio.gather(*(turn(a if i % 2 else b, i) for i in range(8)))
        graph = await a._graph(a._agents["echo"])
        config = a._config(key, a._agents["echo"], 0)
        history = [c async for c in graph.aget_state_history(config)]
        for newer, older in itertools.pairwise(history):
            assert newer.parent_config is not None
            assert newer.parent_config["configurable"]["checkpoint_id"] == older.config["configurable"]["checkpoint_id"]
        messages = history[0].values["messages"]
        assert len(messages) == 32  # 8 turns × (human, tool call, tool result, answer): none lost
    finally:
        await a.close()
        await b.close()


async def test_more_concurrent_turns_than_pooled_connections_all_finish(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turn locks do not hold pooled connections: 80 turns at once against a pool of 16, each
    paused inside a tool while holding its lock, all complete (a turn that held a pooled connection
    for its lock and then needed another for its own writes would wait for ever)."""
    from tests.support import agents

    monkeypatch.setitem(agents.TOOL_DELAY, "seconds", 0.2)
    settings = load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_DATABASE_URL=postgres_url, _env_file=None)
    run = uuid.uuid4().hex[:8]
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as rt:
        async def turn(i: int) -> object:
            events = [e async for e in rt.handle(ConversationKey.console(f"pool-{run}-{i}"), TurnInput.typed(f"/echo look up n{i}"))]
            return events[-1]

        finals = await asyncio.wait_for(asyncio.gather(*(turn(i) for i in range(80))), timeout=60)
    assert all(isinstance(f, Final) for f in finals)


async def test_a_sqlite_turn_lock_left_by_a_dead_process_is_taken_over(settings: Settings) -> None:
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await child.wait()  # its process id now names no process
    key = ConversationKey.console("orphaned")
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as rt:
        await rt.app_db.execute(
            "INSERT INTO concierge_turn_locks (key, owner, pid, acquired_at) VALUES (?, ?, ?, ?)",
            (key.thread_id, "gone", child.pid, time.time()),
        )
        events = await asyncio.wait_for(_collect(rt.handle(key, TurnInput.typed("/echo hello"))), timeout=30)
        assert isinstance(events[-1], Final)
        assert await rt.app_db.fetch("SELECT * FROM concierge_turn_locks") == []


async def test_a_sqlite_turn_waits_while_another_process_holds_the_thread(settings: Settings) -> None:
    key = ConversationKey.console("held")
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as rt:
        other = await AppDatabase.open(settings.resolved_database_url)  # another process's view
        try:
            async with other.thread_lock(key.thread_id):
                turn = asyncio.create_task(_collect(rt.handle(key, TurnInput.typed("/echo hello"))))
                await asyncio.sleep(0.3)
                assert not turn.done()  # waiting for the other holder
            events = await asyncio.wait_for(turn, timeout=30)
            assert isinstance(events[-1], Final)
        finally:
            await other.close()


async def _collect(stream: Any) -> list[Any]:
    return [event async for event in stream]


async def test_starting_a_process_leaves_turns_running_in_another_alone(
    any_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that starts while another runs a turn must not mark that turn interrupted; a turn
    in flight with nobody holding its lock is."""
    from tests.support import agents

    monkeypatch.setitem(agents.TOOL_DELAY, "seconds", 1.0)
    running = ConversationKey.console(f"running-{uuid.uuid4().hex[:8]}")
    orphan = ConversationKey.console(f"orphan-{uuid.uuid4().hex[:8]}")
    async with await ConversationRuntime.open(any_settings, agents=[EchoAgent()]) as a:
        await a.app_db.ensure_thread(orphan.thread_id, "console")
        await a.app_db.update_thread(orphan.thread_id, state="processing")  # its process died
        turn = asyncio.create_task(_collect(a.handle(running, TurnInput.typed("/echo look up slow things"))))
        for _ in range(200):
            record = await a.app_db.get_thread(running.thread_id)
            if record is not None and record.state == "tool_call":
                break
            await asyncio.sleep(0.02)
        async with await ConversationRuntime.open(any_settings, agents=[EchoAgent()]) as b:
            assert orphan.thread_id in b.interrupted_at_start
            assert running.thread_id not in b.interrupted_at_start
        events = await asyncio.wait_for(turn, timeout=30)
        assert isinstance(events[-1], Final)
        record = await a.app_db.get_thread(running.thread_id)
        assert record is not None and record.state == "idle" and record.note != "interrupted"


async def test_postgres_checkpoints_ride_the_turn_lock_connection_and_fall_back_to_the_pool(
    tmp_path: Path, postgres_url: str
) -> None:
    """On PostgreSQL a turn's checkpoint reads and writes go on the turn-lock connection, in the
    round trips of the turn's queue statements, not through pooled connections; when the server
    ends that connection, the conversation goes on (through the pool until it is back)."""
    settings = load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_DATABASE_URL=postgres_url, _env_file=None)
    key = ConversationKey.console(f"pipe-{uuid.uuid4().hex[:8]}")
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as rt:
        pool = rt.checkpoints.saver.conn  # the process's pool, shared with the app database
        events = [e async for e in rt.handle(key, TurnInput.typed("/echo look up first"))]
        assert isinstance(events[-1], Final)
        asked = pool.get_stats().get("requests_num", 0)
        for i in range(4):
            events = [e async for e in rt.handle(key, TurnInput.typed(f"/echo look up more{i}"))]
            assert isinstance(events[-1], Final)
        # Each turn reads its checkpoint and writes new ones: through the pool that would be at
        # least two requests a turn.
        assert pool.get_stats().get("requests_num", 0) - asked < 4

        queue = rt.app_db._turn_queue()
        gone = await rt.app_db.fetch("SELECT pg_terminate_backend(?) AS gone", (queue._conn.info.backend_pid,))
        assert gone and gone[0]["gone"]
        events = [e async for e in rt.handle(key, TurnInput.typed("/echo look up after"))]
        assert isinstance(events[-1], Final) and events[-1].data["messages"] == 24
