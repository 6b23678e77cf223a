"""The work pool (bot/workpool.py): CPU-heavy jobs on untrusted input run in worker processes that
are killed and replaced when a job overruns, is cancelled or runs out of memory; one user's jobs
wait their turn while other users' go ahead; /proofread uses it, and other users' turns go on."""

from __future__ import annotations

import asyncio
import gc
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import bot.loop
from agents.hotel.agent import HotelAgent
from agents.proofread.agent import ProofreadAgent
from bot import workpool
from bot.agent import TurnInput
from bot.app import App
from bot.config import Settings, load_settings
from bot.conversation import ConversationKey
from bot.events import Failure, Final, StreamEvent
from bot.faults import FAULT_TABLE, FaultClass
from bot.loop import run
from bot.workpool import WorkFailed, WorkLimits, WorkPool, owner
from tests.hotel.conftest import TODAY, hotel_store, seeded_sqlite_url  # noqa: F401 (fixtures)
from tests.proofread.conftest import fixture_text
from tests.reliability.work_jobs import allocate, fail, pid, spin_forever, text_of, wait_for_file
from tests.support.waiting import eventually

DEADLINE = 60.0
ROOT = Path(__file__).resolve().parents[2]


# --- helpers -----------------------------------------------------------------------------------------


def alive(process_id: int) -> bool:
    try:
        os.kill(process_id, 0)
    except ProcessLookupError:
        return False
    # A killed child not yet reaped is a zombie: gone for our purposes.
    try:
        with open(f"/proc/{process_id}/stat") as stat:
            return stat.read().split(") ")[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
async def pool() -> AsyncIterator[WorkPool]:
    pool = WorkPool(WorkLimits(processes=2, timeout=30, per_user=1))
    try:
        yield pool
    finally:
        await pool.close()


# --- the pool ----------------------------------------------------------------------------------------


async def test_a_job_that_loops_forever_is_killed_at_the_timeout_and_the_next_job_runs():
    pool = WorkPool(WorkLimits(processes=1, timeout=1, per_user=1))
    try:
        first = await pool.run(pid)
        with pytest.raises(WorkFailed) as failed:
            await pool.run(spin_forever)
        assert failed.value.reason == "timeout"
        assert failed.value.kind == "timeout"
        assert "took too long" in failed.value.user_message and "over 1 s" in failed.value.user_message
        await eventually(lambda: not alive(first), "the overrunning worker to be killed")
        second = await pool.run(pid)  # a fresh worker
        assert second != first
        assert await pool.run(sum, [1, 2, 3]) == 6
        assert pool.replaced == 1
    finally:
        await pool.close()


async def test_a_cancelled_job_has_its_process_killed(pool: WorkPool):
    worker = await pool.run(pid)
    job = asyncio.create_task(pool.run(spin_forever))
    await eventually(lambda: pool.in_flight(workpool.ANONYMOUS) == 1, "the job to start")
    job.cancel()  # what the turn deadline does to a turn waiting on a job
    with pytest.raises(asyncio.CancelledError):
        await job
    await eventually(lambda: not alive(worker), "the cancelled job's worker to be killed")
    assert pool.replaced == 1
    assert await pool.run(pid) != worker


async def test_a_job_that_raises_fails_with_a_clear_message_and_keeps_its_worker(pool: WorkPool):
    worker = await pool.run(pid)
    with pytest.raises(WorkFailed) as failed:
        await pool.run(fail)
    assert failed.value.reason == "error" and "ValueError: the job's own error" in failed.value.detail
    assert failed.value.user_message == FAULT_TABLE[FaultClass.WORK_CRASHED].user_message
    assert await pool.run(pid) == worker
    assert pool.replaced == 0


async def test_a_job_that_allocates_too_much_fails_cleanly():
    pool = WorkPool(WorkLimits(processes=1, timeout=30, memory_mb=300, per_user=1))
    try:
        assert await pool.run(allocate, 10) == 10 * 1024 * 1024
        with pytest.raises(WorkFailed) as failed:
            await pool.run(allocate, 2048)
        assert failed.value.reason == "memory"
        assert failed.value.user_message == FAULT_TABLE[FaultClass.WORK_MEMORY].user_message
        assert await pool.run(allocate, 10) == 10 * 1024 * 1024  # the next job runs
    finally:
        await pool.close()


async def test_a_worker_that_dies_is_reported_and_replaced(pool: WorkPool):
    with pytest.raises(WorkFailed) as failed:
        await pool.run(os._exit, 3)
    assert failed.value.reason == "crashed"
    assert await pool.run(sum, [2, 2]) == 4


async def test_a_users_next_job_waits_for_their_first_while_other_users_go_ahead(pool: WorkPool, tmp_path: Path):
    release = tmp_path / "release"

    async def as_user(user: str, job: Callable[..., Any], *args: Any) -> Any:
        with owner(user):
            return await pool.run(job, *args)

    first = asyncio.create_task(as_user("mallory", wait_for_file, str(release)))
    await eventually(lambda: pool.in_flight("mallory") == 1, "mallory's first job to start")
    second = asyncio.create_task(as_user("mallory", wait_for_file, str(release)))
    # Another user is not held up: alice's job runs and finishes while mallory's are blocked.
    assert await as_user("alice", sum, [1, 2]) == 3
    assert pool.in_flight("mallory") == 1  # the second is queued, not running
    assert not first.done() and not second.done()
    release.touch()
    assert await first == str(release)
    assert await second == str(release)
    assert pool.in_flight("mallory") == 0


async def test_the_turn_deadline_can_stop_a_job_still_waiting_for_its_users_slot(pool: WorkPool, tmp_path: Path):
    release = tmp_path / "release"
    with owner("mallory"):
        running = asyncio.create_task(pool.run(wait_for_file, str(release)))
        await eventually(lambda: pool.in_flight("mallory") == 1, "the first job to start")
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await pool.run(sum, [1])
    release.touch()
    await running


def test_a_large_result_arrives_whole_on_every_event_loop(monkeypatch: pytest.MonkeyPatch):
    # bot.loop.run tunes the collector for the whole process; put it back for the other tests.
    monkeypatch.setattr(bot.loop, "_gc_tuned", bot.loop._gc_tuned)
    threshold = gc.get_threshold()
    monkeypatch.setattr(bot.loop, "GC_GEN0_THRESHOLD", threshold[0])

    async def main() -> list[int]:
        pool = WorkPool(WorkLimits(processes=1))
        try:
            return [len(await pool.run(text_of, 3_000_000)) for _ in range(3)]
        finally:
            await pool.close()

    for loop in ("uvloop", "asyncio"):
        assert run(main(), loop) == [3_000_000] * 3, loop


def test_work_faults_have_clear_messages():
    timeout = FAULT_TABLE[FaultClass.WORK_TIMEOUT]
    assert (timeout.failure, timeout.retry) == ("timeout", False)
    assert "over 2.5 s" in WorkFailed("timeout", timeout=2.5).user_message
    assert FAULT_TABLE[FaultClass.WORK_MEMORY].failure == "bad_input"
    assert FAULT_TABLE[FaultClass.WORK_CRASHED].failure == "internal"
    assert not any(FAULT_TABLE[f].retry for f in (FaultClass.WORK_MEMORY, FaultClass.WORK_CRASHED))


def test_work_settings_come_from_the_environment(tmp_path: Path):
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_WORK_PROCESSES="3", CONCIERGE_WORK_TIMEOUT="7.5",
        CONCIERGE_WORK_MEMORY_MB="512", CONCIERGE_WORK_PER_USER="2", _env_file=None,
    )
    assert WorkLimits.from_settings(settings) == WorkLimits(processes=3, timeout=7.5, memory_mb=512, per_user=2)
    default = WorkLimits.from_settings(load_settings(CONCIERGE_DATA_DIR=tmp_path, _env_file=None))
    assert default.processes == min(2, os.cpu_count() or 1) and default.per_user == 1


