"""Selective context: what the model is sent each call. Earlier turns become their dialogue plus a
one-line summary per tool use ("15 hotels found in Paris for Dec 11–13, all available"); only the
current turn's tool results are sent in full."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from string import Template
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from agents.hotel.state import HotelState, MemoryEntry

PROMPTS = Path(__file__).parent / "prompts"
ContextMode = Literal["selective", "full"]
EARLIER_TURNS = 6  # dialogue turns replayed before the current one


@functools.cache
def load_prompt(name: str) -> str:
    return (PROMPTS / f"{name}.md").read_text(encoding="utf-8").strip()


def render(name: str, **values: Any) -> str:
    return Template(load_prompt(name)).safe_substitute({k: str(v) for k, v in values.items()})


def system_prompt(tool_context: dict[str, Any], search_limit: int) -> str:
    today = date.fromisoformat(tool_context["today"])
    return render(
        "system",
        today=today.isoformat(),
        weekday=today.strftime("%A"),
        currency=tool_context.get("currency", "USD"),
        locale=tool_context.get("locale", "en"),
        timezone=tool_context.get("timezone", "UTC"),
        search_limit=search_limit,
        answer_language=("Japanese (the user writes in Japanese)" if tool_context.get("language") == "ja"
                         else "the language of the user's message (English when unsure)"),
    )


def current_turn_start(messages: Sequence[BaseMessage]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i
    return 0


def earlier_dialogue(messages: Sequence[BaseMessage], turns: int = EARLIER_TURNS) -> list[BaseMessage]:
    """The user's messages and the bot's final replies of earlier turns, without tool traffic."""
    dialogue: list[BaseMessage] = [
        m for m in messages
        if isinstance(m, HumanMessage) or (isinstance(m, AIMessage) and not m.tool_calls and m.text)
    ]
    starts = [i for i, m in enumerate(dialogue) if isinstance(m, HumanMessage)]
    if len(starts) > turns:
        dialogue = dialogue[starts[-turns]:]
    return dialogue


def memory_line(entry: MemoryEntry) -> str:
    line = f"- {entry.get('summary', '')}"
    shown = entry.get("shown") or []
    prices = entry.get("shown_prices") or []
    if shown:
        items = [f"{i}. {name}" + (f" ({prices[i - 1]})" if i <= len(prices) and prices[i - 1] else "")
                 for i, name in enumerate(shown, 1)]
        line += " Shown to the user: " + "; ".join(items) + "."
    return line


def memory_text(memory: Sequence[MemoryEntry], turn_id: str | None) -> str | None:
    entries = [memory_line(e) for e in memory if e.get("turn_id") != turn_id]
    if not entries:
        return None
    return render("memory", entries="\n".join(entries))


def build_prompt(
    state: HotelState,
    *,
    search_limit: int,
    answer: bool,
    mode: ContextMode = "selective",
) -> list[BaseMessage]:
    """The messages for one model call. `answer` adds the structured-answer instructions.

    There is exactly one system message and it comes first: the memory of earlier tool use and the
    answer instructions are folded into it, because the chat templates of many open models
    (Qwen, Gemma, Mistral…) reject a system message anywhere else (tests/test_message_order.py)."""
    messages = list(state.get("messages") or [])
    tool_context = dict(state.get("tool_context") or {})
    tool_context.setdefault("today", date.today().isoformat())
    system = [system_prompt(tool_context, search_limit)]
    body: list[BaseMessage] = []
    if mode == "full":
        body += messages
    else:
        start = current_turn_start(messages)
        body += earlier_dialogue(messages[:start])
        metadata = state.get("metadata") or {}
        memory = memory_text(metadata.get("memory") or [], str(tool_context.get("turn_id") or ""))
        if memory is not None:
            system.append(memory)
        body += messages[start:]
    if answer:
        system.append(load_prompt("answer"))
    return [SystemMessage("\n\n".join(system)), *body]
