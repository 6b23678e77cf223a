"""Prompt tokens of a scripted 5-turn /hotel session: selective context versus naive full history.

`python -m bench hotel-tokens` runs the same conversation three times through the real OpenAI
client against the fake server, which counts the prompt tokens of every request:

- naive: every message replayed each call, tool messages carrying the whole records (the hotels
  with descriptions, amenities, images, coordinates), as an agent without a metadata layer does;
- full history: every message replayed, but tool messages are the short answers;
- selective: earlier turns are their dialogue plus one summary line per tool use; only this turn's
  tool results are sent in full (the design).

The model's replies are scripted (the same tool calls and picks in every run), so only the context
differs. Prints each total, the per-turn figures and the saving of selective over naive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from agents.hotel.agent import HotelAgent
from agents.hotel.context import ContextMode
from agents.hotel.seed import seed
from agents.hotel.store import HotelStore
from bot.agent import AgentDeps, TurnInput
from bot.config import load_settings
from bot.llm import ModelProvider, openai_chat_model
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply

TODAY = date(2030, 6, 3)  # a Monday
STAY = {"check_in": "2030-06-14", "check_out": "2030-06-16"}
SECOND_SHOWN = "$second"  # replaced by the second hotel the previous answer recommended
TURNS: list[tuple[str, str, dict[str, Any]]] = [
    ("Paris under $200 next weekend", "search_hotels",
     {"city": "Paris", **STAY, "max_price": 200, "currency": "USD"}),
    ("cheaper ones?", "search_hotels",
     {"city": "Paris", **STAY, "max_price": 150, "currency": "USD", "sort": "price"}),
    ("which is closest to the Louvre?", "hotels_near_landmark", {"landmark": "Louvre", "city": "Paris"}),
    ("tell me more about the second one", "hotel_details", {"names": [SECOND_SHOWN]}),
    ("what about Rome?", "search_hotels", {"city": "Rome", **STAY, "max_price": 200, "currency": "USD"}),
]
TARGET = 0.70
_LISTED = re.compile(r"^\d+\. (.+?) — ", re.MULTILINE)


@dataclass
class ScriptedModel:
    """Answers like a model would: each turn's planned tool call, then up to three of the hotels the
    turn's last tool result lists (or the one a details result describes)."""

    last_picks: list[str] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> Reply:
        if request.response_format is not None:
            return self.answer(request)
        user = request.last_user_message
        _, tool, args = next(t for t in TURNS if t[0] == user)
        if SECOND_SHOWN in json.dumps(args):
            args = {"names": [self.last_picks[1]]}
        return Reply.tool_calls([(tool, args)])

    def answer(self, request: RecordedRequest) -> Reply:
        results = [m for m in request.messages if m.get("role") == "tool"]
        text = str(results[-1].get("content") or "") if results else ""
        names = _LISTED.findall(text)[:3] or [text.split(" — ", 1)[0]]
        self.last_picks = names
        return Reply.json({
            "text": f"I recommend {', '.join(names)}: well rated and within your budget.",
            "hotels": [{"name": n, "rating": "4.0", "price": "$150"} for n in names],
        })


@dataclass
class SessionTokens:
    label: str
    per_turn: list[int]
    requests: int
    cards: list[int]

    @property
    def total(self) -> int:
        return sum(self.per_turn)


async def run_session(store: HotelStore, data_dir: Path, label: str, context: ContextMode,
                      tool_records: bool) -> SessionTokens:
    async with FakeOpenAI() as server:
        model = ScriptedModel()
        server.responder = model
        settings = load_settings(
            CONCIERGE_DATA_DIR=data_dir, openai_api_key="test", openai_base_url=server.base_url,
            CONCIERGE_LLM="openai", _env_file=None,
        )
        agent = HotelAgent(clock=lambda tz: TODAY, store=store, context=context, tool_records=tool_records)
        models = ModelProvider(openai_chat_model(settings, settings.model))
        deps = AgentDeps(settings=settings, models=models, checkpointer=InMemorySaver(), app_db=None)  # type: ignore[arg-type]
        graph = await agent.build(deps)
        config: RunnableConfig = {"configurable": {"thread_id": label}, "recursion_limit": 25}
        per_turn: list[int] = []
        cards: list[int] = []
        try:
            for text, _, _ in TURNS:
                before = server.total_prompt_tokens
                state = await graph.ainvoke(agent.turn_input(TurnInput(text=text)), config)
                per_turn.append(server.total_prompt_tokens - before)
                cards.append(len(agent.final(state).cards))
        finally:
            await models.aclose()
        return SessionTokens(label, per_turn, len(server.requests), cards)


async def measure(data_dir: Path, database_url: str | None = None) -> tuple[SessionTokens, ...]:
    """The three runs; `database_url` is a store already seeded from TODAY, else one is made."""
    store = await HotelStore.open(database_url or f"sqlite:///{(data_dir / 'hotels.db').as_posix()}")
    try:
        await seed(store, TODAY, days=30)  # a no-op on a seeded store
        naive = await run_session(store, data_dir, "naive", "full", True)
        history = await run_session(store, data_dir, "history", "full", False)
        selective = await run_session(store, data_dir, "selective", "selective", False)
    finally:
        await store.close()
    return naive, history, selective


def saving(selective: SessionTokens, naive: SessionTokens) -> float:
    return 1 - selective.total / naive.total


def report(naive: SessionTokens, history: SessionTokens, selective: SessionTokens) -> str:
    rows = [
        ("naive: full history, whole records in tool messages", naive),
        ("full history, short tool answers", history),
        ("selective context (summaries of earlier turns)", selective),
    ]
    lines = [f"hotel-tokens: prompt tokens over a scripted {len(TURNS)}-turn /hotel session "
             f"({selective.requests} model calls each), counted by the fake OpenAI server", ""]
    width = max(len(label) for label, _ in rows)
    lines.append(f"  {'':{width}}  {'total':>7}   per turn")
    for label, run in rows:
        lines.append(f"  {label:{width}}  {run.total:>7}   {' '.join(f'{t:>5}' for t in run.per_turn)}")
    lines += [
        "",
        f"  selective / naive = {selective.total / naive.total:.3f}: "
        f"{saving(selective, naive):.1%} fewer prompt tokens (target ≥ {TARGET:.0%})",
        f"  selective / full history = {selective.total / history.total:.3f}: "
        f"{saving(selective, history):.1%} fewer",
        "  hotel cards per turn: " + (
            " ".join(map(str, selective.cards)) + " in every run"
            if naive.cards == history.cards == selective.cards
            else " / ".join(" ".join(map(str, r.cards)) for _, r in rows) + " (runs differ!)"
        ),
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench hotel-tokens", description=__doc__.split("\n")[0])
    parser.parse_args(argv)
    # langchain-openai's structured-output path trips a harmless pydantic serializer warning.
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings")
    with tempfile.TemporaryDirectory(prefix="hotel-tokens-") as tmp:
        naive, history, selective = asyncio.run(measure(Path(tmp)))
    print(report(naive, history, selective))
    if saving(selective, naive) < TARGET:
        print(f"  below target: {saving(selective, naive):.1%} < {TARGET:.0%}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
