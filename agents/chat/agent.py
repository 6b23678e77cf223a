"""ChatAgent: small talk and questions about what the bot can do; it remembers the conversation."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.graph.state import CompiledStateGraph

from agents.chat.graph import build_graph
from agents.chat.offline import ChatSkill
from bot.agent import AgentDefinition, AgentDeps, TurnInput
from bot.commands import CommandOption
from bot.events import Final


class ChatAgent(AgentDefinition):
    name = "chat"
    command = "/chat"
    summary = "Small talk and questions about what I can do"
    usage = "what can you do?"
    summary_ja = "雑談と、できることについての質問"
    usage_ja = "何ができますか？"
    options = (CommandOption("message", "Say anything"),)
    fallback = True
    # One step a turn: its checkpoint is written once, as the run ends (a crashed turn runs again).
    durability = "exit"
    offline_skills = (ChatSkill(),)

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        return build_graph(deps)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        text = turn.text
        for file in turn.attachments:
            text += f"\n\n(attached {file.filename}:)\n{file.text()[:4000]}"
        return {"messages": [HumanMessage(text)]}

    def final(self, state: dict[str, Any]) -> Final:
        return Final(text=str(state["messages"][-1].content))


AGENT = ChatAgent()
