"""The offline model: a deterministic, rule-based chat model that drives the same graphs as an LLM."""

from bot.offline.model import OfflineChatModel, OfflineRequest, OfflineSkill, register_skill

__all__ = ["OfflineChatModel", "OfflineRequest", "OfflineSkill", "register_skill"]
