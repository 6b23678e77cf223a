"""Output limits and finish reasons through the real openai SDK against the fake server (which
cuts a reply at the request's limit and says finish_reason "length", as servers do)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from agents.proofread.llm import ProofreadLLM
from agents.registry import registered_agents
from bot.agent import TurnInput
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.events import Final
from bot.faults import FAULT_TABLE, FaultClass, TurnFailed, classify
from bot.llm import TRUNCATION_NOTE, TURN_ENDS, ModelProvider, openai_chat_model, without_truncation_note
from bot.runtime import ConversationRuntime
from tests.fakes.openai_server import FakeOpenAI, Reply


class Answer(BaseModel):
    text: str
    score: int


@pytest.fixture
async def provider(openai_settings: Settings) -> AsyncIterator[ModelProvider]:
    models = ModelProvider(
        openai_chat_model(openai_settings, "gpt-4o-mini"), max_retries=0,
        max_tokens={"answer": 50, "structured": 40, "check": 60},
    )
    yield models
    await models.aclose()


PROMPT = [SystemMessage("You answer."), HumanMessage("Tell me everything.")]


async def test_every_call_carries_the_limit_for_its_purpose(provider: ModelProvider, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.text("short"), Reply.json({"text": "ok", "score": 1}), Reply.json({"text": "ok", "score": 2}))
    await provider.ainvoke(lambda m: m, PROMPT)
    await provider.ainvoke(lambda m: m.with_structured_output(Answer), PROMPT, purpose="structured")
    await provider.ainvoke(lambda m: m.with_structured_output(Answer), PROMPT, purpose="check")
    assert [r.max_tokens for r in fake_openai.requests] == [50, 40, 60]


async def test_proofread_checks_carry_the_configured_check_limit(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    settings = openai_settings.model_copy(update={"max_tokens_check": 300, "max_tokens_structured": 100})
    models = ModelProvider.from_settings(settings)
    fake_openai.script(Reply.json({"text": "fine", "score": 5}))
    try:
        verdict = await ProofreadLLM(models).structured(Answer, "You check articles.", "An article.")
    finally:
        await models.aclose()
    assert verdict.score == 5
    assert [r.max_tokens for r in fake_openai.requests] == [300]


async def test_a_looping_model_is_cut_by_the_limit_and_the_answer_says_so(
    provider: ModelProvider, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply.text("and again " * 2000))
    message = await provider.ainvoke(lambda m: m, PROMPT)
    assert fake_openai.requests[-1].completion_tokens == 50
    assert message.content.endswith(TRUNCATION_NOTE)
    assert len(fake_openai.requests) == 1  # a text answer is not asked for again


async def test_a_cut_off_structured_output_is_retried_once_with_twice_the_limit(
    provider: ModelProvider, fake_openai: FakeOpenAI
) -> None:
    long = {"text": "word " * 60, "score": 3}  # about 70 tokens: over 40, under 80
    fake_openai.script(Reply.json(long), Reply.json(long))
    result = await provider.ainvoke(lambda m: m.with_structured_output(Answer), PROMPT, purpose="structured")
    assert result.score == 3
    assert [r.max_tokens for r in fake_openai.requests] == [40, 80]


async def test_still_cut_off_after_the_retry_is_a_truncation_fault_with_its_own_message(
    provider: ModelProvider, fake_openai: FakeOpenAI
) -> None:
    huge = {"text": "word " * 500, "score": 3}
    fake_openai.script(Reply.json(huge), Reply.json(huge))
    with pytest.raises(TurnFailed) as failed:
        await provider.ainvoke(lambda m: m.with_structured_output(Answer), PROMPT, purpose="structured")
    assert failed.value.fault is FaultClass.TRUNCATED
    assert failed.value.user_message == FAULT_TABLE[FaultClass.TRUNCATED].user_message
    assert "rephrase or start over" not in failed.value.user_message
    assert len(fake_openai.requests) == 2


async def test_no_retry_is_started_that_the_turn_has_no_time_left_to_finish(
    provider: ModelProvider, fake_openai: FakeOpenAI
) -> None:
    """A slow model that loops: the doubled retry would take about twice as long as the first try,
    past the turn's end, so the truncation is reported at once and the agent's fallback can answer
    (rather than the turn deadline cutting the whole turn)."""
    huge = {"text": "word " * 500, "score": 3}
    fake_openai.script(Reply.json(huge), Reply.json(huge))
    fake_openai.latency = 0.4
    token = TURN_ENDS.set(time.monotonic() + 1.2)
    try:
        with pytest.raises(TurnFailed) as failed:
            await provider.ainvoke(lambda m: m.with_structured_output(Answer), PROMPT, purpose="structured")
    finally:
        TURN_ENDS.reset(token)
    assert failed.value.fault is FaultClass.TRUNCATED
    assert [r.max_tokens for r in fake_openai.requests] == [40]
    # With time to spare, the same reply is retried once with twice the limit.
    fake_openai.script(Reply.json(huge), Reply.json(huge))
    token = TURN_ENDS.set(time.monotonic() + 30)
    try:
        with pytest.raises(TurnFailed):
            await provider.ainvoke(lambda m: m.with_structured_output(Answer), PROMPT, purpose="structured")
    finally:
        TURN_ENDS.reset(token)
    assert [r.max_tokens for r in fake_openai.requests] == [40, 40, 80]


async def test_a_cut_off_tool_call_is_retried_with_a_higher_limit(provider: ModelProvider, fake_openai: FakeOpenAI) -> None:
    call = Reply.tool_calls([("lookup", {"topic": "x " * 60})])
    fake_openai.script(call, call)

    def lookup(topic: str) -> str:
        """Look a topic up."""
        return topic

    message = await provider.ainvoke(lambda m: m.bind_tools([lookup]), PROMPT)
    assert message.tool_calls and message.tool_calls[0]["args"]["topic"].startswith("x x")
    assert [r.max_tokens for r in fake_openai.requests] == [50, 100]


async def test_a_content_filter_stop_is_reported_as_such(provider: ModelProvider, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(content="", finish_reason="content_filter"))
    with pytest.raises(TurnFailed) as failed:
        await provider.ainvoke(lambda m: m, PROMPT)
    assert failed.value.fault is FaultClass.CONTENT_FILTER and failed.value.kind == "bad_input"


def test_the_sdk_finish_reason_errors_are_classified() -> None:
    from types import SimpleNamespace

    length = openai.LengthFinishReasonError(completion=SimpleNamespace(usage=None))  # type: ignore[arg-type]
    assert classify(length).cls is FaultClass.TRUNCATED
    assert classify(openai.ContentFilterFinishReasonError()).cls is FaultClass.CONTENT_FILTER


async def test_compatible_servers_get_max_tokens_and_openai_gets_its_own_name(
    openai_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply.text("a"), Reply.json({"text": "b", "score": 1}), Reply.text("c"))
    local = ModelProvider(openai_chat_model(openai_settings, "gpt-4o-mini"), max_retries=0)
    named = openai_settings.model_copy(update={"max_tokens_param": "max_completion_tokens"})
    openai_style = ModelProvider(openai_chat_model(named, "gpt-4o-mini"), max_retries=0)
    try:
        await local.ainvoke(lambda m: m, PROMPT)
        await local.ainvoke(lambda m: m.with_structured_output(Answer), PROMPT, purpose="structured")
        await openai_style.ainvoke(lambda m: m, PROMPT)
    finally:
        await local.aclose()
        await openai_style.aclose()
    fields = [sorted(k for k in r.body if "tokens" in k and k != "stream_options") for r in fake_openai.requests]
    assert fields == [["max_tokens"], ["max_tokens"], ["max_completion_tokens"]]


async def test_a_cut_off_chat_answer_says_so_and_the_note_is_not_sent_back_to_the_model(
    openai_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    settings = openai_settings.model_copy(update={"max_tokens_answer": 16})
    fake_openai.script(Reply.text("and again " * 100), Reply.text("Done."))
    runtime = await ConversationRuntime.open(settings, agents=registered_agents())
    try:
        key = ConversationKey.console("cut")
        first = [e async for e in runtime.handle(key, TurnInput.typed("/chat tell me everything"))][-1]
        second = [e async for e in runtime.handle(key, TurnInput.typed("/chat and then?"))][-1]
    finally:
        await runtime.close()
    assert isinstance(first, Final) and first.text.endswith(TRUNCATION_NOTE)
    assert isinstance(second, Final) and second.text == "Done."
    replayed = [m["content"] for m in fake_openai.requests[-1].messages if m["role"] == "assistant"]
    assert replayed == [first.text.removesuffix(TRUNCATION_NOTE)]


@pytest.mark.parametrize("kept", [len(TRUNCATION_NOTE), 30, 4])
def test_an_answer_clipped_inside_the_note_loses_what_is_left_of_it(kept: int) -> None:
    stored = AIMessage(("A long answer " * 5).strip() + TRUNCATION_NOTE[:kept])
    assert without_truncation_note(stored).content == ("A long answer " * 5).strip()
    untouched = AIMessage("See the table below.\n\n_(a footnote of the model's own)_")
    assert without_truncation_note(untouched) is untouched
