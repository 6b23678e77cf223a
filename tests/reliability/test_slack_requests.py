"""Hostile and odd requests to the Slack endpoint (`python -m bot slack`'s HTTP app, served on
127.0.0.1): refused with 400/401 before any parsing, never a 500 with a traceback; replays answered
once; events the bot has no use for acknowledged; nothing of a refused body in the logs."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from urllib.parse import urlencode

import pytest
from aiohttp import ClientSession

from tests.fakes.slack_api import APP_ID, SIGNING_SECRET, sign
from tests.slack.conftest import HarnessFactory, SlackHarness, harness, make_harness, slack_api, work_calls  # noqa: F401  (fixtures)
from tests.support.waiting import eventually

# A token-like value inside request bodies: it must never reach the logs.
LEAKED = "xoxp-body-secret-0123456789"


def command_form(**fields: str) -> dict[str, str]:
    form = {
        "token": LEAKED,
        "team_id": "T0FAKE",
        "channel_id": "C0GENERAL",
        "channel_name": "general",
        "user_id": "U0ALICE",
        "user_name": "alice",
        "command": "/hotel",
        "text": "Paris",
        "api_app_id": APP_ID,
        "response_url": "http://127.0.0.1:9/response/R1",
        "trigger_id": "trigger-replayed-1",
    }
    form.update(fields)
    return {k: v for k, v in form.items() if v != "<absent>"}


async def raw_post(running: SlackHarness, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    async with ClientSession() as session, session.post(running.url, data=body, headers=headers) as resp:
        return resp.status, await resp.text()


def server_errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


MALFORMED = [
    pytest.param(b"{not json", "application/json", id="broken-json"),
    pytest.param(b"[1, 2, 3]", "application/json", id="json-not-an-object"),
    pytest.param(b"payload=%7Bbroken", "application/x-www-form-urlencoded", id="broken-payload"),
    pytest.param(b"payload=%5B%5D", "application/x-www-form-urlencoded", id="payload-not-an-object"),
    pytest.param(b"\xff\xfe\x00token=" + LEAKED.encode(), "application/x-www-form-urlencoded", id="not-utf8"),
    pytest.param(b'{"token": "' + LEAKED.encode() + b'", "type": ', "application/json", id="truncated"),
]


@pytest.mark.parametrize(("body", "content_type"), MALFORMED)
async def test_unsigned_malformed_body_is_refused_before_it_is_parsed(
    harness: SlackHarness, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str  # noqa: F811
) -> None:
    caplog.set_level(logging.DEBUG)
    calls_before = len(harness.api.calls)
    headers = {"Content-Type": content_type, **sign("whatever", secret="not-the-secret")}
    status, _ = await raw_post(harness, body, headers)
    assert status in (400, 401)
    assert server_errors(caplog) == []
    assert LEAKED not in caplog.text
    await harness.settle()
    assert work_calls(harness, calls_before) == []


@pytest.mark.parametrize(("body", "content_type"), MALFORMED)
async def test_signed_malformed_body_gets_400_not_500(
    harness: SlackHarness, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str  # noqa: F811
) -> None:
    caplog.set_level(logging.INFO)
    stamp = str(int(time.time()))
    # Signed over the raw bytes, as Slack signs them.
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}
    status, _ = await raw_post(harness, body, headers)
    assert status == 400
    assert server_errors(caplog) == []
    assert LEAKED not in caplog.text


@pytest.mark.parametrize("stamp", ["abc", "", "1e9", "-5", "9" * 5000, "１７００００００００"])
async def test_a_timestamp_that_is_not_a_number_gets_400(
    harness: SlackHarness, caplog: pytest.LogCaptureFixture, stamp: str  # noqa: F811
) -> None:
    caplog.set_level(logging.INFO)
    body = urlencode(command_form())
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": sign(body)["X-Slack-Signature"],
    }
    calls_before = len(harness.api.calls)
    status, _ = await raw_post(harness, body.encode(), headers)
    assert status == 400
    assert server_errors(caplog) == []
    await harness.settle()
    assert work_calls(harness, calls_before) == []


async def test_a_signed_slash_command_replayed_within_five_minutes_runs_once(harness: SlackHarness) -> None:  # noqa: F811
    body = urlencode(command_form(trigger_id="trigger-replayed-7"))
    stamp = int(time.time())
    first = await harness.slack.post(body, "application/x-www-form-urlencoded", timestamp=stamp)
    # An attacker (or a proxy retrying) sends the very same signed request again.
    again = await harness.slack.post(body, "application/x-www-form-urlencoded", timestamp=stamp)
    third = await harness.slack.post(body, "application/x-www-form-urlencoded", timestamp=stamp)
    assert (first.status, again.status, third.status) == (200, 200, 200)
    await harness.settle()
    roots = harness.api.channel_messages("C0GENERAL")
    assert len(roots) == 1
    answers = [m for m in harness.api.thread("C0GENERAL", roots[0].ts) if m.text.startswith("Turn 1")]
    assert len(answers) == 1


async def test_a_replayed_slash_command_is_answered_once_by_every_process(make_harness: HarnessFactory) -> None:  # noqa: F811
    # Two bots on one database (two processes behind a load balancer share the app database).
    first_bot = await make_harness()
    second_bot = await make_harness(CONCIERGE_DATA_DIR=first_bot.settings.data_dir)
    body = urlencode(command_form(trigger_id="trigger-replayed-9"))
    stamp = int(time.time())
    assert (await first_bot.slack.post(body, "application/x-www-form-urlencoded", timestamp=stamp)).status == 200
    assert (await second_bot.slack.post(body, "application/x-www-form-urlencoded", timestamp=stamp)).status == 200
    await first_bot.settle()
    await second_bot.settle()
    assert len(first_bot.api.channel_messages("C0GENERAL")) == 1


@pytest.mark.parametrize("event_type", ["reaction_added", "member_joined_channel", "pin_added", "a_type_from_the_future"])
async def test_an_event_the_bot_does_not_handle_is_acknowledged_and_ignored(
    harness: SlackHarness, caplog: pytest.LogCaptureFixture, event_type: str  # noqa: F811
) -> None:
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="adapters.slack.app")  # to see the event reach its listener
    calls_before = len(harness.api.calls)
    event = {"type": event_type, "user": "U0ALICE", "channel": "C0GENERAL", "event_ts": "1.2", "note": LEAKED}
    body = harness.slack.event_body(event)
    body["token"] = LEAKED
    delivered = await harness.slack.post(json.dumps(body), "application/json")
    assert delivered.status == 200
    ignored = f"Slack event {event_type} ignored"
    await eventually(lambda: any(r.getMessage() == ignored for r in caplog.records), "the catch-all listener")
    await harness.settle()
    assert work_calls(harness, calls_before) == []
    assert LEAKED not in "".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)


async def test_a_button_the_bot_does_not_know_is_acknowledged_and_ignored(harness: SlackHarness) -> None:  # noqa: F811
    await harness.slack.command("/hotel", "Paris")
    await harness.settle()
    message = harness.api.channel_messages("C0GENERAL")[0]
    calls_before = len(harness.api.calls)
    pressed = await harness.slack.block_action(message, action_id="feature_long_gone.1", value="x")
    assert pressed.status == 200
    await harness.settle()
    assert work_calls(harness, calls_before) == []


@pytest.mark.parametrize("missing", ["channel_id", "user_id"])
async def test_a_slash_command_without_its_channel_or_user_gets_a_clear_error(
    harness: SlackHarness, caplog: pytest.LogCaptureFixture, missing: str  # noqa: F811
) -> None:
    caplog.set_level(logging.INFO)
    calls_before = len(harness.api.calls)
    body = urlencode(command_form(**{missing: "<absent>", "trigger_id": f"trigger-no-{missing}"}))
    delivered = await harness.slack.post(body, "application/x-www-form-urlencoded")
    assert delivered.status in (200, 400)
    if delivered.status == 200:
        answer = delivered.json()
        assert answer["response_type"] == "ephemeral"
        assert "channel" in answer["text"] or "user" in answer["text"]
    assert server_errors(caplog) == []
    await harness.settle()
    assert work_calls(harness, calls_before) == []


async def test_refused_request_bodies_never_reach_the_logs(
    harness: SlackHarness, caplog: pytest.LogCaptureFixture  # noqa: F811
) -> None:
    caplog.set_level(logging.DEBUG)
    body = urlencode(command_form(trigger_id="trigger-logged"))
    await harness.slack.post(body, "application/x-www-form-urlencoded", secret="wrong-secret")
    await harness.slack.post(body, "application/x-www-form-urlencoded", timestamp=int(time.time()) - 3600)
    headers = {"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": "soon"}
    await raw_post(harness, body.encode(), headers)
    await harness.settle()
    assert LEAKED not in caplog.text
    assert SIGNING_SECRET not in caplog.text
