"""language_quality: deterministic rules (Sudachi for Japanese) plus the model's review when one
is configured. Rules: sentence length, doubled particles, doubled conjunctive が, mixed です/ます and
である, doubled words, ら抜き, too many 読点, repeated conjunctions, hedges, weak or redundant
phrases, and spelling (checkers/spelling.py). Japanese articles get their messages in Japanese."""

from __future__ import annotations

import asyncio
import itertools
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, Field

from agents.proofread.checkers.base import BaseChecker, CheckResult, metadata_header
from agents.proofread.checkers.markdown_format import paragraphs
from agents.proofread.checkers.spelling import SpellingChecker, in_other_latin_language
from agents.proofread.japanese import (
    NO_TOKEN,
    Token,
    conjunctive_ga,
    doubled_particles,
    doubled_phrases,
    doubled_words,
    enumerations,
    hedges,
    tokenize,
)
from agents.proofread.llm import anchor_quote
from agents.proofread.prompts import render_prompt
from agents.proofread.schemas import Issue, ParsedArticle, Severity, SkippedCheck
from agents.proofread.text import (
    JA_FULL_STOPS,
    LIST_MARKER,
    Sentence,
    count_japanese,
    has_japanese,
    lift_inline_footnotes,
    list_items,
    mask_for_prose,
    mask_struck,
    split_sentences,
)
from bot.faults import TurnFailed

RANUKI = {"見れる", "来れる", "着れる", "寝れる", "出れる", "居れる", "似れる", "煮れる", "起きれる", "借りれる",
          "降りれる", "浴びれる", "生きれる", "落ちれる", "信じれる", "閉じれる", "感じれる",
          "みれる"}  # 「様子もみれますね」 (round 154): 見れる in kana; 21 mirror lines, each one ら抜き
# (pattern, rule, problem, suggestion) for phrases found by their characters; the と思う hedge is
# judged on tokens (japanese.hedges) since its volitional and quoted uses read the same.
WEAK_JA: tuple[tuple[re.Pattern[str], str, str, str], ...] = (
    # Only ending a sentence: 「〜かもしれないが、」 concedes a point, it does not hedge one.
    (re.compile(r"かもしれ(ない|ません)(ね|よ)?[。！？!?]?\s*$"), "rule:hedge", "ぼかした表現（〜かもしれない）",
     "確かめたことなら言い切り、不確かなら何が不確かでなぜかを書いてください。"),
    (re.compile(r"ような気がし"), "rule:hedge", "ぼかした表現（〜ような気がする）",
     "言い切るか、疑問の理由を書いてください。"),
    (re.compile(r"することができ"), "rule:redundant-phrase", "冗長な表現（〜することができる）", "「〜できる」と書けます。"),
    (re.compile(r"(?<=[\u4e00-\u9fff])を(行う|行います|行なう|行なって|行って)"), "rule:redundant-okonau",
     "冗長な表現（〜を行う）", "動詞で書けます（例: 実行を行う → 実行する）。"),
    (re.compile(r"(みたい|的)な感じ"), "rule:weak-phrase", "あいまいな表現（〜な感じ）", "具体的に何を言いたいかを書いてください。"),
)
# A footnote is an aside: its style may differ from the body's (「〜である。」 notes in a です/ます article).
FOOTNOTE_DEFINITION = re.compile(r"^\s{0,3}\[\^[^\]]+\]:")
ASIDE_BOXES = {"message", "note"}
EN_HEDGE = re.compile(r"(?i)\b(I think|I believe)\b")
EN_REDUNDANT = re.compile(r"(?i)\bit goes without saying\b")
EN_IN_ORDER_TO = re.compile(r"(?i)\bin order to\b")  # its own rule, so a project can turn it off alone
# Intensifiers (very, really, quite, actually) are left alone: in published English articles they
# were almost never worth a note. These two talk down to a reader who did not find it obvious.
WEAK_EN = re.compile(r"(?i)\b(basically|obviously)\b")
# A dash setting an aside into a sentence: an em dash (or its entity), or a spaced double hyphen or
# en dash between words (an en dash between numbers is a range).
EN_WORD = re.compile(r"[A-Za-z0-9'’-]+")
EN_DASH_ASIDE = re.compile(r"—|&mdash;|\s--\s|(?<=[A-Za-z,])\s[–-]\s(?=[A-Za-z])")
# Not the tail of a hyphenated word or a contraction (“add-on on”, “won't t”).
EN_PUNCTUATION = ".,;:!?\"'“”‘’()"
EN_DOUBLE = re.compile(r"(?i)(?<![\w'’-])([a-z]+)(\s+)\1\b(?!['’-])")
# Words doubled on purpose: "that that", "long long" (a C type), "log log n" (a bound).
# Words doubled on purpose: grammar (had had, that that), types (long long), laughs and interjections.
EN_DOUBLE_OK = {"that", "had", "do", "bye", "ha", "no", "so", "very", "knock", "long", "etc", "blah", "log",
                "har", "hah", "heh", "hee", "ho", "tsk", "tut", "la", "ok", "okay"}
PREDICATES = {"動詞", "形容詞", "助動詞"}
SKIP_POS = {"補助記号", "空白", "記号", "副詞", "感動詞"}

