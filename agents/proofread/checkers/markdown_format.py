"""markdown_format: pymarkdownlnt (front matter and GFM tables on) plus rules it does not have.

Zenn and Qiita syntax (`:::message`, `:::note`, `@[card](…)`, `![](url =250x)`, `$$` blocks,
```` ```js:file.js ````) is blanked out of the linter's view, line count unchanged, so it is never flagged."""

from __future__ import annotations

import asyncio
import itertools
import re
import unicodedata

from agents.proofread.checkers.base import BaseChecker, CheckResult
from agents.proofread.linter import Failure, LinterCannotRead, LinterFailed, LinterTimeout, LinterWorker
from agents.proofread.parser import SHORTCODE, tagged_code_fences
from agents.proofread.schemas import CodeBlock, Container, Issue, ParsedArticle, Severity, SkippedCheck
from agents.proofread.text import code_spans, mask_code_spans, mask_for_prose, zenn_swallowed
from bot import workpool

# The rules we keep and how much they matter. Everything else is disabled: it is either noise for
# Japanese technical writing (line length, trailing punctuation, blank lines around lists), owned by
# another checker (fenced-code-language → code_quality, empty links and reference definitions → link), or wrong for Zenn and
# Qiita (first line must be a heading, a single H1 when the title is in front matter).
PYMARKDOWN_RULES: dict[str, tuple[Severity, str]] = {
    "md001": ("warning", "Heading level jumps by more than one."),
    "md004": ("suggestion", "Unordered list markers are not consistent."),
    "md005": ("warning", "List items at the same level are indented differently."),
    "md011": ("warning", "Reversed link syntax: (text)[url] instead of [text](url)."),
    "md012": ("suggestion", "Several blank lines in a row."),
    "md018": ("warning", "No space after the # of a heading: it renders as plain text."),
    "md019": ("suggestion", "Several spaces after the # of a heading."),
    "md023": ("warning", "Heading is indented: it may not render as a heading."),
    "md027": ("suggestion", "Several spaces after the > of a blockquote."),
    "md028": ("suggestion", "Blank line inside a blockquote splits it in two."),
    "md029": ("suggestion", "Ordered list numbering is inconsistent."),
    "md030": ("suggestion", "Unusual spacing after a list marker."),
    "md031": ("suggestion", "Code fence not surrounded by blank lines."),
    "md036": ("suggestion", "Emphasis used instead of a heading."),
    "md037": ("warning", "Spaces inside emphasis markers: the emphasis will not render."),
    "md038": ("suggestion", "Spaces inside a code span."),
    "md039": ("suggestion", "Spaces inside link text."),
    "md046": ("suggestion", "Indented code block where the article uses fenced blocks."),
    "md055": ("suggestion", "Table rows use leading/trailing pipes inconsistently."),
    "md056": ("warning", "Table row has a different number of cells from the header."),
    "md058": ("suggestion", "Table not surrounded by blank lines."),
    "md059": ("suggestion", "Link text does not describe the target (\"click here\", \"link\")."),
}
ALL_PYMARKDOWN_RULES = [f"md{n:03d}" for n in range(1, 61)] + ["pml100", "pml101", "pml102"]
EXTENSIONS = ("front-matter", "markdown-tables", "markdown-strikethrough", "markdown-task-list-items")

TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")
# `1.項目` is a list item without its space; `2.x の…` starts with a version number.
LIST_WITHOUT_SPACE = re.compile(r"^(\s*)([-+]|\d{1,3}\.)(?=[^\s\d.\-+*])(?![xX](?![A-Za-z]))(\S)")
EMPTY_HEADING = re.compile(r"^ {0,3}#{1,6}\s*$")
EMPTY_QUOTE = re.compile(r"^\s*(?:>\s*)+$")
STRONG_RUN = re.compile(r"(?<!\*)\*{2,3}(?!\*)")  # `***` closes (or opens) bold and italics at once
_ESCAPE = re.compile(r"\\[\\*]")
LIST_ITEM_START = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
IMAGE_ONLY_LINE = re.compile(r"^\s*(?:!\[\]\([^)]*\)\s*)+$")
# A figure's caption on the line right below its image: Zenn's `*caption*` (its documented caption
# syntax; `_…_` and bold alike) or HTML's <figcaption>.
CAPTION_LINE = re.compile(
    r"^\s*(?:(\*{1,2}|_{1,2})(?=\S)(?P<emphasis>.+?)(?<=\S)\1|<figcaption\b[^>]*>(?P<html>.+?)</figcaption>)\s*$"
)
# A caption that only says where the picture comes from does not describe it.
SOURCE_ONLY = re.compile(r"https?://|引用|出典|転載|\b(?:source|credits?|courtesy|via|photo by|image by)\b", re.I)
INDEX_NOT_URL = re.compile(r"\)\[(?=[^\]]*[\d:])[-\w:, ]*\]\]$")  # `(…)[0]`, `(…)[1:3]`, `(…)[i]`: a subscript, no URL in it
SOURCE_NOTE = re.compile(r"[(（\[［][^()（）\[\]［］]*[)）\]］]")  # a bracketed aside, such as where it comes from


# A caption that calls itself one (「*Figure 2: …*」, 「*図3 …*」): a blank line may stand between it and
# its image, as Hashnode and Medium exports put it.
FIGURE_LABEL = re.compile(r"^(?:fig(?:ure)?\.?\s*\d+|(?:図|画像|映像|写真|動画)\s*\d+)\s*[:：.．]?\s*\S", re.I)
# A table that holds figures: its header cells caption the images in the row under the delimiter
# (「|画像1：貼り付け後のCharuco Board|」, 「|---|」, 「|![][1]|」).
_DELIMITER_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")
_IMAGE_CELL = re.compile(r"^\s*(?:!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])\s*)+$")


