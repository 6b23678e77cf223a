"""spelling: English misspellings (pyspellchecker's dictionary plus a technical word list) and
Japanese conjugation slips (Sudachi tokens). Suggestions only: a word the dictionary does not know
is more often a name than a typo, so each rule reports only what it can back with a correction.

pyspellchecker was chosen over symspellpy (same corrections on common typos, but a 3 s dictionary
load and ~150 MB per process against 0.2 s and ~50 MB, which matters in every work-pool worker)
and pyenchant (needs the system's Enchant library and Hunspell dictionaries)."""

from __future__ import annotations

import re
import threading
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from agents.proofread.checkers.base import BaseChecker
from agents.proofread.japanese import (
    DEMONSTRATIVE_ADNOMINALS,
    Token,
    conjugation_errors,
    object_before_subject,
    object_marked_by_no,
    pronoun_before_you,
    ru_converted_to_kanji,
    stem_before_noun_errors,
    stuttered_masu,
    tokenize,
    zurai_misspellings,
)
from agents.proofread.schemas import Issue, ParsedArticle
from agents.proofread.text import (
    LIST_MARKER,
    Sentence,
    list_items,
    list_segments,
    mask_for_prose,
    mask_struck,
    split_sentences,
)

WORD_LIST = Path(__file__).resolve().parent.parent / "data" / "technical-words.txt"
# Runs of characters that are neither white space nor Japanese: the candidates for English words.
_CHUNK = re.compile(r"[^\s\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")
_LEADING = "\"'([{*_~“‘<«"
_TRAILING = ".,;:!?\"')]}*_~”’>»…"
_PLAIN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_ANY_WORD = re.compile(r"[A-Za-z]+")
# Link targets and bare addresses of a line: a word they contain is a name the address spells.
_TARGET = re.compile(r"\]\([^)\s]+|(?:https?|ftp)://[^\s)>\]]+|^\s*\[[^\]]+\]:\s*\S+")
_SHORTCODE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")
# [sic] / (sic): the writer marks a quoted misspelling as the original's.
_SIC = re.compile(r"[\[(]\s*sic\s*!?\s*[\])]", re.IGNORECASE)
# Lines of these kinds hold running text; tables, code and HTML hold identifiers.
_PROSE_KINDS = ("text", "list", "quote", "heading")
MIN_LENGTH = 4
# A correction must be a word at least this frequent in the dictionary's corpus: rare words as
# corrections mostly turn a technical term into a different rare word.
MIN_CORRECTION_FREQUENCY = 100
# A correction other than the word without its first letter, when that one is a candidate too.
PREFIXED_RIVAL_FREQUENCY = 10_000
# How much rarer than the likeliest correction one that keeps the first letter may be and still be
# suggested instead (cursor is 17 times rarer than juror; supplication 84 times rarer than application).
FIRST_LETTER_RIVAL_RATIO = 25
# A word of four letters is reported only as a slip of one of the most common words (wirh → with,
# onyl → only): other short unknown words were abbreviations and names (util, iter, noop, dbus).
SHORT_WORD = 4
# A word ending in e this common takes -d, -r and -ing regularly (templated, compositing).
E_STEM_FREQUENCY = 500
SHORT_CORRECTION_FREQUENCY = 1_000_000
# A four-letter word this common takes re- (rerank, rewire).
RE_STEM_FREQUENCY = 10_000
# More findings than this in one article, or more words the dictionary does not know: the text is
# probably not English prose, and looking up corrections for all of them would only cost time.
MAX_FINDINGS = 20
MAX_UNKNOWN = 200
# A line with at least this many words to check, half of them in no dictionary, is another
# language (checked on every English line of the labelled articles: none of them is that unknown).
FOREIGN_MIN_WORDS = 6
_PREFIXES = ("un", "re", "pre", "non", "sub", "multi", "auto", "de", "co", "inter", "micro", "over",
             "under", "out", "self", "cross", "hyper", "meta", "mis", "post")
# Words that only occur after another (mostly Latin phrases English borrowed): tail → head.
PHRASE_TAILS = {"versa": "vice", "se": "per", "hoc": "ad", "facto": "de", "al": "et", "fide": "bona",
                "priori": "a", "posteriori": "a", "vitae": "curriculum", "qua": "sine", "quo": "status"}
_SUFFIXES = (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("d", ""), ("ing", ""), ("ing", "e"),
             ("er", ""), ("er", "e"), ("ers", ""), ("ly", ""), ("able", ""), ("ation", "e"), ("ness", ""))
