"""Follow-up turns in a proofreading thread: tell a new article version from a question, and
answer questions from the stored report ("explain issue 3", "list the issues", …)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from agents.proofread.report import (
    CATEGORY_NAMES,
    CATEGORY_NAMES_JA,
    SEVERITY_TITLES_JA,
    line_label,
    quote_lines,
    report_language,
)
from agents.proofread.scoring import verdict
from bot.locale import is_japanese, rule
from bot.offline.extract import ORDINAL_WORDS

TurnKind = Literal["review", "explain", "list", "recheck_without_article", "no_report", "question"]

EXPLAIN = rule(
    r"(?:issue|item|finding|problem|point|no\.?|number|#|指摘|問題|項目|イシュー)\s*(?:no\.?|番号)?\s*#?\s*(\d{1,4})"
    r"|(\d{1,4})\s*(?:番目?|つ目|個目|点目)"
    r"|(?:explain|why|details?|about|tell me about|more on)\s+#?(\d{1,4})\b"
)
_ORDINAL_WORD = "|".join(sorted(ORDINAL_WORDS, key=len, reverse=True))
# "explain the first issue", "the last finding?", 「最初の指摘」「最後の指摘を説明して」: -1 is the last.
EXPLAIN_ORDINAL = rule(
    rf"\b(?:the\s+)?({_ORDINAL_WORD})\s+(?:issue|item|finding|problem|point|suggestion|warning|one)s?\b"
    r"|(最初|最後)の(?:指摘|問題|項目)"
)
RECHECK = re.compile(
    r"(?i)re-?check|check (it )?again|review (it )?again|re-?review|proofread (it )?again|(new|updated|fixed) version|"
    r"i (have )?(fixed|updated)|再チェック|再校正|再確認|もう一度|修正しました|直しました|更新しました|修正版|新しい版"
)
LIST = rule(
    r"\b(list|show|all)\b.*\b(issues?|findings?|problems?)\b|^\s*(issues|findings|report|summary)\s*\??$|"
    r"一覧|全部|すべての指摘|全ての指摘|指摘を(見せ|表示)|レポート"
)
COMMAND_WORDS = re.compile(r"(?i)^\s*(please\s+)?(proofread|review|check)( this| my article)?\s*[:：]?\s*$|^\s*校正(して|お願いします)?\s*[:：]?\s*$")


@dataclass(frozen=True)
class Turn:
    kind: TurnKind
    article: str | None = None
    number: int | None = None


def looks_like_article(text: str) -> bool:
    stripped = text.strip()
    if stripped.startswith("---\n") or stripped.startswith("---\r\n"):
        return True
    lines = [line for line in stripped.split("\n") if line.strip()]
    markdown = any(re.match(r"^\s{0,3}(#{1,6}\s|```|~~~|[-*+]\s|\d+\.\s|>\s?|\|)", line) for line in lines)
    return len(stripped) >= 400 or (len(lines) >= 4 and (markdown or len(stripped) >= 160))


def split_instruction(text: str) -> tuple[str, str]:
    """("re-check after my fix:", article) when a request line precedes a pasted article."""
    first, _, rest = text.lstrip().partition("\n")
    if rest.strip() and (RECHECK.search(first) or COMMAND_WORDS.match(first)) and looks_like_article(rest):
        return first, rest
    return "", text


def classify_turn(text: str, attachment: str | None, has_review: bool) -> Turn:
    if attachment is not None:
        return Turn("review", article=attachment)
    _instruction, article = split_instruction(text)
    if looks_like_article(article):
        return Turn("review", article=article)
    normalised = unicodedata.normalize("NFKC", text)
    if not has_review:
        if EXPLAIN.search(normalised) or LIST.search(normalised) or RECHECK.search(normalised):
            return Turn("no_report")
        return Turn("review", article=text)
    if match := EXPLAIN.search(normalised):
        number = next(int(group) for group in match.groups() if group)
        return Turn("explain", number=number)
    if match := EXPLAIN_ORDINAL.search(normalised):
        word = (match.group(1) or match.group(2)).lower()
        return Turn("explain", number={"最初": 1, "最後": -1}.get(word) or ORDINAL_WORDS[word])
    if RECHECK.search(normalised):
        return Turn("recheck_without_article")
    if LIST.search(normalised):
        return Turn("list")
    return Turn("question")


def find_issue(review: dict[str, Any], number: int) -> dict[str, Any] | None:
    """The issue numbered `number`; -1 is the last one."""
    if number == -1:
        return review["issues"][-1] if review["issues"] else None
    return next((i for i in review["issues"] if i["number"] == number), None)


def describe_issue(issue: dict[str, Any], lines: list[str], language: str = "en") -> str:
    """The issue as the report shows it (in the report's language), for an answer or for the
    model's context."""
    ja = language == "ja"
    quoted = quote_lines(lines, issue)
    where = issue["location_description"]
    label = line_label(issue, language)
    place = where if where.startswith(label) else f"{label} ({where})" if where else label
    if ja:
        severity = SEVERITY_TITLES_JA.get(issue["severity"], issue["severity"])
        text = f"指摘{issue['number']} — {severity}、{CATEGORY_NAMES_JA.get(issue['category'], issue['category'])}、{place}\n"
    else:
        category = CATEGORY_NAMES.get(issue["category"], issue["category"])
        text = f"Issue {issue['number']} — {issue['severity']}, {category}, {place}\n"
    if quoted:
        text += "\n".join(f"> {n}: {line}" for n, line in quoted) + "\n"
    heads = ("問題", "理由", "直し方") if ja else ("Problem", "Why it matters", "How to fix it")
    text += (
        f"{heads[0]}: {issue['problem']}\n"
        f"{heads[1]}: {issue['reason']}\n"
        f"{heads[2]}: {issue['suggestion']}"
    )
    return text


def list_issues(review: dict[str, Any], *, limit: int = 30) -> str:
    ja = report_language(review) == "ja"
    issues = review["issues"]
    if not issues:
        return (f"前回のレビューに指摘はありません（スコア {review['score']}/100）。" if ja
                else f"No issues in the last review (score {review['score']}/100).")
    names = CATEGORY_NAMES_JA if ja else CATEGORY_NAMES
    rows = [
        f"{i['number']}. [{SEVERITY_TITLES_JA.get(i['severity'], i['severity']) if ja else i['severity']}] "
        f"{names.get(i['category'], i['category'])}{'、' if ja else ', '}{line_label(i, 'ja' if ja else 'en')}: "
        f"{i['problem']}"
        for i in issues[:limit]
    ]
    if ja:
        more = f"\n…ほか{len(issues) - limit}件はレポートにあります。" if len(issues) > limit else ""
        return f"指摘{len(issues)}件（スコア {review['score']}/100）:\n" + "\n".join(rows) + more
    more = f"\n… and {len(issues) - limit} more in the report." if len(issues) > limit else ""
    return f"{len(issues)} issues (score {review['score']}/100):\n" + "\n".join(rows) + more


def report_digest(review: dict[str, Any], *, limit: int = 40) -> str:
    """A compact summary of the report for the model answering a question about it."""
    counts = review["counts"]
    head = (
        f"Score {review['score']}/100, {verdict(review)}; "
        f"{counts['critical']} critical, {counts['warning']} warnings, {counts['suggestion']} suggestions."
    )
    return head + "\n" + list_issues(review, limit=limit)


HELP = (
    "I can help with this report. Try:\n"
    "• “explain issue 3” (or 「指摘3を説明して」) for one finding in detail;\n"
    "• “list the issues” for all of them;\n"
    "• paste or attach a new version of the article to re-check it."
)
NO_REPORT = "There is no proofreading report in this thread yet. Send the article (text or a .md file) first."
RECHECK_NEEDS_ARTICLE = (
    "Please paste the new version of the article (or attach the .md file) and I'll re-check it "
    "and compare it with the previous version."
)
HELP_JA = (
    "このレポートについてお手伝いできます。例えば:\n"
    "• 「指摘3を説明して」(“explain issue 3”) で一つの指摘を詳しく;\n"
    "• 「指摘を一覧にして」で全部を;\n"
    "• 記事の新しい版を貼るか添付すると、再チェックして前の版と比べます。"
)
NO_REPORT_JA = "このスレッドにはまだ校正レポートがありません。まず記事（本文か .md ファイル）を送ってください。"
RECHECK_NEEDS_ARTICLE_JA = "記事の新しい版を貼り付けるか .md ファイルを添付してください。再チェックして前の版と比べます。"


def in_language(english: str, japanese: str, text: str) -> str:
    """`japanese` when `text` (the user's message) is Japanese, else `english`."""
    return japanese if is_japanese(text) else english