Style = Literal["polite", "plain"]
MIN_STYLED_SENTENCE = 6  # characters, 。 included
MIN_REGISTER_SENTENCES = 3  # sentences of a section in one style that make it its own register…
REGISTER_SHARE = 0.8  # …when they are at least this share of the section's styled sentences
# Thanks and acknowledgements (「参考にさせていただきました」「ありがとうございます」) stay polite in a
# だ/である article by custom: they are addressed to someone, not a slip of the article's voice.
COURTESY = re.compile(
    r"(?:いただ|頂)(?:き|く|け|い)|ありがとう|有難う|お礼申し上げ|感謝(?:いた)?します|お願い(?:いた|致)?します|お願い申し上げ"
)
LATIN_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 .,'\"/:_&+-]*[A-Za-z0-9]")
LATIN_RUN_CHARS = 20
# A sentence with fewer kana and kanji than this is no long Japanese sentence, however long it
# is: its length is an English title or a name given twice (a reference list's entry).
MIN_JAPANESE_LETTERS = 30
MAX_FRAMING_SENTENCES = 3  # a note set off by a thematic break above or below the body is this short
# A link's destination, with an optional title: `(https://… "title")`.
_LINK_DESTINATION = r"\([^)\s]+(?:\s+\"[^\"]*\")?\)"
# A line that is one link and nothing else (`[第2回 環境構築](https://…)`, an image link).
LINK_LINE = re.compile(rf"^\s*(?:\[!\[[^\]]*\]\([^)]*\)\]|!?\[[^\]]+\]){_LINK_DESTINATION}\s*$")
# A list item that is one link and nothing else (`- [git diff … - まくまく Git ノート](https://…)`): a
# reference list, whose words are the linked page's title, not the writer's sentence.
LINK_ITEM = re.compile(rf"^\s*{LIST_MARKER}\s+\[[^\]]+\]{_LINK_DESTINATION}\s*$")
# A line of `ls -l` output pasted outside a code block (`-rw-r--r-- 1 root root 2839 Apr 18 …`): a
# program's columns, no prose ("root root" is an owner and a group).
UNIX_LISTING = re.compile(r"^\s*[-dlbcps][-r][-w][-xsS][-r][-w][-xsS][-r][-w][-xtT][.@+]?\s+\d+\s+\S+\s+\S+\s+\d")
# A line that opens with a short label and a colon (「5日目： …」, 「環境: …」): in a run of such lines
# each is an entry of its own, a list written without markers (an advent calendar's neighbours).
LABEL_LINE = re.compile(r"^\s*[^\s:：\[\]()!`<>*_#|]{1,12}(?:：|:\s)")
# A Markdown hard line break (two spaces or a backslash at the end of the line) after anything but
# a comma: Japanese writers end sentences with one where English would put a full stop. After 、
# the sentence goes on (「一言で言うと、␣␣」 then the rest on the next line).
HARD_BREAK = re.compile(r"(?<![、，,\s])(?: {2,}|\\)$")
# A line that ends in a polite sentence ending (〜ます, 〜です, 〜ください) with no 。 ends its
# sentence: nobody breaks a line after ます in the middle of one (「…提供しています⏎具体的な処理は…」);
# nor after an aside in brackets that follows it (「…まだ限定的です（…匂わせはある）⏎ただ…」); an aside
# holding a 。 of its own (「…考えました(…方針です。)」) is left to the sentence splitter, as before.
POLITE_LINE_END = re.compile(r"(?:ます|です|ました|でした|ません|ましょう|ください)(?:[（(][^（()）。]*[）)])?\s*$")
# A line that trails off (「…と思いますが…」, 「…いいのに・・」) ends its sentence: what follows is a new thought.
TRAILING_LINE_END = re.compile(r"(?:…|‥|\.\.\.|・・+)\s*$")
QUOTATION = re.compile(r"「([^「」]*)」")
TRAILING_OFF = re.compile(r"(?:…|\.\.\.|・・・|‥|。。)+。$")


# A run of capitalised words, one space apart: the words of a name (`Yet Another Compiler Compiler`).
_CAPITALISED_RUN = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?: [A-Z][a-z]+)+(?![A-Za-z])")


def spells_acronym(text: str, begin: int, end: int) -> bool:
    """Whether text[begin:end] lies in a run of capitalised words whose initials are an acronym the
    sentence also writes: 「YACC（Yet Another Compiler Compiler）」 doubles a word of YACC's own name."""
    for run in _CAPITALISED_RUN.finditer(text):
        if run.start() <= begin and end <= run.end():
            initials = "".join(word[0] for word in run.group(0).split())
            return re.search(rf"(?<![A-Za-z]){initials}(?![A-Za-z])", text) is not None
    return False


def section_starts(article: ParsedArticle) -> list[int]:
    """The lines of the section headings, in order: the headings of the first heading's level when
    that level is used more than once (`##` sections followed by `#` appendices: both open
    sections), else of the highest level used more than once (a lone `#` over `##` sections is a
    title); every heading of that level or higher."""
    levels = Counter(heading.level for heading in article.headings)
    first = article.headings[0].level if article.headings else 1
    level = first if levels[first] > 1 else min(
        (lvl for lvl, count in levels.items() if count > 1), default=min(levels, default=1)
    )
    return sorted(h.line for h in article.headings if h.level <= level)


def section_of(starts: list[int], line: int) -> int:
    """The line of the section heading `line` is under (0 before the first), from section_starts."""
    index = bisect_right(starts, line)
    return starts[index - 1] if index else 0


def _section_registers(starts: list[int], styles: list[tuple[Sentence, Style]]) -> dict[int, Style]:
    """Sections (by their heading's line; 0 for the introduction before the first) written in a
    register of their own: at least MIN_REGISTER_SENTENCES sentences, REGISTER_SHARE of them in one
    style (a polite introduction to a plain article, an open letter, an appeal to the reader); or
    two or more sentences all in one style; or, first or last, a one-sentence section (an opening
    line to the reader, a sign-off). A section's own register is the writer's choice; a switch
    inside a section, or a lone sentence of a middle section, is a slip."""
    by_section: dict[int, Counter[Style]] = {}
    for sentence, style in styles:
        by_section.setdefault(section_of(starts, sentence.line_start), Counter())[style] += 1
    registers: dict[int, Style] = {}
    ends = (min(by_section, default=0), max(by_section, default=0))
    for section, counts in by_section.items():
        style, count = counts.most_common(1)[0]
        if count >= MIN_REGISTER_SENTENCES and count >= REGISTER_SHARE * counts.total():
            registers[section] = style
        elif count == counts.total() and (count > 1 or section in ends):  # 0, the introduction, is ends[0]
            # A section with no sentence in any other style: terse definitions under their own
            # heading (「…取り込んでいく。」), the writer's note before the first heading
            # (「フルコードは…にあります。」 over a plain series), an opening line or a closing
            # remark. On the 492 labelled articles such sections held 10 debatable findings and no
            # true one: every true finding sat in a section that also uses the main style.
            registers[section] = style
    return registers


def _without_closing_aside(tokens: list[Token]) -> list[Token]:
    """The sentence without an aside in parentheses that ends it: in 「…も考えました（CLI は既存ツール
    が見つかりました：[…で使用する]）。」 the predicate is 考えました, not the link title's 使用する."""
    end = len(tokens)
    while end and tokens[end - 1].pos1 in ("補助記号", "空白") and tokens[end - 1].surface not in ("）", ")"):
        end -= 1
    if not end or tokens[end - 1].surface not in ("）", ")"):
        return tokens
    depth = 0
    for index in range(end - 1, -1, -1):
        depth += {"）": 1, ")": 1, "（": -1, "(": -1}.get(tokens[index].surface, 0)
        if depth == 0:
            return tokens[:index] + tokens[end:] if index else tokens  # the 。 after it still ends the sentence
    return tokens


# The fewest sentences in the main style that make it the article's style.
MIN_MAJORITY_SENTENCES = 3


def _after_code(line: str, word: str) -> bool:
    """Whether `line` (a list item's marker aside) opens with a code span followed by `word`."""
    return re.match(rf"\s*{LIST_MARKER}?\s*`[^`]+`\s*" + re.escape(word), line) is not None


