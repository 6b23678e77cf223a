"""Event-loop lag warnings: a task that wakes every `interval` seconds and measures how late it was;
when the loop was blocked longer than the threshold, a warning names how long and what blocked it.

The culprit comes from a watchdog thread: while the loop is overdue it samples the loop thread's
stack (sys._current_frames) and the task that was running, so the warning shows the function
that held the loop, not just that something did."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
import traceback
from dataclasses import dataclass

log = logging.getLogger(__name__)

INTERVAL = 0.05
STACK_DEPTH = 8  # innermost frames shown


@dataclass(frozen=True)
class Stall:
    """One blocked stretch of the loop: how long, and what was running (when the watchdog saw it)."""

    seconds: float
    task: str | None = None
    stack: tuple[str, ...] = ()  # innermost last: "module.py:42 in function"

    @property
    def culprit(self) -> str | None:
        return self.stack[-1] if self.stack else None

    def describe(self) -> str:
        text = f"event loop blocked for {self.seconds * 1000:.0f} ms"
        if self.task:
            text += f" in task {self.task!r}"
        if self.stack:
            text += "; stack (innermost first): " + " <- ".join(reversed(self.stack))
        return text


class LoopWatch:
    """`start()` on the loop to watch; `await stop()` to end. `stalls` keeps the last ones seen."""

    def __init__(self, threshold_ms: float = 100.0, *, interval: float = INTERVAL) -> None:
        self.threshold = threshold_ms / 1000
        self.interval = interval
        self.stalls: list[Stall] = []
        self.worst = 0.0  # the longest lag measured, in seconds
        self.ticks = 0
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._beat = time.monotonic()  # when the loop task last ran
        self._sample: tuple[float, Stall] | None = None  # (beat it belongs to, what was running)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0

    def start(self) -> None:
        if self._task is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._beat = time.monotonic()
        self._stopping.clear()
        self._thread = threading.Thread(target=self._watchdog, name="loopwatch", daemon=True)
        self._thread.start()
        self._task = self._loop.create_task(self._tick(), name="loopwatch")

    async def stop(self) -> None:
        self._stopping.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._thread is not None:
            self._thread.join(timeout=1)
            self._thread = None

    async def _tick(self) -> None:
        try:
            while True:
                before = time.monotonic()
                self._beat = before
                await asyncio.sleep(self.interval)
                lag = time.monotonic() - before - self.interval
                self.ticks += 1
                self.worst = max(self.worst, lag)
                if lag >= self.threshold:
                    self._report(before, lag)
        finally:
            self._stopping.set()

    def _report(self, beat: float, lag: float) -> None:
        sample = self._sample
        seen = sample[1] if sample is not None and sample[0] == beat else None
        stall = Stall(seconds=lag, task=seen.task if seen else None, stack=seen.stack if seen else ())
        self.stalls = [*self.stalls[-19:], stall]
        log.warning("%s", stall.describe())

    def _watchdog(self) -> None:
        # Check a few times per threshold: a stall is sampled while it is still going on.
        period = max(0.01, min(self.interval, self.threshold / 2))
        while not self._stopping.wait(period):
            beat = self._beat
            if time.monotonic() - beat < self.threshold:
                continue
            if self._sample is not None and self._sample[0] == beat:
                continue  # this stall is already sampled
            self._sample = (beat, self._what_runs())

    def _what_runs(self) -> Stall:
        frame = sys._current_frames().get(self._loop_thread)
        stack: tuple[str, ...] = ()
        if frame is not None:
            summary = traceback.extract_stack(frame, limit=STACK_DEPTH)
            stack = tuple(f"{_short(entry.filename)}:{entry.lineno} in {entry.name}" for entry in summary)
        task = None
        with contextlib.suppress(Exception):
            current = asyncio.current_task(self._loop)
            task = current.get_name() if current is not None else None
        return Stall(seconds=0.0, task=task, stack=stack)


def _short(filename: str) -> str:
    parts = filename.replace("\\", "/").split("/")
    return "/".join(parts[-2:])
