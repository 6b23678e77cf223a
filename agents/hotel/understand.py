"""How the offline planner reads a traveller's corrections and choices, as tables of patterns.

"Paris next weekend, actually make it London", "Lisbon or Porto? Porto please", "not Paris, Lyon",
「ローマじゃなくてバルセロナ」, 「やっぱり京都にします」: the message is split at its last correction
marker; what comes after it (the tail) overrides what came before (the head), slot by slot. Places
are found with their positions; a place that is negated is never chosen; a place chosen with a
"please"/「にします」 wins; two places joined by "or"/「か」 and not chosen between is a question
back to the traveller. Every table below is data: add a row, add a test in
agents/hotel/eval/phrasings.json."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from agents.hotel import geo
from bot.locale import LATIN_WORD, rule

# After one of these, the traveller restates what they want: the tail wins.
CORRECTIONS: tuple[str, ...] = (
    r"\bactually\b", r"\bno,?\s+wait\b", r"\bwait,", r"\bmake\s+it\b", r"\bi\s+meant\b", r"\bmeant\b",
    r"\bswitch\s+(?:it\s+)?to\b", r"\bchange\s+(?:it\s+)?to\b", r"\blet'?s\s+(?:do|go\s+with|make\s+it)\b",
    r"\bgo\s+with\b", r"\bon\s+second\s+thought\b", r"\bcorrection\b", r"\bscratch\s+that\b",
    "やっぱり", "やっぱ", "訂正", "じゃなくて", "ではなくて", "ではなく", "じゃなく", "でなく", "ではなしに",
)
# A place right after one of these is one the traveller does not want.
NEGATED_BEFORE: tuple[str, ...] = (
    r"\bnot(?:\s+in)?", r"\binstead\s+of(?:\s+in)?", r"\brather\s+than(?:\s+in)?", r"\bthan(?:\s+in)?",
    r"\bexcept(?:\s+in)?", r"\bno\s+longer(?:\s+in)?", r"\bskip",
)
# A place right before one of these is one the traveller does not want.
NEGATED_AFTER: tuple[str, ...] = ("じゃなくて", "ではなくて", "ではなく", "じゃなく", "でなく", "より", "はやめ")
# A place right before one of these is the traveller's choice. Each run of spaces is taken whole
# (`\s*+`): what follows it never starts with a space, and a place followed by thousands of spaces
# is then read once, not once for every way of sharing them out.
CHOSEN_AFTER: tuple[str, ...] = (
    r"\s*+,?\s*+please\b", r"\s++it\s+is\b", r"\s++then\b", r"\s++instead\b", r"\s*+にします", r"\s*+にする",
    r"\s*+でお願い", r"\s*+がいい", r"\s*+にして", r"\s*+で[、,。\s]",
)
# Two places joined by one of these are alternatives.
ALTERNATIVES = rule(r"^\s*+(?:,?\s*+or(?:\s++maybe)?|/|か|または|それとも|or\s++else)\s*+$")

_CORRECTION = rule("|".join(CORRECTIONS))
_NEGATED_BEFORE = rule(r"(?:" + "|".join(NEGATED_BEFORE) + r")\s*$")
# Matched at a position (`match(text, pos)`), not on the rest of the text cut off: a message naming
# thousands of places would otherwise copy itself once per place.
_NEGATED_AFTER = re.compile(r"\s*+(?:" + "|".join(NEGATED_AFTER) + ")")
_CHOSEN_AFTER = rule(r"(?:" + "|".join(CHOSEN_AFTER) + ")")
# How far before a place a negation is looked for: the longest phrase ("rather than in") with room
# for runs of spaces between its words.
_NEGATION_REACH = 64

# Capitalised words that start sentences or name things other than places.
_NOT_PLACES = {
    "make", "switch", "change", "actually", "sorry", "let's", "lets", "not", "no", "wait", "ok", "okay", "and",
    "but", "also", "any", "anything", "which", "what", "how", "is", "are", "i", "i'd", "i'm", "please", "hotel",
    "hotels", "show", "find", "search", "cheapest", "cheap", "somewhere", "something", "maybe", "go", "do",
    "then", "instead", "rather", "than", "stay", "staying", "book", "need", "want", "looking", "can", "could",
    "would", "hi", "hello", "hey", "thanks", "thank", "yes", "the", "a", "an", "for", "from", "to", "in", "on",
    "at", "or", "near", "nearer", "closer", "closest", "tonight", "today", "tomorrow", "next", "this", "it",
    "meant", "scratch", "correction", "christmas", "eve", "new", "year", "years", "easter", "ramadan",
}
_CALENDAR_WORD = rule(
    r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*$|^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*$"
)
_CAPITALISED = re.compile(rf"(?<!{LATIN_WORD}|')([A-Z][a-zà-ÿ'-]{{2,}}(?:\s+[A-Z][a-zà-ÿ'-]{{2,}})?)")


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    name: str  # as the city table spells it, or as written for a place not in it
    city: geo.City | None


@dataclass(frozen=True)
class Reading:
    """The places of a message and what the traveller decided about them."""

    head: str  # the message up to its last correction marker ("" when there is none)
    tail: str  # what the traveller said last: the whole message when there is no correction
    city: geo.City | None = None  # the city chosen, when it is in the table
    place: str | None = None  # a place chosen that is not in the table ("Porto")
    question: tuple[str, str] | None = None  # two places to choose between: ask instead of searching


def split_correction(text: str) -> tuple[str, str]:
    """('Paris next weekend, ', ' London') for 'Paris next weekend, actually make it London'."""
    markers = list(_CORRECTION.finditer(text))
    if not markers:
        return "", text
    return text[: markers[-1].start()], text[markers[-1].end() :]


def fold(text: str) -> str:
    """geo.normalize, character by character, so that positions stay those of `text`: lower case,
    no accents, the punctuation geo.normalize turns into spaces turned into spaces."""
    out = []
    for ch in text:
        if ch in ".'’`-_,":
            out.append(" ")
        elif ord(ch) < 0x250:
            base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)).casefold()
            out.append(base if len(base) == 1 else ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def _name_pattern(name: str) -> str | None:
    key = geo.normalize(name)
    if not key:
        return None
    body = r"\s+".join(re.escape(word) for word in key.split())
    return rf"(?<!{LATIN_WORD})" + body + rf"(?!{LATIN_WORD})" if key.isascii() else body  # 「Londonで」 too


@functools.cache
def _city_patterns() -> tuple[tuple[re.Pattern[str], geo.City], ...]:
    """Every city's name and aliases as patterns, compiled once (the table is read at start-up)."""
    return tuple(
        (re.compile(pattern), city)
        for city in geo.CITIES.values() for name in (city.name, *city.aliases)
        if (pattern := _name_pattern(name)) is not None
    )


