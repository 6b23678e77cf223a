"""/shop on Discord through the real discord.py client and the fake Discord: product cards with
Add to cart buttons, and a Confirm button that still commits the cart change, once, when it is
pressed after the bot restarted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.shopping.catalog import CatalogStore
from agents.shopping.reviews import ReviewIndex
from tests.fakes.discord_api import FakeDiscordAPI, FakeMessage
from tests.shopping.conftest import embeddings, review_index, seeded_catalog, shop_agent, store  # noqa: F401
from tests.support.bots import discord_settings, start_discord


async def card_with(api: FakeDiscordAPI, root: str, label: str, after: int = 0) -> tuple[FakeMessage, dict[str, Any]]:
    """The first bot message in the thread, after the first `after`, with a button labelled `label`."""

    def found() -> tuple[FakeMessage, dict[str, Any]] | None:
        for message in api.bot_messages(root)[after:]:
            button = next((b for b in message.buttons() if b.get("label") == label), None)
            if button is not None:
                return message, button
        return None

    return await api.wait_for(found)  # type: ignore[no-any-return]


async def test_confirm_pressed_after_a_restart_commits_the_cart_change_once(
    tmp_path: Path, api: FakeDiscordAPI, store: CatalogStore, review_index: ReviewIndex  # noqa: F811
) -> None:
    settings = discord_settings(tmp_path / "bot", api)  # both processes share the data dir
    first = await start_discord(settings, [shop_agent(store, review_index)])
    try:
        interaction = api.slash_command("shop", {"query": "wireless earbuds under $100"})
        await api.dispatch("INTERACTION_CREATE", interaction)
        root = str(await api.wait_for(lambda: api.interactions[interaction["id"]].original_id))
        products, add = await card_with(api, root, "Add to cart")
        await first.settle()
        seen = len(api.bot_messages(root))
        await api.dispatch("INTERACTION_CREATE", api.button_press(add["custom_id"], products))
        question, confirm = await card_with(api, root, "Confirm", after=seen)
        await first.settle()
    finally:
        await first.stop()
    assert (await store.get_cart(api.alice["id"])).items == []  # the process is gone with the question open

    second = await start_discord(settings, [shop_agent(store, review_index)])
    try:
        presses = [api.button_press(confirm["custom_id"], question) for _ in range(2)]  # a double click
        for press in presses:  # the second press finds nothing waiting
            await api.dispatch("INTERACTION_CREATE", press)
        await api.wait_for(lambda: any("Added 1 ×" in m.content for m in api.bot_messages(root)))
        await second.settle()
    finally:
        await second.stop()
    assert [i.quantity for i in (await store.get_cart(api.alice["id"])).items] == [1]
    assert sum("Added 1 ×" in m.content for m in api.bot_messages(root)) == 1
    assert not api.message(question.id).buttons()  # answered: the buttons are gone


async def test_a_request_longer_than_shop_takes_is_refused_privately_in_the_users_language(
    tmp_path: Path, api: FakeDiscordAPI, store: CatalogStore, review_index: ReviewIndex  # noqa: F811
) -> None:
    run = await start_discord(discord_settings(tmp_path, api), [shop_agent(store, review_index)])
    try:
        interaction = api.slash_command("shop", {"query": "イヤホン" * 1001}, locale="ja")
        await api.dispatch("INTERACTION_CREATE", interaction)
        channel = api.interactions[interaction["id"]].channel_id
        refusal = await api.wait_for(lambda: next((m for m in api.messages(channel) if "/shop" in m.content), None))
        await run.settle()
    finally:
        await run.stop()
    assert refusal.ephemeral
    assert refusal.content == "`/shop` へのメッセージは 4,000 文字までです（このメッセージは 4,004 文字）。依頼を短くして送ってください。"
    assert api.interactions[interaction["id"]].response_type == 4 and not api.threads  # answered at once: no thread
