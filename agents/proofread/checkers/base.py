"""BaseChecker: one checker is one small subgraph over CheckerState; its failures become ErrorInfo."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.proofread.config import GraphConfig
from agents.proofread.linter import WORKER as LINTER
from agents.proofread.linter import LinterWorker
from agents.proofread.llm import ProofreadLLM
from agents.proofread.schemas import Category, ErrorInfo, Issue, ParsedArticle, Severity, SkippedCheck
from agents.proofread.state import CheckerInput, CheckerOutput, CheckerState
from agents.proofread.status import report_status
from bot.faults import TurnFailed

log = logging.getLogger(__name__)


@dataclass
class CheckContext:
    config: GraphConfig
    llm: ProofreadLLM
    # For online link checks; tests pass an httpx.MockTransport so nothing leaves the machine.
    http_transport: httpx.AsyncBaseTransport | None = None
    linter: LinterWorker = field(default_factory=lambda: LINTER)


@dataclass
class CheckResult:
    issues: list[Issue] = field(default_factory=list)
    skipped: list[SkippedCheck] = field(default_factory=list)
    errors: list[ErrorInfo] = field(default_factory=list)


def locate(article: ParsedArticle, line: int | None) -> str:
    """A human description of where a line is: front matter, or the section it belongs to."""
    if line is None:
        return "whole article"
    if line <= article.front_matter_line_count:
        return f"front matter, line {line}"
    # The last heading at or before the line (headings are in line order), by bisection: this
    # runs for every issue, and an article can have thousands of both.
    position = bisect_right(article.headings, line, key=lambda heading: heading.line)
    section = article.headings[position - 1] if position else None
    if section is None or section.line == line:
        return f"line {line}"
    return f"line {line}, section “{section.text}”"


class BaseChecker(ABC):
    category: ClassVar[Category]
    status_text: ClassVar[str]

    def __init__(self, context: CheckContext) -> None:
        self.context = context

    @property
    def config(self) -> GraphConfig:
        return self.context.config

    @property
    def step(self) -> str:
        return f"check_{self.category}"

    async def check(self, article: ParsedArticle) -> CheckResult:
        """Deterministic checkers only implement rules(); it runs in a worker thread."""
        return CheckResult(issues=await asyncio.to_thread(self.rules, article))

    def rules(self, article: ParsedArticle) -> list[Issue]:
        return []

    def issue(
        self,
        article: ParsedArticle,
        severity: Severity,
        line: int | None,
        problem: str,
        suggestion: str,
        reason: str,
        source: str,
        *,
        line_end: int | None = None,
        location: str | None = None,
    ) -> Issue:
        return Issue(
            category=self.category,
            severity=severity,
            line_start=line,
            line_end=line_end if line_end is not None else line,
            location_description=location or locate(article, line),
            problem=problem,
            suggestion=suggestion,
            reason=reason,
            source=source,
        )

    def error(self, exc: BaseException) -> ErrorInfo:
        message = exc.user_message if isinstance(exc, TurnFailed) else str(exc)
        return ErrorInfo(step=self.step, error_type=type(exc).__name__, message=message[:500])

    async def run(self, state: CheckerState) -> dict[str, Any]:
        """The subgraph's node: never raises, so one broken checker cannot stop the others."""
        report_status(self.status_text)
        article = state.get("parsed_article")
        if article is None:
            return {"errors": [ErrorInfo(step=self.step, error_type="MissingInput", message="no parsed article")]}
        try:
            result = await self.check(article)
        except Exception as exc:
            log.exception("%s failed", self.step)
            return {"errors": [self.error(exc)]}
        return {"issues": result.issues, "skipped": result.skipped, "errors": result.errors}

    def create_graph(self) -> CompiledStateGraph:
        builder = StateGraph(CheckerState, input_schema=CheckerInput, output_schema=CheckerOutput)
        builder.add_node(self.step, self.run)
        builder.add_edge(START, self.step)
        builder.add_edge(self.step, END)
        # Checkpointing a checker would store the article again at every step for no benefit.
        return builder.compile(checkpointer=False, name=self.step)
