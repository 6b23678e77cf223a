"""Slack ack latency: 50 concurrent signed slash commands over HTTP to the real bolt app, first with
the runtime idle (baseline), then while 50 earlier turns are streaming status edits. "Ack latency"
is the time until bolt's HTTP response; Slack's limit is 3 s.

Three processes, as in production: the bot (bolt AsyncApp + runtime, a streaming agent), the fake
Slack Web API (with network latency), and this one sending the commands."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

import aiohttp

from bench._common import own_database, percentile, scratch_settings

ROOT = Path(__file__).resolve().parents[1]
ACK_LIMIT = 3.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_http(url: str) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(400):
            try:
                async with session.get(url) as resp:
                    if resp.status < 500:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


# --- the bot process ------------------------------------------------------------------------
class _StreamState(TypedDict):
    query: str
    answer: str


def streaming_agent(turn_seconds: float) -> Any:
    """An agent whose turns stream for `turn_seconds`: a status line, then a token every 50 ms."""
    from langgraph.config import get_stream_writer
    from langgraph.graph import END, START, StateGraph

    from bot.agent import AgentDefinition, AgentDeps, TurnInput
    from bot.events import Card, Final, Status, Token

    class StreamingAgent(AgentDefinition):
        name = "hotel"
        command = "/hotel"
        summary = "streams an answer slowly"
        usage = "CITY"

        async def build(self, deps: AgentDeps) -> Any:
            async def answer(state: _StreamState) -> dict[str, Any]:
                write = get_stream_writer()
                write(Status(text=f"Searching hotels in {state['query']}…"))
                words = []
                for i in range(max(1, int(turn_seconds / 0.05))):
                    await asyncio.sleep(0.05)
                    words.append(f"word{i}")
                    write(Token(text=f"word{i} "))
                return {"answer": " ".join(words)}

            graph = StateGraph(_StreamState)
            graph.add_node("answer", answer)
            graph.add_edge(START, "answer")
            graph.add_edge("answer", END)
            return graph.compile(checkpointer=deps.checkpointer)

        def turn_input(self, turn: TurnInput) -> dict[str, Any]:
            return {"query": turn.text}

        def final(self, state: dict[str, Any]) -> Final:
            cards = [Card(title=f"Hotel {i}", fields={"Price": "$100"}, lat=1.0, lon=2.0) for i in range(3)]
            return Final(text=state["answer"], cards=cards)

    return StreamingAgent()


async def serve_bot(port: int, api_url: str, turn_seconds: float, native: bool) -> None:
    from aiohttp import web

    from adapters.slack.app import SlackBot, make_client
    from adapters.slack.serve import web_app
    from bot.loop import freeze_heap
    from bot.runtime import ConversationRuntime
    from tests.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET

    settings = scratch_settings(
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_BASE_URL=api_url,
        SLACK_NATIVE_STREAMING=native,
        PORT=port,
    )
    connector = aiohttp.TCPConnector(limit=200)
    async with aiohttp.ClientSession(connector=connector) as session, await ConversationRuntime.open(
        settings, agents=[streaming_agent(turn_seconds)]
    ) as runtime:
        bot = SlackBot(settings, runtime, client=make_client(settings, session=session))
        await bot.start()
        app = web_app(bot)
        # Server-side ack time: from the request reaching aiohttp to bolt's response being ready.
        acks: list[float] = []

        @web.middleware
        async def timed(request: web.Request, handler: Any) -> web.StreamResponse:
            started = time.perf_counter()
            response = await handler(request)
            if request.path == "/slack/events":
                acks.append(time.perf_counter() - started)
            return response

        async def take_acks(_: web.Request) -> web.Response:
            taken = list(acks)
            acks.clear()
            return web.json_response(taken)

        app.middlewares.insert(0, timed)
        app.router.add_get("/_bench/acks", take_acks)
        runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, backlog=512).start()
        freeze_heap()  # as serve() does (startup_complete under bot.loop.run)
        print("ready", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
            await bot.close(within=1)


# --- the driver -----------------------------------------------------------------------------
async def _burst(delivery: Any, count: int, tag: str, events: bool = False) -> list[float]:
    def message(i: int) -> dict[str, Any]:
        ts = f"{time.time():.6f}"
        user = f"U{tag.upper()}{i:03d}"
        return {"type": "message", "channel": f"D{user[1:]}", "channel_type": "im", "user": user,
                "text": f"/hotel {tag} city {i}", "ts": ts, "event_ts": ts}

    results = await asyncio.gather(
        *(
            delivery.event(message(i)) if events else delivery.command("/hotel", f"{tag} city {i}", user=f"U{tag.upper()}{i:03d}")
            for i in range(count)
        )
    )
    bad = [r.status for r in results if r.status != 200]
    if bad:
        raise RuntimeError(f"{len(bad)} requests were not acknowledged: {bad[:5]}")
    return [r.elapsed for r in results]


async def _stats(session: aiohttp.ClientSession, api_origin: str) -> dict[str, Any]:
    async with session.get(f"{api_origin}/_fake/stats") as resp:
        return dict(await resp.json())


async def _server_acks(session: aiohttp.ClientSession, bot_origin: str) -> list[float]:
    async with session.get(f"{bot_origin}/_bench/acks") as resp:
        return [float(v) for v in await resp.json()]


async def _wait_answers(session: aiohttp.ClientSession, api_origin: str, expected: int, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if (await _stats(session, api_origin))["with_blocks"] >= expected:
            return
        await asyncio.sleep(0.2)
    raise RuntimeError("turns did not finish in time")


def _line(name: str, values: list[float]) -> str:
    return (
        f"  {name:<34} median {statistics.median(values) * 1000:7.1f} ms   "
        f"p99 {percentile(values, 99) * 1000:7.1f} ms   max {max(values) * 1000:7.1f} ms"
    )


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench slack-ack")
    parser.add_argument("--commands", type=int, default=50, help="concurrent slash commands per burst")
    parser.add_argument("--rounds", type=int, default=3, help="idle and loaded bursts, alternating")
    parser.add_argument("--turn-seconds", type=float, default=3.0, help="how long each earlier turn streams")
    parser.add_argument("--api-latency", type=float, default=0.05, help="fake Slack Web API latency (s)")
    parser.add_argument("--native-streaming", action="store_true", help="chat.startStream instead of chat.update")
    parser.add_argument(
        "--events", action="store_true",
        help="direct messages (Events API message events, each queued before its ack) instead of slash commands",
    )
    parser.add_argument("--serve-bot", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--api-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_bot:
        await serve_bot(args.port, args.api_url, args.turn_seconds, args.native_streaming)
        return 0

    async with own_database(os.environ.get("CONCIERGE_DATABASE_URL")) as database_url:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if database_url:  # the same fixed DM channels every run: a PostgreSQL run gets a database of its own
            env["CONCIERGE_DATABASE_URL"] = database_url
        return await _measure(args, env)


async def _measure(args: argparse.Namespace, env: dict[str, str]) -> int:
    from tests.fakes.slack_api import FakeSlackAPI, SlackDelivery

    api_port, bot_port = free_port(), free_port()
    api_origin = f"http://127.0.0.1:{api_port}"
    bot_origin = f"http://127.0.0.1:{bot_port}"
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.fakes.slack_api", "--port", str(api_port),
            "--latency", str(args.api_latency), cwd=ROOT, env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
    ]
    try:
        await wait_http(f"{api_origin}/_fake/stats")
        processes.append(
            await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.slack_ack", "--serve-bot", "--port", str(bot_port),
                "--api-url", f"{api_origin}/api/", "--turn-seconds", str(args.turn_seconds),
                *(["--native-streaming"] if args.native_streaming else []),
                cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            )
        )
        bot = processes[-1]
        assert bot.stdout is not None
        line = await asyncio.wait_for(bot.stdout.readline(), 60)
        if line.strip() != b"ready":
            raise RuntimeError("the bot did not start")
        connector = aiohttp.TCPConnector(limit=0, force_close=True)  # a new connection per request, like Slack
        async with aiohttp.ClientSession(connector=connector) as session:
            delivery = SlackDelivery(
                f"{bot_origin}/slack/events", FakeSlackAPI.in_other_process(api_port), session=session
            )
            await _burst(delivery, 1, "warm")  # bolt's first request runs auth.test
            await _wait_answers(session, api_origin, 1, 30)

            baseline: list[float] = []
            loaded: list[float] = []
            baseline_server: list[float] = []
            loaded_server: list[float] = []
            answered = 1
            for _ in range(args.rounds):
                await _server_acks(session, bot_origin)
                baseline += await _burst(delivery, args.commands, "idle", args.events)
                baseline_server += await _server_acks(session, bot_origin)
                answered += args.commands
                await _wait_answers(session, api_origin, answered, 60 + args.turn_seconds)

                await _burst(delivery, args.commands, "early", args.events)
                await asyncio.sleep(min(1.0, args.turn_seconds / 3))  # the earlier turns are streaming now
                before = await _stats(session, api_origin)
                await _server_acks(session, bot_origin)
                loaded += await _burst(delivery, args.commands, "busy", args.events)
                loaded_server += await _server_acks(session, bot_origin)
                during = await _stats(session, api_origin)
                if during["streaming"] == 0 and args.native_streaming:
                    print("warning: no stream was open during the loaded burst", file=sys.stderr)
                answered += 2 * args.commands
                await _wait_answers(session, api_origin, answered, 60 + args.turn_seconds)
            after = await _stats(session, api_origin)
    finally:
        for process in processes:
            if process.returncode is None:
                process.terminate()
                await process.wait()

    edits = "chat.appendStream" if args.native_streaming else "chat.update"
    print(
        f"slack-ack benchmark: {args.rounds} x {args.commands} concurrent signed "
        f"{'direct-message events' if args.events else 'slash commands'} over HTTP to "
        f"bolt's AsyncApp (bot, fake Web API with {args.api_latency * 1000:.0f} ms latency and this driver "
        "in separate processes)"
    )
    print(f"  turns stream {args.turn_seconds:.1f} s each ({edits}, one edit per second per message at most)")
    print("  ack latency seen by the sender (connect, send, bolt's response):")
    print(_line("baseline (runtime idle):", baseline))
    print(_line(f"while {args.commands} turns stream:", loaded))
    print("  inside the bot (request received → response ready):")
    print(_line("baseline (runtime idle):", baseline_server))
    print(_line(f"while {args.commands} turns stream:", loaded_server))
    ratio = statistics.median(loaded) / statistics.median(baseline)
    print(f"  loaded/baseline median ratio:      {ratio:.2f}x")
    print(f"  p99 vs Slack's 3 s limit:          {percentile(loaded, 99) / ACK_LIMIT:.1%} of the budget")
    print(
        f"  Web API calls made by the bot while the last loaded burst was acked: "
        f"{sum(during['calls'].values()) - sum(before['calls'].values())} "
        f"({edits}: {during['calls'].get(edits, 0) - before['calls'].get(edits, 0)}); "
        f"{edits} in the whole run: {after['calls'].get(edits, 0)}"
    )
    print(json.dumps({
        "baseline_median_ms": round(statistics.median(baseline) * 1000, 2),
        "baseline_p99_ms": round(percentile(baseline, 99) * 1000, 2),
        "loaded_median_ms": round(statistics.median(loaded) * 1000, 2),
        "loaded_p99_ms": round(percentile(loaded, 99) * 1000, 2),
        "server_baseline_p99_ms": round(percentile(baseline_server, 99) * 1000, 2),
        "server_loaded_p99_ms": round(percentile(loaded_server, 99) * 1000, 2),
    }))
    return 0 if percentile(loaded, 99) < ACK_LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(sys.argv[1:])))