# British spellings the (American) dictionary lacks: colour, analyse, initialise, licence, centre, programme.
_BRITISH = (("our", "or"), ("ours", "ors"), ("ise", "ize"), ("ised", "ized"), ("ises", "izes"),
            ("ising", "izing"), ("iser", "izer"), ("isers", "izers"), ("isation", "ization"),
            ("isations", "izations"), ("yse", "yze"), ("ysed", "yzed"), ("ysing", "yzing"), ("tre", "ter"),
            ("tres", "ters"), ("ogue", "og"), ("lled", "led"), ("lling", "ling"), ("ence", "ense"),
            ("ourite", "orite"), ("amme", "am"), ("ammes", "ams"))

_BRITISH_OUR = re.compile(r"our(?=(?:able|ably|al|ally|ed|er|ers|ful|fully|hood|hoods|ing|ist|ists|less|ite|ites|ism|ous)$)")

_speller: Any = None
_speller_lock = threading.Lock()


def speller() -> Any:
    """pyspellchecker's English dictionary, loaded on first use and once per process."""
    global _speller
    if _speller is None:
        with _speller_lock:
            if _speller is None:
                from spellchecker import SpellChecker

                _speller = SpellChecker(language="en", distance=1)
    return _speller


@lru_cache(maxsize=1)
def technical_words() -> frozenset[str]:
    lines = WORD_LIST.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines if line.strip() and not line.startswith("#"))


def _in_dictionary(word: str) -> bool:
    return word in technical_words() or word in speller()


def _frequent(word: str, minimum: int = 1000) -> bool:
    return word in technical_words() or speller().word_frequency[word] >= minimum


def is_known(word: str) -> bool:
    """Whether `word` (lower case) is a word: in the dictionary or the technical list, an
    inflection or British spelling of one, a prefixed word (reinstall) or a compound of two
    common words (codebase, webhook)."""
    if _in_dictionary(word):
        return True
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)] + replacement
            if stem in technical_words() or (len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in technical_words()):
                return True
            if (suffix in ("er", "ers", "able") and _frequent(stem)) or (suffix in ("s", "es") and _frequent(stem, 100)):
                return True  # pooler, bundlers, mergeable, decodings, attaches
            if suffix == "s" and _compound(stem):
                return True  # wakeups, lookups
            if suffix in ("ed", "d", "er") and _inflectable(stem):
                return True  # a common word made a verb or a noun: googled, modded, stemmer
            if (suffix, replacement) == ("ing", "e") and len(stem) >= 4 and _frequent(stem, E_STEM_FREQUENCY):
                return True  # compositing, templating: -ing after the e of a common word
            ends_in_consonants = not any(c in "aeiouy" for c in stem[-2:])  # chunk-ing; not begin-ing
            if len(stem) >= 4 and _frequent(stem) and (suffix == "ness" or (suffix == "ing" and ends_in_consonants)):
                return True  # a common word made a verb or a noun: chunking, liveness
    for british, american in _BRITISH:
        if word.endswith(british) and word[: -len(british)] + american in speller():
            return True
    # -isation- inside a longer word: organisational (organizational).
    if "isation" in word and is_known_simple(word.replace("isation", "ization")):
        return True
    # -our- before a suffix: behavioural, favourable, colourful, neighbourhood (not fourty).
    for match in _BRITISH_OUR.finditer(word):
        if match.start() >= 2 and word[: match.start()] + "or" + word[match.start() + 3 :] in speller():
            return True
    if word.startswith("re") and len(word) == 6 and _frequent(word[2:], RE_STEM_FREQUENCY):
        return True  # rerank, rewire: re- on a short, very common word (de+sing stays “design”)
    for prefix in _PREFIXES:
        rest = word[len(prefix):]
        if not word.startswith(prefix):
            continue
        if (len(rest) >= 5 and is_known_simple(rest)) or (len(rest) >= 4 and rest in technical_words()):
            return True  # reinstall; ungzip: a verb made from a tool's name
    if word.endswith("z") and len(word) >= 5 and _frequent(word[:-1] + "s", 10_000):
        return True  # skillz, filez: a plural spelt with z on purpose
    if word.endswith("y") and len(word) >= 5 and (_frequent(word[:-1]) or (word[-2] == word[-3] and _frequent(word[:-2]))):
        return True  # an informal adjective from a common word: truthy, hacky, laggy
    return _compound(word)


def _inflectable(stem: str) -> bool:
    """Whether `stem` + -d/-ed/-r/-er is a regular form of a common word the dictionary lacks: the
    stem ends in e (google-d, triage-d, please-r) or doubles its last consonant (mod-ded, stem-mer).
    Other stems are left out: occur-ed and commit-ed misspell words that double it, and a noun
    made a verb (height-ed) is more often a slip than a coinage."""
    if len(stem) < 3:
        return False
    if stem[-1] == stem[-2] and stem[-1] not in "aeiouy":
        return _frequent(stem[:-1])
    return stem[-1] == "e" and _frequent(stem, E_STEM_FREQUENCY)


# Two-letter adverbs that join a common word into one (wakeup, signin, onboard, bylaw).
_JOINING_PARTICLES = {"up", "in", "on", "by"}


