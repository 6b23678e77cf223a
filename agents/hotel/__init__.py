"""/hotel: a ReAct travel assistant that searches a local hotel database and recommends hotels."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph.state import CompiledStateGraph

from agents.hotel import offline as _offline  # registers the offline model's hotel skill
from agents.hotel.context import ContextMode, current_turn_start
from agents.hotel.enrich import card
from agents.hotel.graph import status
from agents.hotel.state import new_turn
from bot.agent import AgentDefinition, AgentDeps, TurnInput
from bot.events import Final

__all__ = ["AGENT", "HotelAgent"]
del _offline


def today_in(timezone: str) -> date:
    try:
        return datetime.now(ZoneInfo(timezone)).date()
    except (ZoneInfoNotFoundError, ValueError):
        return datetime.now(ZoneInfo("UTC")).date()


class SeedOnce:
    """Seeds an empty store with the demo data on the first hotel request, not at start-up, so
    processes that never answer /hotel (other agents, CLI one-shots) don't pay for it."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._lock = asyncio.Lock()
        self._done = False

    async def __call__(self) -> None:
        if self._done:
            return
        async with self._lock:
            if self._done:
                return
            from agents.hotel.seed import seed

            status("Preparing the hotel database (first use)…")
            await seed(self.store)  # a no-op when another process seeded it meanwhile
            self._done = True


class HotelAgent(AgentDefinition):
    name = "hotel"
    command = "/hotel"
    summary = "find hotels: search by city, dates, budget and more, then ask follow-ups"
    usage = "/hotel Paris under $200 next weekend"
    intent_words = ("hotel", "stay", "room", "night", "accommodation", "hostel", "ホテル", "宿", "泊")

    def __init__(
        self,
        *,
        clock: Callable[[str], date] = today_in,
        context: ContextMode = "selective",
        store: Any = None,
        tool_records: bool = False,
    ) -> None:
        """`clock(timezone)` gives "today" for a turn; `store` is a HotelStore to use instead of
        opening one from the settings (the caller then closes it). `context="full"` and
        `tool_records=True` make the naive agent the token benchmark compares against."""
        self.clock = clock
        self.context: ContextMode = context
        self.tool_records = tool_records
        self.store = store
        self._opened: list[Any] = []

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        from agents.hotel.graph import build_graph

        store = self.store or deps.extra.get("hotel_store")
        prepare = None
        if store is None:
            from agents.hotel.store import HotelStore

            store = await HotelStore.open(deps.settings.resolved_database_url)  # creates the tables
            self._opened.append(store)
            if not await store.is_seeded():
                prepare = SeedOnce(store)
        return build_graph(store, deps.models, deps.settings, deps.checkpointer, context=self.context,
                           prepare=prepare, tool_records=self.tool_records)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        today = getattr(turn, "today", None) or self.clock(turn.timezone)
        turn_id = uuid.uuid4().hex[:12]
        tool_context = {
            "currency": (turn.currency or "USD").upper(),
            "locale": turn.locale,
            "timezone": turn.timezone,
            "today": today.isoformat(),
            "turn_id": turn_id,
        }
        return {
            "messages": [HumanMessage(content=turn.text)],
            "tool_context": tool_context,
            "metadata": {"current": new_turn(turn_id)},
        }

    def final(self, state: dict[str, Any]) -> Final:
        messages = state.get("messages") or []
        this_turn = messages[current_turn_start(messages):]
        text = next(
            (m.text for m in reversed(this_turn) if isinstance(m, AIMessage) and not m.tool_calls and m.text),
            "Sorry, I have no answer for that.",
        )
        recommended = ((state.get("metadata") or {}).get("current") or {}).get("recommended") or []
        return Final(text=text, cards=[card(h) for h in recommended], data={"hotels": recommended})

    async def close(self) -> None:
        opened, self._opened = self._opened, []
        for store in opened:
            await store.close()


AGENT = HotelAgent()
