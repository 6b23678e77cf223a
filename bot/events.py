"""Stream events: the only thing platform adapters consume from the runtime."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from bot.phrases import say


class Action(BaseModel):
    """A button on a card. Pressing it resumes a graph waiting on an interrupt with `value`."""

    label: str
    value: str
    style: Literal["primary", "danger", "default"] = "default"


class Card(BaseModel):
    """A platform-neutral rich item (a hotel, a product, a report summary)."""

    title: str
    subtitle: str = ""
    fields: dict[str, str] = Field(default_factory=dict)
    image_url: str | None = None
    url: str | None = None
    lat: float | None = None
    lon: float | None = None
    actions: list[Action] = Field(default_factory=list)

    @property
    def map_url(self) -> str | None:
        """A map search for the card's location, when it has one (every platform's "Map" link)."""
        if self.lat is None or self.lon is None:
            return None
        return f"https://www.google.com/maps/search/?api=1&query={self.lat:.6f}%2C{self.lon:.6f}"


class Status(BaseModel):
    type: Literal["status"] = "status"
    text: str


class Token(BaseModel):
    type: Literal["token"] = "token"
    text: str


class ToolStarted(BaseModel):
    type: Literal["tool_started"] = "tool_started"
    name: str
    args_summary: str = ""
    narrated: bool = False  # the agent says this tool's progress itself (Status): no line of its own


class ToolFinished(BaseModel):
    type: Literal["tool_finished"] = "tool_finished"
    name: str
    summary: str = ""
    narrated: bool = False


class Attachment(BaseModel):
    """A file the bot sends with a final answer: text in `content` (a full report), or binary
    `data` (a PNG map), which JSON carries as base64."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    filename: str
    content: str = ""
    data: bytes | None = None
    mime_type: str = "text/markdown"

    @property
    def is_binary(self) -> bool:
        return self.data is not None

    def payload(self) -> bytes:
        """The file's bytes as uploaded: `data`, or `content` encoded as UTF-8."""
        return self.data if self.data is not None else self.content.encode("utf-8")


class Final(BaseModel):
    type: Literal["final"] = "final"
    text: str
    cards: list[Card] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)
    files: list[Attachment] = Field(default_factory=list)


FailureKind = Literal[
    "bad_input",
    "rate_limited",
    "unavailable",
    "misconfigured",
    "timeout",
    "tool_failed",
    "internal",
    "busy",
]


class Failure(BaseModel):
    type: Literal["failure"] = "failure"
    kind: FailureKind
    user_message: str
    retry_after: float | None = None


INTERNAL_ERROR = say("internal_error")


StreamEvent = Annotated[
    Status | Token | ToolStarted | ToolFinished | Final | Failure, Field(discriminator="type")
]
stream_event_adapter: TypeAdapter[StreamEvent] = TypeAdapter(StreamEvent)


def is_terminal(event: StreamEvent) -> bool:
    return isinstance(event, Final | Failure)
