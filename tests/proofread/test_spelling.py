"""Spelling: a misspelt English word is reported with its correction; code, identifiers, URLs,
names, technical terms and words the writer repeats are not. Japanese conjugation slips too."""

from __future__ import annotations

import pytest

from agents.proofread.checkers import CHECKER_CLASSES, CheckContext, spelling
from agents.proofread.checkers.spelling import SpellingChecker, correction, prose_words, technical_words
from agents.proofread.config import GraphConfig
from agents.proofread.llm import ProofreadLLM
from agents.proofread.parser import parse_article
from agents.proofread.schemas import Issue
from bot.llm import ModelProvider
from bot.offline import OfflineChatModel


def context() -> CheckContext:
    return CheckContext(config=GraphConfig(), llm=ProofreadLLM(ModelProvider(OfflineChatModel(), offline=True)))


def spelling_issues(text: str) -> list[Issue]:
    issues = CHECKER_CLASSES["language_quality"](context()).rules(parse_article(text))
    return [issue for issue in issues if issue.source == "rule:spelling"]


@pytest.mark.parametrize(
    ("word", "fix"),
    [("auido", "audio"), ("recieve", "receive"), ("seperate", "separate"), ("enviroment", "environment"),
     ("definately", "definitely"), ("paramter", "parameter"), ("dependecy", "dependency"), ("untill", "until")],
)
def test_common_misspellings_get_their_correction(word, fix):
    assert correction(word) == fix


@pytest.mark.parametrize(
    ("word", "fix"),
    # The likeliest word one edit away loses its first letter (would, juror, juries, sweep): a typo
    # seldom does, so the word that keeps it is suggested. A far rarer one is not (erich for ehich).
    [("sould", "should"), ("curor", "cursor"), ("quries", "queries"), ("tweep", "tweet"), ("ehich", "which"),
     ("spplication", "application")],
)
def test_a_correction_keeps_the_first_letter_unless_that_word_is_far_rarer(word, fix):
    assert correction(word) == fix


@pytest.mark.parametrize(
    "word",
    ["kubernetes", "webhook", "webhooks", "middleware", "refactored", "localhost", "codebase", "namespace",
     "timestamp", "reinstall", "colour", "analyse", "initialisation", "licence", "pooler", "decodings", "apps",
     "sensei", "kanban", "kaizen", "cafe"],
)
def test_technical_words_inflections_and_british_spellings_are_known(word):
    assert correction(word) is None


def test_a_misspelt_word_in_prose_is_a_suggestion_on_its_line():
    text = "# Audio\n\nThe player reads the auido stream from the device.\n"
    (issue,) = spelling_issues(text)
    assert (issue.line_start, issue.severity) == (3, "suggestion")
    assert "auido" in issue.problem and "audio" in issue.problem


@pytest.mark.parametrize(
    "line",
    [
        "Run `auido` to start.",  # code span
        "See https://example.com/auido for more.",  # URL
        "Open [the page](https://example.com/auido) now.",  # link target
        "Set auidoLevel and auido_level and auido.level and auido2 now.",  # identifiers
        "Pass --auido to the command.",  # a flag
        "We use Auido for playback.",  # a capitalised name mid-sentence
        "It is _bready_ rather than ready.",  # an emphasised, coined word
        "The interpreter (miri) finds it.",  # a name in parentheses
        "It tracks up-to-dateness for each query.",  # a hyphenated compound
        "Deploy it on kubernetes with a webhook.",  # the technical word list
    ],
)
def test_code_identifiers_urls_names_and_terms_are_not_checked(line):
    assert spelling_issues(f"# Notes\n\n{line}\n") == []


def test_fenced_code_is_not_checked():
    assert spelling_issues("# Notes\n\nThe script:\n\n```sh\nauido --play\n```\n") == []


def test_a_word_the_writer_uses_twice_is_taken_as_intended():
    assert spelling_issues("# Notes\n\nThe auido tool is small.\n\nInstall auido first.\n") == []


def test_words_are_extracted_only_where_they_can_be_typos():
    line = "The auido and `code` and camelCase and snake_case and Name, then words."
    assert prose_words(line) == [(4, "auido"), (60, "then"), (65, "words")]


def test_japanese_articles_get_the_spelling_message_in_japanese():
    text = "# ひらがなだけでかいたみだし\n\nこの auido の設定を変更します。\n"
    (issue,) = spelling_issues(text)
    assert "綴り" in issue.problem and "audio" in issue.problem


def test_the_checker_reports_japanese_conjugation_slips_on_its_own():
    text = "# ひらがなだけでかいたみだし\n\nこのファイルは自由に配布ることができます。\n"
    issues = SpellingChecker(context()).rules(parse_article(text))
    assert [(i.source, i.line_start, i.severity) for i in issues] == [("rule:ja-conjugation", 3, "suggestion")]


def test_many_unknown_words_mean_the_text_is_not_english():
    words = " ".join(["auido", "recieve", "seperate", "enviroment", "definately", "paramter", "dependecy",
                      "fucntion", "retrun", "lenght", "wierd", "thier", "begining", "occured", "accomodate",
                      "untill", "adress", "commited", "existance", "goverment", "neccessary", "acheive", "calender"])
    assert len(words.split()) > spelling.MAX_FINDINGS
    assert spelling_issues(f"# Notes\n\nThese are {words}.\n") == []


def test_the_word_list_and_dictionary_load_once():
    assert {"kubernetes", "webhook"} <= technical_words()
    assert spelling.speller() is spelling.speller()


def test_a_letter_before_a_word_is_a_tool_name_unless_another_word_is_as_likely():
    for name in ("strace", "gcloud", "xaxis", "ebuilds", "pprof"):
        assert correction(name) is None, name
    assert correction("adress") == "address"  # not “dress”


def test_short_unknown_words_are_abbreviations_unless_they_slip_on_a_common_word():
    for short in ("util", "iter", "noop", "uids", "dbus"):
        assert correction(short) is None, short
    assert (correction("wirh"), correction("onyl")) == ("with", "only")


def test_regular_forms_of_common_words_are_words_and_doubling_slips_are_not():
    for word in ("googled", "triaged", "pleaser", "stemmer"):
        assert correction(word) is None, word
    assert (correction("occured"), correction("heighted")) == ("occurred", "heighten")


def test_a_word_its_link_address_spells_is_a_name():
    text = "# Notes\n\nAsk us on [zulip](https://rust-lang.zulipchat.com/#narrow) or read [the artcle](https://example.com/post).\n"
    assert [issue.problem for issue in spelling_issues(text)] == [
        "Possible misspelling: “artcle” (did you mean “article”?)."
    ]


def test_lower_case_handles_in_a_list_of_names_are_names():
    text = "# Contributors\n\nThanks to:\n\n- Alex Crichton\n- ggomez\n- Brian Anderson\n- mcarton\n\nWe fixed the enviroment.\n"
    assert [issue.line_start for issue in spelling_issues(text)] == [10]
