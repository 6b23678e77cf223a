"""BaseChecker: one checker is one small subgraph over CheckerState; its failures become ErrorInfo."""

from __future__ import annotations

import asyncio
import logging
import re
from abc import ABC
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

import httpx
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.proofread.config import GraphConfig
from agents.proofread.linter import WORKER as LINTER
from agents.proofread.linter import Failure, LinterWorker, pymarkdown_scan
from agents.proofread.llm import ProofreadLLM
from agents.proofread.parser import parse_article
from agents.proofread.schemas import (
    Category,
    ErrorInfo,
    Issue,
    ParsedArticle,
    Platform,
    Severity,
    SkippedCheck,
)
from agents.proofread.state import CheckerInput, CheckerOutput, CheckerState
from agents.proofread.status import report_status
from bot import workpool
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


# A header of `key: value` (Qiita's export: title:, tags:, url:, …, body:) or Franklin.jl
# `@def key = value` lines at the very top, with no front-matter fences around it.
# `key: value`, Franklin's `@def key = value`, and Nikola's `.. key: value` (in a leading comment).
_HEADER_LINE = re.compile(r"^(?:\.\.\s+)?(?:@def\s+\w+\s*=|[A-Za-z_]\w*:(?:\s|$))")
# `title:` in Nikola's and Franklin's headers, `Title:` in Pelican's.
_PANDOC_TITLE = re.compile(r"^%\s+(\S.*)$")
_HEADER_TITLE = re.compile(r"^(?:\.\.\s+)?(?:@def\s+title\s*=|[Tt]itle:)\s*(.*)$")


def metadata_header(article: ParsedArticle) -> tuple[int, str | None]:
    """(last line, title) of an unfenced metadata header at the top of an article without front
    matter, bare or inside a leading HTML comment; (0, None) when there is none. Two such lines at
    least, from the first line on."""
    if article.front_matter is not None:
        return 0, None
    if article.lines and (pandoc := _PANDOC_TITLE.match(article.lines[0])):
        return 1, pandoc.group(1).strip()  # Pandoc's title block: `% Title` (then `% author`, `% date`)
    last, title = 0, None
    # Qiita's exporters keep the same header inside a leading comment: `<!--` / `title: …` / `-->`.
    commented = bool(article.lines) and article.lines[0].strip() == "<!--"
    for number, line in enumerate(article.lines, start=1):
        if commented and number == 1:
            continue
        if commented and line.strip() == "-->":
            return (number, title) if number >= 4 else (0, None)
        if not _HEADER_LINE.match(line):
            break
        if found := _HEADER_TITLE.match(line):
            title = found.group(1).strip().strip('"') or title
        last = number
    return (last, title) if last >= 2 else (0, None)


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
    status_text_ja: ClassVar[str] = ""  # the same, shown while a Japanese article is checked

    def __init__(self, context: CheckContext) -> None:
        self.context = context

    @property
    def config(self) -> GraphConfig:
        return self.context.config

    @property
    def step(self) -> str:
        return f"check_{self.category}"

    async def check(self, article: ParsedArticle) -> CheckResult:
        """Deterministic checkers only implement rules(); it runs off the event loop (run_rules)."""
        return CheckResult(issues=await self.run_rules(article))

    async def run_rules(self, article: ParsedArticle, method: str = "rules", *, seconds: float | None = None) -> list[Issue]:
        """`self.<method>(article)` in the application's work pool, whose process is killed when
        the job overruns (`seconds`, default CONCIERGE_WORK_TIMEOUT) or the turn is cancelled; in a
        thread where no pool runs (a graph built directly, as in tests). The worker gets the
        article's text and parses it itself."""
        if workpool.installed() is None:
            return await asyncio.to_thread(getattr(self, method), article)  # type: ignore[no-any-return]
        return await workpool.run_untrusted(
            rules_job, type(self), self.config, method, article.raw, article.declared_platform, timeout=seconds
        )

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
        if isinstance(exc, workpool.WorkFailed):
            exc = article_failure(exc)
        message = exc.user_message if isinstance(exc, TurnFailed) else str(exc)
        return ErrorInfo(step=self.step, error_type=type(exc).__name__, message=message[:500])

    async def run(self, state: CheckerState) -> dict[str, Any]:
        """The subgraph's node: never raises, so one broken checker cannot stop the others."""
        article = state.get("parsed_article")
        japanese = article is not None and article.language == "ja" and self.status_text_ja
        report_status(self.status_text_ja if japanese else self.status_text)
        if article is None:
            return {"errors": [ErrorInfo(step=self.step, error_type="MissingInput", message="no parsed article")]}
        try:
            result = await self.check(article)
        except Exception as exc:
            if isinstance(exc, workpool.WorkFailed) and exc.reason != "error":
                # Stopped by a limit (time, memory) or a lost worker: the pool logged the cause.
                log.warning("%s stopped: %s", self.step, exc.reason)
            else:  # the checker raised: a bug, worth its traceback
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


def article_failure(exc: workpool.WorkFailed) -> TurnFailed:
    """A work-pool failure (bot/workpool.py) in the proofreader's words."""
    if exc.reason == "timeout":
        return TurnFailed(exc.kind, (
            f"This article took too long to check (over {exc.timeout:g} s) and was stopped. "
            "Try sending a smaller part."
        ), fault=exc.fault, ja=(
            f"この記事のチェックに時間がかかりすぎたため（{exc.timeout:g} 秒超）止めました。小さく分けて送ってください。"
        ))
    return exc


@lru_cache(maxsize=2)
def _parsed(text: str, platform: Platform | None) -> ParsedArticle:
    # One review sends the same text to a worker for several checkers: parse it once there.
    return parse_article(text, platform)


class InProcessLinter(LinterWorker):
    """pymarkdownlnt in this process: inside a work-pool job, whose process is the one killed
    when the job overruns."""

    def scan(self, text: str, extensions: tuple[str, ...], disabled: tuple[str, ...], *, timeout: float) -> list[Failure]:
        return pymarkdown_scan(text, extensions, disabled)


def rules_job(
    checker: type[BaseChecker], config: GraphConfig, method: str, text: str, platform: Platform | None = None,
) -> list[Issue]:
    """A checker's rules over `text` (written for `platform`, when the writer said so), in a
    work-pool process (bot/workpool.py)."""
    instance = checker(CheckContext(config=config, llm=ProofreadLLM(), linter=InProcessLinter()))
    return getattr(instance, method)(_parsed(text, platform))  # type: ignore[no-any-return]
