"""The terminal front end: `python -m bot console` and `python -m bot ask`."""

from adapters.console.app import ask, chat

__all__ = ["ask", "chat"]
