"""The thread graph: each turn is routed (conditional entry) to a review of a new article version,
or to an answer about the stored report."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.proofread.checkers import CHECKER_CLASSES, BaseChecker, CheckContext
from agents.proofread.config import GraphConfig
from agents.proofread.followup import (
    HELP,
    HELP_JA,
    NO_REPORT,
    NO_REPORT_JA,
    RECHECK_NEEDS_ARTICLE,
    RECHECK_NEEDS_ARTICLE_JA,
    classify_turn,
    describe_issue,
    find_issue,
    in_language,
    list_issues,
    report_digest,
)
from agents.proofread.llm import ProofreadLLM
from agents.proofread.prompts import render_prompt
from agents.proofread.report import render_summary, report_language
from agents.proofread.review import build_review_graph, run_review
from agents.proofread.state import ThreadState
from agents.proofread.status import report_status
from bot import workpool
from bot.faults import TurnFailed

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from bot.agent import AgentDeps
    from bot.config import Settings
    from bot.llm import ModelProvider

MAX_MESSAGES = 20
RECURSION_LIMIT = 25


@dataclass
class ProofreadGraphBuilder:
    config: GraphConfig = field(default_factory=GraphConfig)
    models: ModelProvider | None = None
    settings: Settings | None = None
    http_transport: httpx.AsyncBaseTransport | None = None
    # Replace checkers (tests inject a failing one); default: one per enabled category.
    checkers: list[BaseChecker] | None = None
    _llm: ProofreadLLM | None = field(default=None, repr=False)
    _review: CompiledStateGraph | None = field(default=None, repr=False)

    @property
    def llm(self) -> ProofreadLLM:
        # The model client is only created when a checker or a follow-up first needs it.
        if self._llm is None:
            self._llm = ProofreadLLM(self.models, self.settings)
        return self._llm

    @property
    def context(self) -> CheckContext:
        return CheckContext(config=self.config, llm=self.llm, http_transport=self.http_transport)

    def build_checkers(self) -> list[BaseChecker]:
        if self.checkers is not None:
            return self.checkers
        context = self.context
        return [CHECKER_CLASSES[name](context) for name in self.config.checkers]  # type: ignore[index]

    @property
    def review_graph(self) -> CompiledStateGraph:
        if self._review is None:
            self._review = build_review_graph(self.build_checkers(), parallel=self.config.parallel)
        return self._review

    def build(self, checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
        builder = StateGraph(ThreadState)
        builder.add_node("review", self.review_node)
        builder.add_node("explain", self.explain_node)
        builder.add_node("answer", self.answer_node)
        builder.add_conditional_edges(START, route_turn, ["review", "explain", "answer"])
        for node in ("review", "explain", "answer"):
            builder.add_edge(node, END)
        graph = builder.compile(checkpointer=checkpointer, name="proofread")
        return graph.with_config(recursion_limit=RECURSION_LIMIT)  # type: ignore[return-value]

    # --- nodes -------------------------------------------------------------------------------

    async def review_node(self, state: ThreadState) -> dict[str, Any]:
        turn = _turn(state)
        assert turn.article is not None
        incoming = state.get("incoming") or {}
        previous = state.get("review")
        review_input: dict[str, Any] = {"target_article": turn.article, "filename": incoming.get("filename")}
        if previous:
            review_input["previous_review"] = {
                "issues": previous["issues"], "article": state.get("article", ""),
                "score": previous["score"], "version": previous.get("version", 1),
            }
        with workpool.owner(state.get("user")):  # its parsing and checking count against the user's limit
            values = await run_review(self.review_graph, review_input)
        review = values["review"]
        review.setdefault("version", 1)
        summary = render_summary(review)
        described = incoming.get("filename") or "pasted text"
        request = HumanMessage(f"[article version {review['version']}: {described}, {review['line_count']} lines]")
        return {
            "incoming": None,
            "article": values["parsed_article"].raw,
            "filename": incoming.get("filename"),
            "version": review["version"],
            "review": review,
            "reply": summary,
            "last_action": "recheck" if previous else "review",
            "messages": _bounded(state, [request, AIMessage(summary)]),
        }

    async def explain_node(self, state: ThreadState) -> dict[str, Any]:
        turn = _turn(state)
        review = state["review"] or {}
        question = (state.get("incoming") or {}).get("text", "")
        issue = find_issue(review, turn.number or 0)
        if issue is None:
            total = len(review.get("issues", []))
            reply = (
                f"There is no issue {turn.number if turn.number != -1 else 'to explain'}; the last report has {total} "
                f"issue{'s' if total != 1 else ''}" + (f" (1–{total})." if total else ".")
            )
        else:
            reply = describe_issue(issue, state.get("article", "").split("\n"), report_language(review))
            if self.llm.available:
                report_status(f"Explaining issue {issue['number']}…")
                try:
                    reply = await self.llm.text(
                        render_prompt("explain_issue"),
                        f"Question: {question}\n\nFinding (data):\n{json.dumps(issue, ensure_ascii=False)}\n\n{reply}",
                    )
                except TurnFailed:
                    pass  # the report's own explanation is still a good answer
        return self._answered(state, question, reply, "explain")

    async def answer_node(self, state: ThreadState) -> dict[str, Any]:
        turn = _turn(state)
        question = (state.get("incoming") or {}).get("text", "")
        review = state.get("review")
        if turn.kind == "no_report" or review is None:
            reply = in_language(NO_REPORT, NO_REPORT_JA, question)
        elif turn.kind == "recheck_without_article":
            reply = in_language(RECHECK_NEEDS_ARTICLE, RECHECK_NEEDS_ARTICLE_JA, question)
        elif turn.kind == "list":
            reply = list_issues(review)
        elif self.llm.available:
            try:
                reply = await self.llm.text(
                    render_prompt("answer_followup"),
                    f"Report summary (data):\n{report_digest(review)}\n\nQuestion: {question}",
                )
            except TurnFailed as exc:
                reply = f"{exc.user_message}\n\n{HELP}"
        else:
            reply = in_language(HELP, HELP_JA, question)
        return self._answered(state, question, reply, turn.kind)

    def _answered(self, state: ThreadState, question: str, reply: str, action: str) -> dict[str, Any]:
        return {
            "incoming": None,
            "reply": reply,
            "last_action": action,
            "messages": _bounded(state, [HumanMessage(question[:2000]), AIMessage(reply)]),
        }


def _turn(state: ThreadState) -> Any:
    incoming = state.get("incoming") or {}
    return classify_turn(incoming.get("text", ""), incoming.get("attachment"), bool(state.get("review")))


def route_turn(state: ThreadState) -> str:
    """Conditional entry: a new article version is reviewed; anything else is answered."""
    kind = _turn(state).kind
    if kind == "review":
        return "review"
    if kind == "explain":
        return "explain"
    return "answer"


def _bounded(state: ThreadState, new: list[Any]) -> list[Any]:
    """New messages plus removals that keep the history at MAX_MESSAGES."""
    existing = state.get("messages") or []
    excess = len(existing) + len(new) - MAX_MESSAGES
    removals = [RemoveMessage(id=m.id) for m in existing[: max(0, excess)] if m.id]
    return [*removals, *new]


def build_graph(
    deps: AgentDeps,
    *,
    config: GraphConfig | None = None,
    http_transport: httpx.AsyncBaseTransport | None = None,
    checkers: list[BaseChecker] | None = None,
) -> tuple[CompiledStateGraph, ProofreadGraphBuilder]:
    """The /proofread graph with `config` (default: `deps.agent_settings`); the builder is returned too
    because follow-up turns reuse its checkers and model client."""
    builder = ProofreadGraphBuilder(
        config=config or deps.agent_settings or GraphConfig(), models=deps.models, settings=deps.settings,
        http_transport=http_transport, checkers=checkers,
    )
    return builder.build(deps.checkpointer), builder

