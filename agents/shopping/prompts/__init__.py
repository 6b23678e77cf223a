"""The /shop prompts, one Markdown file per purpose; `prompt(name, **fields)` fills `{field}`s."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


@functools.cache
def _template(name: str) -> str:
    return (HERE / f"{name}.md").read_text(encoding="utf-8")


def prompt(name: str, **fields: Any) -> str:
    """The prompt `name`; a workflow without its own file uses `general.md`."""
    template = _template(name if (HERE / f"{name}.md").exists() else "general")
    return template.format_map({"stage": "", "stages": "", "intent": "", **fields})
