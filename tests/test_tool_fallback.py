"""A model that cannot call tools (many small local ones answer in prose instead): when the request
offered tools and the offline planner would call one, the planner's call is used and the answer
says so; CONCIERGE_TOOL_FALLBACK=off leaves the model's reply alone."""

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


async def run(tmp_path: Path, server: FakeOpenAI, text: str, **env: str) -> list:
    settings = load_settings(
        _env_file=None, CONCIERGE_DATA_DIR=tmp_path, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=server.base_url,
        CONCIERGE_LLM="openai", CONCIERGE_LLM_MAX_RETRIES=0, **env,
    )
    runtime = await ConversationRuntime.open(settings, agents=registered_agents())
    try:
        return [e async for e in runtime.handle(ConversationKey.console("t"), TurnInput.typed(text))]
    finally:
        await runtime.close()


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
