"""Helpers shared by benchmarks."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from bot.config import Settings, load_settings


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def describe(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:8.2f} ms   p95 {percentile(values, 95) * 1000:8.2f} ms"


def scratch_settings(**overrides: object) -> Settings:
    data_dir = Path(tempfile.mkdtemp(prefix="concierge-bench-"))
    values: dict[str, object] = {"CONCIERGE_DATA_DIR": data_dir, "CONCIERGE_LLM": "offline", **overrides}
    return load_settings(_env_file=None, **values)
