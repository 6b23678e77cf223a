"""The hotel skill's extractors: stays and dates, nights, guests, hotel stars, and prices per night."""

# Relative dates are resolved against `today`, which callers take from the request, never from the
# clock, so answers are reproducible. The domain-neutral extractors (numbers, counts, money, ratings,
# ordinals) are in bot.offline.extract.

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from bot.locale import rule
from bot.offline.extract import (
    INT_TOKEN,
    NUMBER_TOKEN,
    PriceRange,
    extract_count,
    japanese_amounts,
    parse_number,
)
from bot.offline.extract import extract_price_range as _price_range

# --- dates -----------------------------------------------------------------------------------

MONTHS: dict[str, int] = {}
for _i in range(1, 13):
    MONTHS[calendar.month_name[_i].lower()] = _i
    MONTHS[calendar.month_abbr[_i].lower()] = _i
MONTHS["sept"] = 9

WEEKDAYS: dict[str, int] = {}
for _i in range(7):
    WEEKDAYS[calendar.day_name[_i].lower()] = _i
    WEEKDAYS[calendar.day_abbr[_i].lower()] = _i
WEEKDAYS.update({"tues": 1, "thur": 3, "thurs": 3})

_MONTH = r"(?P<{g}>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?:" + "|".join(sorted(WEEKDAYS, key=len, reverse=True)) + r")"
_DAY = r"(?P<{g}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s*(?P<{g}>\d{4}))?"
_DASH = r"\s*(?:-|–|—|~|〜|to|till|until|through|thru)\s*"


def _p(template: str, **groups: str) -> str:
    return template.format(**groups)


# "Dec 12", "December 12th, 2026", "12 Dec", "12th of December 2026"
_MD = _p(_MONTH, g="{m}") + r"\s*" + _p(_DAY, g="{d}") + r"\b" + _YEAR.replace("{g}", "{y}")
_DM = _p(_DAY, g="{d}") + r"\s*(?:of\s+)?" + _p(_MONTH, g="{m}") + r"\b" + _YEAR.replace("{g}", "{y}")


def _named(pattern: str, suffix: str) -> str:
    return pattern.replace("{m}", f"m{suffix}").replace("{d}", f"d{suffix}").replace("{y}", f"y{suffix}")


_ISO = r"(?P<iy{s}>\d{{4}})[-/.](?P<im{s}>\d{{1,2}})[-/.](?P<id{s}>\d{{1,2}})"
# "12/30": month first, as Japanese and American writers put it (a day above 12 first is day/month)
_SLASH = r"(?P<sa{s}>\d{{1,2}})/(?P<sb{s}>\d{{1,2}})"
_JA = r"(?:(?P<jy{s}>\d{{4}})年)?(?P<jm{s}>\d{{1,2}})月(?P<jd{s}>\d{{1,2}})日"


def _date_alternatives(s: str) -> str:
    return "(?:" + "|".join(
        [_ISO.format(s=s), _JA.format(s=s), _named(_MD, f"a{s}"), _named(_DM, f"b{s}"), _SLASH.format(s=s)]
    ) + ")"


_ABSOLUTE = rule(r"(?<![0-9A-Za-z/])" + _date_alternatives("") + r"(?![0-9A-Za-z/])")
# "Dec 12-14", "Dec 12 to 14", "12-14 Dec", "12月12日〜14日"
_SHORT_RANGES = [
    rule(
        _p(_MONTH, g="m") + r"\s*" + _p(_DAY, g="d1") + _DASH + _p(_DAY, g="d2") + r"\b(?!\s*(?:night|day|week|am|pm|:))"
        + _YEAR.replace("{g}", "y")
    ),
    rule(
        r"(?<!\d)" + _p(_DAY, g="d1") + _DASH + r"(?:the\s+)?" + _p(_DAY, g="d2") + r"\s*(?:of\s+)?" + _p(_MONTH, g="m") + r"\b"
        + _YEAR.replace("{g}", "y")
    ),
    re.compile(r"(?:(?P<y>\d{4})年)?(?P<m>\d{1,2})月(?P<d1>\d{1,2})日?\s*(?:-|–|〜|~|から)\s*(?P<d2>\d{1,2})日"),
]

