"""Jobs the work-pool tests run in worker processes: top-level, in a module that imports little,
so a fresh worker starts them at once."""

from __future__ import annotations

import os
import time


def spin_forever() -> None:
    while True:
        pass


def wait_for_file(path: str) -> str:
    """Blocks until `path` exists (the tests' way to hold a job in flight)."""
    while not os.path.exists(path):
        time.sleep(0.01)
    return path


def allocate(megabytes: int) -> int:
    return len(bytearray(megabytes * 1024 * 1024))


def pid() -> int:
    return os.getpid()


def fail() -> None:
    raise ValueError("the job's own error")


def text_of(size: int) -> str:
    return "x" * size
