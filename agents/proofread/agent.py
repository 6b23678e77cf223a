"""ProofreadAgent: the /proofread command's contract with the runtime."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from agents.proofread.config import GraphConfig
from agents.proofread.graph import ProofreadGraphBuilder, build_graph
from agents.proofread.linter import WORKER as LINTER
from agents.proofread.report import summary_card
from bot.agent import AgentDefinition, AgentDeps, BadInput, IncomingFile, TurnInput
from bot.commands import CommandOption
from bot.config import ConfigError, Settings
from bot.events import Attachment, Final

TEXT_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".text")


class ProofreadAgent(AgentDefinition):
    name = "proofread"
    command = "/proofread"
    summary = "Proofread a Markdown tech article (Zenn, Qiita or plain; Japanese or English)"
    usage = "<article text>, or attach a .md file; then “explain issue 3” or send a new version"
    summary_ja = "Markdownの技術記事（Zenn・Qiitaなど、日本語・英語）を校正します"
    usage_ja = "<記事の本文>、または .md ファイルを添付。続けて「3番目の指摘を説明して」や新しい版を送れます"
    options = (
        CommandOption("article", "The Markdown article (or attach it as a file)", required=False),
        CommandOption("file", "The article as a .md file", kind="file", required=False),
    )
    intent_words = ("proofread", "校正", "review my article", "check my article", "記事をチェック", "添削")

    def __init__(self, config: GraphConfig | None = None) -> None:
        self._given = config
        self.config = config or GraphConfig()
        self.builder: ProofreadGraphBuilder | None = None

    def load_settings(self, settings: Settings | None = None) -> GraphConfig:
        """PROOFREAD_* variables (GraphConfig.from_env); a config given to the constructor wins."""
        if self._given is not None:
            return self._given
        try:
            return GraphConfig.from_env()
        except ValueError as exc:
            raise ConfigError(f"Invalid configuration:\n  {exc}") from None

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        self.config = deps.agent_settings or self.config
        graph, self.builder = build_graph(
            deps,
            config=self.config,
            http_transport=deps.extra.get("proofread_http_transport"),
            checkers=deps.extra.get("proofread_checkers"),
        )
        # Start the linter's worker process now rather than during the first review.
        await asyncio.to_thread(LINTER.start)
        return graph

    async def close(self) -> None:
        await asyncio.to_thread(LINTER.close)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        limit = self.config.max_article_bytes
        text = turn.text
        if "\x00" in text:
            raise BadInput("That looks like binary data; please send the article as Markdown text.",
                           ja="バイナリデータのようです。記事は Markdown のテキストで送ってください。")
        if len(text.encode("utf-8")) > limit:
            raise _too_large("The article", "記事", len(text.encode("utf-8")), limit)
        attachment_text: str | None = None
        filename: str | None = None
        attachment = _pick_attachment(turn.attachments)
        if attachment is not None:
            if len(attachment.content) > limit:
                raise _too_large(f"`{attachment.filename}`", f"`{attachment.filename}`", len(attachment.content), limit)
            attachment_text = attachment.text()  # BadInput for binary or non-UTF-8 files
            if not attachment_text.strip():
                raise BadInput(f"`{attachment.filename}` is empty.", ja=f"`{attachment.filename}` は空です。")
            filename = attachment.filename
        if not text.strip() and attachment_text is None:
            raise BadInput("Send the article after /proofread, or attach it as a .md file.",
                           ja="/proofread の後に記事を続けて送るか、.md ファイルを添付してください。")
        return {"incoming": {"text": text, "attachment": attachment_text, "filename": filename}, "user": turn.user_id}

    def final(self, state: dict[str, Any]) -> Final:
        review = state.get("review")
        data: dict[str, Any] = {"score": None, "approved": None, "counts": None, "issues": []}
        if review:
            data = {
                "score": review["score"],
                "approved": review["approved"],
                "counts": review["counts"],
                "issues": review["issues"],
                "errors": review["errors"],
                "skipped": review["skipped"],
                "comparison": review.get("comparison"),
                "version": review.get("version", 1),
                "fixes": {key: value for key, value in (review.get("fixes") or {}).items()
                          if key in ("count", "counts", "fixed_name", "diff_name")},
            }
        action = state.get("last_action")
        data["action"] = action
        if review and action in ("review", "recheck"):
            return Final(
                text=state.get("reply", ""),
                cards=[summary_card(review)],
                data=data,
                files=[Attachment(filename="proofread-report.md", content=review["report"]), *_fix_files(review)],
            )
        return Final(text=state.get("reply", ""), data=data)


def _fix_files(review: dict[str, Any]) -> list[Attachment]:
    """The fixed copy of the article and its diff, when a safe fix applied."""
    fixes = review.get("fixes") or {}
    if not fixes.get("count") or "fixed" not in fixes:
        return []
    return [
        Attachment(filename=fixes["fixed_name"], content=fixes["fixed"]),
        Attachment(filename=fixes["diff_name"], content=fixes["diff"], mime_type="text/x-diff"),
    ]


def _pick_attachment(files: tuple[IncomingFile, ...]) -> IncomingFile | None:
    if not files:
        return None
    return next((f for f in files if f.filename.lower().endswith(TEXT_SUFFIXES)), files[0])


def _too_large(what: str, what_ja: str, size: int, limit: int) -> BadInput:
    return BadInput(
        f"{what} is {size / 1000:.0f} KB; the proofreader accepts articles up to {limit // 1000} KB. "
        "Split it and send the parts separately.",
        ja=f"{what_ja}は {size / 1000:.0f} KB あります。校正できる記事は {limit // 1000} KB までです。分けて送ってください。",
    )


AGENT = ProofreadAgent()
