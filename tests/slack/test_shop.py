"""/shop on Slack: product cards with Add to cart buttons, a confirmation with Confirm/Cancel,
both answered by button presses through the real slack-bolt app, also by a restarted bot."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from adapters.slack.app import SlackBot, make_client
from agents.shopping.catalog import CatalogStore
from agents.shopping.reviews import ReviewIndex
from bot.agent import AgentDefinition
from bot.config import Settings
from bot.runtime import ConversationRuntime
from tests.fakes.slack_api import FakeSlackAPI, SlackDelivery, find_button
from tests.shopping.conftest import embeddings, review_index, seeded_catalog, shop_agent, store  # noqa: F401
from tests.slack.conftest import HarnessFactory, SlackHarness, slack_settings
from tests.support.bots import serve_slack
from tests.support.waiting import eventually


async def test_add_to_cart_and_confirm_buttons_fill_the_cart(
    make_harness: HarnessFactory, store: CatalogStore, review_index: ReviewIndex  # noqa: F811
) -> None:
    harness = await make_harness([shop_agent(store, review_index)])
    api, slack = harness.api, harness.slack
    await slack.command("/shop", "wireless earbuds under $100")
    await harness.settle()
    root = api.channel_messages("C0GENERAL")[0]
    answer = api.thread("C0GENERAL", root.ts)[-1]
    add = find_button(answer, "Add to cart")
    assert add["style"] == "primary"

    await slack.block_action(answer, action_id=add["action_id"], value=add["value"])
    await harness.settle()
    question = api.thread("C0GENERAL", root.ts)[-1]  # the card with the buttons, after the question
    assert any("to your cart? Reply yes or no." in m.text for m in api.thread("C0GENERAL", root.ts))
    assert (await store.get_cart("U0ALICE")).items == []  # nothing written before the answer

    confirm = find_button(question, "Confirm")
    await slack.block_action(question, action_id=confirm["action_id"], value=confirm["value"])
    await harness.settle()
    cart = await store.get_cart("U0ALICE")
    assert [i.quantity for i in cart.items] == [1]
    assert any("Added 1 ×" in m.text for m in api.thread("C0GENERAL", root.ts))


async def test_a_request_longer_than_shop_takes_is_refused_privately_and_in_its_thread(
    make_harness: HarnessFactory, store: CatalogStore, review_index: ReviewIndex  # noqa: F811
) -> None:
    harness = await make_harness([shop_agent(store, review_index)])
    api, slack = harness.api, harness.slack
    acked = await slack.command("/shop", "earbuds " * 500 + "x")  # 4,001 characters
    body = acked.json()
    assert body["response_type"] == "ephemeral"
    assert body["text"] == "`/shop` takes messages of up to 4,000 characters; yours has 4,001. Please send a shorter request."
    await harness.settle()
    assert api.calls_to("chat.postMessage") == []  # no thread for a request that cannot run

    await slack.command("/shop", "wireless earbuds under $100")
    await harness.settle()
    root = api.channel_messages("C0GENERAL")[0]
    before = len(api.thread("C0GENERAL", root.ts))
    pasted = slack.message_event("headphones " * 400, user="U0ALICE", channel="C0GENERAL", thread_ts=root.ts)
    assert (await slack.event(pasted)).status == 200
    await eventually(lambda: len(api.thread("C0GENERAL", root.ts)) > before)
    await harness.settle()
    said = [m.text for m in api.thread("C0GENERAL", root.ts)[before:]]
    assert any("`/shop` takes messages of up to 4,000 characters; yours has 4,399" in text for text in said), said
    assert not any("Add to cart" in str(m.blocks) for m in api.thread("C0GENERAL", root.ts)[before:])  # nothing ran
    follow_up = slack.message_event("in stock near me?", user="U0ALICE", channel="C0GENERAL", thread_ts=root.ts)
    assert (await slack.event(follow_up)).status == 200
    await harness.settle()
    assert len(api.thread("C0GENERAL", root.ts)) > before + len(said)  # the conversation goes on


@asynccontextmanager
async def slack_bot(settings: Settings, agents: list[AgentDefinition], api: FakeSlackAPI) -> AsyncIterator[SlackHarness]:
    """One bot process: its runtime over the data dir in `settings`, served until the block ends."""
    runtime = await ConversationRuntime.open(settings, agents=agents)
    bot = SlackBot(settings, runtime, client=make_client(settings))
    runner, url = await serve_slack(bot)
    harness = SlackHarness(api, SlackDelivery(url, api), bot, runtime, settings, url)
    try:
        yield harness
    finally:
        await harness.slack.close()
        await runner.cleanup()
        await bot.close(within=5)
        await runtime.close()


async def test_confirm_pressed_after_a_restart_commits_the_cart_change_once(
    tmp_path: Path, slack_api: FakeSlackAPI, store: CatalogStore, review_index: ReviewIndex  # noqa: F811
) -> None:
    settings = slack_settings(tmp_path / "bot", slack_api)  # both processes share the data dir
    async with slack_bot(settings, [shop_agent(store, review_index)], slack_api) as first:
        await first.slack.command("/shop", "wireless earbuds under $100")
        await first.settle()
        root = slack_api.channel_messages("C0GENERAL")[0]
        add = find_button(slack_api.thread("C0GENERAL", root.ts)[-1], "Add to cart")
        await first.slack.block_action(slack_api.thread("C0GENERAL", root.ts)[-1], action_id=add["action_id"],
                                       value=add["value"])
        await first.settle()
        question = slack_api.thread("C0GENERAL", root.ts)[-1]
        confirm = find_button(question, "Confirm")
    assert (await store.get_cart("U0ALICE")).items == []  # the process is gone with the question open

    async with slack_bot(settings, [shop_agent(store, review_index)], slack_api) as second:
        for _ in range(2):  # pressed twice (a double click): the second press finds nothing waiting
            await second.slack.block_action(question, action_id=confirm["action_id"], value=confirm["value"])
        await eventually(lambda: any("Added 1 ×" in m.text for m in slack_api.thread("C0GENERAL", root.ts)))
        await second.settle()
    assert [i.quantity for i in (await store.get_cart("U0ALICE")).items] == [1]
    assert sum("Added 1 ×" in m.text for m in slack_api.thread("C0GENERAL", root.ts)) == 1
