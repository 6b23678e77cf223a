"""Fixtures of the Discord adapter tests: the fake Discord, and discord.py's process-wide
settings put back after each test (tests/fakes/discord_api.py; tests/support/bots.py).
test_fake_discord.py, which drives the fake with bare discord.py clients, has its own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.fakes.discord_api import FakeDiscordAPI
from tests.support.bots import restore_discord_defaults


@pytest.fixture(autouse=True)
def restore_discord_globals() -> Iterator[None]:
    yield
    restore_discord_defaults()


@pytest.fixture
async def api() -> AsyncIterator[FakeDiscordAPI]:
    async with FakeDiscordAPI() as fake:
        yield fake
