"""The Discord adapter end to end: the real discord.py client against the fake Discord on
127.0.0.1 — slash commands in guilds and DMs, threads, follow-ups, embeds, buttons after a restart,
command sync, replays and rate limits."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from adapters.discord.commands import commands_schema
from adapters.discord.serve import serve, sync_commands
from bot.agent import AgentDefinition
from bot.app import App
from bot.commands import CommandTable
from bot.conversation import ConversationKey
from bot.storage import AppDatabase
from tests.fakes.discord_api import CHANNEL_ID, GUILD_ID, MESSAGE_CONTENT, FakeDiscordAPI
from tests.slack.agents import CardsAgent, ReportAgent
from tests.support.agents import ConfirmAgent
from tests.support.bots import RunningDiscord, discord_settings, start_discord

Running = RunningDiscord


Start = Callable[..., Any]


async def answered(api: FakeDiscordAPI, interaction: dict[str, Any], starts: str) -> str:
    """Wait until the command's thread (or DM) holds a bot message starting with `starts`; the root id."""

    def done() -> str | None:
        root = api.interactions[interaction["id"]].original_id
        return root if root and any(m.content.startswith(starts) for m in api.bot_messages(root)) else None

    return str(await api.wait_for(done))


@pytest.fixture
async def start(tmp_path: Path, api: FakeDiscordAPI) -> AsyncIterator[Start]:
    running: list[Running] = []

    async def go(agents: Sequence[AgentDefinition] | None = None) -> Running:
        run = await start_discord(discord_settings(tmp_path, api), agents or [CardsAgent(), ReportAgent(), ConfirmAgent()])
        running.append(run)
        return run

    yield go
    for run in reversed(running):
        await run.stop()


async def test_hotel_command_in_a_guild_defers_then_answers_in_a_public_thread(api: FakeDiscordAPI, start: Start) -> None:
    run = await start([CardsAgent(statuses=3, delay=0.25)])
    interaction = api.slash_command("hotel", {"query": "Paris under $200"})
    await api.dispatch("INTERACTION_CREATE", interaction)
    await answered(api, interaction, "Turn 1")
    await run.settle()

    fake = api.interactions[interaction["id"]]
    assert fake.response_type == 5 and fake.ack_delay is not None  # deferred, within the deadline
    root = api.message(fake.original_id)  # type: ignore[arg-type]
    assert not root.loading and "asked `/hotel Paris under $200`" in root.content
    assert root.thread_id == root.id  # a public thread grown from the root message
    thread = api.threads[root.id]
    assert thread["type"] == 11
    replies = api.bot_messages(root.id)
    status = replies[0]
    assert any("Searching hotels" in text for text in status.history)  # edited while the agent worked
    assert status.content.startswith("Turn 1: 2 hotels for Paris under $200")
    cards = next(m for m in replies if m.embeds)
    assert cards.embeds[0]["title"] == "Hôtel Lumière"
    assert any(b.get("url", "").startswith("https://www.google.com/maps") for b in cards.buttons())

    # A message in the thread continues the same conversation, no mention needed.
    await api.dispatch("MESSAGE_CREATE", api.user_message("only ones under $150", root.id))
    await api.wait_for(lambda: any(m.content.startswith("Turn 2:") for m in api.bot_messages(root.id)))


async def test_two_threads_stay_apart_and_a_dm_is_its_own_conversation(api: FakeDiscordAPI, start: Start) -> None:
    run = await start()
    first, second = api.slash_command("hotel", {"query": "Rome"}), api.slash_command("hotel", {"query": "Oslo"})
    await api.dispatch("INTERACTION_CREATE", first)
    await api.dispatch("INTERACTION_CREATE", second)
    roots = [await answered(api, first, "Turn 1"), await answered(api, second, "Turn 1")]
    await run.settle()
    assert roots[0] != roots[1]
    for root, city in zip(roots, ("Rome", "Oslo"), strict=True):
        assert any(m.content.startswith(f"Turn 1: 2 hotels for {city}") for m in api.bot_messages(root))

    dm = api.dm_channel(api.alice)
    await api.dispatch("MESSAGE_CREATE", api.user_message("hotel in Lisbon", dm["id"]))
    await api.wait_for(lambda: any("Turn 1: 2 hotels for hotel in Lisbon" in m.content for m in api.bot_messages(dm["id"])))
    await api.dispatch("MESSAGE_CREATE", api.user_message("and Porto?", dm["id"]))
    await api.wait_for(lambda: any(m.content.startswith("Turn 2:") for m in api.bot_messages(dm["id"])))


