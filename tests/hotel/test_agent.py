"""The /hotel agent on the offline model: one search with the user's filters, real cards, follow-ups
that use earlier results, status events, and helpful answers to bad input."""

from __future__ import annotations

import functools
import json
import threading
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from agents.hotel import understand
from agents.hotel.agent import HotelAgent
from agents.hotel.context import build_prompt
from agents.hotel.enrich import convert
from agents.hotel.graph import MEMORY_KEPT
from agents.hotel.offline import HotelSkill
from agents.hotel.store import HotelStore
from agents.hotel.tools import TOOLS
from bot.agent import AgentDeps, TurnInput
from bot.config import Settings, load_settings
from bot.conversation import ConversationKey
from bot.events import Final, Status, ToolFinished, ToolStarted
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel
from bot.runtime import ConversationRuntime
from tests.hotel.conftest import TODAY, RecordingStore

NEXT_WEEKEND = (date(2030, 6, 14), date(2030, 6, 16))  # TODAY is Monday 2030-06-03


@pytest.fixture
def offline_settings(tmp_path: Path) -> Settings:
    return load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", _env_file=None)


class Session:
    """One conversation thread with the agent's compiled graph."""

    def __init__(self, agent: HotelAgent, graph: Any, thread: str = "t", deps: Any = None) -> None:
        self.agent = agent
        self.deps = deps
        self.graph = graph
        self.config = {"configurable": {"thread_id": thread}, "recursion_limit": 25}
        self.statuses: list[str] = []
        self.tool_calls: list[dict[str, Any]] = []

    async def say(self, text: str, currency: str = "USD") -> Final:
        self.statuses, self.tool_calls = [], []
        update = self.agent.turn_input(TurnInput(text=text, currency=currency))
        async for mode, chunk in self.graph.astream(update, self.config, stream_mode=["updates", "custom"]):
            if mode == "custom" and isinstance(chunk, Status):
                self.statuses.append(chunk.text)
            elif mode == "updates":
                for node_update in chunk.values():
                    for message in (node_update or {}).get("messages", []):
                        if isinstance(message, AIMessage):
                            self.tool_calls.extend(message.tool_calls)
        return self.agent.final(await self.state())

    async def state(self) -> dict[str, Any]:
        return dict((await self.graph.aget_state(self.config)).values)


@pytest.fixture
async def session(recording: RecordingStore, offline_settings: Settings) -> Session:
    agent = HotelAgent(clock=lambda tz: TODAY, store=recording)
    deps = AgentDeps(
        settings=offline_settings,
        models=ModelProvider(OfflineChatModel(skills=(HotelSkill(),)), offline=True),
        checkpointer=InMemorySaver(),
        app_db=None,  # type: ignore[arg-type]
    )
    return Session(agent, await agent.build(deps))


# --- the first turn --------------------------------------------------------------------------


async def test_paris_under_200_next_weekend_makes_one_search_with_those_filters(
    session: Session, recording: RecordingStore
) -> None:
    await session.say("Paris under $200 next weekend")

    searches = [c for c in session.tool_calls if c["name"] == "search_hotels"]
    assert len(searches) == 1
    args = searches[0]["args"]
    assert args["city"] == "Paris"
    assert (args["check_in"], args["check_out"]) == tuple(d.isoformat() for d in NEXT_WEEKEND)
    assert args["max_price"] == 200 and args["currency"] == "USD"
    assert len(recording.searches) == 1
    query = recording.searches[0]
    assert (query.city, query.check_in, query.check_out) == ("Paris", *NEXT_WEEKEND)
    assert query.max_price == pytest.approx(convert(200, "USD", "EUR"))


