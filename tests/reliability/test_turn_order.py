"""Turns of one thread across processes sharing a database: they run one at a time, in the order
they were queued, woken by the turn before them (LISTEN/NOTIFY on PostgreSQL); a process that dies
holding the head of a queue does not block the thread, and the turns it had queued are handed to a
live process in their places. Bindings written by one process route replies in every other.

Each `AppDatabase` opened here has its own turn queue (its own owner and, on PostgreSQL, its own
lock/notification connection): to the queue it is another process."""

from __future__ import annotations

import asyncio
import signal
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from bot.agent import TurnInput
from bot.config import load_settings
from bot.conversation import ConversationKey
from bot.events import Final
from bot.runtime import ConversationRuntime, replayable, replayed
from bot.storage import AppDatabase, OrphanedTurn, QueuedTurn
from tests.fakes.slack_api import FakeMessage
from tests.slack.conftest import HarnessFactory, SlackHarness, make_harness, slack_api  # noqa: F401  (fixtures)
from tests.support.agents import EchoAgent
from tests.support.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{(tmp_path / 'concierge.db').as_posix()}"


async def _processes(url: str, n: int) -> list[AppDatabase]:
    return [await AppDatabase.open(url) for _ in range(n)]


async def test_turns_of_a_thread_run_one_at_a_time_in_the_order_they_were_queued(database_url: str) -> None:
    key = f"console:order-{uuid.uuid4().hex[:8]}"
    dbs = await _processes(database_url, 3)
    try:
        queued = [await dbs[i % 3].enqueue(key, {"i": i}) for i in range(9)]
        assert queued[0].running and not any(q.running for q in queued[1:])
        ran: list[int] = []
        running = 0

        async def turn(i: int) -> None:
            nonlocal running
            async with dbs[i % 3].turn_slot(queued[i]):
                running += 1
                assert running == 1, "two turns of one thread ran at once"
                ran.append(i)
                await asyncio.sleep(0.01)
                running -= 1

        # Started last-queued first: the queue, not the start order, decides.
        await asyncio.wait_for(asyncio.gather(*(turn(i) for i in reversed(range(9)))), timeout=30)
        assert ran == list(range(9))
        rows = await dbs[0].fetch("SELECT COUNT(*) AS n FROM concierge_turn_queue WHERE key = ?", (key,))
        assert rows[0]["n"] == 0
    finally:
        for db in dbs:
            await db.close()


async def test_a_waiting_turn_on_postgresql_is_woken_by_the_turn_before_it_not_by_polling(postgres_url: str) -> None:
    key = f"console:notify-{uuid.uuid4().hex[:8]}"
    first, second = await _processes(postgres_url, 2)
    try:
        head = await first.enqueue(key)
        waiting = await second.enqueue(key)
        second._turn_queue().poll_interval = 3600  # only a notification can wake it in time
        started = asyncio.Event()

        async def next_turn() -> None:
            async with second.turn_slot(waiting):
                started.set()

        task = asyncio.create_task(next_turn())
        async with first.turn_slot(head):
            await eventually(lambda: key in second._turn_queue()._waiters, "the next turn to wait for its wake-up")
            assert not started.is_set()
        await asyncio.wait_for(task, timeout=10)
    finally:
        await first.close()
        await second.close()


async def test_turns_keep_their_order_when_the_turn_lock_connection_is_cut(postgres_url: str) -> None:
    key = f"console:cut-{uuid.uuid4().hex[:8]}"
    cut, other = await _processes(postgres_url, 2)
    try:
        queued = [await cut.enqueue(key, {"i": 0}), await other.enqueue(key, {"i": 1}), await cut.enqueue(key, {"i": 2})]
        ran: list[int] = []

        async def turn(i: int) -> None:
            async with (cut, other, cut)[i].turn_slot(queued[i]):
                ran.append(i)
                if i == 0:  # the server ends the session holding this turn's lock, mid-turn
                    rows = await other.fetch(
                        "SELECT pg_terminate_backend(pid::int) AS gone FROM (SELECT DISTINCT pid FROM concierge_turn_queue "
                        "WHERE key = ? AND owner = ?) q",
                        (key, cut._turn_queue().owner),
                    )
                    assert rows and all(row["gone"] for row in rows)

        await asyncio.wait_for(asyncio.gather(*(turn(i) for i in (2, 1, 0))), timeout=30)
        assert ran == [0, 1, 2]
        assert (await other.fetch("SELECT COUNT(*) AS n FROM concierge_turn_queue WHERE key = ?", (key,)))[0]["n"] == 0
        after = await cut.enqueue(key)  # and the process goes on on a new connection
        assert after.running
        async with cut.turn_slot(after):
            pass
    finally:
        await cut.close()
        await other.close()


