"""Block Kit rendering: pure functions from stream-event models (bot.events) to Slack blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from adapters.slack.mrkdwn import escape, plain, to_mrkdwn
from bot.conversation import ConversationKey
from bot.events import Action, Card

# Slack's limits (https://docs.slack.dev/reference/block-kit/blocks)
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_URL = 3000
MAX_ALT_TEXT = 2000
MAX_CONTEXT_TEXT = 3000
MAX_FALLBACK = 3000

RESUME_ACTION = "concierge.resume"  # buttons that answer a graph waiting on interrupt()
LINK_ACTION = "concierge.link"  # URL buttons (Slack still sends an interaction that must be acked)

Block = dict[str, Any]


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _mrkdwn(text: str, limit: int = MAX_SECTION_TEXT) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": clip(text, limit)}


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": clip(text, limit), "emoji": True}


def _web_url(url: str | None) -> str | None:
    if url and url.startswith(("https://", "http://")) and len(url) <= MAX_URL:
        return url
    return None


def map_url(lat: float, lon: float) -> str:
    return f"https://www.google.com/maps/search/?api=1&query={lat:.6f}%2C{lon:.6f}"


# --- cards ------------------------------------------------------------------------------------
def _button(action: Action, action_id: str, value: str) -> Block:
    button: Block = {
        "type": "button",
        "action_id": action_id,
        "text": _plain(action.label, MAX_BUTTON_TEXT),
        "value": value,
    }
    if action.style in ("primary", "danger"):
        button["style"] = action.style
    return button


def _link_button(label: str, url: str, action_id: str) -> Block:
    return {"type": "button", "action_id": action_id, "text": _plain(label, MAX_BUTTON_TEXT), "url": url}


def card_blocks(card: Card, key: ConversationKey, *, index: int = 0) -> list[Block]:
    """A card: title (linked), subtitle, fields, thumbnail; a row of map/link and action buttons."""
    title = escape(card.title)
    url = _web_url(card.url)
    heading = f"*<{url}|{title}>*" if url else f"*{title}*"
    text = heading + (f"\n{to_mrkdwn(card.subtitle)}" if card.subtitle else "")
    section: Block = {"type": "section", "text": _mrkdwn(text)}
    fields = [
        _mrkdwn(f"*{escape(name)}*\n{to_mrkdwn(str(value))}", MAX_FIELD_TEXT)
        for name, value in card.fields.items()
        if str(value).strip()
    ]
    if fields:
        section["fields"] = fields[:MAX_FIELDS]
    image = _web_url(card.image_url)
    if image:
        section["accessory"] = {"type": "image", "image_url": image, "alt_text": clip(card.title, MAX_ALT_TEXT)}
    blocks = [section]
    overflow = fields[MAX_FIELDS:]
    if overflow:
        blocks.append({"type": "section", "fields": overflow[:MAX_FIELDS]})

    elements: list[Block] = []
    if card.lat is not None and card.lon is not None:
        elements.append(_link_button("🗺 Map", map_url(card.lat, card.lon), f"{LINK_ACTION}.map.{index}"))
    for n, action in enumerate(card.actions):
        value = key.button_payload(action.value, MAX_BUTTON_VALUE)
        if value is not None:
            elements.append(_button(action, f"{RESUME_ACTION}.{index}.{n}", value))
    if elements:
        blocks.append({"type": "actions", "block_id": f"card-{index}-actions", "elements": elements[:25]})
    return blocks


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
            note = f"<@{user_id}> chose *{escape(label)}*"
            out.append({"type": "context", "elements": [_mrkdwn(note, MAX_CONTEXT_TEXT)]})
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
