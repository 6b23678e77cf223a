"""Benchmarks run end to end (tiny sizes; no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(*args: str) -> str:
    """What `python -m bench ARGS…` prints (it must exit 0)."""
    return subprocess.run(
        [sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    ).stdout


@pytest.mark.parametrize("processes", ["1", "2"])
def test_concurrency_benchmark_reports_every_figure(processes: str) -> None:
    out = bench("concurrency", "--conversations", "4", "--turns", "2", "--latency", "0.01",
                "--processes", processes)
    assert "4 conversations x 2 turns" in out
    assert re.search(r"efficiency ideal/achieved:\s+\d+%", out)
    assert re.search(r"runtime CPU: [\d.]+ s = [\d.]+ ms per turn", out)
    assert re.search(r"frameworks alone .*: [\d.]+ s, \d+% efficiency", out)
    assert re.search(r"bare openai SDK .*: [\d.]+ s, \d+% efficiency", out)


def test_concurrency_benchmark_compares_postgresql_with_sqlite_in_the_same_run(postgres_url: str) -> None:
    out = bench("concurrency", "--conversations", "3", "--turns", "2", "--latency", "0.01",
                "--database-url", postgres_url, "--rounds", "2")
    figure = r"[\d.]+–[\d.]+ ms \(median [\d.]+\)"
    assert re.search(rf"2 rounds interleaved .*SQLite {figure}, PostgreSQL {figure}; ratio of the medians [\d.]+", out)
    refused = subprocess.run(
        [sys.executable, "-m", "bench", "concurrency", "--rounds", "2"], cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert refused.returncode == 2 and "give --database-url too" in refused.stderr


def test_discord_ack_benchmark_reports_every_figure() -> None:
    out = bench("discord-ack", "--commands", "4", "--turn-seconds", "0.3")
    assert re.search(r"runtime idle \(baseline\)\s+p50\s+[\d.]+ ms\s+p99\s+[\d.]+ ms", out)
    assert re.search(r"while 4 turns stream\s+p50\s+[\d.]+ ms", out)
    assert re.search(r"edits per answer: median \d+", out) and re.search(r"REST calls per turn: [\d.]+", out)


def test_proofread_long_lines_benchmark_reports_every_article() -> None:
    out = bench("proofread-long-lines", "--kb", "10")
    assert "on 10 KB articles" in out
    rows = re.findall(r"^\| (.+?) \| ([\d.]+) \| ([\d.]+) \|$", out, re.M)
    assert [name for name, _seconds, _ratio in rows] == [
        "realistic (baseline)", "data: URI image", "one word, no spaces", "a run of spaces",
        "one line of doubled words", "`# ` lines", "a code block of blank lines", "a code line with a run of spaces",
    ]
    assert rows[0][2] == "1.00"


def test_long_requests_benchmark_reports_every_message() -> None:
    out = bench("long-requests", "--chars", "300")
    assert "messages of 300 characters" in out
    rows = re.findall(r"^\| (/\w+) \| (.+?) \| ([\d.]+) \| ([\d.]+) \| ([\d,]+) \| (\w+) \|$", out, re.M)
    names = ["a realistic request (baseline)", "a realistic request, repeated", "a run of digits", "a run of spaces",
             "`1,` again and again", "its first word again and again"]
    assert [(agent, name) for agent, name, *_ in rows] == [(agent, name) for agent in ("/hotel", "/shop") for name in names]
    assert [ratio for _, name, _, ratio, _, _ in rows if name == names[0]] == ["1.0", "1.0"]
    assert {answer for *_, answer in rows} == {"Final"}


def test_regex_sweep_benchmark_times_every_pattern_against_its_baseline() -> None:
    out = bench("regex-sweep", "--chars", "200", "--top", "5", "agents.shopping.intents")
    from bench.regex_sweep import SHAPES, patterns

    count = len(list(patterns("agents.shopping.intents")))
    assert count > 20 and out.startswith(f"{count} patterns × {len(SHAPES)} shapes of 200 characters")
    rows = re.findall(r"^\| agents\.shopping\.intents\.(\w+(?:\[\d+\])?) \| (.+?) \| ([\d.]+) \| ([\d,]+) \|$", out, re.M)
    assert len(rows) == 5
    ratios = [int(ratio.replace(",", "")) for *_, ratio in rows]
    assert ratios == sorted(ratios, reverse=True)  # slowest first
