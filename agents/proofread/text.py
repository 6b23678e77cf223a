"""Line-level text helpers shared by the parser and the checkers: masking and sentence splitting."""

from __future__ import annotations

import re
from dataclasses import dataclass

CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
# Zenn `$x$` and Qiita $`x`$ inline math (the latter is also a code span).
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)[^$\n]+?(?<!\s)\$(?!\d)")
_URL = re.compile(r"https?://[^\s<>\"'`]+")
_HTML_TAG = re.compile(r"<[^>\n]+>")
_LINK_DEST = re.compile(r"\]\([^)\n]*\)")
_JA_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_KANA = re.compile(r"[\u3040-\u30ff]")


def blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def mask_code_spans(line: str) -> str:
    """The line with inline code spans replaced by spaces (columns are preserved)."""
    return CODE_SPAN.sub(blank, line)


def mask_for_prose(line: str) -> str:
    """The line with code, math, URLs, link destinations and HTML tags blanked: only words remain."""
    line = mask_code_spans(line)
    line = _INLINE_MATH.sub(blank, line)
    line = _LINK_DEST.sub(lambda m: "]" + " " * (len(m.group(0)) - 1), line)
    line = _URL.sub(blank, line)
    return _HTML_TAG.sub(blank, line)


def count_kana(text: str) -> int:
    return len(_KANA.findall(text))


def has_japanese(text: str) -> bool:
    return _JA_CHAR.search(text) is not None


_OPENERS = "「『（(【［[〈《“"
_CLOSERS = "」』）)】］]〉》”"
_JA_TERMINATORS = "。！？!?"


@dataclass(frozen=True)
class Sentence:
    text: str
    line_start: int
    line_end: int
    # (index in text where a line begins, that line's number), for sentences spanning lines.
    breaks: tuple[tuple[int, int], ...] = ()

    def line_at(self, index: int) -> int:
        line = self.line_start
        for begin, number in self.breaks:
            if begin <= index:
                line = number
        return line


def split_sentences(lines: list[tuple[int, str]], *, japanese: bool) -> list[Sentence]:
    """Sentences from consecutive prose lines. A paragraph break (a gap in line numbers or a
    blank line) always ends a sentence; terminators inside brackets or quotes do not."""
    sentences: list[Sentence] = []
    buffer: list[str] = []
    breaks: list[tuple[int, int]] = []
    start: int | None = None
    previous: int | None = None
    depth = 0

    def flush(end: int) -> None:
        nonlocal buffer, start, depth, breaks
        text = "".join(buffer).rstrip()
        if text.strip() and start is not None:
            sentences.append(Sentence(text, start, end, tuple(breaks)))
        buffer, start, depth, breaks = [], None, 0, []

    for number, line in lines:
        if previous is not None and number != previous + 1 and start is not None:
            flush(previous)
        if not line.strip():
            if start is not None:
                flush(previous if previous is not None else number)
            previous = number
            continue
        if start is not None and buffer and not japanese:
            buffer.append(" ")
        for index, char in enumerate(line):
            if start is None:
                if char.isspace():
                    continue
                start = number
            if not breaks or breaks[-1][1] != number:
                breaks.append((len(buffer), number))
            buffer.append(char)
            if char in _OPENERS:
                depth += 1
            elif char in _CLOSERS and depth:
                depth -= 1
            elif depth == 0 and _ends_sentence(line, index, japanese):
                flush(number)
        previous = number
        if not japanese and start is not None and line.rstrip().endswith(":"):
            flush(number)
    if start is not None and previous is not None:
        flush(previous)
    return sentences


def _ends_sentence(line: str, index: int, japanese: bool) -> bool:
    char = line[index]
    following = line[index + 1] if index + 1 < len(line) else " "
    if char in "。！？":
        return following not in "」』）)"
    if char in ".!?":
        if japanese and char == ".":
            return False
        if following.isspace():
            previous_word = line[: index].rsplit(" ", 1)[-1].lower()
            return previous_word not in {"e.g", "i.e", "etc", "vs", "mr", "dr", "cf", "fig"}
    return False
