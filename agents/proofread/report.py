"""The Markdown report, the short summary, the summary card, and version-to-version comparison.
Everything here works on plain data (dicts), the form reviews are kept in between turns."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from agents.proofread.checkers.privacy import redact, redact_personal
from agents.proofread.fixes import FIX_NAMES
from agents.proofread.messages import note_to_japanese, to_japanese
from agents.proofread.scoring import verdict
from bot.events import Card

SEVERITY_TITLES = {"critical": "Critical", "warning": "Warnings", "suggestion": "Suggestions"}
SEVERITY_MARKS = {"critical": "🔴", "warning": "🟡", "suggestion": "🔵"}
CATEGORY_NAMES = {
    "markdown_format": "Markdown",
    "link": "Links",
    "code_quality": "Code",
    "privacy": "Privacy",
    "structure": "Structure",
    "language_quality": "Language",
    "technical_accuracy": "Technical accuracy",
}
ARTICLE_TYPES = {"zenn": "Zenn", "qiita": "Qiita", "markdown": "Markdown"}
MAX_QUOTED_LINES = 3
# The report speaks the article's language: Japanese articles get Japanese headings, summary
# lines and (through messages.py) messages of the checkers that write English.
SEVERITY_TITLES_JA = {"critical": "重大", "warning": "警告", "suggestion": "提案"}
CATEGORY_NAMES_JA = {
    "markdown_format": "Markdown",
    "link": "リンク",
    "code_quality": "コード",
    "privacy": "プライバシー",
    "structure": "構成",
    "language_quality": "文章",
    "technical_accuracy": "技術的な正確さ",
}
# Categories whose checkers write English only; the language rules already write Japanese.
ENGLISH_ONLY_CATEGORIES = frozenset({"structure", "link", "markdown_format", "code_quality", "privacy"})


def report_language(review: dict[str, Any]) -> str:
    """"ja" for a Japanese article (judged by the parser from the share of kana in its prose),
    "en" otherwise."""
    return "ja" if review.get("language") == "ja" else "en"


def localize_issues(issues: list[dict[str, Any]], language: str) -> list[dict[str, Any]]:
    """The issues with their messages in the article's language: for a Japanese article, the
    English-only checkers' messages and every location in Japanese (known messages only)."""
    if language != "ja":
        return issues
    localized = []
    for issue in issues:
        issue = dict(issue)
        if issue.get("category") in ENGLISH_ONLY_CATEGORIES:
            source = str(issue.get("source") or "")
            tool, _, name = source.partition(":")
            rule = name.lower() if tool in ("rule", "pymarkdownlnt") else source.lower()
            for key in ("problem", "suggestion", "reason"):
                issue[key] = to_japanese(rule, issue.get(key) or "")
        issue["location_description"] = note_to_japanese(issue.get("location_description") or "")
        localized.append(issue)
    return localized


def verdict_text(review: dict[str, Any]) -> str:
    """verdict() in the report's language."""
    if report_language(review) != "ja":
        return verdict(review)
    if review["approved"]:
        return "承認"
    failed = len(review.get("errors") or [])
    return f"非承認（{failed}件のチェックが失敗）" if failed else "非承認"


def quote_lines(
    lines: list[str], issue: dict[str, Any], cache: dict[tuple[int, bool], str] | None = None
) -> list[tuple[int, str]]:
    """The offending lines (at most three), with secrets and personal data masked. `cache` keeps
    the masked lines across the issues of one report: many issues can quote one long line."""
    start = issue.get("line_start")
    if not start:
        return []
    end = issue.get("line_end") or start
    end = min(end, start + MAX_QUOTED_LINES - 1)
    personal = issue.get("category") == "privacy"
    quoted = []
    for number in range(start, end + 1):
        if 1 <= number <= len(lines):
            text = cache.get((number, personal)) if cache is not None else None
            if text is None:
                text = redact(lines[number - 1])
                if personal:
                    text = redact_personal(text)
                text = text[:300]
                if cache is not None:
                    cache[(number, personal)] = text
            quoted.append((number, text))
    return quoted


def _fenced(quoted: list[tuple[int, str]]) -> str:
    width = max(len(str(n)) for n, _ in quoted)
    body = "\n".join(f"{n:>{width}} | {text}" for n, text in quoted)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


PLATFORM_NAMES = {"zenn": "Zenn", "qiita": "Qiita", "hugo": "Hugo", "jekyll": "Jekyll", "zola": "Zola",
                  "plain": "Markdown"}


