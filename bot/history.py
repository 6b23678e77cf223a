"""A bounded message history: `add_messages` plus a window, so checkpoints stay O(1) per turn.

LangGraph's checkpoint savers store the whole `messages` list at every step, so an unbounded list
makes storage grow quadratically with the conversation. Agents declare
`messages: Annotated[list[AnyMessage], add_bounded_messages]`; the window is cut only at a
HumanMessage so no tool call is ever separated from its result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.graph.message import add_messages

_window = 40


def set_history_window(size: int) -> None:
    global _window
    _window = max(4, size)


def history_window() -> int:
    return _window


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


def add_bounded_messages(left: Any, right: Any) -> list[AnyMessage]:
    merged = add_messages(left, right)
    return trim_to_window(merged, _window)  # type: ignore[arg-type]


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
