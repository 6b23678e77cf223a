"""The small-talk graph: one node that answers with the conversation so far.

    START → reply → END
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import SystemMessage
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from agents.chat.state import ChatState
from bot.agent import AgentDeps
from bot.history import BoundedStateGraph

PROMPTS = Path(__file__).parent / "prompts"


def system_prompt(deps: AgentDeps) -> str:
    """The system prompt, naming the commands this bot really has."""
    commands = ", ".join(f"`{c.slash}` ({c.description})" for c in deps.commands.agent_commands() if c.agent != "chat")
    return (PROMPTS / "system.md").read_text(encoding="utf-8").format(commands=commands or "none")


def build_graph(deps: AgentDeps) -> CompiledStateGraph:
    prompt = SystemMessage(system_prompt(deps))

    async def reply(state: ChatState) -> dict[str, Any]:
        answer = await deps.models.ainvoke(lambda m: m, [prompt, *state["messages"]])
        return {"messages": [answer]}

    builder = BoundedStateGraph(ChatState, deps.history_window)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=deps.checkpointer, name="chat")
