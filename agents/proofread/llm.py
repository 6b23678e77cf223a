"""The proofreader's access to the chat model: created on first use, structured calls only."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel

if TYPE_CHECKING:
    from agents.proofread.schemas import ParsedArticle
    from bot.config import Settings
    from bot.llm import ModelProvider

Model = TypeVar("Model", bound=BaseModel)


class ProofreadLLM:
    """Wraps the runtime's ModelProvider. Nothing is created until a checker asks for the model;
    every call is structured output tagged "nostream" and binds no tools, so text inside an
    article can never make the model call anything."""

    def __init__(self, models: ModelProvider | None = None, settings: Settings | None = None) -> None:
        self._models = models
        self._settings = settings

    @property
    def models(self) -> ModelProvider:
        if self._models is None:
            from bot.config import load_settings
            from bot.llm import ModelProvider

            self._models = ModelProvider.from_settings(self._settings or load_settings())
        return self._models

    @property
    def available(self) -> bool:
        """False with the offline model: it cannot judge prose or technical claims."""
        return not self.models.is_offline

    async def structured(self, schema: type[Model], system: str, user: str) -> Model:
        result: Any = await self.models.ainvoke(
            lambda model: model.with_structured_output(schema),
            [SystemMessage(system), HumanMessage(user)],
            config={"tags": ["nostream"]},
            purpose="check",
        )
        if isinstance(result, schema):
            return result
        if isinstance(result, dict):
            return schema.model_validate(result)
        if isinstance(result, str):
            return schema.model_validate_json(result)
        raise TypeError(f"model returned {type(result).__name__}, expected {schema.__name__}")

    async def text(self, system: str, user: str, *, stream: bool = True) -> str:
        """A plain answer (follow-up questions); streamed to the user unless stream=False."""
        config: RunnableConfig = {} if stream else {"tags": ["nostream"]}
        message = await self.models.ainvoke(
            lambda model: model, [SystemMessage(system), HumanMessage(user)], config=config
        )
        content = getattr(message, "content", message)
        if isinstance(content, list):
            content = "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
        return str(content)


_SPACE = re.compile(r"\s+")


def anchor_quote(article: ParsedArticle, line: int | None, quote: str, window: int = 3) -> int | None:
    """The line that really contains `quote`: the claimed line, else the nearest within `window`
    lines, else anywhere in the body. None when the quote is not in the article (a model's
    invention): such findings are dropped rather than pinned to a wrong line."""
    needle = _SPACE.sub("", quote).strip("「」\"'`")
    if not needle:
        return None
    lines = article.lines

    def has(number: int) -> bool:
        return 1 <= number <= len(lines) and needle in _SPACE.sub("", lines[number - 1])

    if line is not None:
        for distance in range(window + 1):
            for candidate in (line - distance, line + distance):
                if has(candidate):
                    return candidate
    for number in range(article.body_start_line, len(lines) + 1):
        if has(number):
            return number
    return None
