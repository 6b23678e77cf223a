"""Native text streaming (chat.startStream/appendStream/stopStream) when SLACK_NATIVE_STREAMING is on."""

from __future__ import annotations

from tests.slack.agents import CardsAgent
from tests.slack.conftest import HarnessFactory


async def test_native_streaming_streams_the_answer_under_the_edit_rate(make_harness: HarnessFactory) -> None:
    harness = await make_harness(
        [CardsAgent(statuses=4, delay=0.1)], SLACK_NATIVE_STREAMING=True, CONCIERGE_EDIT_INTERVAL=0.2
    )
    api = harness.api
    await harness.slack.command("/hotel", "Porto")
    await harness.settle()
    root = api.channel_messages("C0GENERAL")[0]
    (start,) = api.calls_to("chat.startStream")
    # Streaming into a channel names the recipient.
    assert start.args["recipient_user_id"] == "U0ALICE" and start.args["recipient_team_id"] == "T0FAKE"
    assert start.args["thread_ts"] == root.ts
    assert len(api.calls_to("chat.stopStream")) == 1
    replies = api.thread("C0GENERAL", root.ts)
    streamed = next(m for m in replies if m.ts == api.calls_to("chat.startStream")[0].response["ts"])
    assert streamed.text == "Turn 1: 2 hotels for Porto." and not streamed.streaming
    gaps = [b - a for a, b in zip(streamed.edit_times, streamed.edit_times[1:], strict=False)]
    assert all(gap >= 0.2 * 0.95 for gap in gaps)
    # Progress went to a status message that is removed once the answer is there.
    assert api.calls_to("chat.delete")
    assert not any("Searching hotels" in m.text for m in replies)
    assert replies[-1].blocks and "Hôtel Lumière" in replies[-1].text


async def test_native_streaming_in_an_assistant_thread_uses_the_status_line(make_harness: HarnessFactory) -> None:
    harness = await make_harness([CardsAgent(statuses=2)], SLACK_NATIVE_STREAMING=True)
    api, slack = harness.api, harness.slack
    thread_ts = api.add_user_message("D0ALICE", "", user="U0ALICE")
    await slack.event(slack.message_event("/hotel Faro", channel="D0ALICE", channel_type="im", thread_ts=thread_ts))
    await harness.settle()
    assert api.calls_to("chat.startStream") and api.calls_to("chat.stopStream")
    assert not api.calls_to("chat.delete")
    assert "Turn 1: 2 hotels for Faro." in [m.text for m in api.thread("D0ALICE", thread_ts)]
    assert api.calls_to("assistant.threads.setStatus")[-1].args["status"] == ""
