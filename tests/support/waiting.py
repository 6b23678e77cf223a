"""Waiting on a condition with a deadline, never on the clock alone (as bolt-python's test helpers
do): the test goes on as soon as the condition holds and fails with what it waited for."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

DEADLINE = 10.0


async def eventually(
    condition: Callable[[], Any | Awaitable[Any]], what: str = "the condition", *, within: float = DEADLINE,
    interval: float = 0.01,
) -> Any:
    """Re-check `condition` (a function, or one returning an awaitable) every `interval` seconds
    until it returns something truthy, and return that; fail after `within` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(interval)
