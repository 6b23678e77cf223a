"""Safe fixes: a corrected copy of the article with only the changes that cannot alter what it says
(trailing spaces, runs of blank lines, a missing final newline, a code fence language the code
proves, a redundant phrase with one obvious rewrite), and the unified diff from the original.

Code blocks, math, HTML, front matter, inline code, URLs and link targets are never touched. The
whitespace changes are checked by rendering the article before and after: if the HTML differs
(which they should never make it do), none of them is applied."""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from agents.proofread.parser import markdown
from agents.proofread.schemas import CodeBlock, Issue, LineKind, ParsedArticle
from agents.proofread.text import mask_code_spans, mask_for_prose

# Lines whose every character is content: nothing on them is changed.
PROTECTED: frozenset[LineKind] = frozenset({"front_matter", "fence", "code", "math", "html", "html_comment"})
# Blank lines between two lines of these kinds belong to the block (an indented code block, a
# `$$` block, a <pre>), where blank lines are content too.
BLOCK_KINDS: frozenset[LineKind] = frozenset({"code", "math", "html", "html_comment"})
# Where two trailing spaces are a hard line break (when the paragraph, or a setext heading's
# text, goes on after them).
PARAGRAPH_KINDS: frozenset[LineKind] = frozenset({"text", "list", "quote", "heading"})
ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")

# What a shebang's interpreter says the fence language is.
SHEBANG_LANGUAGES = {
    "bash": "bash", "sh": "sh", "zsh": "zsh", "dash": "sh", "ksh": "sh", "fish": "fish",
    "python": "python", "python3": "python", "python2": "python", "node": "javascript", "nodejs": "javascript",
    "ruby": "ruby", "perl": "perl", "php": "php",
}
SHEBANG = re.compile(r"^#!\s*(\S+)(.*)$")


@dataclass(frozen=True)
class Rewrite:
    """A redundant phrase and its one obvious shorter form. The phrase is the `phrase` group of
    `pattern`; the rest of the pattern only says where the rewrite is certain."""

    rule: str
    pattern: re.Pattern[str]
    replacement: str


# Only where the shorter form means exactly the same. することができる → できる after a word of
# two or more kanji or katakana (実行することができる → 実行できる) or after に (明確にすることが
# できる → 明確にできる), never after one kanji (愛する, 有する: 愛できる is wrong) or other kana
# (そうする). "In order to" → "To" only where it opens a
# sentence or follows a comma: mid-sentence, "put the list in order to …" can mean "sorted".
REWRITES: tuple[Rewrite, ...] = (
    Rewrite("redundant-phrase", re.compile(r"(?<=[\u30a1-\u30fa\u30fc\u4e00-\u9fff]{2})(?P<phrase>することができ)"), "でき"),
    Rewrite("redundant-phrase", re.compile(r"(?<=[^\W\d_]に)(?P<phrase>することができ)"), "でき"),
    Rewrite("in-order-to", re.compile(
        r"(?:^\s*(?:(?:[-*+>]|\d{1,3}[.)])\s+)*|(?<=[.!?:;]\s)|(?<=[.!?:;]\s\s))(?P<phrase>In order to)(?=\s)"), "To"),
    Rewrite("in-order-to", re.compile(r"(?<=,\s)(?P<phrase>in order to)(?=\s)"), "to"),
)
# Which rewrites a rule's issue allows (the fixes follow the review: a rule turned off, or
# disabled by an inline comment, is not fixed either).
REWRITE_RULES = frozenset(rewrite.rule for rewrite in REWRITES)

FIX_NAMES = {
    "trailing-space": ("trailing spaces removed", "行末の空白を削除"),
    "blank-lines": ("runs of blank lines reduced to one", "連続した空行を一行に"),
    "final-newline": ("final newline added", "末尾に改行を追加"),
    "code-language": ("code fence languages added", "コードブロックに言語名を追加"),
    "redundant-phrase": ("redundant phrases shortened", "冗長な表現を短く"),
    "in-order-to": ("“in order to” shortened to “to”", "“in order to” を “to” に"),
}


@dataclass
class SafeFixes:
    """The fixed article and how it differs from the original."""

    fixed: str
    diff: str
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def count(self) -> int:
        return sum(self.counts.values())