# --- through the application ---------------------------------------------------------------------


def app_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(CONCIERGE_DATA_DIR=tmp_path / "data", CONCIERGE_LLM="offline", _env_file=None, **overrides)


async def final_of(events: AsyncIterator[StreamEvent]) -> Final | Failure:
    last = None
    async for event in events:
        last = event
    assert isinstance(last, Final | Failure)
    return last


def turn(runtime: Any, thread: str, line: str, user: str) -> Awaitable[Final | Failure]:
    return final_of(runtime.handle(ConversationKey.console(thread), TurnInput.typed(line, user_id=user)))


async def test_the_pool_starts_on_first_use_and_stops_with_the_runtime(tmp_path: Path):
    app = App(app_settings(tmp_path), [ProofreadAgent()])
    runtime = await app.open_runtime()
    try:
        pool = workpool.installed()
        assert pool is not None and pool.started == 0  # nothing started for a runtime that did no work
        final = await turn(runtime, "a", "/proofread # Title\n\n##Setup\n\nSee the [docs](htps://example.com).", "alice")
        assert isinstance(final, Final), final
        assert final.data["errors"] == []
        sources = {issue["source"] for issue in final.data["issues"]}
        assert {"pymarkdownlnt:MD018", "rule:malformed-url"} <= sources  # the linter and our rules, in the pool
        assert pool.started >= 1
        workers = [w.process.pid for w in pool._idle if w.process is not None]
    finally:
        await runtime.close()
    assert workpool.installed() is None
    await eventually(lambda: not any(alive(p) for p in workers), "the workers to exit")


