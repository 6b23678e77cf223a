"""A linter scan that never returns, run in the linter's worker process by the tests."""

from __future__ import annotations

import time


def scan_forever(text: str, extensions: tuple[str, ...], disabled: tuple[str, ...]) -> list[tuple[int, int, str, str]]:
    while True:
        time.sleep(1)
