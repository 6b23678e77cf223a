"""Run a benchmark: `python -m bench NAME [ARGS…]`; `python -m bench` lists them."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import sys
from pathlib import Path

from bot.loop import run


def _names() -> list[str]:
    here = Path(__file__).parent
    return sorted(
        m.name.replace("_", "-") for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_")
    )


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m bench NAME [ARGS…]\n\nbenchmarks:\n  " + "\n  ".join(_names()))
        return 0
    name = argv[0]
    if name not in _names():
        print(f"unknown benchmark {name!r}; choose from: {', '.join(_names())}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"bench.{name.replace('-', '_')}")
    result = module.main(argv[1:])
    if asyncio.iscoroutine(result):
        result = run(result)
    return int(result or 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
