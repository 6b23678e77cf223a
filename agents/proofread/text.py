"""Line-level text helpers shared by the parser and the checkers: masking and sentence splitting."""

from __future__ import annotations

import html
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from linkify_it import LinkifyIt

# What a code span is, as a regular expression. It is not run as one: on a run of backticks that
# never closes it backtracks cubically (4 KB took minutes); code_spans() finds the same matches
# in one pass.
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_BACKTICKS = re.compile(r"`+")
# Zenn `$x$` and Qiita $`x`$ inline math (the latter is also a code span).
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)[^$\n]+?(?<!\s)\$(?!\d)")
_DISPLAY_MATH_ON_A_LINE = re.compile(r"\$\$[^$\n]+?\$\$")  # `$$a * b$$` written inside a paragraph
# MathJax's `\( … \)`, written `\\( … \\)` in Markdown so that the backslash survives.
_ESCAPED_MATH = re.compile(r"\\{1,2}\((?:(?!\\{1,2}\)).){1,400}?\\{1,2}\)")
_URL = re.compile(r"https?://[^\s<>\"'`]+")
# `<[^>\n]+>` and `\]\([^)\n]*\)`, written so that an opener without its closer consumes the rest
# of the line once instead of being retried from every later opener (quadratic on `<<<<…`).
# Only matches whose closing group is present are blanked.
_HTML_TAG = re.compile(r"<([^>\n]*)(>?)")
# An HTML character reference (`&emsp;`, `&#12288;`, `&nbsp;`): one character on the page.
_CHAR_REF = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# A link's destination may hold balanced parentheses (CommonMark): `](https://x/#a-(b)-c)`.
_LINK_DEST = re.compile(r"\]\((?:[^()\n]|\([^()\n]*\))*(\)?)")
# A terminal prompt: `$ `, `% `, `❯ `, and PowerShell's or cmd's `> `, `PS C:\work> `, `C:\> ` (also
# bash's `> ` continuation prompt).
PROMPT = re.compile(r"^\s*(?:[$%❯]|(?:PS(?: [^>\n]*)?|[A-Za-z]:\\[^>\n]*)?>)\s")
_JA_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_KANA = re.compile(r"[\u3040-\u30ff]")


def blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def code_spans(line: str) -> list[tuple[int, int, int]]:
    """(start, end, backticks) of each match of CODE_SPAN.finditer(line), in linear time.

    The regex starts a span at the first backtick of a run of n backticks, with the longest
    opener k <= n for which a later run of exactly k backticks exists on the same line (`.` stops
    at a newline); the span ends after the first such run. When no k works for the first backtick
    of a run, none works for the others in it either."""
    spans: list[tuple[int, int, int]] = []
    offset = 0
    for segment in line.split("\n"):
        runs = [(m.start(), m.end() - m.start()) for m in _BACKTICKS.finditer(segment)]
        by_length: dict[int, list[int]] = {}
        for index, (_start, length) in enumerate(runs):
            by_length.setdefault(length, []).append(index)
        cursor = dict.fromkeys(by_length, 0)  # per length: the first candidate not yet passed
        index = 0
        while index < len(runs):
            start, length = runs[index]
            closer = None
            for ticks in range(length, 0, -1):
                candidates = by_length.get(ticks)
                if candidates is None:
                    continue
                position = cursor[ticks]
                while position < len(candidates) and candidates[position] <= index:
                    position += 1
                cursor[ticks] = position
                if position < len(candidates):
                    closer = candidates[position]
                    break
            if closer is None:
                index += 1
                continue
            end = runs[closer][0] + ticks
            spans.append((offset + start, offset + end, ticks))
            index = closer + 1
        offset += len(segment) + 1
    return spans


def replace_spans(line: str, spans: list[tuple[int, int, str]]) -> str:
    """`line` with each (start, end) range, in order and not overlapping, replaced by its text."""
    if not spans:
        return line
    parts = []
    position = 0
    for start, end, text in spans:
        parts.append(line[position:start])
        parts.append(text)
        position = end
    parts.append(line[position:])
    return "".join(parts)


