"""Progress messages for the user, written to the graph's custom stream."""

from __future__ import annotations

from langgraph.config import get_stream_writer

from bot.events import Status


def report_status(text: str) -> None:
    """Emit a Status event; a no-op when called outside a running graph (e.g. in a unit test)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    writer(Status(text=text))
