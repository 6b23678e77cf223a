"""HotelAgent: the /hotel command's contract with the runtime — settings, seeding, the worker's
refresh job, the offline skill, and the turn's input and answer (hotel cards and their map)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph.state import CompiledStateGraph

from agents.hotel.context import ContextMode, current_turn_start
from agents.hotel.enrich import card
from agents.hotel.graph import build_graph, status
from agents.hotel.map import FILENAME as MAP_FILENAME
from agents.hotel.map import map_for, render_map
from agents.hotel.offline import HotelSkill
from agents.hotel.phrasebook import language_in
from agents.hotel.refresh import run_worker
from agents.hotel.seed import seed
from agents.hotel.settings import HotelSettings
from agents.hotel.state import new_turn
from agents.hotel.store import HotelStore
from agents.hotel.understand import compile_place_patterns
from bot.agent import AgentDefinition, AgentDeps, AgentEnv, OnFirstUse, TurnInput, WorkerJob
from bot.config import Settings
from bot.events import Attachment, Final
from bot.locale import currency_of, language_of


def today_in(timezone: str) -> date:
    try:
        return datetime.now(ZoneInfo(timezone)).date()
    except (ZoneInfoNotFoundError, ValueError):
        return datetime.now(ZoneInfo("UTC")).date()


async def seed_on_first_use(store: Any) -> None:
    status("Preparing the hotel database (first use)…")
    await seed(store)  # a no-op when another process seeded it meanwhile


class HotelAgent(AgentDefinition):
    name = "hotel"
    command = "/hotel"
    summary = "Find hotels by city, dates, budget and more, then ask follow-ups"
    usage = "Paris under $200 next weekend"
    summary_ja = "都市・日程・予算などでホテルを探し、続けて質問できます"
    usage_ja = "京都 来週末 2名 1泊2万円以下"
    intent_words = ("hotel", "stay", "room", "night", "accommodation", "hostel", "ホテル", "宿", "泊")
    narrates_tools = True  # "Searching hotels in Osaka…" / 「大阪のホテルを検索しています…」, not tool names
    settings_model = HotelSettings
    offline_skills = (HotelSkill(),)
    max_input_chars = 4_000  # a request, not a document: where, when, who, budget

    def __init__(
        self,
        *,
        clock: Callable[[str], date] = today_in,
        context: ContextMode = "selective",
        store: Any = None,
        tool_records: bool = False,
        settings: HotelSettings | None = None,
    ) -> None:
        """`clock(timezone)` gives "today" for a turn; `store` is a HotelStore to use instead of
        opening one from the settings (the caller then closes it); `settings` replaces the
        CONCIERGE_HOTEL_* variables. `context="full"` and `tool_records=True` make the naive agent
        the token benchmark compares against."""
        self.clock = clock
        self.context: ContextMode = context
        self.tool_records = tool_records
        self.store = store
        self.settings = settings
        self._opened: list[Any] = []

    def load_settings(self, settings: Settings | None = None) -> HotelSettings:
        return self.settings or super().load_settings(settings)

    async def seed(self, env: AgentEnv) -> str | None:
        store = await HotelStore.open(env.settings.resolved_database_url)
        try:
            await store.setup()
            written = await seed(store)
        finally:
            await store.close()
        return f"hotels written: {written}" if written else None

    def worker_jobs(self, env: AgentEnv) -> list[WorkerJob]:
        async def refresh(stop: asyncio.Event) -> None:
            await run_worker(env.settings, env.agent_settings, stop=stop)

        return [WorkerJob("hotel availability refresh", refresh)]

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        store = self.store or deps.extra.get("hotel_store")
        prepare = None
        if store is None:
            store = await HotelStore.open(deps.settings.resolved_database_url)  # creates the tables
            self._opened.append(store)
            if not await store.is_seeded():
                prepare = OnFirstUse(lambda: seed_on_first_use(store))
        hotel = deps.agent_settings or self.load_settings(deps.settings)
        # The offline planner's place patterns, compiled now off the event loop, not by the first request.
        await asyncio.to_thread(compile_place_patterns)
        return build_graph(deps, store, search_limit=hotel.search_limit, context=self.context, prepare=prepare,
                           tool_records=self.tool_records)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        today = getattr(turn, "today", None) or self.clock(turn.timezone)
        turn_id = uuid.uuid4().hex[:12]
        tool_context = {
            "currency": currency_of(turn.currency, turn.text),  # a Japanese request gets yen, not dollars
            "locale": turn.locale,
            "timezone": turn.timezone,
            "today": today.isoformat(),
            "turn_id": turn_id,
            "language": language_of(turn.text),  # the request's, not the platform's: Japanese in, Japanese out
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
        language = language_in(state.get("tool_context"))
        return Final(text=text, cards=[card(h, language) for h in recommended], data={"hotels": recommended})

    async def attachments(self, state: dict[str, Any]) -> list[Attachment]:
        """A map of the recommended hotels and the places asked about, drawn off the event loop
        (none when no hotel has coordinates)."""
        request = map_for(state)
        if request is None:
            return []
        png = await asyncio.to_thread(render_map, request)
        return [Attachment(filename=MAP_FILENAME, data=png, mime_type="image/png")]

    async def close(self) -> None:
        opened, self._opened = self._opened, []
        for store in opened:
            await store.close()


AGENT = HotelAgent()
