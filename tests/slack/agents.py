"""Small agents for the Slack adapter tests: one that reports progress and answers with cards,
one that reads an attached Markdown file and answers with a summary card and a report file."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from bot.agent import AgentDefinition, AgentDeps, BadInput, TurnInput
from bot.commands import CommandOption
from bot.events import Attachment, Card, Final, Status, Token


class QueryState(TypedDict):
    query: str
    turns: int
    answer: str


class CardsAgent(AgentDefinition):
    """Reports `statuses` progress lines (`delay` apart), streams a few tokens, answers with hotel cards."""

    name = "hotel"
    command = "/hotel"
    summary = "find hotels"
    usage = "Paris under $200"
    intent_words = ("hotel",)

    def __init__(self, *, statuses: int = 3, delay: float = 0.0, answer_chars: int = 0) -> None:
        self.statuses = statuses
        self.delay = delay
        self.answer_chars = answer_chars

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        async def search(state: QueryState) -> dict[str, Any]:
            write = get_stream_writer()
            for i in range(self.statuses):
                write(Status(text=f"Searching hotels ({i + 1}/{self.statuses}) for {state['query']}…"))
                if self.delay:
                    await asyncio.sleep(self.delay)
            answer = f"Turn {state.get('turns', 0) + 1}: 2 hotels for {state['query']}."
            if self.answer_chars:
                answer += "\n\n" + "\n\n".join(
                    f"Paragraph {i}: " + "lorem ipsum " * 20 for i in range(self.answer_chars // 250 + 1)
                )
            for word in answer.split(" ")[:5]:
                write(Token(text=word + " "))
            return {"turns": state.get('turns', 0) + 1, "answer": answer}

        builder = StateGraph(QueryState)
        builder.add_node("search", search)
        builder.add_edge(START, "search")
        builder.add_edge("search", END)
        return builder.compile(checkpointer=deps.checkpointer)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        return {"query": turn.text}

    def final(self, state: dict[str, Any]) -> Final:
        cards = [
            Card(
                title="Hôtel Lumière",
                subtitle="Le Marais",
                fields={"Price": "$180 / night", "Rating": "4.6 ★", "District": "Le Marais"},
                image_url="https://img.example.com/lumiere.jpg",
                url="https://hotels.example.com/lumiere",
                lat=48.8566,
                lon=2.3522,
            ),
            Card(
                title="Hotel Rive",
                subtitle="Saint-Germain",
                fields={"Price": "$150 / night", "Rating": "4.2 ★", "District": "Saint-Germain"},
                image_url="https://img.example.com/rive.jpg",
                lat=48.853,
                lon=2.333,
            ),
        ]
        return Final(text=state["answer"], cards=cards, data={"turns": state["turns"]})


class ReportState(TypedDict):
    document: str
    filename: str


class ReportAgent(AgentDefinition):
    """Proofreads: counts lines of the attached (or typed) Markdown; returns a summary and a report."""

    name = "proofread"
    command = "/proofread"
    summary = "proofread a Markdown article"
    usage = "TEXT, or share a .md file in the thread"
    intent_words = ("proofread",)
    options = (
        CommandOption("article", "The article as text", required=False),
        CommandOption("file", "The article as a .md file", kind="file", required=False),
    )

    async def build(self, deps: AgentDeps) -> CompiledStateGraph:
        def check(state: ReportState) -> dict[str, Any]:
            get_stream_writer()(Status(text=f"Checking {state['filename']}…"))
            return {}

        builder = StateGraph(ReportState)
        builder.add_node("check", check)
        builder.add_edge(START, "check")
        builder.add_edge("check", END)
        return builder.compile(checkpointer=deps.checkpointer)

    def turn_input(self, turn: TurnInput) -> dict[str, Any]:
        if turn.attachments:
            file = turn.attachments[0]
            return {"document": file.text(), "filename": file.filename}
        if not turn.text:
            raise BadInput("Nothing to proofread.")
        return {"document": turn.text, "filename": "message"}

    def final(self, state: dict[str, Any]) -> Final:
        lines = state["document"].splitlines()
        report = f"# Report for {state['filename']}\n\n" + "\n".join(f"- line {i + 1}: ok" for i in range(len(lines)))
        return Final(
            text=f"Proofread {state['filename']}: {len(lines)} lines, no issues.",
            cards=[
                Card(
                    title=f"Proofreading: {state['filename']}",
                    fields={"Score": "100", "Approved": "yes", "Errors": "0", "Warnings": "0"},
                )
            ],
            files=[Attachment(filename="proofread-report.md", content=report)],
            data={"lines": len(lines)},
        )
