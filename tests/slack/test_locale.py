"""The Slack user's locale and time zone (users.info) feed a turn's defaults: a user whose Slack
is set to Japanese sees hotel prices in yen until they name another currency; without the
users:read scope the defaults stay and the turn still runs."""

from __future__ import annotations

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import HarnessFactory


def _japanese_user(slack_api: FakeSlackAPI) -> None:
    """U0KENJI, whose Slack is set to Japanese in Tokyo (what users.info returns for him)."""
    slack_api.users["U0KENJI"] = {"id": "U0KENJI", "team_id": slack_api.team_id, "name": "kenji", "is_bot": False,
                                  "tz": "Asia/Tokyo", "locale": "ja-JP", "profile": {"display_name": "kenji"}}


async def _hotel_cards(harness, text: str, user: str) -> list[dict]:  # type: ignore[no-untyped-def]
    await harness.slack.command("/hotel", text, user=user)
    await harness.settle()
    root = next(m for m in harness.api.channel_messages("C0GENERAL") if f"<@{user}>" in m.text)
    cards = [m for m in harness.api.thread("C0GENERAL", root.ts) if m.blocks]
    return [block for m in cards for block in m.blocks if block.get("fields")]


async def test_a_japanese_slack_user_sees_prices_in_yen(make_harness: HarnessFactory, slack_api: FakeSlackAPI) -> None:
    _japanese_user(slack_api)
    harness = await make_harness(registered=True)
    sections = await _hotel_cards(harness, "Paris next weekend", "U0KENJI")
    prices = [f["text"] for s in sections for f in s["fields"] if f["text"].startswith("*Price*")]
    assert prices and all("¥" in p and "(€" in p for p in prices)
    assert [c.args.get("user") for c in slack_api.calls_to("users.info")] == ["U0KENJI"]

    await _hotel_cards(harness, "Rome next weekend", "U0KENJI")  # the profile is kept, not fetched again
    assert len(slack_api.calls_to("users.info")) == 1


async def test_without_the_scope_the_defaults_stay(make_harness: HarnessFactory, slack_api: FakeSlackAPI) -> None:
    slack_api.fail("users.info", error="missing_scope", times=100)
    harness = await make_harness(registered=True)
    sections = await _hotel_cards(harness, "Paris next weekend", "U0ALICE")
    prices = [f["text"] for s in sections for f in s["fields"] if f["text"].startswith("*Price*")]
    assert prices and all("$" in p for p in prices)


async def test_a_japanese_slack_users_empty_command_gets_japanese_usage_once_their_locale_is_known(
    make_harness: HarnessFactory, slack_api: FakeSlackAPI
) -> None:
    """An empty command is answered at once, before Slack's 3 s: in the user's language when the
    bot already knows it (their profile, kept an hour), in English before it has ever asked."""
    _japanese_user(slack_api)
    harness = await make_harness(registered=True)
    first = (await harness.slack.command("/shop", " ", user="U0KENJI")).json()
    assert first["text"].startswith("• `/shop` — Find products")  # not known yet: nothing is fetched before the ack
    await _hotel_cards(harness, "Paris next weekend", "U0KENJI")  # a turn learns the profile
    later = (await harness.slack.command("/shop", " ", user="U0KENJI")).json()
    assert later["response_type"] == "ephemeral" and later["text"].startswith("• `/shop` — 商品探し")
    assert "例: `/shop ワイヤレスイヤホン 1万円以下`" in later["text"]
    assert "スレッド" in later["text"]


async def test_a_japanese_command_is_announced_in_japanese(make_harness: HarnessFactory) -> None:
    harness = await make_harness(registered=True)
    await harness.slack.command("/hotel", "京都 来週末 2名", user="U0ALICE")
    await harness.slack.command("/hotel", "Kyoto next weekend", user="U0ALICE")
    await harness.settle()
    roots = [m.text for m in harness.api.channel_messages("C0GENERAL") if m.text.startswith("<@U0ALICE>")]
    assert sorted(roots) == ["<@U0ALICE> asked `/hotel Kyoto next weekend`", "<@U0ALICE> さんの依頼: `/hotel 京都 来週末 2名`"]


async def test_a_file_refused_to_a_japanese_user_is_refused_in_japanese(
    make_harness: HarnessFactory, slack_api: FakeSlackAPI
) -> None:
    _japanese_user(slack_api)
    harness = await make_harness(registered=True)
    await harness.slack.command("/proofread", "記事です", user="U0KENJI")
    await harness.settle()
    root = next(m for m in harness.api.channel_messages("C0GENERAL") if "U0KENJI" in m.text)
    pdf = harness.api.add_file("paper.pdf", b"%PDF-1.4", mimetype="application/pdf", filetype="pdf")
    binary = harness.api.add_file("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    for file in (pdf, binary):
        await harness.slack.event(harness.slack.message_event("", user="U0KENJI", thread_ts=root.ts, files=[file]))
    await harness.settle()
    replies = [m.text for m in harness.api.thread("C0GENERAL", root.ts) if m.text.startswith("⚠️")]
    assert any("`paper.pdf` は Markdown やテキストのファイルではありません（PDF）" in t for t in replies), replies
    assert any("`image.md` はバイナリファイルのようです" in t for t in replies), replies


async def test_a_japanese_slack_user_is_greeted_in_japanese_in_an_assistant_thread(
    make_harness: HarnessFactory, slack_api: FakeSlackAPI
) -> None:
    _japanese_user(slack_api)
    harness = await make_harness(registered=True)
    for user, channel in (("U0KENJI", "D0KENJI"), ("U0ALICE", "D0ALICE")):
        thread_ts = slack_api.add_user_message(channel, "", user=user)
        await harness.slack.event({
            "type": "assistant_thread_started",
            "assistant_thread": {"user_id": user, "channel_id": channel, "thread_ts": thread_ts,
                                 "context": {"channel_id": "C0GENERAL", "team_id": slack_api.team_id}},
            "event_ts": thread_ts,
        })
        await slack_api.wait_for(lambda c=channel, t=thread_ts: slack_api.thread(c, t))
    (kenji,) = slack_api.thread("D0KENJI", slack_api.channel_messages("D0KENJI")[0].ts)
    assert kenji.text.startswith("こんにちは！") and "できること:" in kenji.text and "Ask away" not in kenji.text
    (alice,) = slack_api.thread("D0ALICE", slack_api.channel_messages("D0ALICE")[0].ts)
    assert alice.text.startswith("Hi! Here is what I can do:") and "Ask away, here in this thread." in alice.text
    def both_prompted() -> list | None:  # type: ignore[type-arg]
        calls = slack_api.calls_to("assistant.threads.setSuggestedPrompts")
        return calls if len(calls) == 2 else None

    calls = await slack_api.wait_for(both_prompted)
    titles = {c.args["channel_id"]: c.args["title"] for c in calls}
    assert titles == {"D0KENJI": "こちらを試してみてください:", "D0ALICE": "Try one of these:"}
    prompts = {c.args["channel_id"]: c.args["prompts"] for c in calls}
    assert any(p["message"].startswith("/hotel Paris") for p in prompts["D0ALICE"])
    assert any(p["message"].startswith("/shop ワイヤレスイヤホン") for p in prompts["D0KENJI"])
    assert all(p["title"].isascii() for p in prompts["D0ALICE"]) and not any(p["title"].isascii() for p in prompts["D0KENJI"])
