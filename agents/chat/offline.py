"""The offline model's small-talk skill: greetings, thanks, and "what can you do?" answered with the
commands this bot has (read from the chat prompt's list, which the command table writes), in the
language the message was written in. Anything else is left to the model's honest fallback."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage

from bot.locale import is_japanese, rule
from bot.offline.extract import THANKS_WORDS
from bot.offline.model import OfflineRequest

# The sentence of the chat prompt (prompts/system.md) that lists the commands: the skill answers
# only where it is, so no other agent's tool-less call is taken for small talk.
COMMANDS_INTRO = "Besides talking, you offer these commands:"
# "`/hotel` (Find hotels…), `/proofread` (… (Zenn, Qiita or plain…))." — a description may hold parentheses.
_COMMAND = re.compile(r"`(/[\w-]+)` \((.*?)\)(?=, `/|\.(?:\s|$))", re.DOTALL)
_ABILITIES = rule(
    r"\bwhat\s+(?:can|do|else\s+can)\s+you\s+(?:do|offer|help)\b|\bwhat\s+are\s+you\b|\bwho\s+are\s+you\b|^\s*help\b"
    r"|\bhow\s+(?:do|can)\s+i\s+use\s+you\b|\bcan\s+you\s+help\b|\bcommands?\b"
    r"|何ができ|なにができ|できること|使い方|あなたは(?:誰|だれ|何)|コマンド"
)
_CAN_YOU = rule(r"\b(?:can|could)\s+you\b|\bare\s+you\s+able\s+to\b|できますか|できる？|できる\?")
_GREETING = rule(
    r"^\s*(?:hi|hello|hey|hiya|good\s+(?:morning|afternoon|evening)|greetings)\b|こんにちは|こんばんは|おはよう|はじめまして|やあ"
)
_THANKS = rule(rf"\b(?:{THANKS_WORDS})\b|ありがとう|感謝")


class ChatSkill:
    def respond(self, request: OfflineRequest) -> AIMessage | dict[str, Any] | None:
        system = request.system
        if request.tools or request.schema is not None or COMMANDS_INTRO not in system:
            return None
        text = request.last_human
        ja = is_japanese(text)
        commands = _COMMAND.findall(system.split(COMMANDS_INTRO, 1)[1])
        if _THANKS.search(text) and not _ABILITIES.search(text):
            return AIMessage(content="どういたしまして！ ほかにもお手伝いできることがあればどうぞ。" if ja
                             else "You're welcome! Anything else I can help with?")
        greeting, abilities = bool(_GREETING.search(text)), bool(_ABILITIES.search(text))
        asks_other = not abilities and bool(_CAN_YOU.search(text))  # "can you book flights?"
        if not (greeting or abilities or asks_other):
            return None
        if ja:
            opening = ("こんにちは！" if greeting else "") + (
                "オフラインのモデルでは、次のコマンドでできることだけをお手伝いできます。" if asks_other else "")
            listed = "、".join(f"`{name}`" for name, _ in commands)
            return AIMessage(content=f"{opening}使えるコマンド: {listed}。/help でそれぞれの例を確認できます。")
        opening = ("Hi! " if greeting else "") + ("On the offline model I can only do what these commands do. "
                                                  if asks_other else "")
        listed = "\n".join(f"• `{name}` — {what}" for name, what in commands)
        return AIMessage(content=f"{opening}Here is what I can help with:\n{listed}\nType /help for an example of each.")