def platform_label(review: dict[str, Any]) -> str:
    """"Zenn", "Hugo (probably: TOML front matter (+++))" or "Markdown": how sure the platform is
    decides whether its rules ran, so the report says it."""
    platform = review.get("platform")
    ja = report_language(review) == "ja"
    if "platform" not in review:  # reviews stored before platforms were detected
        return ARTICLE_TYPES.get(review.get("article_type", ""), "Markdown")
    if platform is None:
        if ja:
            return "Markdown（既知のプラットフォームのフロントマターではないため、プラットフォーム固有のルールは適用していません）"
        return "Markdown (no known platform's front matter; platform rules were not applied)"
    name = PLATFORM_NAMES.get(platform, platform)
    if review.get("platform_certain") or platform == "plain":
        return name
    if ja:
        evidence = note_to_japanese(review.get("platform_evidence") or "本文")
        return f"{name}（{evidence}から推定。プラットフォーム固有のルールは適用していません）"
    return f"{name} (guessed from {review.get('platform_evidence') or 'the text'}; its platform rules were not applied)"


def line_label(issue: dict[str, Any], language: str = "en") -> str:
    start, end = issue.get("line_start"), issue.get("line_end")
    if language == "ja":
        if not start:
            return "記事全体"
        return f"{start}〜{end}行目" if end and end != start else f"{start}行目"
    if not start:
        return "whole article"
    if end and end != start:
        return f"lines {start}–{end}"
    return f"line {start}"


def fixes_lines(review: dict[str, Any]) -> list[str]:
    """What the safe fixes did, for the report: how many, what kinds, the attached files, and
    that the other issues need the writer. Empty when nothing was fixed."""
    fixes = review.get("fixes") or {}
    if not fixes.get("count"):
        return []
    ja = report_language(review) == "ja"
    kinds = ", ".join(
        f"{FIX_NAMES.get(kind, (kind, kind))[1 if ja else 0]} {count}" if ja
        else f"{count} × {FIX_NAMES.get(kind, (kind, kind))[0]}"
        for kind, count in sorted(fixes.get("counts", {}).items())
    )
    if ja:
        return [
            f"確実に安全な修正を{fixes['count']}件適用した版を `{fixes['fixed_name']}` に、差分を "
            f"`{fixes['diff_name']}` に添付しました（{kinds.replace(', ', '、')}）。",
            "意味を変えうる修正は行っていません。ほかの指摘は書き手が直してください。",
        ]
    return [
        f"{fixes['count']} safe fix{'es' if fixes['count'] != 1 else ''} applied in `{fixes['fixed_name']}` "
        f"(the changes as a diff: `{fixes['diff_name']}`): {kinds}.",
        "Nothing that could change the meaning was touched; the other issues need the writer.",
    ]


# The report's fixed wording, per language.
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "title": "# Proofreading report: {title}", "untitled": "untitled article",
        "score": "**Score: {score}/100 — {verdict}**",
        "facts": "{platform} article, {language}, {lines} lines{version}.", "version": ", version {version}",
        "english": "English", "japanese": "Japanese",
        "draft": "**Draft:** the front matter says `{draft}`, so the article is not public yet.",
        "table": "| Severity | Count |",
        "rule": "Score = 100 − 20 × critical − 3 × warnings − ⌊suggestions ÷ 2⌋. "
                "Approved when there is no critical issue and the score is at least 50.",
        "since": "## Since the previous version", "fixed": "- Fixed: {n}", "new": "- New: {n}",
        "open": "- Still open: {n}", "score_change": "- Score: {before} → {after}",
        "group": "## {mark} {heading} ({n})", "issue": "### {number}. {category} — {where}",
        "problem": "- **Problem:** {text}", "suggestion": "- **Suggestion:** {text}", "why": "- **Why:** {text}",
        "where": "- Where: {where} · source: `{source}`",
        "none": "No issues found. 🎉", "failed": "## Checks that failed",
        "failed_note": "The other checks ran normally; re-check to try the failed ones again.",
        "notes": "## Notes", "fixes": "## Safe fixes",
    },
    "ja": {
        "title": "# 校正レポート: {title}", "untitled": "無題の記事",
        "score": "**スコア: {score}/100 — {verdict}**",
        "facts": "{platform}の記事、{language}、{lines}行{version}。", "version": "、第{version}版",
        "english": "英語", "japanese": "日本語",
        "draft": "**下書き:** フロントマターが `{draft}` なので、この記事はまだ公開されていません。",
        "table": "| 重要度 | 件数 |",
        "rule": "スコア = 100 − 20 × 重大 − 3 × 警告 − ⌊提案 ÷ 2⌋。重大な指摘がなく、スコアが50以上なら承認です。",
        "since": "## 前の版からの変化", "fixed": "- 直った指摘: {n}", "new": "- 新しい指摘: {n}",
        "open": "- 残っている指摘: {n}", "score_change": "- スコア: {before} → {after}",
        "group": "## {mark} {heading}（{n}件）", "issue": "### {number}. {category} — {where}",
        "problem": "- **問題:** {text}", "suggestion": "- **提案:** {text}", "why": "- **理由:** {text}",
        "where": "- 場所: {where} · ルール: `{source}`",
        "none": "指摘はありません。🎉", "failed": "## 失敗したチェック",
        "failed_note": "ほかのチェックは通常どおり実行しました。再チェックすると、失敗したチェックをもう一度試します。",
        "notes": "## 補足", "fixes": "## 自動修正",
    },
}