def sentence_style(tokens: list[Token]) -> Style | None:
    """です/ます (polite) or だ/である (plain) ending, from the sentence's last words."""
    # Only what follows the last closing bracket ends the sentence: in 「先頭に来るのは「正解はXです。」だ。」
    # the です belongs to the quotation.
    # A sentence that ends in a quotation has no predicate of its own.
    trimmed = _without_closing_aside(tokens)
    # Before a parenthesis the dictionary reads a final た or する as attributive (連体形): the aside
    # looks like the noun it modifies. Once the aside is gone, that form ends the sentence.
    ending = ("終止形", "連体形") if trimmed is not tokens else ("終止形",)
    tokens = trimmed
    closing = max((i for i, t in enumerate(tokens) if t.surface in ("」", "』")), default=-1)
    words = [t for t in tokens[closing + 1 :] if t.pos1 not in ("補助記号", "空白")]
    spoken = asked = False
    while words and (words[-1].pos2 == "終助詞" or words[-1].surface in ("か", "ね", "よ", "な")):
        spoken = spoken or words[-1].surface != "か"
        asked = asked or words[-1].surface == "か"
        words.pop()
    if not words:
        return None
    if words[-1].surface in ("でしょ", "っしょ"):
        return None  # 「…書くでしょ。」: でしょう clipped is casual speech, not the polite style
    tail = words[-3:]
    if any(t.pos1 == "助動詞" and t.base in ("です", "ます") for t in tail):
        return "polite"
    # A plain sentence said to the reader (「静的サイトはいいぞ。」「便利だよね。」「中央区なんだ。」) is
    # speech, not the written だ/である style: a voice chosen for effect, not evidence of a slip.
    if spoken or (len(words) > 1 and words[-2].surface == "ん" and words[-1].base == "だ"):
        return None
    last = words[-1]
    if last.pos1 == "助動詞" and last.base in ("だ", "た", "ない", "ぬ", "う", "よう", "らしい", "まい"):
        return "plain" if last.conjugation_form.startswith(ending) or last.base == "う" else None
    if last.conjugation_type.startswith("文語"):
        return None  # 「めでたしめでたし。」「かくあるべし。」: a classical set phrase, in neither style
    if last.pos1 in ("動詞", "形容詞") and last.conjugation_form.startswith(ending):
        # 「正規表現で頑張るか。」「…期待された値を持つか。」: a bare question the writer asks (a checklist
        # item, a beat of inner voice) states nothing in either style; 「…済んだか。」 keeps its plain た.
        return None if asked else "plain"
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


_NEXT_WORD = re.compile(r"\s*(\S+)")


def word_before(text: str, end: int) -> list[str]:
    """`text[:end].split()[-1:]`, reading back from `end` only as far as that word: a sentence of
    thousands of doubled words is read once, not once per pair."""
    stop = end
    while stop > 0 and text[stop - 1].isspace():
        stop -= 1
    start = stop
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return [text[start:stop]] if start < stop else []


def word_after(text: str, start: int) -> list[str]:
    """`text[start:].split()[:1]`, reading on from `start` only as far as that word."""
    match = _NEXT_WORD.match(text, start)
    return [match.group(1)] if match else []


