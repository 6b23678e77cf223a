"""Graph states and their reducers.

ReviewState is one review of one article version (the seed design's ProofreadState); each checker
subgraph sees only CheckerState. ThreadState is what a conversation thread keeps between turns:
the current article, the last review as plain data, and a short message history."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from agents.proofread.schemas import ArticleType, ErrorInfo, Issue, ParsedArticle, SkippedCheck


def keep_value(left: Any, right: Any) -> Any:
    """Keep the first value written (parallel branches echo it back unchanged)."""
    if left is not None:
        return left
    return right


def add_values(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Concatenate lists written by parallel branches."""
    if left is None:
        left = []
    if right is None:
        right = []
    return left + right


# `X | None` matters: LangGraph seeds a reducer channel with `type()` when it can, and `str()` is
# '' — which keep_value would then keep forever.
class ReviewState(TypedDict):
    target_article: Annotated[str | None, keep_value]
    # The review of the version before, for a re-check: {"issues", "article", "score"}.
    previous_review: NotRequired[Annotated[dict[str, Any] | None, keep_value]]
    filename: NotRequired[Annotated[str | None, keep_value]]
    article_type: NotRequired[Annotated[ArticleType | None, keep_value]]
    parsed_article: NotRequired[Annotated[ParsedArticle | None, keep_value]]
    issues: NotRequired[Annotated[list[Issue], add_values]]
    errors: NotRequired[Annotated[list[ErrorInfo], add_values]]
    skipped: NotRequired[Annotated[list[SkippedCheck], add_values]]
    critical_count: NotRequired[int]
    warning_count: NotRequired[int]
    suggestion_count: NotRequired[int]
    overall_score: NotRequired[int]
    is_approved: NotRequired[bool]
    numbered_issues: NotRequired[list[Issue]]
    comparison: NotRequired[dict[str, int] | None]
    review: NotRequired[dict[str, Any]]
    final_report: NotRequired[str]


class CheckerInput(TypedDict):
    article_type: Annotated[ArticleType | None, keep_value]
    parsed_article: Annotated[ParsedArticle | None, keep_value]


class CheckerOutput(TypedDict):
    issues: NotRequired[Annotated[list[Issue], add_values]]
    errors: NotRequired[Annotated[list[ErrorInfo], add_values]]
    skipped: NotRequired[Annotated[list[SkippedCheck], add_values]]


class CheckerState(CheckerInput, CheckerOutput):
    """The shared sub-state every checker subgraph runs on."""


class ThreadState(TypedDict, total=False):
    # This turn's input, consumed by the first node: {"text", "filename", "source"}.
    incoming: dict[str, Any] | None
    user: str  # who sent it: their work-pool jobs count against their limit (bot/workpool.py)
    article: str
    filename: str | None
    version: int
    # The last review as plain data: score, approved, counts, issues, errors, skipped, report…
    review: dict[str, Any] | None
    reply: str
    last_action: str
    messages: Annotated[list[AnyMessage], add_messages]
