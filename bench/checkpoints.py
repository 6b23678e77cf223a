"""Checkpoint growth: a 100-turn conversation of 1 KB messages through the runtime (bounded history
and pruning) side by side with a plain `add_messages` graph on the same saver, in one run."""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Annotated, Any, TypedDict, cast

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph

from bench._common import scratch_settings
from bot.agent import AgentDefinition, AgentDeps, TurnInput
from bot.conversation import ConversationKey
from bot.events import Final
from bot.history import add_bounded_messages
from bot.runtime import ConversationRuntime

KB = "x" * 1024


def reply(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [AIMessage(KB)]}


class BoundedState(TypedDict):
    messages: Annotated[list[AnyMessage], add_bounded_messages]


class PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def graph_for(state: type, saver: Any) -> CompiledStateGraph:
    builder: Any = StateGraph(state)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


class KilobyteAgent(AgentDefinition):
    name = "kb"
    command = "/kb"
    summary = "answers 1 KB"
    usage = "TEXT"

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        return graph_for(BoundedState, deps.checkpointer)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        return {"messages": [HumanMessage(turn.text)]}

    def final(self, state: dict[str, Any]) -> Final:
        return Final(text=str(state["messages"][-1].content)[:20])


def ratio(latencies: list[float]) -> float:
    return statistics.median(latencies[-10:]) / statistics.median(latencies[:10])


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench checkpoints")
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args(argv)

    settings = scratch_settings()
    ours: list[float] = []
    async with await ConversationRuntime.open(settings, agents=[KilobyteAgent()]) as runtime:
        key = ConversationKey.console("long")
        for _ in range(args.turns):
            start = time.perf_counter()
            async for _event in runtime.handle(key, TurnInput(text=KB, command="kb")):
                pass
            ours.append(time.perf_counter() - start)
        ours_bytes = await runtime.checkpoints.stored_bytes()

    plain: list[float] = []
    async with AsyncSqliteSaver.from_conn_string(str(settings.data_dir / "plain.db")) as saver:
        graph = graph_for(PlainState, saver)
        config = {"configurable": {"thread_id": "long"}}
        for _ in range(args.turns):
            start = time.perf_counter()
            await graph.ainvoke({"messages": [HumanMessage(KB)]}, cast(RunnableConfig, config))
            plain.append(time.perf_counter() - start)
        conn = saver.conn
        total = 0
        for sql in ("SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) FROM checkpoints", "SELECT SUM(LENGTH(value)) FROM writes"):
            cur = await conn.execute(sql)
            row = await cur.fetchone()
            total += int(row[0] or 0) if row else 0
        plain_bytes = total

    print(f"checkpoints benchmark: {args.turns} turns of 1 KB messages, SQLite")
    print(f"  {'':24}{'stored':>12}{'turn N / turn 1 latency':>28}")
    print(f"  {'bounded (runtime)':24}{ours_bytes / 1e6:>10.2f} MB{ratio(ours):>28.2f}")
    print(f"  {'plain add_messages':24}{plain_bytes / 1e6:>10.2f} MB{ratio(plain):>28.2f}")
    print(f"  storage ratio plain/bounded: {plain_bytes / max(1, ours_bytes):.1f}x   (target: bounded <= 2 MB, latency ratio <= 1.3)")
    print("  latency ratio = median of the last 10 turns / median of the first 10")
    return 0