def mask_code_spans(line: str) -> str:
    """The line with inline code spans replaced by spaces (columns are preserved)."""
    if "`" not in line:
        return line
    return replace_spans(line, [(start, end, " " * (end - start)) for start, end, _ticks in code_spans(line)])


TRAILING_PUNCTUATION = ".,:;!?*_~'\""
# A Markdown list item's marker (`-`, `*`, `+`, `1.`, `1)`), as a pattern to build on.
LIST_MARKER = r"(?:[-*+]|\d+[.)])"
# After non-ASCII text, address syntax again: the text is part of an internationalised path
# (a slug such as `/65708/rustのresultについての質問-errore0277-…`), not prose after the address.
_IRI_TAIL = re.compile(r"[^\x00-\x7f][^\s]*?[-/_?=#&%]")
_PROSE_PUNCTUATION = re.compile(r"[、。，．！？「」『』（）：；・\u3000]")


# Zenn renders with markdown-it, whose autolinks come from linkify-it with fuzzy links off
# (zenn-editor's zenn-markdown-html): a link ends where linkify-it ends it, not at the next space.
_ZENN_LINKIFY = LinkifyIt(options={"fuzzy_link": False})


def zenn_swallowed(line: str, start: int, url: str) -> str:
    """What Zenn's autolink takes beyond `url`, the address written at line[start:]: its linkify
    stops a host at punctuation (`https://openrouter.ai。…` links the host alone) and links nothing
    glued to a letter (`http://localhost:7071を…`), but runs a path on through Japanese
    (`https://x/y/）を`)."""
    found = _ZENN_LINKIFY.match_at_start(line[start:])
    if found is None or not found.raw.startswith(url):
        return ""
    return found.raw[len(url) :]


def trim_bare_url(url: str) -> tuple[str, str]:
    """Split what a reader means as the URL from what a renderer would swallow after it."""
    swallowed = ""
    for position, char in enumerate(url):
        if not char.isascii():
            rest = url[position:]
            if (_IRI_TAIL.match(rest) or "#" in url[:position]) and not _PROSE_PUNCTUATION.search(rest):
                break  # a slug (`…/rustのresult-…/`) or a heading's anchor (`…/x#対策案`, `…#bitbakeがレイヤ…`): the address
            url, swallowed = url[:position], rest
            break
    return _without_closing_text(url), swallowed


# The particles that open prose glued to an address (`…/のサンプル`, `…/を参照`), not a page's name.
_GLUED_PARTICLES = "のをはがにでとへもや"


def is_last_path_segment(url: str, swallowed: str) -> bool:
    """Whether `swallowed`, written right after `url`'s closing `/` with nothing after it on the
    line, is a page name that belongs to the address: `https://ja.wikipedia.org/wiki/ヌメロニム`
    alone on its line links the article it names. Prose glued to it opens with a particle or holds
    sentence punctuation."""
    return (
        url.endswith("/") and swallowed[:1] not in ("", *_GLUED_PARTICLES)
        and not _PROSE_PUNCTUATION.search(swallowed)
    )


def _without_closing_text(url: str) -> str:
    """`url` without the punctuation that ends the sentence or the bracket around it (a `)` or `]`
    it did not open)."""
    url = url.rstrip(TRAILING_PUNCTUATION)
    end = len(url)
    for opener, closer in ("()", "[]"):  # `(https://x/y)` and the link text `[https://x/y](…)`
        opened, closed = url[:end].count(opener), url[:end].count(closer)
        while end and url[end - 1] == closer and opened < closed:
            end -= 1
            closed -= 1
    return url[:end]


