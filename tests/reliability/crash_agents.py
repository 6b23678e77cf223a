"""Agents for the crash and shutdown tests, loaded as plugins by a bot in its own process
(CONCIERGE_AGENT_PLUGINS=tests.reliability.crash_agents:StepsAgent,...). Each turn runs two steps:
`prepare` notes the request in `steps.log` in the data dir, then `finish` waits while a `hold` file
exists there (the test's way to stop a turn mid-flight) and answers. The log tells how often each
step ran."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from bot.agent import AgentDefinition, AgentDeps, TurnInput
from bot.events import Final

PREPARED = "prepared-and-checkpointed"  # in the checkpoint once `prepare` has run


class StepsState(TypedDict):
    request: str
    prepared: str
    answer: str


def log_step(data_dir: Path, line: str) -> None:
    with (data_dir / "steps.log").open("a", encoding="utf-8") as log:
        log.write(line + "\n")


def steps_run(data_dir: Path) -> list[str]:
    path = data_dir / "steps.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


class StepsAgent(AgentDefinition):
    """A turn that may continue from its checkpoint after a restart."""

    name = "steps"
    command = "/steps"
    summary = "two steps, the second held while a hold file exists"
    usage = "WHAT"

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        data_dir = deps.settings.data_dir
        agent = self.name

        async def prepare(state: StepsState) -> dict[str, Any]:
            log_step(data_dir, f"{agent} prepare {state['request']}")
            return {"prepared": PREPARED}

        async def finish(state: StepsState) -> dict[str, Any]:
            log_step(data_dir, f"{agent} finish-started {state['request']}")
            while (data_dir / "hold").exists():  # noqa: ASYNC110 - the test process controls the file
                await asyncio.sleep(0.05)
            log_step(data_dir, f"{agent} finish {state['request']}")
            return {"answer": f"Done with {state['request']}."}

        builder = StateGraph(StepsState)
        builder.add_node("prepare", prepare)
        builder.add_node("finish", finish)
        builder.add_edge(START, "prepare")
        builder.add_edge("prepare", "finish")
        builder.add_edge("finish", END)
        return builder.compile(checkpointer=deps.checkpointer)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        return {"request": turn.text, "prepared": "", "answer": ""}

    def final(self, state: dict[str, Any]) -> Final:
        return Final(text=state["answer"])


class OrderAgent(StepsAgent):
    """The same steps, but they change things outside the checkpoint: never repeated on a restart."""

    name = "order"
    command = "/order"
    summary = "two steps that must not be repeated"
    resumable = False
