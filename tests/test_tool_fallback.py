"""A model that cannot call tools (many small local ones answer in prose instead), or whose tool call
is cut off at the output limit even after the retry with twice the limit: when the request offered
tools and the offline planner would call one, the planner's call is used and the answer says so;
once the planner made a turn's calls, its skills also word the plain answer from their results.
CONCIERGE_TOOL_FALLBACK=off leaves the model's reply alone."""

from __future__ import annotations

from pathlib import Path

from agents.registry import registered_agents
from bot.agent import TurnInput
from bot.config import load_settings
from bot.conversation import ConversationKey
from bot.events import Final, ToolStarted
from bot.llm import PLANNER_FOOTER
from bot.runtime import ConversationRuntime
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Reply

PROSE = "Sure! I would search for hotels in Paris for you."


def prose_only(request: RecordedRequest) -> Reply:
    return Reply.text(PROSE)


def cut_off_calls(request: RecordedRequest) -> Reply:
    """A model whose every tool call runs past any limit (the first tool offered, a huge argument)."""
    if request.tools:
        return Reply.tool_calls([(request.tools[0]["function"]["name"], {"city": "Paris " * 400})])
    return Reply.text(PROSE)


async def run(tmp_path: Path, server: FakeOpenAI, text: str, **env: str) -> list:
    return (await conversation(tmp_path, server, [text], **env))[-1]


async def conversation(tmp_path: Path, server: FakeOpenAI, texts: list[str], **env: str) -> list[list]:
    """The events of each turn of one conversation."""
    settings = load_settings(
        _env_file=None, CONCIERGE_DATA_DIR=tmp_path, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=server.base_url,
        CONCIERGE_LLM="openai", CONCIERGE_LLM_MAX_RETRIES=0, **env,
    )
    runtime = await ConversationRuntime.open(settings, agents=registered_agents())
    try:
        return [[e async for e in runtime.handle(ConversationKey.console("t"), TurnInput.typed(text))] for text in texts]
    finally:
        await runtime.close()


def tools_started(events: list) -> list[str]:
    return [e.name for e in events if isinstance(e, ToolStarted)]


async def test_the_planner_makes_the_tool_call_a_prose_only_model_did_not(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = prose_only
    events = await run(tmp_path, fake_openai, "/hotel Paris under $200 next weekend")
    final = events[-1]
    assert [e.name for e in events if isinstance(e, ToolStarted)] == ["search_hotels"]
    assert isinstance(final, Final) and final.cards  # answered from the planner's search
    assert final.text.endswith(PLANNER_FOOTER)
    assert PROSE not in final.text


async def test_with_the_fallback_off_the_model_reply_stands(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = prose_only
    events = await run(tmp_path, fake_openai, "/hotel Paris under $200 next weekend", CONCIERGE_TOOL_FALLBACK="off")
    final = events[-1]
    assert not any(isinstance(e, ToolStarted) for e in events)
    assert isinstance(final, Final) and final.text == PROSE and not final.cards


async def test_a_request_that_offers_no_tools_is_left_alone(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    events = await run(tmp_path, fake_openai, "/chat hello")  # no tools offered: nothing to fall back on
    final = events[-1]
    assert isinstance(final, Final) and PLANNER_FOOTER not in final.text


async def test_the_planner_runs_the_shop_stages_and_answers_from_their_results(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = prose_only
    _, events = await conversation(tmp_path, fake_openai, [
        "/shop wireless earbuds under $100", "is the first one in stock near me? I'm in Tokyo",
    ])
    final = events[-1]
    assert tools_started(events) == ["locate_user", "find_stores", "check_stock"]
    assert isinstance(final, Final) and final.text.endswith(PLANNER_FOOTER)
    assert PROSE not in final.text and "in stock" in final.text  # the shop skill's answer from check_stock
    # The model worded the first turn's search (no planner there); in the second it was asked once
    # per stage and not for the closing answer.
    assert [bool(r.tools) for r in fake_openai.requests] == [False, True, True, True]


async def test_a_hotel_tool_call_cut_off_twice_is_made_by_the_planner(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = cut_off_calls
    events = await run(tmp_path, fake_openai, "/hotel Paris under $200 next weekend", CONCIERGE_MAX_TOKENS_ANSWER="50")
    final = events[-1]
    assert [r.max_tokens for r in fake_openai.requests if r.tools] == [50, 100]  # the retry, then the planner
    assert tools_started(events) == ["search_hotels"]
    assert isinstance(final, Final) and final.cards and final.text.endswith(PLANNER_FOOTER)


async def test_shop_stage_calls_cut_off_twice_are_made_by_the_planner(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = cut_off_calls
    _, events = await conversation(tmp_path, fake_openai, [
        "/shop wireless earbuds under $100", "is the first one in stock near me? I'm in Tokyo",
    ], CONCIERGE_MAX_TOKENS_ANSWER="50")
    final = events[-1]
    assert [r.max_tokens for r in fake_openai.requests if r.tools] == [50, 100] * 3
    assert tools_started(events) == ["locate_user", "find_stores", "check_stock"]
    assert isinstance(final, Final) and final.text.endswith(PLANNER_FOOTER) and "in stock" in final.text
