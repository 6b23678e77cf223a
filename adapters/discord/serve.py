"""Serving Discord: REST at DISCORD_API_BASE_URL, the gateway found with GET /gateway/bot there,
one client (or an AutoShardedClient with --shards), until SIGINT/SIGTERM; and the explicit command
sync (`--sync-commands`), never done on every connect."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.app import DiscordBot, intents
from adapters.discord.commands import commands_schema
from adapters.discord.settings import DiscordSettings
from bot.app import App
from bot.config import ConfigError, Settings
from bot.platform import require_settings, serving
from bot.supervisor import stop_signal

log = logging.getLogger(__name__)


async def logged_in(client: discord.Client, settings: Settings) -> None:
    needed = {"DISCORD_BOT_TOKEN": "the bot token, from the developer portal → Bot"}
    discord_settings = settings.section(DiscordSettings)
    token = require_settings(discord_settings, "Discord", needed)["DISCORD_BOT_TOKEN"]
    Route.BASE = discord_settings.api_base_url.rstrip("/")  # a plain Client would use discord.com regardless
    try:
        await client.login(token)
    except discord.LoginFailure:
        raise ConfigError("Discord rejected the bot token (DISCORD_BOT_TOKEN).") from None


async def connect(client: discord.Client, settings: Settings) -> asyncio.Task[None]:
    """Log in, find the gateway with GET /gateway/bot at the configured base, and run the
    connection (reconnecting and resuming on its own) as a task."""
    await logged_in(client, settings)
    # A plain Client, and an AutoShardedClient given its shard count, use a hard-coded gateway.
    _, url, _ = await client.http.get_bot_gateway()
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
    return asyncio.create_task(client.connect(reconnect=True), name="discord gateway")


async def serve(app: App, *, shards: int | None = None) -> None:
    """Run until SIGINT/SIGTERM. A configuration problem raises ConfigError with a readable,
    secret-free message (`python -m bot` prints it and exits with status 2); turns in progress get
    SHUTDOWN_GRACE seconds to finish."""
    async with stop_signal() as stop, await app.open_runtime() as runtime:
        content = True
        while True:
            try:
                await _run(app, runtime, shards, stop, content=content)
                return
            except discord.PrivilegedIntentsRequired:
                if not content:
                    raise ConfigError("Discord refused the bot's gateway intents.") from None
                log.warning(
                    "Discord refused the message_content intent (enable it under Bot → Privileged Gateway "
                    "Intents): running with mentions and DMs only; follow-ups in threads need a mention"
                )
                content = False


async def _run(app: App, runtime: Any, shards: int | None, stop: asyncio.Event, *, content: bool) -> None:
    settings = app.settings
    chosen = intents()
    chosen.message_content = content
    client: discord.Client = (
        discord.AutoShardedClient(intents=chosen, shard_count=shards) if shards else discord.Client(intents=chosen)
    )
    bot = DiscordBot(settings, runtime, client)
    connection: asyncio.Task[None] | None = None
    try:
        connection = await connect(client, settings)
        async with serving(bot):
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({connection, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if connection.done():
                connection.result()  # a fatal gateway error (intents, token) surfaces here
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.close(), 10)
        if connection is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection, 10)  # cancelled if it will not stop


async def sync_commands(app: App, guild: str | None = None) -> int:
    """Overwrite the application's commands with the command table (globally, or in one guild,
    which takes effect at once: use it while developing)."""
    client = discord.Client(intents=discord.Intents.none())
    try:
        await logged_in(client, app.settings)
        assert client.application_id is not None
        schema = commands_schema(app.commands)
        if guild:
            await client.http.bulk_upsert_guild_commands(client.application_id, int(guild), schema)
        else:
            await client.http.bulk_upsert_global_commands(client.application_id, schema)
    finally:
        await client.close()
    where = f"guild {guild}" if guild else "every guild and DM (global commands may take up to an hour to show)"
    print(f"synced {len(schema)} commands ({', '.join('/' + c['name'] for c in schema)}) to {where}")
    return 0
