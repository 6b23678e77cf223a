"""Small real agents for runtime tests: a tool-calling ReAct loop and a confirmation graph."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import interrupt

from bot.agent import AgentDefinition, AgentDeps, BadInput, TurnInput
from bot.events import Action, Card, Final, Status
from bot.history import add_bounded_messages
from bot.offline.model import OfflineRequest, tool_call
from bot.tools import tool_node


async def _no_sleep(_: float) -> None:
    return None


class EchoState(TypedDict):
    messages: Annotated[list[AnyMessage], add_bounded_messages]


TOOL_DELAY = {"seconds": float(os.environ.get("ECHO_TOOL_DELAY", "0"))}
TOOL_FAILURES = {"remaining": 0}


@tool
async def lookup(topic: str) -> str:
    """Look up a topic in the notebook."""
    writer = get_stream_writer()
    writer(Status(text=f"Looking up {topic}…"))
    if TOOL_DELAY["seconds"]:
        await asyncio.sleep(TOOL_DELAY["seconds"])
    if TOOL_FAILURES["remaining"]:
        TOOL_FAILURES["remaining"] -= 1
        raise ConnectionError("notebook service down")
    return f"Notes about {topic}: nothing special."


class _LookupSkill:
    """Offline behaviour for the echo agent: 'look up X' → a lookup tool call, then a summary."""

    def respond(self, request: OfflineRequest) -> AIMessage | None:
        if "lookup" not in request.tool_names:
            return None
        text = request.last_human
        if request.tool_results:
            result = request.tool_results[-1]
            if result.status == "error":
                return AIMessage(content="The notebook is unavailable right now, so I can't look that up.")
            return AIMessage(content=f"Done. {result.content}")
        if text.lower().startswith("look up "):
            return AIMessage(content="", tool_calls=[tool_call("lookup", {"topic": text[8:].strip()})])
        return AIMessage(content=f"echo: {text}")


class EchoAgent(AgentDefinition):
    name = "echo"
    command = "/echo"
    summary = "echoes, or looks things up"
    usage = "TEXT"
    intent_words = ("echo", "look up")
    offline_skills = (_LookupSkill(),)

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        async def chatbot(state: EchoState) -> dict[str, Any]:
            messages = [SystemMessage("You echo."), *state["messages"]]
            reply = await deps.models.ainvoke(lambda m: m.bind_tools([lookup]), messages)
            return {"messages": [reply]}

        def route(state: EchoState) -> str:
            last = state["messages"][-1]
            return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

        builder = StateGraph(EchoState)
        builder.add_node("chatbot", chatbot)
        builder.add_node("tools", tool_node([lookup], retries=deps.settings.tool_retries, sleep=_no_sleep))
        builder.add_edge(START, "chatbot")
        builder.add_conditional_edges("chatbot", route, ["tools", END])
        builder.add_edge("tools", "chatbot")
        return builder.compile(checkpointer=deps.checkpointer)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        if turn.text == "bad":
            raise BadInput("That input is refused.")
        return {"messages": [HumanMessage(turn.text)]}

    def final(self, state: dict[str, Any]) -> Final:
        return Final(text=str(state["messages"][-1].content), data={"messages": len(state["messages"])})


class ConfirmState(TypedDict):
    request: str
    decision: str


class ConfirmAgent(AgentDefinition):
    """Asks for confirmation with buttons, then reports the decision."""

    name = "confirm"
    command = "/confirm"
    summary = "asks before doing something"
    usage = "WHAT"

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        def ask(state: ConfirmState) -> dict[str, Any]:
            decision = interrupt({"question": f"Really {state['request']}?"})
            return {"decision": str(decision)}

        builder = StateGraph(ConfirmState)
        builder.add_node("ask", ask)
        builder.add_edge(START, "ask")
        builder.add_edge("ask", END)
        return builder.compile(checkpointer=deps.checkpointer)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        return {"request": turn.text, "decision": ""}

    def resume_value(self, turn: TurnInput, pending: Any) -> str | None:
        return turn.text if turn.text in ("confirm", "cancel") else None

    def interrupted(self, value: Any) -> Final:
        return Final(
            text=value["question"],
            cards=[Card(title=value["question"], actions=[
                Action(label="Confirm", value="confirm", style="primary"),
                Action(label="Cancel", value="cancel", style="danger"),
            ])],
            data={"awaiting_input": True},
        )

    def final(self, state: dict[str, Any]) -> Final:
        return Final(text=f"Decision: {state['decision']}", data={"decision": state["decision"]})