def render_report(review: dict[str, Any], lines: list[str]) -> str:
    language = report_language(review)
    ja = language == "ja"
    words = WORDS[language]
    titles = SEVERITY_TITLES_JA if ja else SEVERITY_TITLES
    categories = CATEGORY_NAMES_JA if ja else CATEGORY_NAMES
    counts = review["counts"]
    title = review.get("title") or review.get("filename") or words["untitled"]
    verdict_mark = verdict_text(review) + (" ✅" if review["approved"] else " ❌")
    version = review.get("version", 1)
    out = [
        words["title"].format(title=title),
        "",
        words["score"].format(score=review["score"], verdict=verdict_mark),
        "",
        words["facts"].format(
            platform=platform_label(review), language=words["japanese" if review.get("language") == "ja" else "english"],
            lines=review.get("line_count", len(lines)),
            version=words["version"].format(version=version) if version > 1 else "",
        ),
        "",
        *([words["draft"].format(draft=review["draft"]), ""] if review.get("draft") else []),
        words["table"],
        "|---|---|",
        *(f"| {SEVERITY_MARKS[s]} {titles[s]} | {counts.get(s, 0)} |" for s in SEVERITY_TITLES),
        "",
        words["rule"],
    ]
    comparison = review.get("comparison")
    if comparison:
        out += [
            "",
            words["since"],
            "",
            words["fixed"].format(n=comparison["fixed"]),
            words["new"].format(n=comparison["new"]),
            words["open"].format(n=comparison["remaining"]),
            words["score_change"].format(before=comparison["previous_score"], after=review["score"]),
        ]
    fixes = fixes_lines(review)
    if fixes:
        out += ["", words["fixes"], "", *fixes]
    issues = review["issues"]
    masked: dict[tuple[int, bool], str] = {}
    for severity in SEVERITY_TITLES:
        group = [i for i in issues if i["severity"] == severity]
        if not group:
            continue
        out += ["", words["group"].format(mark=SEVERITY_MARKS[severity], heading=titles[severity], n=len(group))]
        for issue in group:
            out += [
                "",
                words["issue"].format(number=issue["number"], category=categories.get(issue["category"], issue["category"]),
                                      where=line_label(issue, language)),
                "",
            ]
            quoted = quote_lines(lines, issue, masked)
            if quoted:
                out += [_fenced(quoted), ""]
            out += [
                words["problem"].format(text=issue["problem"]),
                words["suggestion"].format(text=issue["suggestion"]),
                words["why"].format(text=issue["reason"]),
                words["where"].format(where=issue["location_description"], source=issue.get("source") or "n/a"),
            ]
    if not issues:
        out += ["", words["none"]]
    if review.get("errors"):
        out += ["", words["failed"], ""]
        out += [f"- `{e['step']}`: {e['error_type']}: {e['message']}" for e in review["errors"]]
        out += ["", words["failed_note"]]
    if review.get("skipped"):
        out += ["", words["notes"], ""]
        out += [f"- {note_to_japanese(s['reason']) if ja else s['reason']}" for s in review["skipped"]]
    return "\n".join(out) + "\n"


