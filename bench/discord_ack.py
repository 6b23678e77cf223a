"""Discord interaction acks under load: 50 concurrent slash commands while 50 turns stream, against
the runtime idle (baseline, same run); edits per answer and REST calls per turn. The real
discord.py client and the fake Discord share this process (one event loop)."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from bench._common import percentile, scratch_settings
from bench.slack_ack import streaming_agent


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench discord-ack")
    parser.add_argument("--commands", type=int, default=50)
    parser.add_argument("--turn-seconds", type=float, default=3.0)
    args = parser.parse_args(argv)

    import discord
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    from adapters.discord.app import DiscordBot, intents
    from adapters.discord.serve import connect
    from bot.runtime import ConversationRuntime
    from tests.fakes.discord_api import BOT_TOKEN, FakeDiscordAPI

    saved = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    async with FakeDiscordAPI(bucket_limit=10_000) as api:
        settings = scratch_settings(DISCORD_BOT_TOKEN=BOT_TOKEN, DISCORD_API_BASE_URL=api.base_url)
        runtime = await ConversationRuntime.open(settings, agents=[streaming_agent(args.turn_seconds)])
        client = discord.Client(intents=intents(), guild_ready_timeout=0.05)
        bot = DiscordBot(settings, runtime, client)
        task = await connect(client, settings)
        try:
            await api.wait_until_connected()
            await api.wait_for(lambda: client.is_ready())

            async def burst(tag: str) -> list[dict[str, Any]]:
                sent = [api.slash_command("hotel", {"query": f"{tag} city {i}"}) for i in range(args.commands)]
                for interaction in sent:
                    await api.dispatch("INTERACTION_CREATE", interaction)
                await api.wait_for(lambda: all(api.interactions[i["id"]].acked_at for i in sent), timeout=60)
                return sent

            def acks(sent: list[dict[str, Any]]) -> list[float]:
                return [float(api.interactions[i["id"]].ack_delay or 0) for i in sent]

            calls_before = len(api.calls)
            idle = await burst("idle")
            await bot.tasks.drain(within=120)
            rest_per_turn = (len(api.calls) - calls_before) / args.commands
            edits = [
                api.message(m.id).edits
                for i in idle
                for m in api.bot_messages(str(api.interactions[i["id"]].original_id))[:1]
            ]

            streaming = await burst("stream")
            started = time.monotonic()
            await api.wait_for(lambda: sum(1 for m in api.all_messages.values() if "word" in m.content) >= args.commands // 2)
            loaded = await burst("loaded")
            waited = time.monotonic() - started
            await bot.tasks.drain(within=120)
            del streaming
        finally:
            await bot.close(within=5)
            await client.close()
            await asyncio.gather(task, return_exceptions=True)
            await runtime.close()
            Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = saved

    idle_ms = [a * 1000 for a in acks(idle)]
    loaded_ms = [a * 1000 for a in acks(loaded)]
    print(f"discord-ack benchmark: {args.commands} concurrent slash commands, turns streaming {args.turn_seconds:.0f} s each")
    def p50_p99(values: list[float]) -> str:
        return f"p50 {statistics.median(values):7.1f} ms   p99 {percentile(values, 99):7.1f} ms"

    print(f"  ack latency, runtime idle (baseline)   {p50_p99(idle_ms)}")
    print(f"  ack latency, while {args.commands} turns stream   {p50_p99(loaded_ms)} (burst sent {waited:.2f} s in)")
    print(f"  p99 loaded / p99 idle: {percentile(loaded_ms, 99) / max(percentile(idle_ms, 99), 1e-9):.2f}x  (Discord allows 3,000 ms)")
    print(f"  status-message edits per answer: median {statistics.median(edits):.0f}, max {max(edits)}"
          f" over {args.turn_seconds:.0f} s of tokens every 50 ms")
    print(f"  REST calls per turn: {rest_per_turn:.1f}")
    return 0
