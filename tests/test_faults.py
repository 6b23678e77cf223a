"""The fault table, row by row, through the real openai SDK (langchain-openai) and the fake server."""

from __future__ import annotations

import random

import pytest

from bot.agent import TurnInput
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.events import Failure, Final, StreamEvent
from bot.faults import FAULT_TABLE, Backoff, FaultClass, classify
from bot.llm import ModelProvider, openai_chat_model
from bot.runtime import ConversationRuntime
from tests.fakes.openai_server import FakeOpenAI, Fault, Reply
from tests.support.agents import EchoAgent


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def provider(settings: Settings, sleep: RecordingSleep, *, fallback: bool = False) -> ModelProvider:
    return ModelProvider(
        openai_chat_model(settings, "gpt-4o-mini"),
        openai_chat_model(settings, "backup-model") if fallback else None,
        max_retries=3,
        backoff=Backoff(0.01, 0.05),
        sleep=sleep,
    )


async def run_turn(settings: Settings, models: ModelProvider, text: str = "/echo hello") -> list[StreamEvent]:
    try:
        async with await ConversationRuntime.open(settings, agents=[EchoAgent()], models=models) as rt:
            return [e async for e in rt.handle(ConversationKey.console("faults"), TurnInput.typed(text))]
    finally:
        await models.aclose()


def chat_requests(server: FakeOpenAI) -> list[str | None]:
    return [r.model for r in server.requests if r.path.endswith("/chat/completions")]