def _blank_url(match: re.Match[str]) -> str:
    """Blank the address and leave the prose around it: in 「(https://x/y) は」 the `)` still closes
    its bracket, and in 「https://x/yを見ます。次に…」 the sentence still ends; so does 「(https://x/)の」,
    where the `)` closes the bracket before the words glued to it. Other non-ASCII text glued to the
    address with no sentence punctuation (`https://x/実行手順`) is left blanked as part of it."""
    url = match.group(0)
    for position, char in enumerate(url):
        if not char.isascii():
            if _PROSE_PUNCTUATION.search(url, position) or url[:position].endswith((")", "]")):
                url = url[:position]
            break
    url = _without_closing_text(url)
    return " " * len(url) + match.group(0)[len(url) :]


# GFM strikethrough: text the writer has crossed out (a retracted claim, an outdated step).
_STRUCK = re.compile(r"(?<!~)~~(?=[^\s~])(?:.+?)(?<=[^\s~])~~(?!~)")


def mask_struck(line: str) -> str:
    """The line with ~~struck-through~~ text blanked (columns preserved): the writer has taken
    it back, so its style, particles and spelling are no longer theirs to fix."""
    return _STRUCK.sub(blank, line) if "~~" in line else line


def _blank_spacing(match: re.Match[str]) -> str:
    """A reference to a space or an invisible character (`&emsp;&emsp;` indenting an arrow) is
    layout: blanked. Any other (`&amp;`, `&lt;`) stays as written."""
    char = html.unescape(match.group(0))
    if len(char) == 1 and (char.isspace() or unicodedata.category(char) in ("Zs", "Cf")):
        return blank(match)
    return match.group(0)


def lift_inline_footnotes(line: str) -> tuple[str, list[tuple[int, str]]]:
    """`line` with its inline footnotes (Zenn's `^[…]`, brackets balanced) blanked column for column,
    and each note's (column, text): a note is printed at the article's end, so it is no part of the
    sentence around it; its own sentences are read there."""
    notes: list[tuple[int, str]] = []
    start = line.find("^[")
    while start != -1:
        depth = 0
        for end in range(start + 1, len(line)):
            depth += {"[": 1, "]": -1}.get(line[end], 0)
            if depth == 0:
                notes.append((start + 2, line[start + 2 : end]))
                line = line[:start] + " " * (end + 1 - start) + line[end + 1 :]
                break
        else:
            break  # never closed: a caret and a bracket, not a note
        start = line.find("^[", end + 1)
    return line, notes


def mask_for_prose(line: str) -> str:
    """The line with code, math, URLs, link destinations, HTML tags and spacing character
    references blanked: only words remain."""
    line = mask_code_spans(line)
    if "$$" in line:
        line = _DISPLAY_MATH_ON_A_LINE.sub(blank, line)
    line = _INLINE_MATH.sub(blank, line)
    if "\\(" in line and "\\)" in line:
        line = _ESCAPED_MATH.sub(blank, line)
    line = _LINK_DEST.sub(lambda m: "]" + " " * (len(m.group(0)) - 1) if m.group(1) else m.group(0), line)
    line = _URL.sub(_blank_url, line)
    if "&" in line:
        line = _CHAR_REF.sub(_blank_spacing, line)
    return _HTML_TAG.sub(lambda m: blank(m) if m.group(1) and m.group(2) else m.group(0), line)


def finditer_by_runs(
    pattern: re.Pattern[str], line: str, start: re.Pattern[str], run: re.Pattern[str],
    tail: re.Pattern[str] | None = None,
) -> Iterator[re.Match[str]]:
    """The matches of pattern.finditer(line) for a pattern that begins with a run of `run`
    characters followed by something that cannot continue the run (`user@`, `token=`, `x://`).

    Every start inside one run reaches the same end of the run, so where the first possible
    start (`start`) fails, the later ones in the run fail too: they are skipped instead of each
    rescanning the run, which is quadratic on a long word (`a.a.a.a…`). `tail`, when given, is
    what must follow the run; it is checked first because the pattern itself can backtrack
    through the run for a long time before failing."""
    position = 0
    while (found := start.search(line, position)) is not None:
        begin = found.start()
        run_end = run.match(line, begin)
        end = run_end.end() if run_end else begin + 1
        if tail is None or tail.match(line, end):
            match = pattern.match(line, begin)
            if match is not None:
                yield match
                position = max(match.end(), begin + 1)
                continue
        position = max(end, begin + 1)