async def test_a_replayed_message_is_answered_once_and_bots_are_ignored(api: FakeDiscordAPI, start: Start) -> None:
    run = await start()
    dm = api.dm_channel(api.alice)
    event = api.user_message("hotel in Bern", dm["id"])
    await api.dispatch("MESSAGE_CREATE", event)
    await api.dispatch("MESSAGE_CREATE", event)  # delivered twice, as after a RESUME
    await api.dispatch("MESSAGE_CREATE", api.user_message("hotel please", CHANNEL_ID, author=api.add_user("other-bot", bot=True)))
    await api.wait_for(lambda: any("Turn 1" in m.content for m in api.bot_messages(dm["id"])))
    await run.settle()
    answers = [m for m in api.bot_messages(dm["id"]) if m.content.startswith("Turn")]
    assert len(answers) == 1
    assert not [m for m in api.bot_messages(CHANNEL_ID) if m.content.startswith("Turn")]


async def test_an_empty_command_gets_a_private_usage_reply_and_starts_nothing(api: FakeDiscordAPI, start: Start) -> None:
    run = await start()
    interaction = api.slash_command("hotel")
    await api.dispatch("INTERACTION_CREATE", interaction)
    await api.wait_for(lambda: api.interactions[interaction["id"]].original_id)
    await run.settle()
    reply = api.message(api.interactions[interaction["id"]].original_id)  # type: ignore[arg-type]
    assert reply.ephemeral and "Usage: `/hotel Paris under $200`" in reply.content
    assert not api.threads


async def test_an_empty_command_from_a_japanese_client_gets_its_usage_in_japanese(api: FakeDiscordAPI, start: Start) -> None:
    run = await start()
    interaction = api.slash_command("help", locale="ja")
    await api.dispatch("INTERACTION_CREATE", interaction)
    await api.wait_for(lambda: api.interactions[interaction["id"]].original_id)
    await run.settle()
    reply = api.message(api.interactions[interaction["id"]].original_id)  # type: ignore[arg-type]
    assert reply.ephemeral and reply.content.startswith("できること:") and "• `/reset` — 会話を最初からやり直します" in reply.content


async def test_a_japanese_command_is_announced_in_japanese(api: FakeDiscordAPI, start: Start) -> None:
    run = await start([CardsAgent()])
    interaction = api.slash_command("hotel", {"query": "京都 来週末"}, locale="ja")
    await api.dispatch("INTERACTION_CREATE", interaction)
    await answered(api, interaction, "Turn 1")
    await run.settle()
    root = api.message(api.interactions[interaction["id"]].original_id)  # type: ignore[arg-type]
    assert root.content.endswith("さんの依頼: `/hotel 京都 来週末`")


async def test_reset_and_help_are_answered_privately_and_start_no_thread(api: FakeDiscordAPI, start: Start) -> None:
    run = await start()
    replies = []
    for name, guild in (("reset", True), ("reset", False), ("help", True)):
        interaction = api.slash_command(name, guild=guild)
        await api.dispatch("INTERACTION_CREATE", interaction)
        original = await api.wait_for(lambda sent=api.interactions[interaction["id"]]: sent.original_id)
        replies.append(api.message(original))
    await run.settle()
    assert all(reply.ephemeral for reply in replies)
    assert "nothing to reset here" in replies[0].content
    assert replies[1].content == "Starting a fresh conversation."
    assert "`/hotel`" in replies[2].content and "`/proofread`" in replies[2].content
    assert not api.threads
    japanese = api.slash_command("reset", guild=False, locale="ja")
    await api.dispatch("INTERACTION_CREATE", japanese)
    original = await api.wait_for(lambda: api.interactions[japanese["id"]].original_id)
    assert api.message(original).content == "新しい会話を始めます。"  # type: ignore[arg-type]


