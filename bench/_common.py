"""Helpers shared by benchmarks."""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

from bot.config import Settings, load_settings


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def describe(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:8.2f} ms   p95 {percentile(values, 95) * 1000:8.2f} ms"


def child_output(code: str, *args: str, stdin: str, limit: float) -> str | None:
    """The last line `python -c code *args` prints with `stdin` as its input; None when it has not
    finished after `limit` seconds (it is stopped). A child that fails raises CalledProcessError."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, *args], input=stdin, capture_output=True, text=True, timeout=limit, check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    return done.stdout.strip().splitlines()[-1]


def scratch_settings(**overrides: object) -> Settings:
    data_dir = Path(tempfile.mkdtemp(prefix="concierge-bench-"))
    values: dict[str, object] = {"CONCIERGE_DATA_DIR": data_dir, "CONCIERGE_LLM": "offline", **overrides}
    return load_settings(_env_file=None, **values)


@contextlib.asynccontextmanager
async def own_database(url: str | None) -> AsyncIterator[str | None]:
    """`url` as it is, unless it is PostgreSQL: then a new, empty database on that server for this
    run alone, dropped afterwards, so a run never meets the conversations an earlier one left."""
    if not url or not url.startswith("postgres"):
        yield url
        return
    import psycopg
    from psycopg import sql

    name = f"concierge_bench_{os.getpid()}_{time.time_ns() % 10**9}"
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlsplit(url)._replace(path=f"/{name}").geturl()
    finally:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