# A list item of one to four words: a name (`Ana María Martínez Gómez`), a handle, a term.
_ITEM_WORD = re.compile(r"[^\W_][\w'’.-]*")
MIN_LIST_ITEMS = 6


# `\s+(?:and|or)\s+` tried only where a run of spaces begins: the same cuts, without retrying a
# long run of spaces from each of them.
_LIST_SEPARATOR = re.compile(r",\s*(?:(?:and|or)\s+)?|(?<!\s)\s++(?:and|or)\s+")


def list_segments(text: str) -> list[str]:
    """The text cut at commas and at a joining “and”/“or”: the candidates for list items."""
    return [part.strip() for part in _LIST_SEPARATOR.split(text)]


def list_items(text: str) -> list[tuple[int, int, list[str]]]:
    """The comma-separated lists of names or terms in a piece of English text: runs of at least
    MIN_LIST_ITEMS consecutive items of one to four words (`Aidan Fitzgerald, Akshat Kedia, …`),
    as (first item, items, the words of the run's items). A clause between commas is longer."""
    segments = list_segments(text)
    words = [_ITEM_WORD.findall(segment) for segment in segments]
    runs: list[tuple[int, int, list[str]]] = []
    start = 0
    for index in range(len(segments) + 1):
        if index < len(segments) and 1 <= len(words[index]) <= 4:
            continue
        if index - start >= MIN_LIST_ITEMS:
            runs.append((start, index - start, [w for item in words[start:index] for w in item]))
        start = index + 1
    return runs


def count_kana(text: str) -> int:
    return len(_KANA.findall(text))


def count_japanese(text: str) -> int:
    """How many kana and kanji `text` holds."""
    return len(_JA_CHAR.findall(text))


def has_japanese(text: str) -> bool:
    return _JA_CHAR.search(text) is not None


# Marks that start an item on a line of its own, outside Markdown's list syntax.
# bullets, the arrows of a flow drawn line by line, and the check marks of a feature list (`✅ **検知** - …`)
_LINE_BULLETS = "■□●○◆◇▶►▷★☆※・•↓↑→⇒⇓➡✅❌✔✓☑✗✘⭕❎👉"
# Japanese lines that start an item although no bullet says so: a numbered step (「(8) 〜をタップします」,
# 「①」) or a figure (「46％が〜を挙げた」 under 「回答者のうち、」). Zenn and Qiita show each line on its own.
_JA_ITEM_START = re.compile(r"\s*(?:[(（]\d{1,2}[)）]|[①-⑳]|\d+(?:\.\d+)?\s?[%％])")
# What ends a Japanese sentence in running text: 。 and, in academic style (with ，), ．.
JA_FULL_STOPS = ("。", "．")
_OPENERS = "「『（(【［[〈《“"
_CLOSERS = "」』）)】］]〉》”"


@dataclass(frozen=True)
class Sentence:
    text: str
    line_start: int
    line_end: int
    # (index in text where a line begins, that line's number), for sentences spanning lines.
    breaks: tuple[tuple[int, int], ...] = ()
    # One of the sentences an aside in brackets holds (「（…残ってしまいます。候補となるのは…。）」).
    aside: bool = False

    def line_at(self, index: int) -> int:
        # `breaks` is in increasing order of index: the last break at or before `index`.
        position = bisect_right(self.breaks, index, key=lambda brk: brk[0])
        return self.breaks[position - 1][1] if position else self.line_start

    def typed_gap(self, start: int, end: int) -> bool:
        """Whether text[start:end], white space between two words, is what the writer typed: a
        space or two, or a line break (trailing spaces, then the next line's indentation). Code,
        URLs and tags are blanked to spaces column for column, so a longer run inside a line
        stands where something was taken out (“to `v0.56.0` to” reads “to           to”)."""
        position = bisect_right(self.breaks, start, key=lambda brk: brk[0])  # the first break after `start`
        if position == len(self.breaks) or self.breaks[position][0] > end:
            return end - start <= 2
        return self.breaks[position][0] - start <= 3  # up to two trailing spaces and the space that joins the lines