async def test_cards_are_real_hotels_available_on_those_dates_at_or_under_the_price(
    session: Session, hotel_store: HotelStore
) -> None:
    final = await session.say("Paris under $200 next weekend")

    assert 1 <= len(final.cards) <= 3
    assert len(final.data["hotels"]) == len(final.cards)
    for card, hotel in zip(final.cards, final.data["hotels"], strict=True):
        offer = await hotel_store.offer(hotel["id"], *NEXT_WEEKEND)
        assert offer is not None and offer.available
        assert offer.hotel.name == card.title == hotel["name"]
        assert offer.hotel.city == "Paris"
        assert hotel["price"] <= 200
        assert convert(offer.avg_nightly_price, offer.hotel.currency, "USD") <= 200
        assert card.image_url == offer.hotel.thumbnail_url
        assert (card.lat, card.lon) == (offer.hotel.latitude, offer.hotel.longitude)
        assert card.url and "openstreetmap.org" in card.url
        assert card.fields["Price"].startswith("$") and card.fields["Price"].endswith(")")
        assert card.fields["Rating"].startswith(f"{offer.hotel.guest_rating:.1f}/5")
        assert offer.hotel.district in card.subtitle
    assert "Paris" in final.text


async def test_status_events_while_tools_run(session: Session) -> None:
    await session.say("Paris under $200 next weekend")

    assert session.statuses[0] == "Searching hotels in Paris…"
    assert session.statuses[1].startswith("Found ") and session.statuses[1].endswith(" hotels…")
    assert session.statuses[-1] == "Writing recommendations…"


async def test_history_keeps_dialogue_and_metadata_keeps_the_results(session: Session) -> None:
    await session.say("Paris under $200 next weekend")
    state = await session.state()

    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage]  # tool traffic left
    metadata = state["metadata"]
    assert metadata["memory"][0]["summary"].startswith("search_hotels(city=Paris")
    assert "hotels found in Paris for Jun 14–16, 2030" in metadata["memory"][0]["summary"]
    assert set(metadata["memory"][0]["hotel_ids"]) <= set(metadata["hotels"])
    assert state["tool_context"]["today"] == TODAY.isoformat()


async def test_a_search_and_a_landmark_in_one_message_rank_that_searchs_results(
    session: Session, recording: RecordingStore
) -> None:
    """The calls of one model message run in order, each seeing the results before it."""
    final = await session.say("Paris near the Louvre next weekend")

    assert [c["name"] for c in session.tool_calls] == ["search_hotels", "hotels_near_landmark"]
    assert session.statuses[0] == "Searching hotels in Paris…" and session.statuses[1].startswith("Found ")
    assert session.statuses[2] == "Measuring distances to Louvre Museum…"
    assert len(recording.searches) == 1  # the ranking used the search's results, not a new query
    assert "among the hotels found" in final.text
    # what the search found is said too (it was the ranking alone: no dates, no count)
    assert final.text.split(" Hotels closest to ")[0].endswith("sorted by rating.") and " available in Paris for " in final.text
    metadata = (await session.state())["metadata"]
    assert metadata["current"]["calls"] == {"search_hotels": 1, "hotels_near_landmark": 1}
    assert [m["tool"] for m in metadata["memory"]] == ["search_hotels", "hotels_near_landmark"]
    assert final.cards and {h["id"] for h in final.data["hotels"]} <= set(metadata["memory"][0]["hotel_ids"])


class DownStore(RecordingStore):
    """A store whose searches fail."""

    async def search(self, q: Any) -> Any:
        self.searches.append(q)
        raise ConnectionError("hotel database unreachable")


async def test_a_failing_tool_is_retried_once_then_the_user_is_told(
    hotel_store: HotelStore, offline_settings: Settings
) -> None:
    store = DownStore(hotel_store)
    agent = HotelAgent(clock=lambda tz: TODAY, store=store)
    deps = AgentDeps(settings=offline_settings, models=ModelProvider(OfflineChatModel(skills=(HotelSkill(),)), offline=True),
                     checkpointer=InMemorySaver(), app_db=None)  # type: ignore[arg-type]
    session = Session(agent, await agent.build(deps))

    final = await session.say("Paris under $200 next weekend")

    assert len(store.searches) == 2  # one call, one retry
    assert "search hotels is unavailable right now; answering with what I have." in session.statuses
    assert "temporarily unavailable" in final.text and final.cards == []
    assert (await session.state())["metadata"]["current"]["calls"] == {"search_hotels": 1}