async def test_timeout_is_retried_with_backoff(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    sleep = RecordingSleep()
    fake_openai.fail_next(Fault.hang(seconds=10))
    events = await run_turn(openai_settings, provider(openai_settings, sleep))
    assert isinstance(events[-1], Final) and events[-1].text == "Echo: hello"
    assert len(chat_requests(fake_openai)) == 2
    assert len(sleep.delays) == 1 and 0 < sleep.delays[0] <= 0.05


async def test_rate_limit_waits_retry_after(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    sleep = RecordingSleep()
    fake_openai.fail_next(Fault.rate_limit(retry_after=1.5), Fault.rate_limit(retry_after=2.0))
    events = await run_turn(openai_settings, provider(openai_settings, sleep))
    assert isinstance(events[-1], Final)
    assert len(chat_requests(fake_openai)) == 3
    assert sleep.delays[0] >= 1.5 and sleep.delays[1] >= 2.0


async def test_server_errors_are_retried_then_reported(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    sleep = RecordingSleep()
    fake_openai.fail_next(*[Fault.server_error(500)] * 4)
    events = await run_turn(openai_settings, provider(openai_settings, sleep))
    assert isinstance(events[-1], Failure) and events[-1].kind == "unavailable"
    assert len(chat_requests(fake_openai)) == 4  # the first try and three retries
    delays = sleep.delays
    # full jitter: retry n waits uniform(0, min(cap, base·2^n)), so the ceiling grows, not each draw
    assert len(delays) == 3 and all(0 <= d <= min(0.05, 0.01 * 2**n) for n, d in enumerate(delays))
    assert "Traceback" not in events[-1].user_message


async def test_a_single_server_error_recovers(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(Fault.server_error(503))
    events = await run_turn(openai_settings, provider(openai_settings, RecordingSleep()))
    assert isinstance(events[-1], Final)


async def test_model_not_found_switches_to_the_fallback_model(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_model("gpt-4o-mini", Fault.model_not_found())
    events = await run_turn(openai_settings, provider(openai_settings, RecordingSleep(), fallback=True))
    assert isinstance(events[-1], Final)
    assert chat_requests(fake_openai) == ["gpt-4o-mini", "backup-model"]


async def test_model_not_found_without_fallback_is_a_clear_failure(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_model("gpt-4o-mini", Fault.model_not_found())
    events = await run_turn(openai_settings, provider(openai_settings, RecordingSleep()))
    assert isinstance(events[-1], Failure) and events[-1].kind == "misconfigured"
    assert len(chat_requests(fake_openai)) == 1


async def test_unauthorized_is_not_retried_and_tells_the_user(
    openai_settings: Settings, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    sleep = RecordingSleep()
    fake_openai.fail_next(Fault.unauthorized())
    events = await run_turn(openai_settings, provider(openai_settings, sleep))
    failure = events[-1]
    assert isinstance(failure, Failure) and failure.kind == "misconfigured"
    assert "misconfigured" in failure.user_message
    assert len(chat_requests(fake_openai)) == 1 and sleep.delays == []
    assert any("OPENAI_API_KEY" in r.getMessage() for r in caplog.records)  # the operator's log line
    assert all("sk-test-secret-value" not in r.getMessage() for r in caplog.records)
    assert "sk-test" not in failure.user_message


async def test_malformed_stream_chunk_is_retried(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(Fault.malformed_chunk())
    events = await run_turn(openai_settings, provider(openai_settings, RecordingSleep()))
    assert isinstance(events[-1], Final)
    assert len(chat_requests(fake_openai)) == 2


async def test_tool_calls_round_trip_through_the_sdk(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.tool_calls([("lookup", {"topic": "otters"})]), Reply.text("Otters are fine."))
    events = await run_turn(openai_settings, provider(openai_settings, RecordingSleep()), "/echo tell me about otters")
    assert isinstance(events[-1], Final) and events[-1].text == "Otters are fine."
    second = fake_openai.requests[1].messages
    assert second[-1]["role"] == "tool" and "Notes about otters" in second[-1]["content"]


def test_every_fault_class_has_a_strategy() -> None:
    assert set(FAULT_TABLE) == set(FaultClass)
    assert not FAULT_TABLE[FaultClass.AUTH].retry and not FAULT_TABLE[FaultClass.BAD_REQUEST].retry
    assert FAULT_TABLE[FaultClass.RATE_LIMITED].honour_retry_after
    assert FAULT_TABLE[FaultClass.MODEL_NOT_FOUND].use_fallback_model
    assert classify(TimeoutError()).cls is FaultClass.TRANSIENT
    assert classify(KeyError("x")).cls is FaultClass.BAD_REQUEST


def test_backoff_is_full_jitter_up_to_the_capped_exponential() -> None:
    backoff = Backoff(base=1.0, cap=8.0)
    rng, twin = random.Random(1234), random.Random(1234)
    for attempt in range(8):
        upper = min(8.0, 2.0**attempt)
        delays = [backoff.delay(attempt, rng=rng) for _ in range(50)]
        assert delays == [twin.uniform(0.0, upper) for _ in range(50)]  # uniform(0, min(cap, base·2^n))
        assert all(0.0 <= d <= upper for d in delays)
        assert min(delays) < upper / 4  # full jitter reaches well below half the ceiling
        assert max(delays) > upper * 3 / 4


def test_backoff_without_an_rng_stays_in_range() -> None:
    backoff = Backoff(base=1.0, cap=8.0)
    assert all(0.0 <= backoff.delay(n) <= min(8.0, 2.0**n) for n in range(12) for _ in range(20))


def test_a_short_retry_after_does_not_cut_the_backoff_short() -> None:
    backoff = Backoff(base=1.0, cap=8.0)
    rng, twin = random.Random(7), random.Random(7)
    for attempt in (3, 4, 5):
        delays = [backoff.delay(attempt, retry_after=0.1, rng=rng) for _ in range(20)]
        assert delays == [max(0.1, twin.uniform(0.0, 8.0)) for _ in range(20)]
        assert max(delays) > 4.0  # the jittered backoff wins when it is longer than the Retry-After


def test_a_retry_after_longer_than_the_backoff_wins() -> None:
    backoff = Backoff(base=1.0, cap=8.0)
    rng = random.Random(42)
    assert all(backoff.delay(n, retry_after=5.0, rng=rng) == 5.0 for n in (0, 1, 2) for _ in range(20))


def test_a_retry_after_longer_than_the_cap_is_honoured() -> None:
    backoff = Backoff(base=1.0, cap=8.0)
    rng = random.Random(3)
    assert all(backoff.delay(n, retry_after=30.0, rng=rng) == 30.0 for n in (0, 3, 10))


def test_every_fault_is_said_in_japanese_too() -> None:
    from bot.faults import TurnFailed
    from bot.workpool import WorkFailed

    assert all(strategy.user_message_ja for strategy in FAULT_TABLE.values())
    failed = TurnFailed("unavailable", FAULT_TABLE[FaultClass.SERVER].user_message, fault=FaultClass.SERVER)
    assert failed.said("en") == FAULT_TABLE[FaultClass.SERVER].user_message
    assert failed.said("ja") == "言語モデルのサービスに問題が起きています。時間をおいてもう一度お試しください。"
    assert WorkFailed("timeout", timeout=12.5).said("ja") == "処理に時間がかかりすぎたため（12.5 秒超）止めました。小さく分けて送ってください。"


async def test_a_japanese_request_hears_of_a_failing_model_in_japanese(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(*[Fault.server_error(500)] * 4)
    events = await run_turn(openai_settings, provider(openai_settings, RecordingSleep()), "/echo こんにちは")
    assert isinstance(events[-1], Failure) and events[-1].kind == "unavailable"
    assert events[-1].user_message == FAULT_TABLE[FaultClass.SERVER].user_message_ja


async def test_the_runtimes_own_words_are_in_the_users_language(settings: Settings) -> None:
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as rt:
        async def last(turn: TurnInput) -> StreamEvent:
            return [e async for e in rt.handle(ConversationKey.console("words"), turn)][-1]

        unknown = await last(TurnInput(text="", command="nope", locale="ja-JP"))
        assert isinstance(unknown, Failure) and unknown.user_message == "`/nope` というコマンドはありません。`/help` をお試しください。"
        reset = await last(TurnInput(text="", command="reset", locale="ja"))
        assert isinstance(reset, Final) and reset.text == "会話をリセットしました。次は何をしましょうか？"
        english = await last(TurnInput(text="", command="nope"))
        assert isinstance(english, Failure) and english.user_message == "I don't know the command `/nope`. Try `/help`."