@lru_cache(maxsize=1)
def _longest_word() -> int:
    """The length of the longest word in the dictionary or the technical list: no longer word is
    `_frequent`."""
    return max(speller().word_frequency.longest_word_length, max(map(len, technical_words()), default=0))


def _compound(word: str) -> bool:
    """Two common words written as one: codebase, webhook (a part of three letters or more, the
    second of four or more), or a common word and a joining particle: wakeup, onboard."""
    if len(word) > 2 * _longest_word():
        return False  # one part would be longer than any word (a run of base64, say): not a compound
    for cut in range(2, len(word) - 1):
        head, tail = word[:cut], word[cut:]
        plain = len(head) >= 3 and len(tail) >= 4
        joined = (head in _JOINING_PARTICLES and len(tail) >= 4) or (tail in _JOINING_PARTICLES and len(head) >= 4)
        if (plain or joined) and _frequent(head) and _frequent(tail):
            return True
    return False


def is_known_simple(word: str) -> bool:
    return _in_dictionary(word) or any(
        word.endswith(suffix) and word[: -len(suffix)] + replacement in technical_words()
        for suffix, replacement in _SUFFIXES
    )


def correction(word: str) -> str | None:
    """The likely intended word for an unknown lower-case `word`, or None when it is a word or no
    common word is one edit away (then it is more likely a name or a term than a typo)."""
    if is_known(word):
        return None
    frequency = speller().word_frequency
    candidates = list(speller().candidates(word) or ())
    best = max(candidates, key=lambda candidate: frequency[candidate], default=None)
    if best is not None and best == word[1:]:
        # A letter before a word is a tool or a convention (strace, gcloud, xaxis) more often than
        # a slip, unless another common word is nearly as likely (adress → address, not dress).
        floor = max(PREFIXED_RIVAL_FREQUENCY, frequency[best] // 2)
        best = max((c for c in candidates if c != best and frequency[c] >= floor), key=lambda c: frequency[c], default=None)
    if best is None or best == word or frequency[best] < MIN_CORRECTION_FREQUENCY:
        return None
    if len(word) <= SHORT_WORD and frequency[best] < SHORT_CORRECTION_FREQUENCY:
        return None  # a short unknown word is mostly an abbreviation (util, iter, noop); not a typo of `the`
    # A typo seldom changes a word's first letter: a likely word that keeps it is the better guess
    # unless it is far rarer (sould → should, not would; curor → cursor, not juror; ehich → which).
    keeps = [c for c in candidates if c[:1] == word[:1] and frequency[c] * FIRST_LETTER_RIVAL_RATIO >= frequency[best]]
    return str(max(keeps, key=lambda candidate: frequency[candidate], default=best))


def prose_words(line: str) -> list[tuple[int, str]]:
    """(column, word) for the lower-case English words of a prose line worth checking. Left out:
    code spans, URLs, link targets, HTML tags, shortcodes; anything with a digit, underscore,
    dot, slash, hyphen or other symbol inside (identifiers, file names, dotted.names, --flags,
    up-to-dateness); words with a capital letter (names, products, acronyms, camelCase); words in
    emphasis, alone in parentheses, alone in straight quotes or alone in 「」; words shorter than four letters.
    Cached: the language test and the spell check read the same lines."""
    return list(_prose_words(line))


@lru_cache(maxsize=4096)
def _prose_words(line: str) -> tuple[tuple[int, str], ...]:
    masked = _SHORTCODE.sub(lambda m: " " * len(m.group(0)), mask_for_prose(line))
    words: list[tuple[int, str]] = []
    for chunk in _CHUNK.finditer(masked):
        text = chunk.group(0).replace("’", "'")
        core = text.lstrip(_LEADING)
        column = chunk.start() + len(text) - len(core)
        core = core.rstrip(_TRAILING)
        opened, closed = text[: len(text) - len(text.lstrip(_LEADING))], text[len(text.rstrip(_TRAILING)) :]
        if any(mark in opened + closed for mark in "*_(") and any(mark in closed for mark in "*_)"):
            continue  # _coined_, *emphasised*, (toolname): deliberate words, not typing slips
        if '"' in opened and '"' in closed:
            continue  # "guideb": one word in straight quotes is a string mentioned (an n-gram, a value)
        if masked[chunk.start() - 1 : chunk.start()] + masked[chunk.end() : chunk.end() + 1] in ("「」", "『』"):
            continue  # ハンドメイドマーケット「minne」: a name set alone in Japanese quotation brackets
        if core.endswith("'s"):
            core = core[:-2]
        if len(core) >= MIN_LENGTH and _PLAIN_WORD.fullmatch(core) and "'" not in core:
            words.append((column, core))
    return tuple(words)


# A list item that opens with a term and a dash or a colon (`* shlab -- processes, signal handling`).
_LIST_MARKER = re.compile(rf"\s*{LIST_MARKER}\s+")
_TERM_DASH = re.compile(r"\s+(?:--|—|–|-|:)\s|:\s")
# A French preposition English does not have: what follows is French (pain au chocolat, à la carte).
_FRENCH_BEFORE = re.compile(r"(?:^|[\s(])(?:au|aux|à)\s+$", re.I)
# A package with its version in parentheses after it, as bundler and `gem list` print them
# (`Installing minitar (0.5.4)`). A bare version is not enough: “Pyhton 3.12” is a typo all the same.
_VERSION_AFTER = re.compile(r" ?\(v?\d+(?:\.\d+)+\)")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]+")
_ACCENTED = re.compile(r"[\u00c0-\u024f\u1e00-\u1eff]")