def split_sentences(lines: list[tuple[int, str]], *, japanese: bool) -> list[Sentence]:
    """Sentences from consecutive prose lines. A paragraph break (a gap in line numbers or a
    blank line) always ends a sentence; terminators inside brackets or quotes do not."""
    sentences: list[Sentence] = []
    buffer: list[str] = []
    breaks: list[tuple[int, int]] = []
    start: int | None = None
    previous: int | None = None
    open_marks: list[str] = []  # the brackets and quotes opened and not yet closed
    bracketed_sentence = False  # the outermost bracket opened where a sentence starts: `(The JVM is…)`
    quoted_sentence = False  # a Japanese quotation opened where a sentence starts: 「…である。」
    previous_line = ""
    in_aside = False  # splitting the sentences of an aside in brackets, up to the one that closes it

    def flush(end: int, aside_goes_on: bool = False) -> None:
        nonlocal buffer, start, breaks, in_aside
        text = "".join(buffer).rstrip()
        if text.strip() and start is not None:
            sentences.append(Sentence(text, start, end, tuple(breaks), in_aside))
        buffer, start, breaks = [], None, []
        open_marks.clear()
        in_aside = aside_goes_on

    for number, line in lines:
        if previous is not None and number != previous + 1 and start is not None:
            flush(previous)
        if not line.strip():
            if start is not None:
                flush(previous if previous is not None else number)
            previous = number
            continue
        if start is not None and line.lstrip()[:1] in _LINE_BULLETS:
            flush(previous if previous is not None else number)  # `■ 1つめのPR: …` on each line: items, not one sentence
        elif start is not None and japanese and _JA_ITEM_START.match(line):
            flush(previous if previous is not None else number)
        elif start is not None and not japanese and _a_line_of_its_own(previous_line, line):
            flush(previous if previous is not None else number)
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
                if not open_marks:
                    bracketed_sentence = char in "([（" and len(buffer) == 1
                    quoted_sentence = char in "「『" and len(buffer) == 1
                open_marks.append(char)
            elif open_marks and (char in _CLOSERS or (char == '"' and open_marks[-1] == "“")):
                open_marks.pop()  # “…" : a curly quotation closed by a straight one still closes
                if japanese and bracketed_sentence and not open_marks and char in ")）" and _line_ends(line, index + 1):
                    # 「（…多すぎて、…英語ページも探したが似たような状況）」 on a line of its own: an aside
                    # that opens its sentence and closes the line ends there, with or without 。
                    flush(number)
                elif japanese and quoted_sentence and not open_marks and char in "」』" and (
                    line[:index].rstrip()[-1:] in "。．！？!?" and _line_ends(line, index + 1)
                ):
                    # 「Vitest3 が…バージョンである。」 on a line of its own: a quoted sentence (a source's
                    # words, a translation) ends with its bracket, and the next line is the writer's own
                    flush(number)
                elif not japanese and not open_marks and (
                    (char in _CLOSING_QUOTES and _closes_sentence(line, index))
                    or (bracketed_sentence and char in ")]" and _closes_bracketed_sentence(line, index))
                ):
                    flush(number)
            elif not open_marks and _ends_sentence(line, index, japanese):
                flush(number)
            elif not japanese and not open_marks and char in "*_\"" and _closes_sentence(line, index):
                flush(number)  # `*the last words.*`, `…for Node.js." It`: the full stop inside ends the sentence
            elif not japanese and not open_marks and char == "'" and _closes_sentence(line, index) and (
                _starts_capitalised(line, index + 1)
            ):
                flush(number)  # `…a mess of your app.' Redux offers`: a quotation in straight single quotes
            elif not japanese and open_marks == ["“"] and _ends_sentence(line, index, False) and (
                _starts_capitalised(line, index + 1)
            ):
                flush(number)  # a quotation of several sentences: each counts on its own
                open_marks.append("“")
            elif not japanese and bracketed_sentence and open_marks == ["("] and _ends_sentence(line, index, False) and (
                _starts_capitalised(line, index + 1) or _line_ends(line, index + 1)
            ):
                flush(number)  # `(This is a side point… Operations on…)`: a paragraph in brackets
                open_marks.append("(")
            elif japanese and bracketed_sentence and len(open_marks) == 1 and open_marks[0] in "(（" and (
                char in JA_FULL_STOPS and _ends_sentence(line, index, True)
            ):
                # 「（…利点がありますが、…残ってしまいます。候補となるのは…にしました。）」: an aside in
                # brackets that opens its paragraph holds sentences of its own, each ending at its 。
                opener = open_marks[0]
                in_aside = True
                flush(number, aside_goes_on=True)
                open_marks.append(opener)
        previous, previous_line = number, line
        if not japanese and start is not None and line.rstrip().endswith(":"):
            flush(number)
        elif japanese and start is not None and not open_marks and _ENDS_IN_EMOJI.search(line):
            flush(number)  # 「…問題なさそうですね👀」 / 「ただ、…」: an emoji at a line's end stands for its 。
    if start is not None and previous is not None:
        flush(previous)
    return sentences


