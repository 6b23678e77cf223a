"""The /hotel agent through the real OpenAI client against the fake server: tool calling, then
structured output; the per-turn search limit; enrichment of misspelled and invented names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.hotel.agent import HotelAgent
from agents.hotel.enrich import convert
from agents.hotel.settings import HotelSettings
from agents.hotel.store import HotelQuery, HotelStore
from agents.hotel.tools import TOOLS
from bot.agent import AgentDeps
from bot.config import Settings
from bot.llm import ModelProvider, openai_chat_model
from tests.fakes.openai_server import FakeOpenAI, Reply, count_tokens
from tests.hotel.conftest import TODAY, RecordingStore
from tests.hotel.test_agent import NEXT_WEEKEND, Session

PARIS = {"city": "Paris", "check_in": "2030-06-14", "check_out": "2030-06-16", "max_price": 200, "currency": "USD"}


async def open_session(store: Any, settings: Settings, hotel: HotelSettings | None = None) -> Session:
    agent = HotelAgent(clock=lambda tz: TODAY, store=store, settings=hotel)
    deps = AgentDeps(
        settings=settings,
        models=ModelProvider(openai_chat_model(settings, "gpt-4o-mini"), max_retries=0),
        checkpointer=InMemorySaver(),
        app_db=None,  # type: ignore[arg-type]
    )
    return Session(agent, await agent.build(deps), deps=deps)


@pytest.fixture
async def session(recording: RecordingStore, openai_settings: Settings) -> AsyncIterator[Session]:
    session = await open_session(recording, openai_settings)
    yield session
    await session.deps.models.aclose()


@pytest.fixture
async def paris_names(hotel_store: HotelStore) -> list[str]:
    """The hotels the Paris search returns, in the tool's order."""
    offers = await hotel_store.search(HotelQuery(
        city="Paris", check_in=NEXT_WEEKEND[0], check_out=NEXT_WEEKEND[1],
        max_price=convert(200, "USD", "EUR") * (1 - 1e-9),
    ))
    return [o.hotel.name for o in offers if o.available]


def tool_messages(request: Any) -> list[str]:
    return [m["content"] for m in request.messages if m.get("role") == "tool"]


def answer(*names: str, text: str = "Here are my picks.") -> Reply:
    return Reply.json({"text": text, "hotels": [{"name": n, "rating": "4.0", "price": "$150"} for n in names]})


async def test_tool_call_then_structured_output(
    session: Session, fake_openai: FakeOpenAI, paris_names: list[str]
) -> None:
    fake_openai.script(Reply.tool_calls([("search_hotels", PARIS)]), answer(*paris_names[:2], text="Two picks."))

    final = await session.say("Paris under $200 next weekend")

    assert len(fake_openai.requests) == 2
    calling, structured = fake_openai.requests
    assert {t["function"]["name"] for t in calling.tools or []} == set(TOOLS)
    assert calling.response_format is None
    assert "Today is 2030-06-03 (Monday)" in calling.messages[0]["content"]
    assert structured.response_format is not None and structured.response_format["type"] == "json_schema"
    assert structured.response_format["json_schema"]["name"] == "HotelAnswer"
    assert not structured.tools
    assert "hotels available in Paris for Jun 14–16, 2030" in tool_messages(structured)[0]
    assert final.text == "Two picks."
    assert [c.title for c in final.cards] == paris_names[:2]
    assert session.statuses[-1] == "Writing recommendations…"


async def test_two_searches_in_one_message_are_stopped_by_the_limit(
    session: Session, fake_openai: FakeOpenAI, recording: RecordingStore, paris_names: list[str]
) -> None:
    rome = {**PARIS, "city": "Rome"}
    fake_openai.script(
        Reply.tool_calls([("search_hotels", PARIS), ("search_hotels", rome)]), answer(paris_names[0])
    )

    final = await session.say("Paris or Rome under $200 next weekend")

    assert [q.city for q in recording.searches] == ["Paris"]
    assert len(fake_openai.requests) == 2  # the loop ended with the structured answer
    results = tool_messages(fake_openai.requests[1])
    assert "hotels available in Paris" in results[0]
    assert results[1].startswith("Not run: search_hotels is limited to 1 call(s) per turn")
    assert [c.title for c in final.cards] == paris_names[:1]