async def test_an_innocent_proofread_completes_while_another_users_job_spins_and_is_killed(tmp_path: Path):
    app = App(app_settings(tmp_path, CONCIERGE_WORK_PROCESSES="2"), [ProofreadAgent()])
    async with await app.open_runtime() as runtime:
        pool = workpool.installed()
        assert pool is not None
        with owner("mallory"):
            hostile = asyncio.create_task(pool.run(spin_forever, timeout=120))
        await eventually(lambda: pool.in_flight("mallory") == 1, "the hostile job to start")
        final = await turn(runtime, "alice", "/proofread " + fixture_text("links_bad.md"), "alice")
        assert isinstance(final, Final), final
        assert final.text.startswith(("Proofreading: ", "校正結果: ")) and final.data["errors"] == []
        assert not hostile.done()  # alice was served while the hostile job held a worker
        hostile.cancel()
        with pytest.raises(asyncio.CancelledError):
            await hostile
        assert pool.replaced == 1
        again = await turn(runtime, "alice", "/proofread " + fixture_text("english_clean.md"), "alice")
        assert isinstance(again, Final), again


async def test_hostile_proofread_uploads_are_stopped_and_an_innocent_hotel_turn_completes(
    tmp_path: Path, hotel_store: Any  # noqa: F811
):
    # Every job overruns a timeout this short: each upload is stopped in its worker process.
    settings = app_settings(tmp_path, CONCIERGE_WORK_TIMEOUT="0.01")
    app = App(settings, [ProofreadAgent(), HotelAgent(clock=lambda tz: TODAY, store=hotel_store)])
    article = ((fixture_text("mixed_realistic.md") + "\n") * 40).encode()[:90_000].decode(errors="ignore")
    async with await app.open_runtime() as runtime:
        hostile = [
            asyncio.create_task(turn(runtime, f"upload-{n}", "/proofread " + article, "mallory"))
            for n in range(3)
        ]
        innocent = await turn(runtime, "trip", "/hotel Paris near the Eiffel Tower next weekend", "alice")
        assert isinstance(innocent, Final), innocent
        assert innocent.cards
        for failure in await asyncio.gather(*hostile):
            assert isinstance(failure, Failure), failure
            assert failure.kind == "timeout"
            # The article is Japanese, so its writer is told in Japanese.
            assert failure.user_message.startswith("この記事のチェックに時間がかかりすぎたため（0.01 秒超）")
        pool = workpool.installed()
        assert pool is not None and pool.replaced >= 3
        # The bot goes on: the same user's next (small) request is answered.
        assert isinstance(await turn(runtime, "trip", "/hotel Rome tomorrow", "mallory"), Final)


def test_the_hostile_mix_benchmark_reports_both_modes():
    out = subprocess.run(
        [sys.executable, "-m", "bench", "hostile-mix", "--uploads", "1", "--kb", "5", "--hotel-turns", "1",
         "--idle-seconds", "0.2"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    ).stdout
    for mode in ("to_thread (before)", "work pool (after)"):
        assert re.search(re.escape(mode) + r"\s+worst loop lag\s+[\d.]+ ms .* max\s+\d+ ms .*uploads: 1 answered", out), out
    assert re.search(r"with the pool: worst loop lag \d+ -> \d+ ms; slowest /hotel turn [\d.]+ -> [\d.]+ s", out), out
    assert re.search(r"loop watch cost on an idle loop: [\d.]+% of a core without, [\d.]+% with", out), out
