"""The /hotel agent's state in three layers, and the structured answer the model returns."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from pydantic import BaseModel, Field, field_validator

from bot.history import add_bounded_messages


class ToolContext(TypedDict, total=False):
    """Hidden runtime data: injected into tools that ask for it, never shown in a tool schema."""

    currency: str  # the user's currency, ISO code
    locale: str
    timezone: str
    today: str  # ISO date in the user's time zone: every relative date is resolved against it
    turn_id: str


class HotelFacts(TypedDict, total=False):
    """What the system keeps about one hotel seen in a tool result (prices in the hotel's currency)."""

    id: str
    name: str
    city: str
    district: str
    stars: int
    rating: float
    review_count: int
    latitude: float
    longitude: float
    thumbnail_url: str
    currency: str
    price: float | None  # average nightly price for the searched dates
    total: float | None
    available: bool
    check_in: str
    check_out: str


class MemoryEntry(TypedDict, total=False):
    """One tool use, summarised for later turns (see context.py)."""

    turn_id: str
    tool: str
    summary: str  # one line the model reads instead of the full result
    params: dict[str, Any]
    hotel_ids: list[str]
    shown: list[str]  # names of the hotels recommended to the user, in order
    shown_prices: list[str]  # their nightly prices in the user's currency ("$182/night")


class TurnRecord(TypedDict, total=False):
    """This turn's bookkeeping: tool calls made, hotel results found, the structured answer."""

    turn_id: str
    calls: dict[str, int]
    rounds: int
    limit_hit: bool
    hotel_ids: list[str]
    answer: dict[str, Any] | None
    recommended: list[dict[str, Any]]


class Metadata(TypedDict, total=False):
    current: TurnRecord
    memory: list[MemoryEntry]
    hotels: dict[str, HotelFacts]
    last_recommended: list[dict[str, Any]]


def merge_metadata(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Shallow merge: a node replaces the keys it writes; writers trim what they write."""
    return {**(left or {}), **(right or {})}


class HotelState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_bounded_messages]  # what the model sees
    tool_context: ToolContext
    metadata: Annotated[dict[str, Any], merge_metadata]  # accumulated tool results, for the system


def new_turn(turn_id: str) -> TurnRecord:
    return TurnRecord(turn_id=turn_id, calls={}, rounds=0, limit_hit=False, hotel_ids=[], answer=None,
                      recommended=[])


# --- structured output -----------------------------------------------------------------------


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class HotelPick(BaseModel):
    name: str = Field(description="Hotel name exactly as in the tool results")
    rating: str = Field(default="", description="Guest rating as shown, e.g. 4.5")
    price: str = Field(default="", description="Nightly price as shown, e.g. $182")

    @field_validator("rating", "price", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return _as_text(value)


class HotelAnswer(BaseModel):
    """The final answer: a short recommendation text and the hotels it recommends."""

    text: str = Field(description="The reply to the user")
    hotels: list[HotelPick] = Field(default_factory=list, description="Up to 3 recommended hotels")
