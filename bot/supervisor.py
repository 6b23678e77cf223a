"""Background turns and graceful shutdown, for every platform: work started after an event is
acknowledged is kept, logged when it fails, and finished (or stopped and checkpointed) on exit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

log = logging.getLogger(__name__)


class AckFirst:
    """Requests waiting for their acknowledgement go before background work: a burst of slash
    commands is acked first, then its turns start (each waits at most `max_wait` seconds). Use
    `request()` around each incoming request and `wait` as a TaskSupervisor's gate."""

    def __init__(self, max_wait: float = 0.25) -> None:
        self.max_wait = max_wait
        self._pending = 0
        self._quiet = asyncio.Event()
        self._quiet.set()

    @contextlib.asynccontextmanager
    async def request(self) -> AsyncIterator[None]:
        self._pending += 1
        self._quiet.clear()
        try:
            yield
        finally:
            self._pending -= 1
            if self._pending == 0:
                self._quiet.set()

    async def wait(self) -> None:
        if self._pending:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._quiet.wait(), self.max_wait)


class TaskSupervisor:
    """Runs each piece of work as a task it keeps a reference to. `gate`, when given, is awaited
    before the work starts (e.g. let pending acknowledgements go first); a crash is logged, never
    silent. `close()` lets running work finish for a while, then cancels the rest: a cancelled turn
    is marked interrupted by the runtime (its last checkpoint stands), its status message says so
    (the renderer), and the next start resumes it (`ConversationRuntime.recover`)."""

    def __init__(self, *, gate: Callable[[], Awaitable[None]] | None = None, name: str = "work") -> None:
        self._gate = gate
        self._name = name
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        task = asyncio.create_task(self._logged(self._gated(work)), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _gated(self, work: Coroutine[Any, Any, None]) -> None:
        if self._gate is not None:
            try:
                await self._gate()
            except asyncio.CancelledError:
                work.close()  # stopped before it started
                raise
        await work

    async def _logged(self, work: Awaitable[None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("background %s failed", self._name)

    async def drain(self, within: float | None = None) -> None:
        """Wait until every started task has finished (or `within` seconds passed)."""
        loop = asyncio.get_running_loop()
        deadline = None if within is None else loop.time() + within
        while self._tasks:
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return
            await asyncio.wait(set(self._tasks), timeout=remaining)

    async def close(self, within: float = 10.0) -> None:
        """Let work in progress finish (up to `within` seconds), then cancel the rest."""
        await self.drain(within)
        if self._tasks:
            log.warning("stopping %d unfinished %s task(s)", len(self._tasks), self._name)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


@contextlib.asynccontextmanager
async def stop_signal() -> AsyncIterator[asyncio.Event]:
    """An event set by SIGINT or SIGTERM while the block runs (where the loop supports signals)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
    try:
        yield stop
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
