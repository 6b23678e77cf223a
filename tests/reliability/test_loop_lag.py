"""The loop-lag watch (bot/loopwatch.py): a blocked event loop is reported with how long and what
blocked it; an idle loop is not; the long-running modes start it with the runtime."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from bot.app import App
from bot.config import load_settings
from bot.loopwatch import LoopWatch
from tests.support.waiting import eventually

DEADLINE = 10.0


def hold_the_loop_with_a_blocking_call() -> None:
    time.sleep(0.3)  # a blocking call on the event loop: what the watch is for


async def test_a_300_ms_block_is_reported_with_the_culprits_name(caplog: pytest.LogCaptureFixture):
    watch = LoopWatch(threshold_ms=100)
    watch.start()
    try:
        await eventually(lambda: watch.ticks >= 2, "the watch to run")
        with caplog.at_level(logging.WARNING, logger="bot.loopwatch"):
            hold_the_loop_with_a_blocking_call()
            await eventually(lambda: bool(watch.stalls), "the stall to be reported")
    finally:
        await watch.stop()
    (stall,) = watch.stalls
    assert stall.seconds >= 0.25
    assert stall.culprit is not None and "hold_the_loop_with_a_blocking_call" in stall.culprit  # innermost frame
    assert stall.task is not None
    (record,) = [r for r in caplog.records if r.name == "bot.loopwatch"]
    assert record.levelno == logging.WARNING
    assert "event loop blocked for" in record.getMessage()
    assert "hold_the_loop_with_a_blocking_call" in record.getMessage()


async def test_an_idle_loop_reports_nothing(caplog: pytest.LogCaptureFixture):
    # A threshold well above the scheduling noise of a busy test machine.
    watch = LoopWatch(threshold_ms=250)
    with caplog.at_level(logging.WARNING, logger="bot.loopwatch"):
        watch.start()
        try:
            await eventually(lambda: watch.ticks >= 20, "twenty ticks")
        finally:
            await watch.stop()
    assert watch.stalls == []
    assert [r for r in caplog.records if r.name == "bot.loopwatch"] == []
    assert watch.worst < 0.25


async def test_stop_ends_the_watchdog_thread():
    watch = LoopWatch()
    watch.start()
    thread = watch._thread
    assert thread is not None and thread.is_alive()
    await watch.stop()
    assert not thread.is_alive()


async def test_the_runtime_runs_the_watch_and_stops_it_on_close(tmp_path: Path):
    settings = load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", _env_file=None)
    runtime = await App(settings, []).open_runtime()
    services = runtime.services  # type: ignore[attr-defined]
    watch = services.watch
    try:
        await eventually(lambda: watch.ticks >= 2, "the watch to run")
    finally:
        await runtime.close()
    assert watch._task is None and watch._thread is None


async def test_a_zero_threshold_turns_the_watch_off(tmp_path: Path):
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_LOOP_LAG_WARN_MS="0", _env_file=None
    )
    async with await App(settings, []).open_runtime() as runtime:
        assert runtime.services.watch is None  # type: ignore[attr-defined]
