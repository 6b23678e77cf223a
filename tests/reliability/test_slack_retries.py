"""Retries do not stack: slack_sdk's retry handlers are the one policy for Slack calls, and the
renderer does not retry what they already retried. Under persistent HTTP 500s one message write
is three HTTP calls (the call and two retries), not three per renderer attempt; Slack's own
`ok: false, internal_error` (which the SDK does not retry) is still tried again."""

from __future__ import annotations

from tests.slack.conftest import SlackHarness, harness, make_harness, slack_api  # noqa: F401  (fixtures)


def in_thread(args: dict[str, object]) -> bool:
    return bool(args.get("thread_ts"))


async def test_a_status_message_under_persistent_500s_costs_three_calls_per_write(harness: SlackHarness) -> None:  # noqa: F811
    harness.api.fail("chat.postMessage", status=500, times=1000, when=in_thread)
    assert (await harness.slack.command("/hotel", "Oslo")).status == 200
    await harness.settle()
    posts = [c for c in harness.api.calls_to("chat.postMessage") if in_thread(c.args)]
    # Every write in the thread (the status message, the answer posted anew, the failure note)
    # is one SDK call plus its two retries: a multiple of three, and no write retried on top.
    assert posts and len(posts) % 3 == 0
    writes = len(posts) // 3
    assert writes <= 3, [c.args.get("text") for c in posts]


async def test_slacks_own_internal_error_is_tried_again_by_the_renderer(harness: SlackHarness) -> None:  # noqa: F811
    harness.api.fail("chat.postMessage", error="internal_error", times=1, when=in_thread)
    await harness.slack.command("/hotel", "Oslo")
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    thread = harness.api.thread("C0GENERAL", root.ts)
    assert thread and thread[0].text == "Turn 1: 2 hotels for Oslo."
