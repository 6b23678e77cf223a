"""A real bolt AsyncApp served over HTTP on 127.0.0.1, its real AsyncWebClient pointed at the fake
Slack Web API, and a signed-delivery client playing Slack."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from adapters.slack.app import SlackBot, make_client
from agents.registry import registered_agents
from bot.agent import AgentDefinition
from bot.config import Settings, load_settings
from bot.runtime import ConversationRuntime
from tests.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, FakeSlackAPI, SlackDelivery
from tests.slack.agents import CardsAgent, ReportAgent
from tests.support.agents import ConfirmAgent
from tests.support.bots import serve_slack


@dataclass
class SlackHarness:
    api: FakeSlackAPI
    slack: SlackDelivery
    bot: SlackBot
    runtime: ConversationRuntime
    settings: Settings
    url: str

    async def settle(self) -> None:
        """Wait for every turn the bot started to finish."""
        await self.bot.tasks.drain(within=20)


def work_calls(harness: SlackHarness, since: int) -> list[str]:
    """Web API methods called after call number `since`, without bolt's cached auth.test."""
    return [c.method for c in harness.api.calls[since:] if c.method != "auth.test"]


def slack_settings(tmp_path: Path, api: FakeSlackAPI, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "CONCIERGE_DATA_DIR": tmp_path,
        "CONCIERGE_LLM": "offline",
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_BASE_URL": api.base_url,
        "CONCIERGE_EDIT_INTERVAL": 0.2,
        "_env_file": None,
    }
    values.update(overrides)
    return load_settings(**values)


@pytest.fixture
async def slack_api() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as api:
        yield api


HarnessFactory = Callable[..., Any]


@pytest.fixture
async def make_harness(tmp_path: Path, slack_api: FakeSlackAPI) -> AsyncIterator[HarnessFactory]:
    opened: list[tuple[SlackHarness, web.AppRunner]] = []

    async def make(
        agents: Sequence[AgentDefinition] | None = None, *, registered: bool = False, **overrides: Any
    ) -> SlackHarness:
        """A bot over `agents` (default: the small test agents; `registered=True`: the real ones)."""
        settings = slack_settings(tmp_path / f"h{len(opened)}", slack_api, **overrides)
        if agents is None:
            agents = registered_agents() if registered else [CardsAgent(), ReportAgent(), ConfirmAgent()]
        runtime = await ConversationRuntime.open(settings, agents=agents)
        bot = SlackBot(settings, runtime, client=make_client(settings))
        runner, url = await serve_slack(bot)
        harness = SlackHarness(slack_api, SlackDelivery(url, slack_api), bot, runtime, settings, url)
        opened.append((harness, runner))
        return harness

    yield make
    for harness, runner in reversed(opened):
        await harness.slack.close()
        await runner.cleanup()
        await harness.bot.close(within=5)
        await harness.runtime.close()


@pytest.fixture
async def harness(make_harness: HarnessFactory) -> SlackHarness:
    return await make_harness()