def _in_figure_table(article: ParsedArticle, line: int) -> bool:
    """An image in the row right under a table's delimiter whose every cell is images, and whose
    header cells each name a figure and say what it shows (FIGURE_LABEL): a captioned figure."""
    if line < 3:
        return False
    rows = [article.lines[number - 1] for number in (line, line - 1, line - 2)]
    if not all(text.strip().startswith("|") and text.strip().endswith("|") for text in rows):
        return False
    row, delimiter, header = (_row_cells(text) for text in rows)
    if not all(_DELIMITER_CELL.match(cell) for cell in delimiter):
        return False
    return all(_IMAGE_CELL.match(cell) for cell in row) and all(
        FIGURE_LABEL.match(cell.strip()) and not SOURCE_ONLY.search(cell) for cell in header
    )


def _captioned(article: ParsedArticle, line: int) -> bool:
    """An image alone on its line with a caption right below that says what it shows: HTML lets a
    figure's caption stand for the alt text, and Zenn writers caption with `*…*` for this. A caption
    a blank line away counts when it names itself a figure (FIGURE_LABEL)."""
    if not IMAGE_ONLY_LINE.match(article.lines[line - 1]) or line >= len(article.lines):
        return False
    below = article.lines[line]
    caption = CAPTION_LINE.match(below)
    away = caption is None and not below.strip() and line + 1 < len(article.lines)
    if away:
        caption = CAPTION_LINE.match(article.lines[line + 1])
    if caption is None:
        said = _caption_over_lines(article.lines, line)
        if said is None:
            return False
    else:
        said = caption.group("emphasis") or caption.group("html") or ""
    if away and not FIGURE_LABEL.match(said):
        return False  # emphasis a blank line away is a paragraph of its own unless it calls itself a figure
    text = re.sub(r"<[^>]+>", "", said)
    # 「契約プランの比較（公式引用）」: a description with its source in brackets still describes it
    described = SOURCE_NOTE.sub("", text)
    return bool(described.strip(" 　-–—:：")) and not SOURCE_ONLY.search(described)


# The line of a caption that gives only where the figure comes from (「出所）Stachurski et al. (2022)」).
SOURCE_LINE = re.compile(r"^\s*(?:出所|出典|引用|参照|(?:source|credits?|via)\b)", re.I)


def _caption_over_lines(lines: list[str], start: int) -> str | None:
    """The text of an emphasised caption that opens on `lines[start]` (0-based: the line right below
    the image) and closes a line or two further down in the same paragraph (「*図1：ハブ中心性（左）…」 then
    「出所）Stachurski et al. (2022)*」), up to the line that starts naming its source; None if there is none."""
    opening = re.match(r"^\s*(\*{1,2}|_{1,2})(?=\S)", lines[start])
    if opening is None or lines[start].rstrip().endswith(opening.group(1)):
        return None
    marker, parts = opening.group(1), [lines[start][opening.end() :]]
    for index in range(start + 1, min(start + 3, len(lines))):
        text = lines[index].rstrip()
        if not text.strip() or IMAGE_ONLY_LINE.match(text):
            return None  # the paragraph ends before the emphasis does: no caption
        if text.endswith(marker) and not text.endswith(marker + marker[0]):
            parts.append(text[: -len(marker)])
            said = itertools.takewhile(lambda part: not SOURCE_LINE.match(part), parts)
            return " ".join(part.strip() for part in said)
        parts.append(text)
    return None


def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char)[0] in ("P", "S")


def _flanking(line: str, start: int, end: int) -> tuple[bool, bool]:
    """CommonMark's left- and right-flanking tests for the delimiter run line[start:end]."""
    before = line[start - 1] if start > 0 else " "
    after = line[end] if end < len(line) else " "
    left = not after.isspace() and (not _is_punctuation(after) or before.isspace() or _is_punctuation(before))
    right = not before.isspace() and (not _is_punctuation(before) or after.isspace() or _is_punctuation(after))
    return left, right


def unrendered_strong(line: str) -> bool:
    """True when some `**` on the line can be neither matched opener nor closer — typically
    `これは**「強調」**です`, where CommonMark's flanking rules reject the closing `**`."""
    return bool(unmatched_strong_runs(line))


def _exponent(text: str, start: int, end: int) -> bool:
    """`10**9`, `x**2`, `10**n`: Python's power operator written in prose, between two ASCII
    letters or digits of which one is a digit."""
    before, after = text[start - 1 : start], text[end : end + 1]
    pair = before + after
    return len(pair) == 2 and pair.isascii() and pair.isalnum() and any(char.isdigit() for char in pair)


