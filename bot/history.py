"""A bounded message history: `add_messages` plus a window, so checkpoints stay O(1) per turn.

LangGraph's checkpoint savers store the whole `messages` list at every step, so an unbounded list
makes storage grow quadratically with the conversation. Agents declare
`messages: Annotated[list[AnyMessage], add_bounded_messages]` and build their graph with
`BoundedStateGraph(State, deps.history_window)`, so each agent keeps its own window; the window is
cut only at a HumanMessage so no tool call is ever separated from its result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypedDict, get_type_hints

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.graph import StateGraph
from langgraph.graph.message import add_messages

DEFAULT_WINDOW = 40

def trim_to_window(messages: Sequence[AnyMessage], window: int) -> list[AnyMessage]:
    """The newest messages that fit `window`, starting at a HumanMessage. The current turn is kept
    whole even when it alone is longer than the window."""
    if len(messages) <= window:
        return list(messages)
    start = len(messages) - window
    for i in range(start, len(messages)):
        if isinstance(messages[i], HumanMessage):
            return list(messages[i:])
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return list(messages[i:])
    return list(messages[start:])


def bounded_messages(window: int) -> Callable[[Any, Any], list[AnyMessage]]:
    """`add_messages`, then the newest `window` messages (see trim_to_window)."""
    window = max(4, window)

    def add(left: Any, right: Any) -> list[AnyMessage]:
        return trim_to_window(add_messages(left, right), window)  # type: ignore[arg-type]

    add.window = window  # type: ignore[attr-defined]
    return add


add_bounded_messages = bounded_messages(DEFAULT_WINDOW)


def windowed(state: type, window: int) -> type:
    """`state` (a TypedDict whose `messages` use a bounded reducer) with a window of `window`
    messages: the reducer is part of the state schema, so each agent compiles its own."""
    hints = get_type_hints(state, include_extras=True)
    current = getattr(hints["messages"], "__metadata__", ())
    if any(getattr(r, "window", None) == window for r in current):
        return state
    base = hints["messages"].__origin__
    hints["messages"] = Annotated[base, bounded_messages(window)]
    return TypedDict(state.__name__, hints, total=getattr(state, "__total__", True))  # type: ignore[operator]


def dangling_tool_calls(messages: Sequence[AnyMessage]) -> list[dict[str, Any]]:
    """Tool calls with no ToolMessage answering them (what a crash mid-tool leaves behind)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    dangling: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, AIMessage):
            dangling.extend(dict(c) for c in message.tool_calls if c.get("id") not in answered)
    return dangling


def close_dangling(messages: Sequence[AnyMessage]) -> list[ToolMessage]:
    """ToolMessages that close every dangling call, so the history is valid for the model again."""
    return [
        ToolMessage(
            content="This tool call was interrupted (the bot restarted or the turn was stopped) and has no result.",
            tool_call_id=str(call["id"]),
            name=call.get("name"),
            status="error",
        )
        for call in dangling_tool_calls(messages)
    ]


class BoundedStateGraph(StateGraph):
    """A StateGraph over `windowed(state, window)`. Nodes and routers annotated with the base
    `state` (as agents write them) read the same windowed channels: LangGraph registers a schema
    once, so the base state is registered as the windowed one up front."""

    def __init__(self, state: type, window: int, **kwargs: Any) -> None:
        super().__init__(windowed(state, window), **kwargs)
        self.schemas[state] = self.schemas[self.state_schema]
