"""Prompts are Markdown files in prompts/, loaded by name and filled with `$name` placeholders."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

PROMPTS_DIR = Path(__file__).parent / "prompts"


class PromptNotFound(FileNotFoundError):
    pass


@cache
def load_prompt(name: str) -> str:
    path = PROMPTS_DIR / f"{name}.md"
    if not path.is_file():
        raise PromptNotFound(f"prompt not found: {path}")
    return path.read_text(encoding="utf-8")


def render_prompt(name: str, **values: object) -> str:
    """The prompt with `$name` placeholders filled; unknown placeholders are left as written."""
    return Template(load_prompt(name)).safe_substitute({k: str(v) for k, v in values.items()})
