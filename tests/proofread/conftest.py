"""Shared helpers for the /proofread tests: offline deps, a graph per test, one-call turns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.proofread.agent import ProofreadAgent
from bot.agent import AgentDeps, IncomingFile, TurnInput
from bot.config import load_settings
from bot.events import Final, Status
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def offline_deps(**extra: Any) -> AgentDeps:
    return AgentDeps(
        settings=load_settings(CONCIERGE_LLM="offline", _env_file=None),
        models=ModelProvider(OfflineChatModel(), offline=True),
        checkpointer=InMemorySaver(),
        app_db=None,  # type: ignore[arg-type]
        extra=extra,
    )


@dataclass
class Conversation:
    """One thread of the proofread graph, driven turn by turn like the runtime does."""

    agent: ProofreadAgent
    graph: Any
    thread_id: str = "test-thread"
    statuses: list[str] = field(default_factory=list)

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.thread_id}}

    async def send(self, text: str = "", *, files: tuple[IncomingFile, ...] = ()) -> Final:
        graph_input = self.agent.turn_input(TurnInput(text=text, attachments=files))
        self.statuses = []
        async for mode, chunk in self.graph.astream(
            graph_input, self.config, stream_mode=["messages", "updates", "custom"]
        ):
            if mode == "custom" and isinstance(chunk, Status):
                self.statuses.append(chunk.text)
        return self.agent.final(await self.state())

    async def state(self) -> dict[str, Any]:
        return dict((await self.graph.aget_state(self.config)).values)


async def start_conversation(deps: AgentDeps | None = None, agent: ProofreadAgent | None = None) -> Conversation:
    agent = agent or ProofreadAgent()
    graph = await agent.build(deps or offline_deps())
    return Conversation(agent=agent, graph=graph)


@pytest.fixture
async def conversation() -> Conversation:
    return await start_conversation()