def _other_latin_language(line: str) -> bool:
    """A line in another language written in Latin letters (Vietnamese, French, German, Spanish,
    Finnish, Bosnian): a fifth or more of its words carry letters English does not use; three or
    more function words of German or of French (`Ein IoT-Projekt auf dem Weg vom Schreibtisch`,
    `Il semble qu'APT-509 utilise … cette application`); or half or more of
    the words the spell check would read are in no English dictionary — six words at least, or
    three when the line has a letter English does not use (`ako želimo … manji od 50`). A summary
    translated for readers abroad, a title quoted in its language: its words are no English typos."""
    words = _LATIN_WORD.findall(line)
    if len(words) >= 4 and sum(1 for word in words if _ACCENTED.search(word)) * 5 >= len(words):
        return True
    lowered = [word.lower() for word in words]
    if any(sum(1 for word in lowered if word in function_words) >= 3 for function_words in _FUNCTION_WORDS):
        return True
    checked = [word for _column, word in _prose_words(line)]
    enough = FOREIGN_MIN_WORDS if not _ACCENTED.search(line) else 3
    return len(checked) >= enough and sum(1 for w in checked if not _in_dictionary(w)) * 2 >= len(checked)


# German words that English text does not use (not "die", "den", "man", "also", "will").
_GERMAN_FUNCTION_WORDS = frozenset({
    "und", "der", "dem", "des", "ein", "eine", "einen", "einem", "einer", "auf", "vom", "mit", "für", "von",
    "zum", "zur", "ist", "nicht", "sich", "auch", "oder", "bei", "aus", "nach", "über", "wir", "ich", "wird",
})
# French words that English text does not use (not "de", "la", "le", "pour", "est", "on").
_FRENCH_FUNCTION_WORDS = frozenset({
    "il", "elle", "ils", "elles", "nous", "vous", "qu", "une", "les", "du", "cette", "cet", "ces", "ses",
    "leur", "leurs", "avec", "dans", "sont", "mais", "aussi", "sur", "pas", "très", "être", "été",
})
_FUNCTION_WORDS = (_GERMAN_FUNCTION_WORDS, _FRENCH_FUNCTION_WORDS)
# Link targets that are a person's page: the link's text is their name or handle.
_PROFILE_TARGET = re.compile(
    r"\]\((?:https?://)?(?:www\.)?(?:twitter\.com|x\.com|github\.com|gitlab\.com|instagram\.com|"
    r"bsky\.app/profile|linkedin\.com/in|mastodon\.\w+|zenn\.dev|qiita\.com)/@?[\w.-]+/?\)"
)


# A Latin word right before a Japanese honorific (「tricken さん」「Smith氏」) names a person: a handle.
# Tried only where a run of name characters begins, and without backtracking into it: the same
# matches as `([A-Za-z][A-Za-z'’-]*)\s*(?:さん|…)`, which retried a long run from each of its
# letters (a data: URI of 20 KB took seconds; 100 KB, past the work pool's limit).
_HONORIFIC_NAME = re.compile(r"(?<![A-Za-z'’-])['’-]*+([A-Za-z][A-Za-z'’-]*+)\s*+(?:さん|さま|様|氏|くん|君|ちゃん|先生)")


def honorific_names(line: str) -> set[str]:
    """The words a Japanese honorific follows (`tricken さんの意見`): someone's name or handle."""
    return {match.group(1).lower() for match in _HONORIFIC_NAME.finditer(line)}


# The writer naming themself: 「こんにちは、hatsu です。」「kobo と申します」 (a greeting, then the name
# and です; or the name before 申します/いいます, which only a name takes).
_SELF_INTRODUCTION = re.compile(
    r"(?:(?:こんにちは|こんばんは|おはようございます|はじめまして|初めまして)[、,，！!]?\s*(?:[^\s。、]{1,30}の\s*)?"
    r"([A-Za-z][A-Za-z0-9'’._-]*)\s*です"
    # As _HONORIFIC_NAME: from where a run of name characters begins, never backtracking into it.
    r"|(?<![A-Za-z0-9'’._-])[0-9'’._-]*+([A-Za-z][A-Za-z0-9'’._-]*+)\s*+と(?:申します|申す|いいます|言います))"
)


