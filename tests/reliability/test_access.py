"""Access control: the policy table (workspaces, channels, DMs, users, roles, admins; empty lists
let everyone in), and turns through the real Slack client against the fake Slack — a user who
is not allowed gets a polite refusal and nothing runs; allowed users and admins are answered; and
the real discord.py client against the fake Discord — a refused slash command is answered
privately and opens no thread, a member with an allowed role is answered."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.access import (
    NO_DIRECT_MESSAGES,
    NOT_THIS_CHANNEL,
    NOT_THIS_USER,
    NOT_THIS_WORKSPACE,
    AccessPolicy,
)
from bot.agent import TurnInput
from bot.config import load_settings
from tests.fakes.discord_api import GUILD_ID as DISCORD_GUILD
from tests.fakes.discord_api import FakeDiscordAPI
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID
from tests.slack.agents import CardsAgent
from tests.slack.conftest import HarnessFactory, SlackHarness, make_harness, slack_api  # noqa: F401
from tests.support.bots import RunningDiscord, discord_settings, restore_discord_defaults, start_discord

ORIGINAL_BASE, ORIGINAL_GATEWAY = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY


def turn(user: str = "U1", *, workspace: str = "T1", channel: str = "C1", roles: tuple[str, ...] | None = None,
         direct: bool = False) -> TurnInput:
    return TurnInput(text="hi", user_id=user, workspace_id=workspace, channel_id=channel, roles=roles, direct=direct)


def test_empty_lists_let_everyone_in() -> None:
    policy = AccessPolicy()
    assert policy.refusal("slack", turn()) is None
    assert policy.refusal("discord", turn(workspace="", direct=True)) is None


@pytest.mark.parametrize(
    ("policy", "platform", "incoming", "expected"),
    [
        (AccessPolicy(workspaces=frozenset({"T1"})), "slack", turn(), None),
        (AccessPolicy(workspaces=frozenset({"T1"})), "slack", turn(workspace="T2"), NOT_THIS_WORKSPACE),
        # A Discord DM has no guild: a workspace list keeps it out.
        (AccessPolicy(workspaces=frozenset({"G1"})), "discord", turn(workspace="", direct=True), NOT_THIS_WORKSPACE),
        (AccessPolicy(channels=frozenset({"C1"})), "slack", turn(), None),
        (AccessPolicy(channels=frozenset({"C1"})), "slack", turn(channel="C2"), NOT_THIS_CHANNEL),
        # The channel list is for channels; direct messages follow allow_dms.
        (AccessPolicy(channels=frozenset({"C1"})), "slack", turn(channel="D9", direct=True), None),
        (AccessPolicy(allow_dms=False), "slack", turn(channel="D9", direct=True), NO_DIRECT_MESSAGES),
        (AccessPolicy(users=frozenset({"U1"})), "slack", turn(), None),
        (AccessPolicy(users=frozenset({"U1"})), "slack", turn("U2"), NOT_THIS_USER),
        # Users and roles each grant access; roles count only where members have them.
        (AccessPolicy(roles=frozenset({"R1"})), "discord", turn("U2", roles=("R0", "R1")), None),
        (AccessPolicy(roles=frozenset({"R1"})), "discord", turn("U2", roles=("R0",)), NOT_THIS_USER),
        (AccessPolicy(users=frozenset({"U1"}), roles=frozenset({"R1"})), "discord", turn("U1", roles=()), None),
        (AccessPolicy(roles=frozenset({"R1"})), "discord", turn("U2", roles=()), NOT_THIS_USER),
        (AccessPolicy(roles=frozenset({"R1"})), "slack", turn("U2"), None),
        # Admins and the console are always let in.
        (AccessPolicy(workspaces=frozenset({"T1"}), channels=frozenset({"C1"}), users=frozenset({"U1"}),
                      allow_dms=False, admins=frozenset({"UA"})),
         "slack", turn("UA", workspace="T9", channel="D9", direct=True), None),
        (AccessPolicy(users=frozenset({"U1"}), allow_dms=False), "console", turn("someone", direct=True), None),
    ],
)
def test_policy_table(policy: AccessPolicy, platform: str, incoming: TurnInput, expected: str | None) -> None:
    assert policy.refusal(platform, incoming) == expected


def test_settings_take_comma_separated_ids_and_default_to_everyone() -> None:
    settings = load_settings(
        CONCIERGE_ALLOWED_USERS="U1, U2,", CONCIERGE_ADMINS="UA", CONCIERGE_ALLOW_DMS="false", _env_file=None
    )
    policy = AccessPolicy.from_settings(settings)
    assert policy.users == {"U1", "U2"} and policy.admins == {"UA"} and not policy.allow_dms
    assert AccessPolicy.from_settings(load_settings(_env_file=None)) == AccessPolicy()


ANSWER = ["Turn 1: 2 hotels for find a hotel in Vienna."]  # the test agent's text (its cards follow)


async def mention(harness: SlackHarness, user: str, text: str = "find a hotel in Vienna") -> list[str]:
    """Mention the bot in #general as `user`; the texts of the bot's replies in that thread."""
    event = harness.slack.message_event(f"<@{BOT_USER_ID}> {text}", user=user, type_="app_mention")
    await harness.slack.event(event)
    await harness.settle()
    return [m.text for m in harness.api.thread("C0GENERAL", event["ts"]) if m.user == BOT_USER_ID and not m.blocks]


