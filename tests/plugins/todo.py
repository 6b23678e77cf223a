"""An agent that lives outside the project's packages, loaded as a plugin
(CONCIERGE_AGENT_PLUGINS=tests.plugins.todo:TodoAgent): a to-do list that remembers items."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from bot.agent import AgentDefinition, AgentDeps, TurnInput
from bot.events import Final


class TodoState(TypedDict):
    items: Annotated[list[str], operator.add]


class TodoAgent(AgentDefinition):
    name = "todo"
    command = "/todo"
    summary = "Keep a to-do list"
    usage = "buy milk"
    intent_words = ("to-do",)

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        builder = StateGraph(TodoState)
        builder.add_node("remember", lambda state: {})
        builder.add_edge(START, "remember")
        builder.add_edge("remember", END)
        return builder.compile(checkpointer=deps.checkpointer)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        return {"items": [turn.text]}

    def final(self, state: dict[str, Any]) -> Final:
        return Final(text="To do: " + "; ".join(state["items"]), data={"items": state["items"]})