async def test_a_second_search_after_an_empty_one_is_stopped_and_the_loop_ends(
    session: Session, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(
        Reply.tool_calls([("search_hotels", {**PARIS, "max_price": 5})]),
        Reply.tool_calls([("search_hotels", {**PARIS, "max_price": 500})]),
        Reply.json({"text": "Nothing in Paris is that cheap.", "hotels": []}),
    )

    final = await session.say("Paris under $5 next weekend")

    assert len(fake_openai.requests) == 3
    assert fake_openai.requests[1].tools  # still tool mode: the first search found nothing
    assert fake_openai.requests[2].response_format is not None
    assert tool_messages(fake_openai.requests[2])[-1].startswith("Not run: search_hotels is limited")
    assert final.text == "Nothing in Paris is that cheap." and final.cards == []


async def test_the_search_limit_comes_from_settings(
    recording: RecordingStore, openai_settings: Settings, fake_openai: FakeOpenAI, paris_names: list[str]
) -> None:
    session = await open_session(recording, openai_settings, HotelSettings(CONCIERGE_HOTEL_SEARCH_LIMIT=2))
    fake_openai.script(
        Reply.tool_calls([("search_hotels", PARIS), ("search_hotels", {**PARIS, "city": "Rome"})]),
        answer(paris_names[0]),
    )

    try:
        await session.say("Paris or Rome under $200 next weekend")
    finally:
        await session.deps.models.aclose()

    assert [q.city for q in recording.searches] == ["Paris", "Rome"]


async def test_misspelled_names_are_enriched_with_the_right_hotels(
    session: Session, fake_openai: FakeOpenAI, hotel_store: HotelStore, paris_names: list[str]
) -> None:
    real = paris_names[:3]
    typo = real[2][:3] + real[2][4] + real[2][3] + real[2][5:]  # two letters swapped
    variants = [real[0].upper(), real[1].replace("ô", "o").replace("é", "e").lower() + " ", typo]
    fake_openai.script(Reply.tool_calls([("search_hotels", PARIS)]), answer(*variants))

    final = await session.say("Paris under $200 next weekend")

    assert [c.title for c in final.cards] == real
    for hotel in final.data["hotels"]:
        stored = (await hotel_store.get_hotels([hotel["id"]]))[0]
        assert stored.name == hotel["name"]
        assert hotel["thumbnail_url"] == stored.thumbnail_url
        assert (hotel["latitude"], hotel["longitude"]) == (stored.latitude, stored.longitude)
        assert hotel["map_url"].startswith("https://www.openstreetmap.org/")
        assert hotel["currency"] == "USD" and hotel["price"] <= 200


async def test_a_hallucinated_hotel_is_dropped(
    session: Session, fake_openai: FakeOpenAI, paris_names: list[str]
) -> None:
    fake_openai.script(
        Reply.tool_calls([("search_hotels", PARIS)]),
        answer("Le Grand Fantôme Palace", paris_names[0], "Hotel Paris"),
    )

    final = await session.say("Paris under $200 next weekend")

    assert [c.title for c in final.cards] == [paris_names[0]]
    assert [h["name"] for h in final.data["hotels"]] == [paris_names[0]]


async def test_a_follow_up_sends_a_summary_instead_of_the_earlier_results(
    session: Session, fake_openai: FakeOpenAI, recording: RecordingStore, paris_names: list[str]
) -> None:
    fake_openai.script(
        Reply.tool_calls([("search_hotels", PARIS)]), answer(*paris_names[:3]),
        Reply.tool_calls([("hotels_near_landmark", {"landmark": "Louvre", "city": "Paris"})]),
        answer(paris_names[1]),
    )
    await session.say("Paris under $200 next weekend")
    first_result = tool_messages(fake_openai.requests[1])[0]

    final = await session.say("which is closest to the Louvre?")

    follow_up = fake_openai.requests[2]
    sent = "\n".join(str(m.get("content") or "") for m in follow_up.messages)
    assert not tool_messages(follow_up)
    assert first_result not in sent
    assert "search_hotels(city=Paris, check_in=2030-06-14, check_out=2030-06-16" in sent
    assert "hotels found in Paris for Jun 14–16, 2030" in sent
    assert f"Shown to the user: 1. {paris_names[0]}" in sent
    # Turn 2 costs more than turn 1 by less than resending the results would.
    assert follow_up.prompt_tokens - fake_openai.requests[0].prompt_tokens < count_tokens(first_result)
    assert "among the hotels found" in tool_messages(fake_openai.requests[3])[0]
    assert len(recording.searches) == 1
    assert [c.title for c in final.cards] == [paris_names[1]]


async def test_an_answer_that_is_not_json_degrades_to_the_top_results(
    session: Session, fake_openai: FakeOpenAI, paris_names: list[str]
) -> None:
    fake_openai.script(Reply.tool_calls([("search_hotels", PARIS)]), Reply.text("Try the Latin Quarter."))

    final = await session.say("Paris under $200 next weekend")

    assert final.text.startswith(f"{len(paris_names)} hotels available in Paris")
    assert [c.title for c in final.cards] == paris_names[:3]


async def test_a_rating_on_a_ten_point_scale_is_rescaled(
    session: Session, fake_openai: FakeOpenAI, recording: RecordingStore
) -> None:
    fake_openai.script(
        Reply.tool_calls([("search_hotels", {**PARIS, "min_rating": 8.5, "max_price": None})]),
        Reply.json({"text": "Well rated.", "hotels": []}),
    )

    await session.say("Paris next weekend rated 8.5 or more")

    assert recording.searches[0].min_rating == 4.25
    assert "read on a 10-point scale" in tool_messages(fake_openai.requests[1])[0]


async def test_arguments_that_fail_validation_get_a_tool_message_not_a_crash(
    session: Session, fake_openai: FakeOpenAI, recording: RecordingStore
) -> None:
    fake_openai.script(
        Reply.tool_calls([("search_hotels", {"city": "Paris", "check_in": "next friday", "check_out": "2030-06-16"})]),
        Reply.text("Which dates exactly?"),
    )

    final = await session.say("Paris next weekend")

    assert recording.searches == []
    assert tool_messages(fake_openai.requests[1])[0].startswith("Invalid arguments for search_hotels: check_in")
    assert final.text == "Which dates exactly?"


async def test_an_answer_cut_off_at_the_output_limit_twice_degrades_to_the_top_results(
    session: Session, fake_openai: FakeOpenAI, paris_names: list[str]
) -> None:
    rambling = Reply.json({"text": "Paris is lovely. " * 3000, "hotels": []})
    fake_openai.script(Reply.tool_calls([("search_hotels", PARIS)]), rambling, rambling)

    final = await session.say("Paris under $200 next weekend")

    structured = fake_openai.requests[1:]
    assert [r.max_tokens for r in structured] == [1536, 3072]  # retried once with twice the limit
    assert all(r.reply is not None and r.reply.finish_reason == "length" for r in structured)
    assert [c.title for c in final.cards] == paris_names[:3]  # answered from the tool results
