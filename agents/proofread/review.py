"""The review graph: parse → checkers (parallel subgraphs) → aggregate → final report.

One run reviews one version of an article. It is compiled without a checkpointer: it runs inside
a node of the thread graph, which stores its result as plain data."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.proofread.checkers import BaseChecker
from agents.proofread.checkers.base import article_failure
from agents.proofread.fixes import fix_job
from agents.proofread.parser import parse_article
from agents.proofread.report import compare, localize_issues, render_report, report_language
from agents.proofread.rules import apply_rule_control
from agents.proofread.schemas import ErrorInfo, ParsedArticle
from agents.proofread.scoring import calculate_score, count_by_severity, determine_approval, order_issues
from agents.proofread.state import ReviewState
from agents.proofread.status import report_status
from bot import workpool
from bot.locale import language_of

log = logging.getLogger(__name__)


async def parse_node(state: ReviewState) -> dict[str, Any]:
    text = state["target_article"] or ""
    report_status("記事を読んでいます…" if language_of(text) == "ja" else "Reading the article…")
    try:  # in a work-pool process, killed when it overruns (a thread where no pool runs)
        parsed = await workpool.run_untrusted(parse_article, text)
    except workpool.WorkFailed as exc:
        raise article_failure(exc) from None
    return {"parsed_article": parsed, "article_type": parsed.article_type}


async def aggregate_node(state: ReviewState, rule_settings: Mapping[str, str] | None = None) -> dict[str, Any]:
    parsed = state.get("parsed_article")
    report_status("採点しています…" if parsed is not None and parsed.language == "ja" else "Scoring…")
    suppressions = parsed.suppressions if parsed is not None else []
    # The project's rule settings and the article's inline disable comments decide what counts.
    issues = apply_rule_control(state.get("issues") or [], rule_settings or {}, suppressions)
    issues = order_issues(issues)
    counts = count_by_severity(issues)
    score = calculate_score(counts["critical"], counts["warning"], counts["suggestion"])
    return {
        "numbered_issues": issues,
        "critical_count": counts["critical"],
        "warning_count": counts["warning"],
        "suggestion_count": counts["suggestion"],
        "overall_score": score,
        "is_approved": determine_approval(counts["critical"], score, len(state.get("errors") or [])),
    }


async def final_report_node(state: ReviewState) -> dict[str, Any]:
    parsed = state["parsed_article"]
    assert parsed is not None
    lines = parsed.lines
    issues = [
        {"number": number, **issue.model_dump()}
        for number, issue in enumerate(state.get("numbered_issues") or [], start=1)
    ]
    review: dict[str, Any] = {
        "title": parsed.title,
        "filename": state.get("filename"),
        "article_type": parsed.article_type,
        "platform": parsed.platform,
        "platform_certain": parsed.platform_certain,
        "platform_evidence": parsed.platform_evidence,
        "draft": parsed.draft,
        "language": parsed.language,
        "line_count": parsed.line_count,
        "score": state["overall_score"],
        "approved": state["is_approved"],
        "counts": {
            "critical": state["critical_count"],
            "warning": state["warning_count"],
            "suggestion": state["suggestion_count"],
        },
        "issues": issues,
        "errors": [e.model_dump() for e in _sorted_errors(state.get("errors") or [])],
        "skipped": [s.model_dump() for s in state.get("skipped") or []],
        "comparison": None,
    }
    review["issues"] = localize_issues(issues, report_language(review))
    review["fixes"] = await safe_fixes(parsed, issues, state.get("filename"))
    previous = state.get("previous_review")
    if previous:
        review["version"] = int(previous.get("version", 1)) + 1
        review["comparison"] = {
            **compare(previous["issues"], previous["article"].split("\n"), issues, lines),
            "previous_score": previous["score"],
        }
    report = render_report(review, lines)
    review["report"] = report
    return {"final_report": report, "comparison": review["comparison"], "review": review}


async def safe_fixes(parsed: ParsedArticle, issues: list[dict[str, Any]], filename: str | None) -> dict[str, Any]:
    """The article with the safe fixes applied, and its diff (fixes.fix_job), in the work pool
    like the other work on the article's text. The report goes out without them when that fails."""
    try:
        return await workpool.run_untrusted(fix_job, parsed, issues, filename)
    except Exception as exc:  # the fixes are an extra: the review stands without them
        log.warning("safe fixes failed: %s", type(exc).__name__)
        return {"count": 0, "counts": {}}


def _sorted_errors(errors: list[ErrorInfo]) -> list[ErrorInfo]:
    return sorted(errors, key=lambda e: e.step)


def build_review_graph(checkers: list[BaseChecker], *, parallel: bool = True) -> CompiledStateGraph:
    builder = StateGraph(ReviewState)
    settings = checkers[0].config.rule_settings if checkers else {}

    async def aggregate(state: ReviewState) -> dict[str, Any]:
        return await aggregate_node(state, settings)

    builder.add_node("parse", parse_node)
    steps = []
    for checker in checkers:
        builder.add_node(checker.step, checker.create_graph())
        steps.append(checker.step)
    builder.add_node("aggregate", aggregate)
    builder.add_node("final_report", final_report_node)
    builder.add_edge(START, "parse")
    if parallel:
        for step in steps:
            builder.add_edge("parse", step)
        builder.add_edge(steps, "aggregate")
    else:
        for before, after in zip(["parse", *steps], [*steps, "aggregate"], strict=True):
            builder.add_edge(before, after)
    builder.add_edge("aggregate", "final_report")
    builder.add_edge("final_report", END)
    return builder.compile(checkpointer=False, name="proofread_review")


async def run_review(graph: CompiledStateGraph, review_input: dict[str, Any]) -> dict[str, Any]:
    """Run the review graph and return its final state, passing the checkers' status events on to
    whatever graph is running us (the runtime does not stream subgraphs itself)."""
    from langgraph.config import get_stream_writer

    try:
        forward = get_stream_writer()
    except RuntimeError:
        forward = None
    final: dict[str, Any] | None = None
    root: tuple[str, ...] | None = None
    stream: AsyncIterator[Any] = graph.astream(
        review_input, stream_mode=["custom", "values"], subgraphs=True
    )
    async for namespace, mode, chunk in stream:
        if mode == "custom":
            if forward is not None:
                forward(chunk)
        elif mode == "values":
            if root is None or len(namespace) < len(root):
                root = namespace
            if namespace == root:
                final = chunk
    if final is None:
        raise RuntimeError("the review graph produced no state")
    return final