async def test_the_place_patterns_are_compiled_off_the_event_loop_before_the_first_request(
    recording: RecordingStore, offline_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled_in: list[threading.Thread] = []
    compile_sights = understand._sight_patterns.__wrapped__

    @functools.cache
    def sight_patterns() -> Any:
        compiled_in.append(threading.current_thread())
        return compile_sights()

    monkeypatch.setattr(understand, "_sight_patterns", sight_patterns)
    agent = HotelAgent(clock=lambda tz: TODAY, store=recording)
    deps = AgentDeps(settings=offline_settings, models=ModelProvider(OfflineChatModel(skills=(HotelSkill(),)), offline=True),
                     checkpointer=InMemorySaver(), app_db=None)  # type: ignore[arg-type]
    session = Session(agent, await agent.build(deps))
    assert len(compiled_in) == 1 and compiled_in[0] is not threading.current_thread()  # not the loop's

    await session.say("京都 来週末 清水寺の近く 2名")

    assert len(compiled_in) == 1 and session.tool_calls  # the request used them, compiled already


# --- follow-ups ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "then", "point"),
    [("Kyoto next weekend for 2", "which one is closest to Kyoto Station?", "Kyoto Station"),
     ("Kyoto next weekend for 2", "which is nearest to Gion?", "Gion"),
     ("京都 来週末 2名", "祇園に一番近いのは？", "Gion")],
)
async def test_follow_up_closest_to_a_district_ranks_the_earlier_results(
    session: Session, recording: RecordingStore, first: str, then: str, point: str
) -> None:
    """It was a new search inside the district, sorted by rating ("Kyoto Station" names Kyoto too)."""
    await session.say(first)
    earlier = set((await session.state())["metadata"]["memory"][0]["hotel_ids"])
    final = await session.say(then)
    assert [(c["name"], c["args"]["landmark"]) for c in session.tool_calls] == [("hotels_near_landmark", point)]
    assert len(recording.searches) == 1 and {h["id"] for h in final.data["hotels"]} <= earlier
    from agents.hotel.geo import CITIES, find_landmark, haversine_km

    district = CITIES["kyoto"].district(point)
    assert district is not None and find_landmark(point, CITIES["kyoto"]) == (CITIES["kyoto"], district.point)
    km = [haversine_km(h["latitude"], h["longitude"], district.lat, district.lon) for h in final.data["hotels"]]
    assert km == sorted(km)


async def test_follow_up_closest_to_a_landmark_ranks_the_earlier_results(
    session: Session, recording: RecordingStore
) -> None:
    await session.say("Paris under $200 next weekend")
    earlier = set((await session.state())["metadata"]["memory"][0]["hotel_ids"])

    final = await session.say("which is closest to the Louvre?")

    assert [c["name"] for c in session.tool_calls] == ["hotels_near_landmark"]
    assert len(recording.searches) == 1  # no new search: the earlier results were used
    assert final.cards and {h["id"] for h in final.data["hotels"]} <= earlier
    assert "Louvre" in final.text
    from agents.hotel.geo import CITIES, haversine_km

    louvre = CITIES["paris"].landmark("Louvre")
    assert louvre is not None
    distances = [haversine_km(h["latitude"], h["longitude"], louvre.lat, louvre.lon) for h in final.data["hotels"]]
    assert distances == sorted(distances)


async def test_follow_up_tell_me_more_about_the_second_one(session: Session) -> None:
    first = await session.say("Paris under $200 next weekend")
    assert len(first.cards) >= 2

    final = await session.say("tell me more about the second one")

    assert [c["name"] for c in session.tool_calls] == ["hotel_details"]
    assert session.tool_calls[0]["args"]["names"] == [first.cards[1].title]
    assert [c.title for c in final.cards] == [first.cards[1].title]
    assert "Address:" in final.text