async def test_proofread_with_an_attachment_sends_a_summary_embed_and_the_report_file(api: FakeDiscordAPI, start: Start) -> None:
    run = await start()
    article = api.add_attachment("article.md", b"# Title\n\nSome text.\n")
    interaction = api.slash_command("proofread", {"file": article})
    await api.dispatch("INTERACTION_CREATE", interaction)
    root = await answered(api, interaction, "Proofread")
    await api.wait_for(lambda: any(m.attachments for m in api.bot_messages(root)))
    await run.settle()
    replies = api.bot_messages(root)
    assert any(m.content.startswith("Proofread article.md: 3 lines") for m in replies)
    assert any(m.embeds and m.embeds[0]["title"] == "Proofreading: article.md" for m in replies)
    assert any(a.filename == "proofread-report.md" for m in replies for a in m.attachments)


async def test_a_binary_attachment_is_refused_privately(api: FakeDiscordAPI, start: Start) -> None:
    await start()
    image = api.add_attachment("image.md", b"\x89PNG\r\n\x1a\n\x00\x00")
    interaction = api.slash_command("proofread", {"file": image})
    await api.dispatch("INTERACTION_CREATE", interaction)
    channel = api.interactions[interaction["id"]].channel_id
    refusal = await api.wait_for(lambda: next((m for m in api.messages(channel) if "binary" in m.content), None))
    assert refusal.ephemeral and "`image.md` looks like a binary file" in refusal.content
    assert api.interactions[interaction["id"]].response_type == 4 and not api.threads  # answered, not deferred


async def test_a_binary_attachment_from_a_japanese_client_is_refused_in_japanese(api: FakeDiscordAPI, start: Start) -> None:
    await start()
    image = api.add_attachment("image.md", b"\x89PNG\r\n\x1a\n\x00\x00")
    interaction = api.slash_command("proofread", {"file": image}, locale="ja")
    await api.dispatch("INTERACTION_CREATE", interaction)
    channel = api.interactions[interaction["id"]].channel_id
    refusal = await api.wait_for(lambda: next((m for m in api.messages(channel) if "image.md" in m.content), None))
    assert refusal.ephemeral and "`image.md` はバイナリファイルのようです" in refusal.content


async def test_a_confirm_button_resumes_the_waiting_graph_after_a_restart(api: FakeDiscordAPI, start: Start) -> None:
    first = await start()
    interaction = api.slash_command("confirm", {"query": "empty the cart"})
    await api.dispatch("INTERACTION_CREATE", interaction)
    root = await answered(api, interaction, "Really empty the cart?")
    await api.wait_for(lambda: any(m.buttons() for m in api.bot_messages(root)))
    await first.settle()
    card = next(m for m in api.bot_messages(root) if m.buttons())
    confirm = next(b for b in card.buttons() if b.get("label") == "Confirm")
    await first.stop()

    second = await start()  # a new process: nothing but the button's custom_id remembers the turn
    await api.dispatch("INTERACTION_CREATE", api.button_press(confirm["custom_id"], card))
    await api.wait_for(lambda: any(m.content == "Decision: confirm" for m in api.bot_messages(root)))
    await second.settle()
    assert not api.message(card.id).buttons()  # answered: the buttons are gone