class LanguageQualityChecker(BaseChecker):
    category = "language_quality"
    status_text = "Checking the writing…"
    status_text_ja = "文章を確認しています…"

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
        if article.language != "ja" and in_other_latin_language(article):
            return []  # an Indonesian or German post: English rules would judge another language
        header_end, _title = metadata_header(article)
        definitions = {link.line for link in article.links if link.kind == "definition"}
        lines = [
            (number, mask_struck(mask_for_prose(line)) if article.kind(number) != "quote" else "")
            for number, line in article.prose_lines()
            if article.kind(number) in ("text", "list", "quote") and number > header_end and number not in definitions
            and not UNIX_LISTING.match(line) and not LINK_ITEM.match(line)
        ]
        lines = _mask_across_lines(article, lines)
        japanese = article.language == "ja"
        lines_are_sentences = japanese and _ends_lines_not_sentences(article, lines)
        unstopped = _unstopped_paragraphs(article) if japanese else set()
        prose: list[tuple[int, str]] = []
        notes: list[tuple[int, str]] = []  # inline footnotes, each a paragraph of its own
        link_lines = {number for number, _line in lines if LINK_LINE.match(article.lines[number - 1])}
        label_lines = {number for number, _line in lines if LABEL_LINE.match(article.lines[number - 1])}
        for number, line in lines:
            line, lifted = lift_inline_footnotes(line)
            for column, note in lifted:
                notes += [(number, ""), (number, " " * column + _strip_markup(note))]
            navigation = any(number in run and bool({number - 1, number + 1} & run) for run in (link_lines, label_lines))
            if navigation or article.kind(number) == "list" or FOOTNOTE_DEFINITION.match(article.lines[number - 1]):
                prose.append((number, ""))  # every list item and footnote starts a new sentence
            prose.append((number, _strip_markup(line)))
            if navigation:
                prose.append((number, ""))  # links or labelled entries one per line: each a line of its own
            if japanese and (lines_are_sentences or number in unstopped or HARD_BREAK.search(article.lines[number - 1])
                             or POLITE_LINE_END.search(line) or TRAILING_LINE_END.search(line)):
                prose.append((number, ""))  # 「…成功できた␣␣」: a line break the writer made ends the sentence
        sentences = split_sentences(prose, japanese=japanese)
        # A note is read at the article's end: its sentences count on their own, as an aside whose
        # style may differ from the body's (「…はストレスがある」 in a です/ます article).
        sentences += [replace(sentence, aside=True) for sentence in split_sentences(notes, japanese=japanese)]
        spelling = SpellingChecker(self.context)
        issues = spelling.english(article)
        if japanese:
            for heading in article.headings:  # a misspelt loanword is as plain in a heading as in a sentence
                issues += spelling.loanwords(article, Sentence(mask_for_prose(heading.text), heading.line, heading.line))
            return self._japanese(article, sentences, spelling) + issues
        return self._english(article, sentences) + issues

    def _say(
        self, article: ParsedArticle, severity: Severity, line: int | None, rule: str,
        ja: tuple[str, str, str], en: tuple[str, str, str], *, line_end: int | None = None,
    ) -> Issue:
        """An issue in the article's language: (problem, suggestion, reason) in Japanese or English."""
        problem, suggestion, reason = ja if article.language == "ja" else en
        return self.issue(article, severity, line, problem, suggestion, reason, rule, line_end=line_end)

    def _japanese(self, article: ParsedArticle, sentences: list[Sentence], spelling: SpellingChecker) -> list[Issue]:
        issues: list[Issue] = []
        styles: list[tuple[Sentence, Style]] = []
        previous_conjunction: str | None = None
        # Notes in a :::message / :::note box are asides, like footnotes: their style may differ.
        boxed = {
            number
            for box in article.containers if box.kind in ASIDE_BOXES
            for number in range(box.start_line, (box.end_line or article.line_count) + 1)
        } | _framing_notes(article, [s for s in sentences if s.text.rstrip().endswith(JA_FULL_STOPS)]) | _captions(article)
        boxed |= _labelled_notes(article) | _displayed_statements(article) | _numbered_items(article)
        quoted = _quoted_thoughts(sentences)
        feelings: set[int] = set()
        for index, sentence in enumerate(sentences):
            tokens = tokenize(sentence.text)
            kind = article.kind(sentence.line_start)
            issues += self._length_ja(article, sentence, tokens)
            issues += self._doubled_particles(article, sentence, tokens)
            issues += self._conjunctive_ga(article, sentence, tokens)
            issues += self._doubled_words(article, sentence, tokens)
            issues += self._ranuki(article, sentence, tokens)
            issues += self._weak_ja(article, sentence, tokens)
            issues += spelling.japanese(article, sentence, tokens)
            commas = sentence.text.count("、") + sentence.text.count("，")
            if commas > self.config.max_commas_ja:
                issues.append(self._say(
                    article, "suggestion", sentence.line_start, "rule:max-ten",
                    (f"一文に読点（、）が{commas}個あります。", "二つの文に分けてください。",
                     "読点が多い文は、いくつもの内容を詰め込んでいることがほとんどです。"),
                    (f"This sentence has {commas} 読点 (、).", "Split it into two sentences.",
                     "Many commas in one sentence usually mean several ideas are packed together."),
                    line_end=sentence.line_end,
                ))
            words = [t for t in tokens if t.pos1 not in ("空白",)]
            conjunction = words[0].surface if words and words[0].pos1 == "接続詞" else None
            if conjunction and (_after_code(article.lines[sentence.line_start - 1], conjunction) or (
                len(conjunction) == 1 and (len(words) < 2 or words[1].surface not in "、，,")
            )):
                # 「`code` で…」「- `xor rdi, rcx`で、…」「* `Predictor` から `Segment` への…」: a word right
                # after masked code is a particle, as is a one-kana で/が/と with no comma after it
                conjunction = None
            if conjunction == "また" and len(words) > 1 and words[1].pos1 in ("動詞", "形容詞"):
                conjunction = None  # 「また行きたい。」: また straight before a verb is the adverb "again", no connective
            if index and _new_section(article, sentences[index - 1], sentence):
                previous_conjunction = None  # a heading between them: the sentences are not in a row
            if conjunction and conjunction == previous_conjunction:
                issues.append(self._say(
                    article, "suggestion", sentence.line_start, "rule:doubled-conjunction",
                    (f"「{conjunction}」で始まる文が二つ続いています。", "接続詞を変えるか、二つの文をまとめてください。",
                     "同じ接続詞が続くと単調になり、論理の流れもぼやけます。"),
                    (f"Two sentences in a row start with 「{conjunction}」.",
                     "Vary the connective or merge the sentences.",
                     "Repeated connectives make the text monotonous and blur the logic."),
                ))
            previous_conjunction = conjunction
            footnote = FOOTNOTE_DEFINITION.match(article.lines[sentence.line_start - 1])
            # 「（大変助かりました。ありがとうございます！）」: the sentences of an aside in brackets, like
            # the whole aside before them, do not set the article's style; nor does a note marked ※
            # (「※ そのまま使って実際に動作するファイルではないです。」, rounds 62–173: three labels, all debatable)
            aside = footnote or sentence.line_start in boxed or sentence.aside or sentence.text.lstrip().startswith("※")
            # A sentence of a few characters (「疲れた。」, 「以上です。」) is an aside or a set
            # phrase whose style is a choice, not a slip: it does not count either way.
            short = len(sentence.text.strip()) < MIN_STYLED_SENTENCE
            # Derivations keep the plain style of mathematical texts even in a です/ます article.
            math = _mathematical(article, sentence)
            # A thought that trails off (「問題ないのではないか…。」) is the writer's inner voice.
            trailing_off = TRAILING_OFF.search(sentence.text.rstrip()) is not None
            if kind == "text" and sentence.text.rstrip().endswith(JA_FULL_STOPS) and not (
                aside or short or math or trailing_off or index in quoted
            ):
                style = sentence_style(tokens)
                if style:
                    styles.append((sentence, style))
                # 「…とても楽しい。」「面倒くさい。」: a feeling said plainly is the writer's own voice, like
                # a thought that trails off: it counts towards the plain style, but is named as no slip
                if style == "plain" and _exclaims_feeling(tokens):
                    feelings.add(len(styles) - 1)  # its place in `styles`
        issues += self._mixed_style(article, styles, feelings)
        return issues

    def _length_ja(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        if not has_japanese(sentence.text):
            return []  # a passage quoted in English: its full stops are not 。, so it is no one sentence
        text = sentence.text
        length = len(re.sub(r"\s", "", text))
        # A run of Latin text — an English title or quotation, a menu path, a name — is read as one
        # unit: it counts at most LATIN_RUN_CHARS characters.
        length -= sum(
            max(0, len(re.sub(r"\s", "", run.group())) - LATIN_RUN_CHARS) for run in LATIN_RUN.finditer(text)
        )
        # So is an enumeration of names or terms (「A、B、C」): read item by item, it counts at most
        # as much as a Latin run.
        length -= sum(max(0, size - LATIN_RUN_CHARS) for size in enumerations(tokens))
        # A quotation holding sentences of its own (a pasted post: 「…できました。注意点…」) is read
        # sentence by sentence: it counts as its longest one.
        for quote in QUOTATION.finditer(text):
            pieces = [len(re.sub(r"\s", "", piece)) for piece in re.split(r"[。！？]", quote.group(1))]
            if len(pieces) > 1 and any(pieces[1:]):
                length -= sum(pieces) - max(pieces)
        limit = self.config.max_sentence_chars_ja
        if length < limit or count_japanese(text) < MIN_JAPANESE_LETTERS:
            return []
        return [self._say(
            article, "suggestion", sentence.line_start, "rule:sentence-length",
            (f"長い文です（{length}文字）。", f"{limit}文字以内を目安に分けてください。",
             "長い文は、専門用語が多いとなおさら読みにくくなります。"),
            (f"Long sentence ({length} characters).", f"Split it; aim for under {limit} characters.",
             "Long Japanese sentences are hard to parse, especially with technical terms."),
            line_end=sentence.line_end,
        )]

    def _doubled_particles(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        """rule:doubled-particle — the same particle twice in one clause (japanese.doubled_particles)."""
        for first, second in doubled_particles(tokens):
            excerpt = sentence.text[max(0, first.begin - 6) : second.end + 2].strip()
            return [self._say(
                article, "suggestion", sentence.line_at(second.begin), "rule:doubled-particle",
                (f"助詞「{first.surface}」が一つの節で二度使われています: 「{excerpt}」",
                 "助詞が一度で済むように言い換えるか、文を分けてください。",
                 "同じ助詞が重なると、主語や目的語の関係があいまいになります（no-doubled-joshi）。"),
                (f"The particle 「{first.surface}」 appears twice in one clause: 「{excerpt}」.",
                 "Rephrase so the particle is used once, or split the sentence.",
                 "Doubled particles make the subject/object relation ambiguous (no-doubled-joshi)."),
            )]
        return []

    def _conjunctive_ga(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        """rule:doubled-conjunctive-ga — 〜が、〜が、 in one sentence."""
        extra = conjunctive_ga(tokens)
        if not extra:
            return []
        return [self._say(
            article, "suggestion", sentence.line_at(extra[0].begin), "rule:doubled-conjunctive-ga",
            ("一文に逆接の「が」が二度以上使われています。", "「が」の所で文を分けてください。",
             "「〜が、〜が」と続く文は、どこで話が反転するのかが読み取りにくくなります。"),
            ("The conjunctive 「が」 appears twice in one sentence.", "Split the sentence at a 「が」.",
             "Two contrasts in one sentence make it hard to see where the argument turns."),
            line_end=sentence.line_end,
        )]

    def _doubled_words(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        """rule:doubled-word — the same word (japanese.doubled_words) or compound particle
        (japanese.doubled_phrases, というという) typed twice."""
        slips = [
            (current.surface, sentence.text[previous.begin : current.end], current)  # as written: 「the the」
            for previous, current in doubled_words(tokens, frozenset(index for index, _line in sentence.breaks))
            if not spells_acronym(sentence.text, previous.begin, current.end)
        ]
        for word, written, copy in slips + [(word, word * 2, copy) for word, copy in doubled_phrases(tokens)]:
            return [self._say(
                article, "warning", sentence.line_at(copy.begin), "rule:doubled-word",
                (f"同じ語が続いています: 「{written}」", f"「{word}」を一つ消してください。",
                 "ほとんどの場合、入力の誤りです。"),
                (f"Doubled word: 「{written}」.", f"Remove one 「{word}」.", "Usually a typing slip."),
            )]
        return []

    def _ranuki(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        for index, token in enumerate(tokens):
            if token.pos1 == "動詞" and token.base in RANUKI:
                # The fix comes from the dictionary form: 「見れ」 of 見れます needs 見られる's 見られ, not 「られる」.
                word, fixed = token.surface, f"{token.base[:-2]}られる"
                if word == token.base:
                    ja = (f"ら抜き言葉: 「{word}」", f"「{fixed}」と書いてください。")
                    en = (f"ら抜き言葉: 「{word}」.", f"Write 「{fixed}」.")
                else:
                    ja = (f"ら抜き言葉: 「{word}」", f"「{fixed}」の形で書いてください。")
                    en = (f"ら抜き言葉: 「{word}」.", f"Write 「{fixed}」 in the form the sentence needs.")
            elif (
                token.pos1 == "助動詞" and token.base == "れる" and index
                and tokens[index - 1].pos1 == "動詞"
                and tokens[index - 1].conjugation_type.startswith(("上一段", "下一段", "カ行変格"))
            ):
                # 「覚えれる」 lacks a ら (覚えられる); 「いただけれる」「外せれる」 add a れ to a verb that already
                # says "can" (いただける, 外せる): the tokens do not tell the two apart, so both fixes are named.
                verb = tokens[index - 1]
                word, fixed = verb.surface + token.surface, f"{verb.surface}られる"
                ja = (f"ら抜き言葉か、「れ」が一つ多い形です: 「{word}」",
                      f"「{fixed}」と書いてください（「{verb.base}」がすでに「〜できる」の意味なら「{verb.base}」）。")
                en = (f"ら抜き言葉, or one れ too many: 「{word}」.",
                      f"Write 「{fixed}」 (or 「{verb.base}」 if that verb already means \"can\").")
            else:
                continue
            return [self._say(
                article, "warning", sentence.line_at(token.begin), "rule:ranuki",
                (*ja, "ら抜きの可能形は話し言葉です。技術文書では「〜られる」を使います。"),
                (*en, "The ら-less potential form is colloquial; technical writing uses 〜られる."),
            )]
        return []

    def _weak_ja(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        issues = []
        for particle in hedges(tokens)[:1]:
            issues.append(self._say(
                article, "suggestion", sentence.line_at(particle.begin), "rule:hedge",
                ("ぼかした表現（〜と思う）", "確かめたことなら「〜です」と言い切ってください。",
                 "推量でぼかした書き方は、技術的な主張を弱めます。"),
                ("Hedging: 〜と思う.", "State it directly (〜です) if you have checked it.",
                 "Hedged phrasing weakens a technical claim."),
            ))
        for pattern, rule, what, fix in WEAK_JA:
            if match := pattern.search(sentence.text):
                issues.append(self._say(
                    article, "suggestion", sentence.line_at(match.start()), rule,
                    (what, fix, "ぼかした表現や回りくどい表現は、技術文書を読みにくくします。"),
                    (f"Weak or padded phrasing: {what}.", fix, "Hedged or padded phrasing weakens technical writing."),
                ))
        return issues

    def _mixed_style(
        self, article: ParsedArticle, styles: list[tuple[Sentence, Style]], feelings: AbstractSet[int] = frozenset()
    ) -> list[Issue]:
        """The sentences of `styles` not in the article's majority style; `feelings` (places in
        `styles`) count towards their style but are not named."""
        counts = Counter(style for _sentence, style in styles)
        if len(counts) < 2 or counts["polite"] == counts["plain"]:
            return []  # one style throughout, or as many sentences in each: no majority to slip from
        majority: Style = "polite" if counts["polite"] > counts["plain"] else "plain"
        starts = section_starts(article)
        registers = _section_registers(starts, styles)
        # Outside the sections kept in a register of their own, one style must hold 大半 (three
        # sentences in five): otherwise the article mixes them throughout and no sentence slipped.
        minority: Style = "plain" if majority == "polite" else "polite"
        body = Counter(
            style for sentence, style in styles
            if not (style == minority and registers.get(section_of(starts, sentence.line_start)) == minority)
        )
        if body[majority] * 2 < body[minority] * 3 or body[majority] < MIN_MAJORITY_SENTENCES:
            return []  # no 大半, or too few sentences to show one (2 against 1 in a page of notes)
        label = {"polite": "です/ます", "plain": "だ/である"}
        return [
            self._say(
                article, "warning", sentence.line_start, "rule:mixed-style",
                (f"この文は{label[style]}調ですが、記事の大半は{label[majority]}調です"
                 f"（{counts[majority]}文対{counts[style]}文）。",
                 f"{label[majority]}調に書き直してください。",
                 "本文で です/ます調 と である調 が混ざると、雑な印象を与えます。"),
                (f"This sentence uses the {label[style]} style; the article mostly uses {label[majority]} "
                 f"({counts[majority]} sentences against {counts[style]}).",
                 f"Rewrite it in the {label[majority]} style.",
                 "Mixing です/ます and である styles in the body reads as careless."),
                line_end=sentence.line_end,
            )
            for place, (sentence, style) in enumerate(styles)
            if style != majority and not (style == "polite" and COURTESY.search(sentence.text))
            and registers.get(section_of(starts, sentence.line_start)) != style and place not in feelings
        ]

    def _english(self, article: ParsedArticle, sentences: list[Sentence]) -> list[Issue]:
        issues = []
        for sentence in sentences:
            # A list of names or terms (a release's contributors) is not a run of clauses: its
            # items do not make a sentence long.
            listed = sum(len(EN_WORD.findall(" ".join(run))) for *_, run in list_items(sentence.text))
            count = len(EN_WORD.findall(sentence.text)) - listed
            aside = EN_DASH_ASIDE.search(sentence.text) is not None
            limit = self.config.max_sentence_words_en_aside if aside else self.config.max_sentence_words_en
            if count >= limit:
                issues.append(self.issue(
                    article, "suggestion", sentence.line_start, f"Long sentence ({count} words).",
                    "Split it at the dash; aim for under 40 words." if aside
                    else f"Split it; aim for under {self.config.max_sentence_words_en} words.",
                    "Long sentences are hard to follow in technical explanations"
                    + (", and an aside set off by a dash makes the reader hold two threads at once." if aside else "."),
                    "rule:sentence-length", line_end=sentence.line_end,
                ))
            for match in EN_DOUBLE.finditer(sentence.text):
                word = match.group(1).lower()
                before, after = word_before(sentence.text, match.start()), word_after(sentence.text, match.end())
                if word in EN_DOUBLE_OK or [w.lower().strip(EN_PUNCTUATION) for w in before + after].count(word):
                    continue  # "long long", or a deliberate run of three ("far far far away", "ah ah ah!")
                if match.group(0).isupper():
                    continue  # "HEAVY HEAVY testing": shouted on purpose
                if match.group(1)[:1].isupper() and match.group(0).split()[-1][:1].isupper():
                    continue  # "Zhu Zhu", "Michael Michael": a name, both halves capitalised
                if match.group(1).islower() and match.group(0).split()[-1].isupper():
                    continue  # "add a A record": an article, then the record type
                if re.match(r"[.．]\d", sentence.text[match.end() : match.end() + 2]):
                    continue  # "Annex C C.6": a section's letter, then the number of a section in it
                if "  " in match.group(2):
                    continue  # "actions       actions": columns aligned with spaces, not a word typed twice
                if not sentence.typed_gap(match.start(2), match.end(2)):
                    continue  # something was between them: code, a URL, a tag
                issues.append(self.issue(
                    article, "warning", sentence.line_at(match.start()),
                    f"Doubled word: “{match.group(0)}”.", f"Remove one “{match.group(1)}”.",
                    "Usually a typing slip.", "rule:doubled-word",
                ))
            for pattern, rule, reason in (
                (EN_HEDGE, "rule:hedge", "Hedges weaken a technical claim; state it, or say what is uncertain."),
                (EN_REDUNDANT, "rule:redundant-phrase", "The shorter phrase says the same."),
                (EN_IN_ORDER_TO, "rule:in-order-to", "The shorter phrase says the same."),
                (WEAK_EN, "rule:weak-phrase", "Fillers dilute technical writing."),
            ):
                for match in pattern.finditer(sentence.text):
                    issues.append(self.issue(
                        article, "suggestion", sentence.line_at(match.start()),
                        f"Weak or filler phrase: “{match.group(0)}”.",
                        "Remove it or replace it with something specific.", reason, rule,
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


# What mask_for_prose leaves when a paragraph wraps a code span or an HTML tag onto the next line:
# backtick runs and `<tag …` openers without their closer on the same line.
_WRAPPED_CODE = re.compile(r"(?<!`)(`+)(?!`)[^`]*?(?<!`)\1(?!`)")
_WRAPPED_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_ITEM_START = re.compile(rf"^\s*{LIST_MARKER}\s")


# A writer who never types 。 ends each sentence with a line break (Zenn and Qiita render it).
UNSTOPPED_MIN_LINES = 5
_STOPS = "。．！？!?"
_LINE_STOP = re.compile(rf"[{_STOPS}」』）)…]\s*$")


def _ends_lines_not_sentences(article: ParsedArticle, lines: list[tuple[int, str]]) -> bool:
    """Whether the writer ends sentences with line breaks instead of 。: of the lines of running
    Japanese text (paragraphs, not list items) that end a paragraph, where a sentence surely ends,
    at least UNSTOPPED_MIN_LINES and fewer than a third end with a full stop or closing mark."""
    numbers = {number for number, _line in lines}
    ends = [
        article.lines[number - 1] for number, _line in lines
        if article.kind(number) == "text" and number + 1 not in numbers and has_japanese(article.lines[number - 1])
    ]
    stopped = sum(1 for line in ends if _LINE_STOP.search(line))
    return len(ends) >= UNSTOPPED_MIN_LINES and stopped * 3 < len(ends)


# A paragraph of this many lines of Japanese with no 。 (or ！？) anywhere is written a statement per line
# (Zenn and Qiita show each line break): its lines are not one sentence.
UNSTOPPED_PARAGRAPH_LINES = 3
_ANY_STOP = re.compile(f"[{_STOPS}]")


def _unstopped_paragraphs(article: ParsedArticle) -> set[int]:
    """The numbers of the lines of paragraphs (UNSTOPPED_PARAGRAPH_LINES or more lines of running
    text, most of them Japanese) that hold no full stop at all: an answer typed a line per item into
    a tool, notes one per line (round 148: eleven such lines read as one sentence of 228 characters)."""
    found: set[int] = set()
    for paragraph in paragraphs(article):
        texts = [line for _number, line in paragraph]
        if (
            article.kind(paragraph[0][0]) == "text" and len(texts) >= UNSTOPPED_PARAGRAPH_LINES
            and 2 * sum(map(has_japanese, texts)) > len(texts) and not any(_ANY_STOP.search(text) for text in texts)
        ):
            found.update(number for number, _line in paragraph)
    return found


def _mask_across_lines(article: ParsedArticle, lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """`lines` (already masked line by line) with the code spans and HTML tags that wrap onto the
    next line of the same paragraph blanked too: a wrapped API path is code, and the alt texts of
    a row of <img> tags are not a sentence."""
    groups: list[list[tuple[int, str]]] = []
    for number, line in lines:
        previous = groups[-1][-1][0] if groups else None
        if (
            previous is None or number != previous + 1 or article.kind(number) != article.kind(previous)
            or _ITEM_START.match(article.lines[number - 1])
        ):
            groups.append([])
        groups[-1].append((number, line))
    masked: list[tuple[int, str]] = []
    for group in groups:
        joined = "\n".join(line for _number, line in group)
        if len(group) > 1 and ("`" in joined or "<" in joined):
            joined = _WRAPPED_CODE.sub(_blank_keeping_lines, joined)
            joined = _WRAPPED_TAG.sub(_blank_keeping_lines, joined)
        raw = "\n".join(article.lines[number - 1] for number, _line in group) if len(group) > 1 else ""
        if raw and len(raw) == len(joined) and "<code" in raw.lower():
            for span in _HTML_CODE.finditer(raw):  # `<code>extension_dir = …<br>` … `</code>`: settings, not prose
                joined = joined[: span.start()] + _blank_keeping_lines(span) + joined[span.end() :]
        masked += zip((number for number, _line in group), joined.split("\n"), strict=True)
    return masked


# An HTML code element that runs over several lines of a paragraph.
_HTML_CODE = re.compile(r"<code\b[^>]*>(?:(?!</code>)[^\n])*\n.*?(?:</code>|\Z)", re.S | re.I)


def _blank_keeping_lines(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)[^$\n]+?(?<!\s)\$(?!\d)")


_FORMAL_AFTER_IU = ("こと", "わけ", "訳", "の")


# 「公式が言うには、…。」「先輩曰く、…。」: the sentence gives someone else's words, in their style.
_REPORTED_SPEECH = re.compile(r"[^。、\n]{1,20}(?:が|の)(?:言う|いう)には、|[^。、\n]{1,20}(?:曰く|いわく)、")
# 「翻訳：状態をリーフにプッシュする。例えば、…」 under a quoted English passage: a translation gives the
# source's words in the source's style, with the sentences after it on its line (round 132).
_TRANSLATION_LABEL = re.compile(r"[（(]?(?:翻訳|和訳|意訳|拙訳|訳)(?:文)?[）)]?\s*[：:]")


def _quoted_thoughts(sentences: list[Sentence]) -> set[int]:
    """Indices of the sentences that are a thought or a remark quoted without brackets: the next sentence,
    on the line where this one ends, opens with a quoting particle and a verb (「…よく分からん。という
    人向けの記事です。」, 「…。と思いました。」, 「…。と認識したうえで」, 「…。って言われても」). A
    sentence cannot open with と or って, so the full stop before it closes the quotation, not a
    sentence of the writer's own. So is a sentence that opens by naming whose words it gives
    (「公式が言うには、…。」, round 85), and a translation labelled as one (「翻訳：…。」, round 132) with
    the sentences that follow it on its line."""
    quoted: set[int] = {
        index for index, sentence in enumerate(sentences) if _REPORTED_SPEECH.match(sentence.text.lstrip())
    }
    translation = False
    for index, sentence in enumerate(sentences):
        opens = _TRANSLATION_LABEL.match(sentence.text.lstrip()) is not None
        goes_on = translation and sentence.line_start == sentences[index - 1].line_end
        translation = opens or goes_on
        if translation:
            quoted.add(index)
    for index, (sentence, after) in enumerate(itertools.pairwise(sentences)):
        opening = after.text.lstrip()
        if after.line_start != sentence.line_end or not opening.startswith(("と", "って")):
            continue
        head = ([t for t in tokenize(opening[:12]) if t.pos1 != "空白"] + [NO_TOKEN] * 4)[:4]  # always four
        saying = head[1].pos1 == "動詞" or (head[1].pos1 == "名詞" and head[2].base == "する")  # と認識して
        connective = head[1].base in ("いう", "言う") and (
            head[2].surface in _FORMAL_AFTER_IU or (head[2].surface == "て" and head[3].surface == "も")
        ) and not (head[2].surface == "こと" and head[3].surface == "に")
        # 「…。ということで」「…。というのも」「…。といっても」: the writer goes on from their own sentence;
        # 「…インポートする。ということになります。」 (round 157) says what the sentence before amounts to
        if saying and not connective and head[0].surface in ("と", "って") and head[0].pos1 == "助詞":
            quoted.add(index)
    return quoted


def _new_section(article: ParsedArticle, before: Sentence, after: Sentence) -> bool:
    """Whether a heading stands between two sentences (round 92's 「が、」 closing one CTF challenge and
    「が、」 under the next one's heading)."""
    return any(article.kind(number) == "heading" for number in range(before.line_end + 1, after.line_start))


def _mathematical(article: ParsedArticle, sentence: Sentence) -> bool:
    """A sentence with TeX math in it, or one that introduces a math block (「次のように書ける。」)."""
    lines = range(sentence.line_start, (sentence.line_end or sentence.line_start) + 1)
    if any(_INLINE_MATH.search(article.lines[n - 1]) for n in lines if n <= len(article.lines)):
        return True
    following = (sentence.line_end or sentence.line_start) + 1
    while following <= article.line_count and article.kind(following) == "blank":
        following += 1
    return following <= article.line_count and article.kind(following) == "math"


def _strip_markup(line: str) -> str:
    """Drop list markers, quote markers, emphasis and link brackets; keep the words (and columns
    roughly) so sentences read as prose."""
    line = re.sub(r"^(\s*)(?:[-*+]|\d+[.)])\s+(\[[ xX]\]\s+)?", lambda m: " " * len(m.group(0)), line)
    line = re.sub(r"^(\s*>)+", lambda m: " " * len(m.group(0)), line)
    line = re.sub(r"\*\*|__|~~", lambda m: "  " if len(m.group(0)) == 2 else m.group(0), line)
    return _LINK_BRACKETS.sub(_link_words, line)


def _link_words(m: re.Match[str]) -> str:
    """A link keeps its text; an image's alt text describes a picture, not the article's prose
    (and is often written in another style), so it is blanked."""
    if not m.group(1):
        return m.group(0)
    kept = "" if m.group(1).startswith("!") else m.group(2)
    return kept + " " * (len(m.group(0)) - len(kept))


# `(!?\[([^\]]*)\])(\[[^\]]*\])?`; when no `]` follows a `[`, the second branch takes the rest of
# the line at once (no later `[` can close either), instead of every `[` rescanning it.
_LINK_BRACKETS = re.compile(r"(!?\[([^\]]*)\])(\[[^\]]*\])?|!?\[[^\]]*")


_IMAGE_LINE = re.compile(r"^\s*!\[[^\]]*\]\([^)]*\)\s*$")


# A paragraph opened by a bold label and a colon: `**教訓 1:** …`, `**目標：**…`, `**Note:** …`.
_NOTE_LABEL = re.compile(r"^\s*\*\*[^*\n]{1,20}?(?:[:：]\*\*|\*\*\s*[:：])")


# A line that is one bold statement and nothing else: `**"早番"と"遅番"が連続しない。**`, `- **声を上げましょう。**`.
_DISPLAYED = re.compile(rf"^\s*(?:{LIST_MARKER}\s+)?(\*\*|__)(?!\s)[^*_\n]+?(?<!\s)\1\s*$")


def _displayed_statements(article: ParsedArticle) -> set[int]:
    """The lines set wholly in bold on their own (a constraint stated, a motto, a key sentence): a
    display, like a caption, whose register is the writer's choice, not a slip in the running text
    (rounds 50–52 and 175: ten such labels debatable; two true only as lines of a closing section that
    mixed styles line by line, whose other slips are still named)."""
    return {
        number for number, line in enumerate(article.lines, start=1)
        if article.kind(number) == "text" and _DISPLAYED.match(line)
    }


def _labelled_notes(article: ParsedArticle) -> set[int]:
    """The lines of paragraphs that open with a bold label and a colon (教訓, 目標, ポイント, Note):
    a labelled note states a lesson or a rule in its own compact register, as a caption does."""
    return _paragraphs_opening_with(article, _NOTE_LABEL)


# A paragraph numbered by hand, not as a Markdown list (「１：…共通化する。」, 「②…」, 「(3) …」): an item.
_HAND_NUMBER = re.compile(r"^\s*(?:[0-9０-９]{1,2}\s*(?:[：:](?![0-9０-９]{2})|[）)])|[①-⑳]|[（(][0-9０-９]{1,2}[）)])")  # not 10:30


def _numbered_items(article: ParsedArticle) -> set[int]:
    """The lines of paragraphs numbered by hand (「１：…する。」「２：…する。」 each a paragraph, then
    「のような方針で進めます」), or lines of one (「以下の通りです。」 then ①…, ②…, ③…): the items of a list
    the writer did not mark up as one, whose style, like a Markdown list item's, is not the running
    text's (rounds 203 and 206: four such items labelled false)."""
    return _paragraphs_opening_with(article, _HAND_NUMBER, anywhere=True)


def _paragraphs_opening_with(article: ParsedArticle, opening: re.Pattern[str], *, anywhere: bool = False) -> set[int]:
    """The lines of the prose paragraphs whose first line `opening` matches; with `anywhere`, from
    any line of a paragraph that it matches to the paragraph's end."""
    lines = article.lines
    found: set[int] = set()
    for index, line in enumerate(lines):
        first = index == 0 or not lines[index - 1].strip()
        if article.kind(index + 1) == "text" and opening.match(line) and (first or anywhere):
            end = index
            while end < len(lines) and lines[end].strip() and article.kind(end + 1) == "text":
                found.add(end + 1)
                end += 1
    return found


# Adjectives of feeling (感情形容詞): said plainly they voice what the writer feels, not a statement
# whose register slipped (in polite articles such sentences, 「とても楽しい」「面倒くさい」「悲しすぎる」, were
# labelled debatable nine times in ten over rounds 44–213).
_FEELINGS = {"嬉しい", "うれしい", "楽しい", "たのしい", "悲しい", "かなしい", "寂しい", "さみしい", "さびしい",
             "恥ずかしい", "怖い", "こわい", "悔しい", "くやしい", "惜しい", "おしい", "面倒くさい", "めんどくさい",
             "面倒臭い", "めんどい", "悩ましい", "羨ましい", "うらやましい", "欲しい", "ほしい", "懐かしい", "苦しい",
             "辛い", "つらい", "もったいない", "勿体無い", "ありがたい", "有難い", "切ない", "心細い"}


def _exclaims_feeling(tokens: list[Token]) -> bool:
    """Whether the sentence ends in an adjective of feeling (with た, すぎる or a final particle after it)."""
    words = [t for t in tokens if t.pos1 not in ("補助記号", "空白")]
    while words and (words[-1].pos1 in ("助詞", "助動詞") or words[-1].base in ("すぎる", "過ぎる")):
        words.pop()  # 楽しかった, 悲しすぎる, 欲しいな
    if not words or words[-1].pos1 != "形容詞" or words[-1].base not in _FEELINGS:
        return False
    # 「確認してほしい。」 asks something of the reader: a request, not a feeling
    return not (words[-1].base in ("欲しい", "ほしい") and len(words) > 1 and words[-2].surface in ("て", "で"))


def _captions(article: ParsedArticle) -> set[int]:
    """One-line paragraphs right above or right below an image line, with no blank line between:
    a figure's caption (「幅590pxのとき、文字色は青となる。」). A caption's style is a choice, like a
    footnote's."""
    lines = article.lines
    captions = set()
    for index, line in enumerate(lines):
        if not _IMAGE_LINE.match(line):
            continue
        above, below = index - 1, index + 1  # 0-based neighbours
        if above >= 0 and lines[above].strip() and (above == 0 or not lines[above - 1].strip()):
            captions.add(above + 1)
        if below < len(lines) and lines[below].strip() and (below + 1 == len(lines) or not lines[below + 1].strip()):
            captions.add(below + 1)
    return {number for number in captions if article.kind(number) == "text" and not _IMAGE_LINE.match(lines[number - 1])}


def _framing_notes(article: ParsedArticle, sentences: list[Sentence]) -> set[int]:
    """The lines of a short note a thematic break sets off from the body: the first stretch of
    `sentences` (a translator's note, the notice of a collaborative article) and the last (a
    postscript), when a break separates them from the rest. Such notes are asides, like a
    :::message box: their style is the writer's choice, not a slip."""
    edges = [0, *article.thematic_breaks, article.line_count + 1]
    stretches = [
        (low, high, inside)
        for low, high in itertools.pairwise(edges)
        if (inside := [s for s in sentences if low < s.line_start < high])
    ]
    if len(stretches) < 2:  # no break between two stretches of sentences
        return set()
    return {
        number
        for low, high, inside in (stretches[0], stretches[-1])
        if len(inside) <= MAX_FRAMING_SENTENCES
        for number in range(low + 1, high)
    }