async def test_follow_up_cheaper_ones_searches_below_what_was_shown(
    session: Session, recording: RecordingStore
) -> None:
    first = await session.say("Paris under $200 next weekend")
    cheapest_shown = min(h["price"] for h in first.data["hotels"])

    final = await session.say("cheaper ones?")

    searches = [c for c in session.tool_calls if c["name"] == "search_hotels"]
    assert len(searches) == 1
    args = searches[0]["args"]
    assert args["city"] == "Paris"
    assert (args["check_in"], args["check_out"]) == tuple(d.isoformat() for d in NEXT_WEEKEND)
    assert args["sort"] == "price"
    assert all(h["price"] < cheapest_shown for h in final.data["hotels"])


async def test_follow_up_with_a_new_city_keeps_the_dates(session: Session) -> None:
    await session.say("Paris under $200 next weekend")

    final = await session.say("what about Rome?")

    args = session.tool_calls[0]["args"]
    assert args["city"] == "Rome"
    assert (args["check_in"], args["check_out"]) == tuple(d.isoformat() for d in NEXT_WEEKEND)
    assert final.cards and all(h["city"] == "Rome" for h in final.data["hotels"])


async def test_later_turns_see_a_summary_not_the_earlier_lists(session: Session) -> None:
    first = await session.say("Paris under $200 next weekend")
    await session.say("what about Rome?")
    state = await session.state()
    prompt = build_prompt(state, search_limit=1, answer=False)  # type: ignore[arg-type]
    text = "\n".join(str(m.content) for m in prompt)

    assert not any(isinstance(m, ToolMessage) for m in prompt)
    assert "search_hotels(city=Paris" in text and "hotels found in Paris for Jun 14–16, 2030" in text
    assert f"Shown to the user: 1. {first.cards[0].title}" in text
    assert "1. " + first.cards[0].title + " — " not in text  # the full result line is not resent


async def test_metadata_stays_bounded_over_a_long_conversation(session: Session) -> None:
    for city in ["Paris", "Rome", "London", "Tokyo", "Berlin", "Lisbon", "Prague", "Vienna"]:
        await session.say(f"{city} next weekend")
    state = await session.state()

    assert len(state["metadata"]["memory"]) == MEMORY_KEPT
    assert len(json.dumps(state["metadata"])) < 60_000
    assert not any(isinstance(m, ToolMessage) for m in state["messages"])


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pariss next weekend", "Did you mean: Paris?"),
        ("Paris 2020-01-05 for 2 nights", "is in the past"),
        ("Paris from Jun 20 to Jun 18", "must be after the check-in date"),
        ("hello there", "Which city"),
        ("Paris for 40 nights from Jun 20", "limited to 30 nights"),
        ("Paris from Jun 20 for 2 nights for 30 people", "Guests must be between 1 and 12."),
        ("Paris from Jun 20 for 999999999 nights", "limited to 30 nights"),  # a stay past the calendar's end
    ],
)
async def test_bad_input_gets_a_helpful_answer(session: Session, text: str, expected: str) -> None:
    final = await session.say(text)

    assert expected in final.text
    assert final.cards == []
    assert "ask the user" not in final.text.lower()  # the instruction to a model is not retold


@pytest.mark.parametrize("text", ["Paris in 99999999999 days", "Paris for 99999999999 nights"])
async def test_a_number_no_count_or_date_can_be_is_left_out(session: Session, text: str) -> None:
    # Before, a date past year 9999 raised OverflowError, told as "the language model rejected the
    # request" (tests/hotel/test_long_messages.py gives a count int() refuses). Now the search runs
    # on the defaults, which the answer states.
    final = await session.say(text)

    assert "1 night" in final.text
    assert final.cards


async def test_an_absurd_price_says_what_the_cheapest_costs(session: Session) -> None:
    final = await session.say("Paris under $5 next weekend")

    assert "No hotels available in Paris" in final.text
    assert "The cheapest available is" in final.text
    assert final.cards == []


