"""Buttons that resume an interrupted graph, shared files, mentions, DMs and assistant threads."""

from __future__ import annotations

import asyncio
import copy

from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, find_button
from tests.slack.conftest import HarnessFactory, SlackHarness, work_calls


async def test_button_press_resumes_the_waiting_graph_once(harness: SlackHarness) -> None:
    api, slack = harness.api, harness.slack
    await slack.command("/confirm", "delete the cart")
    await harness.settle()
    root = api.channel_messages("C0GENERAL")[0]
    question = api.thread("C0GENERAL", root.ts)[-1]
    assert "Really delete the cart?" in question.text
    confirm = find_button(question, "Confirm")
    assert confirm["style"] == "primary" and find_button(question, "Cancel")["style"] == "danger"

    stale = copy.deepcopy(question)
    pressed = await slack.block_action(question, action_id=confirm["action_id"], value=confirm["value"])
    assert pressed.status == 200
    await harness.settle()
    texts = [m.text for m in api.thread("C0GENERAL", root.ts)]
    assert texts.count("Decision: confirm") == 1
    # The buttons are replaced by who chose what.
    answered = api.messages[("C0GENERAL", question.ts)]
    assert not any(b["type"] == "actions" for b in answered.blocks)
    assert any("<@U0ALICE> chose *Confirm*" in str(b) for b in answered.blocks)

    # A second press (a stale copy of the message, or a double click) is ignored.
    cancel = find_button(stale, "Cancel")
    calls = len(api.calls)
    again = await slack.block_action(stale, action_id=cancel["action_id"], value=cancel["value"])
    assert again.status == 200
    await asyncio.sleep(0.2)
    await harness.settle()
    assert work_calls(harness, calls) == []
    assert "Decision: cancel" not in [m.text for m in api.thread("C0GENERAL", root.ts)]


async def test_button_value_from_another_channel_is_ignored(harness: SlackHarness) -> None:
    await harness.slack.command("/confirm", "pay")
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    question = harness.api.thread("C0GENERAL", root.ts)[-1]
    confirm = find_button(question, "Confirm")
    question.channel = "C0ELSEWHERE"  # the same button value replayed from another channel
    calls = len(harness.api.calls)
    await harness.slack.block_action(question, action_id=confirm["action_id"], value=confirm["value"])
    await asyncio.sleep(0.2)
    await harness.settle()
    assert work_calls(harness, calls) == []


async def test_shared_markdown_file_is_proofread_and_the_report_uploaded(harness: SlackHarness) -> None:
    api, slack = harness.api, harness.slack
    await slack.command("/proofread", "my article")
    await harness.settle()
    root = api.channel_messages("C0GENERAL")[0]
    file = api.add_file("article.md", b"# Title\n\nSome text.\n\nMore text.\n")
    event = slack.message_event("", thread_ts=root.ts, files=[file])
    await slack.event(event)
    await harness.settle()
    texts = [m.text for m in api.thread("C0GENERAL", root.ts)]
    assert "Proofread article.md: 5 lines, no issues." in texts
    # Downloaded with the bot token; the summary card and the full report follow.
    assert api.downloads and api.downloads[-1][1] == f"Bearer {api.bot_token}"
    summary = api.thread("C0GENERAL", root.ts)[-1]
    assert "Proofreading: article.md" in summary.text
    assert {"type": "mrkdwn", "text": "*Score*\n100"} in summary.blocks[0]["fields"]
    report = api.uploaded()[-1]
    assert report.name == "proofread-report.md" and report.thread_ts == root.ts
    assert report.content.startswith(b"# Report for article.md")