async def test_a_rate_limited_edit_does_not_lose_the_final_text(api: FakeDiscordAPI, start: Start) -> None:
    run = await start([CardsAgent(statuses=6, delay=0.05)])
    api.rate_limit("/messages/", method="PATCH", times=2, retry_after=0.3)
    interaction = api.slash_command("hotel", {"query": "Vienna"})
    await api.dispatch("INTERACTION_CREATE", interaction)
    root = await answered(api, interaction, "Turn 1")
    await run.settle()
    status = api.bot_messages(root)[0]
    assert status.content.startswith("Turn 1: 2 hotels for Vienna")
    assert status.edits <= 8  # coalesced: not one edit per progress line and token
    gaps = [b - a for a, b in zip(status.edit_times, status.edit_times[1:], strict=False)]
    assert all(gap >= 0.19 for gap in gaps)  # never faster than CONCIERGE_EDIT_INTERVAL (0.2 s here)


async def test_command_sync_sends_every_command_in_the_table(api: FakeDiscordAPI, tmp_path: Path) -> None:
    agents = [CardsAgent(), ReportAgent(), ConfirmAgent()]
    app = App(discord_settings(tmp_path, api), agents)
    assert await sync_commands(app, GUILD_ID) == 0
    sent = {c["name"]: c for c in api.guild_commands[GUILD_ID]}
    expected = commands_schema(CommandTable.of(agents))
    assert set(sent) == {c["name"] for c in expected} == {"hotel", "proofread", "confirm", "reset", "help"}
    assert [o["type"] for o in sent["proofread"]["options"]] == [3, 11]  # the article as text or a file
    assert sent["hotel"]["options"][0]["required"] is True
    assert sent["reset"]["description_localizations"] == {"ja": "会話を最初からやり直します"}  # Japanese clients show it
    assert await sync_commands(app) == 0
    assert {c["name"] for c in api.commands} == set(sent)


async def test_serve_answers_and_falls_back_to_mentions_without_the_message_content_intent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with FakeDiscordAPI(privileged_intents=0) as api:  # the intent is off in the "developer portal"
        app = App(discord_settings(tmp_path, api), [CardsAgent()])
        task = asyncio.create_task(serve(app))
        try:
            await api.wait_for(lambda: len(api.identifies) >= 2 and api.connected())
            assert api.identifies[0]["intents"] & MESSAGE_CONTENT and not api.identifies[-1]["intents"] & MESSAGE_CONTENT
            interaction = api.slash_command("hotel", {"query": "Nice"})
            await api.dispatch("INTERACTION_CREATE", interaction)
            await answered(api, interaction, "Turn 1: 2 hotels for Nice")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    assert "message_content intent" in caplog.text



async def test_serve_with_shards_answers_in_every_shards_guild(tmp_path: Path) -> None:
    async with FakeDiscordAPI(shards=2) as api:
        other = api.add_guild("Second Guild", channels={"880000000000000001": "lobby"}, members=[api.alice["id"]])
        app = App(discord_settings(tmp_path, api), [CardsAgent()])
        task = asyncio.create_task(serve(app, shards=2))
        try:
            await api.wait_for(lambda: api.connected(0) and api.connected(1))
            first = api.slash_command("hotel", {"query": "Graz"})
            second = api.slash_command("hotel", {"query": "Linz"}, channel_id="880000000000000001")
            await api.dispatch("INTERACTION_CREATE", first)
            await api.dispatch("INTERACTION_CREATE", second)
            await answered(api, first, "Turn 1: 2 hotels for Graz")
            await answered(api, second, "Turn 1: 2 hotels for Linz")
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    assert {i["shard"][0] for i in api.identifies} == {0, 1} and other["id"]


async def test_a_mention_in_a_channel_starts_a_thread_from_that_message(api: FakeDiscordAPI, start: Start) -> None:
    await start()
    event = api.user_message(f"<@{api.bot_user['id']}> a hotel in Kyiv", CHANNEL_ID, mentions=[api.bot_user])
    await api.dispatch("MESSAGE_CREATE", event)
    thread = event["id"]  # a thread grown from a message has the message's id
    await api.wait_for(lambda: any(m.content.startswith("Turn 1: 2 hotels for a hotel in Kyiv") for m in api.bot_messages(thread)))
    assert api.threads[thread]["type"] == 11
    await api.dispatch("MESSAGE_CREATE", api.user_message("hotel in Lviv", CHANNEL_ID))  # no mention: not for the bot
    await api.dispatch("MESSAGE_CREATE", api.user_message("and cheaper?", thread))  # its thread: no mention needed
    await api.wait_for(lambda: any(m.content.startswith("Turn 2:") for m in api.bot_messages(thread)))
    assert not [m for m in api.bot_messages(CHANNEL_ID) if "Lviv" in m.content]