def self_introduced_names(line: str) -> set[str]:
    """The name a writer introduces themself by (`こんにちは、hatsu です`): a handle, not a word."""
    return {(match.group(1) or match.group(2)).lower() for match in _SELF_INTRODUCTION.finditer(line)}


def profile_link_names(line: str) -> set[str]:
    """The words of the text of links to a person's profile (`[karam](https://twitter.com/0xkarmacoma)`):
    a name or a handle, which no dictionary holds.

    Read from each `]`: a link's text runs from the first `[` after the last `]` (or after the last
    link) to it. These are the links an expression tried from every `[` found, reading on to the next
    `]` each time, so a line of `[`s was read once per `[` (50 KB took 9 s)."""
    names: set[str] = set()
    start = 0
    while (close := line.find("]", start)) != -1:
        opening = line.find("[", start, close)
        target = _PROFILE_TARGET.match(line, close) if -1 < opening < close - 1 else None
        if target is None:
            start = close + 1
            continue
        names.update(word.lower() for word in _ANY_WORD.findall(line[opening + 1 : close]))
        start = target.end()
    return names


# An article is in another language when at least this many of its lines can be told apart and
# half of those are (an Indonesian or German post on an English-tooled blog).
FOREIGN_MIN_LINES = 3
# Or when two in five of its checked words (thirty at least) are in no dictionary: on the labelled
# English articles the share is at most 7 %; posts in Romanian without diacritics or in Bosnian, 71–95 %.
FOREIGN_MIN_ARTICLE_WORDS = 30


def in_other_latin_language(article: ParsedArticle) -> bool:
    """Whether the article's running text is mostly another language written in Latin letters:
    of its prose lines with enough words to tell (FOREIGN_MIN_WORDS checked words, or accents),
    half or more read as another language; or two in five of all its checked words are no English
    words. Its English rules (spelling, doubled words, sentence length) do not apply. The writer's
    own lines decide: quotations (Apple's documentation quoted in a French post) are someone else's."""
    own = [(number, line) for number, line in article.prose_lines() if article.kind(number) != "quote"]
    checked = [word for _number, line in own for _column, word in _prose_words(line)]
    known = {word: is_known(word) for word in set(checked)}
    if len(checked) >= FOREIGN_MIN_ARTICLE_WORDS and sum(1 for w in checked if not known[w]) * 5 >= 2 * len(checked):
        return True  # Romanian written without its diacritics: two words in five in no English dictionary
    told = foreign = 0
    for _number, line in own:
        if len(_prose_words(line)) < FOREIGN_MIN_WORDS and not _ACCENTED.search(line):
            continue
        told += 1
        foreign += _other_latin_language(line)
    return told >= FOREIGN_MIN_LINES and foreign * 2 >= told


def listed_names(text: str) -> set[str]:
    """The one-word items of a list of names in a paragraph (`…, Kevin Plattret, krissy, Kyle
    Barbour, …`: most items capitalised, or a quarter of a list of ten or more): a lower-case one
    there is someone's handle."""
    names: set[str] = set()
    segments = list_segments(text)
    for first, count, _words in list_items(text):
        items = segments[first : first + count]
        capitalised = sum(1 for item in items if item[:1].isupper())
        # Most items capitalised; or a long list (a release's thanks to its reporters) where full
        # names mix with lower-case handles.
        if capitalised * 3 >= 2 * len(items) or (len(items) >= 10 and capitalised * 4 >= len(items)):
            names.update(item.lower() for item in items if " " not in item)
    return names


def _paragraph_names(article: ParsedArticle) -> dict[int, set[str]]:
    """listed_names of each paragraph of running text, by line: a list wraps over lines."""
    by_line: dict[int, set[str]] = {}
    paragraph: list[tuple[int, str]] = []
    for number, line in [*article.prose_lines(), (0, "")]:
        if paragraph and (not line.strip() or number != paragraph[-1][0] + 1):
            names = listed_names(" ".join(text for _n, text in paragraph))
            by_line.update((n, names) for n, _text in paragraph)
            paragraph = []
        if line.strip():
            paragraph.append((number, line))
    return by_line


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_ONE_WORD_ITEM = re.compile(r"^[\w@.'’-]+$")
_NAME_ITEM = re.compile(r"^[\w@.'’-]+(?: [\w@.'’-]+){0,2}$")


