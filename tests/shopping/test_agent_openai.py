"""/shop through the real OpenAI client against the fake server: the deterministic paths make
exactly one model call (counted by the server), the ReAct path more; staged agents are offered
one stage's tool per call, in order."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from agents.shopping.catalog import CatalogStore
from agents.shopping.reviews import ReviewIndex
from bot.agent import TurnInput
from bot.config import Settings
from bot.events import Final, StreamEvent
from bot.llm import TRUNCATION_NOTE
from bot.runtime import ConversationRuntime
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply, default_responder
from tests.shopping.conftest import collect, key, shop_agent


def model_like(request: RecordedRequest) -> Reply:
    """A model that calls the first tool it is offered unless it called it already (quantity 2 for
    validate_product), else answers from the last tool result."""
    called = {c["function"]["name"] for m in request.messages for c in m.get("tool_calls") or []}
    if request.tools and request.tools[0]["function"]["name"] not in called:
        name = request.tools[0]["function"]["name"]
        return Reply.tool_calls([(name, {"quantity": 2} if name == "validate_product" else {})])
    if request.response_format:
        return default_responder(request)
    tool_results = [m["content"] for m in request.messages if m.get("role") == "tool"]
    return Reply.text("Model answer from: " + (tool_results[-1][:120] if tool_results else "nothing"))


@pytest.fixture
async def runtime(
    openai_settings: Settings, store: CatalogStore, review_index: ReviewIndex, fake_openai: FakeOpenAI
) -> AsyncIterator[ConversationRuntime]:
    fake_openai.responder = model_like
    rt = await ConversationRuntime.open(openai_settings, agents=[shop_agent(store, review_index)])
    yield rt
    await rt.close()


def chats(server: FakeOpenAI, since: int = 0) -> list[RecordedRequest]:
    return [r for r in server.requests[since:] if r.path.endswith("/chat/completions")]


async def turn(rt: ConversationRuntime, text: str, thread: str = "t") -> list[StreamEvent]:
    return await collect(rt.handle(key(thread), TurnInput.typed(text, user_id="u1")))


@pytest.mark.parametrize("question", [
    "what do people say about the battery of the first one?",
    "specs of the first one",
    "any coupons for the first one?",
])
async def test_deterministic_intents_make_exactly_one_model_call(
    runtime: ConversationRuntime, fake_openai: FakeOpenAI, question: str
) -> None:
    before = len(chats(fake_openai))
    events = await turn(runtime, "/shop wireless earbuds under $100")
    assert isinstance(events[-1], Final) and events[-1].data["products"]
    search_calls = chats(fake_openai, before)
    assert len(search_calls) == 1 and not search_calls[0].tools  # no planning call, no tools offered
    assert any(m.get("role") == "tool" and "products" in m["content"] for m in search_calls[0].messages)
    before = len(fake_openai.requests)
    events = await turn(runtime, question)
    assert isinstance(events[-1], Final) and events[-1].text.startswith("Model answer from:")
    assert len(chats(fake_openai, before)) == 1


async def test_the_same_intent_forced_through_the_react_agent_plans_first(
    openai_settings: Settings, store: CatalogStore, review_index: ReviewIndex, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = model_like
    rt = await ConversationRuntime.open(openai_settings, agents=[shop_agent(store, review_index, force_react=True)])
    try:
        events = await turn(rt, "/shop wireless earbuds under $100")
    finally:
        await rt.close()
    calls = chats(fake_openai)
    assert len(calls) == 2 and calls[0].tools and not any(m.get("role") == "tool" for m in calls[0].messages)
    assert isinstance(events[-1], Final) and events[-1].data["products"]


async def test_an_unclear_message_is_classified_by_the_model_with_a_schema(
    runtime: ConversationRuntime, fake_openai: FakeOpenAI
) -> None:
    await turn(runtime, "/shop hmm, thinking about a gift for my dad")
    first = chats(fake_openai)[0]
    schema = (first.response_format or {}).get("json_schema", {}).get("schema", {})
    assert "intent" in schema.get("properties", {})


async def test_purchase_stages_offer_one_tool_each_in_order(runtime: ConversationRuntime, fake_openai: FakeOpenAI) -> None:
    await turn(runtime, "/shop wireless earbuds under $100")
    before = len(fake_openai.requests)
    events = await turn(runtime, "add the first one to my cart")
    offered = [[t["function"]["name"] for t in r.tools or []] for r in chats(fake_openai, before)]
    assert offered == [["validate_product"], ["validate_stock"], ["choose_fulfillment"], ["propose_cart_change"]]
    asked = events[-1]
    assert isinstance(asked, Final) and asked.data["pending"]["quantity"] == 2
    done = await turn(runtime, "yes")
    assert isinstance(done[-1], Final) and done[-1].data["cart"]["items"][0]["quantity"] == 2


async def test_tool_results_reach_the_model_as_compact_json(runtime: ConversationRuntime, fake_openai: FakeOpenAI) -> None:
    await turn(runtime, "/shop wireless earbuds under $100")
    tool_message = next(m for m in chats(fake_openai)[0].messages if m.get("role") == "tool")
    products = json.loads(tool_message["content"].split("\n", 1)[1])["products"]
    assert products and set(products[0]) == {"id", "name", "brand", "price", "currency", "rating", "review_count", "stock"}


@pytest.mark.parametrize("intent_reply, asked", [
    (Reply.json({"intent": "search", "product_reference": "the one " * 200}), [40, 80]),  # cut off twice
    (Reply.text("You are looking for a gift, I think."), [40]),  # not the JSON asked for
])
async def test_an_unusable_intent_reply_leaves_the_rules_guess_and_the_turn_answers(
    openai_settings: Settings, store: CatalogStore, review_index: ReviewIndex, fake_openai: FakeOpenAI,
    intent_reply: Reply, asked: list[int],
) -> None:
    fake_openai.responder = lambda request: intent_reply if request.response_format else model_like(request)
    settings = openai_settings.model_copy(update={"max_tokens_structured": 40})
    rt = await ConversationRuntime.open(settings, agents=[shop_agent(store, review_index)])
    try:
        events = await turn(rt, "/shop hmm something nice for my mom")
    finally:
        await rt.close()
    assert [r.max_tokens for r in chats(fake_openai) if r.response_format] == asked
    assert isinstance(events[-1], Final) and events[-1].text.startswith("Model answer from:")


async def test_a_cut_off_answer_says_so_but_the_shop_memory_replays_it_without_the_note(
    openai_settings: Settings, store: CatalogStore, review_index: ReviewIndex, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = model_like
    settings = openai_settings.model_copy(update={"max_tokens_answer": 16})
    rt = await ConversationRuntime.open(settings, agents=[shop_agent(store, review_index)])
    try:
        first = (await turn(rt, "/shop wireless earbuds under $100"))[-1]
        await turn(rt, "/shop wireless earbuds under $150")
    finally:
        await rt.close()
    assert isinstance(first, Final) and first.text.endswith(TRUNCATION_NOTE)
    remembered = [m["content"] for m in chats(fake_openai)[-1].messages if m["role"] == "assistant" and m.get("content")]
    assert remembered == [first.text.removesuffix(TRUNCATION_NOTE)]
