"""Pure pieces of the Slack adapter: Markdown → mrkdwn, Block Kit cards, Slack text → plain text,
file checks, usage help, the app manifest."""

from __future__ import annotations

import json

import pytest
import yaml

from adapters.slack.app import from_slack_text, suggested_prompts, usage_help
from adapters.slack.blocks import (
    MAX_BLOCKS,
    MAX_BUTTON_VALUE,
    answered_blocks,
    card_blocks,
    card_messages,
    without_images,
)
from adapters.slack.files import check_file, trusted_download_url
from adapters.slack.manifest import manifest_yaml
from adapters.slack.mrkdwn import to_mrkdwn
from agents.registry import registered_agents
from bot.attachments import FileRejected
from bot.commands import CommandTable
from bot.conversation import ConversationKey
from bot.events import Action, Card
from tests.slack.agents import CardsAgent, ReportAgent

KEY = ConversationKey("slack", ("T1", "C1", "1700000000.000100"))


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**bold** and *italic*", "*bold* and _italic_"),
        ("# Title", "*Title*"),
        ("- one\n- two", "• one\n• two"),
        ("[docs](https://example.com/a?b=1&c=2)", "<https://example.com/a?b=1&c=2|docs>"),
        ("~~old~~ new", "~old~ new"),
        ("a < b & c > d", "a &lt; b &amp; c &gt; d"),
        ("`**not bold**` text", "`**not bold**` text"),
        ("```python\nx = '**'  # <tag>\n```", "```\nx = '**'  # &lt;tag&gt;\n```"),
        ("**[bold link](https://x.test)**", "*<https://x.test|bold link>*"),
        ("- [x] done\n- [ ] todo", "☑ done\n☐ todo"),
    ],
)
def test_markdown_becomes_slack_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown) == mrkdwn


def test_hotel_card_has_thumbnail_fields_map_and_link() -> None:
    card = Card(
        title="Hôtel <Lumière>",
        subtitle="Le Marais · ★★★",
        fields={"Price": "$180/night", "Rating": "4.6/5", "District": "Le Marais"},
        image_url="https://img.test/a.jpg",
        url="https://hotels.test/lumiere",
        lat=48.85,
        lon=2.35,
    )
    section, actions = card_blocks(card, KEY)
    assert section["text"]["text"] == "*<https://hotels.test/lumiere|Hôtel &lt;Lumière&gt;>*\nLe Marais · ★★★"
    assert [f["text"] for f in section["fields"]] == ["*Price*\n$180/night", "*Rating*\n4.6/5", "*District*\nLe Marais"]
    assert section["accessory"] == {"type": "image", "image_url": "https://img.test/a.jpg", "alt_text": "Hôtel <Lumière>"}
    (map_button,) = actions["elements"]
    assert map_button["url"] == "https://www.google.com/maps/search/?api=1&query=48.850000%2C2.350000"


def test_product_card_without_location_has_no_map_and_skips_unsafe_image_urls() -> None:
    card = Card(title="Headphones", fields={"Price": "$99", "Stock": "3 left"}, image_url="javascript:alert(1)")
    (section,) = card_blocks(card, KEY)
    assert "accessory" not in section
    assert section["fields"][1]["text"] == "*Stock*\n3 left"


def test_action_buttons_carry_the_conversation_and_the_resume_value() -> None:
    card = Card(title="Confirm order?", actions=[Action(label="Confirm", value="yes", style="primary"),
                                                  Action(label="Cancel", value="no", style="danger"),
                                                  Action(label="Later", value="later")])
    _, actions = card_blocks(card, KEY)
    confirm, cancel, later = actions["elements"]
    assert (confirm["style"], cancel["style"], "style" in later) == ("primary", "danger", False)
    assert ConversationKey.from_button_payload(confirm["value"], "slack") == (KEY, "yes")
    assert len({confirm["action_id"], cancel["action_id"], later["action_id"]}) == 3


def test_resume_values_that_do_not_fit_a_button_are_dropped_and_garbage_is_refused() -> None:
    assert KEY.button_payload("x" * MAX_BUTTON_VALUE, MAX_BUTTON_VALUE) is None
    assert ConversationKey.from_button_payload("not json", "slack") is None
    assert ConversationKey.from_button_payload(json.dumps({"k": "discord:dm:1", "v": "x"}), "slack") is None


def test_many_cards_are_split_into_messages_of_at_most_fifty_blocks_with_fallback_text() -> None:
    cards = [Card(title=f"Hotel {i}", fields={"Price": "$1"}, lat=1.0, lon=2.0) for i in range(40)]
    messages = card_messages(cards, KEY)
    assert len(messages) > 1
    assert all(len(blocks) <= MAX_BLOCKS for _, blocks in messages)
    assert all(blocks[0]["type"] != "divider" for _, blocks in messages)
    assert sum(text.count("• Hotel") for text, _ in messages) == 40


def test_many_fields_overflow_into_a_second_section() -> None:
    card = Card(title="Report", fields={f"f{i}": str(i) for i in range(14)})
    first, second = card_blocks(card, KEY)
    assert len(first["fields"]) == 10 and len(second["fields"]) == 4


def test_answered_buttons_are_replaced_by_the_choice_and_links_kept() -> None:
    card = Card(title="Pay?", lat=1.0, lon=2.0, actions=[Action(label="Pay", value="pay")])
    blocks = card_blocks(card, KEY)
    pay = blocks[1]["elements"][1]
    after = answered_blocks(blocks, action_id=pay["action_id"], label="Pay", user_id="U1")
    assert [e.get("url") is not None for e in after[1]["elements"]] == [True]
    assert after[2] == {"type": "context", "elements": [{"type": "mrkdwn", "text": "<@U1> chose *Pay*"}]}
    japanese = answered_blocks(blocks, action_id=pay["action_id"], label="確定", user_id="U1")
    assert japanese[2]["elements"][0]["text"] == "<@U1> が *確定* を選びました"


