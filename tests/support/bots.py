"""The bots as tests run them in-process: a Discord bot connected to the fake Discord and ready,
a Slack bot served over HTTP for the fake Slack's deliveries. One place, so that every test starts
them the same way (and stops them in the right order)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
from aiohttp import web
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.app import DiscordBot, intents
from adapters.discord.serve import connect
from adapters.slack.app import SlackBot
from adapters.slack.serve import web_app
from bot.agent import AgentDefinition
from bot.config import Settings, load_settings
from bot.runtime import ConversationRuntime
from tests.fakes.discord_api import BOT_TOKEN, FakeDiscordAPI

# discord.py keeps its REST base and gateway in class attributes; connecting to a fake changes them.
DISCORD_DEFAULTS = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)


def restore_discord_defaults() -> None:
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = DISCORD_DEFAULTS


def discord_settings(data_dir: Path, api: FakeDiscordAPI, **overrides: Any) -> Settings:
    return load_settings(
        CONCIERGE_DATA_DIR=data_dir, CONCIERGE_LLM="offline", DISCORD_BOT_TOKEN=BOT_TOKEN,
        DISCORD_API_BASE_URL=api.base_url, CONCIERGE_EDIT_INTERVAL=0.2, _env_file=None, **overrides,
    )


@dataclass
class RunningDiscord:
    bot: DiscordBot
    runtime: ConversationRuntime
    client: discord.Client
    task: asyncio.Task[None]

    async def settle(self) -> None:
        await self.bot.tasks.drain(within=20)

    async def stop(self, within: float = 5) -> None:
        """As on SIGTERM: the bot drains for `within` seconds, then everything closes."""
        await self.bot.close(within=within)
        await self.client.close()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.runtime.close()


async def start_discord(settings: Settings, agents: Sequence[AgentDefinition]) -> RunningDiscord:
    """The Discord bot over the real discord.py client, once the fake gateway said it is ready."""
    runtime = await ConversationRuntime.open(settings, agents=agents)
    client = discord.Client(intents=intents(), guild_ready_timeout=0.05)
    bot = DiscordBot(settings, runtime, client)
    ready = asyncio.Event()

    async def on_ready() -> None:
        await bot.on_ready()
        ready.set()

    client.event(on_ready)
    task = await connect(client, settings)
    await asyncio.wait_for(ready.wait(), 10)
    return RunningDiscord(bot, runtime, client, task)


async def serve_slack(bot: SlackBot) -> tuple[web.AppRunner, str]:
    """The Slack bot's HTTP endpoint on a free local port: (its runner, the events URL)."""
    await bot.start()
    runner = web.AppRunner(web_app(bot), handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/slack/events"
