"""The /hotel ReAct graph: chatbot ⇄ tools, then finish (enrichment and bookkeeping).

    START → chatbot ─(tool calls)→ tools → chatbot …
                    └─(answer)──→ finish → END

The chatbot runs in tool-calling mode until this turn has hotel results (or a tool limit was hit,
or the tool rounds ran out), then in structured-output mode, which returns a HotelAnswer."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, ValidationError

from agents.hotel.context import ContextMode, build_prompt, current_turn_start
from agents.hotel.enrich import enrich, format_money
from agents.hotel.state import HotelAnswer, HotelPick, HotelState, TurnRecord, new_turn
from agents.hotel.tools import DEFAULT_LIMITS, TOOLS, HotelTool, ToolResult, problem, user_currency
from bot.config import Settings
from bot.events import Status
from bot.faults import TurnFailed
from bot.llm import ModelProvider

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 3  # tool rounds per turn before the model must answer with what it has
MEMORY_KEPT = 6  # tool-use summaries kept for later turns
RECOMMENDED_MAX = 3


def status(text: str) -> None:
    try:
        get_stream_writer()(Status(text=text))
    except RuntimeError:  # called outside a graph run (a node under test)
        pass


def _turn(state: HotelState) -> TurnRecord:
    metadata = state.get("metadata") or {}
    current = metadata.get("current")
    if current:
        return TurnRecord(**current)  # type: ignore[typeddict-item]
    return new_turn((state.get("tool_context") or {}).get("turn_id", ""))


class HotelNodes:
    """The graph's nodes. Each takes the state and returns a partial update."""

    def __init__(
        self,
        store: Any,
        models: ModelProvider,
        settings: Settings,
        *,
        context: ContextMode = "selective",
        prepare: Callable[[], Awaitable[None]] | None = None,
        tool_records: bool = False,
    ) -> None:
        self.store = store
        self.tool_records = tool_records  # hand the model whole records (the naive baseline)
        self.prepare = prepare  # makes the store ready (seeds it) before the first tool runs
        self.models = models
        self.context = context
        self.search_limit = settings.hotel_search_limit
        self.limits = {**DEFAULT_LIMITS, "search_hotels": settings.hotel_search_limit}
        self.retries = settings.tool_retries
        self.schemas = [tool.schema() for tool in TOOLS.values()]

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
        status("Writing recommendations…")
        try:
            result = await self.models.ainvoke(
                lambda m: m.with_structured_output(HotelAnswer, include_raw=True), prompt,
                config={"tags": ["nostream"]},
            )
        except TurnFailed as exc:
            # A reply that is not the JSON asked for fails inside the client's parser; the tool
            # results are still good, so answer with them. Other failures end the turn as usual.
            if not isinstance(exc.__cause__, ValueError):
                raise
            log.warning("structured answer was not valid JSON: %s", exc.__cause__)
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

    # --- tools --------------------------------------------------------------------------
    async def tools(self, state: HotelState) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        metadata = dict(state.get("metadata") or {})
        tool_context = dict(state.get("tool_context") or {})
        turn = _turn(state)
        calls = dict(turn.get("calls") or {})
        hotel_ids = list(turn.get("hotel_ids") or [])
        hotels = dict(metadata.get("hotels") or {})
        memory = list(metadata.get("memory") or [])
        replies: list[ToolMessage] = []
        if self.prepare is not None:
            await self.prepare()
        for call in last.tool_calls:
            name, call_id = call["name"], str(call["id"])
            tool = TOOLS.get(name)
            if tool is None:
                replies.append(ToolMessage(f"There is no tool named {name!r}.", tool_call_id=call_id, name=name,
                                           status="error"))
                continue
            limit = self.limits.get(name)
            if limit is not None and calls.get(name, 0) >= limit:
                turn["limit_hit"] = True
                replies.append(ToolMessage(
                    f"Not run: {name} is limited to {limit} call(s) per turn and that is used up. "
                    "Answer now with the results you already have.",
                    tool_call_id=call_id, name=name, status="error",
                ))
                continue
            try:
                args = tool.args.model_validate(call["args"])
            except ValidationError as exc:
                errors = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
                replies.append(ToolMessage(f"Invalid arguments for {name}: {errors}", tool_call_id=call_id,
                                           name=name, status="error"))
                continue
            calls[name] = calls.get(name, 0) + 1
            status(tool.starting(args))
            view = {**metadata, "current": {**turn, "hotel_ids": hotel_ids}, "hotels": hotels, "memory": memory}
            result = await self._run(tool, args, tool_context, view)
            if result.status:
                status(result.status)
            replies.append(ToolMessage(
                result.for_model(full_records=self.tool_records), tool_call_id=call_id, name=name,
                status="success" if result.ok else "error",
            ))
            for hotel in result.hotels:
                hotels[hotel["id"]] = hotel  # type: ignore[assignment]
                if hotel["id"] not in hotel_ids:
                    hotel_ids.append(hotel["id"])
            if result.memory:
                memory.append({**result.memory, "turn_id": turn.get("turn_id", "")})
        turn["calls"], turn["hotel_ids"], turn["rounds"] = calls, hotel_ids, turn.get("rounds", 0) + 1
        return {"messages": replies, "metadata": {"current": turn, "hotels": hotels, "memory": memory}}

    async def _run(self, tool: HotelTool, args: BaseModel, tool_context: dict[str, Any],
                   metadata: dict[str, Any]) -> ToolResult:
        """Run a tool with hidden data injected by parameter name; retry, then degrade."""
        available = {"store": self.store, "tool_context": tool_context, "metadata": metadata}
        wanted = inspect.signature(tool.run).parameters
        injected = {name: value for name, value in available.items() if name in wanted}
        for attempt in range(self.retries + 1):
            try:
                return await tool.run(args, **injected)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("tool %s failed (attempt %d)", tool.name, attempt + 1, exc_info=True)
                if attempt < self.retries:
                    await asyncio.sleep(0.05 * 2**attempt)
        status(f"{tool.name.replace('_', ' ')} is unavailable right now; answering with what I have.")
        return problem(f"{tool.name} failed and returned no result. Tell the user the hotel data is "
                       "temporarily unavailable and answer with what you already know.")

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
            currency = user_currency(state.get("tool_context") or {})
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
    store: Any,
    models: ModelProvider,
    settings: Settings,
    checkpointer: Any,
    *,
    context: ContextMode = "selective",
    prepare: Callable[[], Awaitable[None]] | None = None,
    tool_records: bool = False,
) -> CompiledStateGraph:
    """`context` and `tool_records` exist to measure the design against the naive one: "full"
    replays the whole history, `tool_records` puts whole records in tool messages."""
    nodes = HotelNodes(store, models, settings, context=context, prepare=prepare, tool_records=tool_records)
    builder = StateGraph(HotelState)
    builder.add_node("chatbot", nodes.chatbot)
    builder.add_node("tools", nodes.tools)
    builder.add_node("finish", nodes.finish)
    builder.add_edge(START, "chatbot")
    builder.add_conditional_edges("chatbot", nodes.route, {"tools": "tools", "finish": "finish"})
    builder.add_edge("tools", "chatbot")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="hotel")
