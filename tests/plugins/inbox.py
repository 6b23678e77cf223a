"""A platform that lives outside the project's packages, loaded as a plugin
(CONCIERGE_PLATFORM_PLUGINS=tests.plugins.inbox): `python -m bot inbox` answers JSON-lines messages
from stdin ({"id", "thread", "user", "text"}) and prints what it does on its surface as JSON lines
({"op": "post" | "edit" | "delete", "thread", "id", "text"}). Its settings are its own (INBOX_*)."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.agent import CliCommand
from bot.conversation import ConversationKey
from bot.events import Attachment, Card
from bot.platform import PlatformBot
from bot.render import Surface
from bot.storage import ThreadRecord


class InboxSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    workspace: str = Field("inbox", min_length=1, validation_alias=AliasChoices("INBOX_WORKSPACE"))
    max_chars: int = Field(2000, ge=100, validation_alias=AliasChoices("INBOX_MAX_CHARS"))


class InboxSurface(Surface):
    name, edit_interval = "the inbox", 0.0

    def __init__(self, out: TextIO, key: ConversationKey, max_chars: int, ids: Iterator[int]) -> None:
        self.out, self.key, self.max_chars, self.ids = out, key, max_chars, ids
        self.answer = self

    def _say(self, op: str, message_id: str, text: str = "") -> None:
        self.out.write(json.dumps({"op": op, "thread": self.key.parts[-1], "id": message_id, "text": text}) + "\n")
        self.out.flush()

    async def post(self, text: str) -> str:
        message_id = f"m{next(self.ids)}"
        self._say("post", message_id, text)
        return message_id

    async def edit(self, message_id: str, text: str) -> None:
        self._say("edit", message_id, text)

    async def delete(self, message_id: str) -> None:
        self._say("delete", message_id)

    async def post_cards(self, cards: Sequence[Card]) -> list[str]:
        return [await self.post(card.title) for card in cards]

    async def post_file(self, file: Attachment) -> None:
        await self.post(f"[{file.filename}]")


class InboxBot(PlatformBot):
    platform = "inbox"

    def __init__(self, settings: Any, runtime: Any, out: TextIO) -> None:
        super().__init__(settings, runtime)
        self.inbox, self.out, self.ids = settings.section(InboxSettings), out, itertools.count(1)

    def key(self, thread: str) -> ConversationKey:
        return ConversationKey(self.platform, (self.inbox.workspace, thread))

    def surface(self, key: ConversationKey) -> InboxSurface:
        return InboxSurface(self.out, key, self.inbox.max_chars, self.ids)

    async def recovery_surface(self, key: ConversationKey, record: ThreadRecord) -> InboxSurface:
        return self.surface(key)


async def _inbox(app: Any, args: argparse.Namespace) -> int:
    async with await app.open_runtime() as runtime:
        bot = InboxBot(app.settings, runtime, sys.stdout)
        for line in sys.stdin:
            message = json.loads(line)
            key = bot.key(str(message["thread"]))
            await bot.message(
                bot.surface(key), key, str(message["text"]), delivery_id=message.get("id"),
                user_id=str(message["user"]), workspace_id=bot.inbox.workspace,
            )
        await bot.close()
    return 0


CLI_COMMANDS = (CliCommand("inbox", "answer JSON-lines messages from stdin", _inbox),)
