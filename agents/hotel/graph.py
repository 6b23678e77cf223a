"""The /hotel ReAct graph: chatbot ⇄ tools, then finish (enrichment and bookkeeping).

    START → chatbot ─(tool calls)→ tools → collect → chatbot …
                    └─(answer)──→ finish → END

`tools` is LangGraph's ToolNode (made by bot.tools.tool_node: per-turn limits, retry then degrade);
it runs one AIMessage's calls in order, each seeing the results before it. `collect` then folds the
round's results (the ToolMessages' artifacts) into the metadata.

The chatbot runs in tool-calling mode until this turn has hotel results (or a tool limit was hit,
or the tool rounds ran out), then in structured-output mode, which returns a HotelAnswer."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from pydantic import ValidationError

from agents.hotel.context import ContextMode, build_prompt, current_turn_start
from agents.hotel.enrich import enrich, format_money
from agents.hotel.phrasebook import language_in, say
from agents.hotel.state import HotelAnswer, HotelPick, HotelState, TurnRecord
from agents.hotel.tools import (
    DEFAULT_LIMITS,
    TOOLS,
    current_turn,
    model_schema,
    round_metadata,
    shown_currency,
    this_round,
)
from bot.agent import AgentDeps
from bot.events import Status
from bot.faults import FaultClass, TurnFailed
from bot.history import BoundedStateGraph
from bot.llm import ModelProvider
from bot.tools import admit, tool_node

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 3  # tool rounds per turn before the model must answer with what it has
MEMORY_KEPT = 6  # tool-use summaries kept for later turns
RECOMMENDED_MAX = 3


def status(text: str) -> None:
    try:
        get_stream_writer()(Status(text=text))
    except RuntimeError:  # called outside a graph run (a node under test)
        pass


_turn = current_turn


class HotelNodes:
    """The graph's nodes. Each takes the state and returns a partial update."""

    def __init__(
        self,
        store: Any,
        models: ModelProvider,
        *,
        search_limit: int = 1,
        tool_retries: int = 1,
        context: ContextMode = "selective",
        prepare: Callable[[], Awaitable[None]] | None = None,
        tool_records: bool = False,
    ) -> None:
        self.models = models
        self.context = context
        self.search_limit = search_limit
        self.limits = {**DEFAULT_LIMITS, "search_hotels": search_limit}
        # `prepare` makes the store ready (seeds it) before the first tool runs; `tool_records`
        # hands the model whole records (the naive baseline).
        tools = [spec.as_tool(store, prepare=prepare, full_records=tool_records) for spec in TOOLS.values()]
        self.schemas = [model_schema(tool) for tool in tools]
        self.tools = tool_node(tools, limits=self.limits, retries=tool_retries, used=self.calls_made, sequential=True)

    @staticmethod
    def calls_made(state: HotelState) -> dict[str, int]:
        """Tool calls made this turn before the current round, by tool name."""
        return dict(_turn(state).get("calls") or {})

    # --- chatbot ------------------------------------------------------------------------
    def answer_mode(self, state: HotelState) -> bool:
        """Structured output once this turn has hotel results; tool calling before."""
        turn = _turn(state)
        return bool(turn.get("hotel_ids")) or bool(turn.get("limit_hit")) or turn.get("rounds", 0) >= MAX_TOOL_ROUNDS

    async def chatbot(self, state: HotelState) -> dict[str, Any]:
        answer = self.answer_mode(state)
        prompt = build_prompt(state, search_limit=self.search_limit, answer=answer, mode=self.context)
        if not answer:
            reply = await self.models.ainvoke(lambda m: m.bind_tools(self.schemas), prompt)
            return {"messages": [reply]}
        status(say("writing", language_in(state.get("tool_context"))))
        try:
            result = await self.models.ainvoke(
                lambda m: m.with_structured_output(HotelAnswer, include_raw=True), prompt,
                config={"tags": ["nostream"]}, purpose="structured",
            )
        except TurnFailed as exc:
            # A reply that is not the JSON asked for fails inside the client's parser, and one cut
            # off at the output limit (after one retry with a higher limit) cannot be parsed; the
            # tool results are still good, so answer with them. Other failures end the turn.
            if not isinstance(exc.__cause__, ValueError) and exc.fault is not FaultClass.TRUNCATED:
                raise
            log.warning("structured answer unusable (%s): answering from the tool results", exc.fault or exc.__cause__)
            result = None
        parsed = self._parsed(result, state)
        turn = _turn(state)
        turn["answer"] = parsed.model_dump()
        return {"messages": [AIMessage(content=parsed.text)], "metadata": {"current": turn}}

    @staticmethod
    def _parsed(result: Any, state: HotelState) -> HotelAnswer:
        if isinstance(result, HotelAnswer):
            return result
        if isinstance(result, dict) and "parsed" in result:
            if isinstance(result["parsed"], HotelAnswer):
                return result["parsed"]
            log.warning("structured answer did not parse: %s", result.get("parsing_error"))
            raw = result.get("raw")
            text = raw.text if isinstance(raw, BaseMessage) else ""
            if text and not text.lstrip().startswith("{"):
                return HotelAnswer(text=text)
        elif isinstance(result, dict):
            try:
                return HotelAnswer.model_validate(result)
            except ValidationError:
                pass
        return fallback_answer(state)

    # --- tools -------------------------------------------------------------------------------
    # `self.tools` (the ToolNode) runs the calls; `collect` records what they found.
    async def collect(self, state: HotelState) -> dict[str, Any]:
        """Fold this round's tool results into the metadata and count the round's calls."""
        last, _ = this_round(state.get("messages") or [])
        folded = round_metadata(state)
        turn: TurnRecord = folded["current"]
        calls = self.calls_made(state)
        admission = admit(last.tool_calls if last else [], self.tools.tools_by_name, self.limits, calls)
        for name, count in admission.counted.items():
            calls[name] = calls.get(name, 0) + count
        if admission.refused:
            turn["limit_hit"] = True
        turn["calls"], turn["rounds"] = calls, turn.get("rounds", 0) + 1
        return {"metadata": {"current": turn, "hotels": folded["hotels"], "memory": folded["memory"]}}

    # --- finish -------------------------------------------------------------------------
    async def finish(self, state: HotelState) -> dict[str, Any]:
        """Enrich the answer's hotels, remember what was shown, trim metadata and the tool traffic."""
        metadata = state.get("metadata") or {}
        turn = _turn(state)
        hotels = dict(metadata.get("hotels") or {})
        memory = list(metadata.get("memory") or [])
        update: dict[str, Any] = {}
        recommended: list[dict[str, Any]] = []
        answer = turn.get("answer")
        if answer:
            candidates = [hotels[i] for i in turn.get("hotel_ids") or [] if i in hotels]
            currency = shown_currency(state.get("tool_context") or {}, {"memory": memory})
            recommended = enrich(answer.get("hotels") or [], candidates, currency, RECOMMENDED_MAX)
            if recommended:
                update["last_recommended"] = recommended
                memory = _mark_shown(memory, turn.get("turn_id", ""), recommended)
        turn["recommended"] = recommended
        memory = memory[-MEMORY_KEPT:]
        keep = set(turn.get("hotel_ids") or [])
        for entry in memory:
            keep.update(entry.get("hotel_ids") or [])
        keep.update(h["id"] for h in update.get("last_recommended", metadata.get("last_recommended") or []))
        update.update(current=turn, memory=memory, hotels={i: h for i, h in hotels.items() if i in keep})
        result: dict[str, Any] = {"metadata": update}
        if self.context == "selective":
            result["messages"] = _tool_traffic_removed(state.get("messages") or [])
        return result

    @staticmethod
    def route(state: HotelState) -> str:
        messages = state.get("messages") or []
        if messages and isinstance(messages[-1], AIMessage) and messages[-1].tool_calls:
            return "tools"
        return "finish"


