"""Every compiled pattern of the modules that read users' text, timed on long runs of one shape,
against one linear pass over the same text measured in the same run.

    python -m bench regex-sweep [--chars 4000] [--top 15] [MODULE …]

A pattern that reads a run again from each of its positions ("\\s*(?:and|,)" on 4,000 spaces took
1.8 s) shows as a ratio in the hundreds or thousands; a linear one stays near 1-10×. The patterns are
the module-level `re.Pattern`s and those in module-level tuples, timed with `finditer` over the
whole text (the most any caller asks of them: `match` and anchored uses cost less). The baseline is
`\\S+|\\s+` over the same text, which visits every character once."""

from __future__ import annotations

import argparse
import importlib
import re
import time
from collections.abc import Iterator

# The modules whose patterns read what users write (messages, follow-ups, articles' prose).
MODULES = (
    "bot.offline.extract", "agents.hotel.extract", "agents.hotel.understand", "agents.hotel.offline", "agents.hotel.geo",
    "agents.shopping.intents", "agents.shopping.offline", "agents.shopping.tools", "agents.chat.offline",
    "agents.proofread.followup",
)
# One unit each, repeated to the length asked: digits, spaces, separators, words the rules look for.
SHAPES = (
    "1", " ", "1,", "1-", "1 to ", "$1 ", "a ", "the ", "and ", "in A", "Aa ", "which is ", "compare ", "x\n", "'",
    "-", ".", "size ", "the 1st to the ", "christmas ", "new year's ", "most ", "battery ", "Voyage Mini ", "IP6",
    "、", "は", "何", "大人1人", "来週の", "金曜", "クーポンA", "1万円",
    # Latin letters and digits against Japanese (each a word edge of bot.locale.rule), full-width digits.
    "aあ", "1あ", "USDまで", "ANC付き", "１",
)
BASELINE = re.compile(r"\S+|\s+")


def patterns(module_name: str) -> Iterator[tuple[str, re.Pattern[str]]]:
    module = importlib.import_module(module_name)
    for name, value in vars(module).items():
        if isinstance(value, re.Pattern):
            yield name, value
        elif isinstance(value, tuple):
            for i, item in enumerate(value):
                first = item[0] if isinstance(item, tuple) and item else item
                if isinstance(first, re.Pattern):
                    yield f"{name}[{i}]", first


def _seconds(pattern: re.Pattern[str], text: str) -> float:
    started = time.perf_counter()
    for _ in pattern.finditer(text):
        pass
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench regex-sweep")
    parser.add_argument("--chars", type=int, default=4000, help="length of each text (the agents take 4,000)")
    parser.add_argument("--top", type=int, default=15, help="rows to print, slowest first")
    parser.add_argument("modules", nargs="*", default=list(MODULES))
    args = parser.parse_args(argv)
    texts = {shape: (shape * (args.chars // len(shape) + 1))[: args.chars] for shape in SHAPES}
    baseline = {shape: max(_seconds(BASELINE, text), 1e-6) for shape, text in texts.items()}
    rows = []
    count = 0
    for module_name in args.modules:
        for name, pattern in patterns(module_name):
            count += 1
            for shape, text in texts.items():
                seconds = _seconds(pattern, text)
                rows.append((seconds / baseline[shape], seconds, f"{module_name}.{name}", shape))
    rows.sort(reverse=True)
    print(f"{count} patterns × {len(SHAPES)} shapes of {args.chars:,} characters; baseline `\\S+|\\s+` over the same text "
          f"({min(baseline.values()) * 1e3:.2f}–{max(baseline.values()) * 1e3:.2f} ms)\n")
    print("| Pattern | Shape | ms | × baseline |\n|---|---|---:|---:|")
    for ratio, seconds, name, shape in rows[: args.top]:
        print(f"| {name} | {shape!r} | {seconds * 1e3:.1f} | {ratio:,.0f} |")
    return 0