def render_summary(review: dict[str, Any], *, limit: int = 5) -> str:
    counts = review["counts"]
    ja = report_language(review) == "ja"
    fixes = review.get("fixes") or {}
    if ja:
        text = (
            f"校正結果: {review['score']}/100、{verdict_text(review)} — 重大 {counts['critical']}件、"
            f"警告 {counts['warning']}件、提案 {counts['suggestion']}件。"
        )
    else:
        text = (
            f"Proofreading: {review['score']}/100, {verdict(review)} — {counts['critical']} critical, "
            f"{counts['warning']} warning{'s' if counts['warning'] != 1 else ''}, "
            f"{counts['suggestion']} suggestion{'s' if counts['suggestion'] != 1 else ''}."
        )
    comparison = review.get("comparison")
    if comparison:
        text += (
            f"\n前の版から: 直った指摘 {comparison['fixed']}件、新しい指摘 {comparison['new']}件、残っている指摘 "
            f"{comparison['remaining']}件（スコア {comparison['previous_score']} → {review['score']}）。" if ja else
            f"\nSince the previous version: {comparison['fixed']} fixed, {comparison['new']} new, "
            f"{comparison['remaining']} still open (score {comparison['previous_score']} → {review['score']})."
        )
    top = [i for i in review["issues"] if i["severity"] != "suggestion"][:limit]
    if top:
        text += "\n" + "\n".join(
            f"{i['number']}. [{SEVERITY_TITLES_JA[i['severity']] if ja else i['severity']}] "
            f"{line_label(i, 'ja' if ja else 'en')}: {i['problem']}"
            for i in top
        )
    if review.get("errors"):
        text += (f"\n{len(review['errors'])}件のチェックが失敗しました。レポートを見てください。" if ja
                 else f"\n{len(review['errors'])} check(s) failed; see the report.")
    skipped = [s["reason"] for s in review.get("skipped", []) if s["step"] == "check_technical_accuracy"]
    if skipped:
        text += f"\n{note_to_japanese(skipped[0]) if ja else skipped[0]}"
    if fixes.get("count"):
        text += (
            f"\n確実に安全な修正{fixes['count']}件を適用した版: {fixes['fixed_name']}（差分: {fixes['diff_name']}）。"
            "ほかの指摘は書き手が直してください。" if ja else
            f"\n{fixes['count']} safe fix{'es' if fixes['count'] != 1 else ''} applied: {fixes['fixed_name']} "
            f"(diff: {fixes['diff_name']}); the other issues need you."
        )
    # The follow-up offered names a finding this review has (the first one shown); with no finding, none is offered.
    example = next((i["number"] for i in [*top, *review["issues"]]), None)
    if example is None:
        text += ("\n全文のレポート: proofread-report.md。新しい版を送ると再チェックします。" if ja
                 else "\nFull report: proofread-report.md. Send a new version to re-check.")
    else:
        text += (
            f"\n全文のレポート: proofread-report.md。「{example}番目の指摘を説明して」と聞くか、新しい版を送ると再チェックします。"
            if ja else f"\nFull report: proofread-report.md. Ask “explain issue {example}”, or send a new version to re-check."
        )
    return text


def summary_card(review: dict[str, Any]) -> Card:
    counts = review["counts"]
    by_category = Counter(i["category"] for i in review["issues"])
    if report_language(review) == "ja":
        return Card(
            title=f"校正結果: {review['score']}/100",
            subtitle=verdict_text(review) + f" · {review.get('title') or '記事'}",
            fields={
                "重大": str(counts["critical"]),
                "警告": str(counts["warning"]),
                "提案": str(counts["suggestion"]),
                **{CATEGORY_NAMES_JA[c]: str(n) for c, n in sorted(by_category.items())},
            },
        )
    return Card(
        title=f"Proofreading: {review['score']}/100",
        subtitle=verdict(review).capitalize() + f" · {review.get('title') or 'article'}",
        fields={
            "Critical": str(counts["critical"]),
            "Warnings": str(counts["warning"]),
            "Suggestions": str(counts["suggestion"]),
            **{CATEGORY_NAMES[c]: str(n) for c, n in sorted(by_category.items())},
        },
    )


def issue_key(issue: dict[str, Any], lines: list[str]) -> tuple[str, str, str]:
    """What identifies an issue across versions: line numbers shift when text is added above,
    so use the rule and the text of the offending line instead."""
    start = issue.get("line_start")
    text = lines[start - 1].strip() if start and 1 <= start <= len(lines) else ""
    return issue["category"], issue.get("source") or issue["problem"], text


def compare(previous: list[dict[str, Any]], previous_lines: list[str],
            current: list[dict[str, Any]], current_lines: list[str]) -> dict[str, int]:
    before = Counter(issue_key(i, previous_lines) for i in previous)
    after = Counter(issue_key(i, current_lines) for i in current)
    remaining = sum((before & after).values())
    return {
        "fixed": sum(before.values()) - remaining,
        "new": sum(after.values()) - remaining,
        "remaining": remaining,
    }