def _one_word_lists(article: ParsedArticle) -> set[int]:
    """The lines of every Markdown list of three or more items that are one word each (`- reem`,
    `- TyOverby`, `- eddyb`), or names of up to three words, two in three of them capitalised
    (`- Alex Crichton`, `- ggomez`): a list of names, handles or terms, not prose."""
    lines: set[int] = set()
    run: list[tuple[int, str]] = []
    for number in [*range(1, len(article.lines) + 1), 0]:
        item = _LIST_ITEM.match(article.lines[number - 1]) if number and article.kind(number) == "list" else None
        text = item.group(1).strip().strip("*_`") if item else ""
        if item and _NAME_ITEM.match(text):
            run.append((number, text))
            continue
        one_word = all(_ONE_WORD_ITEM.match(text) for _n, text in run)
        capitalised = sum(1 for _n, text in run if text[:1].isupper())
        if len(run) >= 3 and (one_word or 3 * capitalised >= 2 * len(run)):
            lines.update(n for n, _text in run)
        run = []
    return lines


_TITLE_CASED = re.compile(r"\b[A-Z][a-z]{3,}\b")


def _front_matter_title(article: ParsedArticle) -> list[tuple[int, str]]:
    """The front matter's title on its line, read as prose: the first words a reader sees, and the
    ones a typo shows most in (`title: The state pattern pracitices …`)."""
    front = article.front_matter
    title = front.data.get("title") if front is not None else None
    line = front.line_of("title") if front is not None else None
    if not isinstance(title, str) or line is None or "\n" in title:
        return []
    # Title Case capitalises ordinary words (“IAM Identiry Center”); read as written in a sentence.
    # A name the title shares with the body is repeated there, and a repeated word is no slip.
    return [(line, _TITLE_CASED.sub(lambda m: m.group().lower(), title))]


def _sic_paragraphs(article: ParsedArticle) -> set[int]:
    """The lines of every paragraph (or quote) that holds a [sic]: its misspellings are quoted as
    written on purpose."""
    lines: set[int] = set()
    for number, line in enumerate(article.lines, start=1):
        if number in lines or not _SIC.search(line):
            continue
        kind = article.kind(number)
        first = number
        while first > 1 and article.kind(first - 1) == kind and article.lines[first - 2].strip(" >"):
            first -= 1
        last = number
        while last < len(article.lines) and article.kind(last + 1) == kind and article.lines[last].strip(" >"):
            last += 1
        lines.update(range(first, last + 1))
    return lines


# Loanwords commonly misspelt in Japanese technical writing, each with its form from the source word
# (simulation, communication, community, maintenance, desktop, feedback, backend); a match may run on
# (シュミレーター). Over the mirror コミニティ and メンテナス stand on 3 lines, each a slip.
_MISSPELT = (("シュミレ", "シミュレ"), ("コミニュケ", "コミュニケ"), ("コミニティ", "コミュニティ"),
             ("コミニュティ", "コミュニティ"), ("メンテナス", "メンテナンス"), ("ディスクトップ", "デスクトップ"),
             ("フィードバッグ", "フィードバック"), ("バッグエンド", "バックエンド"), ("バッグアップ", "バックアップ"))
KATAKANA_MISSPELLINGS = re.compile("(?:" + "|".join(wrong for wrong, _fix in _MISSPELT) + r")[\u30a0-\u30ffー]*")


# Words converted to the wrong kanji of the same reading, where what precedes settles the meaning: a
# response, a result or a value 返ってくる (comes back), people 帰ってくる (come home); a return value is
# 返り値. Over the mirror 「レスポンス/結果/応答/答えが帰って」 stand on 20 lines of 14 writers and 帰り値 on one,
# each a slip (「…が返って」: 232 lines).
_RETURNED = r"レスポンス|応答|結果|値|答え|返事|返答|レス|データ|エラー|メッセージ|アドレス|出力|ステータス|JSON|json"
MISCONVERSIONS = (
    (re.compile(rf"(?:{_RETURNED})[がはも](帰って)"), "返って"),
    (re.compile(r"(帰り値)"), "返り値"),
)


