"""Block Kit rendering: pure functions from stream-event models (bot.events) to Slack blocks,
built with slack_sdk's Block Kit models (which also hold Slack's limits), sent as dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    ContextBlock,
    ImageElement,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from adapters.slack.mrkdwn import escape, plain, to_mrkdwn
from bot.conversation import ConversationKey
from bot.editor import clip
from bot.events import Card
from bot.locale import language_of
from bot.render import web_url

MAX_BLOCKS = 50  # per message (https://docs.slack.dev/reference/block-kit/blocks)
MAX_FIELDS = SectionBlock.fields_max_length
MAX_FIELD_TEXT = 2000
MAX_BUTTON_VALUE = ButtonElement.value_max_length
MAX_FALLBACK = 3000

RESUME_ACTION = "concierge.resume"  # buttons that answer a graph waiting on interrupt()
LINK_ACTION = "concierge.link"  # URL buttons (Slack still sends an interaction that must be acked)

Block = dict[str, Any]


def _mrkdwn(text: str, limit: int = SectionBlock.text_max_length) -> MarkdownTextObject:
    return MarkdownTextObject(text=clip(text, limit))


def _label(text: str) -> PlainTextObject:
    return PlainTextObject(text=clip(text, ButtonElement.text_max_length), emoji=True)


# --- cards ------------------------------------------------------------------------------------
def card_blocks(card: Card, key: ConversationKey, *, index: int = 0) -> list[Block]:
    """A card: title (linked), subtitle, fields, thumbnail; a row of map/link and action buttons."""
    title = escape(card.title)
    url = web_url(card.url, ButtonElement.url_max_length)
    heading = f"*<{url}|{title}>*" if url else f"*{title}*"
    text = heading + (f"\n{to_mrkdwn(card.subtitle)}" if card.subtitle else "")
    fields = [
        _mrkdwn(f"*{escape(name)}*\n{to_mrkdwn(str(value))}", MAX_FIELD_TEXT)
        for name, value in card.fields.items()
        if str(value).strip()
    ]
    image = web_url(card.image_url, ButtonElement.url_max_length)
    alt_text = clip(card.title, ImageElement.alt_text_max_length)
    thumbnail = ImageElement(image_url=image, alt_text=alt_text) if image else None
    blocks: list[SectionBlock | ActionsBlock] = [
        SectionBlock(text=_mrkdwn(text), fields=fields[:MAX_FIELDS] or None, accessory=thumbnail)
    ]
    if fields[MAX_FIELDS:]:
        blocks.append(SectionBlock(fields=fields[MAX_FIELDS : 2 * MAX_FIELDS]))

    buttons = []
    if card.map_url:
        map_id = f"{LINK_ACTION}.map.{index}"
        buttons.append(ButtonElement(text=_label("🗺 Map"), url=card.map_url, action_id=map_id))
    for n, action in enumerate(card.actions):
        value = key.button_payload(action.value, MAX_BUTTON_VALUE)
        if value is not None:
            style = action.style if action.style in ("primary", "danger") else None
            action_id = f"{RESUME_ACTION}.{index}.{n}"
            buttons.append(ButtonElement(text=_label(action.label), action_id=action_id, value=value, style=style))
    if buttons:
        row = buttons[: ActionsBlock.elements_max_length]
        blocks.append(ActionsBlock(block_id=f"card-{index}-actions", elements=row))
    return [block.to_dict() for block in blocks]


def card_fallback(card: Card) -> str:
    parts = [card.title]
    if card.subtitle:
        parts.append(plain(card.subtitle))
    parts += [f"{name}: {value}" for name, value in card.fields.items() if str(value).strip()]
    line = " — ".join(parts[:2])
    if len(parts) > 2:
        line += " (" + ", ".join(parts[2:]) + ")"
    if card.actions:
        line += " [" + " / ".join(a.label for a in card.actions) + "]"
    return line


def card_messages(cards: Sequence[Card], key: ConversationKey) -> list[tuple[str, list[Block]]]:
    """Cards as messages of at most 50 blocks each: (plain-text fallback, blocks) pairs."""
    messages: list[tuple[str, list[Block]]] = []
    blocks: list[Block] = []
    lines: list[str] = []
    for index, card in enumerate(cards):
        rendered = card_blocks(card, key, index=index)
        if blocks:
            rendered = [{"type": "divider"}, *rendered]
        if blocks and len(blocks) + len(rendered) > MAX_BLOCKS:
            messages.append((clip("\n".join(lines), MAX_FALLBACK), blocks))
            blocks, lines = [], []
            rendered = rendered[1:]
        blocks.extend(rendered)
        lines.append("• " + card_fallback(card))
    if blocks:
        messages.append((clip("\n".join(lines), MAX_FALLBACK), blocks))
    return messages


def answered_blocks(blocks: Sequence[Block], *, action_id: str, label: str, user_id: str) -> list[Block]:
    """The message after a button press: action buttons replaced by who chose what (links kept)."""
    out: list[Block] = []
    for block in blocks:
        if block.get("type") != "actions":
            out.append(block)
            continue
        elements = block.get("elements", [])
        kept = [e for e in elements if not str(e.get("action_id", "")).startswith(RESUME_ACTION)]
        if kept:
            out.append({**block, "elements": kept})
        if any(e.get("action_id") == action_id for e in elements):
            # In the button's language: a Japanese card's 確定 is answered in Japanese.
            note = (f"<@{user_id}> が *{escape(label)}* を選びました" if language_of(label) == "ja"
                    else f"<@{user_id}> chose *{escape(label)}*")
            out.append(ContextBlock(elements=[_mrkdwn(note)]).to_dict())
    return out


# --- text -----------------------------------------------------------------------------------
def without_images(blocks: Sequence[Block]) -> list[Block]:
    """The same blocks minus images (Slack rejects a message whose image it cannot fetch)."""
    out: list[Block] = []
    for block in blocks:
        if block.get("type") == "image":
            continue
        if "accessory" in block and block["accessory"].get("type") == "image":
            block = {k: v for k, v in block.items() if k != "accessory"}
        out.append(block)
    return out


def quote_command(command: str, text: str) -> str:
    """The root message of a slash command conversation: who asked what."""
    line = f"{command} {text}".strip()
    return f"`{escape(line)}`" if "`" not in line else escape(line)


def user_link(user_id: str) -> str:
    return f"<@{quote(user_id, safe='')}>"
