"""Per-user rate limits: a token bucket per user lets a burst through, then refuses with a
"rate_limited" Failure that says when to try again; other users are unaffected; the console and
admins are never limited. The daily token budget per workspace, counted from the usage the model
server reports, refuses new turns once spent and says when it resets."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from agents.chat.agent import ChatAgent
from bot.access import TOO_FAST, RateLimiter
from bot.agent import TurnInput
from bot.config import Settings, load_settings
from bot.conversation import ConversationKey
from bot.events import Failure, Final, StreamEvent
from bot.runtime import ConversationRuntime
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_api import BOT_USER_ID
from tests.slack.agents import CardsAgent
from tests.slack.conftest import HarnessFactory, make_harness, slack_api  # noqa: F401


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_lets_a_burst_through_then_refills_at_the_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=6, burst=3, clock=clock)  # one turn every 10 s
    assert [limiter.take("alice") for _ in range(3)] == [None, None, None]
    wait = limiter.take("alice")
    assert wait is not None and 9.9 < wait <= 10.0
    assert limiter.take("bob") is None  # another user's bucket is full
    clock.now += 5
    assert 4.9 < (limiter.take("alice") or 0) <= 5.0  # a refused turn costs nothing
    clock.now += 5
    assert limiter.take("alice") is None
    assert limiter.take("alice") is not None
    clock.now += 3600  # a long pause refills to the burst, not beyond
    assert [limiter.take("alice") is None for _ in range(4)] == [True, True, True, False]


async def last_event(runtime: ConversationRuntime, key: ConversationKey, turn: TurnInput) -> StreamEvent:
    events = [event async for event in runtime.handle(key, turn)]
    return events[-1]


async def test_a_burst_then_a_rate_limited_failure_with_retry_after_and_others_unaffected(tmp_path: Path) -> None:
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_RATE_LIMIT_PER_MINUTE=2,
        CONCIERGE_RATE_LIMIT_BURST=2, CONCIERGE_ADMINS="UADMIN", _env_file=None,
    )
    async with await ConversationRuntime.open(settings, agents=[CardsAgent(statuses=0)]) as runtime:
        key = ConversationKey("slack", ("T1", "C1", "1.0"))

        def ask(user: str, text: str = "/hotel Paris") -> TurnInput:
            return TurnInput.typed(text, user_id=user, workspace_id="T1", channel_id="C1")

        assert isinstance(await last_event(runtime, key, ask("UALICE")), Final)
        assert isinstance(await last_event(runtime, key, ask("UALICE")), Final)
        refused = await last_event(runtime, key, ask("UALICE"))
        assert isinstance(refused, Failure)
        assert refused.kind == "rate_limited" and refused.user_message == TOO_FAST
        assert refused.retry_after is not None and 1 <= refused.retry_after <= 30
        # Nothing ran: the conversation is still at its second turn.
        record = await runtime.app_db.get_thread(key.thread_id)
        assert record is not None and record.turn == 2

        assert isinstance(await last_event(runtime, key, ask("UBOB")), Final)
        for _ in range(4):  # admins and the console are never limited
            assert isinstance(await last_event(runtime, key, ask("UADMIN")), Final)
            assert isinstance(await last_event(runtime, ConversationKey.console("local"), TurnInput.typed("/hotel Rome")), Final)


async def test_slack_shows_the_rate_limit_and_when_to_try_again(make_harness: HarnessFactory) -> None:  # noqa: F811
    harness = await make_harness(CONCIERGE_RATE_LIMIT_PER_MINUTE=1, CONCIERGE_RATE_LIMIT_BURST=1)
    first = harness.slack.message_event(f"<@{BOT_USER_ID}> find a hotel in Vienna", type_="app_mention")
    await harness.slack.event(first)
    await harness.settle()
    await harness.slack.event(harness.slack.message_event("and in Rome?", thread_ts=first["ts"]))
    await harness.settle()
    texts = [m.text for m in harness.api.thread("C0GENERAL", first["ts"]) if m.user == BOT_USER_ID and not m.blocks]
    assert texts[0] == "Turn 1: 2 hotels for find a hotel in Vienna."
    assert TOO_FAST in texts[-1] and "Try again in about 60 s" in texts[-1]
    # Another user in the same thread is answered.
    await harness.slack.event(harness.slack.message_event("and in Rome?", user="U0BOB", thread_ts=first["ts"]))
    await harness.settle()
    texts = [m.text for m in harness.api.thread("C0GENERAL", first["ts"]) if m.user == BOT_USER_ID and not m.blocks]
    assert texts[-1] == "Turn 2: 2 hotels for and in Rome?."


async def test_a_workspace_is_refused_once_its_daily_token_budget_is_spent(
    openai_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    """Tokens of real model calls (the fake server reports usage) count per workspace per UTC day."""
    settings = openai_settings.model_copy(update={"daily_token_budget": 60})
    fake_openai.script(*[Reply.text(f"Hello there, answer number {i}.") for i in range(4)])
    async with await ConversationRuntime.open(settings, agents=[ChatAgent()]) as runtime:
        assert runtime.gate.budget is not None
        clock = Clock()
        clock.now = dt.datetime(2030, 6, 14, 21, 30, tzinfo=dt.UTC).timestamp()
        runtime.gate.budget.clock = clock

        async def ask(team: str, text: str) -> StreamEvent:
            key = ConversationKey("slack", (team, "C1", "1.0"))
            return await last_event(runtime, key, TurnInput(text=text, user_id="U1", workspace_id=team, channel_id="C1"))

        assert isinstance(await ask("T1", "hi"), Final)
        spent = await runtime.app_db.tokens_spent("slack:T1", "2030-06-14")
        assert spent == fake_openai.total_prompt_tokens + fake_openai.total_completion_tokens > 0
        for _ in range(2):
            if spent < 60:
                assert isinstance(await ask("T1", "tell me more"), Final)
                spent = await runtime.app_db.tokens_spent("slack:T1", "2030-06-14")
        assert spent >= 60
        calls = len(fake_openai.requests)

        refused = await ask("T1", "and more")
        assert isinstance(refused, Failure) and refused.kind == "rate_limited"
        assert "budget" in refused.user_message and "midnight UTC (in about 2 h 30 min)" in refused.user_message
        assert len(fake_openai.requests) == calls  # no model call was made
        assert isinstance(await ask("T2", "hi"), Final)  # another workspace has its own budget

        clock.now += 3 * 3600  # the next UTC day
        assert isinstance(await ask("T1", "good morning"), Final)


async def test_the_offline_model_has_no_budget(tmp_path: Path) -> None:
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_DAILY_TOKEN_BUDGET=1, _env_file=None
    )
    async with await ConversationRuntime.open(settings, agents=[CardsAgent(statuses=0)]) as runtime:
        assert runtime.gate.budget is None
