"""The small-talk agent's state: the conversation, with a bounded history."""

from __future__ import annotations

from typing import Annotated, TypedDict

from langchain_core.messages import AnyMessage

from bot.history import add_bounded_messages


class ChatState(TypedDict):
    messages: Annotated[list[AnyMessage], add_bounded_messages]
