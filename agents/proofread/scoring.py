"""Aggregation: severity counts, the score and the approval rule (fixed in code, never by a model)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from agents.proofread.schemas import SEVERITIES, Issue

_SEVERITY_ORDER = {severity: rank for rank, severity in enumerate(SEVERITIES)}
PASSING_SCORE = 50


def calculate_score(critical: int, warning: int, suggestion: int) -> int:
    score = 100
    score -= critical * 20
    score -= warning * 3
    score -= suggestion // 2
    return max(0, score)


def determine_approval(critical: int, score: int, failed_checks: int = 0) -> bool:
    """Approved: no critical issue, a passing score, and every check ran — a check that failed
    judged nothing, so its silence cannot count as a pass."""
    if critical > 0 or failed_checks > 0:
        return False
    return score >= PASSING_SCORE


def verdict(review: dict[str, object]) -> str:
    """'approved', 'not approved', or 'not approved: 2 checks failed' (nothing was judged there)."""
    if review["approved"]:
        return "approved"
    failed = len(review.get("errors") or [])  # type: ignore[arg-type]
    if failed:
        return f"not approved: {failed} check{'s' if failed != 1 else ''} failed"
    return "not approved"


def count_by_severity(issues: Iterable[Issue]) -> dict[str, int]:
    counts = Counter(issue.severity for issue in issues)
    return {severity: counts.get(severity, 0) for severity in SEVERITIES}


def order_issues(issues: Iterable[Issue]) -> list[Issue]:
    """Duplicates dropped, then by severity, line and category: the numbering users refer to."""
    seen: set[tuple[object, ...]] = set()
    unique = []
    for issue in issues:
        key = (issue.category, issue.line_start, issue.line_end, issue.problem)
        if key not in seen:
            seen.add(key)
            unique.append(issue)
    return sorted(
        unique,
        key=lambda i: (_SEVERITY_ORDER[i.severity], i.line_start or 0, i.line_end or 0, i.category),
    )