async def test_amenities_district_and_rating_filters_reach_the_store(
    session: Session, recording: RecordingStore
) -> None:
    final = await session.say("Paris in Le Marais with a gym rated 4+ from Jun 20 for 2 nights")

    query = recording.searches[0]
    assert query.district == "Le Marais"
    assert query.amenities == ["gym"]
    assert query.min_rating == 4.0
    assert (query.check_in, query.check_out) == (date(2030, 6, 20), date(2030, 6, 22))
    for hotel in final.data["hotels"]:
        assert hotel["district"] == "Le Marais" and hotel["rating"] >= 4.0


async def test_prices_show_in_the_users_currency(session: Session) -> None:
    final = await session.say("Tokyo tomorrow", currency="EUR")

    assert final.cards
    for card, hotel in zip(final.cards, final.data["hotels"], strict=True):
        assert hotel["currency"] == "EUR" and hotel["hotel_currency"] == "JPY"
        assert card.fields["Price"].startswith("€") and "(¥" in card.fields["Price"]
        assert hotel["check_in"] == (TODAY + timedelta(days=1)).isoformat()


# --- contract --------------------------------------------------------------------------------


def test_tool_context_is_hidden_from_every_tool_schema() -> None:
    for tool in TOOLS.values():
        schema = json.dumps(tool.schema())
        for hidden in ("tool_context", "metadata", "store", "today", "locale", "timezone", "turn_id"):
            assert f'"{hidden}"' not in schema


def test_turn_input_carries_the_hidden_runtime_data() -> None:
    agent = HotelAgent(clock=lambda tz: date(2030, 1, 2) if tz == "Asia/Tokyo" else date(2030, 1, 1))
    update = agent.turn_input(TurnInput(text="Kyoto", currency="jpy", locale="ja", timezone="Asia/Tokyo"))

    assert update["messages"][0].content == "Kyoto"
    context = update["tool_context"]
    assert context["currency"] == "JPY" and context["locale"] == "ja" and context["timezone"] == "Asia/Tokyo"
    assert context["today"] == "2030-01-02" and context["turn_id"]
    assert update["metadata"]["current"]["hotel_ids"] == []


async def test_through_the_runtime_events_and_cards(
    hotel_store: HotelStore, offline_settings: Settings
) -> None:
    agent = HotelAgent(clock=lambda tz: TODAY, store=hotel_store)
    models = ModelProvider(OfflineChatModel(skills=(HotelSkill(),)), offline=True)
    async with await ConversationRuntime.open(offline_settings, agents=[agent], models=models) as runtime:
        key = ConversationKey.console("hotel-test")
        events = [e async for e in runtime.handle(key, TurnInput.typed("/hotel Paris under $200 next weekend"))]
        follow_up = [e async for e in runtime.handle(key, TurnInput.typed("tell me more about the first one"))]

    kinds = [type(e) for e in events]
    assert ToolStarted in kinds and ToolFinished in kinds
    assert Status(text="Searching hotels in Paris…") in events
    final = events[-1]
    assert isinstance(final, Final) and 1 <= len(final.cards) <= 3
    last = follow_up[-1]
    assert isinstance(last, Final) and [c.title for c in last.cards] == [final.cards[0].title]


async def test_follow_up_naming_a_district_narrows_the_same_search(
    session: Session, recording: RecordingStore
) -> None:
    await session.say("Paris under $200 next weekend")

    final = await session.say("what about the Marais?")

    query = recording.searches[-1]
    assert (query.city, query.district) == ("Paris", "Le Marais")
    assert (query.check_in, query.check_out) == NEXT_WEEKEND
    assert all(h["district"] == "Le Marais" for h in final.data["hotels"])


async def test_thanks_is_not_another_search(session: Session, recording: RecordingStore) -> None:
    await session.say("Paris under $200 next weekend")

    final = await session.say("thanks!")

    assert session.tool_calls == [] and len(recording.searches) == 1
    assert final.cards == [] and final.text.startswith("You're welcome!")  # it was "Anything else? …"


