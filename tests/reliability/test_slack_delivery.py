"""Delivery when Slack misbehaves: a status message that cannot be edited any more is replaced by a
new message carrying the whole answer (text, cards, buttons, files) and tidied away; a rate limit
said in an `ok: false` 200 is waited out like a 429. Nothing the agent answered is lost."""

from __future__ import annotations

import pytest

from tests.fakes.slack_api import FakeMessage
from tests.slack.conftest import SlackHarness, harness, make_harness, slack_api  # noqa: F401  (fixtures)

ANSWER = "Proofread message: 1 lines, no issues."


def answer_edit(args: dict[str, object]) -> bool:
    return "Proofread" in str(args.get("text") or "")


def thread_of_first_command(running: SlackHarness) -> list[FakeMessage]:
    root = running.api.channel_messages("C0GENERAL")[0]
    return running.api.thread("C0GENERAL", root.ts)


def assert_whole_answer_delivered(running: SlackHarness) -> None:
    thread = thread_of_first_command(running)
    texts = [m.text for m in thread]
    assert ANSWER in texts
    assert any(m.blocks and "Proofreading: message" in m.text for m in thread)  # the card
    assert [f.name for f in running.api.uploaded()] == ["proofread-report.md"]  # the file
    assert not any("couldn't show" in t for t in texts)


async def test_an_answer_whose_status_message_cannot_be_edited_is_posted_anew_with_its_card_and_file(
    harness: SlackHarness,  # noqa: F811
) -> None:
    # chat.update fails for good, past the client's and the editor's retries.
    harness.api.fail("chat.update", error="internal_error", times=1000)
    assert (await harness.slack.command("/proofread", "one line")).status == 200
    await harness.settle()
    assert_whole_answer_delivered(harness)
    # The stale "Working on it…" status message was deleted.
    assert not any("Working on it" in m.text for m in thread_of_first_command(harness))
    assert harness.api.calls_to("chat.delete")
    assert harness.api.responses == []  # nothing needed reporting privately


async def test_a_status_message_that_can_be_neither_edited_nor_deleted_points_to_the_answer(
    harness: SlackHarness,  # noqa: F811
) -> None:
    harness.api.fail("chat.update", error="internal_error", times=1000, when=answer_edit)
    harness.api.fail("chat.delete", error="internal_error", times=1000)
    assert (await harness.slack.command("/proofread", "one line")).status == 200
    await harness.settle()
    assert_whole_answer_delivered(harness)
    status = thread_of_first_command(harness)[0]
    assert "answer" in status.text and "below" in status.text
    assert ANSWER not in status.text


async def test_buttons_survive_when_the_status_message_cannot_be_edited(harness: SlackHarness) -> None:  # noqa: F811
    harness.api.fail("chat.update", error="internal_error", times=1000)
    assert (await harness.slack.command("/confirm", "cancel my order")).status == 200
    await harness.settle()
    thread = thread_of_first_command(harness)
    buttons = [e for m in thread for b in m.blocks if b.get("type") == "actions" for e in b.get("elements", [])]
    assert buttons, [m.text for m in thread]
    assert not any("couldn't show" in m.text for m in thread)


@pytest.mark.parametrize("retry_after", [1, None], ids=["with-retry-after", "without-retry-after"])
async def test_ratelimited_in_an_ok_false_200_is_waited_out_like_a_429(
    harness: SlackHarness, retry_after: int | None  # noqa: F811
) -> None:
    await harness.slack.command("/hotel", "Rome")
    await harness.api.wait_for(lambda: len(harness.api.calls_to("chat.postMessage")) >= 2)
    # The cards message (the next chat.postMessage) is refused once with HTTP 200, ok: false.
    harness.api.rate_limit("chat.postMessage", retry_after=retry_after, status=200)
    await harness.settle()
    posts = harness.api.calls_to("chat.postMessage")
    limited = [i for i, c in enumerate(posts) if c.response.get("error") == "ratelimited"]
    assert len(limited) == 1
    retried = posts[limited[0] + 1]
    assert retried.ok and retried.args.get("blocks") == posts[limited[0]].args.get("blocks")
    if retry_after is not None:
        assert retried.at - posts[limited[0]].at >= retry_after * 0.95  # Retry-After was honoured
    thread = thread_of_first_command(harness)
    assert any(m.blocks and "Hôtel Lumière" in m.text for m in thread)
    assert not any("couldn't show" in m.text for m in thread)