def fix_article(article: ParsedArticle, issues: Iterable[Issue | Mapping[str, Any]], *,
                filename: str | None = None, from_file: bool = False) -> SafeFixes:
    """The safe fixes for `article`, following the review's `issues` (code fence languages and
    phrases are fixed only where an issue of their rule is). A missing final newline is only
    added to a file (`from_file`): chat messages lose it on the way."""
    lines = list(article.lines)
    kinds = [article.kind(number) for number in range(1, len(lines) + 1)]
    protected = _protected(lines, kinds)
    counts: Counter[str] = Counter()
    flagged = _flagged_lines(issues)

    edited = list(lines)
    for block in article.code_blocks:
        if block.start_line in flagged.get("code-language", ()) and (language := certain_language(block)):
            index = block.start_line - 1
            line = _with_language(edited[index], block, language)
            if line is not None:
                edited[index] = line
                counts["code-language"] += 1
    for rule in sorted(REWRITE_RULES):
        for number in sorted(flagged.get(rule, ())):
            index = number - 1
            if 0 <= index < len(edited) and not protected[index]:
                line, rewritten = rewrite_phrases(edited[index], rule)
                if rewritten:
                    edited[index] = line
                    counts[rule] += rewritten

    # Whitespace: only when the article renders the same with these changes as without them.
    spaced, space_counts = _whitespace(edited, kinds, protected, final_newline=from_file)
    if space_counts and _renders_alike(lines, _whitespace(lines, kinds, protected, final_newline=from_file)[0],
                                       article.front_matter_line_count):
        edited = spaced
        counts.update(space_counts)
    fixed = "\n".join(edited)
    name = article_name(filename)
    return SafeFixes(fixed=fixed, diff=unified_diff(article.raw, fixed, name) if counts else "", counts=counts)


def fix_job(article: ParsedArticle, issues: list[dict[str, Any]], filename: str | None) -> dict[str, Any]:
    """fix_article as plain data, for a work-pool process: {"count", "counts", "fixed", "diff"}
    ("fixed" and "diff" only when something was fixed)."""
    fixes = fix_article(article, issues, filename=filename, from_file=filename is not None)
    result: dict[str, Any] = {"count": fixes.count, "counts": dict(fixes.counts)}
    if fixes.count:
        name = article_name(filename)
        result.update(fixed=fixes.fixed, diff=fixes.diff, fixed_name=fixed_name(name), diff_name=diff_name(name))
    return result


# --- names -----------------------------------------------------------------------------------------


def article_name(filename: str | None) -> str:
    """The article's file name as written in the diff (pasted text: article.md)."""
    name = PurePath((filename or "").replace("\\", "/")).name.strip()
    return name or "article.md"


def fixed_name(name: str) -> str:
    path = PurePath(name)
    return f"{path.stem}.fixed{path.suffix or '.md'}"


def diff_name(name: str) -> str:
    return f"{PurePath(name).stem}.diff"


# --- code fence languages ---------------------------------------------------------------------------


def certain_language(block: CodeBlock) -> str | None:
    """The language of an untagged block when its content proves it: JSON that parses to an
    object (or a list of objects), or a script starting with a shebang of a known interpreter.
    None otherwise: the writer knows what the code is."""
    if block.language is not None or block.info.strip() or not block.closed or block.diff:
        return None
    content = block.content.strip()
    if not content:
        return None
    if content.startswith(("{", "[")):
        try:
            data = json.loads(content)
        except (ValueError, RecursionError):
            return None
        if (isinstance(data, dict) and data) or (
            isinstance(data, list) and data and all(isinstance(item, dict) for item in data)
        ):
            return "json"
        return None
    match = SHEBANG.match(content.split("\n", 1)[0].strip())
    if match is None:
        return None
    program = match.group(1).rsplit("/", 1)[-1]
    if program == "env":  # #!/usr/bin/env [-S] python3 -u
        words = [word for word in match.group(2).split() if not word.startswith("-")]
        program = words[0] if words else ""
    return SHEBANG_LANGUAGES.get(program) or SHEBANG_LANGUAGES.get(program.rstrip("0123456789."))


def _with_language(line: str, block: CodeBlock, language: str) -> str | None:
    """The opening fence line with `language` after the fence (indentation and `>` kept)."""
    position = line.find(block.fence)
    if position == -1 or line[position + len(block.fence):].strip():
        return None
    return line[: position + len(block.fence)] + language


# --- phrases ----------------------------------------------------------------------------------------


def rewrite_phrases(line: str, rule: str | None = None) -> tuple[str, int]:
    """The line with every redundant phrase of REWRITES (of `rule`'s, if given) shortened, outside
    code spans, math, URLs, link targets and HTML tags; and how many were."""
    masked = mask_for_prose(line) if any(c in line for c in "`$<]:") else line
    spans: list[tuple[int, int, str]] = []
    for rewrite in REWRITES:
        if rule is not None and rewrite.rule != rule:
            continue
        for match in rewrite.pattern.finditer(masked):
            start, end = match.span("phrase")
            if line[start:end] == match.group("phrase"):
                spans.append((start, end, rewrite.replacement))
    if not spans:
        return line, 0
    spans.sort()
    out, position, applied = [], 0, 0
    for start, end, text in spans:
        if start < position:
            continue
        out += [line[position:start], text]
        position = end
        applied += 1
    out.append(line[position:])
    return "".join(out), applied