def _known(text: str) -> list[Mention]:
    folded = fold(text)
    found = [Mention(match.start(), match.end(), city.name, city)
             for pattern, city in _city_patterns() for match in pattern.finditer(folded)]
    # A city inside a sight's name ("Tokyo Tower", 「大阪城」) is the sight, not the city.
    inside_a_sight = _within(sorted(match.span() for pattern in _sight_patterns() for match in pattern.finditer(folded)))
    found = [m for m in found if not inside_a_sight(m.start, m.end)]
    # The longest name at a position wins ("New York City" over "New York"); overlaps are dropped.
    found.sort(key=lambda m: (m.start, -(m.end - m.start)))
    kept: list[Mention] = []
    for mention in found:
        if not kept or mention.start >= kept[-1].end:
            kept.append(mention)
    return kept


def _within(spans: list[tuple[int, int]]) -> Callable[[int, int], bool]:
    """Whether (start, end) lies inside one of `spans` (sorted) and is not that span itself: a span
    that starts before it and reaches its end, or starts with it and goes past it. Looked up by
    bisection, not by trying every span for every place."""
    starts = [start for start, _end in spans]
    reach = list(itertools.accumulate((end for _start, end in spans), max))  # the furthest end so far
    longest_at: dict[int, int] = {}
    for start, end in spans:
        longest_at[start] = max(end, longest_at.get(start, end))

    def within(start: int, end: int) -> bool:
        before = bisect.bisect_left(starts, start)  # spans[:before] start before `start`
        return (before > 0 and reach[before - 1] >= end) or longest_at.get(start, -1) > end

    return within


