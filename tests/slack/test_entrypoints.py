"""The real agents behind Slack, `serve()` in Socket Mode and in HTTP mode."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from adapters.slack.serve import serve
from agents.registry import registered_agents
from bot.app import App
from bot.conversation import ConversationKey
from tests.fakes.slack_api import APP_ID, BOT_USER_ID, SIGNING_SECRET, TEAM_ID, FakeSlackAPI, SlackDelivery
from tests.slack.conftest import HarnessFactory, slack_settings

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "proofread" / "fixtures"


async def test_hotel_command_with_the_real_hotel_agent_answers_with_hotel_cards(make_harness: HarnessFactory) -> None:
    harness = await make_harness(registered=True)
    api, slack = harness.api, harness.slack
    acked = await slack.command("/hotel", "Paris under $200 next weekend")
    assert acked.status == 200
    await harness.settle()
    root = api.channel_messages("C0GENERAL")[0]
    replies = api.thread("C0GENERAL", root.ts)
    status = replies[0]
    assert any("Searching hotels in Paris" in text for text in status.history)
    assert "hotels available in Paris" in status.text
    cards = next(m for m in replies if m.blocks)
    section = cards.blocks[0]
    assert "accessory" not in section  # the demo hotels have no photos: no broken image, a map instead
    assert [f.name for f in api.uploaded()] == ["hotel-map.png"]
    assert any(f["text"].startswith("*Price*") for f in section["fields"])
    assert any(f["text"].startswith("*Rating*") for f in section["fields"])
    assert any(e.get("url", "").startswith("https://www.google.com/maps") for e in cards.blocks[1]["elements"])

    # The follow-up in the thread continues the same conversation (Paris is remembered).
    await slack.event(slack.message_event("only ones under $150", thread_ts=root.ts))
    await harness.settle()
    key = ConversationKey("slack", (TEAM_ID, "C0GENERAL", root.ts))
    assert await harness.runtime.bound_agent(key) == "hotel"
    later = api.thread("C0GENERAL", root.ts)[len(replies) :]
    assert any("Paris" in m.text for m in later)


async def test_mention_with_a_markdown_file_is_proofread_by_the_real_agent(make_harness: HarnessFactory) -> None:
    harness = await make_harness(registered=True)
    api, slack = harness.api, harness.slack
    article = (FIXTURES / "markdown_broken.md").read_bytes()
    file = api.add_file("article.md", article)
    event = slack.message_event(f"<@{BOT_USER_ID}> please proofread this", type_="app_mention", files=[file])
    await slack.event(event)
    await harness.settle()
    replies = api.thread("C0GENERAL", event["ts"])
    assert any(m.text.startswith("校正結果:") for m in replies)  # a Japanese article, a Japanese summary
    summary = next(m for m in replies if m.blocks)
    assert summary.blocks[0]["text"]["text"].startswith("*校正結果:")
    report = api.uploaded()[0]
    assert report.name.endswith(".md") and report.thread_ts == event["ts"] and report.content


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def _serving(settings: Any, *, socket_mode: bool) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(serve(App(settings, registered_agents()), socket=socket_mode))
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_serve_in_socket_mode_acks_envelopes_and_answers(tmp_path: Path, slack_api: FakeSlackAPI) -> None:
    settings = slack_settings(tmp_path, slack_api, SLACK_APP_TOKEN=slack_api.app_token)
    async with _serving(settings, socket_mode=True):
        await slack_api.wait_for_socket(within=20)
        command = {
            "team_id": TEAM_ID,
            "channel_id": "C0GENERAL",
            "channel_name": "general",
            "user_id": "U0ALICE",
            "command": "/hotel",
            "text": "Rome",
            "api_app_id": APP_ID,
            "response_url": slack_api.response_url(),
            "trigger_id": "t-1",
        }
        ack = await slack_api.send_envelope("slash_commands", command)
        assert ack["envelope_id"].startswith("env-")
        root = await slack_api.wait_for(lambda: slack_api.channel_messages("C0GENERAL"), within=20)
        await slack_api.wait_for(lambda: any(m.blocks for m in slack_api.thread("C0GENERAL", root[0].ts)), within=20)
        # An Events API envelope delivered twice (retry_attempt 1) is answered once.
        delivery = SlackDelivery("unused", slack_api)
        event = delivery.event_body(
            delivery.message_event("cheaper please", thread_ts=root[0].ts), event_id="Ev0SOCKET"
        )
        before = len(slack_api.thread("C0GENERAL", root[0].ts))
        await slack_api.send_envelope("events_api", event)
        await slack_api.send_envelope("events_api", event, retry_attempt=1)
        await slack_api.wait_for(
            lambda: any(m.blocks for m in slack_api.thread("C0GENERAL", root[0].ts)[before:]), within=20
        )
        await asyncio.sleep(0.5)
    later = [m for m in slack_api.thread("C0GENERAL", root[0].ts)[before:] if m.user != "U0ALICE"]
    assert len([m for m in later if m.blocks]) == 1  # answered once


async def test_serve_over_http_verifies_signatures_and_answers(tmp_path: Path, slack_api: FakeSlackAPI) -> None:
    port = _free_port()
    settings = slack_settings(tmp_path, slack_api, PORT=port)
    async with _serving(settings, socket_mode=False):
        slack = SlackDelivery(f"http://127.0.0.1:{port}/slack/events", slack_api)
        async with slack:
            for _ in range(100):
                with contextlib.suppress(OSError):
                    if (await slack.command("/hotel", "Berlin", secret="wrong")).status == 401:
                        break
                await asyncio.sleep(0.1)
            assert (await slack.command("/hotel", "Berlin")).status == 200
            root = await slack_api.wait_for(lambda: slack_api.channel_messages("C0GENERAL"), within=20)
            await slack_api.wait_for(
                lambda: any(m.blocks for m in slack_api.thread("C0GENERAL", root[0].ts)), within=20
            )
    assert len(slack_api.channel_messages("C0GENERAL")) == 1


async def _bot_slack(tmp_path: Path, *args: str, **env: str) -> tuple[int, str]:
    """`python -m bot slack ARGS` as its own process, Slack settings from `env` only: (status, stderr)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "SLACK_"))}
    environ.update(CONCIERGE_DATA_DIR=str(tmp_path), CONCIERGE_LLM="offline", **env)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "slack", *args, cwd=ROOT, env=environ,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode or 0, err.decode()


async def test_serve_without_slack_settings_exits_with_a_readable_message(tmp_path: Path) -> None:
    code, err = await _bot_slack(tmp_path, "--socket")
    assert code == 2
    assert "SLACK_BOT_TOKEN" in err and "SLACK_SIGNING_SECRET" in err and "SLACK_APP_TOKEN" in err
    assert "Traceback" not in err


async def test_serve_with_a_token_slack_refuses_exits_without_echoing_it(tmp_path: Path, slack_api: FakeSlackAPI) -> None:
    code, err = await _bot_slack(
        tmp_path, SLACK_BOT_TOKEN="xoxb-revoked-secret-value", SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_BASE_URL=slack_api.base_url, PORT=str(_free_port()),
    )
    assert code == 2
    assert "invalid_auth" in err and "xoxb-revoked-secret-value" not in err and "Traceback" not in err