_NIGHTS = rule(
    r"\b(?P<n>" + NUMBER_TOKEN + r")\s*(?:-\s*)?(?P<unit>nights?|days?|weeks?)\b(?!\s+(?:ago|from now|later))"
    r"|(?P<jn>(?<!\d)\d++|[一二三四五六七八九十])\s*泊"
)
_IN_N = rule(
    r"\bin\s+(?P<n>" + NUMBER_TOKEN + r")\s+(?P<unit>days?|weeks?|months?)\b"
    r"|\b(?P<n2>" + NUMBER_TOKEN + r")\s+(?P<unit2>days?|weeks?)\s+(?:from\s+(?:now|today)|later)\b"
    r"|(?P<jn>(?<!\d)\d++|[一二三四五六七八九十])\s*(?P<junit>日|週間|ヶ月|か月)後"
)
_WEEKEND = rule(
    r"\b(?P<which>this|next|coming|the\s+following|following)?\s*weekend\b|(?P<ja>今週末|来週末|週末)"
)
_ON_WEEKDAY = rule(r"\b(?P<which>this|next|coming|on)?\s*(?P<wd>" + _WEEKDAY + r")\b")
_NEXT_WEEK = rule(r"\bnext\s+week\b|来週")
# 「金曜」「来週の金曜日」「今週土曜」: from the week's Monday; a bare weekday is the next one.
_JA_WEEKDAY = re.compile(r"(?P<which>再来週|来週|今週)?の?(?P<wd>[月火水木金土日])曜(?:日)?")
_JA_WEEKDAYS = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}
# Days of the year travellers name: "Christmas", "New Year's Eve", 大晦日, 元旦.
_HOLIDAY = rule(
    r"\b(?P<en>christmas(?:\s+(?:eve|day))?|new\s+year'?s?(?:\s+(?:eve|day))?)\b"
    r"|(?P<ja>クリスマス・?イブ|クリスマス|大晦日|大みそか|元旦|元日)"
)
HOLIDAYS = {"christmas eve": (12, 24), "christmas": (12, 25), "christmas day": (12, 25), "new years eve": (12, 31),
            "new year": (1, 1), "new years": (1, 1), "new years day": (1, 1), "new year day": (1, 1),
            "クリスマスイブ": (12, 24), "クリスマス・イブ": (12, 24), "クリスマス": (12, 25), "大晦日": (12, 31),
            "大みそか": (12, 31), "元旦": (1, 1), "元日": (1, 1)}
_NEXT_MONTH = rule(r"\bnext\s+month\b|来月")
_SIMPLE_RELATIVE: list[tuple[re.Pattern[str], int]] = [
    (rule(r"\b(?:the\s+)?day\s+after\s+tomorrow\b|明後日|あさって"), 2),
    (rule(r"\btomorrow\b|明日|あした"), 1),
    (rule(r"\b(?:today|tonight|this\s+evening)\b|今日|今夜|今晩"), 0),
]
_UNTIL = rule(r"\b(?:to|until|till|through)\b|[-–〜~]|から|まで")
_DAY_ONLY = rule(r"\b(?:to|until|till|through|-|–)\s*(?:the\s+)?(?P<d>[0-3]?\d)(?:st|nd|rd|th)\b")


@dataclass(frozen=True)
class Stay:
    """A date range: check-in and check-out (the morning of departure)."""

    check_in: date
    check_out: date

    @property
    def nights(self) -> int:
        return (self.check_out - self.check_in).days


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    value: date
    explicit_year: bool


def _resolve(today: date, month: int, day: int, year: int | None) -> date | None:
    """A calendar date; without a year, the next occurrence on or after today."""
    try:
        if year is not None:
            return date(year, month, day)
        candidate = date(today.year, month, day)
        if candidate < today:
            candidate = date(today.year + 1, month, day)
        return candidate
    except ValueError:
        return None


_RATING_BEFORE = rule(r"(?:rat(?:ed|ing)|scor(?:e|ed)|review\w*|評価|点)\s*(?:of\s+)?(?:at\s+least\s+)?$")


