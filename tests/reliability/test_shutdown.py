"""Graceful shutdown (SIGTERM): turns in flight are finished within the drain, or stopped and
checkpointed with their status message saying so, then resumed on the next start."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.app import DiscordBot
from adapters.slack.app import SlackBot, make_client
from bot.conversation import ConversationKey
from bot.render import INTERRUPTED_BY_RESTART, WORKING
from bot.runtime import ConversationRuntime
from tests.fakes.discord_api import GUILD_ID as DISCORD_GUILD
from tests.fakes.discord_api import FakeDiscordAPI
from tests.fakes.slack_api import TEAM_ID, FakeSlackAPI, SlackDelivery
from tests.reliability.crash_agents import PREPARED, StepsAgent, steps_run
from tests.reliability.test_crash_resume import (
    CHANNEL,
    BotProcess,
    bot_replies,
    checkpointed,
    thread_row,
    until,
)
from tests.slack.conftest import slack_settings
from tests.support.bots import discord_settings, restore_discord_defaults, serve_slack, start_discord

ORIGINAL_BASE = Route.BASE
ORIGINAL_GATEWAY = DiscordWebSocket.DEFAULT_GATEWAY


@contextlib.asynccontextmanager
async def slack_bot(data_dir: Path, api: FakeSlackAPI) -> AsyncIterator[tuple[SlackBot, SlackDelivery]]:
    """The Slack bot in this process over `data_dir`; on exit it shuts down as on SIGTERM, with a
    drain deadline the held turn cannot meet."""
    settings = slack_settings(data_dir, api)
    runtime = await ConversationRuntime.open(settings, agents=[StepsAgent()])
    bot = SlackBot(settings, runtime, client=make_client(settings))
    runner, url = await serve_slack(bot)
    try:
        async with SlackDelivery(url, api) as slack:
            yield bot, slack
    finally:
        await runner.cleanup()
        await bot.close(within=0.2)
        await runtime.close()


async def test_a_turn_the_drain_cannot_finish_is_marked_interrupted_then_resumed_on_the_next_start(
    tmp_path: Path,
) -> None:
    async with FakeSlackAPI() as api:
        (tmp_path / "hold").touch()
        async with slack_bot(tmp_path, api) as (_, slack):
            await slack.command("/steps", "bravo")
            root = (await until(lambda: api.channel_messages(CHANNEL)))[0]
            key = ConversationKey("slack", (TEAM_ID, CHANNEL, root.ts)).thread_id
            await until(lambda: "steps finish-started bravo" in steps_run(tmp_path))
            await until(lambda: checkpointed(tmp_path, f"{key}/steps", PREPARED))
        (status,) = bot_replies(api, root)
        assert status.text == f"_{INTERRUPTED_BY_RESTART}_"
        assert not any(WORKING in m.text for m in api.thread(CHANNEL, root.ts))
        assert thread_row(tmp_path, key) == ("error", "interrupted", status.ts)

        (tmp_path / "hold").unlink()
        async with slack_bot(tmp_path, api) as (bot, _):
            await until(lambda: any("Done with bravo." in m.text for m in bot_replies(api, root)))
            await bot.tasks.drain(within=20)
        replies = bot_replies(api, root)
        assert [m.ts for m in replies] == [status.ts]  # answered once, in the old status message
        assert "Resumed after a restart" in replies[0].text
        assert steps_run(tmp_path).count("steps prepare bravo") == 1
        assert thread_row(tmp_path, key) == ("idle", None, None)


async def test_sigterm_lets_a_turn_in_flight_finish_before_the_process_exits(tmp_path: Path) -> None:
    async with FakeSlackAPI() as api:
        bot = BotProcess(tmp_path, api)
        (tmp_path / "hold").touch()
        await bot.start()
        try:
            async with SlackDelivery(bot.url, api) as slack:
                await slack.command("/steps", "charlie")
                root = (await until(lambda: api.channel_messages(CHANNEL)))[0]
                await until(lambda: "steps finish-started charlie" in steps_run(tmp_path))
            assert bot.proc is not None
            bot.proc.send_signal(signal.SIGTERM)

            async def listening() -> bool:
                try:
                    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{bot.port}/healthz"):
                        return True
                except aiohttp.ClientError:
                    return False

            async def stopped_listening() -> bool:  # draining starts once the server stopped listening
                return not await listening()

            await until(stopped_listening, "the bot to stop listening after SIGTERM")
            (tmp_path / "hold").unlink()
            assert await bot.stop(signal.SIGTERM) == 0
        finally:
            await bot.stop()
        replies = bot_replies(api, root)
        assert len(replies) == 1 and replies[0].text == "Done with charlie."
        key = ConversationKey("slack", (TEAM_ID, CHANNEL, root.ts)).thread_id
        assert thread_row(tmp_path, key) == ("idle", None, None)


@contextlib.asynccontextmanager
async def discord_bot(data_dir: Path, api: FakeDiscordAPI) -> AsyncIterator[DiscordBot]:
    """The Discord bot in this process over `data_dir`; on exit it shuts down as on SIGTERM, with a
    drain deadline the held turn cannot meet."""
    running = await start_discord(discord_settings(data_dir, api), [StepsAgent()])
    try:
        yield running.bot
    finally:
        await running.stop(within=0.2)
        restore_discord_defaults()


async def test_discord_a_turn_stopped_by_shutdown_is_resumed_in_its_status_message(tmp_path: Path) -> None:
    async with FakeDiscordAPI() as api:
        (tmp_path / "hold").touch()
        async with discord_bot(tmp_path, api):
            interaction = api.slash_command("steps", {"query": "delta"})
            await api.dispatch("INTERACTION_CREATE", interaction)
            await until(lambda: "steps finish-started delta" in steps_run(tmp_path))
            root = str(api.interactions[interaction["id"]].original_id)
            await until(lambda: checkpointed(tmp_path, f"discord:{DISCORD_GUILD}:{root}/steps", PREPARED))
        (status,) = api.bot_messages(root)
        assert INTERRUPTED_BY_RESTART in status.content and WORKING not in status.content

        (tmp_path / "hold").unlink()
        async with discord_bot(tmp_path, api) as bot:
            await api.wait_for(lambda: any("Done with delta." in m.content for m in api.bot_messages(root)))
            await bot.tasks.drain(within=20)
        replies = api.bot_messages(root)
        assert [m.id for m in replies] == [status.id]  # answered once, in the old status message
        assert "Resumed after a restart" in replies[0].content
        assert steps_run(tmp_path).count("steps prepare delta") == 1
