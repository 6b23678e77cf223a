"""structure: front matter rules for Zenn and Qiita, heading hierarchy, introduction and
conclusion, section balance."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from agents.proofread.checkers.base import BaseChecker, metadata_header
from agents.proofread.schemas import Heading, Issue, ParsedArticle

INTRO = re.compile(
    r"(?i)はじめに|始めに|初めに|概要|イントロ|背景|前置き|この記事|本記事|要約|tl;?dr|introduction|intro\b|overview|"
    r"background|motivation|about this|summary of|what you.ll learn|モチベーション|目的|やりたいこと"
)
# The last heading of an article, with nothing after it, that only says the article ends.
CLOSING_MARK = re.compile(r"(?i)(?:the\s*)?end|fin|おわり|終わり|おしまい|お終い|完|終|以上")


_HEADING_URL = re.compile(r"https?://\S+|\]\([^)\s]+\)")  # a URL, or a Markdown link (`Continued in: [Part 2](/…)`)


def _is_closing_mark(text: str) -> bool:
    words = "".join(c for c in text if unicodedata.category(c)[0] in "LN" or c.isspace()).strip()
    return bool(CLOSING_MARK.fullmatch(words))


CONCLUSION = re.compile(
    r"(?i)まとめ|おわりに|終わりに|さいごに|最後に|結論|結び|あとがき|所感|感想|振り返り|今後|"
    r"conclusion|summary|wrap.?up|wrapping up|final thoughts|closing|next steps|takeaways|in short"
)
APPENDIX = re.compile(r"(?i)参考|参照|リンク|references?|resources|links|appendix|付録|補足|追記|更新履歴|footnotes?")
ZENN_TITLE_LIMIT = 70
MAX_TOPICS = 5


MIN_PSEUDO_HEADINGS = 2
_TITLE_LINE = re.compile(r"^(\*\*|__)?(?P<text>[^*_].{0,58}?)(\*\*|__)?\s*$")


def pseudo_headings(article: ParsedArticle) -> list[int]:
    """Lines that title a section without being headings: a short line (bold or plain, at most 60
    characters, no closing punctuation) on its own or after a finished sentence (where Markdown runs
    it into the paragraph above), with a paragraph of text after it. An essay without them has no
    sections to mark; a lead-in (“Finally:”) or a bold question is no title."""
    lines: list[int] = []
    text_lines = article.lines
    for number in range(1, len(text_lines) - 1):
        before = text_lines[number - 2].strip() if number > 1 else ""
        line, after = text_lines[number - 1].strip(), text_lines[number].strip()
        if article.kind(number) != "text" or after or article.kind(number + 2) != "text":
            continue
        if before and before[-1:] not in ".!?。！？．":
            continue  # the end of a sentence wrapped over lines; after a full stop it starts anew
        match = _TITLE_LINE.match(line)
        if not match or (match.group(1) or "") != (match.group(3) or ""):
            continue
        text = match.group("text").strip()
        # A bare URL on its own line is a link (a card on Zenn and Qiita), and 「．」「，」 are the full
        # stop and comma of writers who use them for 。 and 、: neither ends a title.
        if text[:1].isalnum() and text[-1:] not in ".?!。？！:：,、)．，" and not _HEADING_URL.fullmatch(text):
            lines.append(number)
    return lines


def _titles_the_article(article: ParsedArticle, heading: Heading) -> bool:
    """Whether `heading` is the article's title: its first line of text, with no title in the front
    matter (a Hashnode backup opens `## Title`, then uses `#` for its sections)."""
    front = article.front_matter
    if front is not None and isinstance(front.data, dict) and front.data.get("title"):
        return False
    return not any(line.strip() for line in article.lines[article.body_start_line - 1 : heading.line - 1])


# The front matter Hashnode's GitHub backup writes for each post (`cuid:` with `slug:` or
# `datePublished:`): an export of a post already published, not a file a platform publishes from.
BACKUP_ID = re.compile(r"(?m)^cuid:\s*\S+")
BACKUP_KEYS = re.compile(r"(?m)^(?:slug|datePublished):")


class StructureChecker(BaseChecker):
    category = "structure"
    status_text = "Checking the article structure…"
    status_text_ja = "記事の構成を確認しています…"

    def rules(self, article: ParsedArticle) -> list[Issue]:
        issues = self._front_matter(article)
        issues += self._headings(article)
        issues += self._intro_and_conclusion(article)
        issues += self._balance(article)
        return issues

    # --- front matter -----------------------------------------------------------------------

    def _front_matter(self, article: ParsedArticle) -> list[Issue]:
        front = article.front_matter
        if front is None:
            if article.title is None and metadata_header(article)[1] is None and len(article.prose_lines()) >= 10:
                return [self.issue(
                    article, "suggestion", article.body_start_line, "The article has no title.",
                    "Add front matter with a title, or start with a # heading.",
                    "Readers and search results need a title to know what the article is about.",
                    "rule:no-title",
                )]
            return []
        if front.error:
            toml = article.front_matter_format == "toml"
            raw = "\n".join(article.lines[front.start_line - 1 : front.end_line])
            if BACKUP_ID.search(raw) and BACKUP_KEYS.search(raw):
                # Hashnode's backup of a post it already published: nothing publishes from this
                # file, so it blocks nothing; a tool that reads it later still fails.
                return [self.issue(
                    article, "suggestion", front.error_line or front.start_line,
                    f"The front matter is not valid YAML: {front.error}. This is Hashnode's backup of a "
                    "published post, so publishing is not affected.",
                    "Quote (or escape) the value on that line if another tool will read this file.",
                    "A static site generator or migration script reading the backup would stop here.",
                    "rule:front-matter-yaml", line_end=front.end_line,
                )]
            return [self.issue(
                article, "critical", front.error_line or front.start_line,
                f"The front matter is not valid {'TOML' if toml else 'YAML'}: {front.error}.",
                "Fix the TOML (strings in quotes: title = \"A\")." if toml
                else "Fix the YAML (quote titles that contain a colon, e.g. title: \"A: B\").",
                "Zenn, Qiita and site generators (Hugo, Jekyll, Zola) all refuse an article whose front matter "
                "does not parse.",
                "rule:front-matter-yaml", line_end=front.end_line,
            )]
        issues = self._draft(article)
        # A platform's rules only where the platform is certain: a Hugo post with seven tags is not
        # a Qiita article with too many.
        if article.platform_certain and article.platform == "zenn":
            issues += self._zenn(article, front.data)
        elif article.platform_certain and article.platform == "qiita":
            issues += self._qiita(article, front.data)
        return issues

    def _draft(self, article: ParsedArticle) -> list[Issue]:
        if not article.draft:
            return []
        key = article.draft.split(":")[0]
        said = (
            ("The article is shared by link only (private: true): Qiita neither lists it nor shows it in search.",
             "Set private: false when you want it public.",
             "A limited-share article is easy to forget; the report says so in case it was meant to go live.")
            if key == "private"  # Qiita's limited sharing: readable by URL, not listed
            else (f"The article is a draft ({article.draft}): it is not public yet.",
                  f"Change {key} when you want to publish it.",
                  "A draft is easy to forget; the report says so in case it was meant to go live.")
        )
        return [self.issue(article, "suggestion", self._key_line(article, key), *said, "rule:draft")]

    def _key_line(self, article: ParsedArticle, key: str) -> int:
        front = article.front_matter
        assert front is not None
        return front.line_of(key) or front.start_line

    def _title(self, article: ParsedArticle, data: dict[str, Any], limit: int | None) -> list[Issue]:
        title = data.get("title")
        if not isinstance(title, str) or not title.strip():
            return [self.issue(
                article, "critical", self._key_line(article, "title"), "The front matter has no title.",
                "Add title: \"…\" to the front matter.",
                "The article cannot be published without a title.", "rule:title",
            )]
        if limit and len(title) > limit:
            return [self.issue(
                article, "warning", self._key_line(article, "title"),
                f"The title is {len(title)} characters; Zenn allows at most {limit}.",
                "Shorten the title.", "Longer titles are rejected or cut off.", "rule:title-length",
            )]
        return []

    def _zenn(self, article: ParsedArticle, data: dict[str, Any]) -> list[Issue]:
        issues = self._title(article, data, ZENN_TITLE_LIMIT)
        emoji = data.get("emoji")
        if not isinstance(emoji, str) or not emoji.strip():
            issues.append(self.issue(
                article, "warning", self._key_line(article, "emoji"), "The Zenn front matter has no emoji.",
                "Add emoji: \"📝\" (one emoji).", "Zenn shows the emoji as the article's icon.", "rule:zenn-emoji",
            ))
        elif not _is_single_emoji(emoji.strip()):
            issues.append(self.issue(
                article, "warning", self._key_line(article, "emoji"), f"emoji must be one emoji, not “{emoji}”.",
                "Use a single emoji character such as \"🐍\".", "Zenn rejects other values.", "rule:zenn-emoji",
            ))
        kind = data.get("type")
        if kind not in ("tech", "idea"):
            issues.append(self.issue(
                article, "critical", self._key_line(article, "type"),
                f"type must be tech or idea, not {kind!r}." if kind is not None else "The front matter has no type.",
                "Write type: \"tech\" for technical articles or type: \"idea\" for opinion pieces.",
                "Zenn refuses to publish an article without a valid type.", "rule:zenn-type",
            ))
        issues += self._tags(article, data, "topics", zenn=True)
        published = data.get("published")
        if published is not None and not isinstance(published, bool):
            issues.append(self.issue(
                article, "warning", self._key_line(article, "published"),
                f"published must be true or false, not {published!r}.",
                "Write published: true (or false for a draft).", "Zenn expects a boolean.", "rule:zenn-published",
            ))
        elif published is None and "published_at" not in data:
            issues.append(self.issue(
                article, "suggestion", article.front_matter.end_line if article.front_matter else 1,
                "The front matter does not say whether the article is published.",
                "Add published: false while drafting, true to publish.",
                "Zenn treats a missing value as a draft, which surprises authors.", "rule:zenn-published",
            ))
        return issues

    def _qiita(self, article: ParsedArticle, data: dict[str, Any]) -> list[Issue]:
        issues = self._title(article, data, None)
        issues += self._tags(article, data, "tags", zenn=False)
        private = data.get("private")
        if private is not None and not isinstance(private, bool):
            issues.append(self.issue(
                article, "warning", self._key_line(article, "private"),
                f"private must be true or false, not {private!r}.", "Write private: false.",
                "Qiita CLI expects a boolean.", "rule:qiita-private",
            ))
        return issues

    def _tags(self, article: ParsedArticle, data: dict[str, Any], key: str, *, zenn: bool) -> list[Issue]:
        value = data.get(key)
        line = self._key_line(article, key)
        names = []
        if isinstance(value, list):
            for item in value:
                name = item.get("name") if isinstance(item, dict) else item
                if name is not None:
                    names.append(str(name))
        elif isinstance(value, str) and value.strip():
            names = [value]
        platform = "Zenn" if zenn else "Qiita"
        if not names:
            return [self.issue(
                article, "warning" if zenn else "critical", line, f"The article has no {key}.",
                f"Add 1–{MAX_TOPICS} {key}, e.g. {key}: [\"python\", \"langgraph\"].",
                f"{platform} uses {key} for discovery" + ("." if zenn else " and requires at least one."),
                f"rule:{key}-count",
            )]
        issues = []
        if len(names) > MAX_TOPICS:
            issues.append(self.issue(
                article, "critical", line, f"{len(names)} {key}; {platform} allows at most {MAX_TOPICS}.",
                f"Keep the {MAX_TOPICS} most relevant {key}.",
                f"{platform} refuses to publish an article with more than {MAX_TOPICS} {key}.", f"rule:{key}-count",
            ))
        if zenn and isinstance(value, str) and "," in value:
            # `topics: ai, api, agent`: YAML reads one string, which Zenn's validator asks to be a list
            listed = ", ".join(f'"{part.strip()}"' for part in value.split(",") if part.strip())
            issues.append(self.issue(
                article, "warning", line, f"Zenn topics are one string, not a list: {value.strip()}.",
                f"Write them as a list: topics: [{listed}].",
                "Zenn's own validator asks for topics as a list.", "rule:topics-format",
            ))
        elif zenn:
            bad = [name for name in names if re.search(r"[\s.+#/&@!?()]", name)]
            if bad:
                issues.append(self.issue(
                    article, "warning", line, f"Zenn topics cannot contain spaces or symbols: {', '.join(bad)}.",
                    "Use lowercase letters and digits only, e.g. nextjs instead of Next.js.",
                    "Zenn's own validator reports such topics (use nextjs, cpp, csharp).", "rule:topics-format",
                ))
        return issues

    # --- headings and sections -------------------------------------------------------------

    def _headings(self, article: ParsedArticle) -> list[Issue]:
        issues: list[Issue] = []
        headings = article.headings
        prose = [n for n, _ in article.prose_lines() if article.kind(n) in ("text", "list")]
        if not headings:
            titles = pseudo_headings(article)
            if len(prose) >= 20 and len(titles) >= MIN_PSEUDO_HEADINGS:
                shown = ", ".join(str(n) for n in titles[:6]) + (", …" if len(titles) > 6 else "")
                issues.append(self.issue(
                    article, "warning", article.body_start_line,
                    f"The article has no headings; its sections are titled by lines of text (lines {shown}).",
                    "Make those lines ## headings.",
                    "A title written as a plain or bold line is not a heading: the outline, the table of "
                    "contents and screen readers miss it (Zenn/Qiita build the contents from headings).",
                    "rule:no-headings",
                ))
            return issues
        top = min(h.level for h in headings)
        first = headings[0]
        # With a front matter title, pymarkdownlnt's MD001 already reports a deep first heading
        # (it counts the title as level 1); without one, nothing else would.
        has_title = bool(article.front_matter and article.front_matter.data.get("title"))
        # One section added above the outline (## before # sections) sits under nothing. Several
        # sections at that level before the first top-level heading are an outline of their own, and
        # the # headings among them are what is off (## sections with a stray # or two).
        before_top = next(i for i, h in enumerate(headings) if h.level == top)
        opening = sum(1 for h in headings[:before_top] if h.level == first.level)
        if first.level > top and not has_title and opening == 1:
            issues.append(self.issue(
                article, "suggestion", first.line,
                f"The first heading is level {first.level}, but later sections use level {top}.",
                f"Start with a level-{top} heading ({'#' * top}).",
                "The outline (and table of contents) starts one level too deep.", "rule:first-heading-level",
            ))
        title = article.front_matter.data.get("title") if article.front_matter else None
        # Zenn and Qiita print the front-matter title above the article; a site generator's layout
        # may not (a VuePress blog shows only the post's own H1), so only there is an equal H1 a repeat.
        shows_title = article.platform in ("zenn", "qiita")
        for heading in headings:
            if shows_title and heading.level == 1 and isinstance(title, str) and heading.text.strip() == title.strip():
                issues.append(self.issue(
                    article, "suggestion", heading.line, "The heading repeats the title from the front matter.",
                    "Remove it: Zenn and Qiita already show the title above the article.",
                    "The title appears twice at the top of the page.", "rule:duplicate-title",
                ))
        return issues

    def _intro_and_conclusion(self, article: ParsedArticle) -> list[Issue]:
        """Judged from what the article says, not what its headings are called: an opening
        paragraph is an introduction, a closing paragraph (before any References/参考 sections)
        is a conclusion. Short notes, link lists and release notes need neither."""
        headings = article.headings
        prose = [n for n, _ in article.prose_lines() if article.kind(n) in ("text", "list")]
        paragraphs = [n for n in prose if article.kind(n) == "text"]
        if len(paragraphs) < 10 or len(headings) < 2 or _is_release_notes(article):
            return []
        issues = []
        titled = _is_title_heading(headings)
        intro_heading = headings[1] if titled else headings[0]
        opening = [n for n in prose if n < intro_heading.line and (not titled or n > headings[0].line)]
        if not opening and not INTRO.search(intro_heading.text):
            issues.append(self.issue(
                article, "suggestion", intro_heading.line, "The article has no introduction.",
                "Open with a short paragraph (or a はじめに section) saying what the reader will learn and why.",
                "Readers decide in the first lines whether the article is for them.", "rule:introduction",
            ))
        top = min(h.level for h in headings)
        main = _main_headings(headings, top)
        closing = main[-3:]
        truncated = any(not block.closed for block in article.code_blocks)  # the end is inside code
        body_end = _appendix_start(headings, main, top) or article.line_count + 1
        if (
            not truncated
            and not any(CONCLUSION.search(h.text) for h in closing)
            and not _ends_with_paragraph(article, main[-1] if main else headings[-1], body_end)
        ):
            last = main[-1] if main else headings[-1]
            issues.append(self.issue(
                article, "suggestion", last.line, "The article has no conclusion.",
                "End with a short paragraph (or a まとめ / Conclusion section) that restates the result and "
                "next steps.",
                "A conclusion tells readers what to take away and where to go next.", "rule:conclusion",
            ))
        return issues

    def _balance(self, article: ParsedArticle) -> list[Issue]:
        headings = article.headings
        issues: list[Issue] = []
        for index, heading in enumerate(headings):
            following = headings[index + 1] if index + 1 < len(headings) else None
            end = following.line if following else article.line_count + 1
            content = [n for n in range(heading.line + 1, end) if article.kind(n) not in ("blank", "heading")]
            if heading.style == "setext":
                content = [n for n in content if n != heading.line + 1]
            if following is None and not content and _is_closing_mark(heading.text):
                continue  # 「# 🔚END」, 「## 完」: the author's sign-off, not a section left unwritten
            if not heading.text.strip():
                continue  # an empty heading: rule:empty-heading reports it, one finding for one fix
            if _HEADING_URL.search(heading.text):
                continue  # `## VIDEO — https://youtu.be/…`, `#### Continued in: [Part 2](/…)`: the heading carries its content, a link
            if (index == 0 and following is not None and following.level <= heading.level and _titles_the_article(article, heading)
                    and not _is_closing_mark(heading.text)):
                continue  # `## Title` over `#` or `##` sections: the title, whose section is the whole article
            if not content and (following is None or following.level <= heading.level):
                issues.append(self.issue(
                    article, "suggestion", heading.line, f"The section “{heading.text}” is empty.",
                    "Write its content or remove the heading.",
                    "An empty section looks unfinished.", "rule:empty-section",
                ))
        if not headings:
            return issues
        body_headings = headings[1:] if _is_title_heading(headings) else headings
        if not body_headings:
            return issues
        top = min(h.level for h in body_headings)
        sections = _sections(article, [h for h in body_headings if h.level == top])
        if len(sections) >= 3:
            total = sum(size for _heading, size in sections)
            for heading, size in sections:
                if size > 80 and size > 0.6 * total:
                    issues.append(self.issue(
                        article, "suggestion", heading.line,
                        f"The section “{heading.text}” holds {size} of the article's {total} lines.",
                        "Split it into subsections or move details into separate sections.",
                        "One oversized section makes the outline unbalanced and hard to navigate.",
                        "rule:section-balance",
                    ))
        return issues


RELEASE_NOTES = re.compile(
    r"(?i)release notes?|changelog|change log|what.s new|リリースノート|更新履歴|変更履歴|リリース情報|^v?\d+\.\d+(\.\d+)?\b"
)


def _is_release_notes(article: ParsedArticle) -> bool:
    """Release notes and changelogs list changes; they have no conclusion to write."""
    if article.title and RELEASE_NOTES.search(article.title):
        return True
    versions = sum(1 for h in article.headings if re.match(r"^\[?v?\d+\.\d+", h.text))
    return versions >= 2 and versions * 2 >= len(article.headings)


def _main_headings(headings: list[Heading], top: int) -> list[Heading]:
    """The section headings up to the trailing appendix sections (参考, References, 付録…)."""
    main = [h for h in headings if h.level <= top + 1]
    while main and APPENDIX.search(main[-1].text):
        main.pop()
    return main


def _appendix_start(headings: list[Heading], main: list[Heading], top: int) -> int | None:
    after = [h for h in headings if (not main or h.line > main[-1].line) and h.level <= top + 1]
    return after[0].line if after else None


def _ends_with_paragraph(article: ParsedArticle, last: Heading, end: int) -> bool:
    """Whether the main text (up to `end`, where the appendix starts) ends with a paragraph of
    words, not with code, a list, a table or an image."""
    start = (last.line_end or last.line) + 1
    for number in range(end - 1, start - 1, -1):
        kind = article.kind(number)
        if kind in ("blank", "html_comment", "html"):
            continue
        if kind != "text":
            return False
        words = re.sub(r"!?\[[^\]]*\]\([^)]*\)|https?://\S+|[#*_`>|-]", "", article.line(number)).strip()
        return len(words) >= 8
    return False


def _is_title_heading(headings: list[Heading]) -> bool:
    return len(headings) > 1 and headings[0].level == 1 and all(h.level > 1 for h in headings[1:])


def _sections(article: ParsedArticle, tops: list[Heading]) -> list[tuple[Heading, int]]:
    sized = []
    for index, heading in enumerate(tops):
        end = tops[index + 1].line if index + 1 < len(tops) else article.line_count + 1
        size = sum(1 for n in range(heading.line + 1, end) if article.kind(n) != "blank")
        sized.append((heading, size))
    return sized


KEYCAP = re.compile("[0-9#*]\ufe0f?\u20e3")


def _newer_emoji(ch: str) -> bool:
    """A code point of the emoji blocks that this Python's Unicode tables do not name yet (🫨 is
    Unicode 15; Python 3.11 knows 14): unassigned there, an emoji on the platforms that show it."""
    return 0x1F000 <= ord(ch) <= 0x1FAFF and unicodedata.category(ch) == "Cn"


# Emoji (Unicode's Emoji property) that are punctuation, not symbols: ‼ ⁉ 〰 〽 (round 165's `emoji: "〽"`).
EMOJI_PUNCTUATION = frozenset("\u203c\u2049\u3030\u303d")


def _is_single_emoji(text: str) -> bool:
    # One grapheme of emoji: a base symbol plus variation selectors, skin tones, ZWJ sequences.
    if KEYCAP.fullmatch(text):
        return True  # 0️⃣ #️⃣: a digit, # or * with the combining keycap
    if not text or any(ch.isascii() and ch.isalnum() for ch in text):
        return False
    bases = [ch for ch in text if unicodedata.category(ch) == "So" or ch in EMOJI_PUNCTUATION or _newer_emoji(ch)]
    joiners = text.count("\u200d")
    return 1 <= len(bases) <= joiners + 1 or (len(bases) == 2 and all(0x1F1E6 <= ord(c) <= 0x1F1FF for c in bases))