async def test_a_user_not_allowed_is_refused_politely_and_nothing_runs(make_harness: HarnessFactory) -> None:  # noqa: F811
    harness = await make_harness(CONCIERGE_ALLOWED_USERS="U0ALICE", CONCIERGE_ADMINS="U0ADMIN")
    replies = await mention(harness, "U0MALLORY")
    assert len(replies) == 1 and NOT_THIS_USER in replies[0]
    assert not any(text.startswith("Turn") for text in replies)
    assert await harness.runtime.app_db.threads_in_states(["idle", "processing", "responding", "error"]) == []

    assert await mention(harness, "U0ALICE") == ANSWER
    assert await mention(harness, "U0ADMIN") == ANSWER


async def test_workspace_and_channel_lists_refuse_elsewhere_but_admins_are_always_answered(
    make_harness: HarnessFactory,  # noqa: F811
) -> None:
    harness = await make_harness(
        CONCIERGE_ALLOWED_WORKSPACES="T0OTHER", CONCIERGE_ALLOWED_CHANNELS="C0RANDOM", CONCIERGE_ADMINS="U0ADMIN"
    )
    assert TEAM_ID != "T0OTHER"
    replies = await mention(harness, "U0ALICE")
    assert len(replies) == 1 and NOT_THIS_WORKSPACE in replies[0]
    assert await mention(harness, "U0ADMIN") == ANSWER


async def test_a_command_from_a_channel_not_allowed_is_refused(make_harness: HarnessFactory) -> None:  # noqa: F811
    harness = await make_harness(CONCIERGE_ALLOWED_CHANNELS="C0RANDOM")
    acked = await harness.slack.command("/hotel", "Paris", channel="C0GENERAL")
    await harness.settle()
    answer = json.loads(acked.text)  # answered privately in the acknowledgement
    assert answer["response_type"] == "ephemeral" and NOT_THIS_CHANNEL in answer["text"]
    assert harness.api.channel_messages("C0GENERAL") == []  # no public "asked …" root message


async def test_everyone_is_answered_by_default(make_harness: HarnessFactory) -> None:  # noqa: F811
    harness = await make_harness()
    assert await mention(harness, "U0ANYONE") == ANSWER


# --- Discord: the real discord.py client against the fake Discord ----------------------------
@pytest.fixture
async def discord_bot(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    started: list[RunningDiscord] = []
    async with FakeDiscordAPI() as api:

        async def start(**overrides: Any) -> FakeDiscordAPI:
            started.append(await start_discord(discord_settings(tmp_path, api, **overrides), [CardsAgent(statuses=0)]))
            return api

        try:
            yield start
        finally:
            for running in started:
                await running.stop()
            restore_discord_defaults()


async def test_discord_refuses_a_command_privately_and_opens_no_thread(discord_bot: Callable[..., Any]) -> None:
    api = await discord_bot(CONCIERGE_ALLOWED_ROLES="1300000000000000999")
    interaction = api.slash_command("hotel", {"query": "Paris"})
    await api.dispatch("INTERACTION_CREATE", interaction)
    channel = api.interactions[interaction["id"]].channel_id
    refusal = await api.wait_for(lambda: next((m for m in api.messages(channel) if "Sorry" in m.content), None))
    assert refusal.ephemeral and NOT_THIS_USER in refusal.content
    assert not api.threads


async def test_discord_members_with_an_allowed_role_are_answered(discord_bot: Callable[..., Any]) -> None:
    api = await discord_bot(CONCIERGE_ALLOWED_ROLES=DISCORD_GUILD)  # the guild's @everyone role
    interaction = api.slash_command("hotel", {"query": "Paris"})
    await api.dispatch("INTERACTION_CREATE", interaction)
    await api.wait_for(lambda: api.interactions[interaction["id"]].original_id)
    root = str(api.interactions[interaction["id"]].original_id)
    await api.wait_for(lambda: any(m.content.startswith("Turn 1: 2 hotels for Paris") for m in api.bot_messages(root)))