@pytest.mark.parametrize("text", ["Paris near the city centre next weekend", "パリ 中心部に近いホテル 来週末"])
async def test_hotels_closest_to_the_city_centre(session: Session, text: str) -> None:
    """"near the city centre" was no landmark: a plain search, “centre” named back as unused."""
    final = await session.say(text)

    assert [c["name"] for c in session.tool_calls] == ["search_hotels", "hotels_near_landmark"]
    assert session.tool_calls[1]["args"]["landmark"] == "Paris city centre"
    assert "unused" not in final.text and "Not used" not in final.text


async def test_sort_by_distance_to_the_center_ranks_the_last_search(session: Session, recording: RecordingStore) -> None:
    await session.say("Paris under $200 next weekend")

    final = await session.say("sort by distance to the center")

    assert [(c["name"], c["args"]["landmark"]) for c in session.tool_calls] == [("hotels_near_landmark", "Paris city centre")]
    assert len(recording.searches) == 1 and final.text.startswith("Hotels closest to Paris city centre, among the hotels found")


async def test_the_difference_between_two_hotels_shown_gives_the_details_of_both(session: Session) -> None:
    """It gave the first hotel's details alone."""
    first = await session.say("Paris under $200 next weekend")
    one, two = (h["name"] for h in first.data["hotels"][:2])

    final = await session.say("what's the difference between the first and the second?")

    assert [(c["name"], c["args"]["names"]) for c in session.tool_calls] == [("hotel_details", [one, two])]
    assert one in final.text and two in final.text


async def test_a_booking_is_declined_plainly_naming_the_hotel(session: Session, recording: RecordingStore) -> None:
    """It was "Anything else? I can look for cheaper options…", or, with an ordinal, the hotel's
    details, as if the room were being booked."""
    first = await session.say("Paris under $200 next weekend")
    second = first.data["hotels"][1]["name"]

    final = await session.say("book the second one")

    assert session.tool_calls == [] and len(recording.searches) == 1
    assert final.text == (f"I can't make bookings: I search hotels and compare them. To stay at {second}, "
                          "book with the hotel or a booking site.")
    japanese = await session.say("2番目を予約して")
    assert japanese.text.startswith("予約はできません") and second in japanese.text


@pytest.mark.parametrize(
    "question", ["what's the cancellation policy?", "is it refundable?", "what time is check-in at the first one?",
                 "キャンセル料は？"],
)
async def test_booking_terms_are_said_to_be_the_hotels(
    session: Session, recording: RecordingStore, question: str
) -> None:
    """They were "Anything else?…", or the first hotel's details, which hold no check-in time."""
    await session.say("Paris under $200 next weekend")

    final = await session.say(question)

    assert session.tool_calls == [] and len(recording.searches) == 1
    assert final.text.startswith(("I don't have the hotels' booking terms", "ホテルの予約条件"))


async def test_a_booking_request_with_a_place_and_dates_is_still_a_search(
    session: Session, recording: RecordingStore
) -> None:
    final = await session.say("book a room in Paris next weekend")

    assert (recording.searches[-1].city, recording.searches[-1].check_in) == ("Paris", NEXT_WEEKEND[0])
    assert final.data["hotels"]


async def test_a_shorter_history_window_bounds_the_hotel_conversation(
    recording: RecordingStore, offline_settings: Settings
) -> None:
    agent = HotelAgent(clock=lambda tz: TODAY, store=recording)
    deps = AgentDeps(settings=offline_settings, models=ModelProvider(OfflineChatModel(skills=(HotelSkill(),)), offline=True),
                     checkpointer=InMemorySaver(), app_db=None, history_window=4)  # type: ignore[arg-type]
    session = Session(agent, await agent.build(deps))
    for text in ("Paris under $200 next weekend", "cheaper ones?", "thanks!", "Rome next weekend"):
        final = await session.say(text)
    assert final.cards and {hotel["city"] for hotel in final.data["hotels"]} == {"Rome"}
    messages = (await session.state())["messages"]
    assert len(messages) <= 4 and isinstance(messages[0], HumanMessage)
