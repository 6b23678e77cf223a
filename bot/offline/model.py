"""OfflineChatModel: binds tools, emits real tool calls, streams text, returns structured output.

Domain knowledge lives in skills that agents bring (`AgentDefinition.offline_skills`, handed to the
model when it is built); the model itself only routes a request to the first skill that answers
it and falls back to a plain, honest reply."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from bot.locale import is_japanese


@dataclass
class OfflineRequest:
    """Everything a skill may look at: the conversation, the bound tools, the wanted schema."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]] = field(default_factory=list)
    schema: dict[str, Any] | None = None  # JSON schema when structured output is asked for

    @property
    def tool_names(self) -> set[str]:
        return {t["function"]["name"] for t in self.tools}

    @property
    def system(self) -> str:
        return "\n".join(str(m.content) for m in self.messages if isinstance(m, SystemMessage))

    @property
    def last_human(self) -> str:
        for message in reversed(self.messages):
            if isinstance(message, HumanMessage):
                return message.text if hasattr(message, "text") and isinstance(message.text, str) else str(message.content)
        return ""

    @property
    def turn(self) -> list[BaseMessage]:
        """Messages after the last human message (this turn's tool calls and results)."""
        for i in range(len(self.messages) - 1, -1, -1):
            if isinstance(self.messages[i], HumanMessage):
                return self.messages[i + 1 :]
        return list(self.messages)

    @property
    def tool_results(self) -> list[ToolMessage]:
        return [m for m in self.turn if isinstance(m, ToolMessage)]


class OfflineSkill(Protocol):
    """Answers the requests it understands; returns None to let the next skill try.

    Return an AIMessage (text and/or tool_calls) or, when `request.schema` is set, a dict that
    satisfies the schema."""

    def respond(self, request: OfflineRequest) -> AIMessage | dict[str, Any] | None: ...


def tool_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A tool call dict for AIMessage(tool_calls=[...]) with a fresh, deterministic-format id."""
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:20]}", "type": "tool_call"}


def _fallback(request: OfflineRequest) -> AIMessage | dict[str, Any]:
    results = request.tool_results
    if request.schema is not None:
        text = "\n".join(str(m.content) for m in results) or "(offline model: nothing to report)"
        return _fill_schema(request.schema, text)
    if results:
        return AIMessage(content="\n\n".join(str(m.content) for m in results))
    return AIMessage(content=FALLBACK_JA if is_japanese(request.last_human) else FALLBACK)


FALLBACK = (
    "I'm running on the offline model, which only understands the requests its agents taught it. "
    "Type /help to see the commands and an example of each."
)
FALLBACK_JA = (
    "オフラインのモデルで動いているため、各エージェントが教えた依頼しか理解できません。"
    "/help でコマンドと例を確認できます。"
)


def _fill_schema(schema: dict[str, Any], text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type")
        if kind == "string":
            out[name] = text
        elif kind == "array":
            out[name] = []
        elif kind in ("integer", "number"):
            out[name] = 0
        elif kind == "boolean":
            out[name] = False
    return out


_WORD = re.compile(r"\S+\s*|\s+")


class OfflineChatModel(BaseChatModel):
    """A deterministic rule-based chat model; see README for what it understands."""

    skills: tuple[Any, ...] = ()  # OfflineSkill objects, asked in order
    tools: list[dict[str, Any]] = []
    structured_schema: dict[str, Any] | None = None

    @property
    def _llm_type(self) -> str:
        return "concierge-offline"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:  # type: ignore[override]
        return self.model_copy(update={"tools": [convert_to_openai_tool(t) for t in tools]})

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[LanguageModelInput, Any]:  # type: ignore[override]
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            json_schema = schema.model_json_schema()
            parse = schema.model_validate_json
        else:
            json_schema = convert_to_openai_tool(schema)["function"]["parameters"] if not isinstance(schema, dict) or "properties" not in schema else schema
            parse = json.loads  # type: ignore[assignment]
        model = self.model_copy(update={"structured_schema": json_schema, "tools": []})
        return model | RunnableLambda(lambda message: parse(str(message.content)))

    def _plan(self, messages: list[BaseMessage]) -> AIMessage:
        request = OfflineRequest(messages=list(messages), tools=self.tools, schema=self.structured_schema)
        answer: AIMessage | dict[str, Any] | None = None
        for skill in self.skills:
            answer = skill.respond(request)
            if answer is not None:
                break
        if answer is None:
            answer = _fallback(request)
        if isinstance(answer, dict):
            return AIMessage(content=json.dumps(answer, ensure_ascii=False))
        return answer

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._plan(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._plan(messages))])

    def _chunks(self, message: AIMessage) -> Iterator[AIMessageChunk]:
        text = str(message.content)
        pieces = _WORD.findall(text) if text else []
        for piece in pieces:
            yield AIMessageChunk(content=piece, id=message.id)
        if message.tool_calls:
            yield AIMessageChunk(
                content="",
                id=message.id,
                tool_call_chunks=[
                    {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i, "type": "tool_call_chunk"}
                    for i, c in enumerate(message.tool_calls)
                ],
            )
        if not pieces and not message.tool_calls:
            yield AIMessageChunk(content="", id=message.id)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(self._plan(messages)):
            if run_manager and chunk.content:
                run_manager.on_llm_new_token(str(chunk.content), chunk=ChatGenerationChunk(message=chunk))
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(self._plan(messages)):
            generation = ChatGenerationChunk(message=chunk)
            if run_manager and chunk.content:
                await run_manager.on_llm_new_token(str(chunk.content), chunk=generation)
            yield generation