def unmatched_strong_runs(text: str) -> list[int]:
    """Where the `**` runs are that CommonMark will leave as literal asterisks. `text` is a whole
    paragraph (its lines joined by newlines): bold may open on one line and close on the next."""
    opened: list[tuple[int, int]] = []
    unmatched: list[tuple[int, int]] = []
    # An escaped asterisk is a literal character, punctuation to the run beside it: `\***` is a
    # literal `*` and a closing `**`, `\**` a literal and a single marker. Each becomes another
    # punctuation mark (lengths kept); `\\` is a literal backslash, skipped as a pair.
    text = _ESCAPE.sub(lambda m: "\\!" if m.group() == "\\*" else m.group(), text)
    for run in STRONG_RUN.finditer(text):
        start, end = run.start(), run.end()
        left, right = _flanking(text, start, end)
        if right and opened:
            opened.pop()
        elif left:
            opened.append((start, end))
        else:
            unmatched.append((start, end))
    # A `**` left over between a letter or digit and a digit (`10**9`) is a power, not bold; one
    # left over inside an English word (`Motherf**king`) is a word censored on purpose: CommonMark
    # shows the asterisks, as the writer meant.
    return sorted(
        start for start, end in unmatched + opened
        if not _exponent(text, start, end) and not _censored(text, start, end) and not _standing_alone(text, start, end)
    )


def _standing_alone(text: str, start: int, end: int) -> bool:
    """Asterisks that hold nothing: with blanks on both sides (`** 見出し`, Hatena's heading mark, or
    ` ** ` between words), alone inside a pair of brackets (`(**)`, a note mark), or an item of a
    list of operators (`(+, -, *, /, **, <<)`: a blank or an opening bracket before, a separator or
    a closing bracket after). They were never meant as bold, so they are no bold that fails to render."""
    before, after = text[start - 1 : start], text[end : end + 1]
    blank_before = not before or before.isspace()
    if blank_before and (not after or after.isspace()):
        return True
    if (blank_before or before in "(（,、") and after in (",", "、", ")", "）", "]"):
        return True
    return before + after in ("()", "（）", "「」", "[]", "【】")


def _censored(text: str, start: int, end: int) -> bool:
    """`f**king`: asterisks between two ASCII letters, standing for letters left out."""
    before, after = text[start - 1 : start], text[end : end + 1]
    return before.isascii() and before.isalpha() and after.isascii() and after.isalpha()


def paragraphs(article: ParsedArticle) -> list[list[tuple[int, str]]]:
    """Runs of consecutive prose lines that CommonMark reads as one paragraph (or list item):
    a blank line, a change of kind, a heading or a new list item ends one."""
    groups: list[list[tuple[int, str]]] = []
    previous: tuple[int, str] | None = None
    for number, line in article.prose_lines():
        kind = article.kind(number)
        starts_new = (
            previous is None or number != previous[0] + 1 or kind != previous[1]
            or kind in ("heading", "table") or (kind == "list" and LIST_ITEM_START.match(line))
        )
        if starts_new:
            groups.append([])
        groups[-1].append((number, line))
        previous = (number, kind)
    return groups


def linter_view(article: ParsedArticle) -> str:
    """The article as pymarkdownlnt should see it: platform extensions blanked, lines kept."""
    out = []
    embeds = {link.line for link in article.links if link.kind == "embed"}
    toml = article.front_matter_format == "toml"  # the linter's front-matter extension reads YAML only
    for number, line in enumerate(tagged_code_fences(article.lines), start=1):
        kind = article.kind(number)
        if (
            kind in ("container", "math")
            or (kind == "front_matter" and toml)
            or (kind == "html" and line.lstrip().startswith("{{"))  # Hugo shortcodes
            or (number in embeds and line.lstrip().startswith("@["))
        ):
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


DISABLED_RULES = tuple(rule for rule in ALL_PYMARKDOWN_RULES if rule not in PYMARKDOWN_RULES)


# pymarkdownlnt's time grows faster than linearly (0.8 s at 20 KB, 10 s at 80 KB), so long
# articles are linted in pieces cut just before a heading.
LINTER_CHUNK_BYTES = 16_000
# How many times a piece the linter cannot read is halved to find the part it trips on.
MAX_LINTER_SPLITS = 8
UNREADABLE = "pymarkdownlnt:unreadable"  # marks, inside the checker, lines the linter could not read


def linter_chunks(article: ParsedArticle, view_lines: list[str]) -> list[tuple[int, str]]:
    """(first line number, text) pieces of the linter view. Rules that compare distant parts of
    the document (heading increments across a cut, consistent list markers) only see one piece."""
    heading_lines = {heading.line for heading in article.headings}
    chunks: list[tuple[int, str]] = []
    start, size = 1, 0
    for number, line in enumerate(view_lines, start=1):
        oversize = size >= LINTER_CHUNK_BYTES
        at_heading = number in heading_lines
        at_paragraph_break = size >= 2 * LINTER_CHUNK_BYTES and article.kind(number) == "blank"
        if number > start and oversize and (at_heading or at_paragraph_break):
            chunks.append((start, "\n".join(view_lines[start - 1 : number - 1])))
            start, size = number, 0
        size += len(line.encode("utf-8")) + 1
    chunks.append((start, "\n".join(view_lines[start - 1 :])))
    return chunks


def run_pymarkdown(text: str, worker: LinterWorker, timeout: float) -> list[Failure]:
    """(line, column, rule id, detail) for each failure of the kept rules."""
    if not text.strip():
        return []
    return worker.scan(text if text.endswith("\n") else text + "\n", EXTENSIONS, DISABLED_RULES, timeout=timeout)


def _tagged_closer(block: CodeBlock) -> int | None:
    """The line of an unclosed block where the writer meant to close it with a tagged fence
    (```text … ```text, a habit some generators accept): the fence, then an info string."""
    for offset, line in enumerate(block.content.split("\n")):
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped.startswith(block.fence) and stripped[len(block.fence):].strip():
            rest = stripped[len(block.fence):]
            if rest[:1] != block.fence[0]:
                return block.content_start_line + offset
    return None