class SpellingChecker(BaseChecker):
    """Runs inside the language checker's job (the same sentences and tokens); its issues belong
    to the language_quality category under their own rule ids."""

    category = "language_quality"
    status_text = "Checking spelling…"
    status_text_ja = "スペルを確認しています…"

    @property
    def step(self) -> str:
        return "check_spelling"

    def rules(self, article: ParsedArticle) -> list[Issue]:
        if article.language != "ja" and in_other_latin_language(article):
            return []
        issues = self.english(article)
        if article.language == "ja":
            lines = [(n, mask_struck(mask_for_prose(line))) for n, line in article.prose_lines() if article.kind(n) in _PROSE_KINDS]
            for sentence in split_sentences(lines, japanese=True):
                issues += self.japanese(article, sentence, tokenize(sentence.text))
        return issues

    def english(self, article: ParsedArticle) -> list[Issue]:
        """rule:spelling — an English word one edit away from a common word, used once. The caller
        leaves out articles in another language (in_other_latin_language)."""
        counts = Counter(word.lower() for word in _ANY_WORD.findall(article.raw))
        japanese = article.language == "ja"
        unknown: list[tuple[int, str]] = []
        seen: set[str] = set()
        quoted = _sic_paragraphs(article) | _one_word_lists(article)
        listed = _paragraph_names(article)
        previous = (0, "")  # the prose line read before, for a phrase that wraps: `pain au` / `chocolat`
        title = _front_matter_title(article)
        for number, line in [*title, *article.prose_lines()]:
            above = previous[1] if previous[0] == number - 1 else ""
            previous = (number, line)
            if (number, line) not in title and article.kind(number) not in _PROSE_KINDS:
                continue
            if number in quoted or _other_latin_language(line):
                continue
            names = (
                listed.get(number, set()) | profile_link_names(line) | honorific_names(line)
                | self_introduced_names(line)
            )
            targets = " ".join(match.group() for match in _TARGET.finditer(line)).lower()
            for column, word in _prose_words(mask_struck(line)):
                if word in seen or counts[word] >= 2 or word in names:
                    continue
                if word in targets:
                    continue  # the link's own address names it: [zulip](https://rust-lang.zulipchat.com)
                if word in PHRASE_TAILS and line[:column].rstrip().lower().endswith(PHRASE_TAILS[word]):
                    continue  # the second word of a fixed phrase: vice versa, per se, ad hoc
                if _LIST_MARKER.fullmatch(line[:column]) and _TERM_DASH.match(line, column + len(word)):
                    continue  # `* shlab -- processes, signals`: the term a list item defines, a name the writer gives
                lead = line[:column] if line[:column].strip() else f"{above} "
                if _FRENCH_BEFORE.search(lead):
                    continue  # pain au chocolat, café au lait, à la carte: French after au/aux/à, no English typo
                if _VERSION_AFTER.match(line, column + len(word)):
                    continue  # `Installing systemu (2.5.2)`: a package and its version
                seen.add(word)
                if not is_known(word):
                    unknown.append((number, word))
                    if len(unknown) > MAX_UNKNOWN:
                        return []
        issues: list[Issue] = []
        for number, word in unknown:
            fix = correction(word)
            if fix is None:
                continue
            if japanese:
                problem = f"綴りの誤りかもしれません: “{word}”（“{fix}” では？）"
                suggestion = f"“{fix}” と書くつもりなら直してください。固有名詞や用語ならこのままで構いません。"
                reason = "英単語の打ち間違いは検索にも引っかからず、読み手を迷わせます。"
            else:
                problem = f"Possible misspelling: “{word}” (did you mean “{fix}”?)."
                suggestion = f"Write “{fix}” if that is the word meant; leave it if it is a name or a term."
                reason = "A misspelt word distracts the reader and cannot be found by search."
            issues.append(self.issue(article, "suggestion", number, problem, suggestion, reason, "rule:spelling"))
            if len(issues) > MAX_FINDINGS:
                return []
        return issues

    def loanwords(self, article: ParsedArticle, sentence: Sentence) -> list[Issue]:
        """rule:ja-misspelling in a sentence (or a heading's text as one), the first one only."""
        for match in KATAKANA_MISSPELLINGS.finditer(sentence.text):
            written = match.group()
            intended = next(fix + written[len(wrong) :] for wrong, fix in _MISSPELT if written.startswith(wrong))
            return [self._misspelling(article, sentence.line_at(match.start()), written, intended,
                                      "原語の綴り（simulation, communication…）に沿った表記が、検索でも見つかる正しい形です。")]
        return []

    def misconversions(self, article: ParsedArticle, sentence: Sentence) -> list[Issue]:
        """rule:ja-misspelling — a word converted to the wrong kanji (レスポンスが帰ってくる), the first one only."""
        for pattern, intended in MISCONVERSIONS:
            if match := pattern.search(sentence.text):
                return [self._misspelling(
                    article, sentence.line_at(match.start(1)), match.group(1), intended,
                    "戻ってくるもの（レスポンス・結果・値）には「返る」を使います。「帰る」は人が元の場所に戻ることです。",
                )]
        return []

    def zurai(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        """rule:ja-misspelling — 〜づらい written 〜ずらい (見ずらい), the first one only."""
        for first, last, intended in zurai_misspellings(tokens):
            return [self._misspelling(
                article, sentence.line_at(first.begin), sentence.text[first.begin : last.end], intended,
                "「〜しにくい」の意味の「づらい」は「辛い（つらい）」が濁ったもので、「ず」ではなく「づ」と書きます。",
            )]
        return []

    def _misspelling(self, article: ParsedArticle, line: int, written: str, intended: str, why: str) -> Issue:
        return self.issue(article, "suggestion", line, f"よくある表記の誤りです: 「{written}」（「{intended}」）",
                          f"「{intended}」と書いてください。", why, "rule:ja-misspelling")

    def japanese(self, article: ParsedArticle, sentence: Sentence, tokens: list[Token]) -> list[Issue]:
        """rule:ja-conjugation — the first slip of `conjugation_slip` in the sentence.
        rule:ja-misspelling — a loanword misspelt the way writers commonly do (シュミレーション for
        シミュレーション), from a short list in the manner of the prh dictionaries textlint users keep,
        or a kanji of the same reading (レスポンスが帰って), or 〜づらい written 〜ずらい (見ずらい)."""
        issues = (self.loanwords(article, sentence) or self.misconversions(article, sentence)
                  or self.zurai(article, sentence, tokens))
        if (slip := conjugation_slip(sentence, tokens)) is not None:
            begin, problem, suggestion, why = slip
            issues.append(self.issue(
                article, "suggestion", sentence.line_at(begin), problem, suggestion, why, "rule:ja-conjugation",
            ))
        return issues


def conjugation_slip(sentence: Sentence, tokens: list[Token]) -> tuple[int, str, str, str] | None:
    """(where, problem, suggestion, why) of the sentence's first conjugation slip, looked for in this
    order: a サ変 noun followed directly by a verb ending it cannot carry (配布ることができます); a verb's
    連用形 running into ところ/こと (ありところ); a verb's る converted to 流 (相談され流); a pronoun
    before よう (これように); a syllable of 〜ました typed twice (用意しまました); a サ変 noun after the の
    of a noun phrase ending the sentence as its verb (ロードマップの作成しました)."""
    if slips := conjugation_errors(tokens):
        noun, ending, intended = slips[0]
        return _slip(sentence, noun, ending, "活用", intended, f"「{intended}」のように「する」を補ってください。",
                     "名詞の直後に動詞の活用語尾が続くのは、「する」「して」の打ち漏らしであることがほとんどです。")
    if stems := stem_before_noun_errors(tokens):
        verb, noun, intended = stems[0]
        return _slip(sentence, verb, noun, "活用", intended, f"「{intended}」のように連体形にしてください。",
                     f"動詞の連用形に「{noun.surface}」が直接続くことはなく、連体形の打ち間違いであることがほとんどです。")
    if converted := ru_converted_to_kanji(tokens):
        stem, suffix, intended = converted[0]
        return _slip(sentence, stem, suffix, "変換", intended, f"「流」を「る」に直して「{intended}」としてください。",
                     "「流」は「る」と読めるため、動詞の「る」が漢字に変換されたままになることがあります。")
    if pronouns := pronoun_before_you(tokens):
        pronoun, last, intended = pronouns[0]
        adnominal = DEMONSTRATIVE_ADNOMINALS[pronoun.surface]
        return _slip(sentence, pronoun, last, "指示語", intended,
                     f"「{pronoun.surface}」を「{adnominal}」に直して「{intended}」としてください。",
                     "「よう」を修飾するのは「この」「その」などの連体詞で、代名詞「これ」「それ」は続きません。")
    if stutters := stuttered_masu(tokens):
        first, last, intended = stutters[0]
        return _slip(sentence, first, last, "活用", intended, f"「{intended}」としてください。",
                     "「ました」の音が一つ多く打たれています（「しまいました」の「い」が抜けた形も含みます）。")
    if objects := object_marked_by_no(tokens):
        no, noun, last = objects[0]
        phrase = sentence.text[noun.begin : last.end]
        marker = "が" if sentence.text.startswith(("でき", "出来"), noun.end) else "を"  # の作成ができます, の作成をしました
        return _slip(sentence, no, last, "助詞", None,
                     f"「の」を「を」や「に」に直す（「を{phrase}」）か、「の{noun.surface}{marker}{phrase[len(noun.surface):]}」としてください。",
                     "「の」は名詞と名詞をつなぐ助詞で、文を終える動詞「〜する」には「を」「に」などで続けます。")
    if subjects := object_before_subject(tokens):
        wo, noun, predicate = subjects[0]
        verbal = f"を{noun.surface}できる" if predicate.base in ("可能", "できる", "出来る") else (
            f"を{noun.surface}する必要" if predicate.base == "必要" else f"を{noun.surface}できない")
        return _slip(sentence, wo, predicate, "助詞", None,
                     f"「{verbal}」のように動詞で書くか、「を」を「の」に直してください"
                     f"（「の{sentence.text[noun.begin : predicate.end]}」）。",
                     "「を」は動詞の目的語を示す助詞で、「〜が可能」「〜が必要」の主語になった名詞には続きません。")
    return None


def _slip(sentence: Sentence, first: Token, last: Token, kind: str, intended: str | None, suggestion: str,
          why: str) -> tuple[int, str, str, str]:
    """A slip from `first` to `last` as (where, problem, suggestion, why): 「…の誤りかもしれません: 「span」」
    with the likely intended words when there is one reading."""
    guess = f"（「{intended}」では？）" if intended else ""
    return first.begin, f"{kind}の誤りかもしれません: 「{sentence.text[first.begin : last.end]}」{guess}", suggestion, why
