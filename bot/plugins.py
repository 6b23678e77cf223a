"""Loading what the composition root names: modules that may not be installed (an agent or platform
not built yet is skipped), and plugins given as "module:ATTRIBUTE" (a class is instantiated)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from bot.config import ConfigError


def optional_modules(names: Iterable[str]) -> list[ModuleType]:
    """The modules of `names` that exist; an import error inside one that exists still raises."""
    found = []
    for name in names:
        try:
            found.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise
    return found


def plugins(specs: str, default: str = "AGENT", *, setting: str = "CONCIERGE_AGENT_PLUGINS") -> list[Any]:
    """The objects named by "module:ATTRIBUTE,…" (ATTRIBUTE defaults to `default`); ConfigError,
    naming `setting`, for one that cannot be loaded."""
    found = []
    for spec in filter(None, (p.strip() for p in specs.split(","))):
        module_name, _, attribute = spec.partition(":")
        try:
            plugin = getattr(importlib.import_module(module_name), attribute or default)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"{setting}: cannot load {spec!r} ({exc})") from None
        found.append(plugin() if isinstance(plugin, type) else plugin)
    return found
