"""Selective context against naive full history, measured by the fake server (bench hotel-tokens)."""

from __future__ import annotations

from pathlib import Path

from bench.hotel_tokens import TARGET, TURNS, measure, report, saving


async def test_selective_context_sends_at_least_70_percent_fewer_prompt_tokens(
    seeded_sqlite_url: str, tmp_path: Path
) -> None:
    naive, history, selective = await measure(tmp_path, seeded_sqlite_url)

    assert saving(selective, naive) >= TARGET
    assert selective.total < history.total < naive.total
    # The same conversation in every run: same model calls, same cards.
    assert naive.requests == history.requests == selective.requests == 2 * len(TURNS)
    assert naive.cards == history.cards == selective.cards
    assert all(selective.cards)
    # Later turns cost the selective agent less extra than the naive one.
    assert selective.per_turn[-1] - selective.per_turn[0] < naive.per_turn[-1] - naive.per_turn[0]
    assert "fewer prompt tokens" in report(naive, history, selective)
