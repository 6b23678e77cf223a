"""How every entry point runs: the event loop, and the garbage collector tuned for a long-lived
process that allocates many short-lived objects per turn."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# A turn allocates tens of thousands of objects (messages, chunks, pydantic models), nearly all
# freed by reference counting. With CPython's default gen-0 threshold of 700 the cyclic collector
# runs dozens of times per turn and keeps re-scanning everything the process holds; together with
# freezing what start-up built, this cuts CPU per turn by about a fifth (`python -m bench concurrency`).
GC_GEN0_THRESHOLD = 20_000
_gc_tuned = False


def run(main: Coroutine[Any, Any, T], loop: str | None = None) -> T:
    """`asyncio.run` on uvloop, where it is installed (Linux and macOS), with the collector tuned.

    uvloop makes a turn cost about a fifth less CPU than the standard loop. `loop` (default:
    CONCIERGE_EVENT_LOOP, else "uvloop") set to "asyncio" keeps the standard loop, e.g. for
    asyncio's debug mode."""
    global _gc_tuned
    gc.set_threshold(GC_GEN0_THRESHOLD)
    _gc_tuned = True
    choice = loop or os.environ.get("CONCIERGE_EVENT_LOOP") or "uvloop"
    if choice == "uvloop":
        try:
            import uvloop
        except ImportError:  # Windows
            pass
        else:
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                return runner.run(main)
    return asyncio.run(main)


def freeze_heap() -> None:
    """Move everything built so far (libraries, agents' data, compiled graphs) out of the garbage
    collector's reach: a full collection would otherwise walk it all and stall the event loop for
    hundreds of milliseconds — long enough to make a platform's acknowledgement late."""
    gc.collect()
    gc.freeze()


def startup_complete() -> None:
    """Called once the process has built what it keeps for its lifetime (modules, compiled graphs,
    platform clients): under `run`, freeze it (freeze_heap). Elsewhere (tests, embedding
    applications) it does nothing."""
    if _gc_tuned:
        freeze_heap()
