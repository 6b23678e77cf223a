"""The terminal's live status line: rewritten in place, never wider than the terminal in columns
(a kanji takes two), so no wrapped remnant is left behind when the answer replaces it."""

from __future__ import annotations

import io
import os

import pytest

from adapters.console.app import StatusLine, columns
from bot.editor import STATUS_LINE


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_a_japanese_status_line_fits_the_terminal_and_is_blanked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("adapters.console.app.shutil.get_terminal_size", lambda fallback=None: os.terminal_size((40, 20)))
    out = Terminal()
    line = StatusLine(out)
    await line.edit(STATUS_LINE, "大阪のホテルを検索しています… 23軒見つかりました… おすすめをまとめています…")
    await line.edit(STATUS_LINE, "Searching hotels in Osaka…")
    line.clear()
    segments = out.getvalue().split("\r")
    assert all(columns(segment) <= 39 for segment in segments)  # nothing wraps onto a second row
    japanese = segments[2]
    assert japanese.endswith("おすすめをまとめています…") and columns(japanese) >= 38  # the latest words, the width used
    assert segments[3] == " " * columns(japanese)  # blanked over all its columns before the next text
    assert segments[-2] == " " * columns("Searching hotels in Osaka…") and segments[-1] == ""


def test_columns_counts_wide_characters_twice() -> None:
    assert columns("abc") == 3 and columns("大阪") == 4 and columns("ＡＢ") == 4 and columns("ｱｲ") == 2