def fallback_answer(state: HotelState) -> HotelAnswer:
    """An answer from this turn's tool results alone: their first line and top three hotels."""
    messages = state.get("messages") or []
    results = [m for m in messages[current_turn_start(messages):] if isinstance(m, ToolMessage)]
    turn = _turn(state)
    hotels = (state.get("metadata") or {}).get("hotels") or {}
    top = [hotels[i] for i in (turn.get("hotel_ids") or [])[:RECOMMENDED_MAX] if i in hotels]
    if not results:
        return HotelAnswer(text="Sorry, I could not put an answer together. Please try again.")
    head = next((m.text.split("\n", 1)[0] for m in reversed(results) if m.status != "error"), results[-1].text)
    if top:
        head += " Top matches: " + ", ".join(h["name"] for h in top) + "."
    return HotelAnswer(text=head, hotels=[HotelPick(name=h["name"]) for h in top])


def _mark_shown(memory: list[Any], turn_id: str, recommended: list[dict[str, Any]]) -> list[Any]:
    """Record on this turn's tool summaries which hotels the user was shown, in order."""
    ids = {h["id"] for h in recommended}
    out = []
    for entry in memory:
        if entry.get("turn_id") == turn_id and ids & set(entry.get("hotel_ids") or []):
            entry = {
                **entry,
                "shown": [h["name"] for h in recommended],
                "shown_prices": [
                    format_money(h["price"], h["currency"]) + "/night" if h.get("price") is not None else ""
                    for h in recommended
                ],
            }
        out.append(entry)
    return out


def _tool_traffic_removed(messages: Sequence[BaseMessage]) -> list[RemoveMessage]:
    """This turn's tool calls and results leave the history once answered: later turns see the
    summary in metadata instead, and the checkpoint stays small."""
    start = current_turn_start(messages)
    return [
        RemoveMessage(id=m.id)
        for m in messages[start:]
        if m.id and (isinstance(m, ToolMessage) or (isinstance(m, AIMessage) and m.tool_calls))
    ]


def build_graph(
    deps: AgentDeps,
    store: Any,
    *,
    search_limit: int = 1,
    context: ContextMode = "selective",
    prepare: Callable[[], Awaitable[None]] | None = None,
    tool_records: bool = False,
) -> CompiledStateGraph:
    """The compiled /hotel graph over `store`. `search_limit` caps search_hotels calls per turn
    (the other tools' caps are DEFAULT_LIMITS); a failing tool is retried CONCIERGE_TOOL_RETRIES
    times. `prepare` runs before a tool first uses the store. `context` and `tool_records` exist to
    measure the design against the naive one: "full" replays the whole history, `tool_records`
    puts whole records in tool messages."""
    nodes = HotelNodes(store, deps.models, search_limit=search_limit, tool_retries=deps.settings.tool_retries,
                       context=context, prepare=prepare, tool_records=tool_records)
    builder = BoundedStateGraph(HotelState, deps.history_window)
    builder.add_node("chatbot", nodes.chatbot)
    builder.add_node("tools", nodes.tools)
    builder.add_node("collect", nodes.collect)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "chatbot")
    builder.add_conditional_edges("chatbot", nodes.route, {"tools": "tools", "finish": "finish"})
    builder.add_edge("tools", "collect")
    builder.add_edge("collect", "chatbot")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=deps.checkpointer, name="hotel")
