"""Entry points run on uvloop with the collector tuned; library use (tests, embedding) is untouched."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from bot.loop import GC_GEN0_THRESHOLD, startup_complete

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import asyncio, gc, json, sys
from bot.loop import run
from bot.config import load_settings
from bot.runtime import ConversationRuntime
from tests.support.agents import EchoAgent

async def main():
    before = gc.get_freeze_count()
    settings = load_settings(CONCIERGE_DATA_DIR=sys.argv[1], CONCIERGE_LLM="offline", _env_file=None)
    async with await ConversationRuntime.open(settings, agents=[EchoAgent()]):
        after = gc.get_freeze_count()
    return {"loop": type(asyncio.get_running_loop()).__module__, "threshold": gc.get_threshold()[0],
            "frozen_before": before, "frozen_after": after}

print(json.dumps(run(main(), sys.argv[2] if len(sys.argv) > 2 else None)))
"""


def probe(tmp_path: Path, *args: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path), *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_run_uses_uvloop_and_freezes_what_start_up_built(tmp_path: Path) -> None:
    seen = probe(tmp_path)
    assert seen["loop"].startswith("uvloop")  # type: ignore[union-attr]
    assert seen["threshold"] == GC_GEN0_THRESHOLD
    assert seen["frozen_before"] == 0
    assert seen["frozen_after"] > 10_000  # type: ignore[operator]  # modules, classes, compiled graphs


def test_the_standard_loop_on_request(tmp_path: Path) -> None:
    assert probe(tmp_path, "asyncio")["loop"] == "asyncio.unix_events"


def test_outside_run_the_collector_is_left_alone() -> None:
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    startup_complete()
    assert gc.get_threshold() == threshold and gc.get_freeze_count() == frozen


async def test_the_suite_runs_on_the_production_loop() -> None:
    import asyncio

    assert type(asyncio.get_running_loop()).__module__.startswith("uvloop")
