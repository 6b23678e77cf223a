"""ConversationKey: the one mapping from a platform conversation to a checkpoint thread id."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class ConversationKey:
    """`{platform}:{part}:…`: each platform names its conversations with its own parts (Slack's
    team, channel and thread; Discord's guild and thread); the console's are `console:{name}`."""

    platform: str
    parts: tuple[str, ...]

    @property
    def thread_id(self) -> str:
        return ":".join((self.platform, *self.parts))

    def __str__(self) -> str:
        return self.thread_id

    @classmethod
    def console(cls, name: str) -> ConversationKey:
        return cls("console", (name,))

    @classmethod
    def parse(cls, thread_id: str) -> ConversationKey:
        platform, *parts = thread_id.split(":")
        if not parts:
            raise ValueError(f"not a conversation thread id: {thread_id!r}")
        return cls(platform, tuple(parts))

    def button_payload(self, value: str, limit: int) -> str | None:
        """What a button carries to resume this conversation's waiting graph with `value`, so a
        press works after a restart; None when it would exceed the platform's `limit`."""
        encoded = json.dumps({"k": self.thread_id, "v": value}, ensure_ascii=False, separators=(",", ":"))
        return encoded if len(encoded) <= limit else None

    @classmethod
    def from_button_payload(cls, raw: str, platform: str) -> tuple[ConversationKey, str] | None:
        """(conversation, value) from a button's payload; None if malformed or from another platform."""
        try:
            data = json.loads(raw)
            key = cls.parse(str(data["k"]))
            value = str(data["v"])
        except (ValueError, KeyError, TypeError):
            return None
        return (key, value) if key.platform == platform else None
