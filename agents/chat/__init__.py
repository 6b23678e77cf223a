"""Small talk: the agent for text no other agent claims; it remembers the conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from bot.agent import AgentDefinition, AgentDeps, TurnInput
from bot.events import Final
from bot.history import add_bounded_messages

PROMPT = (Path(__file__).parent / "prompts" / "system.md").read_text(encoding="utf-8")


class ChatState(TypedDict):
    messages: Annotated[list[AnyMessage], add_bounded_messages]


class ChatAgent(AgentDefinition):
    name = "chat"
    command = "/chat"
    summary = "small talk and questions about what I can do"
    usage = "/chat MESSAGE"

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        async def reply(state: ChatState) -> dict[str, Any]:
            answer = await deps.models.ainvoke(lambda m: m, [SystemMessage(PROMPT), *state["messages"]])
            return {"messages": [answer]}

        builder = StateGraph(ChatState)
        builder.add_node("reply", reply)
        builder.add_edge(START, "reply")
        builder.add_edge("reply", END)
        return builder.compile(checkpointer=deps.checkpointer)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        text = turn.text
        for file in turn.attachments:
            text += f"\n\n(attached {file.filename}:)\n{file.text()[:4000]}"
        return {"messages": [HumanMessage(text)]}

    def final(self, state: dict[str, Any]) -> Final:
        return Final(text=str(state["messages"][-1].content))


AGENT = ChatAgent()