def _absolute_dates(text: str, today: date) -> list[_Found]:
    found: list[_Found] = []
    for match in _ABSOLUTE.finditer(text):
        g = match.groupdict()
        year: str | None
        if g.get("iy"):
            year, month, day = g["iy"], int(g["im"]), int(g["id"])
        elif g.get("jm"):
            year, month, day = g.get("jy"), int(g["jm"]), int(g["jd"])
        elif g.get("sa"):
            if _RATING_BEFORE.search(text[max(0, match.start() - 16) : match.start()]):
                continue  # "rated 8/10" is a score, not a date
            first, second = int(g["sa"]), int(g["sb"])
            year, month, day = None, *((first, second) if first <= 12 else (second, first))
        elif g.get("ma"):
            year, month, day = g.get("ya"), MONTHS[g["ma"].lower()], int(g["da"])
        else:
            year, month, day = g.get("yb"), MONTHS[g["mb"].lower()], int(g["db"])
        value = _resolve(today, month, day, int(year) if year else None)
        if value is not None:
            found.append(_Found(match.start(), match.end(), value, bool(year)))
    return found


def _unit_days(unit: str, n: int) -> int:
    unit = unit.lower()
    if unit.startswith("week") or unit == "週間":
        return 7 * n
    if unit.startswith("month") or unit in ("ヶ月", "か月"):
        return 30 * n
    return n


_MONEY_BEFORE = rule(r"(?:\d[\d,.]*\s*(?:k|[a-z]{1,7}|円|ドル|ユーロ|ポンド)?|\bper)\s*$")
_MONEY_AFTER = rule(r"\s*(?:[$¥€£₩฿₹]|\d[\d,.]*\s*(?:万|千|円|[^\x00-\x7f\d\s]{1,4}[以未ま]|[a-z]{3}\b)"
                    r"|[一二三四五六七八九十百千万]+円)")


def _is_price_unit(text: str, match: re.Match[str]) -> bool:
    """'$180 a night', '1泊150ドル以下': one night as the unit of a price, not the length of a stay."""
    if match.group("jn"):
        return parse_number(match.group("jn")) == 1 and bool(_MONEY_AFTER.match(japanese_amounts(text[match.end():])))
    n = (match.group("n") or "").lower()
    return n in ("a", "an", "one", "1") and bool(_MONEY_BEFORE.search(text[: match.start()]))


def extract_nights(text: str) -> int | None:
    """'for 3 nights' → 3, 'a week' → 7, '2泊' → 2; 'in 2 weeks' is a date, not a length."""
    for match in _NIGHTS.finditer(text):
        before = text[max(0, match.start() - 4) : match.start()].lower()
        if before.endswith("in ") or _is_price_unit(text, match):
            continue
        if match.group("jn"):
            return parse_number(match.group("jn"))
        n = parse_number(match.group("n"))
        unit = match.group("unit").lower()
        if n is None:
            continue
        if unit.startswith("day"):
            # "3 days" of stay is 2 nights; "a day" is one night.
            return max(1, n - 1)
        return _unit_days(unit, n)
    if re.search(r"\bfor\s+(?:a|one)\s+night\b|\bovernight\b", text, re.IGNORECASE):
        return 1
    return None


def _after(day: date, days: int) -> date:
    """`days` after `day`; the calendar's last day for a stay that would end past it ("for 99999999
    nights"), which the search then refuses as too long, as it refuses 31 nights."""
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return date.max


def _weekend(today: date, which: str) -> Stay:
    # A weekend stay is Friday and Saturday night. "this weekend" is the coming one (the current
    # one on Friday and Saturday); "next weekend" is the one after the current week's.
    days_to_friday = (4 - today.weekday()) % 7
    friday = today + timedelta(days=days_to_friday)
    if today.weekday() in (5, 6):  # Saturday, Sunday: this weekend is under way
        friday = today - timedelta(days=today.weekday() - 4)
        if which == "this":
            return Stay(max(today, friday), friday + timedelta(days=2))
    if which == "next":
        friday += timedelta(days=7)
    return Stay(friday, friday + timedelta(days=2))


