"""The concurrency benchmark runs end to end (tiny sizes; no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("processes", ["1", "2"])
def test_concurrency_benchmark_reports_every_figure(processes: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "concurrency", "--conversations", "4", "--turns", "2", "--latency", "0.01",
         "--processes", processes],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    ).stdout
    assert "4 conversations x 2 turns" in out
    assert re.search(r"efficiency ideal/achieved:\s+\d+%", out)
    assert re.search(r"runtime CPU: [\d.]+ s = [\d.]+ ms per turn", out)
    assert re.search(r"frameworks alone .*: [\d.]+ s, \d+% efficiency", out)
    assert re.search(r"bare openai SDK .*: [\d.]+ s, \d+% efficiency", out)