_CLOSING_QUOTES = "”\"’"
# A pictograph with its variation selector, skin tone or joined parts: 👀, 💦, ☀️, 🙇‍♂️.
_PICTOGRAPHS = "\U0001F300-\U0001FAFF\u2600-\u27BF\u2B50\u2B55"
_EMOJI_MODIFIERS = "\uFE0F\u200D\U0001F3FB-\U0001F3FF\u2640\u2642"
_EMOJI_RUN = f"[{_PICTOGRAPHS}][{_EMOJI_MODIFIERS}{_PICTOGRAPHS}]*"
_ENDS_IN_EMOJI = re.compile(_EMOJI_RUN + "\\s*$")  # closing a line
# One ending at a given place, and what must come before it for it to end a sentence: a word, not a
# particle that goes on (「この機能は 🔥 すごい」).
_EMOJI_BEFORE = re.compile(_EMOJI_RUN + "$")
_EMOJI_PART = re.compile(f"[{_PICTOGRAPHS}{_EMOJI_MODIFIERS}]")
_GOES_ON = "はをがにでとのもへやてば、，（(「『"


def _ends_a_thought(before: str) -> bool:
    last = before.rstrip()[-1:]
    return has_japanese(last) and last not in _GOES_ON


SHORT_LINE_WORDS = 8


def _a_line_of_its_own(previous: str, line: str) -> bool:
    """Whether `line` starts an item of its own although the line before did not end a sentence:
    both are short and end in a word, and this one opens with a capital (`Zhou Xu, Dalian
    University of Technology` over `Wenbo Qi, Ant Group`: a list of authors, an address). Wrapped
    prose fills its lines; a clause broken onto the next line goes on in lower case."""
    before, after = previous.strip(), line.strip()
    return all(
        text and text[-1].isalnum() and len(text.split()) <= SHORT_LINE_WORDS for text in (before, after)
    ) and after[:1].isupper()
_NEXT_WORD = re.compile(r"\s*(\S?)")


def _line_ends(line: str, position: int) -> bool:
    """Whether nothing but blanks follows `position` (one anchored match, no copy of the rest)."""
    match = _NEXT_WORD.match(line, position)
    return not (match and match.group(1))


def _starts_capitalised(line: str, position: int) -> bool:
    """Whether the first word from `position` on (past blanks) starts with a capital letter."""
    match = _NEXT_WORD.match(line, position)
    return bool(match and match.group(1).isupper())


