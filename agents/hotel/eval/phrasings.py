"""Scores the offline planner's hotel skill on agents/hotel/eval/phrasings.json: for each request,
the tool call it makes (or the question it asks) against the one a correct planner makes.

The request is what the graph would send: the real system prompt with today and the user's
currency, an earlier search summarised the way the tools summarise it, and the user's message."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from agents.hotel.context import memory_text, system_prompt
from agents.hotel.offline import HOTEL_TOOLS, HotelSkill
from agents.hotel.state import MemoryEntry
from agents.hotel.tools import SearchHotelsArgs, summary_params
from bot.offline.model import OfflineRequest

TABLE = Path(__file__).with_name("phrasings.json")


@dataclass(frozen=True)
class Outcome:
    case: dict[str, Any]
    made: str  # what the planner did, for the report
    problems: tuple[str, ...]

    @property
    def right(self) -> bool:
        return not self.problems


def load(path: Path = TABLE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def request_for(case: dict[str, Any], today: str, currency: str = "USD") -> OfflineRequest:
    system = system_prompt({"today": today, "currency": currency}, search_limit=1)
    previous = (case.get("previous") or {}).get("search")
    if previous:
        args = SearchHotelsArgs(**previous)
        entry = MemoryEntry(tool="search_hotels", summary=f"search_hotels({summary_params(args)}) → hotels found.",
                            params=args.model_dump(mode="json", exclude_none=True), hotel_ids=[], turn_id="earlier")
        system += "\n\n" + (memory_text([entry], "now") or "")
    tools = [{"type": "function", "function": {"name": name}} for name in sorted(HOTEL_TOOLS)]
    return OfflineRequest(messages=[SystemMessage(system), HumanMessage(case["text"])], tools=tools)


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        try:
            return abs(float(got) - float(expected)) < 0.01
        except (TypeError, ValueError):
            return False
    return expected == got


def score(case: dict[str, Any], today: str) -> Outcome:
    reply = HotelSkill().plan(request_for(case, today))
    assert isinstance(reply, AIMessage)
    expect = case["expect"]
    if not reply.tool_calls:
        made = f"asked: {reply.text}"
        if "ask" not in expect:
            return Outcome(case, made, (f"asked instead of calling {expect['tool']}",))
        missing = [word for word in expect["ask"] if word not in reply.text]
        return Outcome(case, made, tuple(f"the question does not name {w}" for w in missing))
    call = reply.tool_calls[0]
    made = f"{call['name']}({', '.join(f'{k}={v}' for k, v in call['args'].items())})"
    if "ask" in expect:
        return Outcome(case, made, ("searched instead of asking",))
    problems = []
    if call["name"] != expect["tool"]:
        problems.append(f"called {call['name']}, not {expect['tool']}")
    else:
        for key, value in expect.get("args", {}).items():
            if not _same(value, call["args"].get(key)):
                problems.append(f"{key}={call['args'].get(key)!r}, expected {value!r}")
        for key in expect.get("absent", []):
            if key in call["args"]:
                problems.append(f"{key} should not be set")
    return Outcome(case, made, tuple(problems))


def run(split: str | None = None, path: Path = TABLE) -> list[Outcome]:
    table = load(path)
    return [score(case, table["today"]) for case in table["cases"] if split in (None, case["split"])]
