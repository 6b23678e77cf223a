"""A Slack message is acknowledged (HTTP 200) only once it is queued: a bot killed right after the
200 leaves a turn the next start answers, and a bot killed before it lets Slack deliver the event
again, which is then answered. Either way the message is answered exactly once; one whose attached
file was still downloading is asked for again, never dropped in silence."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from pathlib import Path

import aiohttp
import psycopg

from bot.conversation import ConversationKey
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlackAPI, SlackDelivery
from tests.reliability.test_crash_resume import BotProcess, running, until


def _dm() -> str:
    """A DM channel of its own: on a shared PostgreSQL a fixed one would meet earlier runs' rows."""
    return f"D0{uuid.uuid4().hex[:10].upper()}"


def answers(api: FakeSlackAPI, channel: str, text: str) -> list[str]:
    return [m.text for m in api.channel_messages(channel) if m.user == BOT_USER_ID and text in m.text]


async def test_a_message_acknowledged_just_before_the_bot_dies_is_answered_after_the_restart(tmp_path: Path) -> None:
    channel = _dm()
    async with FakeSlackAPI() as api:
        async with running(tmp_path, api) as (_, slack):
            event = slack.message_event("/steps beta", channel=channel, channel_type="im")
            assert (await slack.event(event)).status == 200
        # running() ends with SIGKILL at once: the turn had no time to run, or only part of it
        async with running(tmp_path, api):
            await until(lambda: answers(api, channel, "Done with beta."))
        assert len(answers(api, channel, "Done with beta.")) == 1


async def test_a_message_whose_file_a_restart_stopped_is_asked_for_again(tmp_path: Path) -> None:
    channel = _dm()
    async with FakeSlackAPI() as api:
        api.hold_downloads = asyncio.Event()
        async with running(tmp_path, api) as (_, slack):
            file = api.add_file("draft.md", b"# A draft\n\nSome text.\n")
            event = slack.message_event("/steps delta", channel=channel, channel_type="im", files=[file])
            assert (await slack.event(event)).status == 200
            await until(lambda: api.downloads, "the bot to fetch the file")
        # killed while the file was downloading: the queued turn cannot run without it
        api.hold_downloads.set()
        async with running(tmp_path, api):
            await until(lambda: answers(api, channel, "Please send it again."))
        assert len(answers(api, channel, "Please send it again.")) == 1
        assert not answers(api, channel, "Done with")


async def _waiting_on_a_lock(conn: psycopg.AsyncConnection, table: str) -> bool:
    cursor = await conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s AND pid <> pg_backend_pid()",
        (f"%{table}%",),
    )
    row = await cursor.fetchone()
    return bool(row and row[0])


async def test_a_message_is_not_acknowledged_before_it_is_recorded_and_slacks_redelivery_is_answered(
    tmp_path: Path, postgres_url: str
) -> None:
    channel, event_id = _dm(), f"Ev{uuid.uuid4().hex[:12].upper()}"
    async with FakeSlackAPI() as api:
        bot = BotProcess(tmp_path, api)
        bot.env["CONCIERGE_DATABASE_URL"] = postgres_url
        await bot.start()
        blocker = await psycopg.AsyncConnection.connect(postgres_url)
        try:
            # Hold the delivery's claim row in an open transaction: the bot's claim waits on it.
            await blocker.execute(
                "INSERT INTO concierge_deliveries (id, expires_at) VALUES (%s, 0)", (f"slack:{event_id}",)
            )
            async with SlackDelivery(bot.url, api) as slack:
                event = slack.message_event("/steps gamma", channel=channel, channel_type="im")
                delivery = asyncio.create_task(slack.event(event, event_id=event_id))
                async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as watcher:
                    await until(lambda: _waiting_on_a_lock(watcher, "concierge_deliveries"), "the claim to wait")
                assert not delivery.done()  # not acknowledged: the message is not recorded yet
                await bot.stop()  # SIGKILL while it waits
                with contextlib.suppress(aiohttp.ClientError):
                    await delivery
        finally:
            await blocker.rollback()
            await blocker.close()

        restarted = BotProcess(tmp_path, api)
        restarted.env["CONCIERGE_DATABASE_URL"] = postgres_url
        await restarted.start()
        key = ConversationKey("slack", (TEAM_ID, channel, "dm")).thread_id
        try:
            async with SlackDelivery(restarted.url, api) as slack, await psycopg.AsyncConnection.connect(
                postgres_url, autocommit=True
            ) as db:
                # Slack sends an event it got no 200 for again, with the same event_id.
                assert (await slack.event(event, event_id=event_id, retry_num=1)).status == 200
                await until(lambda: answers(api, channel, "Done with gamma."))
                await until(lambda: nothing_queued(db, key), "the answered turn to leave the queue")
                # Once more, as if that 200 had been lost too: by its 200 the delivery is known
                # as a duplicate, so nothing is queued for it.
                assert (await slack.event(event, event_id=event_id, retry_num=2)).status == 200
                assert await queued_turns(db, key) == 0
        finally:
            await restarted.stop()
        assert len(answers(api, channel, "Done with gamma.")) == 1


async def queued_turns(db: psycopg.AsyncConnection, key: str) -> int:
    cursor = await db.execute("SELECT count(*) FROM concierge_turn_queue WHERE key = %s", (key,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def nothing_queued(db: psycopg.AsyncConnection, key: str) -> bool:
    return await queued_turns(db, key) == 0
