"""structure: front matter rules for Zenn and Qiita, heading hierarchy, introduction and
conclusion, section balance."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from agents.proofread.checkers.base import BaseChecker
from agents.proofread.schemas import Heading, Issue, ParsedArticle

INTRO = re.compile(
    r"(?i)はじめに|始めに|初めに|概要|イントロ|背景|前置き|この記事|本記事|要約|tl;?dr|introduction|intro\b|overview|"
    r"background|motivation|about this|summary of|what you.ll learn|モチベーション|目的|やりたいこと"
)
CONCLUSION = re.compile(
    r"(?i)まとめ|おわりに|終わりに|さいごに|最後に|結論|結び|あとがき|所感|感想|振り返り|今後|"
    r"conclusion|summary|wrap.?up|wrapping up|final thoughts|closing|next steps|takeaways|in short"
)
APPENDIX = re.compile(r"(?i)参考|参照|リンク|references?|resources|links|appendix|付録|補足|追記|更新履歴|footnotes?")
ZENN_TITLE_LIMIT = 70
MAX_TOPICS = 5


class StructureChecker(BaseChecker):
    category = "structure"
    status_text = "Checking the article structure…"

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
            if article.title is None and len(article.prose_lines()) >= 10:
                return [self.issue(
                    article, "suggestion", article.body_start_line, "The article has no title.",
                    "Add front matter with a title, or start with a # heading.",
                    "Readers and search results need a title to know what the article is about.",
                    "rule:title",
                )]
            return []
        if front.error:
            return [self.issue(
                article, "critical", front.error_line or front.start_line,
                f"The front matter is not valid YAML: {front.error}.",
                "Fix the YAML (quote titles that contain a colon, e.g. title: \"A: B\").",
                "Zenn and Qiita refuse to publish an article whose front matter does not parse.",
                "rule:front-matter-yaml", line_end=front.end_line,
            )]
        if article.article_type == "zenn":
            return self._zenn(article, front.data)
        if article.article_type == "qiita":
            return self._qiita(article, front.data)
        return []

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
        elif published is None:
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
        if zenn:
            bad = [name for name in names if re.search(r"[\s.+#/&@!?()]", name)]
            if bad:
                issues.append(self.issue(
                    article, "warning", line, f"Zenn topics cannot contain spaces or symbols: {', '.join(bad)}.",
                    "Use lowercase letters and digits only, e.g. nextjs instead of Next.js.",
                    "Zenn rejects such topics.", "rule:topics-format",
                ))
        return issues

    # --- headings and sections -------------------------------------------------------------

    def _headings(self, article: ParsedArticle) -> list[Issue]:
        issues: list[Issue] = []
        headings = article.headings
        prose = [n for n, _ in article.prose_lines() if article.kind(n) in ("text", "list")]
        if not headings:
            if len(prose) >= 20:
                issues.append(self.issue(
                    article, "warning", article.body_start_line, "The article has no headings.",
                    "Split it into sections with ## headings.",
                    "Long text without sections is hard to scan, and Zenn/Qiita build the table of contents "
                    "from headings.", "rule:no-headings",
                ))
            return issues
        top = min(h.level for h in headings)
        first = headings[0]
        # With a front matter title, pymarkdownlnt's MD001 already reports a deep first heading
        # (it counts the title as level 1); without one, nothing else would.
        has_title = bool(article.front_matter and article.front_matter.data.get("title"))
        if first.level > top and not has_title:
            issues.append(self.issue(
                article, "suggestion", first.line,
                f"The first heading is level {first.level}, but later sections use level {top}.",
                f"Start with a level-{top} heading ({'#' * top}).",
                "The outline (and table of contents) starts one level too deep.", "rule:first-heading-level",
            ))
        title = article.front_matter.data.get("title") if article.front_matter else None
        for heading in headings:
            if heading.level == 1 and isinstance(title, str) and heading.text.strip() == title.strip():
                issues.append(self.issue(
                    article, "suggestion", heading.line, "The heading repeats the title from the front matter.",
                    "Remove it: Zenn and Qiita already show the title above the article.",
                    "The title appears twice at the top of the page.", "rule:duplicate-title",
                ))
        return issues

    def _intro_and_conclusion(self, article: ParsedArticle) -> list[Issue]:
        headings = article.headings
        prose = [n for n, _ in article.prose_lines() if article.kind(n) in ("text", "list")]
        paragraphs = [n for n in prose if article.kind(n) == "text"]
        if len(paragraphs) < 10 or len(headings) < 2:
            return []  # short notes and link lists need no introduction or conclusion
        issues = []
        first = headings[0]
        # A lone H1 at the top is the article's title: the introduction is what follows it.
        intro_end = headings[1].line if _is_title_heading(headings) else first.line
        intro_heading = headings[1] if _is_title_heading(headings) else first
        opening = [n for n in prose if n < intro_end]
        if _is_title_heading(headings):
            opening = [n for n in opening if n > first.line]
        if not opening and not INTRO.search(intro_heading.text):
            issues.append(self.issue(
                article, "warning", intro_heading.line, "The article has no introduction.",
                "Open with a short paragraph (or a はじめに section) saying what the reader will learn and why.",
                "Readers decide in the first lines whether the article is for them.", "rule:introduction",
            ))
        top = min(h.level for h in headings)
        closing = [h for h in headings if h.level <= top + 1 and not APPENDIX.search(h.text)][-3:]
        truncated = any(not block.closed for block in article.code_blocks)  # the end is inside code
        if not truncated and not any(CONCLUSION.search(h.text) for h in closing):
            last = headings[-1]
            issues.append(self.issue(
                article, "warning", last.line, "The article has no conclusion.",
                "End with a short まとめ / Conclusion section that restates the result and next steps.",
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


def _is_title_heading(headings: list[Heading]) -> bool:
    return len(headings) > 1 and headings[0].level == 1 and all(h.level > 1 for h in headings[1:])


def _sections(article: ParsedArticle, tops: list[Heading]) -> list[tuple[Heading, int]]:
    sized = []
    for index, heading in enumerate(tops):
        end = tops[index + 1].line if index + 1 < len(tops) else article.line_count + 1
        size = sum(1 for n in range(heading.line + 1, end) if article.kind(n) != "blank")
        sized.append((heading, size))
    return sized


def _is_single_emoji(text: str) -> bool:
    # One grapheme of emoji: a base symbol plus variation selectors, skin tones, ZWJ sequences.
    if not text or any(ch.isascii() and ch.isalnum() for ch in text):
        return False
    bases = [ch for ch in text if unicodedata.category(ch) == "So"]
    joiners = text.count("\u200d")
    return 1 <= len(bases) <= joiners + 1 or (len(bases) == 2 and all(0x1F1E6 <= ord(c) <= 0x1F1FF for c in bases))
