"""Per-turn orchestration overhead: a full runtime turn (lock, lifecycle writes, graph, checkpoints)
versus calling the same offline model directly, measured in one run."""

from __future__ import annotations

import argparse
import statistics
import time

from langchain_core.messages import HumanMessage, SystemMessage

from agents.chat.agent import ChatAgent
from agents.chat.graph import PROMPTS
from bench._common import describe, scratch_settings
from bot.agent import TurnInput
from bot.conversation import ConversationKey
from bot.events import Final
from bot.offline import OfflineChatModel
from bot.runtime import ConversationRuntime


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench overhead")
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args(argv)

    model = OfflineChatModel()
    prompt = (PROMPTS / "system.md").read_text(encoding="utf-8")  # as the agent sends it, near enough
    direct: list[float] = []
    for i in range(args.turns):
        start = time.perf_counter()
        await model.ainvoke([SystemMessage(prompt), HumanMessage(f"hello number {i}")])
        direct.append(time.perf_counter() - start)

    settings = scratch_settings()
    turns: list[float] = []
    async with await ConversationRuntime.open(settings, agents=[ChatAgent()]) as runtime:
        key = ConversationKey.console("bench")
        for i in range(args.turns):
            start = time.perf_counter()
            last = None
            async for event in runtime.handle(key, TurnInput(text=f"hello number {i}", command="chat")):
                last = event
            turns.append(time.perf_counter() - start)
            assert isinstance(last, Final)

    overhead = [t - statistics.median(direct) for t in turns]
    print(f"overhead benchmark: {args.turns} turns, offline model, SQLite in {settings.data_dir}")
    print(f"  direct model call        {describe(direct)}")
    print(f"  full runtime turn        {describe(turns)}")
    print(f"  orchestration overhead   {describe(overhead)}")
    print(f"  ratio turn/direct (median): {statistics.median(turns) / statistics.median(direct):.1f}x")
    return 0
