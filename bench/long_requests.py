"""/hotel and /shop turns on the offline model whose message is as long as the agent takes (4,000
characters) and is one long run of a kind (digits, spaces, `1,`, one place named again and again),
against a realistic request measured in the same run.

    python -m bench long-requests [--chars 3990] [--limit 60] [--runs 1]

The offline planner reads the message in the event loop, so while it reads, every other
conversation of the process waits. The table gives the turn's time and its ratio to the realistic
request's, and the event loop's longest stall during the turn (bot/loopwatch.py, measuring only;
its resolution is a few milliseconds, too coarse for a ratio to a request that stalls it for 1 ms).
Each turn runs in a fresh child process over one data directory, after two untimed turns (the
demo data seeded on first use, the rules compiled). A child that has not finished after `--limit`
seconds is stopped."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Callable

from bench._common import child_output

CHILD = """
import asyncio, json, sys, time
from agents.registry import registered_agents
from bot.agent import TurnInput
from bot.app import App
from bot.config import load_settings
from bot.conversation import ConversationKey
from bot.loop import run
from bot.loopwatch import LoopWatch

async def turn(runtime, thread, line):
    last = None
    async for event in runtime.handle(ConversationKey.console(thread), TurnInput.typed(line)):
        last = event
    return last

async def main():
    settings = load_settings(_env_file=None, CONCIERGE_DATA_DIR=sys.argv[1], CONCIERGE_LLM="offline",
                             CONCIERGE_LOOP_LAG_WARN_MS=0, CONCIERGE_LOG_LEVEL="ERROR")
    line = sys.stdin.read()
    async with await App(settings, registered_agents()).open_runtime() as runtime:
        await turn(runtime, "warm-hotel", "/hotel Rome next weekend")
        await turn(runtime, "warm-shop", "/shop running shoes")
        watch = LoopWatch(threshold_ms=60_000)  # measuring only: no warnings
        watch.start()
        started = time.perf_counter()
        last = await turn(runtime, "timed", line)
        seconds = time.perf_counter() - started
        await watch.stop()
    print(json.dumps({"stall": watch.worst, "seconds": seconds, "outcome": type(last).__name__}))

run(main())
"""


def _fill(head: str, unit: str, chars: int, tail: str = "") -> str:
    room = chars - len(head) - len(tail)
    return head + (unit * (room // len(unit) + 1))[:room] + tail


REQUESTS = {
    "/hotel": "Paris next weekend under $200 for 2 adults near the Louvre",
    "/shop": "wireless earbuds under $100 rated 4 or more",
}
SHAPES: dict[str, Callable[[str, int], str]] = {
    "a realistic request, repeated": lambda request, n: _fill("", request + ". ", n),
    "a run of digits": lambda request, n: _fill(request.split()[0] + " ", "1", n),
    "a run of spaces": lambda request, n: _fill(request.split()[0], " ", n, " under $200"),
    "`1,` again and again": lambda request, n: _fill(request.split()[0] + " ", "1,", n),
    "its first word again and again": lambda request, n: _fill("", request.split()[0] + " ", n),
}


def _turn(data_dir: str, line: str, limit: float) -> dict[str, object] | None:
    out = child_output(CHILD, data_dir, stdin=line, limit=limit)
    return None if out is None else dict(json.loads(out))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench long-requests")
    parser.add_argument("--chars", type=int, default=3990, help="message length after the command (default 3,990)")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before a child is stopped (default 60)")
    parser.add_argument("--runs", type=int, default=1, help="timed runs per message; the medians are shown")
    args = parser.parse_args(argv)
    print(f"/hotel and /shop on the offline model, messages of {args.chars:,} characters; median of {args.runs} "
          f"run(s), stopped after {args.limit:g} s.\n")
    print("| Agent | Message | Turn (s) | × realistic | Longest stall of the event loop (ms) | Answer |")
    print("|---|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="concierge-bench-long-") as data_dir:
        for command, request in REQUESTS.items():
            rows = {"a realistic request (baseline)": request, **{name: make(request, args.chars) for name, make in SHAPES.items()}}
            baseline: float | None = None
            for name, text in rows.items():
                results = [_turn(data_dir, f"{command} {text}", args.limit) for _ in range(args.runs)]
                finished = [r for r in results if r is not None]
                if len(finished) < len(results):
                    over = f" > {args.limit / baseline:.0f} |" if baseline else " |"
                    print(f"| {command} | {name} | > {args.limit:g} |{over} > {args.limit * 1000:,.0f} | stopped |", flush=True)
                    continue
                stall = statistics.median(float(str(r["stall"])) for r in finished) * 1000
                seconds = statistics.median(float(str(r["seconds"])) for r in finished)
                baseline = baseline or seconds
                print(f"| {command} | {name} | {seconds:.2f} | {seconds / baseline:.1f} | {stall:,.0f} | "
                      f"{finished[0]['outcome']} |", flush=True)
    return 0