# --- whitespace -------------------------------------------------------------------------------------


def _protected(lines: list[str], kinds: list[LineKind]) -> list[bool]:
    """Per line: is it content of a block nothing may change (code, math, HTML, front matter),
    blank lines inside such blocks included."""
    protected = [kind in PROTECTED for kind in kinds]
    previous: LineKind | None = None
    run: list[int] = []
    for index, (line, kind) in enumerate(zip(lines, kinds, strict=True)):
        if line.strip():
            if run and previous in BLOCK_KINDS and kind in BLOCK_KINDS:
                for blank in run:
                    protected[blank] = True
            run = []
            previous = kind
        else:
            run.append(index)
    return protected


def _whitespace(lines: list[str], kinds: list[LineKind], protected: list[bool], *,
                final_newline: bool) -> tuple[list[str], Counter[str]]:
    """Trailing spaces removed (not a hard line break), runs of blank lines reduced to one, blank
    lines at the end removed and, for a file, the final newline added. `lines` has as many lines
    as the article (edits never add or remove one), so `kinds` still lines up."""
    counts: Counter[str] = Counter()
    stripped = list(lines)
    for index, line in enumerate(lines):
        if protected[index]:
            continue
        kept = line.rstrip(" \t")
        if kept == line or kept.endswith("\\") or "`" in mask_code_spans(kept):
            continue  # `foo\ ` would become a hard break; a code span may go on to the next line
        if _hard_break(lines, kinds, index, line[len(kept):]):
            continue
        stripped[index] = kept
        counts["trailing-space"] += 1

    # The final newline is the empty string after the last "\n"; blank lines at the end go.
    had_newline = len(stripped) > 1 and stripped[-1] == "" and not protected[-1]
    end = len(stripped)
    while end > 1 and stripped[end - 1] == "" and not protected[end - 1]:
        end -= 1
    body, tail = stripped[:end], stripped[end:]
    if len(tail) > 1 or (tail and not had_newline):
        counts["blank-lines"] += 1
    kept_lines: list[str] = []
    blank_run = 0
    for index, line in enumerate(body):
        if line == "" and not protected[index]:
            blank_run += 1
            if blank_run == 2:
                counts["blank-lines"] += 1
            if blank_run > 1:
                continue
        else:
            blank_run = 0
        kept_lines.append(line)
    if tail or had_newline:
        kept_lines.append("")
    elif final_newline and body and body[-1] != "":
        kept_lines.append("")
        counts["final-newline"] += 1
    return kept_lines, counts


_LINE_END_SPACE = re.compile(r"[ \t]+(?=\n)")


def _hard_break(lines: list[str], kinds: list[LineKind], index: int, trailing: str) -> bool:
    """Whether the trailing spaces of line `index` are a hard line break: two or more spaces with
    more text of the same paragraph (or setext heading) on the next line."""
    if len(trailing) < 2 or trailing.strip(" ") or kinds[index] not in PARAGRAPH_KINDS:
        return False
    line = lines[index]
    if not line.strip() or ATX_HEADING.match(line) or index + 1 >= len(lines):
        return False
    following = lines[index + 1]
    return bool(following.strip()) and kinds[index + 1] in PARAGRAPH_KINDS and not SETEXT_UNDERLINE.match(following)


def _renders_alike(before: list[str], after: list[str], front_matter_lines: int) -> bool:
    """Whether the Markdown after the front matter renders to the same HTML, but for spaces at the
    end of an HTML line (which a browser does not show outside <pre>, and <pre> is never touched)."""
    md = markdown()
    rendered = [_LINE_END_SPACE.sub("", md.render("\n".join(lines[front_matter_lines:]))) for lines in (before, after)]
    return rendered[0] == rendered[1]


# --- diffs ------------------------------------------------------------------------------------------


def unified_diff(original: str, fixed: str, name: str) -> str:
    """`diff -u` of the two texts, as `patch -p1` and `git apply` read it (a/name → b/name),
    with the "No newline at end of file" marker where a text lacks one."""
    out = []
    for line in difflib.unified_diff(
        original.splitlines(keepends=True), fixed.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    ):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _flagged_lines(issues: Iterable[Issue | Mapping[str, Any]]) -> dict[str, set[int]]:
    """{rule id: lines where an issue of that rule starts}, for the rules fixes follow."""
    flagged: dict[str, set[int]] = {}
    for issue in issues:
        data = issue.model_dump() if isinstance(issue, Issue) else issue
        source = str(data.get("source") or "")
        rule = source.removeprefix("rule:")
        line = data.get("line_start")
        if rule in ("code-language", *REWRITE_RULES) and isinstance(line, int):
            flagged.setdefault(rule, set()).add(line)
    return flagged