def _relative_start(text: str, today: date) -> tuple[date | Stay, int] | None:
    """The first relative expression: a check-in date or a whole stay, with its position."""
    candidates: list[tuple[int, date | Stay]] = []
    for match in _WEEKEND.finditer(text):
        which = (match.group("which") or "").lower()
        ja = match.group("ja") or ""
        kind = "next" if which in ("next", "following", "the following") or ja == "来週末" else "this"
        candidates.append((match.start(), _weekend(today, kind)))
    for match in _IN_N.finditer(text):
        raw = match.group("n") or match.group("n2") or match.group("jn")
        unit = match.group("unit") or match.group("unit2") or match.group("junit")
        n = parse_number(raw)
        if n is not None and (day := _after(today, _unit_days(unit, n))) != date.max:
            candidates.append((match.start(), day))  # not "in 99999999 days": past the calendar's end
    for pattern, offset in _SIMPLE_RELATIVE:
        for match in pattern.finditer(text):
            candidates.append((match.start(), today + timedelta(days=offset)))
    for match in _ON_WEEKDAY.finditer(text):
        which = (match.group("which") or "").lower()
        word = match.group("wd").lower()
        if not which and word in ("sun", "sat", "wed", "mar", "may"):
            continue  # too ambiguous without "on"/"this"/"next"
        target = WEEKDAYS[word]
        ahead = (target - today.weekday()) % 7
        if ahead == 0 and which != "this":
            ahead = 7
        if which == "next" and ahead < 7 and today.weekday() < target:
            ahead += 7
        candidates.append((match.start(), today + timedelta(days=ahead)))
    for match in _JA_WEEKDAY.finditer(text):
        target, which = _JA_WEEKDAYS[match.group("wd")], match.group("which")
        if which:  # that week's day: this week's Monday, plus a week for 来週, two for 再来週
            weeks = {"今週": 0, "来週": 1, "再来週": 2}[which]
            day = today + timedelta(days=7 * weeks - today.weekday() + target)
        else:
            day = today + timedelta(days=(target - today.weekday()) % 7 or 7)
        candidates.append((match.start(), day))
    for match in _HOLIDAY.finditer(text):
        name = " ".join((match.group("en") or match.group("ja")).lower().replace("'", "").split())
        month, day_of_month = HOLIDAYS.get(name, HOLIDAYS.get(name.removesuffix(" day"), (1, 1)))
        holiday = _resolve(today, month, day_of_month, None)
        if holiday is not None:
            candidates.append((match.start(), holiday))
    for match in _NEXT_WEEK.finditer(text):
        candidates.append((match.start(), today + timedelta(days=7 - today.weekday())))
    for match in _NEXT_MONTH.finditer(text):
        first = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        candidates.append((match.start(), first))
    if not candidates:
        return None
    position, value = min(candidates, key=lambda c: c[0])
    return value, position


def extract_dates(text: str, today: date) -> list[date]:
    """Every absolute calendar date in the text, in order (years resolved against today)."""
    return [f.value for f in _absolute_dates(text, today)]


def extract_stay(text: str, today: date, default_nights: int = 1) -> Stay | None:
    """The stay the text asks for, or None when it names no date.

    Understands "Dec 12-14", "from 2026-12-12 to 2026-12-14", "Dec 12 for 3 nights", "next
    weekend", "tomorrow", "in 2 weeks", "on Friday", "12月12日から2泊". Dates in the past and a
    check-out before the check-in are returned as written, so the caller can explain the problem.
    """
    nights = extract_nights(text)
    for pattern in _SHORT_RANGES:
        match = pattern.search(text)
        if match:
            month_raw = match.group("m")
            month = int(month_raw) if month_raw.isdigit() else MONTHS[month_raw.lower()]
            year = int(match.group("y")) if match.group("y") else None
            start = _resolve(today, month, int(match.group("d1")), year)
            if start is not None:
                end_day = int(match.group("d2"))
                end = _resolve(start, month, end_day, start.year)
                if end is not None and end_day < start.day:
                    # "Dec 30 - 2" runs into the next month
                    next_month = (start.replace(day=1) + timedelta(days=32)).replace(day=1)
                    end = _resolve(start, next_month.month, end_day, next_month.year)
                if end is not None:
                    return Stay(start, end)
    found = _absolute_dates(text, today)
    if len(found) >= 2:
        first, second = found[0], found[1]
        check_out = second.value
        if first.explicit_year and not second.explicit_year:
            # "Jan 5, 2027 to Jan 7": the year carries over
            check_out = _resolve(first.value, check_out.month, check_out.day, None) or check_out
        return Stay(first.value, check_out)
    relative = _relative_start(text, today)
    if found and relative is not None and isinstance(relative[0], date) and relative[0] < found[0].value \
            and relative[1] < found[0].start and _UNTIL.search(text, relative[1], found[0].start):
        return Stay(relative[0], found[0].value)  # "Christmas Eve to Dec 27", "tomorrow until Dec 12"
    if found:
        start = found[0].value
        day_only = _DAY_ONLY.search(text, found[0].end)
        if day_only and nights is None:
            end = _resolve(start, start.month, int(day_only.group("d")), start.year)
            if end is not None:
                return Stay(start, end)
        return Stay(start, _after(start, nights or default_nights))
    if relative is not None:
        value, _ = relative
        if isinstance(value, Stay):
            if nights:
                return Stay(value.check_in, _after(value.check_in, nights))
            return value
        return Stay(value, _after(value, nights or default_nights))
    return None


