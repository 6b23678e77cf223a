"""Rules that read a long run of one kind of character (a data: URI image, a minified line, a run of
spaces, a line of thousands of words, thousands of `# ` lines) read it once, and find what they
found before.

Two kinds of test. Each rewritten expression or function is compared with the one it replaced on
many random strings over the characters that matter to it (seeded: the same strings every run).
And each is given input of about 2 MB (ten times the article limit): read once, that takes well
under a second; read again from every position, as the old forms did, it would take hours, so a
regression fails on the suite's per-test timeout (pyproject.toml) instead of passing slowly. No
wall time is asserted. Last, a checker the work pool stops is reported, and logged in one line."""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Callable

import pytest

from agents.proofread.checkers import code_quality, languages, spelling
from agents.proofread.checkers.base import CheckResult
from agents.proofread.checkers.language_quality import LanguageQualityChecker, word_after, word_before
from agents.proofread.checkers.spelling import (
    honorific_names,
    is_known,
    profile_link_names,
    self_introduced_names,
)
from agents.proofread.config import GraphConfig
from agents.proofread.parser import parse_article
from agents.proofread.schemas import ParsedArticle
from agents.proofread.text import Sentence, list_segments
from bot.workpool import WorkFailed
from tests.proofread.test_spelling import context

BIG = 2_000_000

# The expressions as they were: the same matches, found by retrying a run from each of its characters.
OLD_HONORIFIC_NAME = re.compile(r"([A-Za-z][A-Za-z'’-]*)\s*(?:さん|さま|様|氏|くん|君|ちゃん|先生)")
OLD_SELF_INTRODUCTION = re.compile(
    r"(?:(?:こんにちは|こんばんは|おはようございます|はじめまして|初めまして)[、,，！!]?\s*(?:[^\s。、]{1,30}の\s*)?"
    r"([A-Za-z][A-Za-z0-9'’._-]*)\s*です"
    r"|([A-Za-z][A-Za-z0-9'’._-]*)\s*と(?:申します|申す|いいます|言います))"
)
OLD_LIST_SEPARATOR = re.compile(r",\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+")
OLD_ELISION = re.compile(
    r"(?:^|[\s:,\[{])(?:#|//)?\s*(?:\.{3,}|…|・・・|･･･)\s*[,\]}]*\s*$"
    r"|^\s*(?:\{\{\s*|[:：]\s*)?(?:省略|略|中略|以下略|途中省略|以下省略|omitted|snip)(?:\s*\}\})?\s*$"
    r"|^\s*(?:#|//)?\s*(?:\.{2,}|…+|・{3,}|･{3,})\s*[(（]?(?:省略|略|中略|以下略|omitted|snip)[)）]?\s*(?:\.{2,}|…+)?\s*,?\s*$"
    r"|^\s*(?:#|//)?\s*[\[(<（【]\s*(?:省略|略|中略|以下略|omitted|snip|snipped)\s*(?:\.{2,}|…)?\s*[\])>）】]\s*$"
    r"|^\s*(?:#|//)?\s*([=*~〜-])\1+\s*(?:省略|略|中略|以下略|omitted|snip)\s*\1+\s*$"
    r"|^[~〜～]+$",
    re.M,
)
OLD_TOML_STATEMENT = re.compile(r"^\s*(?:\[|[\w\"'.-]+(?:\s*\.\s*[\w\"'-]+)*\s*=)", re.M)
OLD_PROFILE_LINK = re.compile(
    r"\[([^\]]+)\]\((?:https?://)?(?:www\.)?(?:twitter\.com|x\.com|github\.com|gitlab\.com|instagram\.com|"
    r"bsky\.app/profile|linkedin\.com/in|mastodon\.\w+|zenn\.dev|qiita\.com)/@?[\w.-]+/?\)"
)
PIECES = ["a", "Z", "x", "'", "’", "-", ".", "_", "1", " ", "  ", "\t", "\n", "\u3000", "さん", "氏", "と申します",
          "です", "こんにちは", "、", "の", "and", "or", ",", "。"]


def random_strings(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 24))) for _ in range(count)]


