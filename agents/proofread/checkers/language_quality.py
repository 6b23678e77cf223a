"""language_quality: deterministic rules (Sudachi for Japanese) plus the model's review when one
is configured. Rules: sentence length, doubled particles, mixed です/ます and である, doubled
words, ら抜き, too many 読点, repeated conjunctions, weak or redundant phrases."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from agents.proofread.checkers.base import BaseChecker, CheckResult
from agents.proofread.japanese import Token, tokenize
from agents.proofread.llm import anchor_quote
from agents.proofread.prompts import render_prompt
from agents.proofread.schemas import Issue, ParsedArticle, SkippedCheck
from agents.proofread.text import Sentence, mask_for_prose, split_sentences
from bot.faults import TurnFailed

# Particles whose repetition in one sentence reads badly (textlint's no-doubled-joshi idea).
DOUBLED_PARTICLES = {("は", "係助詞"), ("が", "格助詞"), ("を", "格助詞"), ("に", "格助詞"), ("で", "格助詞")}
RANUKI = {"見れる", "来れる", "着れる", "寝れる", "出れる", "居れる", "似れる", "煮れる", "起きれる", "借りれる",
          "降りれる", "浴びれる", "生きれる", "落ちれる", "信じれる", "閉じれる", "感じれる"}
WEAK_JA: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"かもしれ(ない|ません)"), "hedging (かもしれない)", "Say it plainly, or say what you are unsure of and why."),
    (re.compile(r"と思(います|う|われます|われる)"), "hedging (と思う)", "State it directly (〜です) if you have checked it."),
    (re.compile(r"ような気がし"), "hedging (ような気がする)", "State it directly, or explain the doubt."),
    (re.compile(r"することができ"), "redundant (することができる)", "Write 〜できる."),
    (re.compile(r"(?<=[\u4e00-\u9fff])を(行う|行います|行なう|行なって|行って)"), "redundant (〜を行う)",
     "Use the verb form, e.g. 実行を行う → 実行する."),
    (re.compile(r"(みたい|的)な感じ"), "vague (〜な感じ)", "Say concretely what you mean."),
)
WEAK_EN = re.compile(
    r"(?i)\b(very|really|basically|obviously|quite|actually|I think|I believe|in order to|it goes without saying)\b"
)
EN_DOUBLE = re.compile(r"(?i)\b([a-z]+)\s+\1\b")
EN_DOUBLE_OK = {"that", "had", "do", "bye", "ha", "no", "so", "very", "knock"}
PREDICATES = {"動詞", "形容詞", "助動詞"}
SKIP_POS = {"補助記号", "空白", "記号", "副詞", "感動詞"}

Style = Literal["polite", "plain"]


def sentence_style(tokens: list[Token]) -> Style | None:
    """です/ます (polite) or だ/である (plain) ending, from the sentence's last words."""
    words = [t for t in tokens if t.pos1 not in ("補助記号", "空白")]
    while words and (words[-1].pos2 == "終助詞" or words[-1].surface in ("か", "ね", "よ", "な")):
        words.pop()
    if not words:
        return None
    tail = words[-3:]
    if any(t.pos1 == "助動詞" and t.base in ("です", "ます") for t in tail):
        return "polite"
    last = words[-1]
    if last.pos1 == "助動詞" and last.base in ("だ", "た", "ない", "ぬ", "う", "よう", "らしい", "まい"):
        return "plain" if last.conjugation_form.startswith("終止形") or last.base == "う" else None
    if last.pos1 in ("動詞", "形容詞") and last.conjugation_form.startswith("終止形"):
        return "plain"
    return None


class LanguageFinding(BaseModel):
    line: int = Field(description="line number as given in the numbered text")
    quote: str = Field(description="the exact words from that line the finding is about")
    problem: str
    suggestion: str
    reason: str
    severity: Literal["warning", "suggestion"] = "suggestion"


class LanguageReview(BaseModel):
    findings: list[LanguageFinding] = Field(default_factory=list)


