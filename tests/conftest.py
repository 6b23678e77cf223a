"""Shared fixtures: settings in a temp data dir, the fake OpenAI server, service availability."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config import Settings, load_settings
from tests.fakes.openai_server import FakeOpenAI

REQUIRE_SERVICES = os.environ.get("CONCIERGE_REQUIRE_SERVICES") == "1"

# The bot processes the tests start read the terminal's locale and time zone (a console user's
# currency and dates): every run gets the same ones, whatever the machine's are.
for _name in ("LC_ALL", "LC_MESSAGES", "TZ"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"
POSTGRES_URL = os.environ.get("CONCIERGE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Skip (on a developer machine) or fail (in CI) when a service is not running."""
    if _reachable(host, port):
        return
    message = f"{name} is not reachable on {host}:{port}"
    if REQUIRE_SERVICES:
        pytest.fail(message + " (CONCIERGE_REQUIRE_SERVICES=1)")
    pytest.skip(message)


@pytest.fixture
def postgres_url() -> str:
    require_service("PostgreSQL", "127.0.0.1", 5432)
    return POSTGRES_URL


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", _env_file=None)


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(models=("gpt-4o-mini", "backup-model", "text-embedding-3-small")) as server:
        yield server


@pytest.fixture
def openai_settings(tmp_path: Path, fake_openai: FakeOpenAI) -> Settings:
    return load_settings(
        CONCIERGE_DATA_DIR=tmp_path,
        OPENAI_API_KEY="sk-test-secret-value",
        OPENAI_BASE_URL=fake_openai.base_url,
        CONCIERGE_LLM="openai",
        CONCIERGE_LLM_TIMEOUT=2,
        CONCIERGE_RETRY_BASE_DELAY=0.01,
        CONCIERGE_RETRY_MAX_DELAY=0.05,
        _env_file=None,
    )


@pytest.fixture(scope="session")
def event_loop_policy() -> asyncio.AbstractEventLoopPolicy:
    """Tests run on the event loop production runs on (bot/loop.py): uvloop where it is installed."""
    try:
        import uvloop
    except ImportError:
        return asyncio.DefaultEventLoopPolicy()
    return uvloop.EventLoopPolicy()