@pytest.mark.parametrize(
    ("new", "old"),
    [
        (lambda s: [m.group(1) for m in spelling._HONORIFIC_NAME.finditer(s)],
         lambda s: [m.group(1) for m in OLD_HONORIFIC_NAME.finditer(s)]),
        (lambda s: [m.groups() for m in spelling._SELF_INTRODUCTION.finditer(s)],
         lambda s: [m.groups() for m in OLD_SELF_INTRODUCTION.finditer(s)]),
        (list_segments, lambda s: [part.strip() for part in OLD_LIST_SEPARATOR.split(s)]),
    ],
    ids=["honorific names", "self-introductions", "list segments"],
)
def test_rewritten_expressions_find_what_the_old_ones_found(new: Callable[[str], object], old: Callable[[str], object]):
    samples = [
        *random_strings(30_000, seed=9),
        "tricken さんの意見", "Smith氏", "-'o'brien-さん", "こんにちは、hatsu です。", "kobo と申します",
        "12abc と申します", "Alice, Bob, and Carol", "a  and  b or c", "x" * 50 + " さん",
    ]
    for sample in samples:
        assert new(sample) == old(sample), sample


# Pieces of the code-block rules' inputs: runs of spaces and blank lines, ellipses and 省略 marks,
# dotted keys, and the line ends (`\r`, form feed) that `\s` takes and `$` does not.
BLOCK_PIECES = [" ", "  ", "\t", "\n", "\n", "\r", "\x0c", "\u3000", "#", "//", "...", ".", "..", "…", "・・・", "・", "･･･",
                ",", "]", "}", "[", "{", ":", "：", "省略", "略", "omitted", "snip", "snipped", "{{", "}}", "(", ")", "（",
                "）", "<", ">", "【", "】", "=", "*", "~", "〜", "～", "-", "a", "b1", "_", "'", '"', "é"]
LINK_PIECES = ["[", "]", "(", ")", "](https://github.com/", "](x.com/", "](https://twitter.com/@", "](zenn.dev/u)",
               "](https://mastodon.social/", "a", "b c", " ", "/", "@", ".", "-"]


@pytest.mark.parametrize(
    ("new", "old", "pieces"),
    [
        (lambda s: bool(code_quality.ELISION.search(s)), lambda s: bool(OLD_ELISION.search(s)), BLOCK_PIECES),
        (lambda s: bool(code_quality.TOML_STATEMENT.search(s)), lambda s: bool(OLD_TOML_STATEMENT.search(s)), BLOCK_PIECES),
        (profile_link_names, lambda s: {w.lower() for m in OLD_PROFILE_LINK.finditer(s) for w in spelling._ANY_WORD.findall(m[1])},
         LINK_PIECES),
    ],
    ids=["elided code", "TOML statements", "profile links"],
)
def test_rewritten_block_rules_decide_as_the_old_ones_did(
    new: Callable[[str], object], old: Callable[[str], object], pieces: list[str]
):
    # Code-block rules are asked only whether a block has a line of a kind (`search`), so the
    # rewritten ones must answer the same; the profile links must give the same names.
    rng = random.Random(11)
    found = 0
    for _ in range(60_000):
        sample = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        expected = old(sample)
        assert new(sample) == expected, sample
        found += bool(expected)
    assert found > 1_000  # the samples reach the rules, not only their misses


# Expressions searched over a whole code block for a line of a kind (`^\s*X`, multiline) took at a
# line's start only that line's spaces (`^[^\S\n]*+X`): `^\s*` tried a run of blank lines from the
# start of each, reading it again each time (20,000 blank lines, 2e8 steps). The old expression is
# the new one with `^\s*` back.
LINE_KIND_RULES = {
    **{name: getattr(code_quality, name) for name in (
        "SHOWN_SYNTAX_ERROR", "ANNOTATION", "VARIANT_MARK", "JSON_COMMENT", "CYTHON", "PEP_695", "_EXTERNAL_SECRET")},
    "SQL_STATEMENT": languages.SQL_STATEMENT,
    "ML_LET_IN": languages.ML_LET_IN,
    **{f"SIGNS[{tag}]": pattern for pattern, tag in languages.SIGNS if r"^[^\S\n]*+" in pattern.pattern},
}
# Lines each rule looks for, cut and padded at random with spaces, tabs, blank lines and `\r`.
LINE_SEEDS = ["# SyntaxError: invalid syntax", "↑ ここ", "# ✅ good", "// NG", "-- before", "// comment", "/* c */", '"a", // x',
              "cimport numpy", "cdef int x = 1", "from a cimport b", "def f[T](x): pass", "type X = int",
              "class A[T]: pass", "kind: ExternalSecret", "- remoteRef:", "remoteRef:", "select a from b",
              "insert into t", "create table t (", "grant all on x", "let x = 1 in", "#include <stdio.h>",
              "package main", "func main() {}", "package main\nfunc main() {}", "fn main() {", "use std::io;", "public class A {", "import x from 'y'",
              "const a = require('x')", "console.log(1)", "function f(x) {", "<?xml version", ".a {", "  color: red;",
              ".a {\n  color: red;"]
