"""Retention on SQLite and PostgreSQL: every idle conversation keeps only its latest checkpoint,
conversations idle past the TTL are forgotten, running turns are left alone, and the report says
what went; `python -m bot data prune` and the worker run it."""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.agent import TurnInput
from bot.cli import run_retention
from bot.config import Settings, load_settings
from bot.conversation import ConversationKey
from bot.events import Final
from bot.runtime import ConversationRuntime
from bot.storage import prune_database
from tests.support.agents import EchoAgent
from tests.support.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]
DAY = 86400


@pytest.fixture
def postgres_schema_url(postgres_url: str) -> Iterator[str]:
    """A schema of its own, so retention sees only this test's threads."""
    import psycopg

    schema = f"retention_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{postgres_url}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def any_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    overrides: dict[str, object] = {"CONCIERGE_DATA_DIR": tmp_path, "CONCIERGE_LLM": "offline"}
    if request.param == "postgres":
        overrides["CONCIERGE_DATABASE_URL"] = request.getfixturevalue("postgres_schema_url")
    return load_settings(**overrides, _env_file=None)


async def _turns(rt: ConversationRuntime, key: ConversationKey, n: int) -> None:
    for i in range(n):
        events = [e async for e in rt.handle(key, TurnInput.typed(f"/echo look up topic{i}"))]
        assert isinstance(events[-1], Final)


async def _checkpoints(rt: ConversationRuntime, key: ConversationKey) -> int:
    graph = await rt._graph(rt._agents["echo"])
    return len([c async for c in graph.aget_state_history(rt._config(key, rt._agents["echo"], 0))])


async def _age(rt: ConversationRuntime, key: ConversationKey, days: float) -> None:
    await rt.app_db.execute(
        "UPDATE concierge_threads SET updated_at = ? WHERE key = ?", (time.time() - days * DAY, key.thread_id)
    )


@pytest.fixture
async def runtime(any_settings: Settings) -> AsyncIterator[ConversationRuntime]:
    async with await ConversationRuntime.open(any_settings, agents=[EchoAgent()]) as rt:
        yield rt


async def test_idle_threads_keep_their_latest_checkpoint_and_old_ones_are_forgotten(
    runtime: ConversationRuntime, any_settings: Settings
) -> None:
    recent, stale = ConversationKey.console("recent"), ConversationKey.console("stale")
    await _turns(runtime, recent, 2)  # a two-turn conversation: never pruned by the turns themselves
    await _turns(runtime, stale, 2)
    await _age(runtime, stale, 120)
    assert await _checkpoints(runtime, recent) > 1
    before = await runtime.checkpoints.stored_bytes()

    dry = await prune_database(any_settings, ttl_days=90, dry_run=True)
    assert dry.dry_run and dry.threads_expired == 1 and dry.threads_pruned == 1 and dry.checkpoints > 2
    assert await runtime.checkpoints.stored_bytes() == before  # a dry run removes nothing
    assert await runtime.app_db.get_thread(stale.thread_id) is not None

    report = await prune_database(any_settings, ttl_days=90)
    assert (report.threads_expired, report.threads_pruned, report.checkpoints) == (1, 1, dry.checkpoints)
    assert report.bytes == dry.bytes == before - await runtime.checkpoints.stored_bytes()
    assert "removed" in report.summary() and "1 threads expired" in report.summary()

    assert await runtime.app_db.get_thread(stale.thread_id) is None
    assert await _checkpoints(runtime, stale) == 0
    assert await _checkpoints(runtime, recent) == 1
    # The latest checkpoint is all a conversation needs: it goes on with its whole history.
    events = [e async for e in runtime.handle(recent, TurnInput.typed("/echo look up more"))]
    assert isinstance(events[-1], Final) and events[-1].data["messages"] == 12

    taken = await _checkpoints(runtime, recent)  # the turn just taken added its own
    again = await prune_database(any_settings, ttl_days=90)
    assert (again.threads_expired, again.threads_pruned, again.checkpoints) == (0, 1, taken - 1)


async def test_a_ttl_of_zero_keeps_every_thread(runtime: ConversationRuntime, any_settings: Settings) -> None:
    old = ConversationKey.console("ancient")
    await _turns(runtime, old, 2)
    await _age(runtime, old, 10_000)
    report = await prune_database(any_settings, ttl_days=0)
    assert report.threads_expired == 0 and report.threads_pruned == 1
    assert await runtime.app_db.get_thread(old.thread_id) is not None
    assert await _checkpoints(runtime, old) == 1


async def test_a_conversation_with_a_turn_running_is_left_alone(
    runtime: ConversationRuntime, any_settings: Settings
) -> None:
    busy = ConversationKey.console("busy")
    await _turns(runtime, busy, 2)
    await _age(runtime, busy, 120)
    held = await _checkpoints(runtime, busy)
    async with runtime.app_db.thread_lock(busy.thread_id):  # as a turn in another process holds it
        report = await prune_database(any_settings, ttl_days=90)
    assert report.busy == 1 and report.checkpoints == 0
    assert await _checkpoints(runtime, busy) == held


async def test_the_worker_runs_retention_until_stopped(runtime: ConversationRuntime, any_settings: Settings) -> None:
    stale = ConversationKey.console("stale-worker")
    await _turns(runtime, stale, 1)
    await _age(runtime, stale, 120)
    stop = asyncio.Event()
    job = asyncio.create_task(run_retention(any_settings.model_copy(update={"retention_interval": 3600}), stop))
    async def expired() -> bool:
        return await runtime.app_db.get_thread(stale.thread_id) is None

    await eventually(expired, "the worker to run retention", within=30, interval=0.02)
    stop.set()
    await asyncio.wait_for(job, timeout=10)


async def _cli(data_dir: Path, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "SLACK_", "DISCORD_"))}
    env.update(CONCIERGE_DATA_DIR=str(data_dir), CONCIERGE_LLM="offline")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "data", "prune", *args,
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_data_prune_reports_what_it_removed_and_refuses_a_bad_ttl(tmp_path: Path) -> None:
    settings = load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", _env_file=None)
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]) as rt:
        await _turns(rt, ConversationKey.console("cli"), 2)
    code, out, _ = await _cli(tmp_path, "--dry-run")
    assert code == 0 and out.startswith("would remove ") and "1 pruned to their latest checkpoint" in out
    code, out, _ = await _cli(tmp_path, "--ttl", "30")
    assert code == 0 and out.startswith("removed ") and "0 threads expired, 1 pruned" in out
    code, out, _ = await _cli(tmp_path)
    assert code == 0 and out.startswith("removed 0 checkpoints")
    code, _, err = await _cli(tmp_path, "--ttl", "-3")
    assert code == 2 and "must be a number of days, 0 or more" in err
