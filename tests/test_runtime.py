"""The conversation runtime: ordering, concurrency, de-duplication, binding, bad input, interrupts."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator

import pytest
from langchain_core.messages import HumanMessage

from bot.agent import IncomingFile, TurnInput
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.events import Failure, Final, Status, StreamEvent, ToolFinished, ToolStarted
from bot.runtime import ConversationRuntime
from tests.support import agents as support
from tests.support.agents import ConfirmAgent, EchoAgent


@pytest.fixture
async def runtime(settings: Settings) -> AsyncIterator[ConversationRuntime]:
    rt = await ConversationRuntime.open(settings, agents=[EchoAgent(), ConfirmAgent()])
    yield rt
    await rt.close()


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


async def test_turn_streams_tool_events_and_ends_with_one_final(runtime: ConversationRuntime) -> None:
    events = await collect(runtime.handle(ConversationKey.console("a"), TurnInput.typed("/echo look up pandas")))
    kinds = [type(e) for e in events]
    assert kinds.index(ToolStarted) < kinds.index(ToolFinished) < kinds.index(Final)
    assert Status(text="Looking up pandas…") in events
    assert sum(isinstance(e, Final | Failure) for e in events) == 1
    assert isinstance(events[-1], Final) and "Notes about pandas" in events[-1].text


async def test_twenty_messages_to_one_thread_run_one_at_a_time_in_order(runtime: ConversationRuntime) -> None:
    support.TOOL_DELAY["seconds"] = 0.01
    key = ConversationKey.console("burst")
    try:
        results = await asyncio.gather(
            *(collect(runtime.handle(key, TurnInput.typed(f"/echo look up item{i}"))) for i in range(20))
        )
    finally:
        support.TOOL_DELAY["seconds"] = 0.0
    assert all(isinstance(r[-1], Final) for r in results)
    graph = await runtime._graph(runtime._agents["echo"])
    config = runtime._config(key, runtime._agents["echo"], 0)
    snapshot = await graph.aget_state(config)
    humans = [m.content for m in snapshot.values["messages"] if isinstance(m, HumanMessage)]
    # The bounded window keeps the newest turns; they must be the last ones, in arrival order.
    assert humans == [f"look up item{i}" for i in range(20 - len(humans), 20)]
    # The checkpoint history is a single chain: every checkpoint's parent is the one before it.
    history = [c async for c in graph.aget_state_history(config)]
    for newer, older in itertools.pairwise(history):
        assert newer.parent_config is not None
        assert newer.parent_config["configurable"]["checkpoint_id"] == older.config["configurable"]["checkpoint_id"]


async def test_different_threads_run_concurrently(runtime: ConversationRuntime) -> None:
    support.TOOL_DELAY["seconds"] = 0.05
    spans: list[tuple[float, float]] = []

    async def one(i: int) -> None:
        start = time.monotonic()
        events = await collect(runtime.handle(ConversationKey.console(f"t{i}"), TurnInput.typed(f"/echo look up x{i}")))
        assert isinstance(events[-1], Final)
        spans.append((start, time.monotonic()))

    try:
        await asyncio.gather(*(one(i) for i in range(20)))
    finally:
        support.TOOL_DELAY["seconds"] = 0.0
    # Overlap in time: some turn started before another one finished.
    latest_start = max(s for s, _ in spans)
    earliest_end = min(e for _, e in spans)
    assert latest_start < earliest_end


async def test_retried_delivery_is_answered_once(runtime: ConversationRuntime) -> None:
    key = ConversationKey.console("dup")
    first = await collect(runtime.handle(key, TurnInput.typed("/echo hi", delivery_id="Ev123")))
    again = await collect(runtime.handle(key, TurnInput.typed("/echo hi", delivery_id="Ev123")))
    assert isinstance(first[-1], Final)
    assert again == []


async def test_thread_remembers_its_agent(runtime: ConversationRuntime) -> None:
    key = ConversationKey.console("bind")
    await collect(runtime.handle(key, TurnInput.typed("/echo first")))
    events = await collect(runtime.handle(key, TurnInput.typed("second without a command")))
    assert isinstance(events[-1], Final) and events[-1].text == "echo: second without a command"
    assert await runtime.bound_agent(key) == "echo"


async def test_reset_starts_a_fresh_conversation(runtime: ConversationRuntime) -> None:
    key = ConversationKey.console("reset")
    await collect(runtime.handle(key, TurnInput.typed("/echo one")))
    await collect(runtime.handle(key, TurnInput.typed("/echo two")))
    before = await collect(runtime.handle(key, TurnInput.typed("/echo three")))
    assert isinstance(before[-1], Final) and before[-1].data["messages"] == 6
    reset = await collect(runtime.handle(key, TurnInput.typed("/reset")))
    assert isinstance(reset[-1], Final) and "reset" in reset[-1].text.lower()
    after = await collect(runtime.handle(key, TurnInput.typed("/echo again")))
    assert isinstance(after[-1], Final) and after[-1].data["messages"] == 2


@pytest.mark.parametrize(
    ("text", "files", "fragment"),
    [
        ("", (), "empty"),
        ("   ", (), "empty"),
        ("x" * 200_000, (), "too long"),
        ("/echo bad", (), "refused"),
        ("/echo", (), "Usage"),
        ("/nope hi", (), "don't know the command"),
        ("/echo read this", (IncomingFile("blob.bin", b"\x00\x01\x02\xff" * 10),), "binary"),
        ("/echo read this", (IncomingFile("latin1.txt", "café".encode("latin-1")),), "UTF-8"),
        ("/echo read this", (IncomingFile("big.md", b"a" * 300_000),), "too large"),
    ],
)
async def test_bad_input_gets_a_clear_message_and_loses_nothing(
    runtime: ConversationRuntime, text: str, files: tuple[IncomingFile, ...], fragment: str
) -> None:
    key = ConversationKey.console("bad")
    await collect(runtime.handle(key, TurnInput.typed("/echo kept")))
    events = await collect(runtime.handle(key, TurnInput.typed(text, attachments=files)))
    assert len(events) == 1 and isinstance(events[0], Failure)
    assert events[0].kind == "bad_input" and fragment in events[0].user_message
    follow_up = await collect(runtime.handle(key, TurnInput.typed("/echo still here")))
    assert isinstance(follow_up[-1], Final) and follow_up[-1].data["messages"] == 4


class ShortEcho(EchoAgent):
    """An agent that reads requests, not documents: at most 40 characters a message."""

    name = "short"
    command = "/short"
    intent_words = ()
    max_input_chars = 40


async def test_an_agents_own_limit_refuses_a_longer_message_with_that_limit(settings: Settings) -> None:
    # The agent's limit is what the user is told, even for text past the core's limit too.
    async with await ConversationRuntime.open(settings, agents=[ShortEcho()]) as rt:
        key = ConversationKey.console("limit")
        for text, size in (("x" * 41, "41"), ("x" * 200_000, "200,000")):
            refused = await collect(rt.handle(key, TurnInput.typed(f"/short {text}")))
            assert len(refused) == 1 and isinstance(refused[0], Failure) and refused[0].kind == "bad_input"
            assert refused[0].user_message == (
                f"`/short` takes messages of up to 40 characters; yours has {size}. Please send a shorter request."
            )
        assert await rt.app_db.get_thread(key.thread_id) is None  # refused before it was queued: no trace
        kept = await collect(rt.handle(key, TurnInput.typed("/short " + "y" * 40)))  # the limit itself is taken
        assert isinstance(kept[-1], Final) and kept[-1].text == "echo: " + "y" * 40
        japanese = await collect(rt.handle(key, TurnInput.typed("/short " + "長" * 41)))
        assert isinstance(japanese[0], Failure)
        assert japanese[0].user_message.startswith("`/short` へのメッセージは 40 文字までです（このメッセージは 41 文字）")
        problem = rt.input_problem(TurnInput(text="z" * 41, command="short"))
        assert problem is not None and "up to 40 characters" in problem.user_message


async def test_a_follow_up_longer_than_the_threads_agent_takes_is_refused_and_loses_nothing(settings: Settings) -> None:
    async with await ConversationRuntime.open(settings, agents=[ShortEcho(), EchoAgent()]) as rt:
        key = ConversationKey.console("follow")
        await collect(rt.handle(key, TurnInput.typed("/short first")))
        refused = await collect(rt.handle(key, TurnInput.typed("z" * 41)))  # no command: the thread's agent
        assert len(refused) == 1 and isinstance(refused[0], Failure)
        assert "`/short` takes messages of up to 40 characters; yours has 41" in refused[0].user_message
        record = await rt.app_db.get_thread(key.thread_id)
        assert record is not None and record.state == "idle" and record.turn == 1 and record.agent == "short"
        after = await collect(rt.handle(key, TurnInput.typed("second")))
        assert isinstance(after[-1], Final) and after[-1].data["messages"] == 4  # the refused one is not in it
        other = await collect(rt.handle(ConversationKey.console("other"), TurnInput.typed("/echo " + "z" * 41)))
        assert isinstance(other[-1], Final)  # an agent without a limit of its own takes it


async def test_button_press_resumes_the_interrupted_graph_once(runtime: ConversationRuntime) -> None:
    key = ConversationKey.console("confirm")
    asked = await collect(runtime.handle(key, TurnInput.typed("/confirm delete the cart")))
    final = asked[-1]
    assert isinstance(final, Final) and final.data["awaiting_input"]
    assert [a.value for a in final.cards[0].actions] == ["confirm", "cancel"]
    answered = await collect(runtime.resume(key, "cancel", delivery_id="press-1"))
    assert isinstance(answered[-1], Final) and answered[-1].data == {"decision": "cancel"}
    assert await collect(runtime.resume(key, "confirm", delivery_id="press-2")) == []


async def test_next_message_answers_the_waiting_question(runtime: ConversationRuntime) -> None:
    key = ConversationKey.console("confirm-by-message")
    await collect(runtime.handle(key, TurnInput.typed("/confirm empty the cart")))
    answered = await collect(runtime.handle(key, TurnInput.typed("confirm")))
    assert isinstance(answered[-1], Final) and answered[-1].data == {"decision": "confirm"}
    # Answered once: the same word now starts a new request, which asks again.
    again = await collect(runtime.handle(key, TurnInput.typed("confirm")))
    assert isinstance(again[-1], Final) and again[-1].text == "Really confirm?"


async def test_a_message_that_is_no_answer_starts_a_new_turn_and_drops_the_question(
    runtime: ConversationRuntime,
) -> None:
    key = ConversationKey.console("confirm-moved-on")
    await collect(runtime.handle(key, TurnInput.typed("/confirm delete everything")))
    moved_on = await collect(runtime.handle(key, TurnInput.typed("rename the list")))
    assert isinstance(moved_on[-1], Final) and moved_on[-1].text == "Really rename the list?"
    answered = await collect(runtime.resume(key, "cancel"))
    assert isinstance(answered[-1], Final) and answered[-1].data == {"decision": "cancel"}
    assert await collect(runtime.resume(key, "confirm")) == []  # "delete everything" is gone


async def test_a_command_button_runs_the_command_in_the_conversation(runtime: ConversationRuntime) -> None:
    key = ConversationKey.console("command-button")
    await collect(runtime.handle(key, TurnInput.typed("/echo hello")))
    pressed = await collect(runtime.resume(key, "/confirm launch", user_id="u1", delivery_id="press-9"))
    assert isinstance(pressed[-1], Final) and pressed[-1].text == "Really launch?"
    assert await collect(runtime.resume(key, "/confirm launch", delivery_id="press-9")) == []  # a retried press


async def test_a_waiting_question_survives_a_restart(settings: Settings) -> None:
    key = ConversationKey.console("confirm-restart")
    first = await ConversationRuntime.open(settings, agents=[EchoAgent(), ConfirmAgent()])
    try:
        await collect(first.handle(key, TurnInput.typed("/confirm ship it")))
    finally:
        await first.close()
    second = await ConversationRuntime.open(settings, agents=[EchoAgent(), ConfirmAgent()])
    try:
        answered = await collect(second.handle(key, TurnInput.typed("confirm")))
    finally:
        await second.close()
    assert isinstance(answered[-1], Final) and answered[-1].data == {"decision": "confirm"}


async def test_failing_tool_is_retried_once_then_degraded(runtime: ConversationRuntime) -> None:
    support.TOOL_FAILURES["remaining"] = 1
    events = await collect(runtime.handle(ConversationKey.console("tool1"), TurnInput.typed("/echo look up flaky")))
    assert isinstance(events[-1], Final) and "Notes about flaky" in events[-1].text
    support.TOOL_FAILURES["remaining"] = 5
    try:
        events = await collect(runtime.handle(ConversationKey.console("tool2"), TurnInput.typed("/echo look up down")))
        left = support.TOOL_FAILURES["remaining"]
    finally:
        support.TOOL_FAILURES["remaining"] = 0
    assert any(isinstance(e, Status) and "unavailable" in e.text for e in events)
    assert isinstance(events[-1], Final) and "unavailable" in events[-1].text
    assert left == 3  # one call + one retry, no more


async def test_turn_deadline_fails_cleanly_and_keeps_the_conversation(settings: Settings) -> None:
    slow = settings.model_copy(update={"turn_deadline": 0.2})
    async with await ConversationRuntime.open(slow, agents=[EchoAgent()]) as rt:
        key = ConversationKey.console("deadline")
        support.TOOL_DELAY["seconds"] = 5
        try:
            events = await collect(rt.handle(key, TurnInput.typed("/echo look up slow things")))
        finally:
            support.TOOL_DELAY["seconds"] = 0
        assert isinstance(events[-1], Failure) and events[-1].kind == "timeout"
        record = await rt.app_db.get_thread(key.thread_id)
        assert record is not None and record.state == "error"
        events = await collect(rt.handle(key, TurnInput.typed("/echo look up fast things")))
        assert isinstance(events[-1], Final) and "Notes about fast things" in events[-1].text
        record = await rt.app_db.get_thread(key.thread_id)
        assert record is not None and record.state == "idle"


async def test_lifecycle_state_is_persisted_through_the_turn(runtime: ConversationRuntime) -> None:
    key = ConversationKey.console("life")
    seen: list[str] = []
    async for event in runtime.handle(key, TurnInput.typed("/echo look up states")):
        record = await runtime.app_db.get_thread(key.thread_id)
        assert record is not None
        seen.append(record.state)
        if isinstance(event, ToolStarted):
            assert record.state == "tool_call"
    assert seen[-1] == "responding"
    record = await runtime.app_db.get_thread(key.thread_id)
    assert record is not None and record.state == "idle" and record.turn == 1


async def test_uncommanded_text_is_routed_by_intent_then_small_talk(settings: Settings) -> None:
    from agents.chat.agent import ChatAgent

    async with await ConversationRuntime.open(settings, agents=[EchoAgent(), ChatAgent()]) as rt:
        routed = await collect(rt.handle(ConversationKey.console("intent"), TurnInput.typed("look up capybaras")))
        assert isinstance(routed[-1], Final) and "Notes about capybaras" in routed[-1].text
        chat_key = ConversationKey.console("smalltalk")
        chatted = await collect(rt.handle(chat_key, TurnInput.typed("good morning")))
        assert isinstance(chatted[-1], Final) and chatted[-1].text.startswith("Hi! Here is what I can help with:\n• `/echo`")
        assert await rt.bound_agent(chat_key) == "chat"


async def test_unknown_thread_is_not_owned_until_the_bot_answers(runtime: ConversationRuntime) -> None:
    key = ConversationKey("slack", ("T1", "C1", "1700000000.000100"))
    assert not await runtime.owns(key)
    await collect(runtime.handle(key, TurnInput.typed("/echo hi")))
    assert await runtime.owns(key)
