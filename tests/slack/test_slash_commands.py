"""Slash commands end to end: the real bolt AsyncApp over HTTP, signed requests, the fake Web API."""

from __future__ import annotations

from agents.registry import registered_agents
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID
from tests.slack.agents import CardsAgent
from tests.slack.conftest import HarnessFactory, SlackHarness


async def test_hotel_command_acks_then_answers_in_a_thread_keyed_by_the_root_message(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness([CardsAgent(statuses=3, delay=0.25)])
    api, slack = harness.api, harness.slack
    acked = await slack.command("/hotel", "Paris under $200", user="U0ALICE", channel="C0GENERAL")
    assert acked.status == 200 and acked.elapsed < 3.0
    await harness.settle()

    root = api.channel_messages("C0GENERAL")[0]
    assert "<@U0ALICE>" in root.text and "/hotel Paris under $200" in root.text
    replies = api.thread("C0GENERAL", root.ts)
    status, cards = replies[0], replies[-1]
    # The status reply was edited while the agent worked and ends as the answer.
    assert any("Searching hotels" in text for text in status.history)
    assert status.text.startswith("Turn 1: 2 hotels for Paris under $200")
    assert cards.blocks and "Hôtel Lumière" in cards.text  # plain-text fallback
    section = cards.blocks[0]
    assert section["accessory"]["image_url"] == "https://img.example.com/lumiere.jpg"
    assert {"type": "mrkdwn", "text": "*Price*\n$180 / night"} in section["fields"]
    map_button = cards.blocks[1]["elements"][0]
    assert map_button["url"].startswith("https://www.google.com/maps/search/?api=1&query=48.856600")
    assert await harness.runtime.owns(harness_key(root.ts))

    # A reply in the thread (no mention) continues the same checkpoint thread.
    event = slack.message_event("and with a pool?", user="U0ALICE", channel="C0GENERAL", thread_ts=root.ts)
    assert (await slack.event(event)).status == 200
    await harness.settle()
    replies = api.thread("C0GENERAL", root.ts)
    answers = [m for m in replies if m.user == BOT_USER_ID and m.text.startswith("Turn ")]
    assert [m.text.split(":")[0] for m in answers] == ["Turn 1", "Turn 2"]
    assert "and with a pool?" in answers[-1].text


def harness_key(ts: str):  # type: ignore[no-untyped-def]
    from bot.conversation import ConversationKey

    return ConversationKey("slack", (TEAM_ID, "C0GENERAL", ts))


async def test_empty_command_gets_ephemeral_usage_help_and_starts_nothing(harness: SlackHarness) -> None:
    acked = await harness.slack.command("/hotel", "   ")
    assert acked.status == 200
    body = acked.json()
    assert body["response_type"] == "ephemeral"
    assert "/hotel Paris under $200" in body["text"]
    await harness.settle()
    assert harness.api.calls_to("chat.postMessage") == []


async def test_command_in_a_channel_the_bot_cannot_post_in_is_reported_to_the_user(harness: SlackHarness) -> None:
    harness.api.fail("chat.postMessage", error="not_in_channel")
    await harness.slack.command("/hotel", "Rome", channel="C0PRIVATE")
    await harness.api.wait_for(lambda: harness.api.responses)
    await harness.settle()
    _, body = harness.api.responses[0]
    assert body["response_type"] == "ephemeral" and "/invite" in body["text"]


async def test_long_answers_are_split_at_slacks_limit_on_paragraph_boundaries(make_harness: HarnessFactory) -> None:
    harness = await make_harness([CardsAgent(statuses=1, answer_chars=8000)])
    await harness.slack.command("/hotel", "Nice")
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    parts = [m.text for m in harness.api.thread("C0GENERAL", root.ts) if not m.blocks]
    assert len(parts) >= 3 and all(len(p) <= 3000 for p in parts)
    assert parts[0].startswith("Turn 1: 2 hotels for Nice.")
    assert all(p.startswith(("Turn 1", "Paragraph")) for p in parts)  # cut between paragraphs
    assert sum(p.count("Paragraph ") for p in parts) == 8000 // 250 + 1


async def test_a_reply_sent_while_the_first_turn_runs_is_answered_after_it_in_order(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness([CardsAgent(statuses=3, delay=0.2)])
    api, slack = harness.api, harness.slack
    await slack.command("/hotel", "Vienna")
    (root,) = await api.wait_for(lambda: api.channel_messages("C0GENERAL"))
    await slack.event(slack.message_event("near the opera", thread_ts=root.ts))
    await harness.settle()
    answers = [m.text for m in api.thread("C0GENERAL", root.ts) if m.text.startswith("Turn")]
    assert answers == ["Turn 1: 2 hotels for Vienna.", "Turn 2: 2 hotels for near the opera."]


async def test_a_plugin_agent_answers_its_slash_command_on_slack(make_harness: HarnessFactory) -> None:
    harness = await make_harness(registered_agents("tests.plugins.todo:TodoAgent"))
    acked = await harness.slack.command("/todo", "water the plants")
    assert acked.status == 200
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    assert any(m.text == "To do: water the plants" for m in harness.api.thread("C0GENERAL", root.ts))
