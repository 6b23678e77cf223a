"""Markdown (what agents write) to Slack mrkdwn (what Slack renders in `text` and section blocks)."""

from __future__ import annotations

import re

from bot.editor import FENCE, closes_fence

_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_LINK = re.compile(r"\[([^\]]+)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"&lt;(https?://[^\s&]+)&gt;")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(?!\[[ xX]\])")
_TASK = re.compile(r"^(\s*)[-*+]\s+\[([ xX])\]\s+")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_PLACEHOLDER = "\x00{}\x00"


def escape(text: str) -> str:
    """Escape the three characters Slack treats as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    """Convert common Markdown to Slack mrkdwn; code blocks and inline code are kept verbatim."""
    out: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)
            out.append(match.group(1) + "```")  # Slack ignores language hints and shows them as code
            continue
        if fence is not None:
            if closes_fence(match, fence):
                fence = None
                out.append(match.group(1) + "```")
            else:
                out.append(escape(line))
            continue
        out.append(_line(line))
    return "\n".join(out)


def _line(line: str) -> str:
    if _RULE.match(line):
        return "───"
    heading = _HEADING.match(line)
    if heading:
        return f"*{_inline(heading.group(1)).strip('*')}*"
    task = _TASK.match(line)
    if task:
        box = "☑" if task.group(2).lower() == "x" else "☐"
        line = f"{task.group(1)}{box} {line[task.end():]}"
    else:
        line = _BULLET.sub(lambda m: f"{m.group(1)}• ", line, count=1)
    return _inline(line)


def _inline(text: str) -> str:
    saved: list[str] = []

    def keep(value: str) -> str:
        saved.append(value)
        return _PLACEHOLDER.format(len(saved) - 1)

    text = _INLINE_CODE.sub(lambda m: keep(f"`{escape(m.group(2))}`"), text)
    text = _IMAGE.sub(lambda m: keep(f"<{m.group(2)}|{_label(m.group(1) or 'image')}>"), text)
    text = _LINK.sub(lambda m: keep(f"<{m.group(2)}|{_label(m.group(1))}>"), text)
    text = escape(text)
    text = _AUTOLINK.sub(lambda m: keep(f"<{m.group(1)}>"), text)
    text = _BOLD.sub(lambda m: keep(f"*{m.group(2)}*"), text)
    text = _ITALIC.sub(lambda m: f"_{m.group(1)}_", text)
    text = _STRIKE.sub(lambda m: f"~{m.group(1)}~", text)
    for _ in range(3):  # placeholders may nest (bold around a link)
        if "\x00" not in text:
            break
        text = re.sub(r"\x00(\d+)\x00", lambda m: saved[int(m.group(1))], text)
    return text


def _label(text: str) -> str:
    # A link label cannot contain "|" or ">" in mrkdwn.
    return escape(text.replace("|", "¦")).replace("**", "*")


def plain(markdown: str) -> str:
    """A plain-text rendering (notification fallbacks, plain_text fields): markup removed."""
    text = _IMAGE.sub(lambda m: m.group(1) or "image", markdown)
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    text = _BOLD.sub(lambda m: m.group(2), text)
    text = _STRIKE.sub(lambda m: m.group(1), text)
    text = re.sub(r"^\s{0,3}#{1,6}\s+", "", text, flags=re.M)
    return text