async def test_a_turn_given_up_while_it_waits_leaves_the_queue(database_url: str) -> None:
    key = f"console:cancel-{uuid.uuid4().hex[:8]}"
    (db,) = await _processes(database_url, 1)
    try:
        head = await db.enqueue(key)
        waiting = await db.enqueue(key)

        async def wait_in_queue() -> None:
            async with db.turn_slot(waiting):
                raise AssertionError("it was given up before its turn")

        task = asyncio.create_task(wait_in_queue())
        await eventually(lambda: key in db._turn_queue()._waiters, "the turn to wait in the queue")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        async with db.turn_slot(head):
            pass
        after = await db.enqueue(key)
        assert after.running  # nothing left ahead of it
        async with db.turn_slot(after):
            pass
    finally:
        await db.close()


_HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from bot.storage import AppDatabase

    async def main(url, key):
        db = await AppDatabase.open(url)
        head = await db.enqueue(key, {"text": "first"})
        await db.enqueue(key, {"text": "second", "user_id": "U1"})
        assert head.running
        print("holding", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


async def _dead_holder(url: str, key: str) -> None:
    """A process that takes the head of `key`'s queue, queues a second turn, and is SIGKILLed."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _HOLDER, url, key, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None
    assert (await asyncio.wait_for(child.stdout.readline(), 60)).strip() == b"holding"
    child.send_signal(signal.SIGKILL)
    await child.wait()


async def test_a_process_that_dies_at_the_head_of_a_queue_does_not_block_the_thread(database_url: str) -> None:
    key = f"console:dead-{uuid.uuid4().hex[:8]}"
    (db,) = await _processes(database_url, 1)
    try:
        await _dead_holder(database_url, key)
        mine = await db.enqueue(key)
        assert not mine.running
        async with asyncio.timeout(30):
            async with db.turn_slot(mine):  # without a handler the dead process's turns are dropped
                pass
    finally:
        await db.close()


async def test_turns_queued_by_a_dead_process_are_adopted_in_their_places(database_url: str) -> None:
    key = f"console:adopt-{uuid.uuid4().hex[:8]}"
    (db,) = await _processes(database_url, 1)
    ran: list[str] = []
    tasks: list[asyncio.Task[None]] = []

    async def run_adopted(turn: QueuedTurn) -> None:
        async with db.turn_slot(turn):
            ran.append(str((turn.request or {}).get("text")))

    async def adopt(thread: str, orphans: list[OrphanedTurn]) -> None:
        for orphan in orphans:
            assert await db.adopt_turn(orphan)
            assert not await db.adopt_turn(orphan)  # once only
            tasks.append(asyncio.create_task(run_adopted(orphan.turn)))

    db.orphan_handler = adopt
    try:
        await _dead_holder(database_url, key)
        mine = await db.enqueue(key, {"text": "third"})
        async with asyncio.timeout(30):
            async with db.turn_slot(mine):
                ran.append("third")
            await asyncio.gather(*tasks)
        assert ran == ["first", "second", "third"]
    finally:
        await db.close()


async def test_a_runtime_recovers_a_dead_process_s_turns_through_its_platform(tmp_path: Path) -> None:
    settings = load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", _env_file=None)
    key = ConversationKey("slack", ("T1", "C1", "1700000000.000100"))
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as rt:
        answers: list[str] = []
        tasks: list[asyncio.Task[None]] = []

        async def answer(conversation: ConversationKey, turn: QueuedTurn) -> None:
            events = [e async for e in rt.handle(conversation, replayed(turn.request or {}), queued=turn)]
            assert isinstance(events[-1], Final)
            answers.append(events[-1].text)

        def adopter(conversation: ConversationKey, turn: QueuedTurn, started: bool) -> None:
            assert not started  # the dead process had not begun them
            tasks.append(asyncio.create_task(answer(conversation, turn)))

        rt.adopt_orphans("slack", adopter)
        holder = await AppDatabase.open(settings.resolved_database_url)
        try:
            await holder.enqueue(key.thread_id, replayable(TurnInput.typed("/echo look up alpha", user_id="U1")))
            await holder.enqueue(key.thread_id, replayable(TurnInput.typed("/echo look up beta", user_id="U1")))
            # As if its process had died: its owner names no live process.
            gone = await _dead_pid()
            await holder.execute("UPDATE concierge_turn_queue SET owner = 'gone', pid = ?", (gone,))
            await holder.execute("UPDATE concierge_turn_locks SET owner = 'gone', pid = ?", (gone,))
        finally:
            await holder.close()
        async with asyncio.timeout(30):
            assert await rt.adopt_orphaned_turns("slack") == set()
            await asyncio.gather(*tasks)
        assert len(answers) == 2 and "alpha" in answers[0] and "beta" in answers[1]


async def _dead_pid() -> int:
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await child.wait()
    return int(child.pid)


async def test_a_thread_bound_by_one_process_is_routed_by_another(database_url: str, tmp_path: Path) -> None:
    overrides: dict[str, Any] = {"CONCIERGE_DATA_DIR": tmp_path, "CONCIERGE_LLM": "offline"}
    if database_url.startswith("postgresql"):
        overrides["CONCIERGE_DATABASE_URL"] = database_url
    settings = load_settings(**overrides, _env_file=None)
    key = ConversationKey("slack", ("T1", "C1", f"1700000000.{uuid.uuid4().int % 10**6:06d}"))
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as first:
        other = await AppDatabase.open(settings.resolved_database_url)
        try:
            assert await other.get_thread(key.thread_id) is None
            await first.bind(key, "echo")
            record = await other.get_thread(key.thread_id)
            assert record is not None and record.agent == "echo"
        finally:
            await other.close()


def _event_id() -> str:
    return f"Ev{uuid.uuid4().hex[:12].upper()}"


def _bot_replies(harness: SlackHarness, channel: str, ts: str) -> list[str]:
    return [m.text for m in harness.api.thread(channel, ts) if m.bot_id]


async def test_a_reply_reaches_its_thread_s_agent_through_another_process(
    make_harness: HarnessFactory, database_url: str  # noqa: F811
) -> None:
    first = await make_harness(CONCIERGE_DATABASE_URL=database_url)
    other = await make_harness(CONCIERGE_DATABASE_URL=database_url)
    channel = f"C{uuid.uuid4().hex[:8].upper()}"
    assert (await first.slack.command("/hotel", "Oslo", channel=channel)).status == 200
    await first.settle()
    root = first.api.channel_messages(channel)[0]
    reply = other.slack.message_event("near the harbour", channel=channel, thread_ts=root.ts)
    await other.slack.event(reply, event_id=_event_id())  # unique: deliveries are remembered in the database
    await other.settle()
    assert "Turn 2: 2 hotels for near the harbour." in _bot_replies(other, channel, root.ts)


async def test_a_reply_under_the_bot_s_root_message_is_answered_before_the_thread_is_recorded(
    make_harness: HarnessFactory, database_url: str  # noqa: F811
) -> None:
    harness = await make_harness(CONCIERGE_DATABASE_URL=database_url)
    channel = f"C{uuid.uuid4().hex[:8].upper()}"
    root = FakeMessage(channel, f"1700000000.{uuid.uuid4().int % 10**6:06d}", "<@U0ALICE> asked `/hotel Oslo`")
    harness.api.messages[(channel, root.ts)] = root  # posted by the bot; no process has recorded it yet
    key = ConversationKey("slack", (harness.api.team_id, channel, root.ts))
    assert not await harness.runtime.owns(key)
    reply = harness.slack.message_event("find a hotel in Bergen", channel=channel, thread_ts=root.ts)
    await harness.slack.event(reply, event_id=_event_id())
    await harness.settle()
    assert _bot_replies(harness, channel, root.ts)
    assert await harness.runtime.app_db.get_thread(key.thread_id) is not None
