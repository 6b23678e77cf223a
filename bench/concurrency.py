"""Concurrency: 200 conversations × 3 turns against the fake OpenAI server with 300 ms per model
call, through the real openai SDK; achieved wall time versus the ideal (infinite parallelism)."""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import time
from pathlib import Path

from agents.chat import ChatAgent
from bench._common import describe, scratch_settings
from bot.conversation import ConversationKey
from bot.events import Final
from bot.runtime import ConversationRuntime

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_port(port: int) -> None:
    for _ in range(200):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError("fake server did not start")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench concurrency")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.3)
    args = parser.parse_args(argv)

    port = free_port()
    # The fake server runs in its own process, as a real model server would.
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.openai_server", "--port", str(port), "--latency", str(args.latency),
        cwd=ROOT, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, env={**os.environ},
    )
    try:
        await wait_port(port)
        settings = scratch_settings(
            OPENAI_API_KEY="sk-bench", OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", CONCIERGE_LLM="openai",
            CONCIERGE_LLM_TIMEOUT=60,
        )
        async with await ConversationRuntime.open(settings, agents=[ChatAgent()]) as runtime:
            turn_times: list[float] = []

            async def conversation(i: int) -> None:
                key = ConversationKey.console(f"c{i}")
                for t in range(args.turns):
                    start = time.perf_counter()
                    last = None
                    async for event in runtime.handle(key, f"/chat message {t} of conversation {i}"):
                        last = event
                    assert isinstance(last, Final), last
                    turn_times.append(time.perf_counter() - start)

            start = time.perf_counter()
            await asyncio.gather(*(conversation(i) for i in range(args.conversations)))
            wall = time.perf_counter() - start
    finally:
        server.terminate()
        await server.wait()

    ideal = args.turns * args.latency
    print(f"concurrency benchmark: {args.conversations} conversations x {args.turns} turns, "
          f"{args.latency * 1000:.0f} ms per model call, fake server in its own process")
    print(f"  ideal wall time (infinite parallelism): {ideal:.2f} s")
    print(f"  achieved wall time:                     {wall:.2f} s")
    print(f"  efficiency ideal/achieved:              {ideal / wall:.0%}   (target >= 70%)")
    print(f"  per turn: {describe(turn_times)}")
    return 0