PADDING = [" ", "  ", "\t", "\n", "\n\n", " \n", "\r", "\x0c", "x", "#", "-", "//"]


def line_sample(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 6)):
        line = rng.choice(LINE_SEEDS + PADDING)
        for _ in range(rng.randint(0, 2)):
            cut = rng.randint(0, len(line))
            line = line[:cut] + rng.choice(PADDING) + line[cut:]
        parts.append(line)
    return rng.choice(["\n", "", " "]).join(parts)


def _old_form(pattern: re.Pattern[str]) -> re.Pattern[str]:
    old = pattern.pattern.replace(r"^[^\S\n]*+", r"^\s*").replace(r"(?:-\s*+)?remoteRef", r"-?\s*remoteRef")
    return re.compile(old, pattern.flags)


@pytest.mark.parametrize("name", list(LINE_KIND_RULES))
def test_a_line_of_a_kind_is_found_where_it_was(name: str):
    new = LINE_KIND_RULES[name]
    old = _old_form(new)
    assert old.pattern != new.pattern
    rng = random.Random(name)
    found = 0
    for _ in range(20_000):
        sample = line_sample(rng)
        expected = len(old.findall(sample))  # VARIANT_MARK counts its lines; the rest are searched
        assert len(new.findall(sample)) == expected, sample
        found += bool(expected)
    assert found > 100, found
    # A block of blank lines, each tried from its start: read once.
    assert not new.search("x\n" + "\n" * BIG + "x")
    assert not new.search("x\n" + " \n" * (BIG // 2) + "x")


def test_words_either_side_are_what_splitting_the_whole_text_gave():
    rng = random.Random(4)
    pieces = ["a", "bc", " ", "\t", "\n", "\u3000", "\xa0", "\u2028", "-"]
    for _ in range(30_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        index = rng.randint(0, len(text))
        assert word_before(text, index) == text[:index].split()[-1:], (text, index)
        assert word_after(text, index) == text[index:].split()[:1], (text, index)


def test_the_gap_between_words_is_judged_as_before_when_a_sentence_spans_lines():
    def old_typed_gap(sentence: Sentence, start: int, end: int) -> bool:
        joins = [index for index, _number in sentence.breaks if start < index <= end]
        return end - start <= 2 if not joins else joins[0] - start <= 3

    sentence = Sentence("to to\nto   to  \n  to", 1, 3, breaks=((6, 2), (15, 3)))
    for start in range(len(sentence.text) + 1):
        for end in range(start, len(sentence.text) + 1):
            assert sentence.typed_gap(start, end) == old_typed_gap(sentence, start, end), (start, end)


# --- 2 MB runs, each read once ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("line", "named"),
    [("x" * BIG, True), ("x'" * (BIG // 2), True), ("a-" * (BIG // 2), True),
     ("![a](data:image/png;base64," + "QUFB" * (BIG // 4) + ")", False)],
    ids=["one long word", "apostrophes", "hyphens", "data URI"],
)
def test_a_long_run_of_name_characters_is_read_once(line: str, named: bool):
    assert honorific_names(line + "さん") == ({line.lower()} if named else set())
    assert honorific_names(line) == set()
    assert self_introduced_names(line) == set()


def test_a_long_run_of_spaces_is_cut_once():
    assert list_segments("a" + " " * BIG + "b") == ["a" + " " * BIG + "b"]
    assert list_segments("a" + " " * BIG + "and b") == ["a", "b"]


def test_a_word_longer_than_any_two_words_is_no_compound():
    assert not is_known("x" * BIG)
    assert is_known("codebase") and is_known("webhook")  # compounds of two common words still are


def test_thousands_of_doubled_words_in_one_sentence_are_each_read_once():
    # One sentence of 400,000 words across as many lines, each pair a doubled word: the words on
    # either side of each pair and the line break between them are found without rereading it.
    words = BIG // 5
    sentence = Sentence("word\n" * words, 3, 2 + words, breaks=tuple((5 * i, 3 + i) for i in range(1, words)))
    article = parse_article("# Title\n\n" + "word\n" * 10)
    issues = LanguageQualityChecker(context())._english(article, [sentence])
    assert [issue.source for issue in issues] == ["rule:sentence-length"]  # a run of three is deliberate


def test_thousands_of_comment_lines_are_walked_once():
    # `# ` lines under a shell prompt are the program's comments; with none above, each is a
    # heading. Asking, for each, whether a prompt is above walks the run once, not once per line
    # (100,000 lines: reading back over all those above each took over 6 minutes).
    lines = BIG // 20
    article = parse_article("# " + "\n# ".join(["h"] * lines))
    assert len(article.headings) == lines
    prompted = parse_article("intro\n\nns-nt078:~ too$ rbenv init\n" + "# comment\n" * 10 + "\n# Real heading\n")
    assert [heading.text for heading in prompted.headings] == ["Real heading"]


@pytest.mark.parametrize(
    ("block", "elided"),
    [("print(1)\n" + "\n" * BIG + "print(2)\n", False), ("print(1)" + " " * BIG + "x\n", False),
     ("print(1)\n" + " \n" * (BIG // 2) + "x\n", False), ("print(1)\n" + "\n" * BIG + "  # ...\n", True)],
    ids=["blank lines", "spaces", "lines of a space", "blank lines, then an elision"],
)
def test_a_code_block_of_blank_lines_is_read_once(block: str, elided: bool):
    # 2,000 blank lines in a block took the old expression 73 s: each was tried, split two ways.
    assert bool(code_quality.ELISION.search(block)) is elided
    assert not code_quality.TOML_STATEMENT.search(block)


def test_a_long_dotted_key_and_a_line_of_brackets_are_read_once():
    assert not code_quality.TOML_STATEMENT.search("a." * (BIG // 2))
    assert code_quality.TOML_STATEMENT.search("a." * (BIG // 2) + "a = 1")
    assert profile_link_names("[" * BIG) == set()
    assert profile_link_names("[" * BIG + "Karam](https://twitter.com/0xkarmacoma)") == {"karam"}


def test_a_long_word_line_through_every_language_rule_gives_no_issue_and_no_error():
    article = parse_article("# Title\n\nIntro.\n\n" + "x" * (GraphConfig().max_article_bytes - 100) + "\n")
    assert LanguageQualityChecker(context()).rules(article) == []


# --- a checker stopped by the work pool ------------------------------------------------------

@pytest.mark.parametrize(("reason", "traceback"), [("timeout", False), ("memory", False), ("error", True)])
async def test_a_checker_stopped_by_a_limit_is_reported_without_a_traceback(
    reason: str, traceback: bool, caplog: pytest.LogCaptureFixture
):
    # A job stopped at the time or memory limit is a classified fault the pool already logged:
    # the report names it, the log says so in one line. A job whose rules raised is a bug: traced.
    class Stopped(LanguageQualityChecker):
        async def check(self, article: ParsedArticle) -> CheckResult:
            raise WorkFailed(reason, timeout=30)  # type: ignore[arg-type]

    checker = Stopped(context())
    with caplog.at_level(logging.WARNING, logger="agents.proofread.checkers.base"):
        result = await checker.run({"parsed_article": parse_article("# Title\n\nText.\n")})  # type: ignore[typeddict-item]
    (error,) = result["errors"]
    assert error.step == "check_language_quality"
    if reason == "timeout":
        assert "took too long to check (over 30 s)" in error.message
    (record,) = [r for r in caplog.records if "check_language_quality" in r.getMessage()]
    assert (record.exc_info is not None) is traceback
