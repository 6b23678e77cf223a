"""The offline model: a deterministic, rule-based chat model that drives the same graphs as an LLM."""

from bot.offline.model import OfflineChatModel, OfflineRequest, OfflineSkill, tool_call

__all__ = ["OfflineChatModel", "OfflineRequest", "OfflineSkill", "tool_call"]