class LanguageQualityChecker(BaseChecker):
    category = "language_quality"
    status_text = "Checking the writing…"

    async def check(self, article: ParsedArticle) -> CheckResult:
        result = CheckResult(issues=await self.run_rules(article))
        if not self.context.llm.available:
            result.skipped.append(SkippedCheck(
                step=self.step,
                reason="Only the deterministic language rules ran (no language model is configured).",
            ))
            return result
        try:
            llm_issues = await self._llm_review(article)
        except TurnFailed as exc:
            result.errors.append(self.error(exc))
            return result
        covered = {issue.line_start for issue in result.issues}
        result.issues += [issue for issue in llm_issues if issue.line_start not in covered]
        return result

    # --- deterministic rules ------------------------------------------------------------------

    def rules(self, article: ParsedArticle) -> list[Issue]:
        lines = [
            (number, mask_for_prose(line) if article.kind(number) != "quote" else "")
            for number, line in article.prose_lines()
            if article.kind(number) in ("text", "list", "quote")
        ]
        prose: list[tuple[int, str]] = []
        for number, line in lines:
            if article.kind(number) == "list":
                prose.append((number, ""))  # every list item starts a new sentence
            prose.append((number, _strip_markup(line)))
        lines = prose
        japanese = article.language == "ja"
        sentences = split_sentences(lines, japanese=japanese)
        if japanese:
            return self._japanese(article, sentences)
        return self._english(article, sentences)

    def _japanese(self, article: ParsedArticle, sentences: list[Sentence]) -> list[Issue]:
        issues: list[Issue] = []
        styles: list[tuple[Sentence, Style]] = []
        previous_conjunction: str | None = None
        for sentence in sentences:
            tokens = tokenize(sentence.text)
            kind = article.kind(sentence.line_start)
            issues += self._length_ja(article, sentence)
            issues += self._doubled_particles(article, sentence, tokens)
            issues += self._doubled_words(article, sentence, tokens)
            issues += self._ranuki(article, sentence, tokens)
            issues += self._weak_ja(article, sentence)
            commas = sentence.text.count("、") + sentence.text.count("，")
            if commas > self.config.max_commas_ja:
                issues.append(self.issue(
                    article, "suggestion", sentence.line_start,
                    f"This sentence has {commas} 読点 (、).",
                    "Split it into two sentences.",
                    "Many commas in one sentence usually mean several ideas are packed together.",
                    "rule:max-ten", line_end=sentence.line_end,
                ))
            words = [t for t in tokens if t.pos1 not in ("空白",)]
            conjunction = words[0].surface if words and words[0].pos1 == "接続詞" else None
            if conjunction and conjunction == previous_conjunction:
                issues.append(self.issue(
                    article, "suggestion", sentence.line_start,
                    f"Two sentences in a row start with 「{conjunction}」.",
                    "Vary the connective or merge the sentences.",
                    "Repeated connectives make the text monotonous and blur the logic.",
                    "rule:doubled-conjunction",
                ))
            previous_conjunction = conjunction
            if kind == "text" and sentence.text.rstrip().endswith("。"):
                style = sentence_style(tokens)
                if style:
                    styles.append((sentence, style))
        issues += self._mixed_style(article, styles)
        return issues

    def _length_ja(self, article: ParsedArticle, sentence: Sentence) -> list[Issue]:
        length = len(re.sub(r"\s", "", sentence.text))
        if length <= self.config.max_sentence_chars_ja:
            return []
        return [self.issue(
            article, "suggestion", sentence.line_start,
            f"Long sentence ({length} characters).",
            f"Split it; aim for under {self.config.max_sentence_chars_ja} characters.",
            "Long Japanese sentences are hard to parse, especially with technical terms.",
            "rule:sentence-length", line_end=sentence.line_end,
        )]

    def _doubled_particles(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        # Merge runs of particles (で+は → では) so では and は are different words, as in textlint.
        particles: list[tuple[str, str, int, int]] = []  # (surface, type, token index, offset)
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token.pos1 == "助詞":
                surface, kind = token.surface, token.pos2
                start = index
                while index + 1 < len(tokens) and tokens[index + 1].pos1 == "助詞":
                    index += 1
                    surface += tokens[index].surface
                if (surface, kind) in DOUBLED_PARTICLES:
                    particles.append((surface, kind, start, token.begin))
            index += 1
        if len(particles) < 2:
            return []
        # Each particle is paired with the next one of its kind only: the reasons to let a pair
        # pass (a 読点 or a predicate between them, too far apart) hold for every later one as
        # well. Counts so far, to test "between" without rescanning: comparing every pair was
        # quadratic in the length of a sentence (a paragraph without 。 is one sentence).
        commas = [0, *itertools.accumulate(char in "、，" for char in sentence.text)]
        predicates = [0, *itertools.accumulate(t.pos1 in PREDICATES for t in tokens)]
        following: list[int | None] = [None] * len(particles)
        last_of_kind: dict[tuple[str, str], int] = {}
        for i in range(len(particles) - 1, -1, -1):
            key = particles[i][:2]
            following[i] = last_of_kind.get(key)
            last_of_kind[key] = i
        for i, (surface, _kind, token_index, offset) in enumerate(particles):
            j = following[i]
            if j is None:
                continue
            _surface, _other_kind, other_index, other_offset = particles[j]
            if commas[other_offset] - commas[min(offset + 1, other_offset)]:
                continue  # 「AはX、BはY」: parallel clauses, each with its own particle
            if surface != "は" and other_index - token_index > 12:
                continue
            if predicates[other_index] - predicates[min(token_index + 1, other_index)]:
                continue  # a predicate in between: two clauses, each with its own particle
            line = sentence.line_at(other_offset)
            return [self.issue(
                article, "warning", line,
                f"The particle 「{surface}」 appears twice in one sentence: "
                f"「{sentence.text[max(0, offset - 6) : other_offset + 2].strip()}」.",
                "Rephrase so the particle is used once, or split the sentence.",
                "Doubled particles make the subject/object relation ambiguous (no-doubled-joshi).",
                "rule:doubled-particle",
            )]
        return []

    def _doubled_words(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        words = [t for t in tokens if t.pos1 != "空白"]
        for previous, current in itertools.pairwise(words):
            if (
                previous.surface == current.surface
                and previous.pos1 not in SKIP_POS
                and not previous.pos[1].startswith("数詞")
                and not re.fullmatch(r"[\d.,ー〜~\-_=*#]+", current.surface)
                and current.begin - previous.end <= 1
            ):
                return [self.issue(
                    article, "warning", sentence.line_at(current.begin),
                    f"Doubled word: 「{previous.surface}{current.surface}」.",
                    f"Remove one 「{current.surface}」.", "Usually a typing slip.", "rule:doubled-word",
                )]
        return []

    def _ranuki(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        for index, token in enumerate(tokens):
            ranuki = token.pos1 == "動詞" and token.base in RANUKI
            if (
                token.pos1 == "助動詞" and token.base == "れる" and index
                and tokens[index - 1].pos1 == "動詞"
                and tokens[index - 1].conjugation_type.startswith(("上一段", "下一段", "カ行変格"))
            ):
                ranuki = True
            if ranuki:
                word = token.surface if token.pos1 == "動詞" else tokens[index - 1].surface + token.surface
                return [self.issue(
                    article, "warning", sentence.line_at(token.begin), f"ら抜き言葉: 「{word}」.",
                    f"Write 「{word[:-2]}られる」.",
                    "The ら-less potential form is colloquial; technical writing uses 〜られる.",
                    "rule:ranuki",
                )]
        return []

    def _weak_ja(self, article: ParsedArticle, sentence: Sentence) -> list[Issue]:
        issues = []
        for pattern, what, fix in WEAK_JA:
            if match := pattern.search(sentence.text):
                issues.append(self.issue(
                    article, "suggestion", sentence.line_at(match.start()), f"Weak phrasing: {what}.", fix,
                    "Hedged or padded phrasing weakens technical writing.", "rule:weak-phrase",
                ))
        return issues

    def _mixed_style(self, article: ParsedArticle, styles: list[tuple[Sentence, Style]]) -> list[Issue]:
        counts = Counter(style for _sentence, style in styles)
        if len(counts) < 2:
            return []
        majority: Style = "polite" if counts["polite"] >= counts["plain"] else "plain"
        label = {"polite": "です/ます", "plain": "だ/である"}
        return [
            self.issue(
                article, "warning", sentence.line_start,
                f"This sentence uses the {label[style]} style; the article mostly uses {label[majority]} "
                f"({counts[majority]} sentences against {counts[style]}).",
                f"Rewrite it in the {label[majority]} style.",
                "Mixing です/ます and である styles in the body reads as careless.",
                "rule:mixed-style", line_end=sentence.line_end,
            )
            for sentence, style in styles
            if style != majority
        ]

    def _english(self, article: ParsedArticle, sentences: list[Sentence]) -> list[Issue]:
        issues = []
        for sentence in sentences:
            words = re.findall(r"[A-Za-z0-9'’-]+", sentence.text)
            if len(words) > self.config.max_sentence_words_en:
                issues.append(self.issue(
                    article, "suggestion", sentence.line_start, f"Long sentence ({len(words)} words).",
                    f"Split it; aim for under {self.config.max_sentence_words_en} words.",
                    "Long sentences are hard to follow in technical explanations.",
                    "rule:sentence-length", line_end=sentence.line_end,
                ))
            for match in EN_DOUBLE.finditer(sentence.text):
                if match.group(1).lower() not in EN_DOUBLE_OK:
                    issues.append(self.issue(
                        article, "warning", sentence.line_at(match.start()),
                        f"Doubled word: “{match.group(0)}”.", f"Remove one “{match.group(1)}”.",
                        "Usually a typing slip.", "rule:doubled-word",
                    ))
            for match in WEAK_EN.finditer(sentence.text):
                issues.append(self.issue(
                    article, "suggestion", sentence.line_at(match.start()),
                    f"Weak or filler phrase: “{match.group(0)}”.",
                    "Remove it or replace it with something specific.",
                    "Fillers and hedges dilute technical writing.", "rule:weak-phrase",
                ))
        return issues

    # --- the model's review ------------------------------------------------------------------

    async def _llm_review(self, article: ParsedArticle) -> list[Issue]:
        numbered = [
            f"{number}: {line}" for number, line in article.prose_lines()
            if article.kind(number) in ("text", "list", "heading", "table")
        ]
        chunks: list[list[str]] = [[]]
        size = 0
        for entry in numbered:
            if size + len(entry) > self.config.llm_chunk_chars and chunks[-1]:
                chunks.append([])
                size = 0
            chunks[-1].append(entry)
            size += len(entry) + 1
        system = render_prompt("check_language_quality", language="Japanese" if article.language == "ja" else "English")
        reviews = await asyncio.gather(*(
            self.context.llm.structured(
                LanguageReview, system, render_prompt("article_data", article="\n".join(chunk))
            )
            for chunk in chunks if chunk
        ))
        issues = []
        for review in reviews:
            for finding in review.findings:
                line = anchor_quote(article, finding.line, finding.quote)
                if line is None or article.kind(line) in ("code", "fence", "front_matter"):
                    continue
                issues.append(self.issue(
                    article, finding.severity if finding.severity in ("warning", "suggestion") else "suggestion",
                    line, finding.problem, finding.suggestion, finding.reason, "llm",
                ))
        return issues


def _strip_markup(line: str) -> str:
    """Drop list markers, quote markers, emphasis and link brackets; keep the words (and columns
    roughly) so sentences read as prose."""
    line = re.sub(r"^(\s*)(?:[-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?", lambda m: " " * len(m.group(0)), line)
    line = re.sub(r"^(\s*>)+", lambda m: " " * len(m.group(0)), line)
    line = re.sub(r"\*\*|__|~~", lambda m: "  " if len(m.group(0)) == 2 else m.group(0), line)
    return _LINK_BRACKETS.sub(
        lambda m: m.group(2) + " " * (len(m.group(0)) - len(m.group(2))) if m.group(1) else m.group(0), line
    )


# `(!?\[([^\]]*)\])(\[[^\]]*\])?`; when no `]` follows a `[`, the second branch takes the rest of
# the line at once (no later `[` can close either), instead of every `[` rescanning it.
_LINK_BRACKETS = re.compile(r"(!?\[([^\]]*)\])(\[[^\]]*\])?|!?\[[^\]]*")