async def test_oversized_binary_or_foreign_files_get_a_clear_reply_and_are_not_proofread(
    make_harness: HarnessFactory,
) -> None:
    harness = await make_harness(CONCIERGE_MAX_ATTACHMENT_BYTES=1000)
    api, slack = harness.api, harness.slack
    await slack.command("/proofread", "my article")
    await harness.settle()
    root = api.channel_messages("C0GENERAL")[0]
    big = api.add_file("big.md", b"x" * 10, claimed_size=5_000_000)
    lying = api.add_file("lying.md", b"y" * 5000, claimed_size=100)
    binary = api.add_file("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    pdf = api.add_file("paper.pdf", b"%PDF-1.4", mimetype="application/pdf", filetype="pdf")
    for file in (big, lying, binary, pdf):
        await slack.event(slack.message_event("", thread_ts=root.ts, files=[file]))
    await harness.settle()
    replies = [m.text for m in api.thread("C0GENERAL", root.ts) if m.text.startswith("⚠️")]
    assert any("`big.md` is 5.0 MB; the limit is 1 KB" in t for t in replies)
    assert any("`lying.md` is larger than 1 KB" in t for t in replies)
    assert any("`image.md` looks like a binary file" in t for t in replies)
    assert any("`paper.pdf` is not a Markdown or text file (PDF)" in t for t in replies)
    # Metadata checks happen before any download.
    downloaded = {path.rsplit("/", 1)[-1] for path, _ in api.downloads}
    assert downloaded == {"lying.md", "image.md"}
    answers = [m.text for m in api.thread("C0GENERAL", root.ts) if m.text.startswith("Proofread")]
    assert answers == ["Proofread message: 1 lines, no issues."]  # only the command's own turn


async def test_mention_starts_a_thread_conversation_routed_by_intent(harness: SlackHarness) -> None:
    api, slack = harness.api, harness.slack
    event = slack.message_event(f"<@{BOT_USER_ID}> find a hotel in Vienna", type_="app_mention")
    # Slack also sends the message event for the same message: it must not answer twice.
    message = dict(event, type="message", ts=event["ts"])
    await slack.event(event)
    await slack.event(message)
    await harness.settle()
    replies = api.thread("C0GENERAL", event["ts"])
    assert [m.text for m in replies if m.text.startswith("Turn")] == ["Turn 1: 2 hotels for find a hotel in Vienna."]
    # Follow-ups in that thread need no mention.
    await slack.event(slack.message_event("near the opera", thread_ts=event["ts"]))
    await harness.settle()
    assert "Turn 2: 2 hotels for near the opera." in [m.text for m in api.thread("C0GENERAL", event["ts"])]


async def test_replies_in_threads_the_bot_does_not_own_are_ignored(harness: SlackHarness) -> None:
    ts = harness.api.add_user_message("C0GENERAL", "lunch?", user="U0BOB")
    calls = len(harness.api.calls)
    await harness.slack.event(harness.slack.message_event("sure, hotel bar at noon", thread_ts=ts))
    await harness.settle()
    assert work_calls(harness, calls) == []


async def test_direct_messages_are_one_rolling_conversation_until_reset(harness: SlackHarness) -> None:
    api, slack = harness.api, harness.slack
    dm = {"channel": "D0ALICE", "channel_type": "im"}
    await slack.event(slack.message_event("/hotel Madrid", **dm))
    await harness.settle()
    await slack.event(slack.message_event("with breakfast", **dm))
    await harness.settle()
    answers = [m.text for m in api.channel_messages("D0ALICE") if m.user == BOT_USER_ID]
    assert "Turn 1: 2 hotels for Madrid." in answers
    assert "Turn 2: 2 hotels for with breakfast." in answers
    assert all(m.thread_ts is None for m in api.bot_messages())

    # A slash command in the DM joins the same conversation; /reset starts a fresh one.
    await slack.command("/hotel", "Seville", channel="D0ALICE", channel_name="directmessage")
    await harness.settle()
    assert "Turn 3: 2 hotels for Seville." in [m.text for m in api.channel_messages("D0ALICE")]
    reset = await slack.command("/reset", channel="D0ALICE", channel_name="directmessage")
    assert reset.json()["response_type"] == "ephemeral"
    await harness.settle()
    await slack.event(slack.message_event("/hotel Bilbao", **dm))
    await harness.settle()
    assert "Turn 1: 2 hotels for Bilbao." in [m.text for m in api.channel_messages("D0ALICE")]


async def test_assistant_thread_gets_prompts_status_and_answers(harness: SlackHarness) -> None:
    api, slack = harness.api, harness.slack
    thread_ts = api.add_user_message("D0ALICE", "", user="U0ALICE")
    started = {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": "U0ALICE",
            "context": {"channel_id": "C0GENERAL", "team_id": TEAM_ID, "enterprise_id": None},
            "channel_id": "D0ALICE",
            "thread_ts": thread_ts,
        },
        "event_ts": thread_ts,
    }
    await slack.event(started)
    (prompts,) = await api.wait_for(lambda: api.calls_to("assistant.threads.setSuggestedPrompts"))
    assert {"title": "find hotels", "message": "/hotel Paris under $200"} in prompts.args["prompts"]
    await api.wait_for(lambda: api.thread("D0ALICE", thread_ts))
    assert "/hotel" in api.thread("D0ALICE", thread_ts)[0].text

    event = slack.message_event("/hotel Prague", channel="D0ALICE", channel_type="im", thread_ts=thread_ts)
    await slack.event(event)
    await harness.settle()
    statuses = [c.args["status"] for c in api.calls_to("assistant.threads.setStatus")]
    assert statuses[0] == "Working on it…" and statuses[-1] == ""
    answers = [m.text for m in api.thread("D0ALICE", thread_ts)]
    assert "Turn 1: 2 hotels for Prague." in answers
    await slack.event(slack.message_event("quieter", channel="D0ALICE", channel_type="im", thread_ts=thread_ts))
    await harness.settle()
    assert "Turn 2: 2 hotels for quieter." in [m.text for m in api.thread("D0ALICE", thread_ts)]