def test_without_images_drops_accessories_and_image_blocks() -> None:
    blocks = [
        *card_blocks(Card(title="A", image_url="https://x.test/a.png"), KEY),
        {"type": "image", "image_url": "https://x.test/b.png", "alt_text": "b"},
    ]
    assert without_images(blocks) == [{"type": "section", "text": {"type": "mrkdwn", "text": "*A*"}}]


@pytest.mark.parametrize(
    ("slack", "plain"),
    [
        ("<@U0BOT> find a hotel", "find a hotel"),
        ("ask <@U0BOB|bob> about <#C123|general>", "ask @U0BOB about #general"),
        ("see <https://example.com|example.com> and <https://a.test/x|the docs>", "see example.com and the docs (https://a.test/x)"),
        ("5 &lt; 6 &amp;&amp; 7 &gt; 1", "5 < 6 && 7 > 1"),
        ("<!here> lunch", "@here lunch"),
    ],
)
def test_slack_message_text_becomes_plain_text_for_agents(slack: str, plain: str) -> None:
    assert from_slack_text(slack, "U0BOT") == plain


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"name": "a.pdf", "filetype": "pdf", "pretty_type": "PDF", "size": 10}, r"`a.pdf` is not a Markdown or text file \(PDF\)"),
        ({"name": "big.md", "filetype": "markdown", "size": 300_000}, r"`big.md` is 300 KB; the limit is 200 KB"),
        ({"name": "a.md", "mode": "tombstone"}, "no longer available"),
        ({"name": "photo.png", "mimetype": "image/png", "size": 1}, r"`photo.png` is not a Markdown or text file \(image/png\)"),
    ],
)
def test_files_are_refused_by_metadata_before_download(meta: dict[str, object], message: str) -> None:
    with pytest.raises(FileRejected, match=message):
        check_file(meta, 200_000)


@pytest.mark.parametrize("meta", [{"name": "a.md", "size": 10}, {"name": "notes.txt", "size": 5},
                                  {"name": "README", "filetype": "markdown", "size": 5}])
def test_markdown_and_text_files_are_accepted(meta: dict[str, object]) -> None:
    check_file(meta, 200_000)


def test_the_bot_token_is_only_sent_to_slack_file_hosts() -> None:
    api = "https://slack.com/api/"
    assert trusted_download_url("https://files.slack.com/files-pri/T1-F1/a.md", api)
    assert not trusted_download_url("https://files.slack.com.evil.test/a.md", api)
    assert not trusted_download_url("http://files.slack.com/a.md", api)
    assert trusted_download_url("http://127.0.0.1:9999/files-pri/F1/a.md", "http://127.0.0.1:9999/api/")
    assert not trusted_download_url("http://127.0.0.1:8888/files-pri/F1/a.md", "http://127.0.0.1:9999/api/")


def test_usage_help_and_suggested_prompts_come_from_the_command_table() -> None:
    commands = CommandTable.of([CardsAgent(), ReportAgent()])
    one = usage_help(commands, "/hotel")
    assert "`/hotel`" in one and "/proofread" not in one
    assert "/proofread" in usage_help(commands, "/unknown") and "/reset" in usage_help(commands, "/unknown")
    assert suggested_prompts(commands) == [
        {"title": "find hotels", "message": "/hotel Paris under $200"},
        {"title": "proofread a Markdown article", "message": "/proofread TEXT, or share a .md file in the thread"},
    ]


def test_manifest_declares_every_command_in_the_table_and_what_the_adapter_uses() -> None:
    commands = CommandTable.of(registered_agents())
    manifest = yaml.safe_load(manifest_yaml(commands, url="https://bot.example.org/"))
    slash = {c["command"]: c for c in manifest["features"]["slash_commands"]}
    assert set(slash) == {c.slash for c in commands} and {"/hotel", "/proofread", "/reset", "/help"} <= set(slash)
    assert slash["/hotel"]["usage_hint"] == commands.get("hotel").usage  # type: ignore[union-attr]
    assert all(c["url"] == "https://bot.example.org/slack/events" for c in slash.values())
    assert manifest["settings"]["event_subscriptions"]["request_url"] == "https://bot.example.org/slack/events"
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {"chat:write", "commands", "files:read", "files:write", "assistant:write", "app_mentions:read",
            "channels:history", "im:history"} <= scopes
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert {"app_mention", "message.channels", "message.im", "assistant_thread_started"} <= events
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert "assistant_view" in manifest["features"]

    socket = yaml.safe_load(manifest_yaml(commands, socket_mode=True))
    assert socket["settings"]["socket_mode_enabled"] is True
    assert all("url" not in c for c in socket["features"]["slash_commands"])
    assert "request_url" not in socket["settings"]["interactivity"]


async def test_background_work_waits_for_pending_acks_but_not_forever() -> None:
    import asyncio

    from bot.supervisor import AckFirst

    gate = AckFirst(max_wait=5.0)
    started: list[str] = []

    async def work() -> None:
        await gate.wait()
        started.append("work")

    async with gate.request():
        task = asyncio.create_task(work())
        await asyncio.sleep(0.05)
        assert started == []  # a request is still waiting for its ack
    await task
    assert started == ["work"]

    impatient = AckFirst(max_wait=0.01)
    async with impatient.request():
        await impatient.wait()  # returns after max_wait even though the request is still pending
