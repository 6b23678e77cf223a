"""An innocent user's /hotel turns while another user's large /proofread uploads are checked: the
event loop's worst lag and the /hotel latency with the checkers in threads of the bot's process
(`asyncio.to_thread`, what a runtime without the work pool does) and in the work pool's processes
(bot/workpool.py, what the application runs), in the same run.

    python -m bench hostile-mix [--uploads 6] [--kb 190] [--hotel-turns 3]

Each mode gets a fresh runtime (offline model) with the /proofread and /hotel agents over one
seeded hotel store. Per mode: two untimed warm-up turns (the dictionary, the linter's process, the
pool's workers), /hotel alone (the baseline), then `--uploads` uploads of a `--kb` KB article from
one user, each in its own thread, while another user sends /hotel turns one after another until
every upload is answered. Last, the loop-lag watch's own CPU cost on an idle loop.

With threads, the uploads' checkers, and the threads waiting for the shared linter process, take
every thread of the loop's default executor, so anything else that uses `asyncio.to_thread` (the
/hotel map) queues behind them; with the pool, one user's jobs run one at a time in processes
that can be stopped, and nothing else waits for them."""

from __future__ import annotations

import argparse
import asyncio
import logging
import resource
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from agents.hotel.agent import HotelAgent
from agents.hotel.seed import seed
from agents.hotel.store import HotelStore
from agents.proofread.agent import ProofreadAgent
from bench._common import percentile, scratch_settings
from bench.proofread import build_article
from bot.agent import IncomingFile, TurnInput
from bot.app import App
from bot.conversation import ConversationKey
from bot.events import Failure, Final
from bot.loopwatch import LoopWatch
from bot.runtime import ConversationRuntime

TODAY = date(2030, 6, 3)
HOTEL = "/hotel Paris near the Eiffel Tower next weekend"


async def _turn(runtime: ConversationRuntime, thread: str, turn: TurnInput) -> tuple[float, Final | Failure]:
    started = time.perf_counter()
    last: Any = None
    async for event in runtime.handle(ConversationKey.console(thread), turn):
        last = event
    return time.perf_counter() - started, last


def _hotel() -> TurnInput:
    return TurnInput.typed(HOTEL, user_id="alice")


def _upload(article: bytes) -> TurnInput:
    return TurnInput(text="", command="proofread", user_id="mallory",
                     attachments=(IncomingFile("article.md", article, "text/markdown"),))


async def _mode(label: str, pooled: bool, store: HotelStore, article: bytes, uploads: int, hotel_turns: int) -> dict[str, Any]:
    settings = scratch_settings()
    agents = [ProofreadAgent(), HotelAgent(clock=lambda tz: TODAY, store=store)]
    if pooled:
        runtime = await App(settings, agents).open_runtime()
    else:
        runtime = await ConversationRuntime.open(settings, agents=agents)
    try:
        await _turn(runtime, "warm-hotel", _hotel())
        await _turn(runtime, "warm-proofread", _upload(build_article(5).encode()))
        alone = [(await _turn(runtime, f"alone-{n}", _hotel()))[0] for n in range(hotel_turns)]
        watch = LoopWatch(threshold_ms=60_000)  # measuring only: no warnings
        watch.start()
        started = time.perf_counter()
        hostile = [asyncio.create_task(_turn(runtime, f"upload-{n}", _upload(article))) for n in range(uploads)]
        during: list[float] = []
        n = 0
        while not all(task.done() for task in hostile) or not during:
            seconds, final = await _turn(runtime, f"mix-{n}", _hotel())
            assert isinstance(final, Final), final
            during.append(seconds)
            n += 1
        results = await asyncio.gather(*hostile)
        hostile_wall = time.perf_counter() - started
        await watch.stop()
    finally:
        await runtime.close()
    outcomes: dict[str, int] = {}
    for _, final in results:
        key = "answered" if isinstance(final, Final) else f"failed ({final.kind})"
        outcomes[key] = outcomes.get(key, 0) + 1
    return {
        "label": label, "alone": statistics.median(alone), "median": statistics.median(during),
        "p95": percentile(during, 95), "max": max(during),
        "turns": len(during), "lag": watch.worst, "hostile_wall": hostile_wall, "outcomes": outcomes,
    }


async def _watch_cost(seconds: float) -> tuple[float, float]:
    """CPU seconds per wall second of an idle loop, without and with the watch."""
    async def idle() -> float:
        before = time.process_time()
        await asyncio.sleep(seconds)
        return (time.process_time() - before) / seconds

    bare = await idle()
    watch = LoopWatch()
    watch.start()
    try:
        watched = await idle()
    finally:
        await watch.stop()
    return bare, watched


async def _main(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.ERROR)
    article = build_article(args.kb).encode()
    with tempfile.TemporaryDirectory(prefix="concierge-bench-hotels-") as tmp:
        store = await HotelStore.open(f"sqlite:///{(Path(tmp) / 'hotels.db').as_posix()}")
        try:
            await seed(store, TODAY, days=30)
            print(f"hostile-mix: {args.uploads} uploads of a {len(article) / 1000:.0f} KB article from one user, "
                  f"/hotel turns from another until all are answered")
            rows = []
            for label, pooled in (("to_thread (before)", False), ("work pool (after)", True)):
                rows.append(await _mode(label, pooled, store, article, args.uploads, args.hotel_turns))
        finally:
            await store.close()
    for row in rows:
        outcomes = ", ".join(f"{count} {what}" for what, count in sorted(row["outcomes"].items()))
        print(f"  {row['label']:<20} worst loop lag {row['lag'] * 1000:6.1f} ms   /hotel alone {row['alone'] * 1000:5.0f} ms; "
              f"during the uploads median {row['median'] * 1000:5.0f} ms, p95 {row['p95'] * 1000:6.0f} ms, "
              f"max {row['max'] * 1000:6.0f} ms ({row['turns']} turns)   uploads: {outcomes} in {row['hostile_wall']:.1f} s")
    before, after = rows
    print(f"  with the pool: worst loop lag {before['lag'] * 1000:.0f} -> {after['lag'] * 1000:.0f} ms; slowest /hotel turn "
          f"{before['max']:.2f} -> {after['max']:.2f} s ({before['max'] / after['max']:.1f}x); "
          f"median {before['median'] * 1000:.0f} -> {after['median'] * 1000:.0f} ms")
    bare, watched = await _watch_cost(args.idle_seconds)
    print(f"  loop watch cost on an idle loop: {bare * 100:.2f}% of a core without, {watched * 100:.2f}% with "
          f"(+{(watched - bare) * 100:.2f} points)")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"  CPU used by child processes (linter, pool workers): {children.ru_utime + children.ru_stime:.1f} s")
    return 0


def main(argv: list[str]) -> Any:
    parser = argparse.ArgumentParser(prog="python -m bench hostile-mix")
    parser.add_argument("--uploads", type=int, default=6)
    parser.add_argument("--kb", type=int, default=190)
    parser.add_argument("--hotel-turns", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=3.0)
    return _main(parser.parse_args(argv))
