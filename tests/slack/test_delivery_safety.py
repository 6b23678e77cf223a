"""Delivery safety: retried events answered once, signatures enforced, edit rate kept under 429s,
failed Slack calls retried or reported, the bot's own and other bots' messages ignored."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

from tests.fakes.slack_api import BOT_ID, BOT_TOKEN, BOT_USER_ID, SIGNING_SECRET
from tests.slack.agents import CardsAgent
from tests.slack.conftest import HarnessFactory, SlackHarness, work_calls


async def _thread_with_conversation(harness: SlackHarness, channel: str = "C0GENERAL") -> str:
    await harness.slack.command("/hotel", "Paris", channel=channel)
    await harness.settle()
    return harness.api.channel_messages(channel)[0].ts


async def test_retried_slack_event_is_answered_once(harness: SlackHarness) -> None:
    root = await _thread_with_conversation(harness)
    before = len(harness.api.thread("C0GENERAL", root))
    event = harness.slack.message_event("cheaper please", thread_ts=root)
    first = await harness.slack.event(event, event_id="Ev0RETRY")
    # Slack retries the same event_id with X-Slack-Retry-Num when it thinks the first try failed.
    again = await harness.slack.event(event, event_id="Ev0RETRY", retry_num=1)
    third = await harness.slack.event(event, event_id="Ev0RETRY", retry_num=2)
    assert [first.status, again.status, third.status] == [200, 200, 200]
    await harness.settle()
    replies = harness.api.thread("C0GENERAL", root)[before:]
    answers = [m for m in replies if m.text.startswith("Turn 2")]
    assert len(answers) == 1
    assert not any(m.text.startswith("Turn 3") for m in harness.api.thread("C0GENERAL", root))


@pytest.mark.parametrize(
    ("secret", "age"),
    [("wrong-secret", 0), (SIGNING_SECRET, 6 * 60)],
    ids=["bad-signature", "timestamp-older-than-5-minutes"],
)
async def test_unsigned_or_stale_request_is_refused_and_does_nothing(
    harness: SlackHarness, secret: str, age: int
) -> None:
    calls_before = len(harness.api.calls)
    stamp = int(time.time()) - age
    command = await harness.slack.command("/hotel", "Paris", secret=secret, timestamp=stamp)
    body = json.dumps(harness.slack.event_body(harness.slack.message_event("hi", channel="D0ALICE", channel_type="im")))
    event = await harness.slack.post(body, "application/json", secret=secret, timestamp=stamp)
    assert (command.status, event.status) == (401, 401)
    await asyncio.sleep(0.3)
    await harness.settle()
    assert work_calls(harness, calls_before) == []


async def test_no_message_is_edited_faster_than_the_configured_rate_and_the_latest_text_wins(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness([CardsAgent(statuses=30, delay=0.02)], CONCIERGE_EDIT_INTERVAL=0.25)
    await harness.slack.command("/hotel", "Lisbon")
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    status = harness.api.thread("C0GENERAL", root.ts)[0]
    gaps = [b - a for a, b in zip(status.edit_times, status.edit_times[1:], strict=False)]
    assert status.edits >= 2
    assert min(gaps) >= 0.25 * 0.95  # the editor waits at least the interval between edits
    assert status.edits < 30  # 30 progress lines were coalesced, not queued
    assert status.text == "Turn 1: 2 hotels for Lisbon."


async def test_rate_limited_edits_wait_for_retry_after_and_still_deliver(harness: SlackHarness) -> None:
    harness.api.rate_limit("chat.update", retry_after=0, times=4)
    await harness.slack.command("/hotel", "Oslo")
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    status = harness.api.thread("C0GENERAL", root.ts)[0]
    limited = [c for c in harness.api.calls_to("chat.update") if c.status == 429]
    assert len(limited) == 4
    assert status.text == "Turn 1: 2 hotels for Oslo."


async def test_a_message_slack_refuses_is_retried_without_images(harness: SlackHarness) -> None:
    await harness.slack.command("/hotel", "Rome")
    await harness.api.wait_for(lambda: len(harness.api.calls_to("chat.update")) >= 1)
    # Slack could not fetch a thumbnail: the cards message is refused once.
    harness.api.fail("chat.postMessage", error="invalid_blocks", times=1)
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    cards = harness.api.thread("C0GENERAL", root.ts)[-1]
    assert cards.blocks and all("accessory" not in b for b in cards.blocks)
    assert "Hôtel Lumière" in cards.text


async def test_a_status_message_slack_will_not_edit_is_replaced_by_a_new_message(harness: SlackHarness) -> None:
    await harness.slack.command("/hotel", "Kyoto")
    await harness.api.wait_for(lambda: len(harness.api.calls_to("chat.postMessage")) >= 2)
    harness.api.fail("chat.update", error="message_not_found", times=50)
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    texts = [m.text for m in harness.api.thread("C0GENERAL", root.ts)]
    assert "Turn 1: 2 hotels for Kyoto." in texts


async def test_an_answer_that_cannot_be_posted_is_reported_not_lost(harness: SlackHarness) -> None:
    await harness.slack.command("/hotel", "Kyoto")
    await harness.api.wait_for(lambda: len(harness.api.calls_to("chat.postMessage")) >= 2)
    harness.api.fail("chat.update", error="internal_error", times=50)
    harness.api.fail("chat.postMessage", error="internal_error", times=50)
    await harness.settle()
    # Every chat.* call fails: the user is told through the command's response_url.
    (_, body), *_ = harness.api.responses
    assert body["response_type"] == "ephemeral"
    assert "internal_error" in body["text"] and "Turn 1: 2 hotels for Kyoto." in body["text"]


async def test_bot_ignores_its_own_and_other_bots_messages(harness: SlackHarness) -> None:
    root = await _thread_with_conversation(harness)
    calls_before = len(harness.api.calls)
    own = harness.slack.message_event("my own echo", user=BOT_USER_ID, thread_ts=root, bot_id=BOT_ID)
    other = harness.slack.message_event("beep", user="U0OTHERBOT", thread_ts=root, bot_id="B0OTHER")
    subtype = harness.slack.message_event("beep", user="U0OTHERBOT", thread_ts=root, subtype="bot_message")
    for event in (own, other, subtype):
        assert (await harness.slack.event(event)).status == 200
    await asyncio.sleep(0.2)
    await harness.settle()
    assert work_calls(harness, calls_before) == []


async def test_secrets_never_reach_the_logs(harness: SlackHarness, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    harness.api.fail("chat.update", error="invalid_auth", times=5)
    await harness.slack.command("/hotel", "Paris")
    await harness.slack.command("/hotel", "Paris", secret="wrong")
    await harness.settle()
    assert BOT_TOKEN not in caplog.text and SIGNING_SECRET not in caplog.text