# --- prices ----------------------------------------------------------------------------------

# After a number without a currency, these make it a quantity, not a price: "up to 4 guests".
HOTEL_QUANTITY_UNITS = ("night", "guest", "adult", "kid", "child", "room", "bed", "泊")
# "for the whole stay" means the amount is the total, not a price per night.
HOTEL_WHOLE = ("stay", "trip")


def extract_price_range(text: str) -> PriceRange | None:
    """The price bounds in a hotel request, per night unless the text says total ('for the whole
    stay', 'in total'): bot.offline.extract.extract_price_range with the hotel's vocabulary."""
    return _price_range(text, quantity_units=HOTEL_QUANTITY_UNITS, whole=HOTEL_WHOLE)


# --- guests ----------------------------------------------------------------------------------

_GUEST_NOUNS = ("people", "persons", "person", "guests", "guest", "adults", "adult", "pax", "travellers",
                "travelers", "of us")
_CHILD_NOUNS = ("children", "child", "kids", "kid", "babies", "baby", "infants", "infant", "teens", "teenagers")
_GROUP = rule(
    r"\b(?:family|group|party|team)\s+of\s+(?P<n>" + INT_TOKEN + r")\b"
    r"|\bfor\s+(?P<for>" + INT_TOKEN + r")(?=\s*(?:$|[,.!?;]|and\b|next|this|in\b|on\b|from\b|under\b|below\b))"
    r"|(?:大人)?(?P<ja>(?<!\d)\d++|[一二三四五六七八九十])\s*(?:人|名)"
)
# 「大人2人 子供1人」「子ども2名と大人2名」: every party member counted, adults and children.
_JA_PARTY = re.compile(
    r"(?P<who>大人|おとな|子供|子ども|こども|小学生|中学生|幼児|乳児|小人)\s*(?P<n>(?<!\d)\d{1,3}|[一二三四五六七八九十])\s*(?:人|名)"
)
_SOLO = rule(r"\b(?:solo|alone|just\s+me|by\s+myself|single\s+traveller|for\s+one|on\s+my\s+own)\b|一人|ひとり")
_COUPLE = rule(r"\b(?:a\s+couple|my\s+(?:wife|husband|partner|girlfriend|boyfriend)|honeymoon|for\s+two|the\s+two\s+of\s+us)\b|二人|ふたり")


def extract_guests(text: str) -> int | None:
    """'for 3 people' → 3, '2 adults and 2 kids' → 4, 'family of 5' → 5, 'solo' → 1, '3名' → 3,
    「大人2人 子供1人」 → 3."""
    adults = extract_count(text, _GUEST_NOUNS)
    children = extract_count(text, _CHILD_NOUNS)
    if adults is not None or children is not None:
        return (adults or (1 if children else 0)) + (children or 0)
    party = [(m.group("who"), parse_number(m.group("n")) or 0) for m in _JA_PARTY.finditer(text)]
    if party:
        grown = sum(n for who, n in party if who in ("大人", "おとな"))
        young = sum(n for who, n in party if who not in ("大人", "おとな"))
        return (grown or (1 if young else 0)) + young
    match = _GROUP.search(text)
    if match:
        raw = match.group("n") or match.group("for") or match.group("ja")
        value = parse_number(raw)
        if value is not None:
            return value
    if _COUPLE.search(text):
        return 2
    if _SOLO.search(text):
        return 1
    return None


# --- hotel class -----------------------------------------------------------------------------

_STARS = rule(
    r"(?P<n>\d|one|two|three|four|five)\s*(?:-|\s)?\s*(?:\+\s*)?(?:stars?|★)(?!\s*(?:rating|rated|review))"
    r"|(?P<ja>[1-5一二三四五])\s*つ星"
)


def extract_stars(text: str) -> int | None:
    """A hotel class: '4-star' → 4, 'five star hotels' → 5, '4★' → 4, '5つ星' → 5."""
    match = _STARS.search(text)
    if not match:
        return None
    value = parse_number(match.group("n") or match.group("ja"))
    if value is None or not 1 <= value <= 5:
        return None
    return value
