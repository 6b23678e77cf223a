"""The Markdown report, the short summary, the summary card, and version-to-version comparison.
Everything here works on plain data (dicts), the form reviews are kept in between turns."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from agents.proofread.checkers.privacy import redact, redact_personal
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
    if "platform" not in review:  # reviews stored before platforms were detected
        return ARTICLE_TYPES.get(review.get("article_type", ""), "Markdown")
    if platform is None:
        return "Markdown (no known platform's front matter; platform rules were not applied)"
    name = PLATFORM_NAMES.get(platform, platform)
    if review.get("platform_certain") or platform == "plain":
        return name
    return f"{name} (guessed from {review.get('platform_evidence') or 'the text'}; its platform rules were not applied)"


def line_label(issue: dict[str, Any]) -> str:
    start, end = issue.get("line_start"), issue.get("line_end")
    if not start:
        return "whole article"
    if end and end != start:
        return f"lines {start}–{end}"
    return f"line {start}"


def render_report(review: dict[str, Any], lines: list[str]) -> str:
    counts = review["counts"]
    title = review.get("title") or review.get("filename") or "untitled article"
    verdict_text = verdict(review) + (" ✅" if review["approved"] else " ❌")
    out = [
        f"# Proofreading report: {title}",
        "",
        f"**Score: {review['score']}/100 — {verdict_text}**",
        "",
        f"{platform_label(review)} article, "
        f"{'Japanese' if review.get('language') == 'ja' else 'English'}, {review.get('line_count', len(lines))} lines"
        + (f", version {review['version']}" if review.get("version", 1) > 1 else "") + ".",
        "",
        *([f"**Draft:** the front matter says `{review['draft']}`, so the article is not public yet.", ""]
          if review.get("draft") else []),
        "| Severity | Count |",
        "|---|---|",
        *(f"| {SEVERITY_MARKS[s]} {SEVERITY_TITLES[s]} | {counts.get(s, 0)} |" for s in SEVERITY_TITLES),
        "",
        "Score = 100 − 20 × critical − 3 × warnings − ⌊suggestions ÷ 2⌋. "
        "Approved when there is no critical issue and the score is at least 50.",
    ]
    comparison = review.get("comparison")
    if comparison:
        out += [
            "",
            "## Since the previous version",
            "",
            f"- Fixed: {comparison['fixed']}",
            f"- New: {comparison['new']}",
            f"- Still open: {comparison['remaining']}",
            f"- Score: {comparison['previous_score']} → {review['score']}",
        ]
    issues = review["issues"]
    masked: dict[tuple[int, bool], str] = {}
    for severity, heading in SEVERITY_TITLES.items():
        group = [i for i in issues if i["severity"] == severity]
        if not group:
            continue
        out += ["", f"## {SEVERITY_MARKS[severity]} {heading} ({len(group)})"]
        for issue in group:
            out += [
                "",
                f"### {issue['number']}. {CATEGORY_NAMES.get(issue['category'], issue['category'])} — "
                f"{line_label(issue)}",
                "",
            ]
            quoted = quote_lines(lines, issue, masked)
            if quoted:
                out += [_fenced(quoted), ""]
            out += [
                f"- **Problem:** {issue['problem']}",
                f"- **Suggestion:** {issue['suggestion']}",
                f"- **Why:** {issue['reason']}",
                f"- Where: {issue['location_description']} · source: `{issue.get('source') or 'n/a'}`",
            ]
    if not issues:
        out += ["", "No issues found. 🎉"]
    if review.get("errors"):
        out += ["", "## Checks that failed", ""]
        out += [f"- `{e['step']}`: {e['error_type']}: {e['message']}" for e in review["errors"]]
        out += ["", "The other checks ran normally; re-check to try the failed ones again."]
    if review.get("skipped"):
        out += ["", "## Notes", ""]
        out += [f"- {s['reason']}" for s in review["skipped"]]
    return "\n".join(out) + "\n"


def render_summary(review: dict[str, Any], *, limit: int = 5) -> str:
    counts = review["counts"]
    text = (
        f"Proofreading: {review['score']}/100, {verdict(review)} — {counts['critical']} critical, "
        f"{counts['warning']} warning{'s' if counts['warning'] != 1 else ''}, "
        f"{counts['suggestion']} suggestion{'s' if counts['suggestion'] != 1 else ''}."
    )
    comparison = review.get("comparison")
    if comparison:
        text += (
            f"\nSince the previous version: {comparison['fixed']} fixed, {comparison['new']} new, "
            f"{comparison['remaining']} still open (score {comparison['previous_score']} → {review['score']})."
        )
    top = [i for i in review["issues"] if i["severity"] != "suggestion"][:limit]
    if top:
        text += "\n" + "\n".join(
            f"{i['number']}. [{i['severity']}] {line_label(i)}: {i['problem']}" for i in top
        )
    if review.get("errors"):
        text += f"\n{len(review['errors'])} check(s) failed; see the report."
    skipped = [s["reason"] for s in review.get("skipped", []) if s["step"] == "check_technical_accuracy"]
    if skipped:
        text += f"\n{skipped[0]}"
    text += "\nFull report: proofread-report.md. Ask “explain issue 2”, or send a new version to re-check."
    return text


def summary_card(review: dict[str, Any]) -> Card:
    counts = review["counts"]
    by_category = Counter(i["category"] for i in review["issues"])
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
