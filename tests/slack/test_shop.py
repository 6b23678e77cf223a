"""/shop on Slack: product cards with Add to cart buttons, a confirmation with Confirm/Cancel,
both answered by button presses through the real slack-bolt app."""

from __future__ import annotations

from agents.shopping.catalog import CatalogStore
from agents.shopping.reviews import ReviewIndex
from tests.fakes.slack_api import find_button
from tests.shopping.conftest import embeddings, review_index, seeded_catalog, shop_agent, store  # noqa: F401
from tests.slack.conftest import HarnessFactory


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