@functools.cache
def _sight_patterns() -> tuple[re.Pattern[str], ...]:
    names = {n for c in geo.CITIES.values() for lm in c.landmarks for n in (lm.name, *lm.aliases)}
    return tuple(re.compile(p) for p in map(_name_pattern, sorted(names)) if p)


def compile_place_patterns() -> None:
    """Compile the cities' and sights' patterns now (some 15 ms of CPU) rather than in the first
    request; the agent calls this in a thread when it is built."""
    _city_patterns()
    _sight_patterns()


@functools.cache
def _sights() -> frozenset[str]:
    """The words of every landmark and district name: capitalised, they are not unknown places."""
    names = [lm.name for c in geo.CITIES.values() for lm in c.landmarks]
    names += [d.name for c in geo.CITIES.values() for d in c.districts]
    return frozenset(word for name in names for word in geo.normalize(name).split())


def _unknown(text: str, known: list[Mention]) -> list[Mention]:
    """Capitalised words that look like a place the table does not have ("Porto", "Lyon")."""
    sights = _sights()
    # `known` is sorted and without overlaps, so its ends rise too: the last place that starts
    # before a word ends is the only one that can overlap it.
    starts = [k.start for k in known]
    found = []
    for match in _CAPITALISED.finditer(text):
        words = match.group(1).split()
        if words[0].lower() in _NOT_PLACES or _CALENDAR_WORD.match(words[0]):
            continue
        before = bisect.bisect_left(starts, match.end())
        if before and known[before - 1].end > match.start():
            continue
        if geo.normalize(words[0]) in sights:
            continue
        found.append(Mention(match.start(), match.end(), match.group(1), None))
    return found


def mentions(text: str) -> list[Mention]:
    """Every place the message names, in order: cities of the table and capitalised unknowns."""
    known = _known(text)
    return sorted(known + _unknown(text, known), key=lambda m: m.start)


def _negated(text: str, mention: Mention) -> bool:
    words_end = mention.start  # where the words before the place end
    while words_end and text[words_end - 1].isspace():
        words_end -= 1
    before = _NEGATED_BEFORE.search(text, max(0, words_end - _NEGATION_REACH), mention.start)
    return bool(before or _NEGATED_AFTER.match(text, mention.end))


def read_places(text: str) -> Reading:
    head, tail = split_correction(text)
    base = text
    places = mentions(base)
    wanted = [m for m in places if not _negated(base, m)]
    if not wanted:
        return Reading(head, tail)
    cut = len(head)

    def reading(choice: Mention) -> Reading:
        if choice.city is not None:
            return Reading(head, tail, city=choice.city)
        return Reading(head, tail, place=choice.name)

    # 1. What was said after the last correction marker.
    after = [m for m in wanted if m.start >= cut] if head else []
    if after:
        known_after = [m for m in after if m.city is not None]
        return reading((known_after or after)[0])
    # 2. A place chosen with "please", 「にします」…
    chosen = [m for m in wanted if _CHOSEN_AFTER.match(base, m.end)]
    if chosen:
        return reading(chosen[-1])
    # 3. Alternatives not chosen between: ask.
    for first, second in itertools.pairwise(places):
        if first.name != second.name and ALTERNATIVES.match(base[first.end : second.start]):
            if first in wanted and second in wanted:
                return Reading(head, tail, question=(first.name, second.name))
    # 4. The first place the traveller wants, a city of the table before an unknown word.
    known = [m for m in wanted if m.city is not None]
    if known:
        return reading(known[0])
    unknown = [m for m in wanted if m.city is None]
    if unknown and (head or any(_negated(base, m) for m in places)):
        return reading(unknown[0])
    return Reading(head, tail)