def _enclosing_box(article: ParsedArticle, line: int) -> Container | None:
    """The innermost closed :::message / :::details block around `line`, if any."""
    boxes = [c for c in article.containers if c.end_line is not None and c.start_line < line < c.end_line]
    return max(boxes, key=lambda c: c.start_line, default=None)


class MarkdownFormatChecker(BaseChecker):
    category = "markdown_format"
    status_text = "Checking Markdown formatting…"
    status_text_ja = "Markdownの書式を確認しています…"

    async def check(self, article: ParsedArticle) -> CheckResult:
        # Both at once. With the application's work pool, the linter runs inside a pool job
        # (killed after linter_timeout per piece) like our rules; without one, in its own
        # process, waited for by a thread.
        if workpool.installed() is None:
            linter = asyncio.to_thread(self._linter, article)
        else:
            pieces = -(-len(article.raw.encode()) // LINTER_CHUNK_BYTES)
            linter = self.run_rules(article, "_linter", seconds=self.config.linter_timeout * max(1, pieces))
        own, linted = await asyncio.gather(self.run_rules(article, "_own_rules"), linter, return_exceptions=True)
        if isinstance(own, BaseException):
            raise own
        result = CheckResult(issues=own)
        if isinstance(linted, LinterTimeout | LinterFailed | workpool.WorkFailed):
            result.errors.append(self.error(linted))
        elif isinstance(linted, BaseException):
            raise linted
        else:
            unread = [issue for issue in linted if issue.source == UNREADABLE]
            result.issues = [issue for issue in linted if issue.source != UNREADABLE] + result.issues
            result.skipped += [SkippedCheck(step=self.step, reason=(
                f"The Markdown linter (pymarkdownlnt) could not read lines {issue.line_start}–{issue.line_end}, "
                "so its rules were not "
                "applied there (the same text fails every time); the rest of the article was linted."
            )) for issue in unread]
        return result

    def rules(self, article: ParsedArticle) -> list[Issue]:
        return [issue for issue in self._linter(article) if issue.source != UNREADABLE] + self._own_rules(article)

    def _own_rules(self, article: ParsedArticle) -> list[Issue]:
        issues = self._fences_and_containers(article)
        issues += self._headings(article)
        issues += self._lines(article)
        issues += self._urls_and_images(article)
        issues += self._tables(article)
        return issues

    def _linter(self, article: ParsedArticle) -> list[Issue]:
        issues = []
        view = linter_view(article)
        view_lines = view.split("\n")
        failures: list[Failure] = []
        unreadable: list[tuple[int, int]] = []
        for first, chunk in linter_chunks(article, view_lines):
            failures += self._lint_piece(first, chunk.split("\n"), unreadable)
        for start, end in unreadable:
            issues.append(self.issue(
                article, "suggestion", start, "The Markdown linter could not read these lines.", "", "",
                UNREADABLE, line_end=end,
            ))
        blanked_runs: _BlankedRuns | None = None
        heading_lines = {heading.line for heading in article.headings}
        run_in: list[int] = []
        for line, column, rule, detail in failures:
            severity, problem = PYMARKDOWN_RULES.get(rule, ("suggestion", rule))
            kind = article.kind(line)
            if kind in ("code", "fence", "math", "front_matter", "html", "html_comment"):
                continue  # not Markdown: pymarkdownlnt misreads some raw HTML (a <pre> after a paragraph line)
            if rule == "md001" and _sections_at_one_level(article, line):
                continue  # ### for every section under the page title: a chosen size, not a skipped level
            if rule == "md036" and kind == "list":
                continue  # pymarkdownlnt reports a list item that is only ~~struck~~ text
            if rule == "md023" and line in heading_lines:
                continue  # indented by up to three spaces, it still renders as a heading (CommonMark)
            if rule == "md029" and article.list_starts.get(line, 1) != 1:
                continue  # a list that starts at 3 (a quoted item, a list continued) starts there on purpose
            if rule == "md011" and (detail.endswith(")[]]") or INDEX_NOT_URL.search(detail)):
                continue  # `(true | string)[]`, `("a","b")[0:1]`: a type or an index, no reversed link (no URL)
            if rule == "md056" and (SHORTCODE.fullmatch(article.line(line).strip()) or _empty_last_cell(article, line, detail)):
                continue  # `{{< /table >}}` under a table, or `a | b |  ` meaning an empty last cell
            if rule == "md056" and "|" not in article.line(line):
                run_in.append(line)  # text right under a table, with no blank line: it became the table's rows
                continue
            if rule == "md037" and (_in_math_or_code(article.line(line), column) or ARITHMETIC_STAR.search(article.line(line))):
                continue  # `$x _ 1$`: a subscript in inline math; `7866 * 1024`, `(F-N)/2 * P’z`: a product, not emphasis
            if rule == "md011" and _aside_before_link(article.line(line), column):
                continue  # `(aside)[text](url)`: a parenthesis, then a link; or math or code (`$E(K)[m]$`)
            if rule == "md011" and _after_link_text(article.line(line), column):
                continue  # `](a)[b]`: the end of one link and the start of the next, not (text)[url]
            if rule == "md039" and article.line(line)[column - 1 : column + 1] == "![":
                continue  # spaces inside an image's alt text: nothing shows them
            if rule == "md027" and (EMPTY_QUOTE.match(article.line(line)) or not article.line(line).lstrip().startswith(">")):
                continue  # `> ` and white space on an empty quote line, or a lazy continuation line with no `>`
            if rule == "md018" and (
                kind == "list" or CODE_LIKE_HASH.match(article.line(line)) or DIRECTIVE_HASH.match(article.line(line))
                or NUMBER_SIGN.match(article.line(line))
            ):
                continue  # `- #hashtag`, `#[derive(Debug)]`, `#!/bin/sh`, `#endifで括る`, `#3,#4 で触れます`: no heading
            if rule == "md059" and _named_by_target(article.line(line), column):
                continue  # `[here](https://here.r-lib.org)`: R's package named here; the text names its target
            if rule == "md039" and _wrapped_link_text(article.lines, line, column):
                continue  # the link text ends (or starts) with a line break: the source is wrapped
            if rule == "md012":
                blanked_runs = blanked_runs or _BlankedRuns(article, view_lines)
                if blanked_runs.around(line):
                    continue  # the blank lines are Zenn/Qiita syntax we hid from the linter
            issues.append(self.issue(
                article, severity, line, problem + (f" {detail}" if detail else ""),
                _LINTER_FIXES.get(rule, "Adjust the Markdown so it follows the usual convention."),
                _LINTER_REASONS.get(rule, "Reported by pymarkdownlnt."),
                f"pymarkdownlnt:{rule.upper()}",
            ))
        for first, last in _runs(run_in):
            severity, _problem = PYMARKDOWN_RULES["md056"]
            where = f"line {first}" if first == last else f"lines {first}–{last}"
            issues.append(self.issue(
                article, severity, first,
                f"The text right under the table ({where}) renders as rows of the table: no blank line ends it.",
                "Leave a blank line between the table and the text below it.",
                "A table goes on until a blank line, so each line of text after it becomes a one-cell row.",
                "rule:table-run-in", line_end=last,
            ))
        return issues

    def _lint_piece(self, first: int, lines: list[str], unreadable: list[tuple[int, int]], depth: int = 0) -> list[Failure]:
        """pymarkdownlnt's failures for `lines` (starting at line `first`). Where its parser gives
        up, the piece is halved at a blank line until the unreadable part is small, so the rules
        still run on the rest; the parts it cannot read are added to `unreadable`."""
        try:
            found = run_pymarkdown("\n".join(lines), self.context.linter, self.config.linter_timeout)
        except LinterCannotRead:
            if len(lines) <= 3 or depth >= MAX_LINTER_SPLITS:
                unreadable.append((first, first + len(lines) - 1))
                return []
            middle = len(lines) // 2
            blanks = [i for i, line in enumerate(lines) if not line.strip() and 0 < i < len(lines) - 1]
            cut = min(blanks, key=lambda i: abs(i - middle)) if blanks else middle
            return (self._lint_piece(first, lines[:cut], unreadable, depth + 1)
                    + self._lint_piece(first + cut, lines[cut:], unreadable, depth + 1))
        return [(line + first - 1, column, rule, detail) for line, column, rule, detail in found]

    def _fences_and_containers(self, article: ParsedArticle) -> list[Issue]:
        issues = []
        for block in article.code_blocks:
            if not block.closed and (tagged := _tagged_closer(block)) is not None:
                issues.append(self.issue(
                    article, "critical", tagged,
                    f"The code block opened on line {block.start_line} is never closed: {block.fence} followed by a "
                    f"language on line {tagged} opens nothing and closes nothing.",
                    f"Write the closing fence as a bare {block.fence}, without the language.",
                    "A closing fence takes no info string, so the rest of the article renders as code.",
                    "rule:unclosed-fence", line_end=article.line_count,
                ))
            elif not block.closed and (box := _enclosing_box(article, block.start_line)) is not None:
                # markdown-it gives a container's content its own bounds: a fence left open inside a
                # closed :::details ends with the box (an empty or stray code block), the rest renders.
                issues.append(self.issue(
                    article, "suggestion", block.start_line,
                    f"The code block opened with {block.fence} on line {block.start_line} is never closed; it ends "
                    f"with the :::{box.kind} block on line {box.end_line}.",
                    f"Remove the stray {block.fence}, or close the code block before the ::: line.",
                    "The lines after the fence up to the box's end show as code (an empty code block if none).",
                    "rule:unclosed-fence", line_end=box.end_line,
                ))
            elif not block.closed:
                issues.append(self.issue(
                    article, "critical", block.start_line,
                    f"The code block opened with {block.fence} on line {block.start_line} is never closed.",
                    f"Add a closing {block.fence} line where the code ends.",
                    "Everything after an unclosed fence renders as code, hiding the rest of the article.",
                    "rule:unclosed-fence", line_end=article.line_count,
                ))
        for container in article.containers:
            if container.end_line is None:
                issues.append(self.issue(
                    article, "warning", container.start_line,
                    f"The :::{container.kind} block is never closed.",
                    "Add a line with ::: where the block ends.",
                    "An unclosed block swallows the rest of the article into the box.",
                    "rule:unclosed-container",
                ))
        return issues

    def _headings(self, article: ParsedArticle) -> list[Issue]:
        issues = []
        for heading in article.headings:
            if heading.style != "setext":
                continue
            end = heading.line_end or heading.line + 1
            underline = article.line(end).strip()
            several_lines = end - heading.line > 1
            looks_like_sentence = heading.text.endswith(("。", ".", "！", "？", "!", "?", "、", "：", ":"))
            # An underline drawn to the heading's length (R Markdown and Pandoc write them so) is
            # on purpose, question mark or not.
            drawn = not several_lines and len(underline) > 3 and abs(len(underline) - len(article.line(heading.line).strip())) <= 2
            # `Title` over `-----` is a heading written on purpose; a sentence or a whole
            # paragraph over --- is a rule that turned the paragraph into a heading by accident.
            if underline.startswith("-") and (several_lines or looks_like_sentence) and not drawn:
                issues.append(self.issue(
                    article, "warning", heading.line,
                    "A line of --- directly under a paragraph turns that paragraph into a heading.",
                    "Put a blank line before ---, or write the heading as `## …`.",
                    "Setext headings are easy to create by accident when --- is meant as a rule.",
                    "rule:setext-heading", line_end=end,
                ))
        for number, line in enumerate(article.lines, start=1):
            if article.kind(number) == "heading" and EMPTY_HEADING.match(line):
                issues.append(self.issue(
                    article, "warning", number, "Empty heading.", "Give the heading a title or remove it.",
                    "An empty heading shows as a blank gap and an empty table-of-contents entry.",
                    "rule:empty-heading",
                ))
        return issues

    def _lines(self, article: ParsedArticle) -> list[Issue]:
        issues = []
        for number, line in article.prose_lines():
            masked = mask_code_spans(line)
            kind = article.kind(number)
            missing_space = LIST_WITHOUT_SPACE.match(masked)
            if missing_space and kind == "text" and _looks_like_list_item(article, number, missing_space):
                marker = missing_space.group(2)
                issues.append(self.issue(
                    article, "warning", number, f"List marker `{marker}` has no space after it.",
                    f"Write `{marker} ` followed by the item text.",
                    "Without the space the line is plain text, not a list item.",
                    "rule:list-marker-space",
                ))
        for paragraph in paragraphs(article):
            text = _fill_paragraph_code_spans([line for _, line in paragraph])
            lines_hit = sorted({paragraph[text.count("\n", 0, at)][0] for at in unmatched_strong_runs(text)})
            for number in lines_hit:
                issues.append(self.issue(
                    article, "warning", number,
                    "Bold text (**…**) next to punctuation such as 「」 or （） will not render.",
                    "Move the ** inside the brackets (「**強調**」) or add a space around the ** markers.",
                    "CommonMark only accepts ** before/after punctuation when the other side is a space "
                    "or punctuation; Zenn and Qiita follow that rule.",
                    "rule:strong-flanking",
                ))
        return issues

    def _urls_and_images(self, article: ParsedArticle) -> list[Issue]:
        issues = []
        for link in article.links:
            swallowed = link.swallowed
            if swallowed and article.platform == "zenn":
                swallowed = zenn_swallowed(article.lines[link.line - 1], link.column, link.url)
            if link.kind == "bare" and swallowed:
                issues.append(self.issue(
                    article, "warning", link.line,
                    f"The bare URL {link.url} is followed directly by “{swallowed[:10]}”, which "
                    "becomes part of the link.",
                    f"Write it as [text]({link.url}) or <{link.url}>, or add a space after it.",
                    "Autolinking stops only at whitespace, so the following text ends up in the URL.",
                    "rule:bare-url-swallow",
                ))
            elif link.kind == "bare" and (not link.alone_on_line or article.article_type == "markdown"):
                if article.kind(link.line) == "table":
                    continue
                issues.append(self.issue(
                    article, "suggestion", link.line, f"Bare URL {link.url}.",
                    f"Give it link text: [page title]({link.url}).",
                    "Descriptive link text reads better and tells readers where the link goes.",
                    "rule:bare-url",
                ))
            elif link.kind == "image" and not link.text.strip() and not (
                _captioned(article, link.line) or _in_figure_table(article, link.line)
            ):
                issues.append(self.issue(
                    article, "warning", link.line, f"Image {link.url or '(no URL)'} has no alt text.",
                    "Describe the image inside the brackets: ![構成図](…).",
                    "Alt text is read by screen readers and shown when the image fails to load.",
                    "rule:image-alt",
                ))
        return issues

    def _tables(self, article: ParsedArticle) -> list[Issue]:
        """Rows of pipes the parser did not take for a table: their delimiter row is missing."""
        issues = []
        number = 1
        while number <= article.line_count:
            if not _pipe_row(article, number):
                number += 1
                continue
            start = number
            while _pipe_row(article, number):
                number += 1
            rows = number - start
            if rows >= 2 and not TABLE_DELIMITER.match(article.line(start + 1)):
                issues.append(self.issue(
                    article, "warning", start,
                    "This table has no delimiter row (|---|---|) under its header.",
                    "Add a row like |---|---| as the second line of the table.",
                    "Without the delimiter row the table renders as plain text with pipes.",
                    "rule:table-delimiter", line_end=number - 1,
                ))
        return issues


def _after_link_text(line: str, column: int) -> bool:
    """Whether the `(` pymarkdownlnt took for reversed link text (at 1-based `column`) follows a
    `]`: then it is a link's destination, as in a run of adjacent links `[a](x)[b](y)`."""
    index = column - 1
    return 0 < index < len(line) and line[index] == "(" and line[index - 1] == "]"


def _row_cells(row: str) -> list[str]:
    """A table row's cells, its outer pipes left out."""
    text = row.strip()
    text = text[1:] if text.startswith("|") else text
    text = text[:-1] if text.endswith("|") and not text.endswith("\\|") else text
    return re.split(r"(?<!\\)\|", text)


def _cells(row: str) -> int:
    """How many cells a table row has, its outer pipes left out."""
    return len(_row_cells(row))


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive line numbers as (first, last) runs: [5, 6, 7, 9] gives (5, 7) and (9, 9)."""
    runs: list[tuple[int, int]] = []
    for number in sorted(numbers):
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def _empty_last_cell(article: ParsedArticle, line: int, detail: str) -> bool:
    """A row one cell short that ends with a pipe under a header that does not (`a | b |  ` under
    `A | B | C`): the writer closed the row before an empty last cell, which renders empty."""
    if "Too few cells" not in detail:
        return False
    header = line
    while header > 1 and article.kind(header - 1) == "table":
        header -= 1
    row, head = article.line(line).rstrip(), article.line(header).rstrip()
    return row.endswith("|") and not head.endswith("|") and _cells(row) + 1 == _cells(head)


# A heading's # is followed by its text: after `#[` (a Rust attribute), `#!` (a shebang) or `#{`
# the line was never meant as one.
CODE_LIKE_HASH = re.compile(r"\s{0,3}#+[!-\"$-/:-@\[-`{-~]")
# A number sign before a number opens a line that names an issue, a pull request or a session
# (「#3,#4 で触れていきます！」「#2（try-catch追加）を修正して…」), not a heading: one # only, and not
# a numbered title (`#1.テストケース設計`, `#1. はじめに`: the space after # forgotten).
NUMBER_SIGN = re.compile(r"\s{0,3}#\d+(?![.．)])")
# A C preprocessor directive that opens a prose line (「#ifで…を調べる。」「#endifで括る必要がある。」): the
# writer names the directive; followed by a space, a symbol, a particle or nothing, never a heading.
DIRECTIVE_HASH = re.compile(
    r"\s{0,3}#(?:include|define|undef|ifdef|ifndef|if|elif|else|endif|pragma)"
    r"(?=$|[\s!-/:-@\[-`{-~\u3041-\u309f])"
)
# A spaced * after a number or a bracket, before an operand, is a multiplication sign (CommonMark
# leaves it as text): `7866 * 1024 * 1024`, `A[P] * A[Q]`, `2/(F-N) * P’z`, `(F-N)/2 * P’’z`.
ARITHMETIC_STAR = re.compile(r"[\d\])]\s+\*\s+[\w(]")


def _in_math_or_code(line: str, column: int) -> bool:
    """Whether 1-based `column` is inside inline math (`$…$`), a code span or anything else the
    prose mask blanks (a URL, a link destination): not text the writer typed as Markdown."""
    index = column - 1
    masked = mask_for_prose(line)
    if not 0 <= index < len(line) or masked[index] != " ":
        return False
    start, end = index, index + 1  # the blank run of the mask around the column
    while start and masked[start - 1] == " ":
        start -= 1
    while end < len(masked) and masked[end] == " ":
        end += 1
    return bool(line[start:end].strip())  # something was blanked there, not only spaces


def _aside_before_link(line: str, column: int) -> bool:
    """Whether the `(…)[…]` pymarkdownlnt took for a reversed link (its `(` at 1-based `column`) is
    an aside in parentheses followed by a real link, `(…)[text](url)`, or lies inside inline math
    (`$E(K)[m]$`) or a code span."""
    index = column - 1
    if _in_math_or_code(line, column):
        return True  # `open(0).read()[::2]`
    depth = 0
    for position in range(index, len(line)):
        depth += {"(": 1, ")": -1}.get(line[position], 0)
        if depth == 0:
            break
    else:
        return False
    close = line.find("]", position + 1)
    return line[position + 1 : position + 2] == "[" and close != -1 and line[close + 1 : close + 2] == "("


_INLINE_LINK = re.compile(r"\[`?([^\]`]+)`?\]\(<?([^)\s>]+)")
_URL_PARTS = re.compile(r"[/.?#=&:]+")


def _named_by_target(line: str, column: int) -> bool:
    """The link at `column` is a name its own address spells out as a host label or a path segment
    (`[here](https://here.r-lib.org)`, `[link](https://github.com/org/link)`): a package or project
    named with a generic word, not a link saying “here”."""
    match = _INLINE_LINK.match(line, max(column - 1, 0))
    if match is None:
        return False
    text = match.group(1).strip().lower()
    address = match.group(2).lower().split("://", 1)[-1]
    return text in _URL_PARTS.split(address)


def _wrapped_link_text(lines: list[str], number: int, column: int) -> bool:
    """Whether the only space at either end of the link text opening at (`number`, `column`) is a
    line break: a writer wraps lines, and no space was typed inside the brackets."""
    text = "\n".join(lines[number - 1 : number + 9])
    start = column - 1
    if not (0 <= start < len(text) and text[start] == "["):
        return False
    depth, index, inner = 0, start, None
    while index < len(text):
        char = text[index]
        index += 2 if char == "\\" else 1  # an escaped bracket is text
        depth += (char == "[") - (char == "]")
        if depth == 0:
            inner = text[start + 1 : index - 1]
            break
    if inner is None:
        return False
    ends = (inner[: len(inner) - len(inner.lstrip())], inner[len(inner.rstrip()) :])
    return any(ends) and all("\n" in end for end in ends if end)


def _pipe_row(article: ParsedArticle, number: int) -> bool:
    """A line that reads as a table row: it starts with a pipe and has another (`|> next` in an
    Elixir article is the pipe operator, not a one-cell row)."""
    line = article.line(number).lstrip()
    return article.kind(number) == "text" and line.startswith("|") and line.count("|") >= 2


def _fill_paragraph_code_spans(lines: list[str]) -> str:
    """The paragraph's lines joined by newlines, each code span reduced to `xxx` (its backticks still
    count as punctuation next to ** as in CommonMark, while ** inside code is ignored), a span that
    wraps onto the next line (`2 ** 63 -⏎1`) included."""
    text = "\n".join(lines)
    if "`" not in text:
        return text
    chars = list(text)
    for start, end, ticks in code_spans(text.replace("\n", " ")):
        for index in range(start + ticks, end - ticks):
            if chars[index] != "\n":
                chars[index] = "x"
    return "".join(chars)


class _BlankedRuns:
    """For each run of blank lines (as the linter saw them): does it contain a line we blanked
    out, i.e. blank lines the author did not write? Computed once, not per MD012 report (one per
    extra blank line: walking the run for each was quadratic in its length)."""

    def __init__(self, article: ParsedArticle, view: list[str]) -> None:
        lines = article.lines
        self.view = view
        self.run_of: list[int] = []  # per line of the view: its run's index, or -1 if not blank
        self.blanked: list[bool] = []
        for index, text in enumerate(view):
            if text.strip():
                self.run_of.append(-1)
                continue
            if not index or self.run_of[-1] == -1:
                self.blanked.append(False)
            self.run_of.append(len(self.blanked) - 1)
            if index < len(lines) and lines[index].strip():
                self.blanked[-1] = True

    def around(self, line: int) -> bool:
        """True when the run of blank lines at `line`, or else the one starting just after it,
        contains a blanked line."""
        for number in (line, line + 1):
            if 1 <= number <= len(self.view) and self.run_of[number - 1] != -1:
                return self.blanked[self.run_of[number - 1]]
        return False


# A particle right after a number refers to an earlier point: 「1.と関連しますが」.
_REFERRING_PARTICLES = frozenset("とのではがをにもやへ")


def _looks_like_list_item(article: ParsedArticle, number: int, match: re.Match[str]) -> bool:
    """`-項目` is a list item missing its space; `-1` or `+α` in running text is not, nor a number
    followed by a particle (「1.と関連しますが」: the sentence refers to point 1)."""
    neighbours = {article.kind(number - 1), article.kind(number + 1)}
    first = match.group(3)
    if match.group(2)[0].isdigit() and first in _REFERRING_PARTICLES:
        return False
    return "list" in neighbours or not first.isascii()


_LINTER_FIXES = {
    "md001": "Use the next heading level (e.g. ## then ###), not a jump.",
    "md004": "Use one list marker (- is usual) throughout.",
    "md005": "Indent items of the same level by the same amount.",
    "md011": "Write links as [text](url).",
    "md012": "Keep one blank line between blocks.",
    "md018": "Add a space after the #: `## 見出し`.",
    "md019": "Use a single space after the #.",
    "md023": "Start the heading at the beginning of the line.",
    "md027": "Use a single space after >.",
    "md028": "Remove the blank line or start each quote with >.",
    "md029": "Number the items 1. 2. 3. (or all 1.).",
    "md030": "Use one space after the list marker.",
    "md031": "Add a blank line before and after the code fence.",
    "md036": "Use a heading (##) instead of a bold line.",
    "md037": "Remove the spaces just inside the * or ** markers.",
    "md038": "Remove the spaces just inside the backticks.",
    "md039": "Remove the spaces just inside the brackets.",
    "md046": "Use a fenced code block (```) with a language.",
    "md055": "Use leading and trailing pipes on every row.",
    "md056": "Give every row as many cells as the header.",
    "md058": "Add a blank line before and after the table.",
    "md059": "Use link text that names the target page.",
}

_LINTER_REASONS = {
    "md001": "Skipped levels break the outline and the table of contents Zenn and Qiita build from headings.",
    "md004": "Mixed markers look careless and can start a new list unexpectedly.",
    "md005": "Uneven indentation can nest items under the wrong parent.",
    "md011": "The reversed form renders as plain text, not a link.",
    "md012": "Extra blank lines add nothing and make the source harder to edit.",
    "md018": "Without the space, Zenn and Qiita show the # characters as text.",
    "md019": "Extra spaces are harmless but untidy in the source.",
    "md023": "An indented # line may render as text or as part of a list.",
    "md027": "Extra spaces after > are untidy and can turn the quote into code.",
    "md028": "The blank line ends the quote; the next > starts a second one.",
    "md029": "Readers see the numbers in the source; inconsistent numbering confuses them.",
    "md030": "Unusual spacing can change how the list nests.",
    "md031": "Some renderers need the blank lines to recognise the fence.",
    "md036": "A bold line is not part of the outline or the table of contents.",
    "md037": "CommonMark does not treat * with inner spaces as emphasis.",
    "md038": "Spaces inside backticks become part of the code.",
    "md039": "Spaces inside the brackets become part of the underlined text.",
    "md046": "Indented blocks cannot carry a language, so they get no highlighting.",
    "md055": "Consistent pipes make tables easier to edit and avoid mis-parsed rows.",
    "md056": "A short row gets empty cells at its end and extra cells are dropped: a cell left out in the middle "
             "puts the ones after it in the wrong column.",
    "md058": "A table that touches a paragraph may not be recognised as a table.",
    "md059": "Screen readers list links by their text; “here” says nothing.",
}


def _sections_at_one_level(article: ParsedArticle, line: int) -> bool:
    """The jump is the first heading's, from the page title, and no section of the article sits
    above that level: a post whose sections are all `###` under its title has a consistent outline
    that starts deep, which is a choice of type size rather than a level left out."""
    headings = article.headings
    if not headings or headings[0].line != line:
        return False
    return all(heading.level >= headings[0].level for heading in headings)