def _closes_sentence(line: str, index: int) -> bool:
    """An English sentence ending in a quotation or emphasis: `…effective.” Next`, `*…in it.* Next`:
    the closing marks at `index` follow a terminator and precede a space. A bracket does not count:
    `(or perhaps later?) would make` goes on."""
    following = line[index + 1] if index + 1 < len(line) else " "
    if not following.isspace():
        return False
    before = line[:index + 1].rstrip(_CLOSING_QUOTES + "'*_")
    return before.endswith((".", "!", "?")) and len(before) < index + 1


def _closes_bracketed_sentence(line: str, index: int) -> bool:
    """A whole English sentence in brackets ends with them: `(The JVM is good at it.) Even
    though…`. Only for a bracket opened where a sentence starts; one opened inside a sentence
    (`(or perhaps later?) would make`) leaves it going on."""
    following = line[index + 1] if index + 1 < len(line) else " "
    return following.isspace() and line[:index].rstrip(_CLOSING_QUOTES + "'*_").endswith((".", "!", "?"))


# What follows a 。 that a writer puts as a pause inside a sentence, quoting the thought before it
# (「描画する。みたいなイメージ」「APIで何かする。とか全くしていない」): none of these starts a sentence.
_QUOTED_THOUGHT_TAILS = ("など", "みたいな", "みたいに", "みたいで", "のであれば", "のなら", "のような", "のように",
                         "といった", "とか", "と思", "というイメージ", "という感じ", "というような", "くらい", "ぐらい")


_ELLIPSIS_ENTITIES = ("&#8230;", "&hellip;", "&#x2026;")


def _ends_sentence(line: str, index: int, japanese: bool) -> bool:
    char = line[index]
    following = line[index + 1] if index + 1 < len(line) else " "
    if char in "。！？．":  # ． : the full stop of academic and technical Japanese (with ，)
        if following == "て" or line.startswith("って", index + 1):
            return False  # 「遅れるかもしれない。て時点から」: the 。 closes a thought quoted by (っ)て
        if following == char == "。":
            return False  # 「入力できない。。。」: a run of full stops trails off and ends at its last one
        if line.startswith(_QUOTED_THOUGHT_TAILS, index + 1):
            return False  # 「実行される。というイメージです」「動かなくなる。など」: a pause, not a sentence end
        return following not in "」』）)"
    if not japanese and (char == "…" or (char == ";" and line[: index + 1].endswith(_ELLIPSIS_ENTITIES))):
        # `ADMIconRef&#8230;Also i would…`, `…so it goes… Then`: an ellipsis before a capital ends one
        after = line[index + 1 :].lstrip()
        return after[:1].isupper()
    if japanese and following.isspace() and _EMOJI_PART.match(char) and (
        emoji := _EMOJI_BEFORE.search(line, max(0, index - 16), index + 1)
    ) and _ends_a_thought(line[: emoji.start()]):
        # 「…本音になります 😅 v3 系の…」: an emoji between sentences stands for its 。, as at a line's end,
        # unless a particle follows it (「家族 👨‍👩‍👧 で行った」 goes on)
        after = _NEXT_WORD.match(line, index + 1).group(1)  # type: ignore[union-attr]  # \s*(\S?) always matches
        return bool(after) and after not in _GOES_ON + "。．）)」』"
    if char in ".!?":
        if japanese and char == ".":
            # `…考え方です.個々の…`: a writer who types ASCII , and . for 、 and 。 ends sentences so; a
            # dot between ASCII characters (Node.js, v1.2, file.md) ends none.
            before = line[index - 1] if index else " "
            return has_japanese(before) and not (following.isascii() and following.isalnum())
        if following.isspace():
            previous_word = line[line.rfind(" ", 0, index) + 1 : index].lower()
            if previous_word == "etc" and _line_ends(line, index + 1):
                return True  # `…, etc.` ending the line: the next line starts a new sentence
            return previous_word not in {"e.g", "i.e", "etc", "vs", "mr", "dr", "cf", "fig"}
    return False