async def test_a_mention_in_someone_elses_thread_is_answered_in_that_thread(api: FakeDiscordAPI, start: Start) -> None:
    """Discord grows no thread inside a thread: the bot answers where it was asked, then follows
    that thread as its own."""
    await start()
    thread = api.user_thread("planning the trip")
    await api.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
    await api.dispatch(
        "MESSAGE_CREATE", api.user_message(f"<@{api.bot_user['id']}> a hotel in Kyiv", thread["id"], mentions=[api.bot_user])
    )
    await api.wait_for(lambda: any(m.content.startswith("Turn 1: 2 hotels for a hotel in Kyiv") for m in api.bot_messages(thread["id"])))
    assert not [c for c in api.calls_to("POST") if "/threads" in c.path]  # no thread was asked for
    await api.dispatch("MESSAGE_CREATE", api.user_message("and cheaper?", thread["id"]))  # followed now
    await api.wait_for(lambda: any(m.content.startswith("Turn 2:") for m in api.bot_messages(thread["id"])))


async def test_a_long_answer_is_split_at_discords_limit_on_paragraphs(api: FakeDiscordAPI, start: Start) -> None:
    run = await start([CardsAgent(answer_chars=6000)])
    interaction = api.slash_command("hotel", {"query": "Split"})
    await api.dispatch("INTERACTION_CREATE", interaction)
    root = await answered(api, interaction, "Turn 1")
    await api.wait_for(lambda: any(m.embeds for m in api.bot_messages(root)))
    await run.settle()
    parts = [m.content for m in api.bot_messages(root) if not m.embeds]
    assert len(parts) >= 4 and all(len(p) <= 2000 for p in parts)
    assert all(p.startswith(("Turn 1", "Paragraph")) for p in parts)  # cut between paragraphs


async def test_a_command_s_and_a_mention_s_threads_are_recorded_for_every_replica_before_their_turns(
    api: FakeDiscordAPI, start: Start
) -> None:
    """Another process routes a reply by the database alone: the thread must be there, with its
    command's agent, when the turn is handed to the runtime (not only once the turn has started)."""
    run = await start()
    seen: dict[str, Any] = {}
    handle = run.runtime.handle

    def observed(key: Any, turn: Any, **kwargs: Any) -> Any:
        async def events() -> Any:
            replica = await AppDatabase.open(run.runtime.settings.resolved_database_url)
            try:
                seen[key.thread_id] = await replica.get_thread(key.thread_id)
            finally:
                await replica.close()
            async for event in handle(key, turn, **kwargs):
                yield event

        return events()

    run.runtime.handle = observed  # type: ignore[method-assign]
    interaction = api.slash_command("hotel", {"query": "Paris"})
    await api.dispatch("INTERACTION_CREATE", interaction)
    root = await answered(api, interaction, "Turn 1")
    mention = api.user_message(f"<@{api.bot_user['id']}> a hotel in Kyiv", CHANNEL_ID, mentions=[api.bot_user])
    await api.dispatch("MESSAGE_CREATE", mention)
    await api.wait_for(lambda: any(m.content.startswith("Turn 1") for m in api.bot_messages(mention["id"])))
    await run.settle()
    command_thread = seen[ConversationKey("discord", (str(GUILD_ID), root)).thread_id]
    mention_thread = seen[ConversationKey("discord", (str(GUILD_ID), str(mention["id"]))).thread_id]
    assert command_thread is not None and command_thread.agent == "hotel"
    assert mention_thread is not None
